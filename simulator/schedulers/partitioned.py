"""A queue scheduler's pass run per partition (Slurm's rule, cited in
`cosched.simulator.partitions`): each partition's queue has its own head and reservations over its
own nodes."""

from __future__ import annotations

import math
from collections.abc import Container, Iterable
from typing import Any, cast

import numpy as np

try:  # Cython's pure-Python mode: the types below compile to C, and do nothing in plain Python
    import cython

    if not cython.compiled:  # plain Python: the light stand-in, not Cython's slower shadow
        raise ModuleNotFoundError
except ModuleNotFoundError:
    from cosched import _pure_cython as cython

from cosched.simulator.schedulers.backfilling import (
    ConservativeBackfill,
    EasyBackfill,
    queue_heads,
    start_each,
)
from cosched.simulator.schedulers.conservative import conservative_pass
from cosched.simulator.view import (
    Clock,
    PartitionsView,
    ReadOnlyColumn,
    SchedulerView,
    SortedColumn,
    Starter,
    engine_clock,
    insert_sorted,
    remove_sorted,
)

__all__ = ["PartitionedQueues", "PooledConservative"]


@cython.cfunc
@cython.locals(column=ReadOnlyColumn)
def _items(column: Any) -> Any:
    """The engine's list under a column of the view: the per-partition pass only reads it, and
    compiled, reads it without a call per item (partitioned.pxd)."""
    return column._items


@cython.cclass
class _HeldIn:
    """``held[job]`` as one partition's EASY pass reads it: the units a running job of the
    partition gives back, 0 for a job of another one. The shadow time (003 §5.1.2) walks every
    running job (`engine.by_end`, the engine's own list) and so counts only the partition's, as
    over the partition's jobs alone: a job adding 0 frees nothing, and partitions share no node."""

    _held = cython.declare(list)  # the engine's live list
    _mine = cython.declare(list)  # per job: True if it is of the partition

    def __init__(self, held: list[int], partition_of: Iterable[int], partition: int) -> None:
        self._held, self._mine = held, [of == partition for of in partition_of]

    @cython.locals(job=cython.Py_ssize_t)
    def __getitem__(self, job: int) -> int:
        return self._held[job] if self._mine[job] else 0


@cython.cclass
class _FreeIn:
    """``free_units()`` of one partition's view: its idle nodes, read in the allocator's live list
    (a method of no argument: a cheaper call than a `partial`)."""

    _free_in = cython.declare(list)  # per partition: its idle nodes
    _partition = cython.declare(cython.Py_ssize_t)

    def __init__(self, free_in: list[int], partition: int) -> None:
        self._free_in, self._partition = free_in, partition

    def units(self) -> int:
        return self._free_in[self._partition]


@cython.cclass
class _WaitingUnits:
    """The units of one partition's waiting jobs, as a count per units value: a partition whose
    smallest waiting job exceeds its free units can start nothing (`fits`), as
    `engine.waiting_units` shows for the whole machine. An arrival or a start changes one count,
    where a sorted list is searched and shifted."""

    counts = cython.declare(list)  # per units value: how many waiting jobs take that many
    low = cython.declare(cython.Py_ssize_t)  # no waiting job takes fewer units

    def __init__(self, most: int) -> None:
        self.counts = [0] * (most + 1)
        self.low = len(self.counts)

    @cython.cfunc
    @cython.locals(units=cython.Py_ssize_t)
    def add(self, units: int) -> None:
        self.counts[units] += 1
        self.low = min(self.low, units)

    @cython.cfunc
    @cython.locals(units=cython.Py_ssize_t)
    def remove(self, units: int) -> None:
        self.counts[units] -= 1

    @cython.cfunc
    @cython.locals(free=cython.Py_ssize_t, low=cython.Py_ssize_t, counts=list)
    @cython.returns(cython.bint)
    def fits(self, free: int) -> bool:
        """True if a waiting job takes at most `free` units (the counts below are read once
        each, between arrivals of smaller jobs)."""
        counts, low = self.counts, self.low
        while low <= free and low < len(counts) and not counts[low]:
            low += 1
        self.low = low
        return low <= free and low < len(counts)


@cython.cclass
class _RecordedStarts:
    """`start`, the partitions' views' start (a method: a cheaper call than ``__call__``): the
    engine's start (`Clock.start`, called in C when compiled), counting the jobs it started since
    the pass's last `PartitionedQueues._passed`; a job it starts leaves its partition's queue and
    counts at once (`follow`), as a start takes it out of the engine's queue, so that EASY reads a
    partition's queue in place."""

    _start = cython.declare(object)  # the run's view's start
    _clock = cython.declare(Clock)  # the engine's clock, whose start is the same, called in C
    count = cython.declare(cython.Py_ssize_t)
    # per partition, its queue and waiting units (None: no queue kept, Conservative's pass); per
    # job, its partition and units
    _queues = cython.declare(list)
    _units = cython.declare(list)
    _partition_of = cython.declare(tuple)
    _table = cython.declare(list)

    def __init__(self, engine: SchedulerView) -> None:
        self._start = engine.start
        self._clock = engine_clock(engine) if cython.compiled else None
        self.count = 0
        self._queues = None

    def follow(
        self, queues: list, units: list | None, partition_of: tuple, table: list | None
    ) -> None:
        """Take each started job out of its partition's queue (`queues`) and waiting `units`."""
        self._queues, self._units = queues, units
        self._partition_of, self._table = partition_of, table

    def start(self, job: int, nodes: Any = None, placement: Any = None, reason: str = "") -> bool:
        clock = self._clock
        if clock is not None:
            started = clock.start(job, nodes, placement, reason)
        else:
            started = self._start(job, nodes, placement, reason)
        if started:
            self.count += 1
            if self._queues is not None:
                self._left(job)
        return started

    @cython.cfunc
    @cython.locals(job=cython.Py_ssize_t, partition=cython.Py_ssize_t, counted=_WaitingUnits)
    def _left(self, job: int) -> None:
        """`job` started: out of its partition's queue and waiting units."""
        partition = self._partition_of[job]
        remove_sorted(self._queues[partition], job)
        if self._units is not None:
            counted = self._units[partition]
            counted.remove(self._table[job])


class _PartitionView:
    """The view as one partition's backfilling sees it: that partition's free and total units,
    every running job by end with only its own holding units (`_HeldIn`); the rest is the run's
    view. Only what the EASY and Conservative passes read, bound once (a read forwarded by
    `__getattr__` costs about five plain reads); `now` is set by each pass (`PartitionedQueues`),
    the only reader of these views, unless EASY reads the engine's `clock` (its time and change
    count).
    """

    __slots__ = (
        "now",
        "clock",
        "free_units",
        "total_units",
        "units",
        "units_table",
        "unit_counts",
        "held",
        "by_end",
        "allocation",
        "eligible",
        "start",
        "queued_duration",
        "estimate",
        "predicted_end",
        "request_wakeup",
    )

    def __init__(
        self,
        engine: SchedulerView,
        partitions: PartitionsView,
        partition: int,
        start: _RecordedStarts,
    ):
        self.now, self.clock = engine.now, engine_clock(engine)
        self.free_units = _FreeIn(_items(partitions.free_in), partition).units
        self.total_units = len(partitions.node_sets[partition])
        table = engine.units_table
        self.units, self.by_end = engine.units, engine.by_end
        self.held = _HeldIn(_items(engine.held), partitions.partition_of, partition)
        self.units_table = None if table is None else _items(table)
        # the engine's units table as a typed array, which EASY reads in C (as on the engine's view)
        self.unit_counts = getattr(engine_clock(engine), "unit_counts", None)
        self.allocation, self.eligible = engine.allocation, engine.eligible
        self.start, self.queued_duration = start.start, engine.queued_duration
        self.estimate, self.predicted_end = engine.estimate, engine.predicted_end
        self.request_wakeup = engine.request_wakeup


class _PoolView:
    """The view as the Conservative profile of one pool (the nodes of one node type, within a
    partition if there are partitions) sees it: the pool's nodes as its units, a job's nodes on that
    pool as its units, and a start on the pool's lowest idle nodes."""

    __slots__ = (
        "_engine",
        "_pool",
        "_pool_allocation",
        "_eligible",
        "total_units",
        "units_table",
        "estimate",
        "predicted_end",
        "request_wakeup",
    )

    def __init__(self, engine: SchedulerView, pool: int):
        assert engine.eligible is not None  # pools exist where a scope holds several node types
        self._engine, self._pool, self._eligible = engine, pool, engine.eligible
        self._pool_allocation = engine.eligible.pool_allocation
        self.total_units = engine.eligible.pool_sizes[pool]
        self.units_table = self
        self.estimate, self.predicted_end = engine.estimate, engine.predicted_end
        self.request_wakeup = engine.request_wakeup

    @property
    def now(self) -> float:
        return self._engine.now

    def __getitem__(self, job: int) -> int:
        """The nodes `job` needs on this pool (the table of units)."""
        pool = self._pool
        return next(count for own, count in self._eligible.pools_of(job) if own == pool)

    def units(self, job: int) -> int:
        return self[job]

    def start(self, job: int) -> bool:
        """Start `job` on the pool's lowest idle nodes; False if too few are idle."""
        pool, count = self._pool, self[job]
        if self._eligible.pool_now(job) == (pool, count):  # where the allocator puts it anyway
            return self._engine.start(job)
        allocation = self._pool_allocation(pool, count)
        return allocation is not None and self._engine.start(job, allocation)


class PooledConservative:
    """Conservative backfilling (003 §5.1.3) over several node types (of the whole platform, or of
    one partition): one profile per pool (a `ConservativeBackfill` over the pool's nodes). A job
    entering the window is
    reserved on the pool where it can start earliest (ties: the allocator's pool order), as EASY
    reserves the head's nodes (`pool_shadow_time`), keeps that pool, and starts on its nodes. Pools
    share no node, so every reservation holds: no job starts later than its reservation said
    unless a job runs past its estimate."""

    def __init__(
        self,
        engine: SchedulerView,
        pools: Iterable[int],
        depth: int,
        first_reservations: dict | None,
    ):
        assert engine.eligible is not None
        self.engine, self.eligible = engine, engine.eligible
        self.pools = {
            pool: ConservativeBackfill(
                cast(SchedulerView, _PoolView(engine, pool)), depth, first_reservations
            )
            for pool in pools
        }

    @property
    def slot(self) -> dict[int, tuple[float, float, int, float]]:
        """The reservations of every pool (waiting job -> slot)."""
        return {job: slot for part in self.pools.values() for job, slot in part.slot.items()}

    def arrived(self) -> None:
        for part in self.pools.values():
            part.arrived()

    def finished(self, job: int) -> None:
        """Give the nodes of `job`, which ended, back to the profile of the pool it ran on."""
        for part in self.pools.values():
            if job in part.booked:
                part.finished(job)
                return

    @property
    def idle(self) -> bool:
        """A pass now would change nothing in any pool."""
        return all(part.idle for part in self.pools.values())

    def retire(self, running: Container[int]) -> None:
        """`finished` for every booked job of every pool that is no longer `running`."""
        for part in self.pools.values():
            part.retire(running)

    def schedule(self, window: list[int]) -> int:
        """Each pool's pass over its reserved jobs of `window` (queue order), then each job of the
        window without a reservation placed on its earliest pool; returns how many started."""
        pools, waiting = self.pools, self.engine.waiting
        where = {job: pool for pool, part in pools.items() for job in part.slot}
        windows: dict[int, list[int]] = {pool: [] for pool in pools}
        for job in window:
            pool = where.get(job)
            if pool is not None:
                windows[pool].append(job)
        started = 0
        for pool, part in pools.items():
            started += part.schedule(windows[pool])
        reserved = set().union(*(part.slot for part in pools.values()))
        for job in [job for job in window if job in waiting and job not in reserved]:
            part = pools[self._earliest_pool(job)]
            part.arrived()
            slot = part.slot
            started += part.schedule([other for other in window if other in slot or other == job])
        return started

    def _earliest_pool(self, job: int) -> int:
        """The pool of `job`'s partition where it can start earliest (003 §5.1.3, per pool)."""
        now, duration = self.engine.now, self.engine.estimate[job]
        best, best_pool = math.inf, -1
        for pool, count in self.eligible.pools_of(job):
            profile = self.pools[pool].profile
            profile.advance(now)
            begin = profile.earliest(duration, count)
            if begin < best or best_pool < 0:
                best, best_pool = begin, pool
        return best_pool


@cython.cclass
class PartitionedQueues:
    """A queue scheduler's pass run per partition: the queue in priority order split by partition,
    each part started in order until one job does not fit, then backfilled (EASY: only that
    partition's head holds a reservation; Conservative: every job of the partition's window) over
    the partition's own nodes. `depth` counts jobs per partition, as Slurm's
    ``partition_job_depth``.

    Compiled (`cosched._compiled`), its fields are typed and the per-partition steps are C calls:
    this pass runs once per event."""

    scheduler = cython.declare(object, visibility="public")  # a QueueScheduler
    engine = cython.declare(object, visibility="public")
    partitions = cython.declare(object, visibility="public")
    partition_of = cython.declare(tuple, visibility="public")
    partition_array = cython.declare(object, visibility="public")
    # per partition, its waiting jobs in arrival order, ascending (FCFS and EASY without a
    # priority): a `SortedColumn`, as the engine's queue, so a start near the head moves no job
    waiting = cython.declare(list, visibility="public")
    # the run's units per job (None without a static units table)
    table = cython.declare(list, visibility="public")
    # per partition: its idle nodes and a count of the starts and ends on them (the engine's live
    # lists, read only)
    free_in = cython.declare(list, visibility="public")
    changes_in = cython.declare(list, visibility="public")
    # per partition, the units of its waiting jobs (`_WaitingUnits`); None without a static units
    # table
    waiting_units = cython.declare(list, visibility="public")
    arrived = cython.declare(cython.Py_ssize_t, visibility="public")  # jobs queued so far
    jobs = cython.declare(cython.Py_ssize_t, visibility="public")  # of all jobs
    # per partition: (its changes, its queue length) after a pass that started nothing
    idle = cython.declare(list, visibility="public")
    # a partition's pass after an idle one with only arrivals since backfills the arrivals alone
    # (`_room`), as `_RunPass._backfill_arrivals` does for the whole machine
    arrivals_alone = cython.declare(cython.bint, visibility="public")
    submit = cython.declare(tuple)  # the view's submit times
    started = cython.declare(_RecordedStarts)  # the views' start: how many jobs a pass started
    heads = cython.declare(list)  # per partition, its queue's live head (`queue_heads`)
    room = cython.declare(list)  # per partition, what `_room` found (one list for the run)
    clock = cython.declare(Clock)  # the engine's clock behind the view (None: read its `now`)
    views = cython.declare(list, visibility="public")
    starters = cython.declare(list, visibility="public")  # per partition, its view's `Starter`
    conservative = cython.declare(list, visibility="public")  # None unless Conservative
    # the scheduler's settings, fixed for the run: its depth, whether it backfills EASY-style,
    # records each head's reservation (None if not) and orders the queue by arrival
    depth = cython.declare(cython.Py_ssize_t, visibility="public")
    reservations = cython.declare(object, visibility="public")
    arrival_order = cython.declare(cython.bint, visibility="public")
    easy = cython.declare(cython.bint, visibility="public")
    # ask the scheduler's `nothing_fits` before each pass (its subclass overrides it: the base's
    # test, no waiting job fitting in all free units, implies that `_room` finds none anywhere)
    asks_nothing_fits = cython.declare(cython.bint, visibility="public")
    backfills = cython.declare(list, visibility="public")  # per partition, EASY's pass; else None

    def __init__(self, scheduler: Any, engine: SchedulerView, asks_nothing_fits: bool = True):
        partitions = engine.partitions
        assert partitions is not None  # built only for a run with partitions
        self.scheduler, self.engine, self.partitions = scheduler, engine, partitions
        self.partition_of = tuple(partitions.partition_of)
        self.partition_array = np.asarray(partitions.partition_of, dtype=np.int64)
        count = len(partitions.node_sets)
        self.waiting = [SortedColumn(f"partition {p} queue") for p in range(count)]
        table = engine.units_table
        self.table = None if table is None else _items(table)
        self.free_in, self.changes_in = _items(partitions.free_in), _items(partitions.changes_in)
        self.waiting_units = (
            None
            if self.table is None
            else [_WaitingUnits(max(self.table, default=0)) for _ in range(count)]
        )
        self.arrived, self.jobs = 0, len(self.partition_of)
        self.idle, self.room = [None] * count, [0] * count
        self.started = _RecordedStarts(engine)
        self.heads = [queue_heads(own) for own in self.waiting]
        self.views = [
            cast(SchedulerView, _PartitionView(engine, partitions, p, self.started))
            for p in range(count)
        ]
        self.starters = [Starter(view) for view in self.views]
        self.depth, self.reservations = scheduler.depth, scheduler.reservations
        self.arrival_order = scheduler.priority is None
        self.easy = scheduler.backfill == "easy" and scheduler.depth > 0
        self.arrivals_alone = self.easy and self.arrival_order and not scheduler.hints_placements
        self.submit, self.clock = tuple(engine.submit), engine_clock(engine)
        self.asks_nothing_fits = asks_nothing_fits
        # built once for the run, with the queue scheduler's settings (its EASY variants and the
        # durations of waiting jobs it chose in `attach`): a partition's view keeps its columns
        self.backfills = (
            [
                EasyBackfill(
                    view, scheduler.reservations, scheduler.shadow_extra, scheduler._durations
                )
                for view in self.views
            ]
            if self.easy
            else None
        )
        self.conservative = None
        if scheduler.backfill != "conservative":  # (Conservative reads the engine's queue)
            self.started.follow(self.waiting, self.waiting_units, self.partition_of, self.table)
        else:
            depth, first = scheduler.depth, scheduler.reservations
            self.conservative = [
                PooledConservative(engine, partitions.pools_in[p], depth, first)
                if len(partitions.pools_in[p]) > 1
                else ConservativeBackfill(view, depth, first)
                for p, view in enumerate(self.views)
            ]

    @cython.locals(
        partition=cython.Py_ssize_t,
        jobs=cython.Py_ssize_t,
        room=list,
        now=cython.double,
    )
    def schedule(self, engine: SchedulerView) -> None:
        """One pass over every partition's queue (some jobs wait)."""
        if self.conservative is not None:
            self._conservative_passes(engine)
            return
        scheduler = self.scheduler
        if self.asks_nothing_fits and scheduler.nothing_fits(engine):
            return
        now = self.clock.now if self.clock is not None else engine.now
        self._arrivals(now)
        room = self._room()
        if self.arrival_order:  # each partition's own waiting jobs
            for partition in range(len(room)):
                jobs = room[partition]
                if jobs > 0:
                    self._pass(partition, None, now)
                elif jobs < 0:
                    self._backfill_arrivals(partition, -jobs, now)
            return
        if not any(room):
            return
        ordered = np.asarray(scheduler.order(engine), dtype=np.int64)
        partitions = self.partition_array[ordered]
        for partition in range(len(room)):
            jobs = room[partition]
            if jobs:
                self._pass(partition, ordered[partitions == partition][:jobs].tolist(), now)

    @cython.cfunc
    @cython.locals(
        partition=cython.Py_ssize_t,
        free=cython.Py_ssize_t,
        looked_at=cython.Py_ssize_t,
        since=cython.Py_ssize_t,
        smallest=list,
        idle=list,
        units=_WaitingUnits,
        own=SortedColumn,
        room=list,
    )
    def _room(self) -> list[int]:
        """How much of each partition's queue (priority order) FCFS and EASY may look at now:
        nothing where no unit is free (no job can start, EASY cannot backfill), where its smallest
        waiting job does not fit, or where the last pass started nothing and nothing changed since
        (`QueueScheduler.decides_the_same`, on the partition's own nodes and queue); else its
        first free + depth + 1 jobs (at most `free` start in order, each taking a unit; then the
        head and `depth` candidates behind it). With `arrivals_alone`, after a pass that started
        nothing and only arrivals since, minus the position of the first arrival: its blocked head
        and the jobs it looked at would still not start (EASY's test only gets stricter with
        time), so EASY looks only at the arrivals within the depth."""
        scheduler, free_in = self.scheduler, self.free_in
        looked_at = self.depth + 1
        if self.reservations is not None:  # every head's reservation is recorded
            return [free + looked_at for free in free_in]
        smallest, idle, changes_in = self.waiting_units, self.idle, self.changes_in
        room = self.room
        for partition in range(len(free_in)):
            room[partition] = 0
            free = free_in[partition]
            if not free:
                continue
            if smallest is not None:
                units = smallest[partition]
                if not units.fits(free):
                    continue
            key = idle[partition]
            own = self.waiting[partition]
            if key is None or key[0] != changes_in[partition]:
                room[partition] = free + looked_at
            elif not scheduler.decides_the_same(len(own), key[1]):
                since = key[1]
                room[partition] = -since if self.arrivals_alone and since else free + looked_at
        return room

    @cython.cfunc
    @cython.locals(
        arrived=cython.Py_ssize_t,
        jobs=cython.Py_ssize_t,
        partition=cython.Py_ssize_t,
        now=cython.double,
        submitted=cython.double,
        job_of=tuple,
        submit=tuple,
        counted=_WaitingUnits,
    )
    def _arrivals(self, now: float) -> None:
        """Append the jobs submitted since the last pass to their partition's queue (jobs arrive
        in index order, all those submitted by now before the pass)."""
        submit, job_of, jobs = self.submit, self.partition_of, self.jobs
        arrived, table, units = self.arrived, self.table, self.waiting_units
        waiting = self.waiting
        while arrived < jobs:
            submitted = submit[arrived]  # (compiled: compared as a C double, no float object)
            if submitted > now:
                break
            partition = job_of[arrived]
            insert_sorted(waiting[partition], arrived)
            if units is not None:
                counted = units[partition]
                counted.add(table[arrived])
            arrived += 1
        self.arrived = arrived

    def _conservative_passes(self, engine: SchedulerView) -> None:
        """Conservative backfilling of each partition's queue (priority order) on its nodes."""
        for view in self.views:
            view.now = engine.now
        self._retire_finished()
        queues: list[list[int]] = [[] for _ in self.views]
        of = self.partition_of
        for job in self.scheduler.order(engine):
            queues[of[job]].append(job)
        for partition, queue in enumerate(queues):
            if queue:
                self._conservative_pass(partition, queue)
        self.started.count = 0

    def _conservative_pass(self, partition: int, queue: list[int]) -> None:
        """The Conservative pass over one partition's waiting jobs (`queue`, priority order); the
        jobs a round started leave `queue` before the next one."""
        assert self.conservative is not None
        waiting, depth = self.engine.waiting, max(self.depth, 1)

        def next_window() -> list[int]:
            queue[:] = [job for job in queue if job in waiting]
            return queue[:depth]

        conservative_pass(self.conservative[partition], next_window, queue)

    @cython.cfunc
    @cython.locals(
        partition=cython.Py_ssize_t, at=cython.Py_ssize_t, now=cython.double, easy=EasyBackfill
    )
    def _pass(self, partition: int, queue: list[int] | None, now: float) -> None:
        """Start the partition's queue (its own, None, or `queue`, in priority order) until a job
        does not fit, then backfill behind it (EASY) over the partition's nodes."""
        if self.clock is None:  # (else EASY reads the engine's clock)
            self.views[partition].now = now
        jobs = self.heads[partition] if queue is None else queue
        # `start_in_order` on the partition's free units
        head = start_each(jobs, self.starters[partition], self.table)
        reservations = self.reservations
        if head is not None and self.easy and (self.free_in[partition] or reservations is not None):
            easy = self.backfills[partition]
            if queue is None:  # the started jobs left the queue: the head leads it, as the engine's
                easy.run_queue(self.waiting[partition], 1, self.depth + 1)
            else:  # the jobs before the head all started, and the candidates follow it
                at = self.started.count
                easy.run(queue[at], queue[at + 1 : at + 1 + self.depth])
        self._passed(partition)

    @cython.cfunc
    @cython.locals(
        partition=cython.Py_ssize_t, since=cython.Py_ssize_t, now=cython.double, easy=EasyBackfill
    )
    def _backfill_arrivals(self, partition: int, since: int, now: float) -> None:
        """EASY behind the partition's blocked head over its queue's jobs from position `since`
        (the arrivals since a pass that started nothing) to the depth (`_room`)."""
        if self.clock is None:
            self.views[partition].now = now
        easy = self.backfills[partition]
        easy.run_queue(self.waiting[partition], since, self.depth + 1)
        self._passed(partition)

    @cython.cfunc
    @cython.locals(partition=cython.Py_ssize_t, own=SortedColumn)
    def _passed(self, partition: int) -> None:
        """After a partition's pass (its started jobs left its queue and counts): a pass that
        started nothing is the partition's idle state (`_room`)."""
        if self.started.count:
            self.started.count = 0
            self.idle[partition] = None
        else:
            own = self.waiting[partition]
            self.idle[partition] = (self.changes_in[partition], len(own))

    def _retire_finished(self) -> None:
        """Give the units of jobs that ended (at this timestamp: every end is followed by a pass)
        back to their partition's Conservative profile."""
        assert self.conservative is not None
        running = self.engine.running
        for conservative in self.conservative:
            conservative.retire(running)
