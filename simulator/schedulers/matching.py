"""Matching: the co-scheduler that pairs waiting jobs by a maximum-weight matching (000 §3.5;
003 §5.2).

Graph: at each scheduling pass the first ``window`` waiting jobs (arrival order) are the vertices;
an edge joins two jobs whose applications run next to each other at heatmap speedups S(a, b) and
S(b, a) both at least ``threshold`` (default 1: no job slower than compact), weighted by the pair's
joint speedup gain S(a, b) + S(b, a) - 2 (000 §3.5, formula (4.1)), kept only when positive. A
maximum-weight matching (networkx) decides the partners. The weights depend only on the
applications, so the matching of a window is that of its application classes with their
multiplicities: it is cached by that multiset and handed out to the jobs in queue order, oldest
first. A window none of whose jobs can start now (alone, or as one half of any pair) is not matched:
its partners could not change what starts. Speedups come from the run's speed model, so its options
(missing pairs, alone speedup) apply.

Placement (``PairingAllocator``): a matched pair starts together and co-located: the larger job (the
lead) spread with as many idle nodes first as the smaller needs, the smaller on the other half of
those nodes. An unmatched job runs spread if its application is at least as fast spread alone as
compact (alone speedup >= 1), else compact on whole nodes. Spread jobs beyond a partner's nodes take
idle nodes and half-full nodes whose occupant pairs with them at or above the threshold, in the
run's ``placement`` order. So no two jobs ever share a node below the threshold.

Queue: units (pairs and single jobs) start in queue order; a pair that does not fit lets its older
job start alone if that fits (its partner returns to the next matching). The first job that fits
neither way is the head. Backfilling is EASY (003 §5.1.2), reasoned over nodes rather than half-node
counts (a pair needs idle nodes a count of free halves does not promise): the head holds a
reservation at the shadow time, the first predicted end of running jobs after which it fits on the
nodes left; a later unit of the window, or failing that each job of a pair alone, then each further
job up to ``depth`` (100, as the other co-schedulers), starts now if it ends by then or if the head
still fits then beside it. Predicted ends divide the remaining estimate by the slowest speed a job
can run at here, min(1, threshold, its alone speedup), so with estimates that bound the run times
the head starts no later than its reservation.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator, Sequence
from itertools import chain, islice
from typing import TYPE_CHECKING, Any

import networkx as nx
import numpy as np

from cosched.errors import InputError
from cosched.simulator.allocators import EMPTY, Allocation
from cosched.simulator.colocation import CoLocationAllocator
from cosched.simulator.schedulers.base import DEFAULT_DEPTH
from cosched.simulator.schedulers.coscheduling import CoScheduler

if TYPE_CHECKING:
    from cosched.simulator.platform import Platform
    from cosched.simulator.view import SchedulerView

__all__ = [
    "Matching",
    "PairingAllocator",
    "pair_weights",
    "max_weight_pairs",
    "match_window",
    "DEFAULT_WINDOW",
    "DEFAULT_THRESHOLD",
]

DEFAULT_WINDOW = (
    16  # waiting jobs matched per pass: ~2 ms per networkx matching (benchmarks/bench_matching.py)
)
DEFAULT_THRESHOLD = 1.0  # no pair slows either job below its compact speed
CACHE_LIMIT = 100_000  # matchings of distinct window multisets kept per run
INF = math.inf


def pair_weights(speedups: np.ndarray, threshold: float) -> tuple[np.ndarray, np.ndarray]:
    """Joint gain of each application pair and whether the pair may be formed.

    The gain is S(a, b) + S(b, a) - 2 (000 §3.5, formula (4.1): each job's speedup next to the
    other, over compact); a pair is allowed when both speedups reach `threshold` and the gain is
    positive."""
    gain = speedups + speedups.T - 2.0  # 000 §3.5 (4.1): S(a, b) + S(b, a) over two compact jobs
    compatible = np.minimum(speedups, speedups.T) >= threshold
    return gain, compatible & (gain > 0)


class WindowGraph(nx.Graph):
    """A networkx graph whose ``graph[v]`` is the adjacency dict itself rather than a read-only view
    of it: networkx's matching reads an edge weight about 1,500 times per window of 16 jobs, and
    building a view for each read took a quarter of its time. Only networkx's algorithm reads it,
    so the matching is the one a plain `nx.Graph` gives."""

    def __getitem__(self, node: Any) -> Any:
        return self._adj[node]


def max_weight_pairs(
    apps: Sequence[int], gain: np.ndarray, allowed: np.ndarray
) -> list[tuple[int, int]]:
    """A maximum-weight matching of jobs (positions in `apps`), edge weight gain[apps[i],
    apps[j]]."""
    classes = np.asarray(apps, dtype=np.int64)
    first, second = np.triu_indices(classes.size, 1)
    keep = allowed[classes[first], classes[second]]
    first, second = first[keep], second[keep]
    graph = WindowGraph()
    graph.add_weighted_edges_from(
        zip(first.tolist(), second.tolist(), gain[classes[first], classes[second]].tolist())
    )
    return sorted(tuple(sorted(pair)) for pair in nx.max_weight_matching(graph))


def match_window(
    apps: Sequence[int] | np.ndarray,
    gain: np.ndarray,
    allowed: np.ndarray,
    cache: dict | None = None,
) -> list[tuple[int, int]]:
    """A maximum-weight matching of a window of jobs (positions in `apps`, queue order), via their
    classes.

    The weights depend only on the applications, so the matching of the sorted multiset of
    applications that have a partner in the window (kept in `cache`) is as heavy as any; its class
    pairs go to the jobs in queue order: each job, oldest first, takes its best remaining partner
    class and the oldest free job of that class."""
    apps = np.asarray(apps, dtype=np.int64)
    edges = allowed[np.ix_(apps, apps)]
    np.fill_diagonal(edges, False)
    # jobs with no partner in the window stay alone
    positions = np.flatnonzero(edges.any(axis=1)).tolist()
    apps = apps[positions].tolist()
    key = tuple(sorted(apps))
    classes = None if cache is None else cache.get(key)
    if classes is None:
        classes = Counter((key[i], key[j]) for i, j in max_weight_pairs(key, gain, allowed))
        if cache is not None:
            if len(cache) >= CACHE_LIMIT:
                cache.clear()
            cache[key] = classes
    remaining = Counter(classes)  # (a, b) with a <= b: the key is sorted
    pairs: list[tuple[int, int]] = []
    taken: set[int] = set()
    for i, a in enumerate(apps):
        if i in taken:
            continue
        options = [
            (gain[a, y if x == a else x], y if x == a else x)
            for (x, y), left in remaining.items()
            if left and a in (x, y)
        ]
        if not options:
            continue
        b = max(options)[1]
        j = next(k for k in range(i + 1, len(apps)) if k not in taken and apps[k] == b)
        remaining[(min(a, b), max(a, b))] -= 1
        taken.update((i, j))
        pairs.append((positions[i], positions[j]))
    return pairs


def with_singles(units: list[tuple[int, ...]]) -> Iterator[tuple[int, ...]]:
    """Each unit, and after a pair each of its jobs alone (older first): jobs of a pair that cannot
    start together may still start alone."""
    for unit in units:
        yield unit
        if len(unit) == 2:
            yield (min(unit),)
            yield (max(unit),)


class PairingAllocator(CoLocationAllocator):
    """The co-location allocator that places planned units: a pair on shared nodes, compact jobs on
    whole idle nodes, spread jobs next to compatible occupants only.

    The scheduler plans a unit on the node state (``plan``) and starts its jobs; ``find`` hands each
    job its planned allocation. A job started without a plan is placed as an unmatched job.
    """

    def bind(self, workload: Any) -> None:
        super().bind(workload)
        if self.needs is not None:  # its plans count free halves only
            raise InputError(
                "matching plans pairs on cores only: run it on a platform without memory, GPUs "
                "or several node types (the other co-schedulers check memory and GPUs)",
                field="scheduler",
            )

    def setup(
        self,
        engine: SchedulerView,
        app: np.ndarray,
        compatible: np.ndarray,
        alone_spread: np.ndarray,
    ) -> None:
        """Applications of the jobs, which applications may share a node, which run spread when
        alone."""
        self.app, self.compatible, self.alone_spread = app, compatible, alone_spread
        self.spread_count = [-(-c // self.half) for c in engine.cores]
        self.compact_count = [-(-c // self._cpn) for c in engine.cores]
        self.spreads_alone = [
            bool(alone_spread[a]) and count <= self.platform.nodes
            for count, a in zip(self.spread_count, app.tolist())
        ]
        self.halves_alone = [
            count if spreads else 2 * compact
            for count, compact, spreads in zip(
                self.spread_count, self.compact_count, self.spreads_alone
            )
        ]
        self._halves_alone = np.asarray(self.halves_alone, dtype=np.int64)
        self.apps = app.tolist()
        # jobs `plan` places alike on any node state: same application, counts and alone placement
        kinds: dict[tuple, int] = {}
        self.kind = [
            kinds.setdefault(shape, len(kinds))
            for shape in zip(self.apps, self.spread_count, self.compact_count, self.spreads_alone)
        ]
        self.planned: dict[int, Allocation] = {}
        self._snapshot: tuple[np.ndarray, np.ndarray] | None = None
        self._room: tuple[int, list[int]] | None = None
        self._pairs_with = compatible.astype(np.int64)  # for counting compatible occupants
        # per application, whether a node's occupant application pairs with it; the last column
        # (index -1) is False: `occupant_app` is -1 on every node that is not half-full
        self._beside = np.zeros((compatible.shape[0], compatible.shape[1] + 1), dtype=bool)
        self._beside[:, :-1] = compatible

    def static_units(self, cores: np.ndarray) -> None:
        """No table: a job's half nodes depend on its plan (alone or in a pair)."""
        return None

    def commit(self, job: int, allocation: Allocation) -> None:
        super().commit(job, allocation)
        self._snapshot = self._room = None

    def release(self, job: int, allocation: Allocation) -> None:
        super().release(job, allocation)
        self._snapshot = self._room = None

    def spreadable(self, job: int) -> bool:
        return self.spread_count[job] <= self.platform.nodes

    def find(self, engine: SchedulerView, job: int) -> Allocation | None:
        allocation = self.planned.pop(job, None)
        if allocation is not None:
            return allocation
        placed = self.plan((job,), *self.snapshot())
        return None if placed is None else placed[0][1]

    def snapshot(self) -> tuple[np.ndarray, np.ndarray]:
        """Free halves per node and the application of the single occupant of half-full nodes (-1
        else, so an application >= 0 marks a half-full node); kept until a job starts or ends
        (read-only)."""
        if self._snapshot is not None:
            return self._snapshot
        state = self.state
        free = (self._cpn - state.used) // self.half
        occupant = state.occupants.max(axis=1)
        occupant_app = np.where(
            (free == 1) & (occupant > EMPTY), self.app[np.maximum(occupant, 0)], -1
        )
        self._snapshot = free, occupant_app
        return self._snapshot

    def room(self) -> tuple[int, list[int]]:
        """The snapshot's idle nodes, and per application the nodes one spread half of it may take
        (idle, or half-full beside an occupant it pairs with): exactly the counts `plan` checks
        before placing a single job."""
        if self._room is None:
            free, occupant_app = self.snapshot()
            idle = int(np.count_nonzero(free == 2))
            beside = np.bincount(
                occupant_app[(free == 1) & (occupant_app >= 0)], minlength=self.compatible.shape[0]
            )
            self._room = idle, (idle + self._pairs_with @ beside).tolist()
        return self._room

    def fits_spread(self, job: int) -> bool:
        """Whether one spread half of `job` fits now: a pair can start only if both its jobs do."""
        return self.spread_count[job] <= self.room()[1][self.apps[job]]

    def fits_alone(self, job: int) -> bool:
        """Whether `job` fits now alone, as `plan` would place it (spread, or compact)."""
        if self.spreads_alone[job]:
            return self.fits_spread(job)
        return self.compact_count[job] <= self.room()[0]

    def any_starts(self, jobs: Sequence[int]) -> bool:
        """Whether some of `jobs` fits now alone or as one spread half of a pair."""
        return any(self.fits_spread(job) or self.fits_alone(job) for job in jobs)

    def may_fit(self, unit: tuple[int, ...]) -> bool:
        """Whether the room counts let `unit` fit now: exactly for a single job, necessarily for a
        pair (each of its jobs needs one spread half's nodes; the lead's take none from the
        follower's count)."""
        if len(unit) == 1:
            return self.fits_alone(unit[0])
        return self.fits_spread(unit[0]) and self.fits_spread(unit[1])

    def plan_now(self, unit: tuple[int, ...]) -> list[tuple[int, Allocation]] | None:
        """`plan` on the current node state; a unit the room counts refuse is refused without
        placing it."""
        if not self.may_fit(unit):
            return None
        return self.plan(unit, *self.snapshot())

    def plan(
        self, unit: tuple[int, ...], free: np.ndarray, occupant_app: np.ndarray
    ) -> list[tuple[int, Allocation]] | None:
        """Allocations of the unit's jobs on a node state (free halves, occupant applications), or
        None.

        One job: compact on idle nodes, or spread. A pair (lead first, the larger): the lead spread
        with as many idle nodes first as the follower needs, the follower on the other half of the
        lead's nodes first; beyond those, both take idle nodes and half-full nodes of compatible
        occupants.
        """
        if len(unit) == 1:
            job = unit[0]
            if not self.spreads_alone[job]:
                idle, count = np.flatnonzero(free == 2), self.compact_count[job]
                return None if count > idle.size else [(job, Allocation(idle[:count], self._cpn))]
            nodes = self._spread_nodes(job, self.spread_count[job], free, occupant_app)
            return None if nodes is None else [(job, Allocation(nodes, self.half))]
        lead, follower = unit
        lead_nodes = self._spread_nodes(
            lead,
            self.spread_count[lead],
            free,
            occupant_app,
            idle_first=self.spread_count[follower],
        )
        if lead_nodes is None:
            return None
        free, occupant_app = free.copy(), occupant_app.copy()
        free[lead_nodes] -= 1
        occupant_app[lead_nodes] = np.where(free[lead_nodes] == 1, self.app[lead], -1)
        nodes = self._spread_nodes(
            follower, self.spread_count[follower], free, occupant_app, beside=lead_nodes
        )
        if nodes is None:
            return None
        return [(lead, Allocation(lead_nodes, self.half)), (follower, Allocation(nodes, self.half))]

    def _spread_nodes(
        self,
        job: int,
        count: int,
        free: np.ndarray,
        occupant_app: np.ndarray,
        idle_first: int = 0,
        beside: np.ndarray | None = None,
    ) -> np.ndarray | None:
        """`count` nodes for one half of `job`, from idle nodes and half-full ones whose occupant
        pairs with it at or above the threshold: first `idle_first` idle nodes and the free halves
        `beside` a partner, then in the placement order."""
        idle = free == 2
        half_full = self._beside[self.apps[job]][occupant_app]  # compatible half-full nodes
        if count > np.count_nonzero(idle) + np.count_nonzero(half_full):
            return None
        if beside is None and not idle_first:
            groups = [idle, half_full]
        else:
            first = np.zeros_like(idle)
            if beside is not None:
                first[beside] = half_full[beside]
            else:
                first[np.flatnonzero(idle)[:idle_first]] = True
            groups = [first, idle & ~first, half_full & ~first]
        if self.prefer != "idle":
            groups[-2], groups[-1] = groups[-1], groups[-2]
        chosen = []
        for group in groups:
            nodes = np.flatnonzero(group)[:count]
            chosen.append(nodes)
            count -= nodes.size
            if count == 0:
                break
        if len(chosen) == 1:  # one group's nodes, already ascending
            return chosen[0]
        return np.sort(np.concatenate(chosen))

    def alone_within(self, jobs: list[int], halves: int) -> list[int]:
        """The `jobs` (in their order) that need at most `halves` half nodes alone."""
        if not jobs:
            return jobs
        chosen = np.asarray(jobs)
        return chosen[self._halves_alone[chosen] <= halves].tolist()

    def halves(self, unit: tuple[int, ...]) -> int:
        """Half nodes the unit needs as `plan` places it."""
        if len(unit) == 1:
            return self.halves_alone[unit[0]]
        return self.spread_count[unit[0]] + self.spread_count[unit[1]]


class Matching(CoScheduler):
    """Maximum-weight pairing of the waiting window, pairs co-located, EASY backfilling of units."""

    name = "matching"
    OPTIONS = ("window", "threshold", "depth", "record_reservations", "missing_pair")

    def __init__(
        self,
        window: int = DEFAULT_WINDOW,
        threshold: float = DEFAULT_THRESHOLD,
        depth: int = DEFAULT_DEPTH,
        record_reservations: bool = False,
        missing_pair: str = "default",
    ):
        super().__init__(
            depth=depth, record_reservations=record_reservations, missing_pair=missing_pair
        )
        if window < 1:
            raise InputError(f"matching window must be >= 1, got {window}", field="window")
        if not threshold > 0:
            raise InputError(
                f"matching threshold must be positive, got {threshold}", field="threshold"
            )
        self.window, self.threshold = int(window), float(threshold)

    def make_allocator(self, platform: Platform, placement: str | None = None) -> PairingAllocator:
        # the scheduler plans its pairs on the nodes of this allocator, so it keeps it
        self.allocator = PairingAllocator(platform, placement or "idle")
        return self.allocator

    def attach(self, engine: SchedulerView) -> None:
        super().attach(engine)
        own = getattr(self, "allocator", None)
        # the run counts free units with this scheduler's own allocator (bound methods of one
        # object compare equal), or the pairs would be planned on nodes the engine does not use
        if own is None or engine.free_units != own.free_units:
            raise InputError(
                "the matching co-scheduler places its pairs itself: run it on its own allocator "
                "(Matching.make_allocator), not on another one",
                field="allocator",
            )
        model = engine.speed_model
        self.gain, self.allowed = pair_weights(model.speedups, self.threshold)
        compatible = np.minimum(model.speedups, model.speedups.T) >= self.threshold
        self.app = np.asarray(model.app, dtype=np.int64)
        own.setup(engine, self.app, compatible, model.spread >= 1.0)
        # slowest speed a job can run at: compact 1, spread alone, or next to a
        # neighbour >= threshold
        self.floor = np.minimum(np.minimum(model.spread, 1.0), self.threshold)[self.app].tolist()
        self.apps = self.app.tolist()
        self.cache: dict[tuple[int, ...], Counter] = {}
        self.matched: tuple[tuple[int, ...], dict[int, int]] = ((), {})

    def schedule(self, engine: SchedulerView) -> None:
        """Start units in queue order until one does not fit, then backfill behind it (000 Algorithm
        2).

        A pair that does not fit lets its older job start alone if that fits (the window is then
        matched again, its partner back in the pool); the first job that fits neither way is the
        head."""
        allocator = self.allocator
        while engine.waiting:
            queue = list(islice(engine.waiting, max(self.window, self.depth + 1)))
            if (
                self.reservations is None
                and min(map(allocator.halves_alone.__getitem__, queue)) > allocator.free_units()
            ):
                return  # no job fits even alone: nothing can start
            window, deeper = queue[: self.window], queue[self.window :]
            if not allocator.any_starts(window):
                # no job of the window starts, alone or in any pair: its matching changes nothing
                self.backfill_units(engine, (queue[0],), [], deeper)
                return
            units = self.pair_up(window, self.match(window))
            for index, unit in enumerate(chain(units, zip(deeper))):
                fits = allocator.halves(unit) <= allocator.free_units()
                placed = allocator.plan_now(unit) if fits else None
                if placed is not None:
                    self.start(engine, placed)
                    continue
                head = (min(unit),)
                placed = allocator.plan_now(head) if len(unit) == 2 else None
                if placed is not None:
                    self.start(engine, placed)
                    break
                partner: list[tuple[int, ...]] = [(max(unit),)] if len(unit) == 2 else []
                self.backfill_units(
                    engine,
                    head,
                    partner + units[index + 1 :],
                    deeper[max(index + 1 - len(units), 0) :],
                )
                return

    def match(self, jobs: list[int]) -> dict[int, int]:
        """Each job's partner in the maximum-weight matching of the spreadable jobs of the
        window.

        The partners depend on the window's jobs alone, so a window matched in the previous call
        (about half the calls: a pass that started nothing) reuses them."""
        window, partner = self.matched
        if window == tuple(jobs):
            return partner
        eligible = [job for job in jobs if self.allocator.spreadable(job)]
        partner = {}
        for first, second in match_window(
            [self.apps[job] for job in eligible], self.gain, self.allowed, self.cache
        ):
            partner[eligible[first]] = eligible[second]
            partner[eligible[second]] = eligible[first]
        self.matched = tuple(jobs), partner
        return partner

    def pair_up(self, jobs: list[int], partner: dict[int, int]) -> list[tuple[int, ...]]:
        """The window's start units in queue order: matched pairs (lead first) and single jobs."""
        units: list[tuple[int, ...]] = []
        for job in jobs:
            mate = partner.get(job)
            if mate is None:
                units.append((job,))
            elif mate > job:  # the lead (more half nodes; the older on a tie) first
                count = self.allocator.spread_count
                units.append((mate, job) if count[mate] > count[job] else (job, mate))
        return units

    def start(self, engine: SchedulerView, placed: list[tuple[int, Allocation]]) -> None:
        """Start a planned unit: each job takes its planned allocation."""
        planned = self.allocator.planned
        for job, allocation in placed:
            planned[job] = allocation
            engine.start(job)

    def backfill_units(
        self,
        engine: SchedulerView,
        head: tuple[int],
        units: list[tuple[int, ...]],
        deeper: list[int],
    ) -> None:
        """EASY behind the blocked head job (003 §5.1.2), on the nodes: a unit (or, failing that,
        each job of a pair alone), then each `deeper` job alone, starts now if it ends by the shadow
        time or if the head still fits then beside it.

        The shadow time is computed when the room counts first let a unit fit (at once when
        reservations are recorded), not in a pass where nothing may start."""
        allocator = self.allocator
        shadow = None
        if self.reservations is not None:
            shadow, free, occupant_app = self.shadow(engine, head)
            spare = int(free.sum()) - allocator.halves(head)
            self.reservations.setdefault(head[0], shadow)
        now, estimate, floor = engine.now, engine.estimate, self.floor
        # kinds of units whose placement now leaves no room for the head at the shadow time; valid
        # until a unit starts (units of one kind are placed alike: `PairingAllocator.kind`)
        blocking: set[tuple[int, ...]] = set()
        available, halves_alone = allocator.free_units(), allocator.halves_alone
        if available == 0:
            return
        # free half nodes only shrink as units start: a deeper job that needs more now never starts
        deeper = allocator.alone_within(deeper, available)
        for unit in chain(with_singles(units), zip(deeper)):
            halves = halves_alone[unit[0]] if len(unit) == 1 else allocator.halves(unit)
            if (
                halves > available
                or not all(map(engine.waiting.__contains__, unit))
                or not allocator.may_fit(unit)
            ):
                continue
            if shadow is None:
                shadow, free, occupant_app = self.shadow(engine, head)
                # half nodes free at the shadow time beyond the head's: a unit that ends late and
                # needs more leaves the head no room
                spare = int(free.sum()) - allocator.halves(head)
            ends_late = any(now + estimate[job] / floor[job] > shadow for job in unit)
            if ends_late:
                kinds = tuple(map(allocator.kind.__getitem__, unit))
                if halves > spare or kinds in blocking:
                    continue
            placed = allocator.plan(unit, *allocator.snapshot())  # the room counts let it try
            if placed is None:
                continue
            if ends_late:
                later = self.beside_head(head, placed, free, occupant_app)
                if later is None:
                    blocking.add(kinds)
                    continue
                free, occupant_app = later
                spare -= halves
            self.start(engine, placed)
            blocking.clear()
            available = allocator.free_units()
            if available == 0:
                return

    def beside_head(
        self,
        head: tuple[int],
        placed: list[tuple[int, Allocation]],
        free: np.ndarray,
        occupant_app: np.ndarray,
    ) -> tuple[np.ndarray, np.ndarray] | None:
        """The node state at the shadow time (`free`, `occupant_app`) with the placed unit still
        running, or None if the head no longer fits in it."""
        allocator, app = self.allocator, self.app
        later_free, later_app = free.copy(), occupant_app.copy()
        for job, allocation in placed:
            nodes = allocation.nodes
            later_free[nodes] -= allocation.cores // allocator.half
            later_app[nodes] = np.where(later_free[nodes] == 1, app[job], -1)
        if allocator.plan(head, later_free, later_app) is None:
            return None
        return later_free, later_app

    def shadow(
        self, engine: SchedulerView, head: tuple[int]
    ) -> tuple[float, np.ndarray, np.ndarray]:
        """The earliest time the head job fits on the nodes running jobs leave, and the node state
        then.

        Running jobs end, at the latest, when their predicted remaining work is done at the slowest
        speed they can run at here (`floor`)."""
        allocator, now = self.allocator, engine.now
        free, occupant_app = (array.copy() for array in allocator.snapshot())
        occupants = engine.node_occupants()
        predicted, rate, floor, app = engine.predicted_end, engine.rate, self.floor, self.app
        ends = sorted(
            (now + (predicted[job] - now) * rate[job] / floor[job], job) for job in engine.running
        )
        half, need = allocator.half, allocator.halves(head)
        total = int(free.sum())
        for index, (end, job) in enumerate(ends):
            allocation = engine.allocation[job]
            assert allocation is not None  # a running job holds nodes
            nodes = allocation.nodes
            free[nodes] += allocation.cores // half
            total += nodes.size * (allocation.cores // half)
            rows = occupants[nodes]
            rows[rows == job] = EMPTY
            occupants[nodes] = rows
            left = rows.max(axis=1)
            occupant_app[nodes] = np.where(
                (free[nodes] == 1) & (left > EMPTY), app[np.maximum(left, 0)], -1
            )
            if index + 1 < len(ends) and ends[index + 1][0] == end or total < need:
                continue
            if allocator.plan(head, free, occupant_app) is not None:
                return end, free, occupant_app
        return INF, free, occupant_app
