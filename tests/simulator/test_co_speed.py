"""The state the co-schedulers keep instead of recomputing it (the units table under placement
hints, the jobs sharing nodes, passes not repeated on an unchanged state) gives the results of a run
that recomputes everything."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cosched.simulator.allocators import EMPTY, Allocation, NodeState
from cosched.simulator.bisection import TouchedJobs
from cosched.simulator.colocation import COMPACT, HeatmapSpeedModel, append_neighbourhood
from cosched.simulator.engine import Engine
from cosched.simulator.platform import NodeGroup, Platform
from cosched.simulator.schedulers import make_scheduler
from cosched.simulator.schedulers.base import QueueScheduler
from cosched.simulator.view import insert_sorted

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
def node_type_steps(draw, most: int = 3):
    """A platform of two node types (2 and 4 cores per node, 1 to `most` nodes each), 1 to 3 slots
    per node, and a sequence of occupations (some cores of nodes in any order, by jobs or
    reservation keys below -1; whole idle nodes through `take`) and releases that never overfills a
    node or its slots."""
    small, big = draw(st.integers(1, most)), draw(st.integers(1, most))
    slots = draw(st.integers(1, 3))
    cores = [2] * small + [4] * big
    free, room, steps, held = list(cores), [slots] * len(cores), [], {}
    for job in range(draw(st.integers(1, 16))):
        if held and draw(st.booleans()):
            gone = draw(st.sampled_from(sorted(held)))
            kind, per_node, chosen = held.pop(gone)
            for node in chosen:
                free[node] += cores[node] if kind == "take" else per_node
                room[node] += 1
            steps.append(("give_back" if kind == "take" else "vacate", gone, per_node, chosen))
            continue
        owner = -2 - job if draw(st.booleans()) else job  # a reservation key or a job
        if draw(st.booleans()):  # whole idle nodes
            idle = [node for node in range(len(cores)) if free[node] == cores[node]]
            if not idle:
                continue
            chosen = draw(st.permutations(idle))[: draw(st.integers(1, len(idle)))]
            kind, per_node = "take", 0
        else:
            per_node = draw(st.integers(1, 2))
            open_nodes = [n for n in range(len(cores)) if free[n] >= per_node and room[n]]
            if not open_nodes:
                continue
            chosen = draw(st.permutations(open_nodes))[: draw(st.integers(1, len(open_nodes)))]
            kind = "occupy"
        for node in chosen:
            free[node] -= cores[node] if kind == "take" else per_node
            room[node] -= 1
        held[owner] = (kind, per_node, chosen)
        steps.append((kind, owner, per_node, chosen))
    return (small, big, slots), steps


def _expected_state(cores: list[int], slots: int, held: dict) -> tuple[list, list, dict]:
    """Used cores, occupants (a free slot per node filled lowest first, in order of holding) and
    shared node counts, recomputed from what each owner holds."""
    used, occupants = [0] * len(cores), [[EMPTY] * slots for _ in cores]
    for owner, (kind, per_node, chosen) in held.items():
        for node in chosen:
            used[node] += cores[node] if kind == "take" else per_node
            occupants[node][occupants[node].index(EMPTY)] = owner
    shared: dict = {}
    for row in occupants:
        jobs = [job for job in row if job > EMPTY]
        for job in jobs:
            for other in jobs:
                if other != job:
                    shared.setdefault(job, {}).setdefault(other, 0)
                    shared[job][other] += 1
    return used, occupants, shared


def _replay(state: NodeState, held: dict, kind: str, owner: int, per_node: int, chosen) -> None:
    """Apply one step of `node_type_steps` to `state` and to `held` (owner -> (kind, cores per
    node, nodes)); occupy and vacate get the node ids as a list or, for odd owners, an array."""
    if kind == "take":
        state.take(owner, list(chosen))
    elif kind == "give_back":
        state.give_back(list(chosen))
    else:
        nodes = np.array(chosen, dtype=np.int64) if owner % 2 else list(chosen)
        getattr(state, kind)(owner, nodes, per_node)
    if kind in ("take", "occupy"):
        held[owner] = (kind, per_node, chosen)
    else:
        del held[owner]


@settings(max_examples=80)
@given(case=st.one_of(node_type_steps(), node_type_steps(most=90)))
def test_node_state_matches_what_the_owners_hold(case):
    """Small platforms, where jobs share nodes often, and up to 180 nodes, where the lowest idle and
    partly used nodes are searched far: the state against a recomputation from what is held."""
    (small, big, slots), steps = case
    platform = Platform.of_groups([NodeGroup(small, 1, 2), NodeGroup(big, 1, 4)])
    cores = [2] * small + [4] * big
    state, held = NodeState(platform, slots=slots), {}
    for step in steps:
        _replay(state, held, *step)
        used, occupants, shared = _expected_state(cores, slots, held)
        assert state.used.tolist() == used
        assert [sorted(row) for row in state.occupants.tolist()] == list(map(sorted, occupants))
        assert state.shared == shared
        idle = [node for node in range(len(cores)) if used[node] == 0]
        partly = [node for node in range(len(cores)) if 0 < used[node] < cores[node]]
        assert state.idle == len(idle) and state.idle_ids == idle
        assert state.partly_used_ids == partly
        for count in (0, 1, 2, 63, 64, 65, len(idle), len(idle) + 1):
            assert state.lowest_idle(count) == idle[:count]
            for fill, expected in ((state.idle_into, idle), (state.partly_used_into, partly)):
                chosen = [-1] * (count + 1)  # written from place 1 on, as many as fit and exist
                found = fill(chosen, 1)
                assert found == min(count, len(expected))
                assert chosen == [-1, *expected[:found]] + [-1] * (count - found)
        assert state.used_cores() == sum(used)
        jobs = sorted({job for row in occupants for job in row if job > EMPTY})
        assert state.jobs_on(np.arange(len(cores))).tolist() == jobs
    whole = {owner: list(chosen) for owner, (kind, _, chosen) in held.items() if kind == "take"}
    if len(whole) == len(held):  # only whole nodes held: a rebuild gives the same state
        rebuilt = NodeState(platform, slots=slots)
        rebuilt.hold_whole(whole)
        assert rebuilt.used.tolist() == state.used.tolist()
        assert rebuilt.idle_ids == state.idle_ids
    state.hold_whole(whole)  # whatever was shared before: only the whole nodes held now
    taken = {node for chosen in whole.values() for node in chosen}
    assert state.idle_ids == [node for node in range(len(cores)) if node not in taken]
    assert state.partly_used_ids == [] and state.idle == len(cores) - len(taken)


@st.composite
def one_core_steps(draw, nodes: int, cores: int, jobs: int, spread: int, crowd: int | None = None):
    """Up to `jobs` jobs each taking one core of 1 to `spread` of `nodes` nodes of `cores` cores,
    given in any order, and leaving: ("occupy", job, nodes) and ("vacate", job, None) steps. A job
    leaves half the time or, with a `crowd`, a quarter of the time and always above `crowd` jobs."""
    steps, held, free = [], {}, [cores] * nodes
    for job in range(draw(st.integers(1, jobs))):
        crowded = crowd is not None and len(held) > crowd
        if held and (crowded or draw(st.integers(0, 1 if crowd is None else 3)) == 0):
            gone = draw(st.sampled_from(sorted(held)))
            for node in held.pop(gone):
                free[node] += 1
            steps.append(("vacate", gone, None))
            continue
        open_nodes = [node for node in range(nodes) if free[node]]
        if not open_nodes:
            continue
        chosen = draw(
            st.lists(st.sampled_from(open_nodes), min_size=1, max_size=spread, unique=True)
        )
        for node in chosen:
            free[node] -= 1
        held[job] = chosen
        steps.append(("occupy", job, chosen))
    return steps


@settings(max_examples=25)
@given(steps=one_core_steps(nodes=32, cores=2, jobs=30, spread=12))
def test_node_lists_and_neighbours_follow_many_spread_jobs(steps):
    """Jobs on half nodes of 32 two-core nodes, each on up to 12 nodes given in any order: long
    idle and partly used lists, several nodes leaving them at once."""
    state, held, used = NodeState(Platform(32, 2, 1), slots=2), {}, [0] * 32
    for kind, job, chosen in steps:
        if kind == "occupy":
            held[job] = chosen
            state.occupy(job, list(chosen), 1)
        else:
            chosen = held.pop(job)
            state.vacate(job, np.array(chosen, dtype=np.int64), 1)
        for node in chosen:
            used[node] += 1 if kind == "occupy" else -1
        assert state.idle_ids == [node for node in range(32) if used[node] == 0]
        assert state.partly_used_ids == [node for node in range(32) if used[node] == 1]
        assert state.idle == used.count(0)
        on_node: dict[int, list[int]] = {}
        for owner, nodes in held.items():
            for node in nodes:
                on_node.setdefault(node, []).append(owner)
        shared: dict[int, dict[int, int]] = {}
        for pair in on_node.values():
            if len(pair) == 2:
                first, second = pair
                mine, theirs = shared.setdefault(first, {}), shared.setdefault(second, {})
                mine[second], theirs[first] = mine.get(second, 0) + 1, theirs.get(first, 0) + 1
        assert state.shared == shared


@settings(max_examples=30, deadline=None)
@given(steps=one_core_steps(nodes=40, cores=4, jobs=120, spread=24, crowd=12))
def test_the_neighbour_table_counts_the_nodes_each_pair_shares_in_the_slots(steps):
    """One core of up to 24 of 40 four-core nodes (four slots) per job: more pairs of neighbours
    than the neighbour table's first room, and job indices beyond its first 64."""
    state, held = NodeState(Platform(40, 4, 1), slots=4), {}
    for kind, job, nodes in steps:
        if kind == "occupy":
            held[job] = nodes
            state.occupy(job, list(nodes), 1)
        else:
            state.vacate(job, held.pop(job), 1)
        expected = {job: brute_force_neighbours(state, job) for job in held}
        assert state.shared == {job: counts for job, counts in expected.items() if counts}
        for job, counts in expected.items():
            assert state.sharing(job) == (counts or None)
            assert sorted(state.neighbours(job)) == sorted(counts)
            touched = TouchedJobs(120)
            append_neighbourhood(touched, job, state)
            recorded = touched.first(touched.count)
            assert recorded[0] == job and sorted(recorded[1:]) == sorted(counts)
    for job in held:  # a read is a copy: changing it changes no count
        counts = state.sharing(job)
        if counts:
            counts.clear()
            assert state.sharing(job) == brute_force_neighbours(state, job)


def test_a_node_shared_by_jobs_turns_partly_used_and_idle_as_they_leave():
    state = NodeState(Platform.of_groups([NodeGroup(1, 1, 2), NodeGroup(1, 1, 4)]), slots=3)
    state.occupy(0, [0, 1], 1)  # the lowest idle nodes
    assert state.partly_used_ids == [0, 1] and state.idle_ids == []
    state.occupy(1, [1, 0], 1)  # node 0 (2 cores) full, node 1 (4 cores) still partly used
    assert state.partly_used_ids == [1] and state.neighbours(0) == [1]
    state.occupy(2, np.array([1]), 2)  # node 1 full, three jobs
    assert state.partly_used_ids == [] and sorted(state.neighbours(2)) == [0, 1]
    state.vacate(0, [0, 1], 1)
    assert state.partly_used_ids == [0, 1] and state.shared == {1: {2: 1}, 2: {1: 1}}
    state.vacate(1, np.array([0, 1]), 1)
    assert state.partly_used_ids == [1] and state.idle_ids == [0] and state.shared == {}
    state.vacate(2, [1], 2)
    assert state.partly_used_ids == [] and state.idle_ids == [0, 1] and state.idle == 2
    assert state.occupants.tolist() == [[EMPTY] * 3] * 2


def test_node_state_arrays_are_read_only():
    state = NodeState(Platform(2, 2, 1))
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
        insert_sorted(engine.queue, job)
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


class _SpeedView:
    """What `HeatmapSpeedModel.speeds` reads of a view: neighbours, allocations, the platform."""

    def __init__(self, neighbours: dict[int, list[int]], cores: list[int], cores_per_node: int):
        self.neighbours = lambda job: list(neighbours.get(job, []))
        self.allocation = [Allocation([0], used) for used in cores]
        self.platform = Platform(4, cores_per_node, 1)


@st.composite
def speed_cases(draw):
    """A heatmap of 1 to 4 applications (with repeated values, so minima tie), jobs with an
    application and the cores they use per node, and who sits beside each job."""
    apps = draw(st.integers(1, 4))
    values = st.sampled_from([0.5, 0.75, 1.0, 1.25, 0.75])
    speedups = np.array(draw(st.lists(values, min_size=apps * apps, max_size=apps * apps)))
    jobs = draw(st.integers(1, 6))
    app = np.array(draw(st.lists(st.integers(0, apps - 1), min_size=jobs, max_size=jobs)))
    cores = draw(st.lists(st.sampled_from([1, 2]), min_size=jobs, max_size=jobs))
    neighbours = {
        job: draw(st.lists(st.sampled_from([o for o in range(jobs) if o != job]), unique=True))
        for job in range(jobs)
        if jobs > 1
    }
    alone = np.array(draw(st.lists(values, min_size=apps, max_size=apps)))
    return speedups.reshape(apps, apps), app, alone, neighbours, cores


@settings(max_examples=60)
@given(case=speed_cases())
def test_speed_is_the_least_heatmap_speedup_beside_each_neighbour(case):
    speedups, app, alone, neighbours, cores = case
    model = HeatmapSpeedModel(speedups, app, alone)
    view = _SpeedView(neighbours, cores, cores_per_node=2)
    found = model.speeds(view, np.arange(len(app)))
    for job, speed in found:
        others = neighbours.get(job, [])
        if others:  # 000 §3.5, formula (4.1)
            expected = min(speedups[app[job], app[other]] for other in others)
        else:  # alone: spread on half nodes, or compact on whole ones
            expected = alone[app[job]] if cores[job] < 2 else 1.0
        assert speed == expected and type(speed) is float
    assert [job for job, _ in found] == list(range(len(app)))


@settings(max_examples=60)
@given(case=node_type_steps(), data=st.data())
def test_speed_in_is_the_least_heatmap_speedup_beside_the_brute_force_neighbours(case, data):
    (small, big, slots), steps = case
    platform = Platform.of_groups([NodeGroup(small, 1, 2), NodeGroup(big, 1, 4)])
    state, held = NodeState(platform, slots=slots), {}
    for step in steps:
        _replay(state, held, *step)
    apps, values = 3, st.sampled_from([0.5, 0.75, 1.0, 1.25])
    speedups = np.array(data.draw(st.lists(values, min_size=apps**2, max_size=apps**2)))
    app = np.array(data.draw(st.lists(st.integers(0, apps - 1), min_size=16, max_size=16)))
    alone = np.array(data.draw(st.lists(values, min_size=apps, max_size=apps)))
    model = HeatmapSpeedModel(speedups.reshape(apps, apps), app, alone)
    for job, (kind, per_node, chosen) in held.items():
        if job < 0:  # a reservation
            continue
        cores = 4 if kind == "take" else per_node
        speed = model.speed_in(state, job, Allocation(list(chosen), cores), 2)
        others = brute_force_neighbours(state, job)
        if others:  # 000 §3.5, formula (4.1)
            expected = min(model.speedups[app[job], app[other]] for other in others)
        else:
            expected = alone[app[job]] if cores < 2 else 1.0
        assert speed == expected
        touched = TouchedJobs(len(app))
        append_neighbourhood(touched, job, state)
        recorded = touched.first(touched.count)
        assert recorded[0] == job and sorted(recorded[1:]) == sorted(others)


class _EveryRunningJob:
    """The heatmap model asked for every running job at each speed update, whichever jobs the
    engine names."""

    def __init__(self, model: HeatmapSpeedModel):
        self.model = model

    def speeds(self, view, jobs):
        return self.model.speeds(view, np.array(sorted(view.running), dtype=np.int64))


@pytest.mark.parametrize("name", ["easy-co", "filler"])
@settings(max_examples=15, deadline=None)
@given(case=co_cases())
def test_speed_updates_of_the_jobs_beside_a_change_equal_updates_of_every_running_job(name, case):
    heatmap, workload, spread = case
    _, named = run_engine(workload, PLATFORM, name, heatmap, spread)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(
            "cosched.simulator.colocation.CoContext.speed_model",
            lambda context: _EveryRunningJob(
                HeatmapSpeedModel(context.speedups, context.app, context.spread, context.known)
            ),
        )
        _, every = run_engine(workload, PLATFORM, name, heatmap, spread)
    np.testing.assert_array_equal(named.start, every.start)
    np.testing.assert_array_equal(named.end, every.end)
    assert named.log == every.log  # the same speed changes, at the same times, in the same order


class _CallTimes:
    """A speed model that records when it is asked (a model of shared load would need every
    change, not only the jobs beside it)."""

    def __init__(self):
        self.times: list[float] = []

    def speeds(self, view, jobs):
        self.times.append(view.now)
        return []


@settings(max_examples=15, deadline=None)
@given(case=co_cases())
def test_the_speed_model_is_asked_at_every_start_and_end(case):
    heatmap, workload, spread = case
    model = _CallTimes()
    scheduler = make_scheduler("easy-co")
    engine = Engine(
        workload,
        PLATFORM,
        scheduler,
        allocator=scheduler.make_allocator(PLATFORM, "idle"),
        speed_model=model,
    )
    result = engine.run()
    assert model.times == sorted({*result.start.tolist(), *result.end.tolist()})


class _Kinds(_CallTimes):
    """Records the type of the jobs it is given; `jobs_as_list` as given."""

    def __init__(self, jobs_as_list: bool):
        super().__init__()
        self.jobs_as_list, self.kinds = jobs_as_list, set()

    def speeds(self, view, jobs):
        self.kinds.add(type(jobs))
        return super().speeds(view, jobs)


@pytest.mark.parametrize("as_list", [False, True])
def test_a_speed_model_gets_an_int_array_unless_it_takes_a_list(as_list):
    workload = workload_of(["a", "b", "a"], np.array([1, 2, 3]), np.array([10.0, 20.0, 10.0]))
    model = _Kinds(as_list)
    scheduler = make_scheduler("easy-co")
    allocator = scheduler.make_allocator(PLATFORM, "idle")
    Engine(workload, PLATFORM, scheduler, allocator=allocator, speed_model=model).run()
    assert model.kinds == ({list} if as_list else {np.ndarray})
    assert HeatmapSpeedModel.jobs_as_list  # the heatmap model takes a list (no array per update)
