"""Hand-computed runs of the promises an on-demand job is made under the two-minute warning: one
on-demand job per node, arrived jobs before announced ones, re-planning, withdrawn warnings, lost
work (docs/hybrid.md)."""

import math

import pytest

from cosched.simulator.hybrid.run import hybrid_metrics, hybrid_result

from .action_replay import promise_violations
from .scenario import action_rows, hybrid, run

NAN = math.nan
TIME_TOLERANCE = 1e-6  # seconds


def actions_of(rows, job):
    """(time, action, reason, on-demand job id) of job index `job` (ids are indices here)."""
    return [
        (float(row["time"]), row["action"], row["reason"], row["on_demand_job_id"])
        for row in rows
        if row["job_id"] == str(job)
    ]


def test_an_arrived_job_takes_a_job_cup_warned_for_an_announced_one_and_keeps_it(tmp_path):
    """4 nodes. O (on-demand, 2 nodes, 0..10000) and M (malleable, 2 nodes, n_min 2, no setup,
    20,000 s) run from 0. A (2 nodes, run 500) is announced at 100 for t_est 1000 and arrives late,
    at 1010; B (2 nodes, run 300) arrives at 950 without notice.

    CUP plans M's preemption for A: warned at 880, preempted at 1000. B arrives at 950 and PAA takes
    M: CUP's warning is withdrawn (unwarn cup at 950), M is warned for B (expires 1070), and A
    re-plans but finds no other job (O is on-demand). A arrives at 1010, finds nothing to preempt
    and waits first. At 1070 M stops and B starts (instant: within its warning), ending at 1370;
    B's nodes then go to A waiting (before lender M): A runs 1370..1870. M, which did 1070 s of
    work, resumes at 1870 and ends at 1870 + 18,930 = 20,800.

    Before: B's warning was wasted (CUP preempted M for A at 1000, M resumed on A's reserved nodes
    and then at A's end), and B waited until O ended, starting at 10,000.
    """
    jobs = [
        dict(submit=0, run=10000, nodes=2, type="on-demand"),
        dict(submit=0, run=20000, nodes=2, type="malleable", n_min=2),
        dict(
            submit=1010,
            run=500,
            nodes=2,
            type="on-demand",
            notice="late",
            notice_time=100,
            t_est=1000,
        ),
        dict(submit=950, run=300, nodes=2, type="on-demand"),
    ]
    workload = hybrid(jobs)  # sorted by submit: O 0, M 1, B 2, A 3
    engine, result, _ = run(workload, 4, "cup-paa", log_actions=True)
    b, a, m = 2, 3, 1
    assert result.start[b] == 1070 and result.end[b] == 1370
    assert result.start[a] == 1370 and result.end[a] == 1870
    assert result.end[m] == 20800 and engine.preemptions[m] == 1
    rows = action_rows(engine, result, workload, tmp_path)
    assert [(t, action, reason) for t, action, reason, _ in actions_of(rows, m)][1:5] == [
        (880, "warn", "cup"),
        (950, "unwarn", "cup"),
        (950, "warn", "paa"),
        (1070, "preempt", "paa"),
    ]
    assert promise_violations(rows, workload.frame(), 120.0, 4) == []


def test_nodes_freed_while_an_arrived_job_waits_go_to_it_before_an_announced_one():
    """4 nodes, all held by on-demand jobs O1 (2 nodes, 0..1000) and O2 (2 nodes, 0..5000). A (2
    nodes, run 500) is announced at 400 for 1500 and arrives then; B (2 nodes, run 300) arrives at
    500 without notice.

    CUP earmarks O1 for A (its estimated end 1000 <= 1500). B finds nothing to preempt and waits
    first. When O1 ends at 1000, its nodes go to B (arrived) rather than to A's reservation: B runs
    1000..1300, and its nodes are idle when A arrives at 1500: A runs 1500..2000 (instant start).

    Before: A reserved O1's nodes at 1000 and B waited until A ended: B ran 2000..2300.
    """
    jobs = [
        dict(submit=0, run=1000, nodes=2, type="on-demand"),
        dict(submit=0, run=5000, nodes=2, type="on-demand"),
        dict(
            submit=1500,
            run=500,
            nodes=2,
            type="on-demand",
            notice="accurate",
            notice_time=400,
            t_est=1500,
        ),
        dict(submit=500, run=300, nodes=2, type="on-demand"),
    ]
    _, result, _ = run(jobs, 4, "cup-paa")
    b, a = 2, 3  # sorted by submit
    assert result.start[b] == 1000 and result.end[b] == 1300
    assert result.start[a] == 1500 and result.end[a] == 2000


def test_a_shrink_warning_is_replanned_when_nodes_come_back_during_it():
    """4 nodes. M (malleable, n_max 4, n_min 1, no setup, 4,000 s at 4 nodes) runs from 0. P (2
    nodes, run 150) arrives at 100: SPAA warns M, shrinks it to 2 at 220, P runs 220..370. Q (1
    node, run 100) arrives at 300: SPAA warns M again to give 1 node (expiring at 420).

    P ends at 370 during Q's warning: Q waits for 1 node, so M grows back to 3 only and Q takes the
    other node and starts at once (370..470); the warning on M is withdrawn and M never gives more
    than Q needs. M's work (in 4-node seconds): 220 by 220, +75 at 2 nodes by 370, +75 at 3 nodes
    by 470, then 3,630 at 4 nodes: it ends at 4,100.

    Before: M grew back to 4 at 370, then was shrunk at 420 to the size planned before it grew (1
    node): 2 nodes idle until Q ended at 520, and M ended at 4,150.
    """
    jobs = [
        dict(submit=0, run=4000, nodes=4, type="malleable", n_min=1),
        dict(submit=100, run=150, nodes=2, type="on-demand"),
        dict(submit=300, run=100, nodes=1, type="on-demand"),
    ]
    engine, result, _ = run(jobs, 4, "n-spaa")
    assert result.start[2] == 370 and result.end[2] == 470
    assert abs(result.end[0] - 4100) <= TIME_TOLERANCE
    sizes = [size for when, event, job, size in result.log if job == 0 and event == "resize"]
    assert min(sizes) == 2 and 1 not in sizes


def test_a_releaser_ending_before_two_announced_arrivals_serves_both():
    """6 nodes. O (rigid, 4 nodes, 0..1000, estimate 1000) and R (rigid, 2 nodes, 0..5000, no
    checkpoint) run. A1 and A2 (2 nodes, run 100 each) are announced at 100 and 200 for 1500 and
    1600, and arrive then.

    CUP earmarks 2 of O's nodes for A1 and its other 2 for A2, so nothing is preempted: both
    reserve their nodes when O ends at 1000, start at their arrival, and R ends at 5,000.

    Before: O counted for A1 only; A2 preempted R at 200 (200 s lost), R restarted at 1000 on the 2
    nodes A1 did not need and ended at 6,000.
    """
    jobs = [
        dict(submit=0, run=1000, nodes=4, estimate=1000),
        dict(submit=0, run=5000, nodes=2),
        dict(
            submit=1500,
            run=100,
            nodes=2,
            type="on-demand",
            notice="accurate",
            notice_time=100,
            t_est=1500,
        ),
        dict(
            submit=1600,
            run=100,
            nodes=2,
            type="on-demand",
            notice="accurate",
            notice_time=200,
            t_est=1600,
        ),
    ]
    engine, result, _ = run(jobs, 6, "cup-paa")
    assert engine.preemptions == [0, 0, 0, 0]
    assert result.end[1] == 5000
    assert result.start[2] == 1500 and result.start[3] == 1600


def test_an_early_arrival_clears_its_earmarks_for_the_next_announced_job():
    """4 nodes. O (rigid, 2 nodes, 0..1000, estimate 1000) runs from 0, R (rigid, 2 nodes, 5,000 s,
    no checkpoint) from 50. A1 (2 nodes, run 100) is announced at 100 for 1500 and arrives early at
    300; A2 (2 nodes, run 100) is announced at 500 for 1600 and arrives then.

    CUP earmarks O for A1. A1 arrives at 300 and PAA preempts R (elapsed 250 s < O's 300 s); A1
    runs 300..400 and R resumes at 400 from scratch, to end at 5,400. A1's earmark on O is gone, so
    A2 earmarks O: O's nodes are reserved at 1000 and A2 runs 1600..1700. R is preempted once.

    Before: O kept A1's mark, so A2 preempted R again at 500; R restarted at 1000 and ended at
    6,000.
    """
    jobs = [
        dict(submit=0, run=1000, nodes=2, estimate=1000),
        dict(submit=50, run=5000, nodes=2),
        dict(
            submit=300,
            run=100,
            nodes=2,
            type="on-demand",
            notice="early",
            notice_time=100,
            t_est=1500,
        ),
        dict(
            submit=1600,
            run=100,
            nodes=2,
            type="on-demand",
            notice="accurate",
            notice_time=500,
            t_est=1600,
        ),
    ]
    engine, result, _ = run(jobs, 4, "cup-paa")
    assert engine.preemptions[1] == 1 and result.end[1] == 5400
    assert result.start[2] == 300 and result.start[3] == 1600


def test_spaa_shrinks_after_taking_announced_reservations():
    """4 nodes. M (malleable, 2 nodes, n_min 1, no setup, 2,000 s) runs from 0. A (2 nodes, run
    100) is announced at 100 for 1000 (CUA reserves the 2 idle nodes) and arrives then; B (3 nodes,
    run 100) arrives at 200 without notice.

    B needs 3: shrinking M gives 1 and preempting it 2, too few; B takes A's 2 reserved nodes,
    and then SPAA shrinks M by the 1 node still missing (warned at 200, shrunk at 320). B runs
    320..420; M grows back to 2 at 420; A collects the 2 idle nodes and starts at 1000. M's work
    (2-node seconds): 320 by 320, +50 at 1 node by 420, then 1,630: it ends at 2,050.

    Before: SPAA fell back to PAA and preempted M at 320; M resumed at 420 and ended at 2,100.
    """
    jobs = [
        dict(submit=0, run=2000, nodes=2, type="malleable", n_min=1),
        dict(
            submit=1000,
            run=100,
            nodes=2,
            type="on-demand",
            notice="accurate",
            notice_time=100,
            t_est=1000,
        ),
        dict(submit=200, run=100, nodes=3, type="on-demand"),
    ]
    engine, result, wrapper = run(jobs, 4, "cua-spaa")
    m, b, a = 0, 1, 2  # sorted by submit
    assert engine.preemptions[m] == 0 and wrapper.shrinks[m] == 1
    assert result.start[b] == 320 and result.start[a] == 1000
    assert abs(result.end[m] - 2050) <= TIME_TOLERANCE


def test_cup_withdraws_a_warning_its_early_arrival_makes_pointless(tmp_path):
    """4 nodes. R (rigid, 2 nodes, 5,000 s, estimate 5,000) and M (malleable, 2 nodes, n_min 2, no
    setup, 5,000 s) run from 0. A (2 nodes, run 100) is announced at 100 for 1000 and arrives early
    at 900.

    CUP plans M's preemption (setup 0 < R's elapsed 100 s): warned at 880. A arrives at 900: the
    CUP warning is withdrawn (unwarn cup at 900) and PAA warns M for A; M stops at 1020 and A runs
    1020..1120. Every warning ends in a stop, a shrink or a withdrawal.

    Before: the CUP warning stayed pending and was never resolved in the log.
    """
    jobs = [
        dict(submit=0, run=5000, nodes=2, estimate=5000),
        dict(submit=0, run=5000, nodes=2, type="malleable", n_min=2),
        dict(
            submit=900,
            run=100,
            nodes=2,
            type="on-demand",
            notice="early",
            notice_time=100,
            t_est=1000,
        ),
    ]
    workload = hybrid(jobs)
    engine, result, wrapper = run(workload, 4, "cup-paa", log_actions=True)
    rows = action_rows(engine, result, workload, tmp_path)
    assert [(t, action, reason) for t, action, reason, _ in actions_of(rows, 1)][1:5] == [
        (880, "warn", "cup"),
        (900, "unwarn", "cup"),
        (900, "warn", "paa"),
        (1020, "preempt", "paa"),
    ]
    assert result.start[2] == 1020
    assert not wrapper.notice.doomed and not wrapper.notice.cup_warned
    assert promise_violations(rows, workload.frame(), 120.0, 4) == []


@pytest.mark.parametrize("mechanism", ["n-paa", "cup-paa"])
def test_lost_work_is_the_work_redone_not_an_interrupted_checkpoint_write(mechanism):
    """2 nodes. R (rigid, 2 nodes, 1,000 s of work, no setup) checkpoints after every 100 s of work
    with a 600 s write (004 §IV-B, below 1,000 nodes; added to the run). O (on-demand, 2 nodes, run
    100) arrives at 120, while R writes its first checkpoint (100..700): PAA preempts R at 120. R
    redoes 100 s of work; the 20 s of the interrupted write are not work. lost_node_seconds = 100 s
    x 2 nodes = 200.

    Before: the 20 s of the write counted as lost work: 240.
    """
    jobs = [
        dict(submit=0, run=1000, nodes=2),
        dict(submit=120, run=100, nodes=2, type="on-demand"),
    ]
    workload = hybrid(jobs)
    engine, result, _ = run(workload, 2, mechanism, [700.0, NAN], writes="added")
    result = hybrid_result(engine, result, workload, mechanism)
    assert engine.preemptions[0] == 1
    assert abs(result.lifecycle["lost_node_seconds"][0] - 200.0) <= TIME_TOLERANCE
    assert abs(hybrid_metrics(result, workload)["lost_node_hours"] - 200.0 / 3600) <= 1e-9


def test_summary_reports_both_instant_start_readings():
    """4 nodes, M (malleable, 4 nodes, n_min 4, no setup, 1,000 s) from 0; O (on-demand, 2 nodes,
    run 100) arrives at 100: PAA warns M, O starts at 220, within the warning. O is an instant
    start in the paper's reading (within the warning: 1.0) but not at its arrival (strict: 0.0)."""
    jobs = [
        dict(submit=0, run=1000, nodes=4, type="malleable", n_min=4),
        dict(submit=100, run=100, nodes=2, type="on-demand"),
    ]
    workload = hybrid(jobs)
    engine, result, _ = run(workload, 4, "n-paa")
    metrics = hybrid_metrics(hybrid_result(engine, result, workload, "n-paa"), workload)
    assert result.start[1] == 220
    assert metrics["instant_start_ratio"] == 1.0
    assert metrics["instant_start_ratio_strict"] == 0.0
