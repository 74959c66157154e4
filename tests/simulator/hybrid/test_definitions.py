"""The paper's definitions by default, the other readings as named options (004 §III), and the
choices the paper leaves open, each on a minimal workload whose times are derived in the
docstring."""

import math

import numpy as np
import pytest

from cosched.errors import InputError
from cosched.simulator.hybrid.mechanisms import WARNING
from cosched.simulator.hybrid.models import checkpoint_periods, engine_workload, job_models
from cosched.simulator.hybrid.run import hybrid_engine, hybrid_result
from cosched.simulator.platform import Platform

from .scenario import hybrid, run

NAN = math.nan
TIME_TOLERANCE = 1e-6  # seconds


def close(a, b):
    return abs(a - b) <= TIME_TOLERANCE


# 4 nodes: rigid J0 (2 nodes, no checkpoints) and malleable J1 (2 nodes, n_min 1, setup 10 s, 1000 s
# of run of which 990 s work) both from 0; an on-demand job arrives at 100.
MIXED = [
    dict(submit=0, run=1000, nodes=2),
    dict(submit=0, run=1000, nodes=2, type="malleable", n_min=1, setup=10),
]


def test_a_preempted_malleable_job_gets_its_two_minute_warning():
    """N-PAA, on-demand J2 (2 nodes, 50 s) at 100. Overheads: J1 its setup, 10 s; J0 its elapsed
    100 s: J1 is chosen and warned at 100. It works on until 220 (done 210 of 990 s), then stops,
    keeping all of it; J2 starts at 220 and ends at 270, and counts as an instant start (the
    metric ignores the time to preempt, 004 §IV-D). J1, its lender, restarts at 270: setup 10,
    then 780 s: ends at 1060."""
    jobs = MIXED + [dict(submit=100, run=50, nodes=2, type="on-demand")]
    assert WARNING == 120
    engine, result, wrapper = run(jobs, 4, "n-paa")
    assert engine.preemptions == [0, 1, 0]
    assert result.start[2] == 220 and result.end[2] == 270
    assert close(result.end[1], 1060) and engine.lost[1] == 0
    frame = hybrid_result(engine, result, hybrid(jobs), "n-paa").jobs_frame()
    assert frame["instant_start"].tolist() == [False, False, True]


def test_a_shrunk_malleable_job_gets_its_warning_and_grows_back():
    """N-SPAA, on-demand J2 (1 node, 50 s) at 100: J1 can give 1 node. Warned at 100, it shrinks
    at 220 after 210 s of work (780 left), runs on 1 node at half speed until J2 ends at 270 (25
    s of work, 755 left), then grows back to 2 nodes: ends at 270 + 755 = 1025."""
    jobs = MIXED + [dict(submit=100, run=50, nodes=1, type="on-demand")]
    engine, result, wrapper = run(jobs, 4, "n-spaa")
    assert wrapper.shrinks == [0, 1, 0] and engine.preemptions == [0, 0, 0]
    assert result.start[2] == 220
    assert close(result.end[1], 1025)


REGROW_JOBS = [
    dict(submit=0, run=120, nodes=1),
    dict(submit=0, run=1000, nodes=4, type="malleable", n_min=1),
    dict(submit=100, run=50, nodes=1, type="on-demand"),
]


@pytest.mark.parametrize("regrow, end", [("n_max", 1050.0), ("pre-shrink", 1350.0)])
def test_a_shrunk_job_grows_back_to_n_max_or_to_its_size_before_the_shrink(regrow, end):
    """4 nodes. Rigid J0 takes 1 node 0..120; malleable J1 (n_max 4, n_min 1, 1000 s at 4 nodes)
    is the queue head and starts on the 3 idle nodes (rate 3/4). On-demand J2 (1 node, 50 s) at
    100: N-SPAA shrinks J1 to 2 at once (no warning). By 100 J1 did 75 s of work; 100..150 at
    rate 1/2: 25 more, 900 left. J0 ended at 120, so at 150 two nodes are idle. n_max (the
    paper): J1 grows to 4 and ends at 150 + 900 = 1050; pre-shrink: back to 3 nodes (rate 3/4),
    1200 s: ends at 1350."""
    engine, result, wrapper = run(REGROW_JOBS, 4, "n-spaa", warning=0, regrow=regrow)
    assert result.start[1] == 0 and wrapper.shrinks == [0, 1, 0]
    assert close(result.end[1], end)


OVERHEAD_JOBS = [
    dict(submit=0, run=1000, nodes=2),
    dict(submit=10, run=1100, nodes=2, setup=100),
    dict(submit=60, run=50, nodes=2, type="on-demand"),
]


@pytest.mark.parametrize(
    "reading, victim, end", [("elapsed", 1, 110 + 1100), ("lost-work", 0, 110 + 1000)]
)
def test_the_preemption_cost_of_a_rigid_job_without_checkpoints(reading, victim, end):
    """4 nodes. Rigid J0 (2 nodes, no setup) runs from 0, rigid J1 (2 nodes, setup 100 s) from
    10; on-demand J2 (2 nodes, 50 s) arrives at 60. elapsed (the paper, t_now - t_start): J0 60
    s, J1 50 s: J1 is preempted, restarts when J2 ends at 110 and ends at 110 + 1100. lost-work
    (work lost + setup): J0 60 + 0, J1 0 + 100: J0 is preempted and ends at 110 + 1000."""
    engine, result, wrapper = run(OVERHEAD_JOBS, 4, "n-paa", rigid_overhead=reading)
    assert engine.preemptions[victim] == 1 and sum(engine.preemptions) == 1
    assert close(result.end[victim], end)


def test_checkpoint_writes_cost_time_by_default():
    """A rigid job (2 nodes, run 30000 s, setup 1000 s) checkpoints at Daly's interval for M = 50
    h: tau = 14,300 s (delta = 600 s). Its 29,000 s of work need ceil(29000 / tau) - 1 = 2
    writes: added (the paper) it runs 30000 + 2 x 600 = 31,200 s alone; inside, exactly its trace
    time."""
    workload = hybrid([dict(submit=0, run=30000, nodes=2, setup=1000)])
    periods = checkpoint_periods(workload)
    tau = periods[0] - 600
    assert abs(tau - 14300) < 1
    for writes, run_time in (("added", 30000 + 2 * 600), ("inside", 30000)):
        engine = hybrid_engine(
            workload, Platform(2), "n-paa", periods=periods, checkpoint_writes=writes
        )
        assert close(engine.run().end[0], run_time), writes
    models = job_models(workload, periods, "added")
    assert models[0].checkpoint.period == pytest.approx(periods[0])


def test_unknown_mechanism_options_are_refused_naming_the_known_ones():
    workload = hybrid([dict(submit=0, run=100, nodes=1)])
    with pytest.raises(InputError, match="rigid_overhead"):
        hybrid_engine(workload, Platform(1), "n-paa", rigid_overhed="elapsed")
    with pytest.raises(InputError, match="known"):
        hybrid_engine(workload, Platform(1), "n-paa", regrow="always")
    with pytest.raises(InputError, match="writes"):
        hybrid_engine(workload, Platform(1), "n-paa", checkpoint_writes="free")


def test_a_blocked_on_demand_job_holds_every_idle_node_and_stops_backfilling():
    """[impl, documented] 3 nodes. On-demand J0 (2 nodes) runs 0..1000. On-demand J1 (2 nodes)
    arrives at 10: on-demand jobs are never preempted, so it waits at the queue front, holding
    the idle node. Rigid J2 (1 node, 10 s) arrives at 20 and could run on that node, but it is
    held: J2 starts only at 1000, with J1."""
    jobs = [
        dict(submit=0, run=1000, nodes=2, type="on-demand"),
        dict(submit=10, run=100, nodes=2, type="on-demand"),
        dict(submit=20, run=10, nodes=1),
    ]
    engine, result, wrapper = run(jobs, 3, "n-paa")
    assert result.start[1] == 1000 and result.start[2] == 1000


def test_an_arrived_job_takes_the_nodes_reserved_for_a_later_announced_one():
    """[impl, documented] 2 nodes. On-demand J1 (2 nodes) is announced at 0 for t_est 5000 and
    CUA reserves both idle nodes. On-demand J0 (2 nodes, no notice) arrives at 100: nothing runs
    that could be preempted, so it takes J1's reservation (latest t_est first) and runs 100..600;
    J1 collects again and starts at its arrival, 5000."""
    jobs = [
        dict(submit=100, run=500, nodes=2, type="on-demand"),
        dict(
            submit=5000,
            run=100,
            nodes=2,
            type="on-demand",
            notice="accurate",
            notice_time=0,
            t_est=5000,
        ),
    ]
    engine, result, wrapper = run(jobs, 2, "cua-paa")
    assert result.start[0] == 100 and result.start[1] == 5000
    released = [entry for entry in wrapper.reservation_log if entry[1] == 1 and entry[2] < 0]
    assert released[0] == (100, 1, -2)


def test_periods_given_by_hand_keep_their_meaning():
    """job_models with hand-given periods counts writes inside unless told: the hand-computed
    tests of the other files (periods as seconds of run between checkpoints) stay as they are."""
    workload = hybrid([dict(submit=0, run=1000, nodes=1, setup=0)])
    model = job_models(workload, np.array([400.0]))[0]
    assert model.checkpoint.period == 400 and model.checkpoint.cost == 0
    assert engine_workload(workload).run[0] == 1000


def test_an_absurdly_small_mtbf_is_refused_naming_the_limit(tmp_path, capsys):
    from cosched.cli import main

    out = tmp_path / "run"
    code = main(
        [
            "simulate",
            "--workload",
            "kth-sp2",
            "--platform",
            "kth-sp2",
            "--limit",
            "500",
            "--hybrid",
            "n-paa",
            "--mtbf",
            "0.0003",
            "--quiet",
            "--out",
            str(out),
        ]
    )
    assert code == 2 and not out.exists()
    assert "the limit is 100,000" in capsys.readouterr().err


def test_an_on_demand_job_arriving_before_its_notice_is_refused_naming_the_line(tmp_path):
    from cosched.simulator.hybrid.workload import read_hybrid_csv, write_hybrid_csv

    jobs = [
        dict(submit=0, run=100, nodes=1),
        dict(
            submit=400,
            run=100,
            nodes=1,
            type="on-demand",
            notice="early",
            notice_time=300,
            t_est=900,
        ),
    ]
    path = tmp_path / "hybrid.csv"
    write_hybrid_csv(hybrid(jobs), path)
    read_hybrid_csv(path, 1)  # as written: fine
    text = path.read_text().replace("\n1,400.0,", "\n1,200.0,")  # arrives at 200, noticed at 300
    assert "\n1,200.0," in text
    path.write_text(text)
    with pytest.raises(InputError, match="before its own notice") as error:
        read_hybrid_csv(path, 1)
    assert "line 3" in str(error.value)
