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
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from itertools import islice
from typing import TYPE_CHECKING, Any

try:  # Cython's pure-Python mode: the types below compile to C, and do nothing in plain Python
    import cython
except ModuleNotFoundError:
    from cosched import _pure_cython as cython

import numpy as np

from cosched.errors import InputError
from cosched.simulator.allocators import Allocator, CompactAllocator
from cosched.simulator.jobs import JobState
from cosched.simulator.schedulers.backfilling import (
    SHADOW_EXTRA,
    ConservativeBackfill,
    EasyBackfill,
    queue_heads,
    queue_slice,
    start_in_order,
)
from cosched.simulator.schedulers.co_ordering import queue_order
from cosched.simulator.schedulers.conservative import conservative_pass

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
WAITING = int(JobState.WAITING)


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
        self._easy: EasyBackfill | None = None  # the EASY pass over this run's view (first pass)
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
        self._idle_pass: tuple[int, int] | None = (
            None  # (engine.changes, queue length) of an idle pass
        )
        # with a fixed priority: the waiting jobs' ranks in it, ascending (jobs that left the queue
        # are dropped when a pass meets them), and the job of each rank
        self._kept: list[int] | None = None
        self._job_at: list[int] = []
        self._rank_of: list[int] = []

    def attach(self, engine: SchedulerView) -> None:
        # per-job arrays for vectorised priorities
        self.cores = np.asarray(engine.cores, dtype=np.int64)
        self.estimate = np.asarray(engine.estimate, dtype=np.float64)
        self._durations = engine.run_time if self.queued_durations == "run" else None
        self._easy = None
        if self._multifactor is not None:
            self._multifactor.attach(engine)
        self._kept = None
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

            self._partitioned = PartitionedQueues(self, engine)
        self._conservative = None
        if self.backfill == "conservative" and not partitioned:
            if engine.eligible is None:
                self._conservative = ConservativeBackfill(engine, self.depth, self.reservations)
            else:  # several node types: a profile per type, as inside a partition
                from cosched.simulator.schedulers.partitioned import PooledConservative

                self._conservative = PooledConservative(
                    engine, range(len(engine.eligible.pool_sizes)), self.depth, self.reservations
                )

    def _keep_order(
        self, engine: SchedulerView, priority: Callable[[SchedulerView, np.ndarray], np.ndarray]
    ) -> None:
        """Rank every job by its fixed priority (descending, ties by job index: the queue's order)
        and start the kept order with the jobs already waiting."""
        jobs = np.arange(len(self.cores), dtype=np.int64)
        job_at = queue_order(priority(engine, jobs))
        rank_of = np.empty_like(job_at)
        rank_of[job_at] = jobs
        self._job_at, self._rank_of = job_at.tolist(), rank_of.tolist()
        self._kept = sorted(self._rank_of[job] for job in engine.waiting)

    def _enqueue(self, job: int) -> None:
        """`job` (re)enters the queue: its rank joins the kept order, unless it is still there
        (a job that started and was preempted before a pass met it)."""
        kept, rank = self._kept, self._rank_of[job]
        assert kept is not None  # called with a kept order only
        at = bisect_left(kept, rank)
        if at == len(kept) or kept[at] != rank:
            kept.insert(at, rank)

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
        if self._kept is not None:
            self._enqueue(job)
        if self._conservative is not None:
            self._conservative.arrived()

    def on_finish(self, engine: SchedulerView, job: int) -> None:
        if self._multifactor is not None:
            self._multifactor.finished(engine, job)
        if self._conservative is not None:
            self._conservative.finished(job)

    def on_preempt(self, engine: SchedulerView, job: int) -> None:
        if self._kept is not None:
            self._enqueue(job)
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
        units = engine.waiting_units
        return (
            units is not None
            and units[0] > engine.free_units()
            and self.reservations is None
            and not (self.hints_placements and self.priority is not None)
        )

    def order(self, engine: SchedulerView, limit: int | None = None) -> list[int]:
        """The first `limit` waiting jobs in priority order (stable: ties keep queue order)."""
        if self.priority is None:
            queue = engine.queue
            return queue_slice(queue, 0, len(queue) if limit is None else limit)
        kept = self._kept
        if kept is not None:
            return self._kept_head(engine, kept, limit)
        waiting = np.fromiter(engine.waiting, np.int64, len(engine.waiting))
        key = self.priority(engine, waiting)  # asked for one job too: it may hint placements
        if waiting.size == 1:
            return waiting.tolist()[:limit]
        positions = queue_order(key)
        return waiting.take(positions if limit is None else positions[:limit]).tolist()

    @cython.locals(kept=list, job_at=list)
    def _kept_head(self, engine: SchedulerView, kept: list[int], wanted: int | None) -> list[int]:
        """The first `wanted` (None: all) waiting jobs of the kept order `kept`."""
        left = len(kept) - len(engine.waiting)  # every waiting job is kept: the rest have left
        if left > 0:
            self._drop_left(engine, kept, left)
        elif left < 0:
            raise InputError(
                f"{-left} waiting jobs are missing from the kept order of scheduler "
                f"{self.name!r}: an override of on_arrival or on_preempt must call the base one "
                "(QueueScheduler.fixed_priority)",
                field="fixed_priority",
            )
        job_at = self._job_at
        return [job_at[rank] for rank in kept[:wanted]]

    @cython.locals(kept=list, job_at=list, left=cython.Py_ssize_t, index=cython.Py_ssize_t)
    def _drop_left(self, engine: SchedulerView, kept: list[int], left: int) -> None:
        """Drop from `kept` the `left` jobs that have left the queue (started, killed): from the
        front, where a pass starts them."""
        job_at, state, index = self._job_at, engine.state, 0
        while left:
            if state[job_at[kept[index]]] == WAITING:
                index += 1
            else:
                del kept[index]
                left -= 1

    def schedule(self, engine: SchedulerView) -> None:
        """Start in priority order until a job does not fit, then backfill behind it (000 Algorithm
        2)."""
        if self._partitioned is not None:
            self._partitioned.schedule(engine)
            return
        waiting = engine.waiting
        if not waiting:
            return
        if self._conservative is not None:
            self._conservative_pass(engine, self._conservative)
            return
        # `decided` only after an idle pass (False otherwise): most passes follow a change
        if self.nothing_fits(engine) or (self._idle_pass is not None and self.decided(engine)):
            return
        changes = engine.changes
        self.scheduling_pass(engine)
        # a pass that changed nothing: the same state and queue would give the same decisions
        self._idle_pass = (changes, len(waiting)) if engine.changes == changes else None

    def decided(self, engine: SchedulerView) -> bool:
        """True when the last pass started nothing and this one would decide the same: nothing
        changed since (``engine.changes``), no job arrived or only beyond the jobs an arrival-order
        pass looks at, and the priority reads no clock (EASY's test only gets stricter with
        time)."""
        idle = self._idle_pass
        if idle is None or engine.changes != idle[0] or self.reservations is not None:
            return False
        return self.decides_the_same(len(engine.waiting), idle[1])

    def decides_the_same(self, waiting: int, idle_waiting: int) -> bool:
        """With nothing changed since a pass over `idle_waiting` queued jobs that started nothing,
        True when a pass over `waiting` would decide the same: no arrival and a priority that
        reads no clock, or arrivals only beyond the jobs an arrival-order pass looks at."""
        if waiting == idle_waiting:  # a fixed priority reads no clock either
            return self.priority is None or not self.priority_reads_time or self._kept is not None
        looked_at = self.depth + 1 if self.backfill == "easy" and self.depth else 1
        return self.priority is None and idle_waiting >= looked_at

    def scheduling_pass(self, engine: SchedulerView) -> None:
        """One pass of the module docstring over the queue: in priority order, then backfilling."""
        queue, kept = engine.queue, self._kept
        order: list[int] | None = None  # a sorted copy of the queue, when it is not read live
        if self.priority is None:  # arrival order: the live queue's head, one job at a time
            jobs = queue_heads(queue)
        elif kept is not None:  # an order kept: its head, one job at a time
            jobs = self._kept_heads(engine, kept)
        else:  # 000 Algorithm 2: one sorted copy of the queue per pass
            order = self.order(engine)
            jobs = iter(order)
        head = start_in_order(engine, jobs)
        depth = self.depth
        if head is None or self.backfill != "easy" or not depth:
            return
        if not engine.free_units() and self.reservations is None:
            return  # EASY could start nothing behind the head, and records no reservation
        # the candidates behind the blocked head, a list in each order
        candidates: list[int]
        if order is not None:
            candidates = list(islice(jobs, depth))
        elif kept is None:
            candidates = queue_slice(queue, 1, depth + 1)
        else:
            candidates = self._kept_head(engine, kept, depth + 1)[1:]
        easy = self._easy
        if easy is None or easy.view is not engine:  # the run's first EASY pass
            easy = self._easy = EasyBackfill(
                engine, self.reservations, self.shadow_extra, self._durations
            )
        easy.run(head, candidates)

    def _kept_heads(self, engine: SchedulerView, kept: list[int]) -> Iterator[int]:
        """The head of the kept order `kept`, again after each start (as `queue_heads`)."""
        waiting = engine.waiting
        while waiting:
            yield self._kept_head(engine, kept, 1)[0]
