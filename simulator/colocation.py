"""Co-location on the simulator engine: the half-socket allocator and the heatmap speed model (000 §3.5).

A co-scheduled job is spread over twice the nodes a compact allocation needs, using half of each node's
cores (half-socket binding); another job may take the other half, so a node holds at most two jobs.
Backfilling counts *half nodes*: a spread job holds ceil(cores / half) of them, a compact one (Popularity's
unfriendly jobs, and jobs too big to spread over distinct nodes) both halves of ceil(cores / cores_per_node)
nodes.

Placement (003 §5.2.1): jobs are first deployed spread on idle nodes while enough are idle, then on
nodes that are already half full, in ascending node order (``prefer="idle"``); ``prefer="shared"``
fills half-full nodes first.

Speed (000 §3.5, formula (4.1)): each running job's speedup is the minimum pairwise heatmap speedup over
its current neighbours on all its nodes; a spread job with no neighbour runs at its spread speedup
(default 1.0, or the per-application value of the heatmap file); a compact job at 1.0. The engine rescales
the remaining time at each change (formula (4.2)).
"""
from __future__ import annotations

import numpy as np

from cosched.errors import InputError
from cosched.simulator.allocators import EMPTY, Allocation, Allocator
from cosched.theory.heatmap import Heatmap
from cosched.simulator.platform import Platform

__all__ = [
    "CoLocationAllocator", "HeatmapSpeedModel", "CoContext", "co_context", "PLACEMENTS", "COMPACT",
    "DEFAULT_SPREAD_SPEEDUP",
]

PLACEMENTS = ("idle", "shared")
COMPACT = "compact"  # placement hint: deploy this job on whole nodes (Popularity's least friendly jobs)
DEFAULT_SPREAD_SPEEDUP = 1.0  # 000 §3.5: a job alone on its spread nodes runs at compact speed unless told


class CoLocationAllocator(Allocator):
    """Half-socket binding over twice the nodes, at most two jobs per node; units are half nodes."""

    slots = 2

    def __init__(self, platform: Platform, prefer: str = "idle"):
        if platform.cores_per_node % 2:
            raise InputError(f"half-socket binding needs an even number of cores per node, the platform has "
                             f"{platform.cores_per_node}", field="platform")
        if prefer not in PLACEMENTS:
            raise InputError(f"unknown placement {prefer!r}; choose from {PLACEMENTS}", field="prefer")
        super().__init__(platform)
        self._cpn = platform.cores_per_node
        self.half = self._cpn // 2
        self.prefer = prefer
        self.free_halves = 2 * platform.nodes
        self._free_cores = platform.total_cores  # cores not bound to any job (ELiSE get_idle_cores)
        self._units: list[int] | None = None
        self._compact_units: list[int] | None = None

    @property
    def total_units(self) -> int:
        return 2 * self.platform.nodes

    def is_compact(self, engine, job: int) -> bool:
        """Deployed compact: hinted by the scheduler, or too big to spread over distinct nodes."""
        return engine.placement[job] == COMPACT or -(-engine.cores[job] // self.half) > self.platform.nodes

    def units(self, engine, job: int) -> int:
        if self._units is None:  # per-job tables, built once: EASY asks for units thousands of times
            cores = np.asarray(engine.cores, dtype=np.int64)
            compact = 2 * -(-cores // self._cpn)
            spread = -(-cores // self.half)
            self._units = np.where(spread > self.platform.nodes, compact, spread).tolist()
            self._compact_units = compact.tolist()
        return self._compact_units[job] if engine.placement[job] == COMPACT else self._units[job]

    def units_of(self, allocation: Allocation) -> int:
        return int(allocation.nodes.size * (allocation.cores // self.half))

    def free_units(self) -> int:
        return self.free_halves

    def free_cores(self) -> int:
        return self._free_cores

    def find(self, engine, job: int) -> Allocation | None:
        used, state = self.state.used, self.state
        if self.is_compact(engine, job):
            count = -(-engine.cores[job] // self._cpn)
            if count > state.idle:
                return None
            return Allocation(np.flatnonzero(used == 0)[:count], self._cpn)
        count = -(-engine.cores[job] // self.half)
        shared = self.free_halves - 2 * state.idle  # nodes with exactly one free half
        if count > state.idle + shared:
            return None
        idle = np.flatnonzero(used == 0)
        if self.prefer == "idle":
            if count <= idle.size:
                return Allocation(idle[:count], self.half)
            nodes = np.concatenate([idle, np.flatnonzero(used == self.half)[:count - idle.size]])
        else:
            half_full = np.flatnonzero(used == self.half)
            if count <= half_full.size:
                return Allocation(half_full[:count], self.half)
            nodes = np.concatenate([half_full, idle[:count - half_full.size]])
        return Allocation(nodes, self.half)

    def commit(self, job: int, allocation: Allocation) -> None:
        super().commit(job, allocation)
        self.free_halves -= allocation.nodes.size * (allocation.cores // self.half)
        self._free_cores -= allocation.nodes.size * allocation.cores

    def release(self, job: int, allocation: Allocation) -> None:
        super().release(job, allocation)
        self.free_halves += allocation.nodes.size * (allocation.cores // self.half)
        self._free_cores += allocation.nodes.size * allocation.cores


class HeatmapSpeedModel:
    """Speedup of each running job: min pairwise speedup over its neighbours (000 §3.5, (4.1))."""

    def __init__(self, speedups: np.ndarray, app: np.ndarray, spread: np.ndarray):
        self.speedups = speedups  # (k, k): speedup of row application next to column application
        self.app = app  # heatmap index of each job (engine order)
        self.spread = spread  # (k,) speedup of each application alone on spread nodes

    def speed_of(self, engine, job: int) -> float:
        allocation = engine.allocation[job]
        occupants = engine.allocator.state.occupants[allocation.nodes]
        neighbours = occupants[(occupants != job) & (occupants > EMPTY)]
        app = self.app[job]
        if neighbours.size:
            return float(self.speedups[app, self.app[neighbours]].min())  # 000 §3.5, formula (4.1)
        if allocation.cores < engine.platform.cores_per_node:  # spread, alone
            return float(self.spread[app])
        return 1.0

    def speeds(self, engine, jobs: np.ndarray):
        speed_of = self.speed_of
        return [(job, speed_of(engine, job)) for job in jobs.tolist()]


class CoContext:
    """What a co-scheduled run needs besides the scheduler: heatmap matrix, job applications, spread speedups."""

    def __init__(self, speedups: np.ndarray, app: np.ndarray, spread: np.ndarray, names: tuple[str, ...]):
        self.speedups, self.app, self.spread, self.names = speedups, app, spread, names

    def allocator(self, platform: Platform, prefer: str = "idle") -> CoLocationAllocator:
        return CoLocationAllocator(platform, prefer)

    def speed_model(self) -> HeatmapSpeedModel:
        return HeatmapSpeedModel(self.speedups, self.app, self.spread)


def co_context(workload, heatmap: Heatmap | None = None, spread_speedup: float | None = None) -> CoContext:
    """Link each job to its heatmap application; without a heatmap every pair has speedup 1.0.

    spread_speedup: the speedup of a job alone on its spread nodes; None takes the heatmap's
    per-application value where given, else DEFAULT_SPREAD_SPEEDUP.
    """
    if spread_speedup is not None and not spread_speedup > 0:
        raise InputError(f"spread speedup must be positive, got {spread_speedup}", field="spread_speedup")
    if heatmap is None:
        spread = DEFAULT_SPREAD_SPEEDUP if spread_speedup is None else spread_speedup
        return CoContext(np.ones((1, 1)), np.zeros(len(workload), dtype=np.int64), np.array([spread]), ("*",))
    if workload.app is None:
        raise InputError("a heatmap needs the workload's 'app' column to link jobs to applications",
                         source=workload.source or None, field="app")
    index = {name: i for i, name in enumerate(heatmap.applications)}
    app = np.fromiter((index.get(str(a), -1) for a in workload.app), np.int64, len(workload))
    if (app < 0).any():
        unknown = sorted({str(a) for a, i in zip(workload.app, app) if i < 0})
        raise InputError(f"application(s) not in the heatmap: {unknown[:8]}", source=workload.source or None,
                         field="app")
    used = np.unique(app)
    speedups = np.ones((len(heatmap), len(heatmap)))  # pairs of applications absent from the workload: unused
    speedups[np.ix_(used, used)] = heatmap.speedup_matrix([heatmap.applications[i] for i in used])
    spread = heatmap.spread_speedups(DEFAULT_SPREAD_SPEEDUP) if spread_speedup is None \
        else np.full(len(heatmap), float(spread_speedup))
    return CoContext(speedups, app, spread, heatmap.applications)
