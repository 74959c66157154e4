"""Co-scheduling on the engine: co-location allocator, heatmap speeds (000 §3.5) and the
co-schedulers."""

import math
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cosched.errors import InputError
from cosched.simulator.colocation import CoLocationAllocator, co_context
from cosched.simulator.engine import Engine
from cosched.simulator.generate import ApplicationSeed, generate_workload
from cosched.simulator.platform import Platform
from cosched.simulator.schedulers import COSCHEDULERS, make_scheduler
from cosched.simulator.simulation import simulate
from cosched.simulator.workload import make_workload
from cosched.theory.heatmap import MissingPairsWarning, heatmap_from_speedups

TIME_TOLERANCE = 1e-6  # seconds of float slack on simulated times


def workload_of(apps, cores, compact, submit=None):
    n = len(apps)
    return make_workload(
        np.arange(n),
        np.zeros(n) if submit is None else submit,
        compact,
        cores,
        compact,
        np.array(apps, dtype=object),
    )


def run_engine(
    workload, platform, name, heatmap=None, spread=None, prefer="idle", **scheduler_options
):
    context = co_context(workload, heatmap, spread)
    scheduler = make_scheduler(
        name, **scheduler_options
    )  # its own co-location allocator (matching: pairs)
    engine = Engine(
        workload,
        platform,
        scheduler,
        allocator=scheduler.make_allocator(platform, prefer),
        speed_model=context.speed_model(),
        log_events=True,
    )
    return engine, engine.run()


def speed_integral(result):
    """Integral of each job's speed over its run, from the event log (speed 1.0 at start)."""
    done = np.zeros(len(result.start))
    speed, since = {}, {}
    for time, event, job, value in result.log:
        if event == "start":
            speed[job], since[job] = 1.0, time
        elif event in ("speed", "finish"):
            done[job] += speed[job] * (time - since[job])
            speed[job], since[job] = value, time
    return done


def node_loads(engine, result):
    """Max jobs and max allocated cores per node over time (sweep over start/end events)."""
    events = []
    for job, allocation in enumerate(engine.allocation):
        for node in allocation.nodes.tolist():
            events.append((result.end[job], 0, node, -allocation.cores))
            events.append((result.start[job], 1, node, allocation.cores))
    events.sort()
    jobs = np.zeros(engine.platform.nodes, dtype=int)
    cores = np.zeros(engine.platform.nodes, dtype=int)
    max_jobs = max_cores = 0
    for _, _, node, delta in events:
        jobs[node] += 1 if delta > 0 else -1
        cores[node] += delta
        max_jobs, max_cores = max(max_jobs, jobs[node]), max(max_cores, cores[node])
    return max_jobs, max_cores


APPS = ("a", "b", "c", "d")


@st.composite
def co_cases(draw):
    k = len(APPS)
    speedups = np.array(
        draw(st.lists(st.floats(0.5, 2.0), min_size=k * k, max_size=k * k))
    ).reshape(k, k)
    procs = draw(st.lists(st.integers(1, 24), min_size=k, max_size=k))
    compact = draw(st.lists(st.floats(1, 500), min_size=k, max_size=k))
    heatmap = heatmap_from_speedups(APPS, speedups, compact, procs)
    jobs = draw(st.integers(1, 25))
    workload = generate_workload(
        ApplicationSeed.from_heatmap(heatmap),
        jobs,
        interarrival="poisson",
        mean=draw(st.floats(0.1, 100)),
        rng_seed=draw(st.integers(0, 2**31)),
    )
    spread = draw(st.floats(0.7, 1.5))
    return heatmap, workload, spread


PLATFORM = Platform(6, 2, 4, "tiny")  # 6 nodes x 8 cores, half = 4


@pytest.mark.parametrize("name", COSCHEDULERS)
@given(case=co_cases())
def test_all_ones_heatmap_gives_compact_run_times(name, case):
    heatmap, workload, _ = case
    ones = heatmap_from_speedups(
        heatmap.applications, np.ones((4, 4)), heatmap.compact_times, heatmap.procs
    )
    result = simulate(workload, PLATFORM, name, heatmap=ones, alone_speedup=1.0)
    assert np.allclose(result.end - result.start, workload.run, atol=TIME_TOLERANCE)


@pytest.mark.parametrize("name", COSCHEDULERS)
@given(case=co_cases())
def test_work_is_conserved_across_neighbour_changes(name, case):
    heatmap, workload, spread = case
    _, result = run_engine(workload, PLATFORM, name, heatmap, spread)
    assert np.allclose(speed_integral(result), workload.run, rtol=1e-9, atol=TIME_TOLERANCE)
    assert (result.start >= workload.submit - TIME_TOLERANCE).all()


@pytest.mark.parametrize("name", COSCHEDULERS)
@pytest.mark.parametrize("prefer", ["idle", "shared"])
@given(case=co_cases())
def test_no_node_holds_more_than_two_jobs_or_its_cores(name, prefer, case):
    heatmap, workload, spread = case
    engine, result = run_engine(workload, PLATFORM, name, heatmap, spread, prefer)
    max_jobs, max_cores = node_loads(engine, result)
    assert max_jobs <= 2 and max_cores <= PLATFORM.cores_per_node
    spread_nodes = [
        a.nodes.size for a in engine.allocation if a.cores == PLATFORM.cores_per_node // 2
    ]
    assert all(np.unique(a.nodes).size == a.nodes.size for a in engine.allocation)
    assert len(spread_nodes) + sum(
        a.cores == PLATFORM.cores_per_node for a in engine.allocation
    ) == len(workload)


def test_neighbour_change_rescales_remaining_time_by_formula_4_2():
    # one node of 4 cores: a and b share it; a runs at 2.0 next to b, b at 0.5 next to a
    heatmap = heatmap_from_speedups(("a", "b"), [[1.0, 2.0], [0.5, 1.0]], [100.0, 50.0], [2, 2])
    workload = workload_of(["a", "b"], [2, 2], [100.0, 50.0])
    result = simulate(workload, Platform(1, 2, 2), "easy-co", heatmap=heatmap, alone_speedup=1.0)
    # a: 100 / 2 = 50 s. b: 25 compact seconds done by t = 50 at speed 0.5, then 25 s alone at 1.0.
    assert result.end.tolist() == pytest.approx([50.0, 75.0])
    frame = result.jobs_frame()
    assert frame["speedup"].tolist() == pytest.approx([2.0, 50 / 75])
    assert frame["nodes"].tolist() == ["0", "0"]


def test_alone_on_spread_nodes_uses_spread_speedup():
    heatmap = heatmap_from_speedups(("a",), [[1.0]], [100.0], [4])
    workload = workload_of(["a"], [4], [100.0])
    result = simulate(workload, Platform(4, 2, 2), "easy-co", heatmap=heatmap, alone_speedup=1.25)
    assert result.end[0] == pytest.approx(80.0)
    assert result.nodes[0].size == 2  # 4 cores over twice the single compact node, half of each


def test_job_speed_is_the_minimum_over_neighbours_on_all_its_nodes():
    # x spans nodes 0 and 1 (2 cores on each); y sits on node 0, z on node 1; x next to y 1.5, next
    # to z 0.8
    heatmap = heatmap_from_speedups(
        ("x", "y", "z"), [[1, 1.5, 0.8], [1, 1, 1], [1, 1, 1]], [100, 1000, 1000], [4, 2, 2]
    )
    workload = workload_of(["x", "y", "z"], [4, 2, 2], [100.0, 1000.0, 1000.0])
    result = simulate(workload, Platform(2, 2, 2), "easy-co", heatmap=heatmap, alone_speedup=1.0)
    assert result.end[0] == pytest.approx(100 / 0.8)


def test_sjf_co_and_ljf_co_start_jobs_in_their_key_order():
    workload = workload_of(["a"] * 4, [2] * 4, [30.0, 10.0, 40.0, 20.0])
    platform = Platform(1, 2, 2)  # two half-node slots: two jobs at a time
    sjf = simulate(workload, platform, "sjf-co")
    ljf = simulate(workload, platform, "ljf-co")
    assert list(np.argsort(sjf.start, kind="stable")) == [1, 3, 0, 2]
    assert set(np.flatnonzero(ljf.start == 0)) == {0, 2}


def test_popularity_deploys_jobs_without_a_good_partner_compact():
    heatmap = heatmap_from_speedups(("good", "bad"), [[1.2, 0.7], [0.7, 0.7]], [10.0, 10.0], [2, 2])
    workload = workload_of(["good", "good", "bad"], [2, 2, 2], [10.0, 10.0, 10.0])
    engine, result = run_engine(
        workload, Platform(3, 2, 2), "popularity", heatmap, 1.0, compact_below=1
    )
    assert [engine.allocation[j].cores for j in range(3)] == [2, 2, 4]
    assert result.end[2] - result.start[2] == pytest.approx(10.0)  # compact: speed 1.0


def test_job_too_big_to_spread_runs_compact():
    workload = workload_of(["a", "a"], [12, 2], [10.0, 10.0])
    engine, result = run_engine(workload, Platform(3, 2, 2), "easy-co")
    assert engine.allocation[0].cores == 4 and engine.allocation[0].nodes.size == 3
    assert result.start.tolist() == [0.0, 10.0]


def test_a_users_co_scheduler_gets_the_heatmap_like_the_built_in_ones():
    from cosched.simulator.schedulers import SCHEDULERS, register_scheduler
    from cosched.simulator.schedulers.coscheduling import SJFCo

    heatmap = heatmap_from_speedups(("a", "b"), [[1.2, 0.9], [1.1, 1.3]], [10.0, 20.0], [2, 2])
    workload = workload_of(["a", "b", "a", "b"], [2, 2, 2, 2], [10.0, 20.0, 10.0, 20.0])
    register_scheduler("my-sjf-co", SJFCo)
    try:
        mine = simulate(workload, Platform(2, 2, 2), "my-sjf-co", heatmap=heatmap)
    finally:
        del SCHEDULERS["my-sjf-co"]
    built_in = simulate(workload, Platform(2, 2, 2), "sjf-co", heatmap=heatmap)
    assert mine.co_scheduled and mine.end.tolist() == built_in.end.tolist()
    assert (mine.end - mine.start != workload.run).any()  # heatmap speeds, not compact ones


def test_workload_application_missing_from_heatmap_raises():
    heatmap = heatmap_from_speedups(("a",), [[1.0]], [10.0], [2])
    with pytest.raises(InputError, match="not in the heatmap"):
        co_context(workload_of(["zz"], [2], [10.0]), heatmap)


def test_odd_cores_per_node_cannot_bind_half_sockets():
    with pytest.raises(InputError, match="even number"):
        CoLocationAllocator(Platform(2, 1, 3))


def test_unmeasured_pair_uses_fallback_with_warning():
    heatmap = heatmap_from_speedups(("a", "b"), [[1.0, math.nan], [1.1, 1.0]], [10.0, 10.0], [2, 2])
    with pytest.warns(MissingPairsWarning, match="mirrored"):
        context = co_context(workload_of(["a", "b"], [2, 2], [10.0, 10.0]), heatmap)
    assert context.speedups[0, 1] == pytest.approx(1.1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        co_context(workload_of(["a"], [2], [10.0]), heatmap)  # pair a|b unused: no warning


def test_the_documented_co_scheduler_runs_on_heatmap_speeds():
    import runpy
    from pathlib import Path

    from cosched.simulator.schedulers import SCHEDULERS

    example = Path(__file__).resolve().parents[2] / "docs" / "examples" / "best_neighbour.py"
    runpy.run_path(str(example))
    try:
        heatmap = heatmap_from_speedups(("a", "b"), [[1.2, 0.8], [1.1, 1.3]], [10.0, 20.0], [2, 2])
        workload = workload_of(["a", "b", "b", "a", "b"], [2] * 5, [10.0, 20.0, 20.0, 10.0, 20.0])
        result = simulate(workload, Platform(2, 2, 2), "best-neighbour", heatmap=heatmap)
    finally:
        del SCHEDULERS["best-neighbour"]
    speedups = result.jobs_frame()["speedup"]
    assert result.co_scheduled and not np.allclose(speedups, 1.0)


@given(case=co_cases())
def test_filler_orders_every_pass_as_the_whole_queue_sorted_by_its_key(case):
    """Filler sorts only the jobs that fit; at every pass of a run its order is the queue sorted by
    its priority key (`QueueScheduler.order`)."""
    from cosched.simulator.schedulers.base import QueueScheduler
    from cosched.simulator.schedulers.filler import Filler

    heatmap, workload, spread = case
    passes = []

    class CheckedFiller(Filler):
        def order(self, engine, limit=None):
            found = super().order(engine, limit)
            passes.append(found == QueueScheduler.order(self, engine, limit))
            return found

    context = co_context(workload, heatmap, spread)
    scheduler = CheckedFiller()
    Engine(
        workload,
        PLATFORM,
        scheduler,
        allocator=scheduler.make_allocator(PLATFORM),
        speed_model=context.speed_model(),
    ).run()
    assert passes and all(passes)
