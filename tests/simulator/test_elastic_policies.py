"""The six policies of ElastiSim's study (001 §6.3): hand-computed cases and invariants on generated
workloads."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cosched.simulator.elastic.traces import ElasticMarking, elastic_models
from cosched.simulator.jobs import RIGID, amdahl, malleable, moldable
from cosched.simulator.platform import Platform
from cosched.simulator.schedulers import ELASTIC, make_scheduler
from cosched.simulator.schedulers.backfilling import first_fit
from cosched.simulator.schedulers.elastic import admit, rigid_starts, water_level
from cosched.simulator.simulation import simulate
from cosched.simulator.workload import make_workload

TIME_TOLERANCE = 1e-9  # absolute, seconds: hand-computed end times
WORK_TOLERANCE = 1e-6  # relative: work integrated from the log after many rescalings


def workload(runs, nodes, submit=None):
    n = len(runs)
    return make_workload(
        np.arange(n), np.zeros(n) if submit is None else np.asarray(submit, float), runs, nodes
    )


def ends(policy, w, nodes, models, **options):
    result = simulate(
        w, Platform(nodes), make_scheduler(policy, **options), job_models=models, use_run_times=True
    )
    return result.end.tolist()


# 4 nodes; J0: 8 s on 2 nodes, J1: 4 s on 2 nodes, both malleable in [1, 4], linear scaling,
# submitted at 0.
TWO_JOBS = (workload([8.0, 4.0], [2, 2]), 4, [malleable(1, 4)] * 2)


def test_rigid_policies_run_the_trace_sizes():
    assert ends("fcfs-rigid", *TWO_JOBS) == [8.0, 4.0]
    assert ends("sjf-rigid", *TWO_JOBS) == [8.0, 4.0]


def test_fcfs_malleable_admits_at_minimum_then_fills_in_arrival_order():
    # t=0: both at 1 node, the 2 spare nodes to J0 (3 nodes, rate 1.5): J0 ends at 8 / 1.5;
    # J1 (rate 0.5) has done 8/3 of 4 by then, grows to 4 nodes (rate 2): ends
    # 16/3 + (4 - 8/3) / 2 = 6
    assert ends("fcfs-malleable", *TWO_JOBS) == pytest.approx([16 / 3, 6.0], abs=TIME_TOLERANCE)


def test_sjf_malleable_fills_the_shortest_estimate_first():
    # J1 gets 3 nodes: ends at 4 / 1.5 = 8/3; J0 has done 4/3 of 8, then runs on 4 nodes:
    # 8/3 + (8 - 4/3) / 2 = 6
    assert ends("sjf-malleable", *TWO_JOBS) == pytest.approx([6.0, 8 / 3], abs=TIME_TOLERANCE)


def test_moldable_jobs_keep_the_size_they_start_with():
    w, nodes, _ = TWO_JOBS
    # J0 starts on 3 nodes (8 / 1.5), J1 on 1 node (4 / 0.5) and never grows
    assert ends("fcfs-malleable", w, nodes, [moldable(1, 4)] * 2) == pytest.approx([16 / 3, 8.0])


def test_drf_shares_the_nodes_equally_where_fcfs_fills_the_first_job():
    w = workload([6.0, 3.0], [2, 2])
    models = [malleable(1, 6)] * 2
    # DRF: 3 + 3 nodes (rate 1.5): J1 ends at 2, J0 has done 3 of 6, then 6 nodes (rate 3): ends at
    # 3
    assert ends("drf", w, 6, models) == pytest.approx([3.0, 2.0], abs=TIME_TOLERANCE)
    # FCFS: 5 + 1 nodes: J0 ends at 6 / 2.5 = 2.4, J1 has done 1.2 of 3, then 6 nodes:
    # 2.4 + 1.8 / 3 = 3
    assert ends("fcfs-malleable", w, 6, models) == pytest.approx([2.4, 3.0], abs=TIME_TOLERANCE)


def test_drf_gives_the_last_odd_node_to_the_earliest_job():
    w = workload([10.0, 10.0, 10.0], [1, 1, 1])
    result = simulate(w, Platform(5), "drf", job_models=[malleable(1, 5)] * 3, log_events=True)
    starts = {job: nodes for time, event, job, nodes in result.log if event == "start"}
    assert starts == {0: 2, 1: 2, 2: 1}


def test_srtf_favours_the_least_remaining_work_where_sjf_favours_the_shortest_job():
    # J0: 10 s on 2 nodes in [1, 2] from t=0; J1: 6 s on 2 nodes in [1, 4] arrives at t=6 (J0 has 4
    # s left)
    w = workload([10.0, 6.0], [2, 2], [0.0, 6.0])
    models = [malleable(1, 2), malleable(1, 4)]
    # SRTF: J0 keeps 2 nodes, ends at 10; J1 on 2 nodes has done 4 by then, 4 nodes for the last 2:
    # ends at 11
    assert ends("srtf", w, 4, models) == pytest.approx([10.0, 11.0], abs=TIME_TOLERANCE)
    # SJF (J1's 6 s < J0's 10 s): J0 shrinks to 1 node, J1 takes 3 (ends 6 + 6 / 1.5 = 10);
    # J0 has done 6 + 2 by then, 2 nodes for the last 2 s: ends at 12
    assert ends("sjf-malleable", w, 4, models) == pytest.approx([12.0, 10.0], abs=TIME_TOLERANCE)


def test_a_malleable_job_shrinks_to_admit_a_waiting_one_unless_told_not_to():
    # J0: 8 s on 2 nodes in [1, 4]; J1 rigid, 2 s on 2 nodes, arrives at 1
    w = workload([8.0, 2.0], [2, 2], [0.0, 1.0])
    models = [malleable(1, 4), RIGID]
    # J0 on 4 nodes (rate 2) until 1, then 2 nodes (rate 1) beside J1 until 3, then 4 nodes:
    # 3 + 4 / 2 = 5
    assert ends("fcfs-malleable", w, 4, models) == pytest.approx([5.0, 3.0], abs=TIME_TOLERANCE)
    # without shrinking, J1 waits for J0 (4 nodes from 0: ends at 4)
    assert ends("fcfs-malleable", w, 4, models, shrink=False) == pytest.approx(
        [4.0, 6.0], abs=TIME_TOLERANCE
    )


def test_malleable_fcfs_blocks_behind_a_job_that_does_not_fit_even_at_its_minimum():
    # 4 nodes: J0 rigid on 3 nodes, J1 rigid on 2 (does not fit), J2 rigid on 1 would fit but waits
    # (no backfill)
    w = workload([10.0, 5.0, 1.0], [3, 2, 1], [0.0, 1.0, 2.0])
    assert ends("fcfs-malleable", w, 4, [RIGID] * 3) == [10.0, 15.0, 11.0]
    assert ends("fcfs-rigid", w, 4, [RIGID] * 3) == [10.0, 15.0, 3.0]  # EASY backfills J2


def work_from_log(result, models, requested):
    """Work each job did, integrated from the log: rate(size) over every interval of its life."""
    done = np.zeros(len(requested))
    since = {}
    for time, event, job, nodes in result.log:
        if job in since:
            begin, size = since.pop(job)
            done[job] += models[job].rate(size, requested[job]) * (time - begin)
        if event in ("start", "resize"):
            since[job] = (time, nodes)
    return done


class Checked:
    """Wraps a policy: after every pass no node holds two jobs and every job's size is within its
    bounds."""

    def __init__(self, policy):
        self.policy = policy
        self.name = policy.name

    def __getattr__(self, name):
        return getattr(self.policy, name)

    def schedule(self, engine):
        self.policy.schedule(engine)
        idle = int(engine.is_idle(np.arange(engine.platform.nodes)).sum())
        nodes = np.concatenate(
            [engine.allocation[job].nodes for job in engine.running] or [np.zeros(0, int)]
        )
        assert np.unique(nodes).size == nodes.size == engine.platform.nodes - idle
        for job in engine.running:
            low, high = engine.model(job).bounds(engine.requested_nodes(job))
            assert low <= engine.allocation[job].nodes.size <= high


jobs_strategy = st.lists(
    st.tuples(st.floats(1, 50), st.integers(1, 6), st.floats(0, 30)), min_size=1, max_size=12
)


@settings(deadline=None)
@given(
    jobs_strategy,
    st.integers(1, 8),
    st.floats(0, 1),
    st.sampled_from(["moldable", "malleable"]),
    st.floats(0.2, 1),
    st.floats(1, 3),
    st.sampled_from(["linear", "amdahl"]),
    st.booleans(),
    st.integers(0, 1000),
)
def test_every_policy_completes_every_job_conserves_work_and_never_overcommits_a_node(
    jobs, nodes, fraction, kind, low, high, scaling, shrink, seed
):
    runs, sizes, submit = (
        np.array(column) for column in zip(*sorted(jobs, key=lambda job: job[2]))
    )
    w = make_workload(np.arange(len(runs)), submit, runs, np.minimum(sizes, nodes))
    platform = Platform(nodes)
    models = elastic_models(
        w, platform, ElasticMarking(fraction, kind, low, high, scaling, 0.2, seed=seed)
    )
    requested = w.cores.tolist()
    for policy in ELASTIC:
        result = simulate(
            w,
            platform,
            Checked(make_scheduler(policy, shrink=shrink)),
            job_models=models,
            log_events=True,
        )
        assert np.isfinite(result.end).all() and (result.start >= w.submit).all()
        assert (result.end > result.start).all()
        assert work_from_log(result, models, requested) == pytest.approx(w.run, rel=WORK_TOLERANCE)


def test_amdahl_jobs_progress_at_the_law_s_rate():
    w = workload([9.0], [1])
    f = 0.5
    result = simulate(
        w, Platform(3), "fcfs-malleable", job_models=[malleable(1, 3, scaling=amdahl(f))]
    )
    assert result.end[0] == pytest.approx(
        9.0 * (f + (1 - f) / 3), abs=TIME_TOLERANCE
    )  # speed(3) / speed(1)


@given(
    st.lists(st.tuples(st.integers(1, 20), st.integers(0, 20)), min_size=1, max_size=20),
    st.integers(0, 400),
)
def test_water_level_is_the_highest_level_that_fits(bounds, extra):
    base = [low for low, _ in bounds]
    top = [low + room for low, room in bounds]
    total = min(sum(base) + extra, sum(top))

    def filled(level):
        return sum(min(max(level, low), high) for low, high in zip(base, top))

    level = water_level(base, top, total)
    assert filled(level) <= total
    assert filled(level + 1) > total or filled(level + 1) == sum(top)


_SIZES = st.lists(st.integers(1, 8), min_size=1, max_size=12)


@given(sizes=_SIZES, free=st.integers(0, 16))
def test_admission_takes_the_longest_prefix_of_the_queue_that_fits(sizes, free):
    prefix, used = [], 0
    for job, size in enumerate(sizes):
        if used + size > free:
            break
        prefix.append(job)
        used += size
    assert admit(range(len(sizes)), free, sizes) == prefix


@given(sizes=_SIZES, free=st.integers(0, 16))
def test_greedy_rigid_policies_start_every_job_that_fits_in_order(sizes, free):
    order = list(range(len(sizes)))[::-1]
    greedy = rigid_starts(order, sizes, None, free, (), 0.0, backfill=False)
    assert greedy == first_fit(order, sizes, free)


@given(
    sizes=_SIZES,
    free=st.integers(0, 16),
    ends=st.lists(st.tuples(st.integers(1, 5), st.integers(1, 4)), max_size=4),
)
def test_rigid_policies_start_the_fitting_prefix_then_backfill_within_the_free_nodes(
    sizes, free, ends
):
    jobs = len(sizes)
    releases = [(float(end), jobs + index, nodes) for index, (end, nodes) in enumerate(ends)]
    runtime = [float(1 + job % 3) for job in range(jobs)]
    started = rigid_starts(range(jobs), sizes, runtime, free, releases, 0.0)
    prefix = admit(range(jobs), free, sizes)
    assert started[: len(prefix)] == prefix
    assert sum(sizes[job] for job in started) <= free
    assert started == sorted(started) and len(set(started)) == len(started)
