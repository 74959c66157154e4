"""What each job needs of each node type: the one place that says which nodes a job may use.

A job asks for cores, memory per core (MiB) and GPUs (`Workload.memory`, `Workload.gpus`). On a node
type with `cores_per_node` cores, `memory_per_node` MiB and `gpus_per_node` GPUs, a job placed on
n nodes puts p = ceil(cores / n) processes on a node, which use p x memory per core and
ceil(gpus / n) GPUs there. Whole nodes (the compact allocator): a job takes the fewest nodes where
each of the three fits,

    n = max(ceil(cores / min(cores_per_node, floor(memory_per_node / memory per core))),
            ceil(gpus / gpus_per_node))

so memory can make a job wider than its cores alone would. A node type where that is impossible (a
core's memory above the node's, GPUs on a type without any, or more nodes than the type has) cannot
run the job. A node type without memory (`memory_per_node` None) does not count memory. A job runs
on nodes of one type: the first type in platform order that has enough of them free.

`Needs` holds these counts per job and node type; `units` (the fewest nodes over the types that can
run the job) is what backfilling reasons with. A job that no node type can run is an input error
naming the job. Other restrictions of where a job may run (partitions) narrow the same table: a
node type (or a node set inside it) a job may not use is one it cannot run on.
"""

from __future__ import annotations

import numpy as np

from cosched.errors import InputError
from cosched.simulator.platform import NodeGroup, Platform

__all__ = ["Needs", "whole_nodes_needed", "per_node_use", "CANNOT"]

CANNOT = 0  # the node count of a node type that cannot run the job (every job needs a node)


def whole_nodes_needed(
    cores: np.ndarray, memory: np.ndarray | None, gpus: np.ndarray | None, group: NodeGroup
) -> np.ndarray:
    """Whole nodes of `group` each job needs (formula of the module docstring), CANNOT where none
    suffice."""
    # cosched's own rule (docs/resources.md): the seeds model cores only
    processes = np.full(cores.shape, group.cores_per_node, dtype=np.int64)
    if memory is not None and group.memory_per_node is not None:
        asks = memory > 0
        fit = np.floor(group.memory_per_node / np.where(asks, memory, 1.0))
        processes = np.where(asks, np.minimum(processes, fit), processes).astype(np.int64)
    count = -(-cores // np.maximum(processes, 1))
    possible = processes > 0
    if gpus is not None:
        asks = gpus > 0
        if group.gpus_per_node:
            count = np.maximum(count, np.where(asks, -(-gpus // group.gpus_per_node), 0))
        else:
            possible &= ~asks
    possible &= count <= group.nodes
    return np.where(possible, count, CANNOT).astype(np.int64)


def per_node_use(cores: int, memory: float, gpus: int, nodes: int) -> tuple[int, float, int]:
    """(processes, MiB, GPUs) a job of `cores`, `memory` per core and `gpus` uses on each of its
    `nodes` nodes (module docstring)."""
    processes = -(-cores // nodes)
    return processes, processes * memory, -(-gpus // nodes)


class Needs:
    """Per job and node type: the whole nodes it needs there (CANNOT: not there), and its units.

    Built once per run from the workload and the platform; raises InputError naming the first job
    that no node type can run."""

    __slots__ = ("counts", "units", "starts", "ends", "_options", "memory", "gpus", "_per_node")

    def __init__(self, workload, platform: Platform):
        cores = np.asarray(workload.cores, dtype=np.int64)
        groups = platform.node_groups
        self.memory = workload.memory
        self.gpus = workload.gpus
        self.counts = np.stack(
            [whole_nodes_needed(cores, self.memory, self.gpus, group) for group in groups], axis=1
        )
        runnable = self.counts > CANNOT
        if not runnable.any(axis=1).all():
            job = int(np.argmin(runnable.any(axis=1)))
            raise InputError(
                f"job {int(workload.job_id[job])} cannot run on any node type: "
                + _demand_text(cores[job], self.memory, self.gpus, job)
                + "; the platform has "
                + "; ".join(_group_text(group) for group in groups),
                source=workload.source or None,
                field="job_id",
            )
        self.units = np.where(runnable, self.counts, np.iinfo(np.int64).max).min(axis=1)
        sizes = np.array([group.nodes for group in groups], dtype=np.int64)
        self.ends = np.cumsum(sizes)
        self.starts = self.ends - sizes
        self._per_node = [group.cores_per_node for group in groups]
        self._options: list[list[tuple[int, int, int, int]]] | None = None

    @property
    def options(self) -> list[list[tuple[int, int, int, int]]]:
        """Per job: (first node id, end node id, node count, cores per node) of each node type
        that can run it, in platform order (built when first read: a run whose node counts are
        the cores-only ones never reads it)."""
        if self._options is None:
            starts, ends, per_node = self.starts.tolist(), self.ends.tolist(), self._per_node
            self._options = [
                [(starts[g], ends[g], count, per_node[g]) for g, count in enumerate(row) if count]
                for row in self.counts.tolist()
            ]
        return self._options

    def admits(self, job: int, nodes: np.ndarray) -> bool:
        """True if whole `nodes` (ascending ids) hold the job within every resource: one node type
        that can run it, and enough of them for its processes, memory and GPUs."""
        group = int(np.searchsorted(self.ends, nodes[0], side="right"))
        count = int(self.counts[job, group])
        return bool(count) and nodes[-1] < self.ends[group] and nodes.size >= count

    def same_as_cores_only(self, platform: Platform, cores: np.ndarray) -> bool:
        """True when every job needs exactly ceil(cores / cores per node) nodes of one node type:
        the plain platform's rule, which needs no table."""
        return platform.uniform and bool(
            (self.counts[:, 0] == -(-cores // platform.cores_per_node)).all()
        )


def _demand_text(cores: int, memory, gpus, job: int) -> str:
    text = f"{cores} core{'s' if cores != 1 else ''}"
    if memory is not None and memory[job] > 0:
        text += f", {memory[job]:g} MiB per core"
    if gpus is not None and gpus[job] > 0:
        text += f", {int(gpus[job])} GPUs"
    return text


def _group_text(group: NodeGroup) -> str:
    text = f"{group.name}: {group.nodes} nodes x {group.cores_per_node} cores"
    if group.memory_per_node is not None:
        text += f", {group.memory_per_node:g} MiB"
    if group.gpus_per_node:
        text += f", {group.gpus_per_node} GPUs"
    return text
