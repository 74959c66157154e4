"""The discrete-event engine: jobs move future -> waiting -> executing -> finished (000 §3.3, Fig. 4).

Rules (they decide whether results compare with other simulators):

- Events are job arrivals (submit times), job completions and wake-ups a scheduler asks for. At one
  timestamp the engine handles all completions first, then all arrivals, then the wake-ups, then calls the
  scheduler once (``scheduler.schedule(engine)``), then asks the speed model (if any) for new speeds.
- Deterministic: ties between jobs follow the workload order (submit time, then file order).

Interface for schedulers (read-only unless a method says otherwise):

- ``now``; ``waiting``: OrderedDict job -> None in arrival order; ``running``: dict job -> None in start order.
- Per job (lists indexed by job, the workload's order): ``submit``, ``run_time`` (compact run time), ``cores``,
  ``estimate`` (user estimate, or the run time with ``use_run_times=True``), ``start``, ``end``,
  ``allocation`` (an ``allocators.Allocation``), ``held`` (allocator units held while running),
  ``speed`` (current speedup, 1.0 = compact), ``predicted_end`` (estimated end at the current speed).
- ``by_end``: running jobs as a list of ``(predicted_end, job)`` sorted ascending (EASY's shadow time).
- ``units_table``: allocator units per job when they depend on the cores only (compact), else None.
- ``allocator``: the replaceable ``allocators.Allocator`` (node state in ``allocator.state``).
- ``start_job(job, allocation=None) -> bool``: start a waiting job now (allocation found by the allocator
  unless given); False if it does not fit. ``request_wakeup(time)``: one more scheduling pass at ``time``.

Variable speed (000 §3.5): the engine keeps each running job's remaining work in compact seconds; a
speed change at ``now`` rescales the remaining time, remaining_new = speedup_old x remaining_old /
speedup_new (formula 4.2), and re-posts the completion event (stale events carry an old version number
and are skipped). With no speed model every speed stays 1.0 and nothing is rescaled.

Speed-model hook: an object with ``speeds(engine, jobs) -> iterable of (job, speed)``; after each
timestamp's scheduling pass the engine passes the running jobs on the nodes that changed (jobs started or
finished there) and applies the returned speeds. With ``log_events=True`` the engine records
``(time, event, job, value)`` tuples in ``log``: arrival, start, finish, speed (a neighbour change).
"""
from __future__ import annotations

import bisect
import heapq
import math
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Callable, Iterable, Protocol

import numpy as np

from cosched.errors import InputError
from cosched.simulator.allocators import Allocation, Allocator, CompactAllocator
from cosched.simulator.platform import Platform
from cosched.simulator.schedulers import make_scheduler
from cosched.simulator.schedulers.base import Scheduler
from cosched.simulator.workload import Workload

__all__ = ["Engine", "SimulationResult", "SpeedModel", "simulate"]

INF = math.inf
PROGRESS_STEPS = 200  # progress bar refreshes at most this many times per run


class SpeedModel(Protocol):
    """Gives the current speedup of running jobs (e.g. from a co-location heatmap, 000 formula (4.1))."""

    def speeds(self, engine: "Engine", jobs: np.ndarray) -> Iterable[tuple[int, float]]:
        """New speedups for (some of) `jobs`, the running jobs on nodes that changed at `engine.now`."""


@dataclass(eq=False)
class SimulationResult:
    """Per-job start/end times and node lists of one run, with the inputs that produced them."""

    workload: Workload
    platform: Platform
    scheduler: str
    start: np.ndarray
    end: np.ndarray
    nodes: list
    wall_seconds: float
    co_scheduled: bool = False
    log: list | None = None
    options: dict = field(default_factory=dict)

    @property
    def makespan(self) -> float:
        """Last completion minus first submission (000 §4.1)."""
        return float(self.end.max() - self.workload.submit.min()) if self.end.size else 0.0

    def jobs_frame(self):
        """The per-job table (pandas): ids, times, cores, `;`-joined node ids, and co-scheduling columns."""
        import pandas as pd

        w = self.workload
        columns = {
            "job_id": w.job_id, "submit_time": w.submit, "start_time": self.start, "end_time": self.end,
            "wait_time": self.start - w.submit, "run_time": self.end - self.start, "estimate": w.estimate,
            "cores": w.cores, "node_count": np.fromiter((n.size for n in self.nodes), np.int64, len(self.nodes)),
            "nodes": [";".join(map(str, n.tolist())) for n in self.nodes],
        }
        if w.app is not None:
            columns["app"] = w.app
        if self.co_scheduled:
            columns["compact_time"] = w.run
            columns["speedup"] = w.run / (self.end - self.start)  # 003 §2.3.2.2, (2.7)
        return pd.DataFrame(columns)


class Engine:
    """One simulation: a workload on a platform under a scheduler, an allocator and an optional speed model."""

    def __init__(self, workload: Workload, platform: Platform, scheduler, *, allocator: Allocator | None = None,
                 speed_model: SpeedModel | None = None, use_run_times: bool = False, log_events: bool = False,
                 progress: bool = False):
        if len(workload) and int(workload.cores.max()) > platform.total_cores:
            raise InputError(f"a job asks for {int(workload.cores.max())} cores, the platform has "
                             f"{platform.total_cores}; load the workload with max_cores", field="cores")
        self.workload, self.platform = workload, platform
        self.scheduler = scheduler if hasattr(scheduler, "schedule") else _FunctionScheduler(scheduler)
        self.allocator = allocator if allocator is not None else CompactAllocator(platform)
        self.speed_model = speed_model
        self.use_run_times = use_run_times
        count = len(workload)
        self.submit = workload.submit.tolist()
        self.run_time = workload.run.tolist()
        self.cores = workload.cores.tolist()
        self.estimate = (workload.run if use_run_times else workload.estimate).tolist()
        self.start = [math.nan] * count
        self.end = [math.nan] * count
        self.allocation: list[Allocation | None] = [None] * count
        self.held = [0] * count
        table = self.allocator.static_units(workload.cores)
        self.units_table = None if table is None else table.tolist()
        self.speed = [1.0] * count
        self.predicted_end = [INF] * count
        self.remaining = list(self.run_time)  # compact seconds of work left at `updated`
        self.updated = [0.0] * count
        self.version = [0] * count
        # OrderedDict: a plain dict gets slow to iterate after many deletions at its front (long queues)
        self.waiting: OrderedDict[int, None] = OrderedDict()
        self.running: dict[int, None] = {}
        self.by_end: list[tuple[float, int]] = []
        self.now = workload.submit[0].item() if count else 0.0
        self.log: list | None = [] if log_events else None
        self._completions: list[tuple[float, int, int]] = []
        self._wakeups: list[float] = []
        self._wakeup_set: set[float] = set()
        self._touched: list[np.ndarray] = []
        self._progress = progress

    # --- scheduler-facing API ---------------------------------------------------------------------
    def start_job(self, job: int, allocation: Allocation | None = None) -> bool:
        """Start waiting `job` now on `allocation` (or the allocator's choice); False if it does not fit."""
        allocator = self.allocator
        if allocation is None:
            allocation = allocator.find(self, job)
            if allocation is None:
                return False
        allocator.commit(job, allocation)
        now = self.now
        del self.waiting[job]
        self.running[job] = None
        self.allocation[job] = allocation
        self.held[job] = allocator.units(self, job)
        self.start[job] = now
        self.updated[job] = now
        end = now + self.run_time[job]
        predicted = now + self.estimate[job]
        self.predicted_end[job] = predicted
        bisect.insort(self.by_end, (predicted, job))
        heapq.heappush(self._completions, (end, job, 0))
        if self.speed_model is not None:
            self._touched.append(allocation.nodes)
        if self.log is not None:
            self.log.append((now, "start", job, allocation.nodes.size))
        return True

    def request_wakeup(self, when: float) -> None:
        """Run one more scheduling pass at `when` (e.g. a reservation time)."""
        if when > self.now and when not in self._wakeup_set:
            self._wakeup_set.add(when)
            heapq.heappush(self._wakeups, when)

    def set_speed(self, job: int, speed: float) -> None:
        """Change a running job's speedup now and re-post its completion (000 §3.5, formula (4.2))."""
        old = self.speed[job]
        if speed == old:
            return
        now = self.now
        remaining = self.remaining[job] - (now - self.updated[job]) * old  # work left, compact seconds
        self.remaining[job] = remaining
        self.updated[job] = now
        self.speed[job] = speed
        version = self.version[job] + 1
        self.version[job] = version
        heapq.heappush(self._completions, (now + remaining / speed, job, version))
        done = self.run_time[job] - remaining
        index = bisect.bisect_left(self.by_end, (self.predicted_end[job], job))
        del self.by_end[index]
        predicted = now + max(self.estimate[job] - done, remaining) / speed
        self.predicted_end[job] = predicted
        bisect.insort(self.by_end, (predicted, job))
        if self.log is not None:
            self.log.append((now, "speed", job, speed))

    # --- the loop ---------------------------------------------------------------------------------
    def _finish(self, job: int) -> None:
        now = self.now
        self.end[job] = now
        del self.running[job]
        index = bisect.bisect_left(self.by_end, (self.predicted_end[job], job))
        del self.by_end[index]
        allocation = self.allocation[job]
        self.allocator.release(job, allocation)
        if self.speed_model is not None:
            self._touched.append(allocation.nodes)
        if self.log is not None:
            self.log.append((now, "finish", job, 0))
        self.scheduler.on_finish(self, job)

    def _update_speeds(self) -> None:
        nodes = np.unique(np.concatenate(self._touched))
        self._touched.clear()
        running = self.running
        jobs = self.allocator.state.jobs_on(nodes)
        for job, speed in self.speed_model.speeds(self, jobs):
            if job in running:
                self.set_speed(job, float(speed))

    def run(self) -> SimulationResult:
        """Simulate until every job has finished."""
        clock = time.perf_counter()
        count = len(self.run_time)
        submit, completions, wakeups = self.submit, self._completions, self._wakeups
        scheduler, waiting, version = self.scheduler, self.waiting, self.version
        log = self.log
        scheduler.attach(self)
        bar, step, finished, shown = None, max(1, count // PROGRESS_STEPS), 0, 0
        if self._progress:
            from tqdm import tqdm
            bar = tqdm(total=count, unit="job", desc=f"simulate {getattr(scheduler, 'name', '')}".strip())
        arrived = 0
        while arrived < count or completions or waiting:
            now = min(submit[arrived] if arrived < count else INF, completions[0][0] if completions else INF,
                      wakeups[0] if wakeups else INF)
            if now == INF:
                raise RuntimeError(f"{len(waiting)} waiting jobs can never start (first: job index "
                                   f"{next(iter(waiting))}); the scheduler or allocator is inconsistent")
            self.now = now
            while completions and completions[0][0] <= now:
                _, job, event_version = heapq.heappop(completions)
                if event_version == version[job]:
                    self._finish(job)
                    finished += 1
            while arrived < count and submit[arrived] <= now:
                waiting[arrived] = None
                if log is not None:
                    log.append((now, "arrival", arrived, 0))
                scheduler.on_arrival(self, arrived)
                arrived += 1
            while wakeups and wakeups[0] <= now:
                self._wakeup_set.discard(heapq.heappop(wakeups))
            scheduler.schedule(self)
            if self._touched:
                self._update_speeds()
            if bar is not None and finished - shown >= step:
                bar.update(finished - shown)
                shown = finished
        if bar is not None:
            bar.update(finished - shown)
            bar.close()
        return SimulationResult(
            self.workload, self.platform, getattr(scheduler, "name", type(scheduler).__name__),
            np.array(self.start), np.array(self.end),
            [a.nodes for a in self.allocation], time.perf_counter() - clock,
            co_scheduled=self.speed_model is not None, log=log,
            options={"use_run_times": self.use_run_times})


class _FunctionScheduler(Scheduler):
    """Wraps a plain function `schedule(engine)` as a scheduler (the base class's hooks do nothing)."""

    def __init__(self, function: Callable):
        self.schedule = function
        self.name = getattr(function, "__name__", "function")


def simulate(workload: Workload, platform: Platform, scheduler, **options) -> SimulationResult:
    """Run one simulation; `scheduler` is a scheduler object, a registered name or a function(engine)."""
    if isinstance(scheduler, str):
        scheduler = make_scheduler(scheduler)
    return Engine(workload, platform, scheduler, **options).run()
