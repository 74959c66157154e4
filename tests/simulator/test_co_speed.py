"""The state the co-schedulers keep instead of recomputing it (the units table under placement
hints, the jobs sharing nodes, passes not repeated on an unchanged state) gives the results of a run
that recomputes everything."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cosched.simulator.allocators import EMPTY, NodeState
from cosched.simulator.colocation import COMPACT, HalfNodeState
from cosched.simulator.engine import Engine
from cosched.simulator.platform import Platform
from cosched.simulator.schedulers.base import QueueScheduler

from .test_coscheduling import PLATFORM, co_cases, run_engine, workload_of


def brute_force_neighbours(state: NodeState, job: int) -> dict[int, int]:
    """Job -> number of nodes it shares with `job`, read from the occupant array."""
    counts: dict[int, int] = {}
    for row in state.occupants.tolist():
        if job in row:
            for other in row:
                if other > EMPTY and other != job:
                    counts[other] = counts.get(other, 0) + 1
    return counts


@st.composite
def occupancy_steps(draw):
    """A sequence of half-node occupations and releases that keeps at most two jobs per node."""
    nodes, steps, held = 5, [], {}
    free = [2] * nodes
    for job in range(draw(st.integers(1, 12))):
        if held and draw(st.booleans()):
            gone = draw(st.sampled_from(sorted(held)))
            for node in held.pop(gone):
                free[node] += 1
            steps.append(("vacate", gone))
        open_nodes = [node for node in range(nodes) if free[node]]
        if not open_nodes:
            continue
        chosen = sorted(draw(st.sets(st.sampled_from(open_nodes), min_size=1)))
        for node in chosen:
            free[node] -= 1
        held[job] = chosen
        steps.append(("occupy", job, chosen))
    return steps


@settings(max_examples=40)
@given(steps=occupancy_steps())
def test_shared_node_counts_match_the_occupants(steps):
    state = NodeState(Platform(5, 2, 1), slots=2)
    held = {}
    for step in steps:
        if step[0] == "occupy":
            _, job, nodes = step
            held[job] = np.array(nodes, dtype=np.int64)
            state.occupy(job, held[job], 1)
        else:
            job = step[1]
            state.vacate(job, held.pop(job), 1)
        for job in held:
            assert state.shared.get(job, {}) == brute_force_neighbours(state, job)
            assert sorted(state.neighbours(job)) == sorted(brute_force_neighbours(state, job))
    assert all(job in held for job in state.shared)


@st.composite
def mixed_occupancy_steps(draw):
    """Occupations of half nodes (spread jobs), of whole idle nodes (compact jobs, reservations with
    keys below -1) and releases, at most two occupants per node, nodes in any order."""
    nodes, steps, held = 6, [], {}
    free = [2] * nodes
    for job in range(draw(st.integers(1, 16))):
        if held and draw(st.booleans()):
            gone = draw(st.sampled_from(sorted(held)))
            cores, chosen = held.pop(gone)
            for node in chosen:
                free[node] += cores
            steps.append(("vacate", gone, cores, chosen))
            continue
        cores = draw(st.sampled_from([1, 2]))
        open_nodes = [node for node in range(nodes) if free[node] >= cores]
        if not open_nodes:
            continue
        chosen = draw(st.permutations(open_nodes))[: draw(st.integers(1, len(open_nodes)))]
        owner = -2 - job if cores == 2 and draw(st.booleans()) else job  # a reservation key
        for node in chosen:
            free[node] -= cores
        held[owner] = (cores, chosen)
        steps.append(("occupy", owner, cores, chosen))
    return steps


@settings(max_examples=60)
@given(steps=mixed_occupancy_steps())
def test_half_node_lists_give_the_node_state_of_the_arrays(steps):
    platform = Platform(6, 2, 1)
    lists, arrays = HalfNodeState(platform), NodeState(platform, slots=2)
    for action, owner, cores, chosen in steps:
        getattr(lists, action)(owner, list(chosen), cores)
        getattr(arrays, action)(owner, np.array(chosen, dtype=np.int64), cores)
        np.testing.assert_array_equal(lists.used, arrays.used)
        np.testing.assert_array_equal(lists.occupants, arrays.occupants)
        assert lists.idle == arrays.idle
        assert lists.shared == arrays.shared
        assert lists.idle_ids == np.flatnonzero(arrays.used == 0).tolist()
        assert lists.half_full_ids == np.flatnonzero(arrays.used == 1).tolist()
        every = np.arange(platform.nodes)
        np.testing.assert_array_equal(lists.jobs_on(every), arrays.jobs_on(every))


def test_half_node_arrays_are_read_only():
    state = HalfNodeState(Platform(2, 2, 1))
    state.occupy(0, [1], 1)
    with pytest.raises(ValueError):
        state.used[0] = 2
    with pytest.raises(ValueError):
        state.occupants[0, 0] = 3
    assert state.used.tolist() == [0, 1]
    assert state.occupants.tolist() == [[EMPTY, EMPTY], [0, EMPTY]]


def test_units_table_follows_a_compact_hint_of_a_waiting_job():
    workload = workload_of(["a"] * 3, [4, 4, 8], [10.0, 10.0, 10.0])
    scheduler = QueueScheduler()
    engine = Engine(workload, PLATFORM, scheduler, allocator=_co_allocator())
    for job in range(3):  # in the queue, as the loop puts arrivals there
        engine.waiting[job] = None
        engine.state[job] = 1
        engine._queue(job)
    assert engine.units_table == [1, 1, 2]  # spread: one half node per 4 cores
    engine.hint(0, COMPACT)
    assert engine.units_table[0] == engine.allocator.units(engine, 0) == 2  # both halves of 1 node
    assert engine.waiting_units == sorted(engine.units_table[job] for job in engine.waiting)
    engine.hint(0, None)
    assert engine.units_table[0] == 1
    assert engine.waiting_units == [1, 1, 2]


def _co_allocator():
    from cosched.simulator.colocation import CoLocationAllocator

    return CoLocationAllocator(PLATFORM)


@pytest.mark.parametrize("name", ["easy-co", "filler", "popularity"])
@settings(max_examples=12, deadline=None)
@given(case=co_cases())
def test_passes_not_repeated_on_an_unchanged_state_change_no_result(name, case):
    heatmap, workload, spread = case
    _, kept = run_engine(workload, PLATFORM, name, heatmap, spread)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(QueueScheduler, "decided", lambda self, engine: False)
        _, every = run_engine(workload, PLATFORM, name, heatmap, spread)
    np.testing.assert_array_equal(kept.start, every.start)
    np.testing.assert_array_equal(kept.end, every.end)
    assert [n.tolist() for n in kept.nodes] == [n.tolist() for n in every.nodes]
