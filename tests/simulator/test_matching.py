"""The optimal-pairing co-scheduler: maximum-weight matching, threshold, node limits, head
reservation."""

import itertools
from types import SimpleNamespace

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cosched.errors import InputError
from cosched.simulator.colocation import CoLocationAllocator, co_context
from cosched.simulator.engine import Engine
from cosched.simulator.generate import ApplicationSeed, generate_workload
from cosched.simulator.platform import Platform
from cosched.simulator.schedulers import COSCHEDULERS, SCHEDULERS, make_scheduler
from cosched.simulator.schedulers.matching import (
    PairingAllocator,
    match_window,
    max_weight_pairs,
    pair_weights,
)
from cosched.simulator.simulation import simulate
from cosched.theory.heatmap import heatmap_from_speedups

TIME_TOLERANCE = 1e-6  # seconds of float slack on simulated times
WEIGHT_TOLERANCE = 1e-9  # float slack on summed pair gains
APPS = ("a", "b", "c", "d")
PLATFORM = Platform(6, 2, 4, "tiny")  # 6 nodes x 8 cores, half = 4


def speedup_matrices(k: int):
    return st.lists(st.floats(0.5, 1.5), min_size=k * k, max_size=k * k).map(
        lambda v: np.array(v).reshape(k, k)
    )


def brute_force_weight(apps, gain, allowed) -> float:
    """Heaviest matching by trying every partner of the first job (or none), recursively."""
    if len(apps) < 2:
        return 0.0
    first, rest = apps[0], apps[1:]
    best = brute_force_weight(rest, gain, allowed)
    for index, other in enumerate(rest):
        if allowed[first, other]:
            best = max(
                best,
                gain[first, other]
                + brute_force_weight(rest[:index] + rest[index + 1 :], gain, allowed),
            )
    return best


@settings(max_examples=150, deadline=None)
@given(
    speedups=speedup_matrices(4),
    apps=st.lists(st.integers(0, 3), max_size=9),
    threshold=st.sampled_from([0.8, 0.95, 1.0, 1.1]),
    cached=st.booleans(),
)
def test_window_matching_is_maximum_weight_and_respects_threshold(
    speedups, apps, threshold, cached
):
    gain, allowed = pair_weights(speedups, threshold)
    cache = {} if cached else None
    pairs = match_window(apps, gain, allowed, cache)
    if cached:  # a second window with the same multiset is answered from the cache
        pairs = match_window(apps, gain, allowed, cache)
    used = [job for pair in pairs for job in pair]
    assert len(used) == len(set(used)) and all(0 <= job < len(apps) for job in used)
    for i, j in pairs:
        assert min(speedups[apps[i], apps[j]], speedups[apps[j], apps[i]]) >= threshold
        assert gain[apps[i], apps[j]] > 0
    weight = sum(gain[apps[i], apps[j]] for i, j in pairs)
    assert weight == pytest.approx(
        brute_force_weight(list(apps), gain, allowed), abs=WEIGHT_TOLERANCE
    )


def test_job_matching_agrees_with_networkx_on_the_job_graph():
    speedups = np.array([[1.2, 1.4, 0.9], [1.1, 1.3, 1.0], [1.5, 1.2, 1.05]])
    gain, allowed = pair_weights(speedups, 1.0)
    apps = [0, 2, 1, 1, 0, 2, 2]
    graph = nx.Graph()
    for i, j in itertools.combinations(range(len(apps)), 2):
        if allowed[apps[i], apps[j]]:
            graph.add_edge(i, j, weight=gain[apps[i], apps[j]])
    expected = sum(graph.edges[e]["weight"] for e in nx.max_weight_matching(graph))
    for pairs in (max_weight_pairs(apps, gain, allowed), match_window(apps, gain, allowed)):
        assert sum(gain[apps[i], apps[j]] for i, j in pairs) == pytest.approx(expected)


@settings(max_examples=100, deadline=None)
@given(
    speedups=speedup_matrices(5),
    apps=st.lists(st.integers(0, 4), max_size=16),
    threshold=st.sampled_from([0.9, 1.0]),
)
def test_window_graph_gives_the_matching_of_a_plain_networkx_graph(speedups, apps, threshold):
    """The same pairs, ties included, as networkx's matching on a plain graph built in the same
    order (the window graph only reads its adjacency faster)."""
    gain, allowed = pair_weights(speedups, threshold)
    graph = nx.Graph()
    for i, j in itertools.combinations(range(len(apps)), 2):
        if allowed[apps[i], apps[j]]:
            graph.add_edge(i, j, weight=gain[apps[i], apps[j]])
    expected = sorted(tuple(sorted(pair)) for pair in nx.max_weight_matching(graph))
    assert max_weight_pairs(apps, gain, allowed) == expected


@st.composite
def co_runs(draw):
    """A random heatmap over four applications and a small workload drawn from it."""
    k = len(APPS)
    speedups = draw(speedup_matrices(k))
    procs = draw(st.lists(st.integers(1, 24), min_size=k, max_size=k))
    compact = draw(st.lists(st.floats(1, 500), min_size=k, max_size=k))
    heatmap = heatmap_from_speedups(APPS, speedups, compact, procs)
    workload = generate_workload(
        ApplicationSeed.from_heatmap(heatmap),
        draw(st.integers(1, 25)),
        interarrival=draw(st.sampled_from(["batch", "poisson"])),
        mean=draw(st.floats(0.1, 100)),
        rng_seed=draw(st.integers(0, 2**31)),
    )
    spread = draw(st.sampled_from([0.8, 1.0, 1.2]))
    threshold = draw(st.sampled_from([0.9, 1.0, 1.1]))
    window = draw(st.integers(1, 8))
    return heatmap, workload, spread, threshold, window


def run(case, placement="idle"):
    heatmap, workload, spread, threshold, window = case
    scheduler = make_scheduler(
        "matching", threshold=threshold, window=window, record_reservations=True
    )
    result = simulate(
        workload,
        PLATFORM,
        scheduler,
        heatmap=heatmap,
        alone_speedup=spread,
        placement=placement,
        use_run_times=True,
    )
    return scheduler, result


@settings(max_examples=60, deadline=None)
@given(case=co_runs(), placement=st.sampled_from(["idle", "shared"]))
def test_every_job_finishes_and_no_node_is_over_committed(case, placement):
    _, workload, *_ = case
    scheduler, result = run(case, placement)
    assert (
        np.isfinite(result.end).all() and (result.start >= workload.submit - TIME_TOLERANCE).all()
    )
    assert (result.end > result.start).all()
    events = []
    for job, nodes in enumerate(result.nodes):
        for node in nodes.tolist():
            events += [(result.end[job], 0, node, job), (result.start[job], 1, node, job)]
    on_node = {}
    for _, starting, node, job in sorted(events):
        jobs = on_node.setdefault(node, set())
        jobs.add(job) if starting else jobs.discard(job)
        assert len(jobs) <= 2


@settings(max_examples=60, deadline=None)
@given(case=co_runs())
def test_no_two_jobs_share_a_node_below_the_threshold(case):
    heatmap, workload, spread, threshold, _ = case
    _, result = run(case)
    index = {name: i for i, name in enumerate(heatmap.applications)}
    app = [index[str(a)] for a in workload.app]
    speedups = heatmap.speedup_matrix(list(heatmap.applications))
    for i, j in itertools.combinations(range(len(workload)), 2):
        overlap = (
            min(result.end[i], result.end[j]) - max(result.start[i], result.start[j])
            > TIME_TOLERANCE
        )
        if overlap and np.intersect1d(result.nodes[i], result.nodes[j]).size:
            assert min(speedups[app[i], app[j]], speedups[app[j], app[i]]) >= threshold


@settings(max_examples=80, deadline=None)
@given(case=co_runs(), placement=st.sampled_from(["idle", "shared"]))
def test_head_job_never_starts_after_its_reservation(case, placement):
    scheduler, result = run(case, placement)
    assert all(
        result.start[job] <= shadow + TIME_TOLERANCE
        for job, shadow in scheduler.reservations.items()
    )


def test_matched_pair_shares_its_nodes():
    # a and b gain together, c gains with nobody and runs slower spread alone: a and b start
    # co-located on the same two nodes (half each), c compact on a whole node
    speedups = [[1.0, 1.25, 0.9], [1.25, 1.0, 0.9], [0.9, 0.9, 1.0]]
    heatmap = heatmap_from_speedups(("a", "b", "c"), speedups, [100.0, 100.0, 100.0], [8, 8, 8])
    workload = generate_workload(
        ApplicationSeed.from_heatmap(heatmap), selection="list", apps=["a", "c", "b"]
    )
    result = simulate(
        workload, PLATFORM, "matching", heatmap=heatmap, alone_speedup=0.9, use_run_times=True
    )
    assert result.nodes[0].tolist() == result.nodes[2].tolist() and result.nodes[0].size == 2
    assert result.nodes[1].size == 1 and not np.intersect1d(result.nodes[1], result.nodes[0]).size
    assert result.end.tolist() == pytest.approx([80.0, 100.0, 80.0])


def test_registered_as_a_coscheduler_with_validated_options():
    assert "matching" in SCHEDULERS and "matching" in COSCHEDULERS
    heatmap = heatmap_from_speedups(("a",), [[1.2]], [10.0], [4])
    workload = generate_workload(ApplicationSeed.from_heatmap(heatmap), 2)
    engine = Engine(
        workload,
        PLATFORM,
        make_scheduler("matching"),
        allocator=CoLocationAllocator(PLATFORM),
        speed_model=co_context(workload, heatmap).speed_model(),
    )
    with pytest.raises(InputError, match="places its pairs itself"):
        engine.run()
    with pytest.raises(InputError):
        make_scheduler("matching", window=0)
    with pytest.raises(InputError):
        make_scheduler("matching", threshold=0)


@settings(max_examples=100, deadline=None)
@given(
    compatible=st.lists(st.booleans(), min_size=9, max_size=9),
    alone_spread=st.lists(st.booleans(), min_size=3, max_size=3),
    jobs=st.lists(st.tuples(st.integers(0, 2), st.integers(1, 48)), min_size=1, max_size=8),
    placement=st.sampled_from(["idle", "shared"]),
    started=st.lists(st.booleans(), min_size=8, max_size=8),
)
def test_room_counts_refuse_exactly_the_single_jobs_plan_cannot_place(
    compatible, alone_spread, jobs, placement, started
):
    """`fits_alone` answers as `plan` on every node state, and a pair is placed only if each of its
    jobs `fits_spread` (the scheduler skips placing, or matching, from these counts): `may_fit`
    refuses no unit `plan` places; `any_starts` is whether some job fits either way."""
    matrix = np.array(compatible).reshape(3, 3)
    matrix = matrix & matrix.T
    app = np.array([a for a, _ in jobs], dtype=np.int64)
    allocator = PairingAllocator(PLATFORM, placement)
    allocator.setup(
        SimpleNamespace(cores=[c for _, c in jobs]), app, matrix, np.array(alone_spread)
    )
    for job, start in zip(range(len(jobs)), started):  # a node state: some jobs placed
        placed = allocator.plan_now((job,)) if start else None
        for each, allocation in placed or ():
            allocator.commit(each, allocation)
        state = allocator.snapshot()
        assert allocator.any_starts(range(len(jobs))) == any(
            allocator.fits_alone(other) or allocator.fits_spread(other)
            for other in range(len(jobs))
        )
        for other in range(len(jobs)):
            assert allocator.fits_alone(other) == (allocator.plan((other,), *state) is not None)
            assert allocator.may_fit((other,)) == allocator.fits_alone(other)
            for partner in range(len(jobs)):
                may_pair = partner != other and matrix[app[other], app[partner]]
                if may_pair and allocator.plan((other, partner), *state) is not None:
                    assert allocator.fits_spread(other) and allocator.fits_spread(partner)
                    assert allocator.may_fit((other, partner))


@settings(max_examples=100, deadline=None)
@given(
    compatible=st.lists(st.booleans(), min_size=9, max_size=9),
    jobs=st.lists(st.tuples(st.integers(0, 2), st.integers(1, 24)), min_size=1, max_size=8),
    placement=st.sampled_from(["idle", "shared"]),
    started=st.lists(st.integers(0, 2), min_size=8, max_size=8),
)
def test_a_spread_job_takes_idle_and_compatible_half_full_nodes_in_placement_order(
    compatible, jobs, placement, started
):
    """On every node state left by single jobs and pairs, a job placed spread alone takes its nodes
    from the idle ones and the half-full ones whose occupant pairs with it (read here from the
    allocator's cores and occupants), the placement's group first, each group in node order."""
    matrix = np.array(compatible).reshape(3, 3)
    matrix = matrix & matrix.T
    app = np.array([a for a, _ in jobs], dtype=np.int64)
    allocator = PairingAllocator(PLATFORM, placement)
    allocator.setup(
        SimpleNamespace(cores=[c for _, c in jobs]), app, matrix, np.ones(3, dtype=bool)
    )
    waiting = set(range(len(jobs)))
    for job, start in zip(range(len(jobs)), started):  # alone (1) or with the next job (2)
        unit = (job, job + 1) if start == 2 and job + 1 in waiting else (job,)
        placed = allocator.plan_now(unit) if start and job in waiting else None
        for each, allocation in placed or ():
            allocator.commit(each, allocation)
            waiting.discard(each)
    used, occupants = allocator.state.used, allocator.state.occupants
    idle = np.flatnonzero(used == 0).tolist()
    for job in sorted(waiting):
        beside = [
            node
            for node in np.flatnonzero(used == allocator.half).tolist()
            if matrix[app[job], app[occupants[node].max()]]
        ]
        groups = [idle, beside] if placement == "idle" else [beside, idle]
        count = allocator.spread_count[job]
        expected = (
            sorted((groups[0] + groups[1])[:count]) if count <= len(idle) + len(beside) else None
        )
        placed = allocator.plan((job,), *allocator.snapshot())
        assert (None if placed is None else placed[0][1].nodes.tolist()) == expected


@settings(max_examples=30, deadline=None)
@given(case=co_runs(), windows=st.lists(st.integers(0, 3), min_size=2, max_size=6))
def test_a_window_matched_again_at_once_reuses_its_partners_and_another_is_matched_afresh(
    case, windows
):
    scheduler, _ = run(case)
    jobs = list(range(len(case[1])))
    for shift in windows:
        window = jobs[shift:]
        last_window, last_partner = scheduler.matched
        partner = scheduler.match(window)
        assert (partner is last_partner) == (last_window == tuple(window))  # not matched again
        scheduler.matched = ((), {})  # forgotten: the same window matched afresh
        assert scheduler.match(window) == partner


@settings(max_examples=100, deadline=None)
@given(
    jobs=st.lists(st.tuples(st.integers(0, 2), st.integers(1, 48)), min_size=1, max_size=12),
    order=st.randoms(use_true_random=False),
    halves=st.integers(0, 2 * PLATFORM.nodes),
)
def test_alone_within_keeps_exactly_the_jobs_needing_at_most_that_many_halves_in_order(
    jobs, order, halves
):
    allocator = PairingAllocator(PLATFORM, "idle")
    allocator.setup(
        SimpleNamespace(cores=[c for _, c in jobs]),
        np.array([a for a, _ in jobs], dtype=np.int64),
        np.ones((3, 3), dtype=bool),
        np.array([True, False, True]),
    )
    queue = list(range(len(jobs)))
    order.shuffle(queue)
    expected = [job for job in queue if allocator.halves_alone[job] <= halves]
    assert allocator.alone_within(queue, halves) == expected
