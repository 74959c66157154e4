"""A queue scheduler's pass run per partition (Slurm's rule, cited in
`cosched.simulator.partitions`): each partition's queue has its own head and reservations over its
own nodes."""

from __future__ import annotations

import bisect
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from functools import partial
from itertools import compress, islice
from operator import itemgetter
from typing import Any, cast

import numpy as np

from cosched.simulator.schedulers.backfilling import ConservativeBackfill, easy_pass
from cosched.simulator.view import PartitionsView, SchedulerView

__all__ = ["PartitionedQueues"]

_JOB = itemgetter(1)  # the job of a (predicted end, job) item


class _PartitionView:
    """The view as one partition's backfilling sees it: that partition's free and total units and
    its running jobs; the rest is the run's view. Only what the EASY and Conservative passes read,
    bound once (a read forwarded by `__getattr__` costs about five plain reads); `now` stays live.
    """

    __slots__ = (
        "_engine",
        "_partition",
        "_in_partition",
        "free_units",
        "total_units",
        "units",
        "units_table",
        "held",
        "allocation",
        "eligible",
        "start",
        "queued_duration",
        "estimate",
        "predicted_end",
        "request_wakeup",
    )

    def __init__(self, engine: SchedulerView, partitions: PartitionsView, partition: int):
        self._engine, self._partition = engine, partition
        # per job: True if it is of this partition (the filter of `by_end`, run in C)
        self._in_partition = [of == partition for of in partitions.partition_of].__getitem__
        self.free_units = partial(partitions.free_units_in, partition)
        self.total_units = len(partitions.node_sets[partition])
        self.units, self.units_table, self.held = engine.units, engine.units_table, engine.held
        self.allocation, self.eligible = engine.allocation, engine.eligible
        self.start, self.queued_duration = engine.start, engine.queued_duration
        self.estimate, self.predicted_end = engine.estimate, engine.predicted_end
        self.request_wakeup = engine.request_wakeup

    @property
    def now(self) -> float:
        return self._engine.now

    @property
    def by_end(self) -> Iterator[tuple[float, int]]:
        """The running jobs of this partition as (predicted end, job), in the engine's order (read
        once: the shadow time stops at the first end that frees enough units)."""
        by_end = self._engine.by_end
        return compress(by_end, map(self._in_partition, map(_JOB, by_end)))


class PartitionedQueues:
    """A queue scheduler's pass run per partition: the queue in priority order split by partition,
    each part started in order until one job does not fit, then backfilled (EASY: only that
    partition's head holds a reservation; Conservative: every job of the partition's window) over
    the partition's own nodes. `depth` counts jobs per partition, as Slurm's
    ``partition_job_depth``."""

    def __init__(self, scheduler: Any, engine: SchedulerView):  # a QueueScheduler
        partitions = engine.partitions
        assert partitions is not None  # built only for a run with partitions
        self.scheduler, self.engine, self.partitions = scheduler, engine, partitions
        self.partition_of = partitions.partition_of
        self.partition_array = np.asarray(partitions.partition_of, dtype=np.int64)
        count = len(partitions.node_sets)
        # per partition, its waiting jobs in arrival order (FCFS and EASY without a priority)
        self.waiting: list[OrderedDict[int, None]] = [OrderedDict() for _ in range(count)]
        # per partition, the units of its waiting jobs, ascending (a partition whose smallest
        # waiting job exceeds its free units can start nothing, as `engine.waiting_units` shows
        # for the whole machine); None without a static units table
        self.table = engine.units_table
        self.waiting_units: list[list[int]] | None = (
            None if self.table is None else [[] for _ in range(count)]
        )
        self.arrived = 0
        # per partition: (its changes, its queue length) after a pass that started nothing
        self.idle: list[tuple[int, int] | None] = [None] * count
        self.views = [_PartitionView(engine, partitions, p) for p in range(count)]
        self.conservative = (
            [
                ConservativeBackfill(
                    cast(SchedulerView, view), scheduler.depth, scheduler.reservations
                )
                for view in self.views
            ]
            if scheduler.backfill == "conservative"
            else None
        )

    def schedule(self, engine: SchedulerView) -> None:
        """One pass over every partition's queue."""
        if not engine.waiting:
            return
        if self.conservative is not None:
            self._conservative_passes(engine)
            return
        if self.scheduler.nothing_fits(engine):  # no waiting job fits in all free units together
            return
        if self.arrived < len(self.partition_of) and engine.submit[self.arrived] <= engine.now:
            self._arrivals(engine)
        room = self._room()
        if not any(room):
            return
        if self.scheduler.priority is None:  # arrival order: each partition's own waiting jobs
            for partition, waiting in enumerate(self.waiting):
                if room[partition]:
                    self._pass(partition, waiting)
            return
        ordered = np.asarray(self.scheduler.order(engine), dtype=np.int64)
        partitions = self.partition_array[ordered]
        for partition, jobs in enumerate(room):
            if jobs:
                self._pass(partition, ordered[partitions == partition][:jobs].tolist())

    def _room(self) -> list[int]:
        """How much of each partition's queue (priority order) FCFS and EASY may look at now:
        nothing where no unit is free (no job can start, EASY cannot backfill), where its smallest
        waiting job does not fit, or where the last pass started nothing and nothing changed since
        (`QueueScheduler.decides_the_same`, on the partition's own nodes and queue); else its
        first free + depth + 1 jobs (at most `free` start in order, each taking a unit; then the
        head and `depth` candidates behind it)."""
        scheduler, free_units_in = self.scheduler, self.partitions.free_units_in
        depth = scheduler.depth
        free = [free_units_in(p) for p in range(len(self.views))]
        if scheduler.reservations is not None:  # every head's reservation is recorded
            return [units + depth + 1 for units in free]
        smallest, idle, changes_in = self.waiting_units, self.idle, self.partitions.changes_in
        room = [0] * len(free)
        for p, units in enumerate(free):
            if not units or (smallest is not None and (not smallest[p] or smallest[p][0] > units)):
                continue
            key = idle[p]
            if (
                key is None
                or key[0] != changes_in[p]
                or not scheduler.decides_the_same(len(self.waiting[p]), key[1])
            ):
                room[p] = units + depth + 1
        return room

    def _arrivals(self, engine: SchedulerView) -> None:
        """Append the jobs submitted since the last pass to their partition's queue (jobs arrive
        in index order, all those submitted by now before the pass)."""
        submit, of, jobs = engine.submit, self.partition_of, len(self.partition_of)
        arrived, now, table, units = self.arrived, engine.now, self.table, self.waiting_units
        while arrived < jobs and submit[arrived] <= now:
            self.waiting[of[arrived]][arrived] = None
            if units is not None:
                bisect.insort(units[of[arrived]], table[arrived])  # type: ignore[index]
            arrived += 1
        self.arrived = arrived

    def _conservative_passes(self, engine: SchedulerView) -> None:
        """Conservative backfilling of each partition's queue (priority order) on its nodes."""
        self._retire_finished()
        queues: list[list[int]] = [[] for _ in self.views]
        of = self.partition_of
        for job in self.scheduler.order(engine):
            queues[of[job]].append(job)
        for partition, queue in enumerate(queues):
            if queue:
                self._conservative_pass(partition, queue)

    def _conservative_pass(self, partition: int, queue: list[int]) -> None:
        conservative, engine = self.conservative, self.engine
        assert conservative is not None
        reserved = conservative[partition]
        while queue:
            window = queue[: max(self.scheduler.depth, 1)]
            if any(job not in reserved.slot for job in window):
                reserved.arrived()
            if not reserved.schedule(window):
                break
            waiting = engine.waiting
            queue = [job for job in queue if job in waiting]

    def _pass(self, partition: int, queue: Iterable[int]) -> None:
        """Start the partition's queue in order until a job does not fit, then backfill behind it
        (EASY) over the partition's nodes."""
        scheduler, engine, view = self.scheduler, self.engine, self.views[partition]
        start, table, free_units = engine.start, self.table, view.free_units
        free, started, head = free_units(), [], None
        jobs = iter(queue)
        for job in jobs:
            if (table is not None and table[job] > free) or not start(job):
                head = job
                break
            started.append(job)
            free = free_units()
        depth = scheduler.depth
        if (
            head is not None
            and scheduler.backfill == "easy"
            and depth
            and (free or scheduler.reservations is not None)
        ):
            order = [head, *islice(jobs, depth)]
            before = len(engine.running)
            easy_pass(cast(SchedulerView, view), order, scheduler.reservations)
            backfilled, waiting = len(engine.running) - before, engine.waiting
            for job in islice(order, 1, None) if backfilled else ():
                if job not in waiting:
                    started.append(job)
                    backfilled -= 1
                    if not backfilled:
                        break
        own = self.waiting[partition]
        units = None if self.waiting_units is None else self.waiting_units[partition]
        for job in started:
            del own[job]
            if units is not None:
                del units[bisect.bisect_left(units, table[job])]  # type: ignore[index]
        self.idle[partition] = (
            None if started else (self.partitions.changes_in[partition], len(own))
        )

    def _retire_finished(self) -> None:
        """Give the units of jobs that ended (at this timestamp: every end is followed by a pass)
        back to their partition's Conservative profile."""
        running = self.engine.running
        assert self.conservative is not None
        for conservative in self.conservative:
            ended = [job for job in conservative.booked if job not in running]
            for job in ended:
                conservative.finished(job)
