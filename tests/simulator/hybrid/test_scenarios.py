"""Hand-computed runs of every mechanism, among them the CUA versus CUP example of Fan et al.,
Fig. 2."""

import math

import numpy as np
import pytest

from cosched.errors import InputError
from cosched.simulator.hybrid.mechanisms import CHECKPOINT_SLACK, RELEASE_AFTER, water_fill

from .scenario import run

NAN = math.nan
TIME_TOLERANCE = 1e-6  # seconds


def close(a, b):
    return abs(a - b) <= TIME_TOLERANCE + CHECKPOINT_SLACK


# Fig. 2: 4 nodes, J1 and J2 on 2 nodes each; the on-demand job (4 nodes) is announced at 500 for
# 2000 and arrives at 2000. J1 ends at 1000 as estimated; J2 ends at 1800 but estimated 4000, and
# checkpoints every 1200 s.
FIG2 = [
    dict(submit=0, run=1000, nodes=2, estimate=1000),
    dict(submit=0, run=1800, nodes=2, estimate=4000),
    dict(
        submit=2000,
        run=500,
        nodes=4,
        type="on-demand",
        notice="accurate",
        notice_time=500,
        t_est=2000,
    ),
]
FIG2_PERIODS = [NAN, 1200.0, NAN]


def test_fig2_cua_collects_the_nodes_of_jobs_that_actually_end():
    engine, result, wrapper = run(FIG2, 4, "cua-paa", FIG2_PERIODS)
    assert result.end[0] == 1000 and result.end[1] == 1800  # nobody preempted
    assert engine.preemptions == [0, 0, 0]
    assert result.start[2] == 2000 and result.end[2] == 2500  # instant start on the collected nodes
    # reserved at 1000 and 1800; released at 2000
    assert [entry[2] for entry in wrapper.reservation_log] == [2, 2, -4]
    assert [entry[0] for entry in wrapper.reservation_log] == [1000, 1800, 2000]


def test_fig2_cup_preempts_j2_right_after_its_checkpoint():
    engine, result, wrapper = run(FIG2, 4, "cup-paa", FIG2_PERIODS)
    assert result.end[0] == 1000  # earmarked: its nodes are reserved when it ends
    assert engine.preemptions[1] == 1
    preempted = [when for when, event, job, _ in result.log if event == "preempt" and job == 1]
    assert close(preempted[0], 1200)  # right after its checkpoint at 1200 s of work
    assert close(engine.lost[1], 0.0)  # it keeps the checkpointed 1200 s
    assert result.start[2] == 2000  # instant start
    # a lender: resumes when the on-demand job ends, 600 s left
    assert close(result.end[1], 2500 + 600)


def test_n_paa_preempts_the_lowest_overhead_job_and_gives_its_nodes_back():
    # a rigid job (no checkpoint) and a malleable one (setup 10) fill 4 nodes; a 2-node on-demand
    # job at 100
    jobs = [
        dict(submit=0, run=1000, nodes=2),
        dict(submit=0, run=1000, nodes=2, type="malleable", n_min=1, setup=10),
        dict(submit=100, run=50, nodes=2, type="on-demand"),
    ]
    engine, result, wrapper = run(jobs, 4, "n-paa", warning=0)  # no two-minute warning
    assert engine.preemptions == [0, 1, 0]  # malleable overhead 10 s < rigid 100 s
    assert result.start[2] == 100 and result.end[2] == 150
    # 90 s of work done (setup 0..10); resumes at 150 when the lender gets its nodes back: setup,
    # 900 s left
    assert close(result.end[1], 150 + 10 + 900)
    assert engine.lost[1] == 0  # checkpointed on the two-minute warning


def test_n_spaa_shrinks_the_malleable_job_and_expands_it_back():
    jobs = [
        dict(submit=0, run=1000, nodes=2),
        dict(submit=0, run=1000, nodes=2, type="malleable", n_min=1, setup=10),
        dict(submit=100, run=50, nodes=1, type="on-demand"),
    ]
    engine, result, wrapper = run(jobs, 4, "n-spaa", warning=0)  # no two-minute warning
    assert engine.preemptions == [0, 0, 0] and wrapper.shrinks == [0, 1, 0]
    assert result.start[2] == 100
    # 90 s done by 100; half speed on 1 node until 150 (25 s); back to 2 nodes: 875 s left
    assert close(result.end[1], 150 + 875)


def test_spaa_falls_back_to_paa_when_shrinking_is_not_enough():
    jobs = [
        dict(submit=0, run=1000, nodes=2),
        dict(submit=0, run=1000, nodes=2, type="malleable", n_min=1, setup=10),
        dict(submit=100, run=50, nodes=2, type="on-demand"),
    ]
    engine, result, wrapper = run(jobs, 4, "n-spaa", warning=0)
    assert wrapper.shrinks == [0, 0, 0] and engine.preemptions == [0, 1, 0]
    assert result.start[2] == 100


def test_rigid_job_with_a_checkpoint_loses_only_the_work_since_it():
    # rigid job checkpoints every 40 s of run; preempted at 100: keeps 80, loses 20 (+ its setup 5
    # again)
    jobs = [
        dict(submit=0, run=305, nodes=2, setup=5),
        dict(submit=100, run=50, nodes=2, type="on-demand"),
    ]
    engine, result, wrapper = run(jobs, 2, "n-paa", [40.0, NAN])
    assert engine.preemptions[0] == 1
    assert close(engine.lost[0], 95 - 80)  # 95 s of work done by 100 (setup 0..5)
    assert close(result.end[0], 150 + 5 + (300 - 80))  # resumes at 150: setup, then the rest


def test_paa_waits_at_the_queue_front_when_running_on_demand_jobs_fill_the_machine():
    jobs = [
        dict(submit=0, run=100, nodes=3, type="on-demand"),
        dict(submit=10, run=100, nodes=3, type="on-demand"),
        dict(submit=20, run=10, nodes=1),
    ]
    engine, result, wrapper = run(jobs, 4, "n-paa")
    assert result.start[1] == 100  # not instant: on-demand jobs are never preempted
    # the idle node stays with the waiting on-demand job (queue front) till then
    assert result.start[2] == 100
    assert engine.preemptions == [0, 0, 0]


def test_reservation_released_ten_minutes_after_a_no_show_and_late_arrival_handled_without_notice():
    jobs = [
        dict(submit=0, run=5000, nodes=2),
        dict(
            submit=3000,
            run=100,
            nodes=2,
            type="on-demand",
            notice="late",
            notice_time=0,
            t_est=1000,
        ),
    ]
    engine, result, wrapper = run(jobs, 4, "cua-paa")
    assert wrapper.reservation_log == [(0, 1, 2), (1000 + RELEASE_AFTER, 1, -2)]
    assert result.start[1] == 3000  # idle nodes: no preemption needed


def test_reserved_nodes_run_short_jobs_then_malleable_ones_preempted_at_the_arrival():
    jobs = [
        dict(submit=0, run=5000, nodes=2),
        dict(
            submit=0,
            run=100,
            nodes=2,
            type="on-demand",
            notice="accurate",
            notice_time=0,
            t_est=1000,
        )
        | {"submit": 1000},
        dict(submit=10, run=5000, nodes=2),  # too long for the reserved nodes: waits
        dict(submit=20, run=100, nodes=2),  # ends by t_est: borrows the reserved nodes
        dict(submit=200, run=3000, nodes=2, type="malleable", n_min=1),  # then borrows them too
    ]
    engine, result, wrapper = run(jobs, 4, "cua-paa")
    # job indices follow submit order: 0 rigid, 1 rigid 5000, 2 short, 3 malleable, 4 on-demand
    assert result.start[2] == 20 and result.end[2] == 120
    assert result.start[3] == 200 and engine.preemptions[3] == 1  # preempted at the arrival
    assert result.start[4] == 1000
    assert engine.preemptions[0] == 0 and engine.preemptions[1] == 0


def test_water_fill_is_as_even_as_possible_within_caps():
    assert water_fill([10, 10, 10], 5) == [2, 2, 1] or sorted(water_fill([10, 10, 10], 5)) == [
        1,
        2,
        2,
    ]
    assert water_fill([0, 3, 10], 9) == [0, 3, 6]
    assert sum(water_fill([1, 1, 5, 7], 12)) == 12


@pytest.mark.parametrize("scheduler", ["fcfs", "easy", "sjf", "ljf"])
def test_any_queue_scheduler_is_the_site_policy(scheduler):
    engine, result, wrapper = run(FIG2, 4, "cua-spaa", FIG2_PERIODS, scheduler=scheduler)
    assert result.start[2] == 2000 and np.all(np.isfinite(result.end))


def test_conservative_backfilling_is_refused_as_site_policy():
    with pytest.raises(InputError, match="conservative"):
        run(FIG2, 4, "cua-spaa", FIG2_PERIODS, scheduler="conservative")
