"""Co-location on the simulator engine: the half-socket allocator and the heatmap speed model
(000 §3.5).

A co-scheduled job is spread over twice the nodes a compact allocation needs, using half of each
node's cores (half-socket binding); another job may take the other half, so a node holds at most two
jobs. Backfilling counts *half nodes*: a spread job holds ceil(cores / half) of them, a compact one
(Popularity's unfriendly jobs, and jobs too big to spread over distinct nodes) both halves of
ceil(cores / cores_per_node) nodes.

Placement (003 §5.2.1): jobs are first deployed spread on idle nodes while enough are idle, then on
nodes that are already half full, in ascending node order (``prefer="idle"``); ``prefer="shared"``
fills half-full nodes first.

Memory and GPUs (`cosched.simulator.resources`): a spread job on n = ceil(cores / half) nodes puts
p = ceil(cores / n) processes on each, using p x memory per core and ceil(gpus / n) GPUs there. Two
jobs share a node only if their memory and GPUs on it fit the node's together; a job whose use does
not fit a node even alone is deployed compact, on as many whole nodes as its memory and GPUs need.
Co-location runs on platforms of one node type.

Speed (000 §3.5, formula (4.1)): each running job's speedup is the minimum pairwise heatmap speedup
over its current neighbours on all its nodes; a spread job with no neighbour runs at its alone
speedup (default 1.0, or the per-application value of the heatmap file); a compact job at 1.0. The
engine rescales the remaining time at each change (formula (4.2)).

The papers leave two values open, so both are options (``co_context``): a pair measured in neither
direction takes the heatmap's default speedup (``missing_pair="default"``) or, as ELiSE's simulator
does, the job's mean measured speedup over its measured partners (``"mean"``); a job alone on spread
nodes runs at 1.0 (``"one"``), at its maximum measured speedup as in ELiSE (``"max"``), or at a
given value. Popularity ranks count measured pairs only (``CoContext.known``), whatever fills the
others.
"""

from __future__ import annotations

import warnings
from array import array
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

try:  # Cython's pure-Python mode: the types below compile to C, and do nothing in plain Python
    import cython

    if not cython.compiled:  # plain Python: the light stand-in, not Cython's slower shadow
        raise ModuleNotFoundError
except ModuleNotFoundError:
    from cosched import _pure_cython as cython

from cosched.deprecation import UNSET, renamed_keyword
from cosched.errors import InputError
from cosched.simulator.allocators import Allocation, Allocator, NodeState, _listed, _Units
from cosched.simulator.bisection import TouchedJobs
from cosched.simulator.platform import Platform
from cosched.simulator.resources import Needs, per_node_use

if TYPE_CHECKING:  # the engine imports this module: a plain simulation loads no theory module
    from cosched.theory.heatmap import Heatmap

__all__ = [
    "CoLocationAllocator",
    "HeatmapSpeedModel",
    "SpeedModel",
    "append_neighbourhood",
    "node_state",
    "CoContext",
    "co_context",
    "PLACEMENTS",
    "COMPACT",
    "DEFAULT_SPREAD_SPEEDUP",
    "MISSING_PAIRS",
    "ALONE_SPEEDUPS",
    "alone_speedup_value",
]

PLACEMENTS = ("idle", "shared")
COMPACT = (
    "compact"  # placement hint: deploy this job on whole nodes (Popularity's least friendly jobs)
)
DEFAULT_SPREAD_SPEEDUP = (
    1.0  # 000 §3.5: a job alone on its spread nodes runs at compact speed unless told
)
MISSING_PAIRS = (
    "default",
    "mean",
)  # speedup of a pair measured in neither direction: heatmap default, row mean
MEMORY_TOLERANCE = 1e-9  # relative: memory sums that exceed a node's by rounding only still fit
ALONE_SPEEDUPS = (
    "one",
    "max",
)  # alone on spread nodes: 1.0, or the job's maximum measured speedup (ELiSE)


def alone_speedup_value(text: str | float | None) -> str | float | None:
    """The alone speedup of a command line or spec: None (heatmap value, else 1.0), "one", "max" or
    a number > 0."""
    if text is None or text in ALONE_SPEEDUPS:
        return text
    try:
        value = float(text)
    except (TypeError, ValueError):
        raise InputError(
            f"alone speedup must be one, max or a positive number, got {text!r}",
            field="alone_speedup",
        ) from None
    if not (np.isfinite(value) and value > 0):
        raise InputError(f"alone speedup must be positive, got {text}", field="alone_speedup")
    return value


@cython.cfunc
@cython.locals(allocation=Allocation)
def _node_ids(allocation: Allocation) -> list[int]:
    """`allocation.node_ids`, its list read as a C field where it has one."""
    return allocation.node_ids if allocation._ids is None else allocation._ids


@cython.cclass
class _HalfNodes(_Units):
    """What the co-location allocator reads at every start attempt and updates at every start and
    end, as typed fields: compiled, its `find`, `commit` and `release` read them as C fields and
    call `is_compact` in C (as the engine's `_LoopState`); `CoLocationAllocator` subclasses it. In
    plain Python an ordinary base class. Its free units (`_Units._free`) are free half nodes; the
    engine starts and ends jobs through `allocate_cores` and `release_nodes` in C where
    `CoLocationAllocator.direct_entry` allows it."""

    # C fields when compiled (colocation.pxd)
    state: NodeState
    needs: Needs | None
    prefer: str
    half: int  # cores of a half node
    _cpn: int  # cores per node
    _free_cores: int
    # per job: the half nodes it holds spread, the whole nodes it holds compact
    _spread_halves: list[int]
    _compact_nodes: list[int]
    _hinted: object  # the engine (or view) whose hints `_placement` holds
    _placement: list[str | None]
    # with memory or GPUs (`needs`): per job, its cores and its memory and GPUs on each spread node;
    # per node, the memory and GPUs its jobs use (`_sharable_into`, `_account`)
    platform: Platform
    _job_cores: list[int]
    _memory_use: list[float]
    _gpu_use: list[int]
    memory_used: np.ndarray
    gpus_used: np.ndarray

    @cython.locals(index=cython.Py_ssize_t)
    def is_compact(self, engine, job: int) -> bool:
        """Deployed compact: hinted by the scheduler, or unable to spread (too big to spread over
        distinct nodes, or its memory or GPUs do not fit half nodes)."""
        if engine is not self._hinted:  # the engine's hint list, looked up once per engine
            self._hinted, self._placement = engine, engine.placement
        index = job  # compiled: the lists indexed by a C integer
        hint = self._placement[index]  # None for most jobs: no comparison of strings
        return (hint is not None and hint == COMPACT) or not self._spread_halves[index]

    @cython.locals(
        state=NodeState,
        count=cython.Py_ssize_t,
        shared=cython.Py_ssize_t,
        nodes=list,
        found=cython.Py_ssize_t,
        ascending=cython.bint,
        index=cython.Py_ssize_t,
    )
    def find(self, engine, job: int) -> Allocation | None:
        state, index = self.state, job  # `index`: the lists' C index, `job` their Python int
        if self.is_compact(engine, job):
            count = self._compact_nodes[index]
            if count > state.idle:
                return None
            return _listed(state.lowest_idle(count), self._cpn)
        count = self._spread_halves[index]
        shared = self._free - 2 * state.idle  # nodes with exactly one free half
        if count > state.idle + shared:
            return None
        nodes = [0] * count  # filled from the preferred kind of node first, then the other
        if self.prefer == "idle":
            found = state.idle_into(nodes, 0)
            ascending = found == count
            found += self._sharable_into(job, nodes, found)
        else:
            found = self._sharable_into(job, nodes, 0)
            ascending = found == count
            found += state.idle_into(nodes, found)
        return _listed(nodes, self.half, ascending) if found == count else None

    def allocate(self, engine, job: int) -> Allocation | None:
        return self.allocate_cores(engine, job, engine.cores[job])

    def allocate_cores(self, engine, job: int, cores: int) -> Allocation | None:
        """`Allocator.allocate`, a C method (`start_job`'s call): `find`, then `commit` what it
        found, as C calls."""
        allocation = self.find(engine, job)
        if allocation is not None:
            self.commit(job, allocation)
        return allocation

    @cython.locals(state=NodeState, ids=list, cores=cython.Py_ssize_t)
    def commit(self, job: int, allocation: Allocation) -> None:
        ids, cores, state = _node_ids(allocation), allocation._cores, self.state
        state.occupy(job, ids, cores)  # `Allocator.commit`, without a call of the base class
        self._free -= len(ids) * (cores // self.half)
        self._free_cores -= len(ids) * cores
        if self.needs is not None:
            self._account(job, allocation, 1)

    def release(self, job: int, allocation: Allocation) -> None:
        self.release_nodes(job, allocation)

    @cython.locals(state=NodeState, ids=list, cores=cython.Py_ssize_t)
    def release_nodes(self, job: int, allocation: Allocation) -> None:
        """`Allocator.release`, a C method (`end_job`'s call)."""
        ids, cores, state = _node_ids(allocation), allocation._cores, self.state
        state.vacate(job, ids, cores)  # `Allocator.release`, without a call of the base class
        self._free += len(ids) * (cores // self.half)
        self._free_cores += len(ids) * cores
        if self.needs is not None:
            self._account(job, allocation, -1)

    @cython.locals(state=NodeState)
    @cython.locals(fitting=list)
    def _sharable_into(self, job: int, chosen: list[int], at: int) -> int:
        """Write the lowest half-full nodes where the job's memory and GPUs fit beside their
        occupant's, ascending, over ``chosen[at:]`` (as many as fit there and exist); return how
        many (`NodeState.idle_into`)."""
        state = self.state
        if self.needs is None:
            return state.partly_used_into(chosen, at)
        group, nodes = self.platform.node_groups[0], np.array(state.partly_used_ids, dtype=np.int64)
        fits = self.gpus_used[nodes] + self._gpu_use[job] <= group.gpus_per_node
        if group.memory_per_node is not None:
            room = group.memory_per_node * (1 + MEMORY_TOLERANCE)
            fits &= self.memory_used[nodes] + self._memory_use[job] <= room
        fitting = nodes[fits][: len(chosen) - at].tolist()
        chosen[at : at + len(fitting)] = fitting
        return len(fitting)

    def _account(self, job: int, allocation: Allocation, sign: int) -> None:
        """Add (sign 1) or remove (-1) the job's memory and GPUs on its nodes."""
        needs, nodes = self.needs, allocation.nodes
        assert needs is not None  # called only with resources
        memory = 0.0 if needs.memory is None else float(needs.memory[job])
        gpus = 0 if needs.gpus is None else int(needs.gpus[job])
        _, memory_use, gpu_use = per_node_use(self._job_cores[job], memory, gpus, nodes.size)
        self.memory_used[nodes] += sign * memory_use
        self.gpus_used[nodes] += sign * gpu_use

    def free_cores(self) -> int:
        """Cores bound to no job (`Allocator.free_cores`), read by Filler's order at every pass."""
        return self._free_cores


class CoLocationAllocator(_HalfNodes, Allocator):
    """Half-socket binding over twice the nodes, at most two jobs per node; units are half nodes."""

    slots = 2

    def __init__(self, platform: Platform, prefer: str = "idle"):
        if not platform.uniform:
            raise InputError(
                f"co-location runs on platforms of one node type, {platform.name!r} has "
                f"{len(platform.node_groups)}",
                field="platform",
            )
        if platform.cores_per_node % 2:
            raise InputError(
                f"half-socket binding needs an even number of cores per node, the platform has "
                f"{platform.cores_per_node}",
                field="platform",
            )
        if prefer not in PLACEMENTS:
            raise InputError(
                f"unknown placement {prefer!r}; choose from {PLACEMENTS}", field="prefer"
            )
        super().__init__(platform)
        self._cpn = platform.cores_per_node
        self.half = self._cpn // 2
        self.prefer = prefer
        self._hinted, self._placement = None, []  # `is_compact`: no engine's hints read yet
        self._free, self._direct = 2 * platform.nodes, False  # free half nodes; `direct_entry`
        self._free_cores = platform.total_cores  # cores not bound to any job (ELiSE get_idle_cores)
        # per job (`bind`): the half nodes it holds spread (0: it cannot spread, being too big or
        # its memory or GPUs not fitting half nodes) and the whole nodes it holds compact
        self._spread_halves: list[int] = []
        self._compact_nodes: list[int] = []
        self._memory_use: list[float] = []
        self._gpu_use: list[int] = []
        self._job_cores: list[int] = []
        self.memory_used = np.zeros(platform.nodes)
        self.gpus_used = np.zeros(platform.nodes, dtype=np.int64)

    def bind(self, workload) -> None:
        super().bind(workload)
        needs, cores = self.needs, workload.cores
        spread = -(-cores // self.half)
        self._compact_nodes = (-(-cores // self._cpn) if needs is None else needs.units).tolist()
        fits = spread <= self.platform.nodes if needs is None else self._fits_spread(workload)
        self._spread_halves = np.where(fits, spread, 0).tolist()

    def _fits_spread(self, workload) -> np.ndarray:
        """Per job: True if it can spread, its memory and GPUs fitting its half nodes; keeps each
        job's use per spread node for `_sharable_into` and `_account`."""
        needs = self.needs
        assert needs is not None  # called only with resources
        group, half, nodes = self.platform.node_groups[0], self.half, self.platform.nodes
        memory = np.zeros(len(workload)) if needs.memory is None else needs.memory
        gpus = np.zeros(len(workload), np.int64) if needs.gpus is None else needs.gpus
        uses = [
            per_node_use(cores, per_core, count, -(-cores // half))
            for cores, per_core, count in zip(
                workload.cores.tolist(), memory.tolist(), gpus.tolist()
            )
        ]
        self._job_cores = workload.cores.tolist()
        self._memory_use = [use[1] for use in uses]
        self._gpu_use = [use[2] for use in uses]
        limit = np.inf if group.memory_per_node is None else group.memory_per_node
        return np.array(
            [
                -(-cores // half) <= nodes and use[1] <= limit and use[2] <= group.gpus_per_node
                for cores, use in zip(workload.cores.tolist(), uses)
            ],
            dtype=bool,
        )

    @property
    def total_units(self) -> int:
        return 2 * self.platform.nodes

    @property
    def free_halves(self) -> int:
        """Free half nodes: `free_units()`, under its earlier name."""
        return self._free

    def units(self, engine, job: int) -> int:
        if self.is_compact(engine, job):
            return 2 * self._compact_nodes[job]
        return self._spread_halves[job]

    def static_units(self, cores: np.ndarray) -> np.ndarray | None:
        """Half nodes per job without a hint: spread, or compact when it cannot spread (too big, or
        its memory or GPUs do not fit on half nodes); the engine's table follows each hint
        (`units`), so backfilling reads a list."""
        compact = 2 * (-(-cores // self._cpn) if self.needs is None else self.needs.units)
        spreads = np.array(self._spread_halves) > 0  # of the bound jobs (`bind`)
        return np.where(spreads, -(-cores // self.half), compact)

    def units_of(self, allocation: Allocation) -> int:
        return int(allocation.nodes.size * (allocation.cores // self.half))

    def idle_nodes(self, limit: int | None = None) -> np.ndarray:
        return np.array(self.state.idle_ids[:limit], dtype=np.int64)

    def direct_entry(self, engine) -> bool:
        """True if `start_job` and `end_job` call `allocate_cores` and `release_nodes` (in C when
        compiled) from now on: `allocate` and `release` are this class's (not overridden)."""
        kind = type(self)
        self._direct = (
            kind.allocate is CoLocationAllocator.allocate
            and kind.release is CoLocationAllocator.release
        )
        return self._direct


class SpeedModel(Protocol):
    """Gives the current speedup of running jobs (e.g. from a co-location heatmap, 000 formula
    (4.1))."""

    def speeds(self, view: Any, jobs: np.ndarray) -> Iterable[tuple[int, float]]:
        """New speedups for (some of) `jobs`, the running jobs on nodes that changed at `view.now`
        (an int array; a list of ints for a model whose ``jobs_as_list`` is True). `view` is the
        scheduler's view (`cosched.simulator.view.SchedulerView`)."""


@cython.initializedcheck(False)  # the node state's table is made with it
@cython.boundscheck(False)  # `_gather` wrote `count` neighbours
@cython.wraparound(False)
@cython.locals(count=cython.Py_ssize_t, at=cython.Py_ssize_t, state=NodeState)
def append_neighbourhood(touched: TouchedJobs, job: int, where: NodeState | Allocator) -> None:
    """Record `job` and the jobs sharing its nodes in `touched` (the engine's jobs whose speeds
    follow), read from the node state's table in C. `where`: the node state, or an allocator whose
    state it is (`node_state`)."""
    state = node_state(where)
    touched.add(job)
    count = state._gather(job)
    for at in range(count):
        touched.add(state._gathered[at])


def node_state(where: NodeState | Allocator) -> NodeState:
    """`where` if it is a node state, else the allocator's node state (the co-location
    allocator's read as a C field, not as a Python attribute)."""
    if isinstance(where, _HalfNodes):
        return cython.cast(_HalfNodes, where).state
    return where if isinstance(where, NodeState) else where.state


@cython.cclass
class HeatmapSpeedModel:
    """Speedup of each running job: min pairwise speedup over its neighbours (000 §3.5, (4.1)).
    Compiled, an extension type (``colocation.pxd``) whose look-up lists are typed fields, and whose
    `speed_beside` the engine calls in C when the run's model is this class."""

    jobs_as_list = True  # the engine passes the jobs of `speeds` as a list (`SpeedModel`)

    def __init__(
        self,
        speedups: np.ndarray,
        app: np.ndarray,
        spread: np.ndarray,
        known: np.ndarray | None = None,
    ):
        self.speedups = speedups  # (k, k): speedup of row application next to column application
        self.app = app  # heatmap index of each job (engine order)
        self.spread = spread  # (k,) speedup of each application alone on spread nodes
        self.known = (
            np.ones(speedups.shape, dtype=bool) if known is None else known
        )  # pair measured (a way)
        # the same values as C arrays (row after row; per job; per application): a speed is a
        # few look-ups, asked at every start and end
        self._pairs = array("d", np.ascontiguousarray(speedups, np.float64).tobytes())
        self._apps = array("q", np.asarray(app, np.int64).tobytes())
        self._alone = array("d", np.asarray(spread, np.float64).tobytes())
        self._width = speedups.shape[1]

    def speed_of(self, engine, job: int) -> float:
        """The speedup of one running job (`speeds` of that job)."""
        return self.speeds(engine, np.array([job]))[0][1]

    def speeds(self, engine, jobs: np.ndarray | list[int]) -> list[tuple[int, float]]:
        neighbours, allocation = engine.neighbours, engine.allocation
        cores_per_node = engine.platform.cores_per_node
        return [
            (job, self.speed_beside(job, neighbours(job), allocation[job].cores < cores_per_node))
            for job in (jobs if isinstance(jobs, list) else jobs.tolist())
        ]

    @cython.initializedcheck(False)  # the node state's table is made with it
    @cython.locals(allocation=Allocation, count=cython.Py_ssize_t)
    def speed_in(
        self, state: NodeState, job: int, allocation: Allocation, cores_per_node: int
    ) -> float:
        """The speedup of running `job` on `allocation`, its neighbours read from the node state
        (the engine's call in C)."""
        count = state._gather(job)
        return self._least_speed(job, state._gathered, count, allocation._cores < cores_per_node)

    def speed_beside(self, job: int, others: Iterable[int] | None, spread: bool) -> float:
        """The speedup of running `job` beside `others` (its neighbours; None: none), on half
        nodes (`spread`) or whole ones."""
        listed = array("q", () if others is None else others)
        return self._least_speed(job, listed, len(listed), spread)

    @cython.initializedcheck(False)  # the arrays are made in `__init__`
    @cython.boundscheck(False)  # jobs and applications index their arrays (the heatmap's)
    @cython.wraparound(False)
    @cython.locals(
        row=cython.Py_ssize_t, at=cython.Py_ssize_t, speed=cython.double, pair=cython.double
    )
    def _least_speed(self, job: int, others, count: int, spread: bool) -> float:
        """`speed_beside` of the first `count` jobs of `others` (an ``array("q")``)."""
        row, speed = self._apps[job] * self._width, 1.0
        for at in range(count):  # 000 §3.5, formula (4.1): the minimum over the neighbours
            pair = self._pairs[row + self._apps[others[at]]]
            if not at or pair < speed:
                speed = pair
        if count:
            return speed
        return self._alone[self._apps[job]] if spread else 1.0


class CoContext:
    """What a co-scheduled run needs besides the scheduler: heatmap matrix, job applications, spread
    speedups, and which pairs were measured (in at least one direction)."""

    def __init__(
        self,
        speedups: np.ndarray,
        app: np.ndarray,
        spread: np.ndarray,
        names: tuple[str, ...],
        known: np.ndarray | None = None,
    ):
        self.speedups, self.app, self.spread, self.names = speedups, app, spread, names
        self.known = np.ones(speedups.shape, dtype=bool) if known is None else known

    def allocator(self, platform: Platform, prefer: str = "idle") -> CoLocationAllocator:
        return CoLocationAllocator(platform, prefer)

    def speed_model(self) -> HeatmapSpeedModel:
        return HeatmapSpeedModel(self.speedups, self.app, self.spread, self.known)


def co_context(
    workload,
    heatmap: Heatmap | None = None,
    alone_speedup: float | str | None = None,
    missing_pair: str = "default",
    *,
    spread_speedup=UNSET,
) -> CoContext:
    """Link each job to its heatmap application; without a heatmap every pair has speedup 1.0.

    alone_speedup: the speedup of a job alone on its spread nodes (``spread_speedup``: its
    deprecated spelling, removed in 0.4.0): None takes the heatmap's per-application value where
    given, else DEFAULT_SPREAD_SPEEDUP; "one" 1.0; "max" the application's largest measured speedup
    (ELiSE); a number that value. missing_pair: "default" (the heatmap's fallback) or "mean" (the
    application's mean measured speedup, ELiSE) for pairs measured in neither direction.
    """
    spread_speedup = alone_speedup_value(
        renamed_keyword(alone_speedup, spread_speedup, old="spread_speedup", new="alone_speedup")
    )
    if missing_pair not in MISSING_PAIRS:
        raise InputError(
            f"unknown missing-pair rule {missing_pair!r}; choose from {MISSING_PAIRS}",
            field="missing_pair",
        )
    if heatmap is None:
        alone = spread_speedup if isinstance(spread_speedup, float) else DEFAULT_SPREAD_SPEEDUP
        return CoContext(
            np.ones((1, 1)), np.zeros(len(workload), dtype=np.int64), np.array([alone]), ("*",)
        )
    if workload.app is None:
        raise InputError(
            "a heatmap needs the workload's 'app' column to link jobs to applications",
            source=workload.source or None,
            field="app",
        )
    index = {name: i for i, name in enumerate(heatmap.applications)}
    app = np.fromiter((index.get(str(a), -1) for a in workload.app), np.int64, len(workload))
    if (app < 0).any():
        unknown = sorted({str(a) for a, i in zip(workload.app, app) if i < 0})
        raise InputError(
            f"application(s) not in the heatmap: {unknown[:8]}",
            source=workload.source or None,
            field="app",
        )
    used = np.unique(app)
    measured = heatmap.measured
    known = ~np.isnan(measured) | ~np.isnan(measured.T)
    # pairs of applications absent from the workload: unused
    speedups = np.ones((len(heatmap), len(heatmap)))
    if missing_pair == "mean" and not known[np.ix_(used, used)].all():
        speedups[np.ix_(used, used)] = _mean_filled(measured)[np.ix_(used, used)]
    else:
        speedups[np.ix_(used, used)] = heatmap.speedup_matrix(
            [heatmap.applications[i] for i in used]
        )
    if spread_speedup is None:
        spread = heatmap.spread_speedups(DEFAULT_SPREAD_SPEEDUP)
    elif spread_speedup == "one":
        spread = np.full(len(heatmap), DEFAULT_SPREAD_SPEEDUP)
    elif spread_speedup == "max":
        # ELiSE: alone on spread nodes, a job runs at its best measured co-run speedup
        spread = _row_statistic(measured, np.nanmax)
    else:
        spread = np.full(len(heatmap), float(spread_speedup))
    return CoContext(speedups, app, spread, heatmap.applications, known)


def _row_statistic(measured: np.ndarray, statistic) -> np.ndarray:
    """`statistic` over each row's measured speedups; DEFAULT_SPREAD_SPEEDUP for a row with none
    measured."""
    has = ~np.isnan(measured).all(axis=1)
    values = np.full(measured.shape[0], DEFAULT_SPREAD_SPEEDUP)
    values[has] = statistic(measured[has], axis=1)
    return values


def _mean_filled(measured: np.ndarray) -> np.ndarray:
    """Mirrored pair where one direction is measured, else the row application's mean measured
    speedup (ELiSE)."""
    filled = np.where(np.isnan(measured), measured.T, measured)
    means = _row_statistic(measured, np.nanmean)
    missing = np.isnan(filled)
    if missing.any():
        from cosched.theory.heatmap import MissingPairsWarning

        warnings.warn(
            f"heatmap: {int(missing.sum())} directed pair(s) measured in neither "
            "direction use their job's mean measured speedup",
            MissingPairsWarning,
            stacklevel=3,
        )
    return np.where(missing, means[:, None], filled)
