"""The one execution loop every online strategy plugs into; it returns a `Schedule` (002 §3).

The loop owns the hidden work vector b: strategies see only the speeds they are
allowed to know and the tasks that are still unfinished (non-clairvoyant, 002 §4.2).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from cosched.theory.instance import Instance
from cosched.theory.lattice import tasks_of
from cosched.theory.schedule import WORK_TOLERANCE, Schedule

__all__ = ["Schedule", "Decision", "OnlineStrategy", "execute", "WORK_TOLERANCE", "StrategyError"]

class StrategyError(RuntimeError):
    """A strategy asked for something the loop cannot run (unknown combination, finished task, no progress)."""


@dataclass(frozen=True)
class Decision:
    """Run `combination` until one of its tasks completes, or for at most `limit` time units."""

    combination: int
    limit: float = np.inf


class OnlineStrategy(Protocol):
    """What the execution loop needs from a strategy; a new strategy is a class with these methods."""

    name: str

    def start(self, instance: Instance, rng: np.random.Generator) -> None:
        """Called once per run. Non-clairvoyant strategies must not read `instance.work`; search
        strategies must not read `instance.speeds` either, only what `observe` reports."""

    def decide(self, unfinished: int) -> Decision:
        """Choose the next combination among the unfinished tasks (a bitmask)."""

    def observe(self, combination: int, duration: float, measured_speeds: np.ndarray, finished: int) -> None:
        """What running `combination` for `duration` showed: per-task speeds (n,) and newly finished tasks."""


def execute(instance: Instance, strategy: OnlineStrategy, *, seed: int | None = None,
            measure=None, max_steps: int | None = None) -> Schedule:
    """Run `strategy` on `instance` until every task has done its work b_i; return the schedule.

    `measure(column, rng)` turns the true speeds of a run into what the strategy observes (noise models);
    by default observations are exact, as in 002 §5.
    """
    rng = np.random.default_rng(seed)
    strategy.start(instance, rng)
    remaining = instance.work.copy()
    unfinished = (1 << instance.n) - 1
    steps_allowed = max_steps if max_steps is not None else 100 * instance.n + 10 * instance.m
    masks: list[int] = []
    durations: list[float] = []
    while unfinished:
        if len(masks) >= steps_allowed:
            raise StrategyError(f"{strategy.name}: no completion after {len(masks)} steps")
        decision = strategy.decide(unfinished)
        mask = int(decision.combination)
        if mask <= 0 or mask & ~unfinished:
            raise StrategyError(f"{strategy.name} chose {tasks_of(mask)}, which is not a set of unfinished tasks")
        j = int(instance.index(mask))
        if j < 0:
            raise StrategyError(f"{strategy.name} chose {tasks_of(mask)}, which is not a combination of the instance")
        speeds = instance.speeds[:, j]
        running = speeds > 0
        if not running.any():
            raise StrategyError(f"{strategy.name} chose {tasks_of(mask)}, where every task has speed 0")
        to_first_completion = np.min(remaining[running] / speeds[running])
        duration = float(min(to_first_completion, decision.limit))
        remaining -= speeds * duration
        done = running & (remaining <= WORK_TOLERANCE * instance.work)
        remaining[done] = 0.0
        finished = int(np.sum(1 << np.flatnonzero(done).astype(np.int64))) & unfinished
        unfinished &= ~finished
        masks.append(mask)
        durations.append(duration)
        observed = speeds if measure is None else measure(speeds, rng)
        strategy.observe(mask, duration, observed, finished)
    return Schedule(np.asarray(masks, dtype=np.int64), np.asarray(durations), strategy.name, instance.tasks)
