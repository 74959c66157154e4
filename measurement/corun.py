"""Co-run harness: start every task once, form combinations by freezing and thawing, measure speeds.

002 §9: all tasks must be runnable when measuring starts; a combination is formed by continuing its
members while all others stay frozen. Each task runs contained (`cosched.containment`: a cgroup, or
a subreaper shepherd's process tree without cgroups), so freezing, CPU accounting and killing reach
every process the task's command starts, also one that left its process group (`setsid`) or exited
in a window. The harness kills every task on exit, on error, on Ctrl-C and on SIGTERM; the
containment's watchdog does it when the harness itself is killed with SIGKILL. `start_task`,
`signal_group` and `terminate_tasks` are the plain process-group helpers the validation runs use for
the bundled kernels.
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from cosched.errors import InputError
from cosched.measurement.counters import CounterBackend, ThreadReading, group_threads
from cosched.measurement.limits import MAX_MEASURED_RUNS, check_size
from cosched.measurement.probe import MIN_ALONE_SPEED, readings_frame, task_speed
from cosched.processes import (
    die_with_parent,
    signals_deferred,
    termination_signals,
)  # noqa: F401
from cosched.theory.lattice import all_combinations, combinations_up_to, mask_of, popcount, tasks_of

if TYPE_CHECKING:
    from cosched.containment import Containment

__all__ = [
    "TaskSpec",
    "TaskStatus",
    "CombinationResult",
    "CoRunHarness",
    "parse_task",
    "combination_set",
    "measure_combinations",
    "Measurement",
    "start_task",
    "signal_group",
    "terminate_tasks",
    "result_table",
    "result_samples",
    "SPEED_COLUMNS",
    "KILL_GRACE_SECONDS",
    "TaskFailed",
    "RunTimeout",
    "MIN_ALONE_SPEED",
    "ALONE_ATTEMPTS",
]

KILL_GRACE_SECONDS = 2.0  # time a task gets to exit after SIGTERM before SIGKILL
# the same after Ctrl-C / SIGTERM of the harness, which must end within 2 s
INTERRUPT_GRACE_SECONDS = 0.5
# sample:N enumerates all combinations up to this many tasks, else draws at random
ENUMERATE_MAX_TASKS = 20


@dataclass(frozen=True)
class TaskSpec:
    """A task: a name and a shell command."""

    name: str
    command: str


def parse_task(text: str) -> TaskSpec:
    """`NAME=COMMAND` as given to `cosched measure --task`."""
    name, sep, command = text.partition("=")
    name, command = name.strip(), command.strip()
    if not sep or not name or not command:
        raise InputError(f"expected NAME=COMMAND, got {text!r}", field="--task")
    if "+" in name:
        raise InputError(
            f"a task name cannot contain '+' (it joins the members of a combination): {name!r}",
            field="--task",
        )
    return TaskSpec(name, command)


def combination_set(n: int, spec: str, seed: int | None = None) -> np.ndarray:
    """Bitmasks to measure, singletons first (they give the ideal speeds), then by size and bitmask.

    `pairs` (sizes 1-2), `upto:K`, `all`, `sample:N` (N random combinations of size >= 2, seeded, as
    the 300 sampled combinations of 002 §7, plus all singletons), or `chains:N[:K]` (the Fig. 2
    protocol of 002 §8: N times, a random combination of K tasks (default all) loses one random task
    at a time until only a random target task is left; all combinations on the way are measured).
    """
    kind, _, value = spec.partition(":")
    singletons = 1 << np.arange(n, dtype=np.int64)
    planned = value.partition(":")[0]
    if kind in ("sample", "chains") and planned.isdigit():  # sized before it is drawn
        check_size(int(planned), MAX_MEASURED_RUNS, "--combinations", f"{kind} count")
    if kind == "chains" and _is_chain_spec(value, n):
        count, _, size = value.partition(":")
        chains = _chains(n, int(count), int(size) if size else n, np.random.default_rng(seed))
        masks = np.concatenate([singletons, chains])
    elif kind == "pairs" and not value:
        masks = combinations_up_to(n, 2)
    elif kind == "all" and not value:
        masks = all_combinations(n)
    elif kind in ("upto", "sample") and value.isdigit() and int(value) >= 1:
        if kind == "upto":
            masks = combinations_up_to(n, int(value))
        else:
            masks = np.concatenate(
                [singletons, _sample_combinations(n, int(value), np.random.default_rng(seed))]
            )
    else:
        raise InputError(
            f"expected pairs, all, upto:K, sample:N or chains:N[:K] (K <= {n} tasks), got {spec!r}",
            field="--combinations",
        )
    masks = np.unique(masks)
    return masks[np.lexsort((masks, popcount(masks)))]


def _is_chain_spec(value: str, n: int) -> bool:
    count, _, size = value.partition(":")
    return (
        count.isdigit()
        and int(count) >= 1
        and (not size or (size.isdigit() and 1 <= int(size) <= n))
    )


def _chains(n: int, count: int, size: int, rng: np.random.Generator) -> np.ndarray:
    """Combinations of `count` removal chains from `size` random tasks down to one target task (002
    §8)."""
    masks: list[int] = []
    for _ in range(count):
        order = rng.permutation(n)[:size]  # order[0] is the target; the others leave from the end
        masks.extend(mask_of(order[:k]) for k in range(1, size + 1))
    return np.asarray(masks, dtype=np.int64)


def _sample_combinations(n: int, count: int, rng: np.random.Generator) -> np.ndarray:
    """`count` distinct random combinations of size >= 2 (all of them if there are fewer)."""
    if n <= ENUMERATE_MAX_TASKS:
        larger = all_combinations(n)
        larger = larger[popcount(larger) >= 2]
        return rng.choice(larger, size=min(count, larger.size), replace=False)
    picked = np.zeros(0, dtype=np.int64)
    while picked.size < count:  # 2^n is huge here: rejection sampling finds distinct masks quickly
        draw = rng.integers(1, 1 << n, size=2 * count, dtype=np.int64)
        picked = np.unique(np.concatenate([picked, draw[popcount(draw) >= 2]]))
    return rng.permutation(picked)[:count]


@dataclass
class TaskStatus:
    """What happened to one task: `ok` (ran until the harness stopped it), `exited`, `crashed`,
    `never-ran`."""

    name: str
    command: str
    pid: int | None = None
    status: str = "ok"
    returncode: int | None = None
    combinations_measured: int = 0
    message: str = ""
    stderr: str = ""  # the last lines the task wrote to its stderr, kept when it failed

    def as_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass(frozen=True)
class CombinationResult:
    """Absolute speeds (formula (30)) of the members of one combination over one window; NaN: task
    gone."""

    combination: int
    speeds: dict[str, float]
    threads: dict[str, int]
    start: float
    end: float
    readings: tuple[ThreadReading, ...]


def start_task(task: TaskSpec, output=subprocess.DEVNULL) -> subprocess.Popen:
    """Run the task's shell command in a new session (its own process group),
    dying with its parent.
    """
    return subprocess.Popen(
        ["/bin/sh", "-c", task.command],
        start_new_session=True,
        preexec_fn=functools.partial(die_with_parent, os.getpid()),
        stdin=subprocess.DEVNULL,
        stdout=output,
        stderr=output,
    )


def signal_group(process: subprocess.Popen, sig: int) -> None:
    """Send `sig` to the task's whole process group; a group that is already gone is fine."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, sig)


def terminate_tasks(
    processes: Sequence[subprocess.Popen], grace: float = KILL_GRACE_SECONDS
) -> None:
    """SIGTERM + SIGCONT every group (a stopped process only acts on SIGTERM once continued),
    SIGKILL what is left after `grace` seconds, and reap the group leaders."""
    # a second Ctrl-C must not cut this short; it acts once every group is gone
    with signals_deferred():
        for process in processes:
            signal_group(process, signal.SIGTERM)
            signal_group(process, signal.SIGCONT)
        deadline = time.monotonic() + grace
        for process in processes:
            while group_threads(process.pid) and time.monotonic() < deadline:
                process.poll()
                time.sleep(0.02)
            signal_group(process, signal.SIGKILL)
            process.wait()


class TaskFailed(InputError):
    """A task ended before it could be measured once (it failed at once, or its command does not
    exist)."""


class RunTimeout(Exception):
    """The whole run went past its `--timeout`: stopped like an interruption, with what was measured
    kept."""

    def __init__(self, seconds: float):
        self.seconds = seconds
        super().__init__(f"the run went past its time limit of {seconds:g} s (--timeout)")


# windows a task gets alone before a speed below MIN_ALONE_SPEED counts as its speed
ALONE_ATTEMPTS = 3


# lines of a failed task's stderr kept in its status, its error and the report
STDERR_TAIL_LINES = 5
# bytes read from the end of a task's stderr file to find those lines
STDERR_TAIL_BYTES = 8192


def stderr_tail(file, lines: int = STDERR_TAIL_LINES) -> str:
    """The last `lines` non-empty lines written to the open binary `file` (a task's stderr)."""
    file.flush()
    size = file.seek(0, os.SEEK_END)
    file.seek(max(0, size - STDERR_TAIL_BYTES))
    text = file.read().decode(errors="replace")
    return "\n".join([line for line in text.splitlines() if line.strip()][-lines:])


def _exit_text(code: int | None) -> str:
    if code is None:
        return "still running"
    if code == 127:
        return "exit status 127 (command not found)"
    return f"exit status {code}" if code >= 0 else f"killed by signal {-code}"


class CoRunHarness:
    """Context manager owning the task processes; `measure(mask)` runs one combination and stops it
    again.

    Each task runs contained (`cosched.containment`): `containment` is a backend name (opened and
    closed by the harness) or an open `Containment`. `task_timeout`: seconds a task may run
    (continued) before it is killed and reported `timed-out`; `deadline`: time.monotonic() after
    which `measure` raises `RunTimeout`.
    """

    def __init__(
        self,
        tasks: Sequence[TaskSpec],
        backend: CounterBackend,
        *,
        warmup: float,
        window: float,
        output=subprocess.DEVNULL,
        containment="auto",
        task_timeout: float | None = None,
        deadline: float | None = None,
        timeout: float | None = None,
    ):
        names = [task.name for task in tasks]
        if len(set(names)) != len(names):
            raise InputError(f"task names must be unique, got {names}", field="--task")
        self.tasks, self.backend = list(tasks), backend
        self.warmup, self.window, self.output = warmup, window, output
        self.containment_spec = containment
        self.containment: Containment | None = None  # set on entering the harness
        self.handles: list = []  # cosched.containment.ContainedTask, one per task
        self.stderr_files: list = []  # one temporary file per task: its stderr, read when it fails
        self.processes: list[subprocess.Popen] = []
        self.status = [TaskStatus(task.name, task.command) for task in tasks]
        self.task_timeout, self.deadline, self.timeout = task_timeout, deadline, timeout
        self.ran_seconds = [0.0] * len(tasks)
        self._signals = contextlib.ExitStack()

    def __enter__(self) -> CoRunHarness:
        from cosched.containment import open_containment

        self._signals.enter_context(termination_signals())  # SIGTERM/SIGHUP end the run like Ctrl-C
        try:
            if isinstance(self.containment_spec, str):
                containment = open_containment(self.containment_spec)
                self._signals.callback(containment.close)
            else:
                containment = self.containment_spec
            self.containment = containment
            for task, status in zip(self.tasks, self.status):
                # a Ctrl-C inside the fork's at-fork hooks would be lost, not raised
                with signals_deferred():
                    self.stderr_files.append(tempfile.TemporaryFile())
                    self._signals.callback(self.stderr_files[-1].close)
                    handle = containment.start(
                        task.command,
                        name=task.name,
                        stdout=self.output,
                        stderr=self.stderr_files[-1],
                        frozen=True,
                    )
                    self.handles.append(handle)
                    self.processes.append(handle.process)
                    status.pid = handle.pid
        except BaseException as error:
            self.__exit__(type(error), error, error.__traceback__)
            raise
        return self

    def __exit__(self, kind=None, *exc) -> None:
        try:
            quick = (KeyboardInterrupt, RunTimeout, TaskFailed)
            interrupted = kind is not None and issubclass(kind, quick)
            self.terminate(0.0 if interrupted else KILL_GRACE_SECONDS)
        finally:
            self._signals.close()

    def terminate(self, grace: float = KILL_GRACE_SECONDS) -> None:
        """SIGTERM every task (thawed), SIGKILL what is left after `grace` seconds (at once with 0),
        remove the tasks' cgroups and record how each task ended."""
        self._refresh_status()
        # a second Ctrl-C must not cut this short; it acts once every task is gone
        with signals_deferred():
            if grace > 0:
                for handle in self.handles:
                    handle.signal(signal.SIGTERM)
                    handle.thaw()
                deadline = time.monotonic() + grace
                while time.monotonic() < deadline and any(
                    h.poll() is None or h.pids() for h in self.handles
                ):
                    time.sleep(0.01)
            for handle in self.handles:
                handle.close()

    def keep_stderr(self, index: int) -> None:
        """Keep the last lines of task `index`'s stderr in its status (it failed)."""
        if index < len(self.stderr_files) and not self.stderr_files[index].closed:
            self.status[index].stderr = stderr_tail(self.stderr_files[index])

    def _refresh_status(self) -> None:
        for index, (handle, status) in enumerate(zip(self.handles, self.status)):
            code = handle.poll()
            if code is None or status.returncode is not None:
                continue
            status.returncode = code
            status.status = (
                "never-ran"
                if status.combinations_measured == 0
                else "exited"
                if code == 0
                else "crashed"
            )
            status.message = _exit_text(code)
            if code != 0:
                self.keep_stderr(index)

    def alive(self, index: int) -> bool:
        self._refresh_status()
        return self.status[index].returncode is None and self.status[index].status != "timed-out"

    def members(self, indices) -> dict[str, tuple[int, ...]]:
        """Task name -> pids of its processes, for the counter backends."""
        return {self.tasks[i].name: tuple(self.handles[i].pids()) for i in indices}

    def check_deadline(self) -> None:
        if self.deadline is not None and time.monotonic() >= self.deadline:
            raise RunTimeout(self.timeout if self.timeout is not None else 0.0)

    def time_out(self, index: int) -> None:
        """Kill task `index`, which ran for its whole `task_timeout`."""
        handle = self.handles[index]
        handle.kill()
        status = self.status[index]
        status.status, status.returncode = "timed-out", handle.returncode
        status.message = f"killed after running {self.ran_seconds[index]:.3g} s (--task-timeout)"

    def measure(self, mask: int) -> CombinationResult:
        """Continue the members of `mask`, wait the warm-up, read, wait the window, read, stop them
        again."""
        self.check_deadline()
        members = tasks_of(mask)
        runnable = [i for i in members if self.alive(i)]
        started = time.monotonic()
        try:
            for i in runnable:
                self.handles[i].thaw()
            time.sleep(self.warmup)
            before = self.backend.read(self.members(runnable))
            cpu_before = {i: self.handles[i].cpu_time() for i in runnable}
            t0 = time.monotonic()
            time.sleep(self.window)
            after = self.backend.read(self.members(runnable))
            cpu_after = {i: self.handles[i].cpu_time() for i in runnable}
            elapsed = time.monotonic() - t0
        finally:
            for i in runnable:
                self.handles[i].freeze()
        for i in runnable:
            self.ran_seconds[i] += time.monotonic() - started
        speeds = {self.tasks[i].name: float("nan") for i in members}
        threads = dict.fromkeys(speeds, 0)
        for i in runnable:
            name = self.tasks[i].name
            speeds[name], threads[name] = task_speed(
                [r for r in before if r.task == name],
                [r for r in after if r.task == name],
                cpu_after[i] - cpu_before[i],
                elapsed,
            )
        for i in members:
            if not self.alive(i):  # exited during the window: its speed is not a steady-state value
                speeds[self.tasks[i].name] = float("nan")
            elif np.isfinite(speeds[self.tasks[i].name]):
                self.status[i].combinations_measured += 1
            timeout = self.task_timeout
            if timeout is not None and self.alive(i) and self.ran_seconds[i] >= timeout:
                self.time_out(i)
        start = before[0].time if before else float("nan")
        end = after[0].time if after else float("nan")
        return CombinationResult(int(mask), speeds, threads, start, end, tuple(before + after))


@dataclass
class Measurement:
    """Everything one harness run measured (possibly cut short by Ctrl-C: `interrupted`)."""

    tasks: list[TaskSpec]
    backend: str
    fallback_reason: str | None
    results: list[CombinationResult] = field(default_factory=list)
    status: list[TaskStatus] = field(default_factory=list)
    started: float = 0.0
    finished: float = 0.0
    interrupted: bool = False
    interrupted_by: str | None = None  # SIGINT (Ctrl-C), SIGTERM, SIGHUP or "timeout"
    timed_out: float | None = None  # the --timeout that stopped the run
    containment: str | None = None  # the containment backend that ran the tasks
    containment_limits: str | None = None  # what that backend cannot see

    def speed_table(self):
        """Long table: combination, members, size, task, speed (absolute, formula (30)), threads,
        start, end."""
        import pandas as pd

        frames = [result_table(result, self.tasks) for result in self.results]
        return pd.concat(frames, ignore_index=True) if frames else result_table(None, self.tasks)


SPEED_COLUMNS = ("combination", "members", "size", "task", "speed", "threads", "start", "end")


def result_table(result: CombinationResult | None, tasks: Sequence[TaskSpec]):
    """The rows of `Measurement.speed_table` for one combination (an empty table for None)."""
    import pandas as pd

    if result is None:
        return pd.DataFrame({column: [] for column in SPEED_COLUMNS})
    members = tasks_of(result.combination)
    return pd.DataFrame(
        {
            "combination": result.combination,
            "members": "+".join(tasks[i].name for i in members),
            "size": len(members),
            "task": list(result.speeds),
            "speed": list(result.speeds.values()),
            "threads": [result.threads[t] for t in result.speeds],
            "start": result.start,
            "end": result.end,
        },
        columns=list(SPEED_COLUMNS),
    )


def result_samples(result: CombinationResult):
    """Raw readings of one combination, with its bitmask in a first column."""
    frame = readings_frame(result.readings)
    frame.insert(0, "combination", np.full(len(frame), result.combination, dtype=np.int64))
    return frame


def measure_combinations(
    tasks: Sequence[TaskSpec],
    masks: Iterable[int],
    backend: CounterBackend,
    *,
    warmup: float,
    window: float,
    fallback_reason: str | None = None,
    on_result: Callable[[CombinationResult], None] | None = None,
    progress: bool = False,
    containment="auto",
    task_timeout: float | None = None,
    timeout: float | None = None,
    fail_early: bool = False,
) -> Measurement:
    """Run the harness over `masks` in order; Ctrl-C / SIGTERM (or `timeout` seconds) stops early
    and keeps what was measured.

    A singleton whose speed reads below `MIN_ALONE_SPEED` is measured again (up to `ALONE_ATTEMPTS`
    windows in all): the speed alone is the divisor of every speed of the task. With `fail_early`, a
    task that ends before its first window is measured raises `TaskFailed` naming it and its exit
    status.
    """
    from cosched.progress import progress_bar

    masks = [int(m) for m in masks]
    measurement = Measurement(list(tasks), backend.name, fallback_reason, started=time.time())
    bar = progress_bar(total=len(masks), unit="comb", disable=not progress, desc="measuring")
    deadline = None if timeout is None else time.monotonic() + timeout
    try:
        with CoRunHarness(
            tasks,
            backend,
            warmup=warmup,
            window=window,
            containment=containment,
            task_timeout=task_timeout,
            deadline=deadline,
            timeout=timeout,
        ) as harness:
            measurement.status = harness.status
            containment = harness.containment
            assert containment is not None  # the harness has been entered
            measurement.containment = containment.name
            measurement.containment_limits = containment.limits
            for mask in masks:
                if fail_early:
                    _check_started(harness, mask)
                if not all(harness.alive(i) for i in tasks_of(mask)):  # cannot be formed any more
                    bar.update()
                    continue
                result = harness.measure(mask)
                for _ in range(ALONE_ATTEMPTS - 1):
                    speed = next(iter(result.speeds.values()))
                    if (
                        mask.bit_count() != 1
                        or not np.isfinite(speed)
                        or speed >= MIN_ALONE_SPEED
                        or not harness.alive(tasks_of(mask)[0])
                    ):
                        break
                    # near 0 alone: measure again before it becomes a divisor
                    result = harness.measure(mask)
                if fail_early:
                    _check_started(harness, mask)
                measurement.results.append(result)
                if on_result is not None:  # incremental files: no Ctrl-C in the middle of a row
                    with signals_deferred():
                        on_result(result)
                bar.update()
    except KeyboardInterrupt as error:
        measurement.interrupted = True
        measurement.interrupted_by = signal.Signals(getattr(error, "signum", signal.SIGINT)).name
    except RunTimeout as error:
        measurement.interrupted = True
        measurement.interrupted_by = "timeout"
        measurement.timed_out = error.seconds
    finally:
        bar.close()
        measurement.finished = time.time()
    return measurement


def _check_started(harness: CoRunHarness, mask: int) -> None:
    """`TaskFailed` for a member of `mask` that ended before one window of it was measured."""
    for i in tasks_of(mask):
        status = harness.status[i]
        never_measured = status.combinations_measured == 0 and status.status != "timed-out"
        if not harness.alive(i) and never_measured:
            task = harness.tasks[i]
            harness.keep_stderr(i)
            tail = " | ".join(status.stderr.splitlines())
            tail = f"; its stderr ends: {tail}" if tail else ""
            raise TaskFailed(
                f"task {task.name!r} ended before it could be measured, "
                f"{_exit_text(status.returncode)}: {task.command}{tail}",
                field="--task",
            )
