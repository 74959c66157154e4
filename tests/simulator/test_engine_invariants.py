"""Invariants of the engine and the classic schedulers on generated workloads."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cosched.simulator.engine import Engine
from cosched.simulator.metrics import step_series
from cosched.simulator.platform import Platform
from cosched.simulator.schedulers import CLASSIC, make_scheduler
from cosched.simulator.simulation import simulate
from cosched.simulator.workload import make_workload

from .conftest import platforms_and_workloads

TIME_TOLERANCE = 1e-9


def _nodes_never_shared_in_time(result):
    per_node = {}
    for job, nodes in enumerate(result.nodes):
        for node in nodes.tolist():
            per_node.setdefault(node, []).append((result.start[job], result.end[job]))
    for intervals in per_node.values():
        intervals.sort()
        for (_, end), (start, _) in zip(intervals, intervals[1:]):
            assert start >= end - TIME_TOLERANCE


@pytest.mark.parametrize("name", CLASSIC)
@given(case=platforms_and_workloads())
def test_never_more_cores_in_use_than_exist(name, case):
    platform, workload = case
    result = simulate(workload, platform, name)
    _, busy = step_series(result.start, result.end, workload.cores)
    assert busy.max() <= platform.total_cores
    _nodes_never_shared_in_time(result)
    counts = np.array([n.size for n in result.nodes])
    assert np.array_equal(counts, -(-workload.cores // platform.cores_per_node))


@pytest.mark.parametrize("name", CLASSIC)
@given(case=platforms_and_workloads())
def test_no_job_starts_before_it_arrives_and_each_runs_exactly_its_run_time(name, case):
    platform, workload = case
    result = simulate(workload, platform, name)
    assert np.all(result.start >= workload.submit)
    np.testing.assert_allclose(result.end - result.start, workload.run, rtol=0, atol=TIME_TOLERANCE)


@given(case=platforms_and_workloads())
def test_fcfs_start_times_are_non_decreasing_in_arrival_order(case):
    platform, workload = case
    result = simulate(workload, platform, "fcfs")
    assert np.all(np.diff(result.start) >= 0)


@pytest.mark.parametrize("use_run_times", [False, True])
@given(case=platforms_and_workloads(max_jobs=30))
def test_easy_head_never_starts_later_than_its_reservation(use_run_times, case):
    platform, workload = case
    scheduler = make_scheduler("easy", record_reservations=True)
    result = simulate(workload, platform, scheduler, use_run_times=use_run_times)
    for job, reservation in scheduler.reservations.items():
        assert result.start[job] <= reservation + TIME_TOLERANCE


@pytest.mark.parametrize("depth", [1, 3, 100])
@given(case=platforms_and_workloads(max_jobs=30))
def test_conservative_no_job_starts_later_than_its_first_reservation(depth, case):
    platform, workload = case
    scheduler = make_scheduler("conservative", record_reservations=True, depth=depth)
    result = simulate(workload, platform, scheduler)
    if depth >= len(workload):
        assert set(scheduler.reservations) == set(range(len(workload)))
    for job, reservation in scheduler.reservations.items():
        assert result.start[job] <= reservation + TIME_TOLERANCE


@pytest.mark.parametrize("name", CLASSIC)
@given(case=platforms_and_workloads(one_core=True))
def test_one_core_jobs_on_a_big_enough_idle_platform_never_wait(name, case):
    _, workload = case
    platform = Platform(len(workload), 1, 1)
    result = simulate(workload, platform, name)
    assert np.all(result.start == workload.submit)


@pytest.mark.parametrize("name", CLASSIC)
@given(case=platforms_and_workloads())
def test_simulation_is_deterministic(name, case):
    platform, workload = case
    first, second = simulate(workload, platform, name), simulate(workload, platform, name)
    assert np.array_equal(first.start, second.start)
    assert all(np.array_equal(a, b) for a, b in zip(first.nodes, second.nodes))


def test_easy_backfills_a_short_job_without_delaying_the_head():
    # 2 nodes; job 0 holds 1 node for 10 s, job 1 needs 2 nodes (head), job 2 is short and fits
    # before 10
    workload = make_workload(
        [0, 1, 2, 3], [0, 1, 2, 3], [10, 5, 4, 20], [1, 2, 1, 1], [10, 5, 4, 20]
    )
    platform = Platform(2)
    easy = simulate(workload, platform, "easy")
    assert easy.start.tolist() == [0, 10, 2, 15]
    fcfs = simulate(workload, platform, "fcfs")
    assert fcfs.start.tolist() == [0, 10, 15, 15]
    conservative = simulate(workload, platform, "conservative")
    assert conservative.start.tolist() == [0, 10, 2, 15]


def test_sjf_and_ljf_order_the_queue_by_estimate():
    workload = make_workload([0, 1, 2, 3], [0, 1, 1, 1], [10, 30, 5, 20], [1, 1, 1, 1])
    platform = Platform(1)
    assert simulate(workload, platform, "sjf").start.tolist() == [0, 35, 10, 15]
    assert simulate(workload, platform, "ljf").start.tolist() == [0, 10, 60, 40]


def test_a_scheduler_can_be_a_plain_function():
    def newest_first(engine):
        for job in reversed(list(engine.waiting)):
            if not engine.start(job):
                return

    workload = make_workload([0, 1, 2], [0, 1, 1], [10, 5, 5], [1, 1, 1])
    result = simulate(workload, Platform(1), newest_first)
    assert result.start.tolist() == [0, 15, 10]
    assert result.scheduler == "newest_first"


class HalfSpeedWhenCrowded:
    """Toy speed model: every running job runs at half speed while more than one job runs."""

    def speeds(self, engine, jobs):
        speed = 0.5 if len(engine.running) > 1 else 1.0
        return [(job, speed) for job in engine.running]


@given(case=platforms_and_workloads(), use_run_times=st.booleans())
def test_remaining_work_is_conserved_across_speed_changes(case, use_run_times):
    platform, workload = case
    engine = Engine(
        workload,
        platform,
        make_scheduler("easy"),
        speed_model=HalfSpeedWhenCrowded(),
        use_run_times=use_run_times,
        log_events=True,
    )
    result = engine.run()
    speed = {}
    since = {}
    work = np.zeros(len(workload))
    for time, event, job, value in result.log:
        if event == "start":
            speed[job], since[job] = 1.0, time
        elif event == "speed":
            work[job] += (time - since[job]) * speed[job]
            speed[job], since[job] = value, time
        elif event == "finish":
            work[job] += (time - since[job]) * speed[job]
    # 000 §3.5, (4.2): the integral of the speedup over the run equals the compact run time
    np.testing.assert_allclose(work, workload.run, rtol=1e-9, atol=1e-7)
    assert np.all(result.end - result.start >= workload.run - 1e-7)
    _, busy = step_series(result.start, result.end, workload.cores)
    assert busy.max() <= platform.total_cores


def test_the_readme_example_scheduler_plugs_in_by_name():
    from cosched.simulator.schedulers import SCHEDULERS, register_scheduler
    from cosched.simulator.schedulers.base import QueueScheduler

    class SmallestAreaFirst(QueueScheduler):
        """Smallest cores x estimate first, EASY backfilling."""

        name = "saf"
        backfill = "easy"

        def priority(self, engine, waiting):
            return -(self.cores[waiting] * self.estimate[waiting])

    register_scheduler("saf", SmallestAreaFirst)
    try:
        workload = make_workload([0, 1, 2, 3], [0, 1, 1, 1], [10, 30, 5, 20], [1, 1, 1, 1])
        assert simulate(workload, Platform(1), "saf").start.tolist() == [0, 35, 10, 15]
    finally:
        del SCHEDULERS["saf"]
