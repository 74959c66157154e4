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
from collections.abc import Sequence
from dataclasses import dataclass, replace
from itertools import chain
from operator import mul

import numpy as np

try:  # Cython's pure-Python mode: the types below compile to C, and do nothing in plain Python
    import cython

    if not cython.compiled:  # plain Python: the light stand-in, not Cython's slower shadow
        raise ModuleNotFoundError
except ModuleNotFoundError:
    from cosched import _pure_cython as cython

from cosched.errors import InputError
from cosched.inputs import check_number, parse_json_object, shown
from cosched.simulator.allocators import (
    Allocation,
    CompactAllocator,
    _listed,
    _WholeNodes,
    insert_nodes,
)
from cosched.simulator.platform import Platform
from cosched.simulator.resources import CANNOT, whole_nodes_needed
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

    def assign(
        self, workload: Workload, cores_per_node: int, attributes=None, platform=None
    ) -> Assignment:
        """Each job's partition (by its SWF `map_by` number, else the default partition); jobs
        breaking their partition's limits are rejected (removed, counted).

        A job's nodes are ceil(cores / `cores_per_node`), or with `platform` (node types, memory,
        GPUs) the fewest whole nodes it needs on a node type of its partition
        (`cosched.simulator.resources`); a job that no node type of its partition can run breaks
        its limits. A job whose number no partition lists, without a default partition, is an
        InputError naming the job and the field."""
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
        if platform is None:
            nodes = -(-workload.cores // cores_per_node)
        else:
            pools = partition_pools(platform, [part.nodes for part in self.partitions])
            table = nodes_needed_in_pools(workload, platform, partition_of, pools)
            nodes = _fewest(table, none=platform.nodes + 1)
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


@cython.cclass
class _PoolStarts:
    """What a start or an end on one pool changes in a `PartitionAllocator` (its pools' idle lists,
    the idle nodes and changes per partition, the pool each job took its nodes from): the same
    lists as the allocator's, held in typed fields, so that compiled, `take` and `give_back` edit
    them in C rather than through the allocator's attributes."""

    idle_in = cython.declare(list)  # per pool: its idle nodes, ascending
    partition_of = cython.declare(list)  # per pool: its partition
    cores = cython.declare(list)  # per pool: the cores of each of its nodes
    options = cython.declare(list, visibility="public")  # per job: (pool, nodes it needs there)
    free_in = cython.declare(list)  # per partition: its idle nodes
    changes_in = cython.declare(list)  # per partition: starts and ends on its nodes
    taken_from = cython.declare(list, visibility="public")  # per job: the pool `take` took it from
    holder = cython.declare(_WholeNodes)  # the allocator: its count, holders and changes

    def __init__(self, allocator: PartitionAllocator) -> None:
        self.idle_in, self.partition_of = allocator._idle_in, allocator._pool_partition
        self.cores, self.options = allocator._pool_cores, allocator._options
        self.free_in, self.changes_in = allocator.free_in_partitions, allocator.changes_in
        self.taken_from, self.holder = allocator._taken_from, allocator

    @cython.ccall
    @cython.locals(
        idle=list,
        chosen=list,
        job=cython.Py_ssize_t,
        pool=cython.Py_ssize_t,
        count=cython.Py_ssize_t,
        partition=cython.Py_ssize_t,
    )
    def take(self, job: int) -> Allocation | None:
        """The lowest idle nodes of the first of `job`'s pools with enough of them (a prefix of
        the pool's idle list), taken from it and held by `job`; None if no pool has enough."""
        for pool, count in self.options[job]:
            idle = self.idle_in[pool]
            if count <= len(idle):
                chosen = idle[:count]
                del idle[:count]
                partition = self.partition_of[pool]
                self.free_in[partition] -= count
                self.changes_in[partition] += 1
                self.taken_from[job] = pool
                self.holder._hold(job, chosen)
                return _listed(chosen, self.cores[pool])
        return None

    @cython.ccall
    @cython.locals(
        allocation=Allocation,
        nodes=list,
        job=cython.Py_ssize_t,
        pool=cython.Py_ssize_t,
        partition=cython.Py_ssize_t,
    )
    def give_back(self, job: int, allocation: Allocation) -> bool:
        """Give the nodes `take` gave `job` back to their pool; False (nothing done) if `take`
        did not give them."""
        pool = self.taken_from[job]
        if pool < 0:
            return False
        self.taken_from[job] = -1
        nodes = allocation.node_ids
        insert_nodes(self.idle_in[pool], nodes, True)  # a slice of the pool's list, ascending
        partition = self.partition_of[pool]
        self.free_in[partition] += len(nodes)
        self.changes_in[partition] += 1
        self.holder._unhold(job, nodes)
        return True


class PartitionAllocator(CompactAllocator):
    """Whole idle nodes of the job's partition, lowest ids first (the compact rule within it).

    A partition is split into pools, one per node type it holds (`Eligibility`); a job takes the
    lowest idle nodes of the first pool of its partition whose type can run it (memory, GPUs:
    `cosched.simulator.resources`) and has enough of them idle."""

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
        pools = partition_pools(platform, self.node_sets)
        self.pools = pools
        self.pool_type = [kind for _, kind, _ in pools]  # per pool: its node type
        self.pool_members = [members for *_, members in pools]  # per pool: its nodes, ascending
        self._idle_in = [list(members) for members in self.pool_members]  # per pool: idle nodes
        self.pools_in: list[list[int]] = [[] for _ in self.node_sets]  # per partition: its pools
        self._node_pool = [-1] * platform.nodes
        for pool, (partition, _, members) in enumerate(pools):
            self.pools_in[partition].append(pool)
            for node in members:
                self._node_pool[node] = pool
        self._pool_partition = [partition for partition, _, _ in pools]
        # idle nodes of no partition (only reservations take them)
        self._outside = [node for node, pool in enumerate(self._node_pool) if pool < 0]
        self._idle = []  # the pools' lists replace the whole machine's idle list
        per_node = [group.cores_per_node for group in platform.node_groups]
        self._pool_cores = [per_node[kind] for kind in self.pool_type]
        # per partition: its idle nodes
        self.free_in_partitions = [len(nodes) for nodes in self.node_sets]
        # per partition: nodes taken or given back so far (a pass's state key)
        self.changes_in = [0] * len(self.node_sets)
        self._options: list[list[tuple[int, int]]] = []
        # per job (`bind`): the pool `allocate` took all its nodes from, -1 if none
        self._taken_from: list[int] = []
        self._units = np.zeros(0, dtype=np.int64)
        self._starts = _PoolStarts(self)

    def bind(self, workload) -> None:
        """Each job's pools (its partition's node types that can run it) and the nodes it needs
        on each; a job that none of them can run is an InputError naming it."""
        super().bind(workload)
        table = nodes_needed_in_pools(workload, self.platform, self.partition_of, self.pools)
        # jobs alike share one options list (a run has few distinct ones)
        rows, inverse = _distinct_rows(table)
        distinct = [
            [(pool, count) for pool, count in enumerate(row) if count] for row in rows.tolist()
        ]
        self._options = self._starts.options = [distinct[row] for row in inverse.ravel().tolist()]
        self._taken_from = self._starts.taken_from = [-1] * len(workload)
        self._units = _fewest(table, none=0)
        if not self._units.all():
            job = int(np.argmin(self._units))
            raise InputError(
                f"job {int(workload.job_id[job])} cannot run on any node of its partition "
                f"(its cores, memory or GPUs)",
                source=workload.source or None,
                field="partitions",
            )
        # EASY reasons on pools where a partition holds several node types
        self.eligibility = self if len(self._idle_in) > len(self.node_sets) else None

    def eligible_nodes(self, job: int) -> np.ndarray:
        """The nodes `job` may run on: those of its partition's pools that can run it."""
        members = self.pool_members
        return np.array(sorted(n for pool, _ in self._options[job] for n in members[pool]))

    def free_units_in(self, partition: int) -> int:
        """Idle nodes of `partition`."""
        return self.free_in_partitions[partition]

    def units(self, engine, job: int) -> int:
        return int(self._units[job])

    def static_units(self, cores: np.ndarray) -> np.ndarray:
        """Per job, the fewest nodes it needs on a pool of its partition."""
        return self._units

    def admits(self, job: int, nodes: np.ndarray) -> bool:
        """True if the nodes are of one pool of the job's partition that can run it, enough of
        them."""
        pools = {self._node_pool[node] for node in nodes.tolist()}
        if len(pools) != 1:
            return False
        (pool,) = pools
        return any(own == pool and nodes.size >= count for own, count in self._options[job])

    def pools_of(self, job: int) -> list[tuple[int, int]]:
        return self._options[job]

    def free_in(self, pool: int) -> int:
        return len(self._idle_in[pool])

    def pool_of_node(self, node: int) -> int:
        return self._node_pool[node]

    @property
    def pool_sizes(self) -> list[int]:
        return [len(members) for members in self.pool_members]

    def pool_now(self, job: int) -> tuple[int, int] | None:
        idle_in = self._idle_in
        for pool, count in self._options[job]:
            if count <= len(idle_in[pool]):
                return pool, count
        return None

    def find(self, engine, job: int) -> Allocation | None:
        found = self.pool_now(job)
        return None if found is None else self.pool_allocation(*found)

    def pool_allocation(self, pool: int, count: int) -> Allocation | None:
        """The lowest `count` idle nodes of `pool` (not taken), or None if fewer are idle."""
        idle = self._idle_in[pool]
        if count > len(idle):
            return None
        return Allocation(idle[:count], self._pool_cores[pool])

    @cython.locals(starts=_PoolStarts)
    def allocate(self, engine, job: int) -> Allocation | None:
        starts = self._starts
        return starts.take(job)

    def idle_nodes(self, limit: int | None = None) -> np.ndarray:
        idle = sorted(chain(self._outside, *self._idle_in))
        return np.array(idle[:limit], dtype=np.int64)

    def free_cores(self) -> int:
        cores, outside = self._full, self._outside
        idle_outside = len(outside) * self._cpn if cores is None else int(cores[outside].sum())
        return idle_outside + sum(map(mul, map(len, self._idle_in), self._pool_cores))

    def commit(self, job: int, allocation: Allocation) -> None:
        chosen = allocation.node_ids
        self._taken_from[job] = -1  # it may now hold nodes of several pools
        self._move_nodes(chosen, taken=True)
        self._hold(job, chosen)

    @cython.locals(nodes=list, starts=_PoolStarts)
    def release(self, job: int, allocation: Allocation) -> None:
        starts = self._starts
        if not starts.give_back(job, allocation):  # of several pools, or chosen by the scheduler
            nodes = allocation.node_ids
            self._move_nodes(nodes, taken=False)
            self._unhold(job, nodes)

    @cython.locals(
        idle_in=list,
        free_in=list,
        changes=list,
        nodes=list,
        idle=list,
        pool=cython.Py_ssize_t,
        step=cython.Py_ssize_t,
    )
    def _move_nodes(self, nodes: list[int], taken: bool) -> None:
        """Take `nodes` out of the idle lists of their pools (or of the nodes outside every
        partition), or give them back, node by node: the path of nodes a scheduler chose or of
        several pools, where `_PoolStarts` moves one pool's slice."""
        where, idle_in, free_in, of = (
            self._node_pool,
            self._idle_in,
            self.free_in_partitions,
            self._pool_partition,
        )
        changes, step = self.changes_in, -1 if taken else 1
        for node in nodes:
            pool = where[node]
            idle = self._outside if pool < 0 else idle_in[pool]
            if taken:
                del idle[bisect.bisect_left(idle, node)]
            else:
                bisect.insort(idle, node)
            if pool >= 0:
                free_in[of[pool]] += step
                changes[of[pool]] += 1


def partition_pools(
    platform: Platform, node_sets: Sequence[Sequence[int]]
) -> list[tuple[int, int, tuple[int, ...]]]:
    """(partition, node type, nodes ascending) of every pool: a partition's nodes of one node type,
    in partition, then node type order."""
    ends = np.cumsum([group.nodes for group in platform.node_groups])
    pools = []
    for partition, nodes in enumerate(node_sets):
        nodes = sorted(nodes)
        types = np.searchsorted(ends, nodes, side="right").tolist()
        for kind in sorted(set(types)):
            members = tuple(node for node, of in zip(nodes, types) if of == kind)
            pools.append((partition, kind, members))
    return pools


def nodes_needed_in_pools(
    workload: Workload,
    platform: Platform,
    partition_of: Sequence[int] | np.ndarray,
    pools: list[tuple[int, int, tuple[int, ...]]],
) -> np.ndarray:
    """Per job and pool: the whole nodes the job needs there (`cosched.simulator.resources`), 0
    where the pool is not of the job's partition or cannot run it (its type cannot, or the pool
    has fewer nodes). The one table both the partition limits and the allocator read."""
    cores = np.asarray(workload.cores, dtype=np.int64)
    counts = np.stack(
        [
            whole_nodes_needed(cores, workload.memory, workload.gpus, group)
            for group in platform.node_groups
        ],
        axis=1,
    )
    table = counts[:, [kind for _, kind, _ in pools]]
    owners = np.array([partition for partition, _, _ in pools], dtype=np.int64)
    sizes = np.array([len(members) for *_, members in pools], dtype=np.int64)
    mine = np.asarray(partition_of, dtype=np.int64)[:, None] == owners[None, :]
    return np.where(mine & (table > CANNOT) & (table <= sizes), table, 0)


def _fewest(table: np.ndarray, none: int) -> np.ndarray:
    """Per job (row): the fewest nodes over the pools that can run it, `none` where none can."""
    fewest = np.where(table > 0, table, np.iinfo(np.int64).max).min(axis=1)
    return np.where((table > 0).any(axis=1), fewest, none)


def _distinct_rows(table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`np.unique(table, axis=0, return_inverse=True)` of a non-negative int table, by one int64
    key per row where the keys fit (a sort of numbers, not of rows)."""
    base = int(table.max(initial=0)) + 1
    if base ** table.shape[1] >= 2**62:
        return np.unique(table, axis=0, return_inverse=True)
    keys = table @ (base ** np.arange(table.shape[1], dtype=np.int64))
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    return table[first], inverse


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


# what a partition may not share with another, and the error saying it does
_OVERLAP = {
    "nodes": "node {value} is also in partition {owner!r}; partitions do not overlap",
    "swf_ids": "SWF {map_by} {value} is also mapped to partition {owner!r}",
}


def _check_disjoint(partitions: list[Partition], map_by: str, source: str) -> None:
    """Names, nodes and SWF numbers each belong to one partition."""
    names: set[str] = set()
    owners: dict[str, dict[int, str]] = {field: {} for field in _OVERLAP}
    for position, partition in enumerate(partitions):
        where = f"partitions[{position}]"
        if partition.name in names:
            raise InputError(
                f"partition name {partition.name!r} given twice",
                source=source,
                field=f"{where}.name",
            )
        names.add(partition.name)
        for field, values in (("nodes", partition.nodes), ("swf_ids", partition.swf_ids)):
            owner = owners[field]
            for value in values:
                if value in owner:
                    raise InputError(
                        _OVERLAP[field].format(value=value, owner=owner[value], map_by=map_by),
                        source=source,
                        field=f"{where}.{field}",
                    )
                owner[value] = partition.name


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
