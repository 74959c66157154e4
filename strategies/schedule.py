"""The one execution loop every online strategy plugs into (`drive`), on a pluggable plant (002 §3).

The plant owns the hidden work vector b: strategies see only the speeds they are allowed to know and
the tasks that are still unfinished (non-clairvoyant, 002 §4.2). `SimulatedPlant` advances an
instance; `execute` drives it and returns a `Schedule`. `cosched.measurement.execute` plugs live
processes into the same loop.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from cosched.theory.instance import Instance
from cosched.theory.lattice import tasks_of
from cosched.theory.schedule import WORK_TOLERANCE, Schedule

__all__ = [
    "Schedule",
    "Decision",
    "OnlineStrategy",
    "execute",
    "WORK_TOLERANCE",
    "StrategyError",
    "Outcome",
    "Plant",
    "drive",
    "SimulatedPlant",
    "step_budget",
]


class StrategyError(RuntimeError):
    """A strategy asked for something the loop cannot run (unknown combination, finished task, no
    progress)."""


@dataclass(frozen=True)
class Decision:
    """Run `combination` until one of its tasks completes, or for at most `limit` time units."""

    combination: int
    limit: float = np.inf


class OnlineStrategy(Protocol):
    """What the execution loop needs from a strategy;
    a new strategy is a class with these methods.
    """

    name: str

    def start(self, instance: Instance, rng: np.random.Generator) -> None:
        """Called once per run. Non-clairvoyant strategies must not read `instance.work`; search
        strategies must not read `instance.speeds` either, only what `observe` reports."""

    def decide(self, unfinished: int) -> Decision:
        """Choose the next combination among the unfinished tasks (a bitmask)."""

    def observe(
        self, combination: int, duration: float, measured_speeds: np.ndarray, finished: int
    ) -> None:
        """What running `combination` for `duration` showed: per-task speeds (n,) and newly finished
        tasks."""


@dataclass(frozen=True)
class Outcome:
    """What a plant reports after running one decision: how long the combination ran, the speeds the
    strategy observes (n,) (normalised, 0 outside the combination) and the bitmask of tasks that
    finished in it."""

    duration: float
    speeds: np.ndarray
    finished: int


class Plant(Protocol):
    """What `drive` runs decisions on: a simulated instance (`SimulatedPlant`) or live processes
    (`cosched.measurement.execute.LivePlant`). The plant owns the hidden work; the driver never sees
    it."""

    @property
    def unfinished(self) -> int:
        """Bitmask of the tasks that have not finished."""

    def run(self, combination: int, limit: float, rng: np.random.Generator) -> Outcome:
        """Run `combination` until one of its tasks finishes or for `limit`; `rng` is the run's
        generator."""


def step_budget(instance: Instance, max_steps: int | None = None) -> int:
    """Decisions a run may take before the driver calls it a strategy that makes no progress."""
    return max_steps if max_steps is not None else 100 * instance.n + 10 * instance.m


def drive(
    strategy: OnlineStrategy,
    instance: Instance,
    plant: Plant,
    *,
    seed: int | None = None,
    max_steps: int | None = None,
    on_step: Callable[[int, Outcome], None] | None = None,
) -> list[Outcome]:
    """The one online-strategy loop (002 §3, §5): decide, check, run on `plant`, observe, until all
    finished.

    `instance` is what the strategy may know (non-clairvoyant: it must not read the work); every
    decision is checked here, once, for every plant: a non-empty set of unfinished tasks that is a
    combination of the instance, within the step budget (`step_budget`). Returns the outcomes in
    order.
    """
    rng = np.random.default_rng(seed)
    strategy.start(instance, rng)
    allowed = step_budget(instance, max_steps)
    outcomes: list[Outcome] = []
    while plant.unfinished:
        unfinished = plant.unfinished
        if len(outcomes) >= allowed:
            raise StrategyError(
                f"{strategy.name}: no completion after {len(outcomes)} steps (tasks still running)"
            )
        decision = strategy.decide(unfinished)
        mask = int(decision.combination)
        if mask <= 0 or mask & ~unfinished:
            raise StrategyError(
                f"{strategy.name} chose {tasks_of(mask)}, which is not a set of unfinished "
                "(running) tasks"
            )
        if int(instance.index(mask)) < 0:
            raise StrategyError(
                f"{strategy.name} chose {tasks_of(mask)}, which is not a combination of the "
                "instance"
            )
        outcome = plant.run(mask, float(decision.limit), rng)
        outcomes.append(outcome)
        if on_step is not None:
            on_step(mask, outcome)
        strategy.observe(mask, outcome.duration, outcome.speeds, outcome.finished)
    return outcomes


class SimulatedPlant:
    """The simulated instance (002 §3): tasks progress at the instance's speeds until their work b_i
    is done.

    `measure(column, rng)` turns the true speeds of a run into what the strategy observes (noise
    models); by default observations are exact, as in 002 §5."""

    def __init__(self, instance: Instance, measure=None):
        self.instance, self.measure = instance, measure
        self.remaining = instance.work.copy()
        self.unfinished = (1 << instance.n) - 1

    def run(self, combination: int, limit: float, rng: np.random.Generator) -> Outcome:
        instance = self.instance
        speeds = instance.speeds[:, int(instance.index(combination))]
        running = speeds > 0
        if not running.any():
            raise StrategyError(
                f"the strategy chose {tasks_of(combination)}, where every task has speed 0"
            )
        to_first_completion = np.min(self.remaining[running] / speeds[running])
        duration = float(min(to_first_completion, limit))
        self.remaining -= speeds * duration
        done = running & (self.remaining <= WORK_TOLERANCE * instance.work)
        self.remaining[done] = 0.0
        finished = int(np.sum(1 << np.flatnonzero(done).astype(np.int64))) & self.unfinished
        self.unfinished &= ~finished
        observed = speeds if self.measure is None else self.measure(speeds, rng)
        return Outcome(duration, observed, finished)


def execute(
    instance: Instance,
    strategy: OnlineStrategy,
    *,
    seed: int | None = None,
    measure=None,
    max_steps: int | None = None,
) -> Schedule:
    """Run `strategy` on `instance` until every task has done its work b_i; return the schedule.

    `drive` on a `SimulatedPlant`: `measure(column, rng)` turns the true speeds of a run into what
    the strategy observes (noise models); by default observations are exact, as in 002 §5.
    """
    masks: list[int] = []
    outcomes = drive(
        strategy,
        instance,
        SimulatedPlant(instance, measure),
        seed=seed,
        max_steps=max_steps,
        on_step=lambda mask, outcome: masks.append(mask),
    )
    return Schedule(
        np.asarray(masks, dtype=np.int64),
        np.asarray([o.duration for o in outcomes], dtype=float),
        strategy.name,
        instance.tasks,
    )
