"""Live co-scheduling on a real node (002 §9): an online strategy drives real processes through the co-run harness.

The tasks start once and are kept runnable (stopped). At every step the strategy's combination is continued
(SIGCONT) while everything else stays stopped, for the decision's limit (a search strategy's quantum τ, in
seconds) or until a task exits, which is seen at once on its pidfd, not at the next reading. The members are
stopped again, their speeds over the step (formula (30) of 002 §6, `cosched.measurement.probe`) are divided by
their speeds alone (002 §3) and handed to the strategy's `observe`, as `cosched.strategies.schedule.execute`
does in simulation; the strategy sees speeds only for the combination that ran.
"""
from __future__ import annotations

import os
import select
import signal
import subprocess
import time
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from cosched.measurement.corun import CoRunHarness, TaskSpec, signal_group
from cosched.measurement.counters import CounterBackend, ThreadReading
from cosched.measurement.probe import CPUTIME_EPSILON, thread_speed
from cosched.strategies.schedule import Decision, OnlineStrategy, StrategyError
from cosched.theory.instance import Instance
from cosched.theory.lattice import tasks_of

__all__ = ["Step", "ExecutionHarness", "run_online", "premeasure", "normalised_speeds", "step_rows", "steps_table",
           "STEP_COLUMNS",
           "TASK_STATES", "PHASES"]

STEP_COLUMNS = ("step", "phase", "combination", "members", "start", "end", "task", "speed", "normalised_speed",
                "exited")
PHASES = ("premeasure", "strategy")  # a window per candidate before the strategy starts, then its own steps
TASK_STATES = ("waiting", "completed", "crashed", "killed")  # killed: still running when the run ended early


@dataclass(frozen=True)
class Step:
    """One real step: `combination` ran from `start` to `end` (seconds since the first continue).

    `speeds`: absolute speed of each member over the step (formula (30)); `finished`: bitmask of the tasks
    that exited during it (completed or crashed)."""

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
    """The co-run harness (start stopped, kill every group on exit, Ctrl-C and SIGTERM) with `run(mask, limit)`.

    Each task's leader is watched through a pidfd (Linux >= 5.3): its exit ends the running step at once.
    The harness reaps leaders itself (wait4), keeping the exit status and the CPU time it reports, which gives
    the speed of a task over the step in which it exited, when its threads can no longer be read.
    """

    def __init__(self, tasks: Sequence[TaskSpec], backend: CounterBackend, *, output=subprocess.DEVNULL):
        super().__init__(tasks, backend, warmup=0.0, window=0.0, output=output)
        self.status_names = ["waiting"] * len(tasks)
        self.exit_time = [float("nan")] * len(tasks)
        self.steps_run = [0] * len(tasks)
        self.origin: float | None = None  # monotonic time of the first continue
        self._pidfds: dict[int, int] = {}  # fd -> task index, for tasks not yet exited
        self._threads = [1] * len(tasks)  # threads that ran in a task's latest step (for exit speeds)
        self._last: dict[str, list[ThreadReading]] = {}  # each task's latest reading, taken while it was stopped

    def __enter__(self) -> "ExecutionHarness":
        super().__enter__()
        try:
            for i, process in enumerate(self.processes):
                self._pidfds[os.pidfd_open(process.pid)] = i
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
                    self._record(i, "killed", self.processes[i].returncode, "killed when the run ended")

    @property
    def unfinished(self) -> int:
        """Bitmask of the tasks that have not exited."""
        return sum(1 << i for i, name in enumerate(self.status_names) if name == "waiting")

    def _refresh_status(self) -> None:
        """`CoRunHarness.terminate` hook: the statuses are kept by `_reap` and `__exit__` here."""

    def _record(self, i: int, state: str, code: int | None, message: str) -> None:
        status = self.status[i]
        self.status_names[i] = status.status = state
        status.returncode, status.message, status.combinations_measured = code, message, self.steps_run[i]

    def _reap(self, fds: Sequence[int], now: float) -> dict[int, float]:
        """Reap the leaders whose pidfd is readable; returns task index -> CPU time of its life (wait4)."""
        cputimes = {}
        for fd in fds:
            i = self._pidfds.pop(fd)
            os.close(fd)
            process = self.processes[i]
            _, status, usage = os.wait4(process.pid, 0)
            code = process.returncode = os.waitstatus_to_exitcode(status)
            self.exit_time[i] = now - (self.origin if self.origin is not None else now)
            cputimes[i] = usage.ru_utime + usage.ru_stime
            message = "" if code == 0 else f"exit code {code}" if code > 0 else f"killed by signal {-code}"
            self._record(i, "completed" if code == 0 else "crashed", code, message)
        return cputimes

    def run(self, mask: int, limit: float = np.inf, phase: str = "strategy") -> Step:
        """Continue the members of `mask` for `limit` seconds or until a task exits, stop them, measure."""
        members = [i for i in tasks_of(mask) if self.status_names[i] == "waiting"]
        poller = select.poll()
        for fd in self._pidfds:
            poller.register(fd, select.POLLIN)
        unread = {self.tasks[i].name: self.processes[i].pid for i in members if self.tasks[i].name not in self._last}
        if unread:  # counters only move while a task runs: a reading taken after its last stop is still valid
            self._remember(self.backend.read(unread))
        before = [r for i in members for r in self._last.get(self.tasks[i].name, ())]
        start = time.monotonic()
        if self.origin is None:
            self.origin = start
        try:
            for i in members:
                signal_group(self.processes[i], signal.SIGCONT)
            timeout = None if not np.isfinite(limit) else max(0.0, limit - (time.monotonic() - start)) * 1000.0
            ready = [fd for fd, _ in poller.poll(timeout)]
            end = time.monotonic()
        finally:
            for i in members:
                signal_group(self.processes[i], signal.SIGSTOP)
        exited = self._reap(ready, end)
        alive = {self.tasks[i].name: self.processes[i].pid for i in members if self.status_names[i] == "waiting"}
        after = self.backend.read(alive) if alive else []
        self._remember(after)
        speeds = self._speeds(members, before, after, end - start, exited)
        for i in members:
            self.steps_run[i] += 1
            self.status[i].combinations_measured = self.steps_run[i]
        return Step(int(mask), phase, start - self.origin, end - self.origin, speeds, sum(1 << i for i in exited),
                    float(limit))

    def _remember(self, readings: list[ThreadReading]) -> None:
        tasks = {}
        for reading in readings:
            tasks.setdefault(reading.task, []).append(reading)
        self._last.update(tasks)

    def _speeds(self, members, before: list[ThreadReading], after: list[ThreadReading], ran: float,
                exited: dict[int, float]) -> dict[str, float]:
        """Formula (30) per thread over the time the members actually ran (`ran` seconds: they are stopped while
        read), averaged over the threads that ran (as `cosched.measurement.probe`); NaN for a task not read."""
        speeds = {self.tasks[i].name: float("nan") for i in members}
        if ran <= 0:
            return speeds
        start = {(r.task, r.tid): r for r in before}
        per_task: dict[str, list[float]] = {}
        for r in after:
            b = start.get((r.task, r.tid))
            if b is None:
                continue
            ran_threads = per_task.setdefault(r.task, [])
            if r.cputime - b.cputime > CPUTIME_EPSILON:
                ran_threads.append(float(thread_speed(r.instructions - b.instructions, r.cycles - b.cycles,
                                                      r.cputime - b.cputime, ran)))
        index = {task.name: i for i, task in enumerate(self.tasks)}
        for name, values in per_task.items():
            speeds[name] = float(np.mean(values)) if values else 0.0
            self._threads[index[name]] = max(1, len(values))
        for i, cputime in exited.items():
            if i not in members:
                continue
            name = self.tasks[i].name
            spent = cputime - sum(r.cputime for r in before if r.task == name)
            # formula (30) without the per-thread split: the exited threads can no longer be read one by one. A
            # thread gets at most `ran` s of CPU in `ran` s; the cap also absorbs the truncation of the last
            # reading (procfs counts clock ticks, wait4 microseconds), which dominates a step of microseconds
            speeds[name] = min(max(spent, 0.0) / self._threads[i], ran) / ran
        return speeds


def normalised_speeds(step: Step, names: Sequence[str], ideal: np.ndarray) -> np.ndarray:
    """(n,) speeds a_ij = measured / speed alone (002 §3), clipped to [0, 1] as the model's speeds; 0 outside."""
    position = {name: i for i, name in enumerate(names)}
    speeds = np.zeros(len(names))
    for name, value in step.speeds.items():
        i = position[name]
        speeds[i] = 0.0 if not np.isfinite(value) else min(max(value / ideal[i], 0.0), 1.0)
    return speeds


def premeasure(harness: ExecutionHarness, masks: Sequence[int], window: float,
               on_step: Callable[[Step], None] | None = None) -> list[Step]:
    """Run each combination of `masks` whose members are all still running for one `window` (its speeds)."""
    steps = []
    for mask in masks:
        if int(mask) & ~harness.unfinished:
            continue
        step = harness.run(int(mask), window, phase="premeasure")
        steps.append(step)
        if on_step is not None:
            on_step(step)
    return steps


def run_online(harness: ExecutionHarness, strategy: OnlineStrategy, instance: Instance, ideal: np.ndarray, *,
               seed: int | None = None, max_steps: int | None = None,
               on_step: Callable[[Step], None] | None = None) -> list[Step]:
    """Drive `strategy` on the harness's tasks until every task has exited; returns the steps it ran.

    `instance` is what the strategy may know (its combinations; the speeds for FCS); the work is hidden, as in
    the simulated loop. Each step's measured speeds, normalised by `ideal` (absolute speeds alone), go to
    `strategy.observe` together with the tasks that exited.
    """
    rng = np.random.default_rng(seed)
    strategy.start(instance, rng)
    names = [task.name for task in harness.tasks]
    steps_allowed = max_steps if max_steps is not None else 100 * instance.n + 10 * instance.m
    steps: list[Step] = []
    while harness.unfinished:
        unfinished = harness.unfinished
        if len(steps) >= steps_allowed:
            raise StrategyError(f"{strategy.name}: tasks still running after {len(steps)} steps")
        decision: Decision = strategy.decide(unfinished)
        mask = int(decision.combination)
        if mask <= 0 or mask & ~unfinished:
            raise StrategyError(f"{strategy.name} chose {tasks_of(mask)}, which is not a set of running tasks")
        if int(instance.index(mask)) < 0:
            raise StrategyError(f"{strategy.name} chose {tasks_of(mask)}, which is not a combination of the run")
        step = harness.run(mask, float(decision.limit))
        steps.append(step)
        if on_step is not None:
            on_step(step)
        strategy.observe(mask, step.duration, normalised_speeds(step, names, ideal), step.finished)
    return steps


def step_rows(index: int, step: Step, names: Sequence[str], ideal: np.ndarray | None) -> list[dict]:
    """Rows of one step for `steps_table` (plain dicts: cheap enough to write between two steps)."""
    members = "+".join(names[i] for i in tasks_of(step.combination))
    normalised = normalised_speeds(step, names, ideal) if ideal is not None else None
    position = {name: i for i, name in enumerate(names)}
    return [{"step": index, "phase": step.phase, "combination": step.combination, "members": members,
             "start": step.start, "end": step.end, "task": name, "speed": speed,
             "normalised_speed": float(normalised[position[name]]) if normalised is not None else float("nan"),
             "exited": bool(step.finished >> position[name] & 1)} for name, speed in step.speeds.items()]


def steps_table(steps: Sequence[Step], names: Sequence[str], ideal: np.ndarray | None):
    """Long table of a real schedule: step, phase, combination, members, start, end, task, speed (absolute),
    normalised speed (by `ideal`, NaN without it) and whether the task exited in the step."""
    import pandas as pd

    rows = [row for k, step in enumerate(steps) for row in step_rows(k, step, names, ideal)]
    return pd.DataFrame(rows, columns=list(STEP_COLUMNS))
