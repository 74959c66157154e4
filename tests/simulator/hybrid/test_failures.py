"""Node failures (Fan et al. §V-C): hand-computed runs, invariants on generated failures
(hypothesis), bad input."""

import json
import math
from collections import defaultdict
from fractions import Fraction

import hypothesis
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cosched.cli import main
from cosched.errors import InputError
from cosched.simulator.engine import ActionError, Engine
from cosched.simulator.hybrid import failures as failures_module
from cosched.simulator.hybrid.failures import NodeFailures
from cosched.simulator.hybrid.mechanisms import Hybrid
from cosched.simulator.hybrid.models import engine_workload, job_models
from cosched.simulator.hybrid.run import hybrid_metrics, hybrid_result
from cosched.simulator.platform import Platform
from cosched.simulator.schedulers import make_scheduler

from .scenario import hybrid, run
from .test_invariants import scenarios

NAN = math.nan
WORK_TOLERANCE = 1e-6  # seconds of work
SMALL = ["--workload", "kth-sp2", "--platform", "kth-sp2", "--limit", "400", "--quiet"]

# 4 nodes: rigid J0 on nodes 0-1 (checkpoint every 300 s), malleable J1 on nodes 2-3 (n_min 1), both
# from 0. Node 0 fails at 500 for 200 s: J0 loses 200 s since its checkpoint at 300 and restarts at
# 700 (repair), ends 700 + 700 = 1400. Node 3 fails at 600: J1 shrinks to node 2, its 400 s of work
# left take 800 s: ends 1400.
TWO_JOBS = [
    dict(submit=0, run=1000, nodes=2),
    dict(submit=0, run=1000, nodes=2, type="malleable", n_min=1),
]


def test_rigid_job_restarts_from_its_checkpoint_and_malleable_job_shrinks_around_the_failed_node():
    failures = NodeFailures(schedule=[(500, 0, 200), (600, 3, 1000)])
    engine, result, _ = run(TWO_JOBS, 4, "n-paa", [300.0, NAN], failures=failures)
    result = hybrid_result(engine, result, hybrid(TWO_JOBS), "n-paa", failures)
    assert result.start.tolist() == [0, 0] and result.end.tolist() == [1400, 1400]
    assert engine.lost == [200.0, 0.0]
    assert failures.hits == [(500, 0, 0, "preempt", 2), (600, 3, 1, "shrink", 2)]
    assert failures.down_log == [(500, 0, 1), (600, 3, 1), (700, 0, -1), (1600, 3, -1)]
    jobs = result.jobs_frame()
    assert jobs["failures"].tolist() == [1, 1] and jobs["preemptions"].tolist() == [0, 0]
    assert jobs["lost_node_seconds"].tolist() == [400.0, 0.0]  # 200 s x 2 nodes
    metrics = hybrid_metrics(result, hybrid(TWO_JOBS))
    assert metrics["failures"] == 2 and metrics["failure_hits"] == 2
    assert metrics["failure_lost_node_hours"] == metrics["lost_node_hours"] == 400 / 3600


def test_malleable_job_at_n_min_is_interrupted_and_loses_nothing():
    jobs = [dict(submit=0, run=1000, nodes=2, type="malleable", n_min=2, setup=10)]
    failures = NodeFailures(schedule=[(500, 1, 100)])
    engine, result, _ = run(jobs, 2, "n-spaa", failures=failures)
    assert failures.hits == [(500, 1, 0, "preempt", 2)] and engine.lost == [0.0]
    # 490 s of work done by 500; restarts at the repair (600), setup 10 s, 500 s left
    assert result.end[0] == 600 + 10 + 500
    assert failures.lost_node_seconds == [20.0]  # the setup paid again on 2 nodes


def test_on_demand_job_hit_by_a_failure_restarts_as_a_new_arrival():
    jobs = [dict(submit=0, run=100, nodes=2, type="on-demand")]
    failures = NodeFailures(schedule=[(50, 1, 30)])
    engine, result, wrapper = run(jobs, 2, "cua-paa", failures=failures)
    # no checkpoint: it restarts from scratch once node 1 is back (80), holding node 0 meanwhile
    assert engine.preemptions == [1] and failures.failures == [1]
    assert result.start[0] == 0 and result.end[0] == 180
    assert wrapper.reservation_log == [(50, 0, 1), (80, 0, 1), (80, 0, -2)]


def test_reserved_node_that_fails_leaves_the_reservation_and_cua_collects_another():
    jobs = [
        dict(submit=0, run=2000, nodes=2),
        dict(
            submit=500,
            run=100,
            nodes=4,
            type="on-demand",
            notice="accurate",
            notice_time=100,
            t_est=500,
        ),
    ]
    failures = NodeFailures(schedule=[(200, 3, 100)])
    engine, result, wrapper = run(jobs, 4, "cua-paa", failures=failures)
    assert wrapper.reservation_log[:3] == [(100, 1, 2), (200, 1, -1), (300, 1, 1)]
    # PAA frees J0's nodes at the arrival
    assert result.start[1] == 500 and engine.preemptions == [1, 0]
    assert failures.failures == [0, 0]


def test_resize_gives_up_the_named_nodes_only():
    jobs = [dict(submit=0, run=1000, nodes=3, type="malleable", n_min=1)]

    def shrink(engine):
        with pytest.raises(ActionError):
            engine.resize(0, 2, release=[1, 2])  # two nodes given up would leave 1, not 2
        engine.resize(0, 2, release=[1])

    def check(engine):
        assert engine.allocation[0].nodes.tolist() == [0, 2]

    class At:
        def attach(self, engine):
            engine.at(100, shrink)
            engine.at(200, check)

    workload = hybrid(jobs)
    engine = Engine(
        engine_workload(workload),
        Platform(3),
        make_scheduler("easy"),
        job_models=job_models(workload, np.array([NAN])),
        sources=[At()],
    )
    assert engine.run().end[0] == pytest.approx(100 + 900 * 3 / 2)


class _Checked(Hybrid):
    """The mechanism, checking after every scheduling pass that running jobs, reservations and
    down nodes never share a node."""

    failures = None

    def schedule(self, engine):
        super().schedule(engine)
        owners = defaultdict(list)
        for job in engine.running:
            for node in engine.allocation[job].nodes.tolist():
                owners[node].append(("job", job))
        for held in self.held.values():
            for reservation in held:
                for node in reservation.nodes.tolist():
                    owners[node].append(("reserved", reservation.key))
        for node in np.flatnonzero(self.failures.down).tolist():
            owners[node].append(("down", node))
        assert all(len(who) == 1 for who in owners.values()), owners
        assert len(owners) == engine.platform.nodes - engine.free_units()


def replay(log, engine, periods):
    """Per job: work done (rebuilt from the event log in exact rational arithmetic) and the work
    lost at each preemption, by (time, job); ``setups[(time, job)]``: node-seconds of setup the
    interrupted run spent."""
    done, losses, opened, setups = defaultdict(Fraction), {}, {}, {}
    for when, event, job, size in log:
        model = engine.model(job)
        when = Fraction(when)
        if event == "start":
            opened[job] = (when, when + Fraction(model.setup), [(when, size)])
        elif event == "resize":
            opened[job][2].append((when, size))
        elif event in ("preempt", "finish"):
            started, setup_end, segments = opened.pop(job)
            for (begin, nodes), end in zip(segments, [s[0] for s in segments[1:]] + [when]):
                speed = Fraction(nodes, engine.requested_nodes(job))  # linear speed-up
                done[job] += max(Fraction(0), end - max(begin, setup_end)) * speed
            if event == "preempt":
                kept = done[job]
                if model.kind == "rigid":  # the last completed checkpoint (none: from scratch)
                    period = periods[job]
                    kept = (
                        (done[job] // Fraction(period)) * Fraction(period)
                        if period == period
                        else 0
                    )
                losses[float(when), job] = float(done[job] - kept)
                setups[float(when), job] = float(
                    min(when - started, Fraction(model.setup)) * segments[-1][1]
                )
                done[job] = kept
    return {job: float(value) for job, value in done.items()}, losses, setups


@st.composite
def with_failures(draw):
    nodes, jobs, periods, mechanism = draw(scenarios())
    schedule = [
        (draw(st.integers(100, 1500)), draw(st.integers(0, nodes - 1)), draw(st.integers(1, 400)))
        for _ in range(draw(st.integers(1, 5)))
    ]
    return nodes, jobs, periods, mechanism, schedule


@settings(max_examples=120, deadline=None)
@given(with_failures())
def test_failures_never_share_a_node_and_cost_exactly_the_uncheckpointed_work(case):
    nodes, jobs, periods, mechanism, schedule = case
    failures = NodeFailures(schedule=schedule)

    class Checked(_Checked):
        pass

    Checked.failures = failures
    engine, result, _ = run(
        jobs, nodes, mechanism, periods, failures=failures, wrapper_class=Checked
    )
    assert np.all(np.isfinite(result.end))
    done, losses, spent = replay(result.log, engine, periods)
    for job in range(len(jobs)):
        assert abs(done[job] - engine.work[job]) <= WORK_TOLERANCE  # useful work done exactly once
        assert (
            abs(sum(v for (_, j), v in losses.items() if j == job) - engine.lost[job])
            <= WORK_TOLERANCE
        )
    for when, node, job, how, size in failures.hits:
        assert (when, node, 1) in failures.down_log  # a hit is a failure that took its node down
        model = engine.model(job)
        if model.kind == "malleable":  # shrinks rather than stops whenever n_min allows
            assert how == ("shrink" if size - 1 >= model.min_nodes else "preempt")
            assert engine.lost[job] == 0
        else:
            assert how == "preempt"
        if jobs[job]["type"] == "on-demand":  # the mechanisms never preempt it: only failures do
            assert engine.preemptions[job] == failures.interruptions[job]
    for job, kind in enumerate(job["type"] for job in jobs):
        # a rigid or on-demand job hit loses exactly its work since its last checkpoint (none: all
        # of it), at its requested size, plus the setup its interrupted run had spent (all of it
        # only once past it)
        if kind != "malleable":
            hit = [
                key
                for key in losses
                if key[1] == job and any(h[0] == key[0] and h[2] == job for h in failures.hits)
            ]
            lost = sum(losses[key] for key in hit)
            setups = sum(spent[key] for key in hit)
            assert (
                abs(failures.lost_node_seconds[job] - lost * engine.requested_nodes(job) - setups)
                <= WORK_TOLERANCE * nodes
            )
    # every down node comes back, and a node is down at most once at a time
    state = defaultdict(int)
    for _, node, change in failures.down_log:
        state[node] += change
        assert state[node] in (0, 1)
    assert not any(state.values())


def test_drawn_failures_are_seeded_and_stop_with_the_jobs():
    jobs = [
        dict(submit=0, run=50_000, nodes=2),
        dict(submit=10, run=80_000, nodes=3, type="malleable", n_min=1),
    ]
    logs = []
    for seed in (3, 3, 4):
        failures = NodeFailures(2.0, 1.0, seed)
        _, result, _ = run(jobs, 6, "n-spaa", [3600.0, NAN], failures=failures)
        logs.append(failures.down_log)
        assert all(
            when <= np.nanmax(result.end) for when, _, change in failures.down_log if change > 0
        )
    assert logs[0] == logs[1] != logs[2]
    assert len(logs[0]) > 0


@pytest.mark.parametrize("mtbf, down", [(0, 6.0), (-5, 6.0), (math.inf, 6.0), (10.0, 0.0)])
def test_failure_options_must_be_positive(mtbf, down):
    with pytest.raises(InputError):
        NodeFailures(mtbf, down)


@pytest.mark.parametrize(
    "flags",
    [
        ["--hybrid", "n-paa", "--mtbf", "0"],
        ["--hybrid", "n-paa", "--mtbf", "-3"],
        ["--hybrid", "n-paa", "--mtbf", "10", "--down-hours", "0"],
        ["--mtbf", "10"],
    ],
)
def test_simulate_bad_mtbf_is_one_line_and_exit_2(tmp_path, capsys, flags):
    assert main(["simulate", *SMALL, *flags, "--out", str(tmp_path / "x")]) == 2
    error = capsys.readouterr().err
    assert "mtbf" in error or "down_hours" in error
    assert error.count("\n") == 1 and not (tmp_path / "x").exists()


def test_simulate_with_failures_writes_the_counts(tmp_path):
    out = tmp_path / "run"
    assert (
        main(
            [
                "simulate",
                *SMALL,
                "--hybrid",
                "cua-spaa",
                "--mtbf",
                "20",
                "--seed",
                "2",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    summary = json.loads((out / "summary.json").read_text())
    jobs = pd.read_csv(out / "jobs.csv")
    assert summary["failures"] > 0 and summary["checkpoint_mtbf"] == 20
    assert jobs["failures"].sum() == summary["failure_hits"]
    assert summary["lost_node_hours"] >= summary["failure_lost_node_hours"] >= 0
    again = tmp_path / "again"
    assert (
        main(
            [
                "simulate",
                *SMALL,
                "--hybrid",
                "cua-spaa",
                "--mtbf",
                "20",
                "--seed",
                "2",
                "--out",
                str(again),
            ]
        )
        == 0
    )
    assert pd.read_csv(again / "jobs.csv")["end_time"].equals(jobs["end_time"])


def test_experiment_checkpoint_sweep_injects_failures_at_each_mtbf(tmp_path):
    out = tmp_path / "grid"
    assert (
        main(
            [
                "experiment-hybrid",
                "--workload",
                "kth-sp2",
                "--platform",
                "kth-sp2",
                "--limit",
                "200",
                "--typings",
                "1",
                "--mechanism",
                "n-paa",
                "--sweep",
                "checkpoint",
                "--mtbf",
                "50",
                "--workers",
                "1",
                "--quiet",
                "--out",
                str(out),
                "--plots",
            ]
        )
        == 0
    )
    runs = pd.read_csv(out / "runs.csv")
    sweep = runs[runs["sweep"] == "checkpoint"]
    rate = sweep.groupby(sweep["value"].str.split(":").str[0].astype(float))["failures"].mean()
    assert rate[5.0] > rate[50.0] > 0
    assert "node failures" in (out / "table.md").read_text()
    assert json.loads((out / "spec.json").read_text())["mtbf"] == 50
    assert (out / "plots" / "checkpoint_sweep_mtbf5h.png").stat().st_size > 0


# failures that never let the jobs finish: the 4-node job needs every node up at once, but one
# failure every 36 s keeps nodes down for 5 h on average
NEVER_ENDING = [dict(submit=0, run=36_000, nodes=4), dict(submit=10, run=600, nodes=1)]
FEW_FAILURES = 300  # MAX_FAILURES for the tests: the limit is reached in a fraction of a second


@pytest.mark.timeout(120)  # the code before the limit never ended
def test_failures_that_keep_jobs_from_finishing_stop_the_run_at_the_limit(monkeypatch):
    monkeypatch.setattr(failures_module, "MAX_FAILURES", FEW_FAILURES)
    failures = NodeFailures(0.01, 5.0, seed=1)
    with pytest.raises(InputError, match="mtbf") as refused:
        run(NEVER_ENDING, 4, "n-paa", [600.0, NAN], failures=failures)
    assert failures.drawn == FEW_FAILURES + 1
    assert f"{FEW_FAILURES:,} failures" in str(refused.value)


@pytest.mark.timeout(120)
def test_simulate_stops_never_ending_failures_with_one_line_exit_2(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(failures_module, "MAX_FAILURES", FEW_FAILURES)
    trace = tmp_path / "small.csv"
    trace.write_text("job_id,submit_time,run_time,cores\n1,0,36000,100\n2,10,7200,16\n")
    out = tmp_path / "out"
    command = ["simulate", "--workload", str(trace), "--platform", "kth-sp2", "--quiet"]
    command += ["--hybrid", "cup-paa", "--type-by", "job", "--mtbf", "0.05", "--out", str(out)]
    assert main(command) == 2
    error = capsys.readouterr().err
    assert error.startswith("cosched simulate: error: field 'mtbf'") and error.count("\n") == 1
    assert not out.exists()


@settings(max_examples=40, deadline=None)
@given(
    scenarios(),
    st.floats(0.001, 2.0),
    st.floats(0.01, 20.0),
    st.integers(0, 2**16),
)
@pytest.mark.timeout(300)
def test_drawn_failures_end_every_run_within_the_limit(case, mtbf, down_hours, seed):
    nodes, jobs, periods, mechanism = case
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(failures_module, "MAX_FAILURES", FEW_FAILURES)
        failures = NodeFailures(mtbf, down_hours, seed)
        try:
            _, result, _ = run(jobs, nodes, mechanism, periods, failures=failures)
        except InputError as error:
            hypothesis.event("stopped at the limit")
            assert error.field == "mtbf" and failures.drawn == FEW_FAILURES + 1
        else:
            assert np.all(np.isfinite(result.end)) and failures.drawn <= FEW_FAILURES
