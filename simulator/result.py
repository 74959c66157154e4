"""The result of one simulation run: per-job start and end times and nodes, with its inputs."""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import accumulate, chain

import numpy as np

from cosched.simulator.allocators import Allocation
from cosched.simulator.platform import Platform
from cosched.simulator.workload import Workload

__all__ = ["SimulationResult", "node_arrays"]

_NO_NODES: list[int] = []


@dataclass(eq=False)
class SimulationResult:
    """Per-job start/end times and node lists of one run, with the inputs that produced them."""

    workload: Workload
    platform: Platform
    scheduler: str
    start: np.ndarray
    end: np.ndarray
    nodes: list
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
            "node_count": np.fromiter((n.size for n in self.nodes), np.int64, len(self.nodes)),
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


def node_arrays(allocations: list[Allocation | None]) -> list[np.ndarray]:
    """Each job's node ids as an array (empty for a job that never ran): views of one array built
    from the allocations' lists (one numpy call per run instead of one per job)."""
    ids = [_NO_NODES if a is None else a.node_ids for a in allocations]
    flat = np.fromiter(chain.from_iterable(ids), np.int64)
    ends = accumulate(map(len, ids))
    nodes, begin = [], 0
    for end in ends:
        nodes.append(flat[begin:end])
        begin = end
    return nodes
