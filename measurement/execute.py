"""Live co-scheduling on a real node (002 §9): an online strategy drives real processes through the
co-run harness.

The tasks start once, contained (`cosched.containment`), and are kept runnable (frozen). At every
step the strategy's combination is thawed while everything else stays frozen, for the decision's
limit (a search strategy's quantum τ, in seconds) or until a task exits, which is seen at once on
its pidfd, not at the next reading. The members are frozen again, their speeds over the step
(formula (30) of 002 §6 over every process of the task, `cosched.measurement.probe.task_speed`) are
divided by their speeds alone (002 §3) and handed to the strategy's `observe`. The loop itself is
`cosched.strategies.schedule.drive`, the one the simulated runs use: `LivePlant` plugs the harness
into it, so the strategy sees speeds only for the combination that ran.
"""

from __future__ import annotations

import os
import select
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from cosched.measurement.corun import CoRunHarness, TaskSpec, _exit_text
from cosched.measurement.counters import CounterBackend, ThreadReading
from cosched.measurement.probe import MIN_ALONE_SPEED, task_speed
from cosched.strategies.schedule import OnlineStrategy, Outcome, StrategyError, drive
from cosched.theory.instance import Instance
from cosched.theory.lattice import tasks_of

__all__ = [
    "Step",
    "ExecutionHarness",
    "LivePlant",
    "run_online",
    "premeasure",
    "normalised_speeds",
    "step_rows",
    "steps_table",
    "STEP_COLUMNS",
    "TASK_STATES",
    "PHASES",
]

STEP_COLUMNS = (
    "step",
    "phase",
    "combination",
    "members",
    "start",
    "end",
    "task",
    "speed",
    "normalised_speed",
    "exited",
)
# a window per candidate before the strategy starts, then its own steps
PHASES = (
    "premeasure",
    "strategy",
)
# killed: running when the run ended early
TASK_STATES = ("waiting", "completed", "crashed", "killed", "timed-out")


@dataclass(frozen=True)
class Step:
    """One real step: `combination` ran from `start` to `end` (seconds since the first continue).

    `speeds`: absolute speed of each member over the step (formula (30)); `finished`: bitmask of the
    tasks that exited during it (completed or crashed)."""

    combination: int
    phase: str
    start: float
    end: float
    speeds: dict[str, float]
    finished: int
    limit: float

    @property
    def duration(self) -> float:
        return self.end - self.start


class ExecutionHarness(CoRunHarness):
    """The co-run harness (contained tasks, started frozen, all killed on exit, Ctrl-C and SIGTERM)
    with `run(mask, limit)`.

    Each task's command is watched through a pidfd (Linux >= 5.3): its exit ends the running step at
    once. The task's CPU time comes from its container, which keeps the time of exited processes, so
    the step in which a task exits has a speed too. When a task's command exits, whatever it left
    running is killed.
    """

    def __init__(
        self,
        tasks: Sequence[TaskSpec],
        backend: CounterBackend,
        *,
        output=subprocess.DEVNULL,
        containment="auto",
        task_timeout: float | None = None,
        deadline: float | None = None,
        timeout: float | None = None,
    ):
        super().__init__(
            tasks,
            backend,
            warmup=0.0,
            window=0.0,
            output=output,
            containment=containment,
            task_timeout=task_timeout,
            deadline=deadline,
            timeout=timeout,
        )
        self.status_names = ["waiting"] * len(tasks)
        self.exit_time = [float("nan")] * len(tasks)
        self.steps_run = [0] * len(tasks)
        self.origin: float | None = None  # monotonic time of the first continue
        self._pidfds: dict[int, int] = {}  # fd -> task index, for tasks not yet exited
        # threads that ran in a task's latest step (for exit speeds)
        self._threads = [1] * len(tasks)
        # each task's latest reading, taken while it was frozen
        self._last: dict[str, list[ThreadReading]] = {}
        self._cpu: dict[int, float] = {}  # each task's CPU time at its latest reading

    def __enter__(self) -> ExecutionHarness:
        super().__enter__()
        try:
            for i, handle in enumerate(self.handles):
                self._pidfds[os.pidfd_open(handle.pid)] = i
        except BaseException as error:
            self.__exit__(type(error), error, error.__traceback__)
            raise
        return self

    def __exit__(self, kind=None, *exc) -> None:
        try:
            super().__exit__(kind, *exc)
        finally:
            for fd in self._pidfds:
                os.close(fd)
            self._pidfds.clear()
            for i, name in enumerate(self.status_names):
                if name == "waiting":  # killed by the harness before it finished
                    self._record(
                        i,
                        "killed",
                        self.handles[i].returncode if i < len(self.handles) else None,
                        "killed when the run ended",
                    )

    @property
    def unfinished(self) -> int:
        """Bitmask of the tasks that have not exited."""
        return sum(1 << i for i, name in enumerate(self.status_names) if name == "waiting")

    def _refresh_status(self) -> None:
        """`CoRunHarness.terminate` hook: the statuses are kept by `_reap` and `__exit__` here."""

    def alive(self, index: int) -> bool:
        return self.status_names[index] == "waiting"

    def _record(self, i: int, state: str, code: int | None, message: str) -> None:
        status = self.status[i]
        self.status_names[i] = status.status = state
        status.returncode, status.message, status.combinations_measured = (
            code,
            message,
            self.steps_run[i],
        )

    def _reap(self, fds: Sequence[int], now: float) -> list[int]:
        """Reap the commands whose pidfd is readable; returns their task indices."""
        reaped = []
        for fd in fds:
            i = self._pidfds.pop(fd)
            os.close(fd)
            code = self.handles[i].wait()
            self.exit_time[i] = now - (self.origin if self.origin is not None else now)
            message = "" if code == 0 else _exit_text(code)
            self._record(i, "completed" if code == 0 else "crashed", code, message)
            if code != 0:
                self.keep_stderr(i)
            reaped.append(i)
        return reaped

    def _read(self, indices) -> list[ThreadReading]:
        readings = self.backend.read(self.members(indices))
        for i in indices:
            self._cpu[i] = self.handles[i].cpu_time()
        return readings

    def _step_cap(self, members: list[int], limit: float) -> float:
        """Seconds the next step may last: `limit`, cut at the run's deadline and at the first
        member's `task_timeout`."""
        cap = float(limit)
        if self.deadline is not None:
            cap = min(cap, max(0.0, self.deadline - time.monotonic()))
        if self.task_timeout is not None and members:
            cap = min(cap, max(0.0, min(self.task_timeout - self.ran_seconds[i] for i in members)))
        return cap

    def run(self, mask: int, limit: float = np.inf, phase: str = "strategy") -> Step:
        """Continue the members of `mask` for `limit` seconds or until a task exits, freeze them,
        measure.

        The step is also cut at the run's deadline (`RunTimeout` at the next call) and when a
        member's running time reaches `task_timeout` (the member is killed and counts as finished,
        `timed-out`)."""
        self.check_deadline()
        members = [i for i in tasks_of(mask) if self.status_names[i] == "waiting"]
        poller = select.poll()
        for fd in self._pidfds:
            poller.register(fd, select.POLLIN)
        unread = [i for i in members if self.tasks[i].name not in self._last]
        # counters only move while a task runs: a reading taken after its last freeze is still valid
        if unread:
            self._remember(self._read(unread))
        before = [r for i in members for r in self._last.get(self.tasks[i].name, ())]
        cpu_before = {i: self._cpu[i] for i in members}
        cap = self._step_cap(members, limit)
        start = time.monotonic()
        if self.origin is None:
            self.origin = start
        try:
            for i in members:
                self.handles[i].thaw()
            left = max(0.0, cap - (time.monotonic() - start))
            timeout = None if not np.isfinite(cap) else left * 1000.0
            ready = [fd for fd, _ in poller.poll(timeout)]
            end = time.monotonic()
        finally:
            for i in members:
                self.handles[i].freeze()
        for i in members:
            self.ran_seconds[i] += end - start
            self.steps_run[i] += 1
            self.status[i].combinations_measured = self.steps_run[i]
        exited = self._reap(ready, end)
        alive = [i for i in members if self.status_names[i] == "waiting"]
        after = self._read(alive) if alive else []
        cpu_after = {
            i: self.handles[i].cpu_time() if i in exited else self._cpu[i] for i in members
        }
        self._remember(after)
        for i in exited:  # the command is done: whatever it left running goes too
            self.handles[i].kill()
        speeds = {}
        for i in members:
            name = self.tasks[i].name
            speeds[name], threads = task_speed(
                [r for r in before if r.task == name],
                [r for r in after if r.task == name],
                cpu_after[i] - cpu_before[i],
                end - start,
                self._threads[i],
            )
            self._threads[i] = max(self._threads[i] if i in exited else 1, threads)
        finished = sum(1 << i for i in exited) | self._time_out_spent(alive, end)
        origin = self.origin
        return Step(int(mask), phase, start - origin, end - origin, speeds, finished, float(limit))

    def _time_out_spent(self, alive: list[int], end: float) -> int:
        """Kill the members of `alive` whose running time reached `task_timeout` (`timed-out`);
        the bitmask of them."""
        finished = 0
        if self.task_timeout is None:
            return finished
        assert self.origin is not None  # set by the step that ran them
        for i in alive:
            if self.ran_seconds[i] >= self.task_timeout * (1 - TIMEOUT_SLACK):
                for fd in [fd for fd, index in self._pidfds.items() if index == i]:
                    del self._pidfds[fd]  # its exit is the harness's doing, not the task's
                    os.close(fd)
                self.time_out(i)
                self.exit_time[i] = end - self.origin
                self.status_names[i] = "timed-out"
                finished |= 1 << i
        return finished

    def _remember(self, readings: list[ThreadReading]) -> None:
        tasks: dict[str, list[ThreadReading]] = {}
        for reading in readings:
            tasks.setdefault(reading.task, []).append(reading)
        self._last.update(tasks)


# relative: a step cut at the task's time limit reaches it up to timer rounding
TIMEOUT_SLACK = 1e-6


def normalised_speeds(step: Step, names: Sequence[str], ideal: np.ndarray) -> np.ndarray:
    """(n,) speeds a_ij = measured / speed alone (002 §3), clipped to [0, 1] as the model's speeds;
    0 outside.

    A member without a usable speed alone (below `MIN_ALONE_SPEED`) is an error, never a silent
    divisor."""
    position = {name: i for i, name in enumerate(names)}
    speeds = np.zeros(len(names))
    for name, value in step.speeds.items():
        i = position[name]
        if not np.isfinite(ideal[i]) or ideal[i] < MIN_ALONE_SPEED:
            raise StrategyError(
                f"task {name!r} has no usable speed alone ({ideal[i]:.3g}): its speeds cannot be "
                "normalised"
            )
        # 002 §3
        speeds[i] = 0.0 if not np.isfinite(value) else min(max(value / ideal[i], 0.0), 1.0)
    return speeds


def premeasure(
    harness: ExecutionHarness,
    masks: Sequence[int] | np.ndarray,
    window: float,
    on_step: Callable[[Step], None] | None = None,
) -> list[Step]:
    """Run each combination of `masks` whose members are all still running for one `window` (its
    speeds)."""
    steps = []
    for mask in masks:
        if int(mask) & ~harness.unfinished:
            continue
        step = harness.run(int(mask), window, phase="premeasure")
        steps.append(step)
        if on_step is not None:
            on_step(step)
    return steps


class LivePlant:
    """Live processes as a plant of the one strategy driver (`cosched.strategies.schedule.drive`):
    each decision runs on the harness; its measured speeds, normalised by `ideal` (absolute speeds
    alone), are what the strategy observes."""

    def __init__(
        self,
        harness,
        names: Sequence[str],
        ideal: np.ndarray,
        on_step: Callable[[Step], None] | None = None,
    ):
        self.harness, self.names, self.ideal, self.on_step = harness, list(names), ideal, on_step
        self.steps: list[Step] = []

    @property
    def unfinished(self) -> int:
        return self.harness.unfinished

    def run(self, combination: int, limit: float, rng: np.random.Generator) -> Outcome:
        step = self.harness.run(combination, limit)
        self.steps.append(step)
        if self.on_step is not None:
            self.on_step(step)
        speeds = normalised_speeds(step, self.names, self.ideal)
        return Outcome(step.duration, speeds, step.finished)


def run_online(
    harness: ExecutionHarness,
    strategy: OnlineStrategy,
    instance: Instance,
    ideal: np.ndarray,
    *,
    seed: int | None = None,
    max_steps: int | None = None,
    on_step: Callable[[Step], None] | None = None,
) -> list[Step]:
    """Drive `strategy` on the harness's tasks until every task has exited; returns the steps it
    ran.

    `instance` is what the strategy may know (its combinations; the speeds for FCS); the work is
    hidden, as in the simulated loop: both are `cosched.strategies.schedule.drive`, here on a
    `LivePlant`.
    """
    plant = LivePlant(harness, [task.name for task in harness.tasks], ideal, on_step)
    drive(strategy, instance, plant, seed=seed, max_steps=max_steps)
    return plant.steps


def step_rows(index: int, step: Step, names: Sequence[str], ideal: np.ndarray | None) -> list[dict]:
    """Rows of one step for `steps_table` (plain dicts: cheap enough to write between two steps)."""
    members = "+".join(names[i] for i in tasks_of(step.combination))
    normalised = normalised_speeds(step, names, ideal) if ideal is not None else None
    position = {name: i for i, name in enumerate(names)}
    return [
        {
            "step": index,
            "phase": step.phase,
            "combination": step.combination,
            "members": members,
            "start": step.start,
            "end": step.end,
            "task": name,
            "speed": speed,
            "normalised_speed": float(normalised[position[name]])
            if normalised is not None
            else float("nan"),
            "exited": bool(step.finished >> position[name] & 1),
        }
        for name, speed in step.speeds.items()
    ]


def steps_table(steps: Sequence[Step], names: Sequence[str], ideal: np.ndarray | None):
    """Long table of a real schedule: step, phase, combination, members, start, end, task, speed
    (absolute), normalised speed (by `ideal`, NaN without it) and whether the task exited in the
    step."""
    import pandas as pd

    rows = [row for k, step in enumerate(steps) for row in step_rows(k, step, names, ideal)]
    return pd.DataFrame(rows, columns=list(STEP_COLUMNS))
