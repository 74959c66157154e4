"""The result of one simulation run: per-job start and end times and nodes, with its inputs."""

from __future__ import annotations

import operator
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from itertools import pairwise

try:  # Cython's pure-Python mode: node_arrays's loops compile to C, and do nothing in plain Python
    import cython

    if not cython.compiled:  # plain Python: the light stand-in, not Cython's slower shadow
        raise ModuleNotFoundError
except ModuleNotFoundError:
    from cosched import _pure_cython as cython

import numpy as np

from cosched.simulator.allocators import Allocation
from cosched.simulator.platform import Platform
from cosched.simulator.workload import Workload

__all__ = ["SimulationResult", "JobNodes", "node_arrays"]


class JobNodes(Sequence):
    """Each job's node ids, an int64 array per job in job order, kept as one flat array and the
    jobs' counts: a run of 54,034 jobs holds one array, not 54,034, and jobs.csv and the metrics
    read the flat array and the counts directly. Indexing a job gives a view of the flat array."""

    __slots__ = ("flat", "counts", "_bounds")

    def __init__(self, flat: np.ndarray, counts: np.ndarray):
        self.flat, self.counts = flat, counts
        self._bounds: list[int] | None = None  # built on the first read of a job (`_starts`)

    def _starts(self) -> list[int]:
        """Where each job's ids begin in `flat`, then their total: built when a job is first read,
        as jobs.csv and the metrics read `flat` and `counts` alone."""
        if self._bounds is None:
            self._bounds = [0, *np.cumsum(self.counts).tolist()]
        return self._bounds

    @classmethod
    def of(cls, nodes: Sequence) -> JobNodes:
        """`nodes` itself if it is a JobNodes, else its arrays (or lists) of ids joined into one."""
        if isinstance(nodes, JobNodes):
            return nodes
        counts = np.fromiter(map(len, nodes), np.int64, len(nodes))
        flat = np.concatenate(nodes) if len(nodes) else np.zeros(0, np.int64)
        return cls(flat, counts)

    def __len__(self) -> int:
        return len(self.counts)

    def __getitem__(self, job):
        if isinstance(job, slice):
            return [self[index] for index in range(*job.indices(len(self)))]
        job = operator.index(job)
        if job < 0:
            job += len(self)
        if not 0 <= job < len(self):
            raise IndexError(f"job {job} out of range for {len(self)} jobs")
        starts = self._starts()
        return self.flat[starts[job] : starts[job + 1]]

    def __iter__(self) -> Iterator[np.ndarray]:
        flat = self.flat
        return (flat[begin:end] for begin, end in pairwise(self._starts()))

    def __repr__(self) -> str:
        return f"JobNodes({len(self)} jobs, {self.flat.size} node ids)"


@dataclass(eq=False)
class SimulationResult:
    """Per-job start/end times and node lists of one run, with the inputs that produced them."""

    workload: Workload
    platform: Platform
    scheduler: str
    start: np.ndarray
    end: np.ndarray
    nodes: Sequence[np.ndarray]  # kept as JobNodes
    wall_seconds: float
    co_scheduled: bool = False
    log: list | None = None
    actions: list | None = (
        None  # the engine's action log (Engine(log_actions=True)): ACTION_COLUMNS
    )
    options: dict = field(default_factory=dict)
    lifecycle: dict | None = (
        None  # per-job state, preemptions, resizes, lost work: with job models or actions
    )
    speed_model: object = (
        None  # the run's speed model (co-location), None when every job ran at speed 1
    )

    def __post_init__(self) -> None:
        self.nodes = JobNodes.of(self.nodes)

    @property
    def makespan(self) -> float:
        """Last completion minus first submission (000 §4.1)."""
        return float(np.nanmax(self.end) - self.workload.submit.min()) if self.end.size else 0.0

    def jobs_frame(self):
        """The per-job table (pandas): ids, times, cores, `;`-joined node ids, co-scheduling and
        lifecycle columns."""
        import pandas as pd

        w = self.workload
        columns = {
            "job_id": w.job_id,
            "submit_time": w.submit,
            "start_time": self.start,
            "end_time": self.end,
            "wait_time": self.start - w.submit,
            "run_time": self.end - self.start,
            "estimate": w.estimate,
            "cores": w.cores,
            "node_count": JobNodes.of(self.nodes).counts,
            "nodes": [";".join(map(str, n.tolist())) for n in self.nodes],
        }
        if w.app is not None:
            columns["app"] = w.app
        if w.memory is not None:
            columns["memory_per_core"] = w.memory  # MiB
        if w.gpus is not None:
            columns["gpus"] = w.gpus
        if self.co_scheduled:
            columns["compact_time"] = w.run
            columns["speedup"] = w.run / (self.end - self.start)  # 003 §2.3.2.2, (2.7)
        if self.lifecycle is not None:
            columns.update(self.lifecycle)
        return pd.DataFrame(columns)


@cython.ccall  # a C function and its Python wrapper, which the engine and the tests call
@cython.boundscheck(False)
@cython.wraparound(False)
@cython.locals(
    job=cython.Py_ssize_t,
    size=cython.Py_ssize_t,
    total=cython.Py_ssize_t,
    position=cython.Py_ssize_t,
    node=cython.longlong,
    first=cython.Py_ssize_t,
    sizes=cython.longlong[::1],
    flat=cython.longlong[::1],
    allocation=Allocation,
    job_ids=list,
)
def node_arrays(allocations: list[Allocation | None]) -> JobNodes:
    """Each job's node ids (none for a job that never ran), copied from the allocations into one
    flat array by C loops (compiled: a third of the time numpy's converters take for SDSC-SP2's
    664,032 ids): a run's ids (`Allocation._is_run`) from its first id and count, no list made,
    the others from their lists."""
    counts = np.empty(len(allocations), np.int64)
    sizes, total = counts, 0
    for job in range(len(allocations)):
        allocation = allocations[job]
        size = 0 if allocation is None else allocation._size()
        sizes[job] = size
        total += size
    array = np.empty(total, np.int64)
    flat, position = array, 0
    for job in range(len(allocations)):
        allocation = allocations[job]
        if allocation is None:
            continue
        if allocation._is_run():
            first = allocation._first
            for node in range(first, first + allocation._count):
                flat[position] = node
                position += 1
            continue
        job_ids = allocation._ids if allocation._ids is not None else allocation.node_ids
        for node in job_ids:
            flat[position] = node
            position += 1
    return JobNodes(array, counts)
