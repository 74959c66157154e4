"""A queue scheduler's pass run per partition (Slurm's rule, cited in
`cosched.simulator.partitions`): each partition's queue has its own head and reservations over its
own nodes."""

from __future__ import annotations

import bisect
from collections import OrderedDict
from itertools import islice
from typing import Any, cast

import numpy as np

from cosched.simulator.schedulers.backfilling import ConservativeBackfill, easy_pass
from cosched.simulator.view import PartitionsView, SchedulerView

__all__ = ["PartitionedQueues"]


class _PartitionView:
    """The view as one partition's backfilling sees it: that partition's free and total units and
    its running jobs; everything else is the run's view."""

    def __init__(self, engine: SchedulerView, partitions: PartitionsView, partition: int):
        self._engine, self._partition = engine, partition
        self._partition_of = partitions.partition_of
        self._free_units_in = partitions.free_units_in
        self.total_units = len(partitions.node_sets[partition])
        self.units = engine.units

    def __getattr__(self, name: str) -> Any:
        return getattr(self._engine, name)

    def free_units(self) -> int:
        return self._free_units_in(self._partition)

    @property
    def by_end(self) -> list[tuple[float, int]]:
        """The running jobs of this partition as (predicted end, job), in the engine's order."""
        of, partition = self._partition_of, self._partition
        return [item for item in self._engine.by_end if of[item[1]] == partition]


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
            self._retire_finished()
            queues: list[list[int]] = [[] for _ in self.views]
            of = self.partition_of
            for job in self.scheduler.order(engine):
                queues[of[job]].append(job)
            for partition, queue in enumerate(queues):
                if queue:
                    self._pass(partition, queue)
            return
        for partition, queue in enumerate(self._queues(engine)):
            if queue:
                self._pass(partition, queue)

    def _queues(self, engine: SchedulerView) -> list[list[int]]:
        """The part of each partition's queue (priority order) that FCFS and EASY may look at now:
        nothing where no unit is free (no job can start, EASY cannot backfill), else its first
        free + depth + 1 jobs (at most `free` start in order, each taking a unit; then the head
        and `depth` candidates behind it)."""
        scheduler, free_units_in = self.scheduler, self.partitions.free_units_in
        count = len(self.views)
        free = [free_units_in(p) for p in range(count)]
        queues: list[list[int]] = [[] for _ in range(count)]
        self._arrivals(engine)
        if scheduler.reservations is None:  # else every head's reservation is recorded
            most, units = max(free), engine.waiting_units
            if most == 0 or (units is not None and units[0] > most):
                return queues
            smallest = self.waiting_units
            room = [
                f + scheduler.depth + 1
                if f and (smallest is None or (smallest[p] and smallest[p][0] <= f))
                else 0
                for p, f in enumerate(free)
            ]
            if not any(room):
                return queues
        else:
            room = [f + scheduler.depth + 1 for f in free]
        if scheduler.priority is None:  # arrival order: each partition's own waiting jobs
            for p, waiting in enumerate(self.waiting):
                if room[p]:
                    queues[p] = list(islice(waiting, room[p]))
            return queues
        ordered = np.asarray(scheduler.order(engine), dtype=np.int64)
        partitions = self.partition_array[ordered]
        for p in range(count):
            if room[p]:
                queues[p] = ordered[partitions == p][: room[p]].tolist()
        return queues

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

    def _pass(self, partition: int, queue: list[int]) -> None:
        scheduler, engine, view = self.scheduler, self.engine, self.views[partition]
        depth = scheduler.depth
        if self.conservative is not None:
            conservative = self.conservative[partition]
            while queue:
                window = queue[: max(depth, 1)]
                if any(job not in conservative.slot for job in window):
                    conservative.arrived()
                if not conservative.schedule(window):
                    break
                waiting = engine.waiting
                queue = [job for job in queue if job in waiting]
            return
        start, index = engine.start, 0
        while index < len(queue) and start(queue[index]):
            index += 1
        if (
            index < len(queue)
            and scheduler.backfill == "easy"
            and depth
            and (view.free_units() or scheduler.reservations is not None)
        ):
            easy_pass(
                cast(SchedulerView, view), queue[index : index + depth + 1], scheduler.reservations
            )
        waiting, own, table = engine.waiting, self.waiting[partition], self.table
        units = None if self.waiting_units is None else self.waiting_units[partition]
        for job in queue:  # only these jobs could start in this pass
            if job not in waiting and own.pop(job, 0) is None and units is not None:
                del units[bisect.bisect_left(units, table[job])]  # type: ignore[index]

    def _retire_finished(self) -> None:
        """Give the units of jobs that ended (at this timestamp: every end is followed by a pass)
        back to their partition's Conservative profile."""
        running = self.engine.running
        assert self.conservative is not None
        for conservative in self.conservative:
            ended = [job for job in conservative.booked if job not in running]
            for job in ended:
                conservative.finished(job)
