"""Partitions: named node sets with limits; each job runs only on its partition's nodes.

A partition file (JSON, `load_partitions`) names each partition's nodes and limits and the SWF
numbers mapped to it (field 16, partition, or field 15, queue: ``map_by``). `Partitions.assign`
gives every job its partition and rejects, at submit, the jobs that break their partition's limits
(more nodes than ``max_nodes``, a requested time above ``max_time``), as Slurm does with
``EnforcePartLimits=ALL`` (slurm.conf man page); the count is the workload's cleaning count
``rejected_partition_limits``.

Scheduling follows Slurm's rule (https://slurm.schedmd.com/sched_config.html, "Overview"): jobs are
evaluated in priority order, and once a job of a partition is left pending, no lower-priority job of
that partition starts ahead of it; so each partition's queue has its own head and its own
reservations, over its own nodes (`cosched.simulator.schedulers.partitioned`). Partitions do not
overlap, which makes each of them an independent machine for backfilling.

The one "eligible nodes for this job" notion is `PartitionAllocator.eligible_nodes(job)`: the nodes
of the job's partition (a per-job node-set id, `partition_of`, into `node_sets`).
"""

from __future__ import annotations

import bisect
import math
import os
from dataclasses import dataclass, replace

import numpy as np

from cosched.errors import InputError
from cosched.inputs import check_number, parse_json_object, shown
from cosched.simulator.allocators import BULK_NODES, Allocation, CompactAllocator
from cosched.simulator.platform import Platform
from cosched.simulator.workload import Workload

__all__ = [
    "Partition",
    "Partitions",
    "Assignment",
    "PartitionAllocator",
    "load_partitions",
    "MAP_BY",
]

MAP_BY = ("partition", "queue")  # the SWF field (16 or 15) that names a job's partition
_TOP_FIELDS = ("partitions", "map_by", "default")
_PARTITION_FIELDS = ("name", "nodes", "max_nodes", "max_time", "swf_ids", "priority_job_factor")


@dataclass(frozen=True)
class Partition:
    """A named set of nodes with its limits and the SWF numbers of the jobs sent to it."""

    name: str
    nodes: tuple[int, ...]
    max_nodes: int
    max_time: float = math.inf
    swf_ids: tuple[int, ...] = ()
    priority_job_factor: float = 1.0  # Slurm's PriorityJobFactor: the partition factor's input


@dataclass(frozen=True)
class Partitions:
    """The partitions of a platform and how SWF jobs map to them."""

    partitions: tuple[Partition, ...]
    map_by: str = "partition"
    default: str | None = None
    source: str = ""

    @property
    def names(self) -> list[str]:
        return [partition.name for partition in self.partitions]

    def assign(self, workload: Workload, cores_per_node: int, attributes=None) -> Assignment:
        """Each job's partition (by its SWF `map_by` number, else the default partition); jobs
        breaking their partition's limits are rejected (removed, counted).

        A job whose number no partition lists, without a default partition, is an InputError naming
        the job and the field."""
        if attributes is None:
            from cosched.simulator.job_attributes import job_attributes

            attributes = job_attributes(workload)
        numbers = attributes.field(self.map_by)
        index = {number: p for p, part in enumerate(self.partitions) for number in part.swf_ids}
        fallback = None if self.default is None else self.names.index(self.default)
        partition_of = np.empty(len(workload), dtype=np.int64)
        for job, number in enumerate(numbers.tolist()):
            p = index.get(number, fallback)
            if p is None:
                raise InputError(
                    f"job {int(workload.job_id[job])} has {self.map_by} {number}, which no "
                    f"partition of {self.source or 'the partition file'} lists in swf_ids (and "
                    f"there is no default partition)",
                    source=workload.source or None,
                    field=self.map_by,
                )
            partition_of[job] = p
        nodes = -(-workload.cores // cores_per_node)
        max_nodes = np.array([part.max_nodes for part in self.partitions])[partition_of]
        max_time = np.array([part.max_time for part in self.partitions])[partition_of]
        keep = (nodes <= max_nodes) & (workload.estimate <= max_time)
        rejected = int(len(workload) - keep.sum())
        kept = workload.take(np.flatnonzero(keep))
        kept = replace(
            kept,
            cleaning={
                **workload.cleaning,
                "rejected_partition_limits": rejected,
                "jobs": len(kept),
            },
        )
        return Assignment(self, kept, partition_of[keep])


@dataclass(frozen=True, eq=False)
class Assignment:
    """The jobs accepted by their partitions (`workload`) and each one's partition index."""

    partitions: Partitions
    workload: Workload
    partition_of: np.ndarray

    @property
    def rejected(self) -> int:
        return int(self.workload.cleaning.get("rejected_partition_limits", 0))

    def allocator(self, platform: Platform, scheduler) -> PartitionAllocator:
        """The whole-node allocator confined to each job's partition; only the queue schedulers
        (FCFS, EASY, Conservative, SJF, LJF) run per partition."""
        from cosched.simulator.schedulers.base import QueueScheduler

        if not isinstance(scheduler, QueueScheduler) or scheduler.co_located:
            raise InputError(
                f"partitions work with the queue schedulers (fcfs, easy, conservative, sjf, ljf), "
                f"not {getattr(scheduler, 'name', type(scheduler).__name__)!r}",
                field="partitions",
            )
        return PartitionAllocator(
            platform,
            [list(part.nodes) for part in self.partitions.partitions],
            self.partition_of.tolist(),
            [part.priority_job_factor for part in self.partitions.partitions],
        )


class PartitionAllocator(CompactAllocator):
    """Whole idle nodes of the job's partition, lowest ids first (the compact rule within it)."""

    def __init__(
        self,
        platform: Platform,
        node_sets: list[list[int]],
        partition_of: list[int],
        priority_job_factors: list[float] | None = None,
    ):
        super().__init__(platform)
        self.node_sets = [sorted(nodes) for nodes in node_sets]
        self.partition_of = partition_of
        self.priority_job_factors = priority_job_factors or [1.0] * len(node_sets)
        self._node_partition = [-1] * platform.nodes
        for p, nodes in enumerate(self.node_sets):
            for node in nodes:
                self._node_partition[node] = p
        self._idle_in = [list(nodes) for nodes in self.node_sets]

    def eligible_nodes(self, job: int) -> np.ndarray:
        """The nodes `job` may run on: its partition's."""
        return np.array(self.node_sets[self.partition_of[job]], dtype=np.int64)

    def free_units_in(self, partition: int) -> int:
        """Idle nodes of `partition`."""
        return len(self._idle_in[partition])

    def find(self, engine, job: int) -> Allocation | None:
        count = -(-engine.cores[job] // self._cpn)
        idle = self._idle_in[self.partition_of[job]]
        if count > len(idle):
            return None
        return Allocation(idle[:count], self._cpn)

    def allocate(self, engine, job: int) -> Allocation | None:
        count = -(-engine.cores[job] // self._cpn)
        idle = self._idle_in[self.partition_of[job]]
        if count > len(idle):
            return None
        chosen = idle[:count]
        del idle[:count]  # the partition's lowest idle nodes: a prefix of its list
        allocation = Allocation(chosen, self._cpn)
        super().commit(job, allocation)
        return allocation

    def commit(self, job: int, allocation: Allocation) -> None:
        super().commit(job, allocation)
        where, idle_in = self._node_partition, self._idle_in
        for node in allocation.node_ids:
            p = where[node]
            if p >= 0:
                idle = idle_in[p]
                del idle[bisect.bisect_left(idle, node)]

    def release(self, job: int, allocation: Allocation) -> None:
        super().release(job, allocation)
        where, idle_in = self._node_partition, self._idle_in
        nodes = allocation.node_ids
        first = where[nodes[0]]
        if len(nodes) > BULK_NODES and all(where[node] == first for node in nodes):
            if first >= 0:  # one partition's nodes: the sort merges two sorted runs in one pass
                idle_in[first].extend(nodes)
                idle_in[first].sort()
            return
        for node in nodes:
            p = where[node]
            if p >= 0:
                bisect.insort(idle_in[p], node)


def _node_ranges(text, source: str, field: str, nodes: int) -> tuple[int, ...]:
    """Node ids from "0-31,40,48-63" (ranges inclusive, as Slurm writes node lists)."""
    if not isinstance(text, str) or not text.strip():
        raise InputError(
            f'must be node ranges such as "0-31,40", got {shown(text)}', source=source, field=field
        )
    ids: set[int] = set()
    for piece in text.split(","):
        first, _, last = piece.strip().partition("-")
        try:
            low, high = int(first), int(last or first)
        except ValueError:
            raise InputError(
                f"not a node range: {shown(piece.strip())}", source=source, field=field
            ) from None
        if not 0 <= low <= high < nodes:
            raise InputError(
                f"node range {low}-{high} is outside the platform's nodes 0-{nodes - 1}",
                source=source,
                field=field,
            )
        ids.update(range(low, high + 1))
    return tuple(sorted(ids))


def load_partitions(path: str | os.PathLike, platform: Platform) -> Partitions:
    """Read a partition file (JSON; docs/partitions.md):
    ``{"partitions": [{"name", "nodes", "max_nodes", "max_time", "swf_ids",
    "priority_job_factor"}, ...], "map_by": "partition" | "queue", "default": NAME}``.

    Every error is one InputError naming the file and the field (``partitions[1].nodes``)."""
    source = str(path)
    data = parse_json_object(path, missing="no such partition file")
    unknown = sorted(set(data) - set(_TOP_FIELDS))
    if unknown:
        raise InputError(
            f"unknown field; known: {', '.join(_TOP_FIELDS)}", source=source, field=unknown[0]
        )
    entries = data.get("partitions")
    if not isinstance(entries, list) or not entries:
        raise InputError(
            "must be a non-empty list of partitions", source=source, field="partitions"
        )
    map_by = data.get("map_by", "partition")
    if map_by not in MAP_BY:
        raise InputError(
            f"must be one of {', '.join(MAP_BY)}, got {shown(map_by)}",
            source=source,
            field="map_by",
        )
    partitions: list[Partition] = []
    for position, entry in enumerate(entries):
        partitions.append(_partition(entry, f"partitions[{position}]", source, platform.nodes))
    _check_disjoint(partitions, map_by, source)
    default = data.get("default")
    if default is not None and default not in [p.name for p in partitions]:
        raise InputError(
            f"unknown partition {shown(default)}; known: {', '.join(p.name for p in partitions)}",
            source=source,
            field="default",
        )
    return Partitions(tuple(partitions), map_by, default, source)


def _check_disjoint(partitions: list[Partition], map_by: str, source: str) -> None:
    """Names, nodes and SWF numbers each belong to one partition."""
    names: set[str] = set()
    taken: dict[int, str] = {}
    numbers: dict[int, str] = {}
    for position, partition in enumerate(partitions):
        where = f"partitions[{position}]"
        if partition.name in names:
            raise InputError(
                f"partition name {partition.name!r} given twice",
                source=source,
                field=f"{where}.name",
            )
        names.add(partition.name)
        for node in partition.nodes:
            if node in taken:
                raise InputError(
                    f"node {node} is also in partition {taken[node]!r}; partitions do not overlap",
                    source=source,
                    field=f"{where}.nodes",
                )
            taken[node] = partition.name
        for number in partition.swf_ids:
            if number in numbers:
                raise InputError(
                    f"SWF {map_by} {number} is also mapped to partition {numbers[number]!r}",
                    source=source,
                    field=f"{where}.swf_ids",
                )
            numbers[number] = partition.name


def _partition(entry, where: str, source: str, nodes: int) -> Partition:
    if not isinstance(entry, dict):
        raise InputError("expected a JSON object", source=source, field=where)
    unknown = sorted(set(entry) - set(_PARTITION_FIELDS))
    if unknown:
        raise InputError(
            f"unknown field; known: {', '.join(_PARTITION_FIELDS)}",
            source=source,
            field=f"{where}.{unknown[0]}",
        )
    for required in ("name", "nodes"):
        if required not in entry:
            raise InputError("missing", source=source, field=f"{where}.{required}")
    name = entry["name"]
    if not isinstance(name, str) or not name:
        raise InputError(
            f"must be a non-empty string, got {shown(name)}", source=source, field=f"{where}.name"
        )
    ids = _node_ranges(entry["nodes"], source, f"{where}.nodes", nodes)
    max_nodes = check_number(
        entry.get("max_nodes", len(ids)),
        source=source,
        field=f"{where}.max_nodes",
        integer=True,
        minimum=1,
        maximum=len(ids),
        text=False,
    )
    max_time = entry.get("max_time")
    max_time = (
        math.inf
        if max_time is None
        else check_number(
            max_time,
            source=source,
            field=f"{where}.max_time",
            minimum=0,
            exclusive_minimum=True,
            text=False,
        )
    )
    swf_ids = entry.get("swf_ids", [])
    if not isinstance(swf_ids, list):
        raise InputError(
            f"must be a list of whole numbers, got {shown(swf_ids)}",
            source=source,
            field=f"{where}.swf_ids",
        )
    numbers = tuple(
        check_number(number, source=source, field=f"{where}.swf_ids", integer=True, text=False)
        for number in swf_ids
    )
    factor = check_number(
        entry.get("priority_job_factor", 1),
        source=source,
        field=f"{where}.priority_job_factor",
        minimum=0,
        text=False,
    )
    return Partition(name, ids, int(max_nodes), float(max_time), numbers, float(factor))
