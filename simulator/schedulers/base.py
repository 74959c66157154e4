"""What a scheduler is: a priority over the queue + a backfilling policy + a depth (thesis ch. 5,
000 §3.6).

Interface (what the engine calls; see `cosched.simulator.engine` for the state a scheduler reads and
the actions it may take):

- ``make_allocator(platform, placement)`` and ``make_speed_model(workload, heatmap,
  spread_speedup)``: what the scheduler needs, asked once by ``simulate``: compact whole nodes and
  no speed model by default; co-schedulers ask for the co-location allocator and the heatmap speed
  model (000 §3.5).
- ``attach(engine)``: once, before the first event.
- ``on_arrival`` / ``on_finish`` / ``on_preempt(engine, job)``: optional hooks; ``listens(hook)``
  tells the engine, once after ``attach``, which of them do something in this run (by default the
  ones a subclass overrides), so a hook that does nothing costs no call per job.
- ``schedule(engine)``: once per event timestamp, after completions, arrivals and timed events; acts
  through ``engine.start(job)`` (the allocator picks the nodes), ``resize``, ``preempt``, ``kill``,
  ``reserve``, ``hint`` and ``request_wakeup(time)``.
- ``pass_over(view)``: optional, asked once after ``attach``: a
  `cosched.simulator.view.SchedulingPass` the engine calls instead of ``schedule`` (compiled, at C
  level: the queue scheduler's pass), or None.

``QueueScheduler`` is the classic family and the co-schedulers' base. Its one ordering knob is
``priority(engine, waiting)``: a vectorised key over the waiting jobs (an int array in queue order),
the queue sorted by descending priority, ties in queue order (as ELiSE sorts, 000 Algorithm 2); None
keeps arrival order (priority is not asked in a pass where no waiting job fits in the free units,
as ``engine.waiting_units`` shows: such a pass starts nothing; a priority that hints placements, so
that a job's units may change, sets ``hints_placements`` and is asked in every pass). Nor is a pass
repeated when the previous one started nothing and nothing has changed since (``engine.changes``,
and no arrival a pass would look at); a priority that reads no clock, only the engine's state, sets
``priority_reads_time = False`` to be skipped the same way. A priority that gives each job a key
that never changes (it reads only per-job constants: cores, estimates) sets ``fixed_priority``: it
is asked once, over every job, at ``attach``, and the waiting jobs are kept in that order as they
arrive (a binary insertion), so a pass reads the queue's head as cheaply as in arrival order. Else
the queue is sorted once per pass. Jobs start in that order until one does not fit
(`cosched.simulator.schedulers.backfilling.start_in_order`, the one in-order step of every queue
scheduler: per partition, and in the co-schedulers' passes too), and ``backfill`` picks the policy
behind it: "none", "easy" (only the head holds a reservation) or
"conservative" (every job within ``depth`` holds one and none is delayed). Backfilling reasons in
allocator units over predicted end times (``engine.predicted_end``: the user estimate by default,
the run time with ``use_run_times``, rescaled by the job's progress rate).

The pass runs in `_RunPass`, one per run, built at the run's first pass: compiled, it reads the
settings above once (a scheduler changes them before the run) and calls the base's hooks at C level;
an override of `nothing_fits`, `decided`, `decides_the_same` or `scheduling_pass` is called instead.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from functools import partial
from itertools import islice
from typing import TYPE_CHECKING, Any

try:  # Cython's pure-Python mode: the types below compile to C, and do nothing in plain Python
    import cython

    if not cython.compiled:  # plain Python: the light stand-in, not Cython's slower shadow
        raise ModuleNotFoundError
except ModuleNotFoundError:
    from cosched import _pure_cython as cython

import numpy as np

from cosched.errors import InputError
from cosched.simulator.allocators import Allocator, CompactAllocator
from cosched.simulator.bisection import int_position
from cosched.simulator.jobs import JobState
from cosched.simulator.schedulers.backfilling import (
    SHADOW_EXTRA,
    ConservativeBackfill,
    EasyBackfill,
    _QueueHeads,
    queue_heads,
    queue_slice,
    start_each,
    start_in_order,
)
from cosched.simulator.schedulers.co_ordering import FillerOrder, queue_order
from cosched.simulator.schedulers.conservative import conservative_pass
from cosched.simulator.view import (
    Clock,
    SchedulingPass,
    SortedColumn,
    Starter,
    column_items,
    engine_clock,
    remove_sorted,
)

if TYPE_CHECKING:
    from cosched.simulator.engine import Reservation
    from cosched.simulator.platform import Platform

    # imported on use, as a run without partitions or a priority needs neither
    from cosched.simulator.schedulers.multifactor import MultifactorPriority
    from cosched.simulator.schedulers.partitioned import PartitionedQueues, PooledConservative
    from cosched.simulator.view import SchedulerView
    from cosched.simulator.workload import Workload

__all__ = [
    "Scheduler",
    "QueueScheduler",
    "BACKFILL_POLICIES",
    "DEFAULT_DEPTH",
    "QUEUED_DURATIONS",
]

DEFAULT_DEPTH = 100  # jobs examined behind the head per pass, as Slurm's default (003 §2.2.2)
BACKFILL_POLICIES = ("none", "easy", "conservative")
# what EASY takes as a waiting job's duration: the engine's prediction (the estimate), or the run
# time (CQSim's EASY: running jobs end at their estimate, waiting ones last their run time)
QUEUED_DURATIONS = ("estimate", "run")
_QUEUE_HOOKS = ("on_arrival", "on_finish", "on_preempt")
_KEPT_ORDER_HOOKS = ("on_arrival", "on_preempt")  # what a kept priority order listens to
WAITING = cython.declare(cython.Py_ssize_t, int(JobState.WAITING))


@cython.cfunc
@cython.locals(
    waiting=cython.Py_ssize_t,
    idle_waiting=cython.Py_ssize_t,
    arrival_order=cython.bint,
    reads_no_clock=cython.bint,
    looked_at=cython.Py_ssize_t,
)
def _decides_the_same(
    waiting: int, idle_waiting: int, arrival_order: bool, reads_no_clock: bool, looked_at: int
) -> bool:
    """`QueueScheduler.decides_the_same` over the settings it reads: the queue's order is the
    arrival order, or its priority reads no clock; a pass in arrival order looks at `looked_at`
    jobs."""
    if waiting == idle_waiting:
        return arrival_order or reads_no_clock
    return arrival_order and idle_waiting >= looked_at


@cython.final  # its methods are called directly, not through a table
@cython.cclass
class _KeptOrder:
    """The waiting jobs in a fixed priority's order (module docstring): their ranks in it, a
    `SortedColumn` (a job that left the queue is dropped when a read meets it), the job of each
    rank and the rank of each job."""

    _ranks = cython.declare(SortedColumn)
    _job_at = cython.declare(list)
    _rank_of = cython.declare(list)
    _name = cython.declare(str)  # the scheduler's, for the error of a missing job

    def __init__(self, job_at: list[int], rank_of: list[int], waiting: Iterable[int], name: str):
        self._job_at, self._rank_of, self._name = job_at, rank_of, name
        self._ranks = SortedColumn("kept order")
        self._ranks._items = sorted(rank_of[job] for job in waiting)

    @cython.ccall
    @cython.locals(items=list, rank=cython.Py_ssize_t, at=cython.Py_ssize_t)
    @cython.locals(there=cython.Py_ssize_t)
    def enqueue(self, job: int) -> None:
        """`job` (re)enters the queue: its rank joins the order, unless it is still there (a job
        that started and was preempted before a read met it)."""
        items, rank = self._ranks._items, self._rank_of[job]
        at = int_position(items, rank, self._ranks._head, len(items), False)
        there = items[at] if at < len(items) else -1  # (compiled: read as a C integer)
        if there != rank:
            items.insert(at, rank)

    @cython.ccall
    @cython.boundscheck(False)  # positions within the order's values
    @cython.wraparound(False)
    @cython.locals(waiting=cython.Py_ssize_t, start=cython.Py_ssize_t, stop=cython.Py_ssize_t)
    @cython.locals(ranks=SortedColumn, position=cython.Py_ssize_t, rank=cython.Py_ssize_t)
    def jobs(self, state: Sequence[int], waiting: int, start: int, stop: int) -> list[int]:
        """The `start`-th to `stop`-th (exclusive) of the `waiting` jobs in the order."""
        ranks, jobs = self._ranks, []
        stop = min(stop, waiting)
        self._drop_left(state, waiting, stop)
        for position in range(ranks._head + start, ranks._head + stop):
            rank = ranks._items[position]
            jobs.append(self._job_at[rank])
        return jobs

    @cython.ccall
    @cython.boundscheck(False)
    @cython.wraparound(False)
    @cython.locals(waiting=cython.Py_ssize_t, ranks=SortedColumn, rank=cython.Py_ssize_t)
    def head(self, state: Sequence[int], waiting: int) -> int:
        """The first of the `waiting` jobs (at least one) in the order."""
        ranks = self._ranks
        self._drop_left(state, waiting, 1)
        rank = ranks._items[ranks._head]
        return self._job_at[rank]

    @cython.ccall
    @cython.locals(waiting=cython.Py_ssize_t, ranks=SortedColumn)
    @cython.returns(cython.Py_ssize_t)
    def left(self, waiting: int) -> int:
        """How many of the order's jobs have left the queue, of the `waiting` jobs."""
        ranks = self._ranks
        return len(ranks._items) - ranks._head - waiting

    @cython.cfunc
    @cython.boundscheck(False)
    @cython.wraparound(False)
    @cython.locals(waiting=cython.Py_ssize_t, wanted=cython.Py_ssize_t, ranks=SortedColumn)
    @cython.locals(left=cython.Py_ssize_t, kept=cython.Py_ssize_t, rank=cython.Py_ssize_t)
    @cython.locals(job=cython.Py_ssize_t, status=cython.Py_ssize_t)
    def _drop_left(self, state: Sequence[int], waiting: int, wanted: int) -> None:
        """Drop the jobs that left the queue (started, killed) from the order's front, until its
        first `wanted` jobs are waiting ones: every waiting job is in it, the rest have left."""
        ranks, left = self._ranks, self.left(waiting)
        if left < 0:
            raise InputError(
                f"{-left} waiting jobs are missing from the kept order of scheduler "
                f"{self._name!r}: an override of on_arrival or on_preempt must call the base one "
                "(QueueScheduler.fixed_priority)",
                field="fixed_priority",
            )
        kept = 0  # the first `kept` ranks are waiting jobs: the next is read at ``_head + kept``
        while left > 0 and kept < wanted:
            rank = ranks._items[ranks._head + kept]
            job = self._job_at[rank]
            status = state[job]
            if status == WAITING:
                kept += 1
            else:
                remove_sorted(ranks, rank)
                left -= 1


@cython.cfunc
@cython.locals(kept=_KeptOrder)
def _joined(kept: _KeptOrder | None, conservative: Any, job: int) -> None:
    """`QueueScheduler.on_arrival`: a kept order ranks `job`, Conservative's profile notes that a
    job arrived (`ConservativeBackfill.arrived`)."""
    if kept is not None:
        kept.enqueue(job)
    if conservative is not None:
        conservative.arrived()


@cython.final  # its C methods are called directly, not through a table
@cython.cclass
class _RunPass(SchedulingPass):
    """The pass of a `QueueScheduler` over one run's view: `schedule`, `nothing_fits`, `decided`
    and `scheduling_pass` of the scheduler, with the scheduler's settings read once, at the run's
    first pass, into C fields (compiled: a pass makes no attribute lookup on the scheduler, whose
    subclasses may override any class attribute, so it cannot be an extension type itself).

    A hook a subclass overrides (`_PASS_HOOKS`) is called instead of the pass's own, through
    Python; the base's methods call the pass's, so ``super()`` reaches them. Unless a subclass
    overrides `schedule`, the engine calls the pass's at C level (`QueueScheduler.pass_over`)."""

    view = cython.declare(object, visibility="readonly")
    _clock = cython.declare(Clock)  # the engine's time and changes, None over another view
    _scheduler = cython.declare(object)
    _queue = cython.declare(object)  # the view's queue, and the iterator over its live head (or
    _heads = cython.declare(object)  # over the kept order's head, `_KeptHeads`)
    _column = cython.declare(SortedColumn)  # the queue if it is the engine's column, else None
    _waiting_units = cython.declare(SortedColumn)  # the engine's column (else None: no skip)
    _starter = cython.declare(Starter)  # the view's actions and table the in-order step reads
    _table = cython.declare(object)
    _partitioned = cython.declare(object)
    _conservative = cython.declare(object)
    _kept = cython.declare(_KeptOrder)  # a fixed priority's order, and the states it reads
    _ordering = cython.declare(FillerOrder)  # the scheduler's compiled order, read in C
    _state = cython.declare(object)
    _reservations = cython.declare(object)
    _easy = cython.declare(EasyBackfill)  # the run's EASY pass (built at the first one)
    _arrival_order = cython.declare(cython.bint)  # no priority: the live queue's head
    _backfills = cython.declare(cython.bint)  # EASY, depth > 0
    _may_skip = cython.declare(cython.bint)  # `nothing_fits` may skip the pass
    _reads_no_clock = cython.declare(cython.bint)
    _depth = cython.declare(cython.Py_ssize_t)
    _looked_at = cython.declare(cython.Py_ssize_t)
    _own_nothing_fits = cython.declare(cython.bint)  # the hooks are the base's
    _own_decided = cython.declare(cython.bint)
    _own_decides_the_same = cython.declare(cython.bint)
    _own_pass = cython.declare(cython.bint)
    _own_arrival = cython.declare(cython.bint)  # `on_arrival` is the base's: `_joined`, in C
    # the base's pass in arrival order, with no hints: it changes the state only by starting jobs
    _changes_by_starts = cython.declare(cython.bint)
    _idle = cython.declare(cython.bint)  # the last pass changed nothing: on this state and queue
    _idle_changes = cython.declare(cython.Py_ssize_t)
    _idle_waiting = cython.declare(cython.Py_ssize_t)

    def __init__(self, scheduler: QueueScheduler, view: SchedulerView) -> None:
        self.view, self._scheduler, self._clock = view, scheduler, engine_clock(view)
        self._queue, self._heads = view.queue, queue_heads(view.queue)
        self._column = view.queue if isinstance(view.queue, SortedColumn) else None
        units, table = view.waiting_units, view.units_table
        self._waiting_units = units if isinstance(units, SortedColumn) else None
        self._starter = Starter(view)  # starts in C on the engine's view
        # the engine's list under the read-only column: compiled, read in C
        self._table = column_items(table)
        self._partitioned, self._conservative = scheduler._partitioned, scheduler._conservative
        self._kept, self._reservations, self._easy = scheduler._kept, scheduler.reservations, None
        if self._kept is not None:  # the kept order's head, read as the live queue's would be
            self._heads = _KeptHeads(self)
        self._ordering = scheduler._ordering if _is_base_hook(scheduler, "order") else None
        self._state = column_items(view.state)  # as the table
        priority, depth = scheduler.priority, scheduler.depth
        self._arrival_order, self._depth = priority is None, depth
        self._backfills = scheduler.backfill == "easy" and depth > 0
        self._may_skip = self._reservations is None and not (
            scheduler.hints_placements and priority is not None
        )
        self._reads_no_clock = not scheduler.priority_reads_time or self._kept is not None
        self._looked_at = depth + 1 if self._backfills else 1
        own = [_is_base_hook(scheduler, hook) for hook in _PASS_HOOKS]
        self._own_nothing_fits, self._own_decided, self._own_decides_the_same = own[:3]
        self._own_pass, self._own_arrival = own[3], _is_base_hook(scheduler, "on_arrival")
        self._changes_by_starts = (
            self._own_pass and self._arrival_order and not scheduler.hints_placements
        )
        self._idle = False

    @cython.ccall
    def arrived(self, view: SchedulerView, job: int) -> None:
        """The scheduler's `on_arrival`: the base's in C, an override through Python."""
        if self._own_arrival:
            _joined(self._kept, self._conservative, job)
        else:
            SchedulingPass.arrived(self, view, job)

    @cython.ccall
    @cython.locals(waiting=cython.Py_ssize_t, changes=cython.Py_ssize_t, skip=cython.bint)
    def schedule(self, view: SchedulerView) -> None:
        """`QueueScheduler.schedule`: start in priority order until a job does not fit, then
        backfill behind it (000 Algorithm 2)."""
        scheduler = self._scheduler
        waiting = self._queued()  # (the hooks asked before the pass only read the state)
        if not waiting:
            return
        if self._partitioned is not None:
            self._partitioned.schedule(view)
            return
        if self._conservative is not None:
            scheduler._conservative_pass(view, self._conservative)
            return
        skip = self._nothing_fits() if self._own_nothing_fits else scheduler.nothing_fits(view)
        # `decided` only after an idle pass (False otherwise): most passes follow a change
        if not skip and self._idle:
            skip = self.decided(view) if self._own_decided else scheduler.decided(view)
        if skip:
            return
        # a pass that changed nothing: the same state and queue would give the same decisions
        if self._changes_by_starts:  # it changed nothing if no job left the queue
            if self._idle and self._easy is not None and self._changes(view) == self._idle_changes:
                self._backfill_arrivals()
            else:
                self.scheduling_pass(view)
            self._idle_waiting = self._queued()
            self._idle = self._idle_waiting == waiting
            if self._idle:
                self._idle_changes = self._changes(view)
        else:
            changes = self._changes(view)
            if self._own_pass:
                self.scheduling_pass(view)
            else:
                scheduler.scheduling_pass(view)
            self._idle, self._idle_changes = self._changes(view) == changes, changes
            self._idle_waiting = self._queued()

    @cython.cfunc
    @cython.locals(column=SortedColumn)
    @cython.returns(cython.Py_ssize_t)
    @cython.exceptval(-1, check=True)
    def _queued(self) -> int:
        """``len(view.queue)``, read in C from the engine's column (no call to its ``__len__``)."""
        column = self._column
        if column is not None:
            return len(column._items) - column._head
        return len(self._queue)

    @cython.cfunc
    @cython.returns(cython.Py_ssize_t)
    @cython.exceptval(-1, check=True)
    def _changes(self, view: SchedulerView) -> int:
        """``view.changes``, read in C from the engine's clock when it is the engine's view."""
        return self._clock.changes if self._clock is not None else view.changes

    @cython.ccall
    def nothing_fits(self, view: SchedulerView) -> bool:
        """`QueueScheduler.nothing_fits`."""
        return self._nothing_fits()

    @cython.cfunc
    @cython.returns(cython.bint)
    @cython.exceptval(-1, check=True)
    def _nothing_fits(self) -> bool:
        """`nothing_fits`, which `schedule` calls in C."""
        return self._may_skip and self._none_fits(self._starter.units_free())

    @cython.cfunc
    @cython.boundscheck(False)  # the queue is not empty: its head is an item
    @cython.wraparound(False)
    @cython.locals(units=SortedColumn, free=cython.Py_ssize_t, smallest=cython.Py_ssize_t)
    @cython.returns(cython.bint)
    @cython.exceptval(-1, check=True)
    def _none_fits(self, free: int) -> bool:
        """True when no waiting job fits in `free` units (the smallest waiting job's, read in C;
        False without the engine's column of them). The queue is not empty."""
        units = self._waiting_units
        if units is None:
            return False
        smallest = units._items[units._head]
        return smallest > free

    @cython.ccall
    def decided(self, view: SchedulerView) -> bool:
        """`QueueScheduler.decided`."""
        if not self._idle or self._reservations is not None:
            return False
        if self._changes(view) != self._idle_changes:
            return False
        if self._own_decides_the_same:
            return _decides_the_same(
                self._queued(),
                self._idle_waiting,
                self._arrival_order,
                self._reads_no_clock,
                self._looked_at,
            )
        return self._scheduler.decides_the_same(self._queued(), self._idle_waiting)

    @cython.ccall
    @cython.locals(depth=cython.Py_ssize_t, easy=EasyBackfill, ordering=FillerOrder)
    def scheduling_pass(self, view: SchedulerView) -> None:
        """`QueueScheduler.scheduling_pass`."""
        scheduler, queue, kept = self._scheduler, self._queue, self._kept
        order: list[int] | None = None  # a sorted copy of the queue, when it is not read live
        if self._arrival_order or kept is not None:  # the live queue's or kept order's head
            jobs = self._heads  # one job at a time
        else:  # 000 Algorithm 2: one sorted copy of the queue per pass
            ordering = self._ordering
            order = ordering.order_of(view) if ordering is not None else scheduler.order(view)
            jobs = iter(order)
        head = start_each(jobs, self._starter, self._table)  # start_in_order
        if head is None or not self._backfills or self._backfills_nothing():
            return
        # the candidates behind the blocked head, a list in each order
        depth = self._depth
        candidates: list[int] | None = None  # None: the engine's queue, read in place
        if order is not None:
            candidates = list(islice(jobs, depth))
        elif kept is None:
            if self._column is None:
                candidates = queue_slice(queue, 1, depth + 1)
        else:
            candidates = self._kept.jobs(self._state, self._queued(), 1, depth + 1)
        easy = self._easy
        if easy is None:  # the run's first EASY pass
            easy = self._easy = EasyBackfill(
                view, self._reservations, scheduler.shadow_extra, scheduler._durations
            )
        if candidates is None:
            easy.run_queue(self._column, 1, depth + 1)
        else:
            easy.run(head, candidates)

    @cython.cfunc
    @cython.locals(free=cython.Py_ssize_t)
    @cython.returns(cython.bint)
    @cython.exceptval(-1, check=True)
    def _backfills_nothing(self) -> bool:
        """True when EASY could start nothing behind the head now (no free unit, or no waiting job
        fitting in them) and records no reservation."""
        free = self._starter.units_free()
        return (not free or self._none_fits(free)) and self._reservations is None

    @cython.cfunc
    @cython.locals(depth=cython.Py_ssize_t, first=cython.Py_ssize_t)
    def _backfill_arrivals(self) -> None:
        """`scheduling_pass` in arrival order when only jobs arrived since a pass that started
        nothing: its blocked head and the jobs it looked at would still not start (EASY's test only
        gets stricter with time), so EASY looks only at the arrivals within the depth."""
        if self._backfills_nothing():
            return
        depth = self._depth
        first = min(self._idle_waiting, depth + 1)
        if self._column is not None:
            self._easy.run_queue(self._column, first, depth + 1)
        else:
            self._easy.run(self._queue[0], queue_slice(self._queue, first, depth + 1))


@cython.cclass
class _KeptHeads(_QueueHeads):
    """The head of a run's kept order, again after each start (as `queue_heads`; `start_each`
    reads it in C)."""

    _run = cython.declare(_RunPass)

    def __init__(self, run: _RunPass) -> None:
        self._run = run  # (no live queue: `head` reads the kept order instead)

    @cython.cfunc
    @cython.locals(run=_RunPass, waiting=cython.Py_ssize_t)
    def head(self) -> int | None:
        """The kept order's head, None if no job waits."""
        run = self._run
        waiting = run._queued()
        return run._kept.head(run._state, waiting) if waiting else None


def _is_base_hook(scheduler: Scheduler, hook: str) -> bool:
    """True if `scheduler`'s hook `hook` is `QueueScheduler`'s own (not overridden by a subclass
    or on the object)."""
    return hook not in vars(scheduler) and getattr(type(scheduler), hook) is _BASE_HOOKS[hook]


def _fixed_column(column: np.ndarray, dtype: type) -> np.ndarray:
    """A workload's column as `dtype`, read-only (no copy when it has that type already)."""
    values = np.asarray(column, dtype=dtype).view()
    values.flags.writeable = False
    return values


class Scheduler:
    """Base class: override `schedule`; the hooks default to doing nothing."""

    name = "scheduler"
    co_located = False  # True: jobs share nodes and progress at the speed model's speeds

    def make_allocator(self, platform: Platform, placement: str | None = None) -> Allocator:
        """Whole nodes, lowest ids first (thesis §5.1); `placement` policies belong to
        co-location."""
        return CompactAllocator(platform)

    def make_speed_model(
        self, workload: Workload, heatmap: Any = None, spread_speedup: float | str | None = None
    ) -> Any:
        """No speed model: every running job progresses at its compact speed."""
        return None

    def attach(self, engine: SchedulerView) -> None:
        """Called once before the first event."""

    def listens(self, hook: str) -> bool:
        """False if the hook named `hook` does nothing in this run, so the engine need not call it
        (asked once, after `attach`): True for a hook the object or a subclass overrides."""
        return hook in vars(self) or getattr(type(self), hook) is not getattr(Scheduler, hook)

    def on_arrival(self, engine: SchedulerView, job: int) -> None:
        """Called at each arrival, before the scheduling pass."""

    def on_finish(self, engine: SchedulerView, job: int) -> None:
        """Called at each completion (and kill of a running job), before the scheduling pass."""

    def on_preempt(self, engine: SchedulerView, job: int) -> None:
        """Called when a running job is preempted back to the queue."""

    def on_revoke(
        self, engine: SchedulerView, reservation: Reservation, rest: Reservation | None
    ) -> None:
        """Called when a reservation loses a node (``engine.revoke``, e.g. a node failure); `rest`
        is the reservation of its other nodes (None if there are none)."""

    def schedule(self, engine: SchedulerView) -> None:
        """Start the jobs that should start now (default: in arrival order, no backfilling)."""
        start_in_order(engine, queue_heads(engine.queue))


class QueueScheduler(Scheduler):
    """Waiting queue sorted by descending `priority` (None = arrival order), then the `backfill`
    policy."""

    name = "queue"
    backfill = "easy"
    # function(view, waiting job indices) -> key array, largest first; None: arrival order
    priority: Callable[[SchedulerView, np.ndarray], np.ndarray] | None = None
    hints_placements = False  # True: `priority` hints placements (``engine.hint``)
    # False: `priority` depends on the engine's state but not on the clock (`now`), so a pass that
    # started nothing is not repeated on the same state (`decided`)
    priority_reads_time = True
    # True: `priority` gives each job a key that never changes (it reads only per-job constants),
    # so it is asked once over every job and the queue is kept in its order (module docstring) by
    # `on_arrival` and `on_preempt`: a subclass overriding them calls these
    fixed_priority = False

    OPTIONS: tuple[str, ...] = (
        "backfill",
        "depth",
        "record_reservations",
        "priority",
        "priority_weights",
    )
    # EASY's variants (`shadow_extra`, `queued_durations`): the schedulers that name them in their
    # OPTIONS take them (`cosched.simulator.schedulers.easy.EASY`)

    def __init__(
        self,
        backfill: str | None = None,
        depth: int = DEFAULT_DEPTH,
        record_reservations: bool = False,
        shadow_extra: str = "first",
        queued_durations: str = "estimate",
        priority: str | MultifactorPriority | None = None,
        priority_weights: Any = None,
    ) -> None:
        if backfill is not None:
            if backfill not in BACKFILL_POLICIES:
                raise InputError(
                    f"unknown backfill policy {backfill!r}; known: {', '.join(BACKFILL_POLICIES)}",
                    field="backfill",
                )
            self.backfill = backfill
        if depth < 0:
            raise InputError(f"backfill depth must be >= 0, got {depth}", field="depth")
        for value, known, name in (
            (shadow_extra, SHADOW_EXTRA, "shadow_extra"),
            (queued_durations, QUEUED_DURATIONS, "queued_durations"),
        ):
            if value not in known:
                raise InputError(f"unknown {name} {value!r}; known: {', '.join(known)}", field=name)
        self.depth = depth
        self.shadow_extra, self.queued_durations = shadow_extra, queued_durations
        # EASY's durations of waiting jobs (None: the engine's)
        self._durations: Sequence[float] | None = None
        self.reservations: dict[int, float] | None = {} if record_reservations else None
        self._conservative: ConservativeBackfill | PooledConservative | None = None
        self._partitioned: PartitionedQueues | None = None
        self._run: _RunPass | None = None  # the pass over this run's view (`_run_of`)
        self._multifactor: MultifactorPriority | None = None
        if priority is not None:  # Slurm's multifactor priority replaces the class's ordering
            from cosched.simulator.schedulers.multifactor import (
                PRIORITIES,
                MultifactorPriority,
                load_weights,
            )

            if isinstance(priority, MultifactorPriority):
                self._multifactor = priority
            elif priority in PRIORITIES:
                self._multifactor = MultifactorPriority(load_weights(priority_weights))
            else:
                raise InputError(
                    f"unknown priority {priority!r}; known: {', '.join(PRIORITIES)}",
                    field="priority",
                )
            self.priority = self._multifactor
            self.priority_reads_time = True  # the age factor grows with the clock
        elif priority_weights is not None:
            raise InputError("priority weights need priority 'multifactor'", field="priority")
        self._kept: _KeptOrder | None = None  # the waiting jobs in a fixed priority's order
        # the priority's order kept in C for the run (a subclass's `attach` sets it), else None
        self._ordering: FillerOrder | None = None

    def attach(self, engine: SchedulerView) -> None:
        # per-job arrays for vectorised priorities: the workload's, as the engine reads them (the
        # view's columns are tuples, which numpy would convert item by item)
        workload = engine.workload
        self.cores = _fixed_column(workload.cores, np.int64)
        self.estimate = _fixed_column(
            workload.run if engine.use_run_times else workload.estimate, np.float64
        )
        self._durations = engine.run_time if self.queued_durations == "run" else None
        if self._multifactor is not None:
            self._multifactor.attach(engine)
        self._kept = self._ordering = None
        if (
            self.fixed_priority
            and self.priority is not None
            and self._multifactor is None
            and not self.hints_placements
        ):
            self._keep_order(engine, self.priority)
        partitioned = engine.partitions is not None
        self._partitioned = None
        if partitioned:  # each partition's queue is scheduled on its own (partitions.py)
            from cosched.simulator.schedulers.partitioned import PartitionedQueues

            self._partitioned = PartitionedQueues(
                self, engine, asks_nothing_fits=not _is_base_hook(self, "nothing_fits")
            )
        self._conservative = None
        if self.backfill == "conservative" and not partitioned:
            if engine.eligible is None:
                self._conservative = ConservativeBackfill(engine, self.depth, self.reservations)
            else:  # several node types: a profile per type, as inside a partition
                from cosched.simulator.schedulers.partitioned import PooledConservative

                self._conservative = PooledConservative(
                    engine, range(len(engine.eligible.pool_sizes)), self.depth, self.reservations
                )
        # the pass over this run's view, built at its first pass (which reads the settings once)
        self._run = None

    def _run_of(self, engine: SchedulerView) -> _RunPass:
        """The pass over `engine`, this run's view (built at the run's first pass, also when a
        subclass's own `attach` skips the base's)."""
        run = self._run
        if run is None or run.view is not engine:
            run = self._run = _RunPass(self, engine)
        return run

    def _keep_order(
        self, engine: SchedulerView, priority: Callable[[SchedulerView, np.ndarray], np.ndarray]
    ) -> None:
        """Rank every job by its fixed priority (descending, ties by job index: the queue's order)
        and start the kept order with the jobs already waiting."""
        jobs = np.arange(len(self.cores), dtype=np.int64)
        job_at = queue_order(priority(engine, jobs))
        rank_of = np.empty_like(job_at)
        rank_of[job_at] = jobs
        self._kept = _KeptOrder(job_at.tolist(), rank_of.tolist(), engine.waiting, self.name)

    def listens(self, hook: str) -> bool:
        # the hooks below serve Conservative backfilling, the multifactor priority and a kept order
        if hook in _QUEUE_HOOKS and getattr(type(self), hook) is getattr(QueueScheduler, hook):
            return (
                hook in vars(self)
                or self._conservative is not None
                or self._multifactor is not None
                or (self._kept is not None and hook in _KEPT_ORDER_HOOKS)
            )
        return super().listens(hook)

    def on_arrival(self, engine: SchedulerView, job: int) -> None:
        _joined(self._kept, self._conservative, job)

    def on_finish(self, engine: SchedulerView, job: int) -> None:
        if self._multifactor is not None:
            self._multifactor.finished(engine, job)
        if self._conservative is not None:
            self._conservative.finished(job)

    @cython.locals(kept=_KeptOrder)
    def on_preempt(self, engine: SchedulerView, job: int) -> None:
        kept = self._kept
        if kept is not None:
            kept.enqueue(job)
        if self._multifactor is not None:
            self._multifactor.finished(engine, job)
        if self._conservative is not None:
            self._conservative.finished(job)
            self._conservative.arrived()

    def _conservative_pass(
        self, engine: SchedulerView, conservative: ConservativeBackfill | PooledConservative
    ) -> None:
        """Reserve and start in priority order until nothing more starts (003 §5.1.3)."""
        # arrivals and preemptions mark the profile (`on_arrival`, `on_preempt`): if it is idle, the
        # window is not built, the pass would change nothing
        if conservative.idle and not self.hints_placements:
            return
        conservative_pass(conservative, partial(self.order, engine, self.depth), engine.waiting)

    def nothing_fits(self, engine: SchedulerView) -> bool:
        """True when no waiting job fits in the free units and the pass records nothing: it can
        start no job, so it is skipped."""
        return self._run_of(engine).nothing_fits(engine)

    def order(self, engine: SchedulerView, limit: int | None = None) -> list[int]:
        """The first `limit` waiting jobs in priority order (stable: ties keep queue order)."""
        if self._ordering is not None:
            order = self._ordering.order_of(engine)
            return order if limit is None else order[:limit]
        if self.priority is None:
            queue = engine.queue
            return queue_slice(queue, 0, len(queue) if limit is None else limit)
        kept = self._kept
        if kept is not None:
            queued = len(engine.waiting)
            # the jobs' states are read only when some kept jobs have left the queue
            state = engine.state if kept.left(queued) else ()
            return kept.jobs(state, queued, 0, queued if limit is None else limit)
        waiting = np.fromiter(engine.waiting, np.int64, len(engine.waiting))
        key = self.priority(engine, waiting)  # asked for one job too: it may hint placements
        if waiting.size == 1:
            return waiting.tolist()[:limit]
        positions = queue_order(key)
        return waiting.take(positions if limit is None else positions[:limit]).tolist()

    def pass_over(self, engine: SchedulerView) -> _RunPass | None:
        """The run's pass, which the engine calls instead of `schedule` (at C level, compiled);
        None when a subclass overrides `schedule`."""
        return self._run_of(engine) if _is_base_hook(self, "schedule") else None

    @cython.locals(run=_RunPass)
    def schedule(self, engine: SchedulerView) -> None:
        """Start in priority order until a job does not fit, then backfill behind it (000 Algorithm
        2); a pass that started nothing is not repeated on the same state (`decided`)."""
        run = self._run
        if run is None or run.view is not engine:
            run = self._run_of(engine)
        run.schedule(engine)

    def decided(self, engine: SchedulerView) -> bool:
        """True when the last pass started nothing and this one would decide the same: nothing
        changed since (``engine.changes``), no job arrived or only beyond the jobs an arrival-order
        pass looks at, and the priority reads no clock (EASY's test only gets stricter with
        time)."""
        return self._run_of(engine).decided(engine)

    def decides_the_same(self, waiting: int, idle_waiting: int) -> bool:
        """With nothing changed since a pass over `idle_waiting` queued jobs that started nothing,
        True when a pass over `waiting` would decide the same: no arrival and a priority that
        reads no clock, or arrivals only beyond the jobs an arrival-order pass looks at."""
        depth = self.depth
        return _decides_the_same(
            waiting,
            idle_waiting,
            self.priority is None,
            not self.priority_reads_time or self._kept is not None,
            depth + 1 if self.backfill == "easy" and depth else 1,
        )

    def scheduling_pass(self, engine: SchedulerView) -> None:
        """One pass of the module docstring over the queue: in priority order, then backfilling."""
        self._run_of(engine).scheduling_pass(engine)


# the hooks of a pass (`_RunPass`): a subclass's override is called instead of the base's
_PASS_HOOKS = ("nothing_fits", "decided", "decides_the_same", "scheduling_pass")
_BASE_HOOKS = {
    hook: vars(QueueScheduler)[hook] for hook in (*_PASS_HOOKS, "schedule", "on_arrival", "order")
}
