"""The discrete-event engine: one loop for rigid, co-located, moldable, malleable and preemptible
jobs.

Job lifecycle (000 §3.3, Fig. 4, extended by 001 §4 and 004 §III-A): submitted -> waiting -> running
-> (resized) -> preempted -> waiting -> running -> finished, or killed. A scheduler changes the
state only through the actions below; each action is checked and a wrong one raises `ActionError`
naming the job.

Rules (they decide whether results compare with other simulators):

- Events are job arrivals (submit times), job completions, timed events of event sources (a job's
  scheduling point, a timer, an advance notice) and wake-ups a scheduler asks for. At one timestamp
  the engine handles all completions first, then all arrivals, then the timed events, then the
  wake-ups, then calls the scheduler once (``scheduler.schedule(view)``), then asks the speed
  model for new speeds. With ``pass_per_event`` (CQSim's loop, ``--compat cqsim``) the scheduler is
  called after each completion (in start order: earlier starts first, ties by job index) and after
  each arrival instead.
- Deterministic: ties between jobs follow the workload order (submit time, then file order).
- With ``kill_at_walltime`` a job still running at its start plus its estimate is killed then (a
  timed event: a completion at that very time comes first), as Slurm's time limit; the count is
  ``SimulationResult.options["killed_at_walltime"]``.

Progress (000 §3.5, formula (4.2) generalised): the engine keeps each running job's remaining work
(in seconds of its compact run at the requested size) and its progress rate = co-location speed x
the job model's rate on its node count. Any change of either at ``now`` rescales the remaining time,
remaining_new = rate_old x remaining_old / rate_new, and re-posts the completion event (stale events
carry an old version number and are skipped). Setup and reconfiguration time pass without progress.

Schedulers, mechanisms, event sources and speed models never receive the engine: every hook gets
its `cosched.simulator.view.SchedulerView` (``engine.view``), which lists what they read (the state,
read-only: queues, per-job lists indexed by job in workload order, ``changes``), its
accessors and the actions (``start``, ``resize``, ``preempt``, ``kill``, ``reserve``, ``release``,
``revoke``, ``hint``, ``request_wakeup``, ``note``, ``at``, ``set_speed``; each takes an optional
``reason`` for the action log, ``log_actions=True``). The engine knows no scheduler family: it runs
any object with ``schedule(view)``, or the `cosched.simulator.view.SchedulingPass` it hands over.
"""

from __future__ import annotations

import heapq
import importlib
import math
import time
from array import array
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from itertools import count as counter

try:  # Cython's pure-Python mode: the types below compile to C, and do nothing in plain Python
    import cython

    if not cython.compiled:  # plain Python: the light stand-in, not Cython's slower shadow
        raise ModuleNotFoundError
except ModuleNotFoundError:
    from cosched import _pure_cython as cython

import numpy as np

from cosched.collector import rare_collections
from cosched.deprecation import warn_renamed
from cosched.errors import InputError
from cosched.simulator.action_log import ACTION_COLUMNS, write_actions
from cosched.simulator.allocators import Allocation, Allocator, CompactAllocator, end_job, start_job
from cosched.simulator.bisection import Completions, EndOrder, TouchedJobs
from cosched.simulator.colocation import (
    HeatmapSpeedModel,
    SpeedModel,
    append_neighbourhood,
    node_state,
)
from cosched.simulator.jobs import RIGID, STATES, JobKind, JobModel, JobState, per_job_models
from cosched.simulator.platform import Platform
from cosched.simulator.result import SimulationResult, node_arrays
from cosched.simulator.view import (
    Clock,
    SchedulerView,
    SchedulingPass,
    SortedColumn,
    WaitingJobs,
    insert_sorted,
    remove_sorted,
    scheduler_hook,
    scheduling_pass_of,
)
from cosched.simulator.workload import Workload

__all__ = [
    "ACTION_COLUMNS",
    "write_actions",
    "Engine",
    "SimulationResult",
    "SpeedModel",
    "Reservation",
    "ActionError",
    "STATES",
]

INF = cython.declare(cython.double, math.inf)
PROGRESS_STEPS = 200  # progress bar refreshes at most this many times per run
# relative: a job whose remaining work is below this share of its work has finished
WORK_TOLERANCE = 1e-9
# one definition (cosched.simulator.jobs.JobState); plain ints in the loop for speed
FUTURE, WAITING, RUNNING, FINISHED, KILLED = (int(state) for state in JobState)


class ActionError(InputError):
    """A scheduler asked for something the state does not allow (busy node, resizing a rigid job,
    ...)."""


@dataclass(frozen=True, eq=False)
class Reservation:
    """Idle nodes held for a future job (an on-demand job announced in advance, 004 §III-B)."""

    key: int
    nodes: np.ndarray


@cython.cclass
@cython.boundscheck(False)  # its methods index the lists with a running job: within, not negative
@cython.wraparound(False)
class _LoopState(Clock):
    """The state the event loop, `start` and `_finish` update, as typed fields of a compiled class.

    Compiled (`cosched._compiled`), each read or write of a field is a C struct access instead of a
    dictionary look-up; `Engine` subclasses it (a plain class: its methods can still be patched and
    it may hold other attributes). In plain Python this is an ordinary base class."""

    arrived = cython.declare(cython.Py_ssize_t, visibility="public")
    pass_per_event = cython.declare(cython.bint, visibility="public")
    kill_at_walltime = cython.declare(cython.bint, visibility="public")
    # per job, in workload order
    submit = cython.declare(list, visibility="public")
    run_time = cython.declare(list, visibility="public")
    cores = cython.declare(list, visibility="public")
    estimate = cython.declare(list, visibility="public")
    state = cython.declare(list, visibility="public")
    allocation = cython.declare(list, visibility="public")
    held = cython.declare(list, visibility="public")
    version = cython.declare(list, visibility="public")
    # the time columns, `array("d")`s (`_time_columns`): no boxed float per job and time
    first_start = cython.declare(object, visibility="public")
    started = cython.declare(object, visibility="public")
    end = cython.declare(object, visibility="public")
    remaining = cython.declare(object, visibility="public")
    updated = cython.declare(object, visibility="public")
    predicted_end = cython.declare(object, visibility="public")
    # the same arrays typed (compiled: memoryviews read and written in C; plain Python: the arrays)
    _first_start = cython.declare(cython.double[::1])
    _started = cython.declare(cython.double[::1])
    _end = cython.declare(cython.double[::1])
    _remaining = cython.declare(cython.double[::1])
    _updated = cython.declare(cython.double[::1])
    _predicted_end = cython.declare(cython.double[::1])
    units_table = cython.declare(list, visibility="public")  # None without a static table
    unit_counts = cython.declare(object, visibility="public")  # units_table as array('q'), typed
    waiting_units = cython.declare(object, visibility="public")  # None without a static table
    models = cython.declare(list, visibility="public")  # None when every job is plain rigid
    # queues, events and hooks
    waiting = cython.declare(object, visibility="public")  # the queue as a mapping (WaitingJobs)
    queue = cython.declare(object, visibility="public")  # the waiting jobs (a SortedColumn)
    running = cython.declare(dict, visibility="public")
    _running_keys = cython.declare(list, visibility="public")  # per job: its key in `running`
    by_end = cython.declare(EndOrder, visibility="public")
    pending_resize = cython.declare(dict, visibility="public")
    _completions = cython.declare(Completions, visibility="public")
    _events = cython.declare(list, visibility="public")
    _wakeups = cython.declare(list, visibility="public")
    _wakeup_set = cython.declare(set, visibility="public")
    _touched = cython.declare(TouchedJobs, visibility="public")
    log = cython.declare(list, visibility="public")  # None without an event log
    actions = cython.declare(list, visibility="public")  # None without an action log
    allocator = cython.declare(object, visibility="public")
    scheduler = cython.declare(object, visibility="public")
    speed_model = cython.declare(object, visibility="public")
    view = cython.declare(object, visibility="public")
    _on_finish = cython.declare(object, visibility="public")
    speed = cython.declare(list, visibility="public")
    rate = cython.declare(list, visibility="public")
    work = cython.declare(list, visibility="public")
    estimate_work = cython.declare(list, visibility="public")  # None without job models

    @cython.ccall
    @cython.boundscheck(True)  # a scheduler's job index: an IndexError, not a stray read
    @cython.locals(job=cython.Py_ssize_t, speed=cython.double, rate=cython.double)
    def set_speed(self, job: int, speed: float) -> None:
        """Change a running job's speedup now and re-post its completion (000 §3.5, (4.2))."""
        if speed == cython.cast(cython.double, self.speed[job]):
            return
        self.speed[job] = rate = speed
        if self.models is not None:
            held = self._held_by(job).nodes.size  # type: ignore[attr-defined]  # Engine's
            rate *= self.models[job].rate(held, self.view.requested_nodes(job))
        _LoopState._set_rate(self, job, rate)
        if self.log is not None:
            self.log.append((self.now, "speed", job, speed))

    @cython.ccall  # `Clock.start`, called in C by the compiled passes (`Starter`)
    @cython.locals(state=list, index=cython.Py_ssize_t, now=cython.double)
    @cython.locals(end=cython.double, predicted=cython.double)
    def start(self, job: int, nodes=None, placement: str | None = None, reason: str = "") -> bool:
        """Start waiting `job` now; False if it does not fit.

        nodes: None (the allocator chooses), a node count (moldable and malleable jobs, within their
        bounds), node ids, an `Allocation` or a `Reservation` (its nodes are released to the job).
        placement: a hint for the allocator (e.g. "compact" on the co-location allocator).
        """
        state, index = self.state, job  # `index`: the lists' C index, `job` their Python int
        if state[index] != WAITING:
            raise ActionError(f"{self._name(job)} cannot start: it is {STATES[state[index]]}")  # type: ignore[attr-defined]
        if placement is not None:
            self.hint(job, placement)  # type: ignore[attr-defined]
        allocator, table = self.allocator, self.units_table
        if nodes is None:  # `allocator.allocate`, or the compact allocator's in C (`direct_entry`)
            allocation = start_job(allocator, self, job, self.cores[index])
        else:
            allocation = self._commit_nodes(job, nodes)  # type: ignore[attr-defined]
        if allocation is None:
            return False
        held = (  # on the allocator's choice: the units of the requested size (the table's)
            table[index] if nodes is None and table is not None else allocator.units_of(allocation)
        )
        now = self.now
        self.changes += 1
        remove_sorted(self.queue, job)  # moves the few jobs ahead of it, not the queue behind
        units = self.waiting_units
        if units is not None:  # `_unqueue`, inlined (once per start)
            remove_sorted(units, table[index])
        self.running[job], self._running_keys[index] = None, job  # its key, found by `_finish`
        state[index] = RUNNING
        self.allocation[index] = allocation
        self.held[index] = held
        if self._first_start[index] != self._first_start[index]:  # NaN: first start
            self._first_start[index] = now
        self._started[index] = now
        if self.models is None:
            self._updated[index] = now
            end = now + self._remaining[index]
            predicted = now + cython.cast(cython.double, self.estimate[index])
        else:
            model = self.models[index]
            self.rate[job] = rate = self.speed[job] * model.rate(
                allocation.nodes.size, self.view.requested_nodes(job)
            )
            self._updated[index] = resume = now + model.setup
            end = resume + self._remaining[index] / rate
            predicted = resume + self._predicted_work(job) / rate
        self._predicted_end[index] = predicted
        self.by_end.add(predicted, index)
        self._completions.push(end, index, self.version[index])
        if self.kill_at_walltime:
            self._post_walltime(job, end)  # type: ignore[attr-defined]
        if self.speed_model is not None:  # the job and its neighbours: their speeds follow
            append_neighbourhood(self._touched, job, allocator)
        if self.log is not None:
            self.log.append((now, "start", job, allocation.nodes.size))
        if self.actions is not None:
            self._act("start", job, 0, allocation.nodes, reason)  # type: ignore[attr-defined]
        return True

    @cython.cfunc
    @cython.locals(job=cython.Py_ssize_t, schedule=SchedulingPass, units=SortedColumn)
    def _arrive(self, job, schedule) -> None:
        """`job` (the next in workload order) joins the queue now; the run's pass hears it."""
        insert_sorted(self.queue, job)  # the highest job index waiting: the last
        self.state[job] = WAITING
        units = self.waiting_units
        if units is not None:  # `_queue`, inlined (once per arrival)
            insert_sorted(units, self.units_table[job])
        if self.log is not None:
            self.log.append((self.now, "arrival", job, 0))
        if schedule.hears_arrivals:  # the scheduler's `on_arrival` does something
            schedule.arrived(self.view, job)

    @cython.ccall
    @cython.locals(job=cython.Py_ssize_t, now=cython.double, updated=cython.double)
    def _advance(self, job) -> None:
        """Bring `remaining` up to `now` (no progress before `updated`: setup, reconfiguration)."""
        now, updated = self.now, self._updated[job]
        if now > updated:
            self._remaining[job] -= (now - updated) * cython.cast(cython.double, self.rate[job])
            self._updated[job] = now

    @cython.ccall
    @cython.locals(job=cython.Py_ssize_t, rate=cython.double, version=cython.Py_ssize_t)
    def _set_rate(self, job, rate: float) -> None:
        """A new rate from now: remaining time rescaled and the completion re-posted (000 (4.2))."""
        _LoopState._advance(self, job)
        self.changes += 1
        version = self.version[job] + 1
        self.rate[job], self.version[job] = rate, version
        resume, remaining = self._updated[job], self._remaining[job]
        self._completions.push(resume + remaining / rate, job, version)
        predicted = resume + _LoopState._predicted_work(self, job) / rate
        self.by_end.move(job, self._predicted_end[job], predicted)
        self._predicted_end[job] = predicted

    @cython.ccall
    @cython.returns(cython.double)
    @cython.locals(job=cython.Py_ssize_t, estimate=cython.double, work=cython.double)
    def _predicted_work(self, job) -> float:
        """Work left by the estimate (checkpoint writes included), never below the truth."""
        estimate = self.estimate[job] if self.estimate_work is None else self.estimate_work[job]
        work = self.work[job]
        return max(estimate - (work - self._remaining[job]), self._remaining[job])

    @cython.ccall  # called in C by the loop (an engine subclass may override it in Python)
    @cython.locals(index=cython.Py_ssize_t, now=cython.double)
    def _finish(self, index: int) -> None:
        """Job `index` has ended now: it leaves the running jobs and gives its nodes back."""
        job, now = self._running_keys[index], self.now  # the int `start` got: keys by identity
        self._end[index], self._remaining[index] = now, 0.0
        self.state[index] = FINISHED
        self.changes += 1
        self.by_end.remove(self._predicted_end[index], index)
        del self.running[job]
        allocation = self.allocation[index]
        assert allocation is not None  # a running job holds nodes
        if self.speed_model is not None:  # the job itself: a speed update follows every change
            append_neighbourhood(self._touched, job, self.allocator)
        end_job(self.allocator, job, allocation)  # `release`, in C where `start_job` is
        if self.log is not None:
            self.log.append((now, "finish", job, 0))
        if self.actions is not None:
            self._act("finish", job, 0, allocation.nodes, "")  # type: ignore[attr-defined]
        self.pending_resize.pop(job, None)  # a resize waiting for its scheduling point
        if self._on_finish is not None:
            self._on_finish(self.view, job)

    @cython.cfunc
    @cython.locals(heatmap=HeatmapSpeedModel, cores=cython.Py_ssize_t, count=cython.Py_ssize_t)
    @cython.locals(index=cython.Py_ssize_t, speed=cython.double)
    def _update_speeds(self, listed: bool, cores) -> None:
        """New speeds, ascending, for the running jobs whose neighbours changed (`_touched`)."""
        count = self._touched.ascending_in_state(self.state, RUNNING)
        if type(self.speed_model) is HeatmapSpeedModel:  # in C (`cores` per node)
            heatmap, state = self.speed_model, node_state(self.allocator)
            for index in self._touched.jobs[:count]:  # `_LoopState.set_speed`: no override check
                speed = heatmap.speed_in(state, index, self.allocation[index], cores)
                _LoopState.set_speed(self, index, speed)  # returns at once on the same speed
            return
        model, jobs = self.speed_model, self._touched.first(count)
        for job, speed in model.speeds(self.view, jobs if listed else np.array(jobs, np.int64)):
            if job in self.running:
                self.set_speed(job, float(speed))

    def _time_columns(self, jobs: int, work: np.ndarray | list[float]) -> None:
        """The time columns, no job started: `started` is when the current (or last) run began,
        setup included; `remaining` the work left at `updated` (compact seconds), brought up to
        date when progress resumes."""
        self.first_start, self.started, self.end = (array("d", [math.nan]) * jobs for _ in "abc")
        self._first_start, self._started, self._end = self.first_start, self.started, self.end
        self.remaining = self._remaining = array("d", np.asarray(work, np.float64).tobytes())
        self.updated = self._updated = array("d", [0.0]) * jobs
        self.predicted_end = self._predicted_end = array("d", [INF]) * jobs


class Engine(_LoopState):
    """One simulation: a workload on a platform under a scheduler, an allocator and an optional
    speed model."""

    def __init__(
        self,
        workload: Workload,
        platform: Platform,
        scheduler,
        *,
        allocator: Allocator | None = None,
        speed_model: SpeedModel | None = None,
        job_models: JobModel | list | None = None,
        sources: Iterable = (),
        use_run_times: bool = False,
        log_events: bool = False,
        progress: bool = False,
        log_actions: bool = False,
        pass_per_event: bool = False,
        kill_at_walltime: bool = False,
    ):
        if len(workload) and int(workload.cores.max()) > platform.total_cores:
            raise InputError(
                f"a job asks for {int(workload.cores.max())} cores, the platform has "
                f"{platform.total_cores}; load the workload with max_cores",
                field="cores",
            )
        self.workload, self.platform = workload, platform
        self.scheduler = scheduler if hasattr(scheduler, "schedule") else _Function(scheduler)
        make_allocator = getattr(self.scheduler, "make_allocator", CompactAllocator)
        self.allocator = allocator if allocator is not None else make_allocator(platform)
        self.allocator.bind(workload)  # resources and node types: where each job may run
        self.speed_model = speed_model
        self.use_run_times = use_run_times
        self.pass_per_event = pass_per_event
        self.kill_at_walltime = kill_at_walltime
        jobs = len(workload)
        self.submit = workload.submit.tolist()
        self.run_time = workload.run.tolist()
        self.cores = workload.cores.tolist()
        self.estimate = (estimates := workload.run if use_run_times else workload.estimate).tolist()
        self.state = [FUTURE] * jobs
        self.allocation: list[Allocation | None] = [None] * jobs
        self.held = [0] * jobs
        table = self.allocator.static_units(workload.cores)
        self.units_table = None if table is None else table.tolist()
        self.unit_counts = None if table is None else array("q", table.astype(np.int64).tobytes())
        self.waiting_units = None if table is None else SortedColumn("waiting_units", counted=True)
        self.placement: list[str | None] = [None] * jobs
        self.speed, self.rate = [1.0] * jobs, [1.0] * jobs
        self.models = per_job_models(job_models, jobs)
        if self.models is not None and not platform.uniform:  # they resize over any idle nodes
            raise InputError(
                f"moldable, malleable and preemptible jobs run on platforms of one node type; "
                f"{platform.name!r} has {len(platform.node_groups)}",
                field="platform",
            )
        self.work = (
            self.run_time
            if self.models is None
            else [
                model.checkpoint.total_work(run) for model, run in zip(self.models, self.run_time)
            ]
        )
        self.estimate_work: list[float] | None = None
        self.queued_duration = self.estimate  # per waiting job: its predicted run if started now
        if self.models is not None:
            self.estimate_work = [
                model.checkpoint.total_work(e) for model, e in zip(self.models, self.estimate)
            ]
            self.queued_duration = estimates = [  # type: ignore[assignment]
                model.setup + max(e, w)
                for model, e, w in zip(self.models, self.estimate_work, self.work)
            ]
        self.typed_durations = array("d", np.asarray(estimates, float).tobytes())  # EASY's, in C
        self._time_columns(jobs, workload.run if self.models is None else self.work)
        self.version, self.preemptions, self.resizes = [0] * jobs, [0] * jobs, [0] * jobs
        # periodic checkpoints kept (an exact count: jobs.Checkpoint.count), work lost, node-seconds
        # of setup spent by runs that were preempted
        self.checkpoints, self.lost, self.lost_setup = [0] * jobs, [0.0] * jobs, [0.0] * jobs
        self.pending_resize: dict[int, int] = {}
        # the waiting jobs, ascending (the queue's order): its first jobs are a slice, not a walk
        self.queue = SortedColumn("queue")
        self.waiting = WaitingJobs(self.queue)  # the same jobs, read as a mapping
        self.running, self._running_keys = {}, [None] * jobs  # the keys: per job, in `running`
        self.by_end = EndOrder()
        self.reservations: dict[int, Reservation] = {}
        self.now = workload.submit[0].item() if jobs else 0.0
        self.log: list | None = [] if log_events else None
        # (time, action, job or -1, reservation key or 0, node ids, reason): every node handed out
        # or taken back, for a third party to replay (ACTION_COLUMNS)
        self.actions: list | None = [] if log_actions else None
        self._lifecycle_used = job_models is not None
        self.changes = self.killed_at_walltime = self.requeues = 0
        self._completions = Completions()
        self._events: list[tuple[float, int, Callable]] = []
        self._sequence = counter()
        self._clock_started = False  # `at` posts no event before now once it has
        self._reservation_keys = counter()
        self._wakeups, self._wakeup_set = [], set()  # the wake-up times: a heap, and as a set
        # since the speed update: each job started, resized, stopped or ended, and its neighbours
        self._touched = TouchedJobs(jobs)
        self._sources, self._progress = list(sources), progress
        # the completion hook, None when it does nothing in this run (resolved in `run`)
        self._on_finish: Callable[[SchedulerView, int], None] | None = None
        # what every hook, event source and speed model receives: never the engine itself
        self.view = SchedulerView(self)

    # --- actions ----------------------------------------------------------------------------------
    def _act(self, action: str, job: int, key: int, nodes: np.ndarray, reason: str) -> None:
        assert self.actions is not None  # called only with an action log
        self.actions.append((self.now, action, job, key, nodes.tolist(), reason))

    def resize(self, job: int, nodes: int, release=None, reason: str = "") -> bool:
        """Give running malleable `job` `nodes` nodes: at once, or at its next scheduling point (001
        §5).

        False if it should grow and the idle nodes are too few now. release: node ids of the job to
        give up when it shrinks (e.g. a failed node), applied at once; by default it gives up its
        highest nodes.
        """
        model = self.model(job)
        if self.state[job] != RUNNING:
            raise ActionError(
                f"{self._name(job)} cannot be resized: it is {STATES[self.state[job]]}"
            )
        if model.kind != JobKind.MALLEABLE:
            raise ActionError(
                f"{self._name(job)} is {model.kind}: only malleable jobs can be resized"
            )
        low, high = model.bounds(self.requested_nodes(job))
        if not low <= nodes <= high:
            raise ActionError(f"{self._name(job)} can run on {low}..{high} nodes, not {nodes}")
        needs = self.allocator.needs
        if needs is not None and nodes < needs.units[job]:
            raise ActionError(
                f"{self._name(job)} needs {needs.units[job]} nodes for its memory and GPUs, not "
                f"{nodes}"
            )
        if self._held_by(job).cores != self.platform.cores_per_node:
            raise ActionError(
                f"{self._name(job)} shares its nodes: only jobs on whole nodes can be resized"
            )
        if release is not None:
            release = np.asarray(release, dtype=np.int64)
            current = self._held_by(job).nodes
            if (
                np.unique(release).size != release.size
                or not np.isin(release, current).all()
                or current.size - release.size != nodes
            ):
                raise ActionError(
                    f"{self._name(job)} can give up only {current.size - nodes} of its own nodes, "
                    f"not {release.tolist()[:8]}"
                )
            self.pending_resize.pop(job, None)
            return self._apply_resize(job, nodes, release, reason)
        if model.scheduling_point is not None:
            self.pending_resize[job] = nodes
            self._post_scheduling_point(job)
            return True
        return self._apply_resize(job, nodes, reason=reason)

    def preempt(self, job: int, reason: str = "") -> None:
        """Stop running `job` and return it to the queue at its submit position (004 §III-B, PAA).

        The work since its last checkpoint is lost unless its model checkpoints on warning; the
        setup is paid again at the restart.
        """
        if self.state[job] != RUNNING:
            raise ActionError(
                f"{self._name(job)} cannot be preempted: it is {STATES[self.state[job]]}"
            )
        self._lifecycle_used = True
        self._advance(job)
        model = self.model(job)
        done = self.work[job] - self.remaining[job]
        checkpoint = model.checkpoint
        if checkpoint.on_warning:
            kept = max(done, 0.0)
        else:
            # an integer count: a resumed job rebuilds `done` just below its last checkpoint in
            # floating point, and must not lose it (004 §III-A: resume from the latest checkpoint)
            count = max(self.checkpoints[job], checkpoint.count(done))
            self.checkpoints[job] = count
            kept = checkpoint.work_of(count)
        self.lost[job] += max(done - kept, 0.0)
        self.remaining[job] = self.work[job] - kept
        # 004 §IV-D: the setup this run actually spent is wasted (all of it only once it has passed)
        spent = min(max(self.now - self.started[job], 0.0), model.setup)
        self.lost_setup[job] += spent * self._held_by(job).nodes.size
        self.preemptions[job] += 1
        self.pending_resize.pop(job, None)
        self._stop(job, "preempt", reason)
        self.state[job] = WAITING
        self._queue(job)
        if self.models is not None:
            self.queued_duration[job] = self.typed_durations[job] = self.predicted_duration(job)
        insert_sorted(self.queue, job)  # back to its submit position (workload order)
        on_preempt = getattr(self.scheduler, "on_preempt", None)
        if on_preempt is not None:
            on_preempt(self.view, job)

    def kill(self, job: int, reason: str = "") -> None:
        """Remove a waiting or running job for good; it ends now with the work it has not done."""
        state = self.state[job]
        if state not in (WAITING, RUNNING):
            raise ActionError(f"{self._name(job)} cannot be killed: it is {STATES[state]}")
        self._lifecycle_used = True
        if state == RUNNING:
            self._advance(job)
            self._stop(job, "kill", reason)
            if self._on_finish is not None:
                self._on_finish(self.view, job)
        else:
            self.changes += 1
            remove_sorted(self.queue, job)
            self._unqueue(job)
            if self.actions is not None:
                self._act("kill", job, 0, _EMPTY_NODES, reason)
        self.state[job] = KILLED
        self.end[job] = self.now

    def reserve(self, nodes, reason: str = "") -> Reservation:
        """Hold idle nodes (a count: the allocator's lowest idle nodes; or node ids) for a future
        job."""
        if isinstance(nodes, (int, np.integer)):
            chosen = self.allocator.idle_nodes(int(nodes))
            if nodes > chosen.size:
                raise ActionError(f"cannot reserve {nodes} nodes: {chosen.size} are idle")
        else:
            chosen = self._idle_nodes(np.asarray(nodes, dtype=np.int64), "reservation")
        key = -2 - next(self._reservation_keys)  # occupant ids below EMPTY (-1) mark reservations
        reservation = Reservation(key, chosen)
        self.allocator.commit(key, Allocation(chosen, self.platform.cores_per_node))
        self.changes += 1
        self.reservations[key] = reservation
        self._lifecycle_used = True
        if self.actions is not None:
            self._act("reserve", -1, key, chosen, reason)
        return reservation

    def release(self, reservation: Reservation, reason: str = "") -> None:
        """Give a reservation's nodes back."""
        if self.reservations.pop(reservation.key, None) is None:
            raise ActionError(f"reservation of nodes {reservation.nodes.tolist()[:8]} is not held")
        allocation = Allocation(reservation.nodes, self.platform.cores_per_node)
        self.allocator.release(reservation.key, allocation)
        self.changes += 1
        if self.actions is not None:
            self._act("release", -1, reservation.key, reservation.nodes, reason)

    def revoke(self, node: int, reason: str = "") -> Reservation | None:
        """Take `node` out of the reservation that holds it (e.g. the node failed): the reservation
        is released, its other nodes are reserved again under a new key, and the scheduler hears of
        it through ``on_revoke(engine, old, rest)``. Returns the rest (None if `node` was its only
        node)."""
        old = self.reservation_of(node)
        if old is None:
            raise ActionError(f"node {node} is not reserved")
        self.release(old, reason)
        nodes = old.nodes[old.nodes != node]
        rest = self.reserve(nodes, reason) if nodes.size else None
        on_revoke = getattr(self.scheduler, "on_revoke", None)
        if on_revoke is not None:
            on_revoke(self.view, old, rest)
        return rest

    def hint(self, job: int, placement: str | None) -> None:
        """Tell the allocator how to place waiting `job` (e.g. "compact"); it counts in backfilling
        too: with a units table, the job's entry becomes the allocator's units for the hint."""
        if self.placement[job] == placement:
            return
        self.placement[job] = placement
        self.changes += 1
        if self.units_table is not None:
            queued = self.state[job] == WAITING
            if queued:
                self._unqueue(job)
            self.units_table[job] = self.unit_counts[job] = self.allocator.units(self, job)
            if queued:
                self._queue(job)

    def note(self, action: str, job: int, reason: str = "") -> None:
        """Write a decision that changes no state (e.g. a malleable job warned before it is shrunk
        or preempted) to the action log, if there is one; the job's current nodes are listed."""
        if self.actions is not None:
            allocation = self.allocation[job]
            nodes = _EMPTY_NODES if allocation is None else allocation.nodes
            self._act(action, job, 0, nodes, reason)

    def request_wakeup(self, when: float) -> None:
        """Run one more scheduling pass at `when` (e.g. a reservation time)."""
        if when > self.now and when not in self._wakeup_set:
            self._wakeup_set.add(when)
            heapq.heappush(self._wakeups, when)

    def at(self, when: float, callback: Callable[[SchedulerView], None]) -> None:
        """Call `callback(view)` at `when`, before that timestamp's scheduling pass (event
        sources). Posted before the run (`attach`), an event may precede the first arrival: the
        clock starts at the earliest event; once it runs, a past `when` means now."""
        when = max(when, self.now) if self._clock_started else when
        heapq.heappush(self._events, (when, next(self._sequence), callback))

    def _queue(self, job: int) -> None:
        """`job` is queued again (preempted, hinted): counted; its units join `waiting_units`."""
        self.requeues += 1
        if self.waiting_units is not None:  # (with the units table only)
            insert_sorted(self.waiting_units, self.units_table[job])

    def _unqueue(self, job: int) -> None:
        """`job` leaves the queue: its units leave `waiting_units`."""
        if self.waiting_units is not None:
            remove_sorted(self.waiting_units, self.units_table[job])

    # --- progress bookkeeping ---------------------------------------------------------------------
    def predicted_duration(self, job: int) -> float:
        """How long waiting `job` would be predicted to run if started now on its requested nodes:
        its setup plus its predicted remaining work (what its ``predicted_end`` will be, less
        ``now``)."""
        if self.models is None:
            return self.estimate[job]
        return self.models[job].setup + self._predicted_work(job) / self.speed[job]

    def _apply_resize(
        self, job: int, nodes: int, release: np.ndarray | None = None, reason: str = ""
    ) -> bool:
        current = self._held_by(job)
        before = self.neighbours(job)  # on the nodes it may leave
        allocation: Allocation | None
        if release is None:
            allocation = self.allocator.resize(self, job, current, nodes)
        else:  # shrink off the given nodes
            self.allocator.release(job, Allocation(release, current.cores))
            allocation = Allocation(current.nodes[~np.isin(current.nodes, release)], current.cores)
        if allocation is None:
            return False
        self._lifecycle_used = True
        self.resizes[job] += 1
        if self.speed_model is not None:
            for touched in (job, *before, *self.neighbours(job)):
                self._touched.add(touched)
        self.allocation[job] = allocation
        self.held[job] = self.allocator.units_of(allocation)
        model = self.model(job)
        self._advance(job)
        self.updated[job] = max(self.updated[job], self.now) + model.reconfiguration
        self._set_rate(job, self.speed[job] * model.rate(nodes, self.requested_nodes(job)))
        if self.log is not None:
            self.log.append((self.now, "resize", job, nodes))
        if self.actions is not None:
            self._act("resize", job, 0, allocation.nodes, reason)
        return True

    def _post_scheduling_point(self, job: int) -> None:
        """An event when `job` reaches its next scheduling point (every `scheduling_point` of
        work)."""
        interval = self.model(job).scheduling_point
        assert interval is not None  # posted only for jobs with scheduling points
        self._advance(job)
        done = self.work[job] - self.remaining[job]
        point = (math.floor(done / interval + WORK_TOLERANCE) + 1) * interval
        if point >= self.work[job]:
            return  # no scheduling point before the end
        when = self.updated[job] + (point - done) / self.rate[job]
        version = self.version[job]

        def reached(view: SchedulerView, job: int = job, version: int = version) -> None:
            if (
                self.version[job] == version
                and self.state[job] == RUNNING
                and job in self.pending_resize
            ):
                if self._apply_resize(job, self.pending_resize[job], reason="scheduling-point"):
                    del self.pending_resize[job]
                else:
                    self._post_scheduling_point(job)

        self.at(when, reached)

    def _post_walltime(self, job: int, end: float) -> None:
        """Kill `job` at its start plus its requested time if this run has not ended by then (as
        Slurm's time limit; a completion at that time comes first). `end`: its end at its speed."""
        when = self.now + self.estimate[job]
        if self.speed_model is None and end <= when:
            return
        version = self.version[job]

        def reached(view: SchedulerView, job: int = job, version: int = version) -> None:
            if self.version[job] == version and self.state[job] == RUNNING:
                self.kill(job, reason="walltime")
                self.killed_at_walltime += 1

        self.at(when, reached)

    def _stop(self, job: int, event: str, reason: str = "") -> None:
        """Take running `job` off its nodes (preempt, kill)."""
        self.changes += 1
        del self.running[job]
        self.by_end.remove(self.predicted_end[job], job)
        self.version[job] += 1  # its completion event is stale now
        allocation = self._held_by(job)
        if self.speed_model is not None:  # the job itself: a speed update follows every change
            append_neighbourhood(self._touched, job, self.allocator.state)
        self.allocator.release(job, allocation)
        if self.log is not None:
            self.log.append((self.now, event, job, 0))
        if self.actions is not None:
            self._act(event, job, 0, allocation.nodes, reason)

    # --- checks -----------------------------------------------------------------------------------
    def _held_by(self, job: int) -> Allocation:
        """The allocation of a job that holds nodes (running, or stopped just now)."""
        allocation = self.allocation[job]
        if allocation is None:
            raise ActionError(f"{self._name(job)} holds no nodes")
        return allocation

    def _name(self, job: int) -> str:
        return f"job {self.workload.job_id[job]}"

    def model(self, job: int) -> JobModel:
        """The job's model (plain rigid when the run has no job models)."""
        return RIGID if self.models is None else self.models[job]

    def work_done(self, job: int) -> float:
        """Work (compact seconds, checkpoint writes included) the job has done by `now`;
        read-only."""
        remaining = self.remaining[job]
        if self.state[job] == RUNNING:
            remaining -= max(0.0, self.now - self.updated[job]) * self.rate[job]
        return self.work[job] - remaining

    def checkpointed_work(self, job: int) -> float:
        """Work the job would keep if it were preempted now (its completed checkpoints, exact
        count)."""
        checkpoint = self.model(job).checkpoint
        done = self.work_done(job)
        if checkpoint.on_warning:
            return max(done, 0.0)
        return checkpoint.work_of(max(self.checkpoints[job], checkpoint.count(done)))

    def idle_nodes(self, limit: int | None = None) -> np.ndarray:
        """Ids of the nodes no job or reservation holds, ascending (the lowest `limit` of them)."""
        return self.allocator.idle_nodes(limit)

    def free_nodes(self) -> int:
        """How many allocator units (whole nodes on the compact allocator) are free now."""
        return self.allocator.free_units()

    def is_idle(self, nodes: np.ndarray) -> np.ndarray:
        """Per node id: True if no job or reservation holds it."""
        return self.allocator.state.used[nodes] == 0

    def node_occupants(self, nodes: np.ndarray | None = None) -> np.ndarray:
        """A copy of who holds each slot of `nodes` (every node if None): rows of job indices, EMPTY
        (-1) for an idle slot, or reservation keys (below -1); one column per slot of a node."""
        occupants = self.allocator.state.occupants
        return occupants.copy() if nodes is None else occupants[nodes]

    def neighbours(self, job: int) -> list[int]:
        """The running jobs that share at least one node with `job` (in no particular order)."""
        return self.allocator.state.neighbours(job)

    def occupant(self, node: int) -> int:
        """Who holds `node`: a job index (>= 0), EMPTY (-1) if idle, or a reservation key (below
        -1)."""
        return int(self.allocator.state.occupants[node, 0])

    def is_reserved(self, node: int) -> bool:
        """True if a reservation (`reserve`) holds `node`."""
        return self.occupant(node) < -1

    def reservation_of(self, node: int) -> Reservation | None:
        """The reservation holding `node`, or None."""
        return self.reservations.get(self.occupant(node))

    def requested_nodes(self, job: int) -> int:
        """Whole nodes the job asked for: ceil(cores / cores per node), or as many as its memory and
        GPUs need on the node type that needs the fewest (`cosched.simulator.resources`)."""
        needs = self.allocator.needs
        if needs is not None:
            return int(needs.units[job])
        return -(-self.cores[job] // self.platform.cores_per_node)

    def _idle_nodes(self, nodes: np.ndarray, what: str) -> np.ndarray:
        if nodes.size == 0 or nodes.min() < 0 or nodes.max() >= self.platform.nodes:
            raise ActionError(f"{what}: node ids must be in 0..{self.platform.nodes - 1}")
        busy = nodes[self.allocator.state.used[nodes] > 0]
        ascending = nodes.size < 2 or bool((nodes[1:] > nodes[:-1]).all())  # sorted: no repeats
        if busy.size or (not ascending and np.unique(nodes).size != nodes.size):
            raise ActionError(f"{what}: nodes {busy.tolist()[:8] or 'repeated'} are not free")
        return nodes

    def _commit_nodes(self, job: int, nodes) -> Allocation | None:
        """The job's allocation on the `nodes` a scheduler chose, committed to the allocator; None
        if a node count is more than the idle nodes."""
        if isinstance(nodes, Reservation):
            self.release(nodes)
            nodes = nodes.nodes
        if isinstance(nodes, Allocation):
            self._idle_nodes(nodes.nodes, self._name(job))
            return self._admitted(job, nodes)
        if isinstance(nodes, (int, np.integer)):  # a count: the lowest idle nodes
            size, chosen = int(nodes), self.allocator.idle_nodes(int(nodes))
        else:
            chosen = self._idle_nodes(np.asarray(nodes, dtype=np.int64), self._name(job))
            size = chosen.size
        low, high = self.model(job).bounds(self.requested_nodes(job))
        if not low <= size <= high:
            raise ActionError(f"{self._name(job)} can start on {low}..{high} nodes, not {size}")
        if size > chosen.size:
            return None
        return self._admitted(job, Allocation(chosen, self.platform.cores_per_node))

    def _admitted(self, job: int, allocation: Allocation) -> Allocation:
        """The allocation, committed, if its nodes hold the job's memory and GPUs on one node type
        that can run it (`Allocator.admits`); else ActionError: no start over-commits a node."""
        if not self.allocator.admits(job, allocation.nodes):
            raise ActionError(
                f"{self._name(job)} does not fit on nodes {allocation.node_ids[:8]}: its cores, "
                "memory or GPUs need more nodes, or nodes of another type"
            )
        self.allocator.commit(job, allocation)
        return allocation

    # --- the loop ---------------------------------------------------------------------------------
    def run(self) -> SimulationResult:
        """Simulate until every job has finished or been killed."""
        clock = time.perf_counter()
        scheduler, view = self.scheduler, self.view
        attach = getattr(scheduler, "attach", None)
        if attach is not None:
            attach(view)
        for source in self._sources:
            source.attach(view)
        self._on_finish = scheduler_hook(scheduler, "on_finish")
        self.allocator.direct_entry(self)  # C calls at every start and end, where it allows them
        bar = None
        if self._progress:
            from cosched.progress import progress_bar

            bar = progress_bar(
                total=len(self.run_time),
                unit="job",
                desc=f"simulate {getattr(scheduler, 'name', '')}".strip(),
            )
        try:
            with rare_collections():  # the loop's garbage is freed by reference counting
                self._clock_started = True
                self._loop(bar)
                nodes = node_arrays(self.allocation)
        finally:  # also when a source refuses the run (failures): the error line comes after it
            if bar is not None:
                bar.close()
        return SimulationResult(
            self.workload,
            self.platform,
            getattr(scheduler, "name", type(scheduler).__name__),
            np.frombuffer(self.first_start, np.float64),  # the columns' memory, not a copy
            np.frombuffer(self.end, np.float64),
            nodes,
            time.perf_counter() - clock,
            co_scheduled=self.speed_model is not None,
            log=self.log,
            actions=self.actions,
            options={
                "use_run_times": self.use_run_times,
                "pass_per_event": self.pass_per_event,
                "kill_at_walltime": self.kill_at_walltime,
                "killed_at_walltime": self.killed_at_walltime,
            },
            lifecycle=self._lifecycle(),
            speed_model=self.speed_model,
        )

    @cython.locals(self=_LoopState, jobs=cython.Py_ssize_t, arrived=cython.Py_ssize_t)
    @cython.locals(done=cython.Py_ssize_t, shown=cython.Py_ssize_t, step=cython.Py_ssize_t)
    @cython.locals(now=cython.double, first=cython.double, timed=cython.bint, per_event=cython.bint)
    @cython.locals(submit=list, completions=Completions, wakeups=list, events=list, version=list)
    @cython.locals(job=cython.Py_ssize_t, schedule=SchedulingPass, touched=TouchedJobs)
    def _loop(self, bar) -> None:  # noqa: C901  (the one hot loop: no call per event it can avoid)
        """The event loop of the module docstring, for any scheduler, allocator and job model."""
        jobs = len(self.run_time)
        submit, completions = self.submit, self._completions
        wakeups, events = self._wakeups, self._events
        version, touched, view = self.version, self._touched, self.view
        schedule, queue = scheduling_pass_of(self.scheduler, view), self.queue
        step, done, shown = max(1, jobs // PROGRESS_STEPS), 0, 0
        arrived = self.arrived = 0
        per_event, cores = self.pass_per_event, view.platform.cores_per_node  # once per run
        listed = getattr(self.speed_model, "jobs_as_list", False)  # `SpeedModel`, once per run
        while arrived < jobs or completions or queue or events:
            now = submit[arrived] if arrived < jobs else INF  # the earliest event of the four kinds
            first = completions.earliest()
            if first < now:
                now = first
            if wakeups:
                first = wakeups[0]
                if first < now:
                    now = first
            if events:
                first = events[0][0]
                if first < now:
                    now = first
            if now == INF:
                raise _stuck(queue)
            self.now = now
            timed = True  # one pass after this timestamp's events (per event: after timed ones)
            if per_event:
                timed = bool(events and events[0][0] <= now) or bool(wakeups and wakeups[0] <= now)
                done += self._passes_per_event(now, schedule)
                arrived = self.arrived
            while (job := completions.pop_due(now, version)) >= 0:
                self._finish(job)
                done += 1
            while arrived < jobs and cython.cast(cython.double, submit[arrived]) <= now:
                self._arrive(arrived, schedule)
                arrived += 1
            while events and events[0][0] <= now:
                self.changes += 1
                heapq.heappop(events)[2](view)
            while wakeups and wakeups[0] <= now:
                self.changes += 1
                self._wakeup_set.discard(heapq.heappop(wakeups))
            if timed:
                schedule.schedule(view)
            if touched.count:
                self._update_speeds(listed, cores)
            if bar is not None and done - shown >= step:
                bar.update(done - shown)
                shown = done
        if bar is not None:
            bar.update(done - shown)

    @cython.locals(self=_LoopState, schedule=SchedulingPass)
    def _passes_per_event(self, now: float, schedule: SchedulingPass) -> int:
        """The completions and arrivals at `now`, each followed by a pass of `schedule` (CQSim's
        loop): completions in start order, then arrivals in workload order. Returns the
        completions."""
        completions, version, started = self._completions, self.version, self.started
        due = []
        while (job := completions.pop_due(now, version)) >= 0:
            due.append(job)
        due.sort(key=started.__getitem__)  # stable: equal starts keep the job order
        for job in due:
            self._finish(job)
            schedule.schedule(self.view)
        submit = self.submit
        while self.arrived < len(submit) and submit[self.arrived] <= now:
            self._arrive(self.arrived, schedule)
            self.arrived += 1
            schedule.schedule(self.view)
        return len(due)

    def _lifecycle(self) -> dict | None:
        if not self._lifecycle_used:
            return None
        return {
            "state": [STATES[s] for s in self.state],
            "preemptions": self.preemptions,
            "resizes": self.resizes,
            "lost_work": self.lost,
            "work": self.work,
        }


_EMPTY_NODES = np.zeros(0, dtype=np.int64)


def _stuck(queue: SortedColumn) -> RuntimeError:
    return RuntimeError(
        f"{len(queue)} waiting jobs can never start (first: job index {queue[0]}); the scheduler "
        "or allocator is inconsistent"
    )


class _Function:
    """A function `schedule(view)` as a scheduler without hooks (whole nodes, lowest ids first)."""

    def __init__(self, function: Callable):
        self.schedule = function
        self.name = getattr(function, "__name__", "function")


def __getattr__(name: str) -> object:
    """`simulate` lives in `cosched.simulator.simulation`, above the schedulers; the old spelling
    ``cosched.simulator.engine.simulate`` warns (removed in 0.4.0)."""
    if name == "simulate":
        warn_renamed("cosched.simulator.engine.simulate", "cosched.simulator.simulation.simulate")
        return importlib.import_module("cosched.simulator.simulation").simulate
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
