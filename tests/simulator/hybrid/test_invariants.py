"""Invariants of every mechanism on generated hybrid workloads (hypothesis)."""

import math
import tempfile
from collections import defaultdict

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from cosched.simulator.hybrid.mechanisms import MECHANISMS, RELEASE_AFTER

from .action_replay import ARRIVED_FIRST, ONE_PROMISE, promise_violations
from .scenario import action_rows, hybrid, run

WORK_TOLERANCE = 1e-6  # seconds of work


@st.composite
def scenarios(draw):
    nodes = draw(st.integers(2, 8))
    jobs, periods = [], []
    for _ in range(draw(st.integers(1, 10))):
        kind = draw(st.sampled_from(["rigid", "rigid", "malleable", "on-demand"]))
        size = draw(st.integers(1, nodes))
        run_time = draw(st.integers(10, 300))
        job = dict(
            submit=draw(st.integers(100, 500)),
            run=run_time,
            nodes=size,
            type=kind,
            estimate=run_time + draw(st.integers(0, 200)),
        )
        period = math.nan
        if kind == "rigid":
            job["setup"] = draw(st.integers(0, run_time // 10))
            period = float(draw(st.sampled_from([0, 7, 25, 60])) or math.nan)
        elif kind == "malleable":
            job["setup"] = draw(st.integers(0, run_time // 20))
            job["n_min"] = draw(st.integers(1, size))
        else:
            notice = draw(st.sampled_from(["no-notice", "accurate", "early", "late"]))
            t_est = job["submit"]
            job.update(notice=notice, t_est=t_est)
            if notice != "no-notice":
                job["notice_time"] = t_est - draw(st.integers(1, 100))
            if notice == "early":
                job["submit"] = (
                    draw(st.integers(int(job["notice_time"]) + 1, t_est))
                    if t_est > job["notice_time"] + 1
                    else t_est
                )
            elif notice == "late":
                job["submit"] = t_est + draw(st.integers(1, 1200))
        jobs.append(job)
        periods.append(period)
    order = sorted(range(len(jobs)), key=lambda k: jobs[k]["submit"])
    return (
        nodes,
        [jobs[k] for k in order],
        [periods[k] for k in order],
        draw(st.sampled_from(MECHANISMS[1:])),
    )


def replay(result, engine, wrapper, periods):
    """Per job: work done (rebuilt from the event log: setup, then n/n_max speed) and work lost at
    preemptions."""
    done, lost, opened = defaultdict(float), defaultdict(float), {}
    model = engine.model

    def progress(job, until):
        started, setup_end, segments = opened[job]
        total = 0.0
        for (begin, size), end in zip(segments, [s[0] for s in segments[1:]] + [until]):
            span = max(0.0, end - max(begin, setup_end))
            total += span * model(job).rate(size, engine.requested_nodes(job))
        return total

    for when, event, job, size in result.log:
        if event == "start":
            opened[job] = (when, when + model(job).setup, [(when, size)])
        elif event == "resize":
            opened[job][2].append((when, size))
        elif event in ("preempt", "finish"):
            done[job] += progress(job, when)
            del opened[job]
            if event == "preempt":
                kept = done[job]
                if model(job).kind == "rigid":
                    period = periods[job]
                    kept = math.floor(done[job] / period) * period if period == period else 0.0
                lost[job] += done[job] - kept
                done[job] = kept
    return done, lost


@settings(max_examples=150)
@given(scenarios())
def test_every_mechanism_keeps_the_invariants(scenario):
    nodes, jobs, periods, mechanism = scenario
    engine, result, wrapper = run(jobs, nodes, mechanism, periods)
    kinds = [job["type"] for job in jobs]
    assert np.all(np.isfinite(result.end))
    for job, kind in enumerate(kinds):
        if kind == "on-demand":  # never preempted nor shrunk
            assert engine.preemptions[job] == 0 and wrapper.shrinks[job] == 0
    done, lost = replay(result, engine, wrapper, periods)
    for job, kind in enumerate(kinds):
        # useful work equals the work exactly once: what remains after the losses is the job's work
        assert abs(done[job] - engine.work[job]) <= WORK_TOLERANCE
        # preempted rigid jobs lose exactly their work since the last checkpoint; malleable ones
        # nothing
        assert abs(lost[job] - engine.lost[job]) <= WORK_TOLERANCE
        if kind == "malleable":
            assert engine.lost[job] == 0
    # no node over-committed: running jobs plus reservations fit the platform after every timestamp
    changes = defaultdict(int)
    held = {}
    for when, event, job, size in result.log:
        if event in ("start", "resize"):
            changes[when] += size - held.get(job, 0)
            held[job] = size
        elif event in ("preempt", "finish"):
            changes[when] -= held.pop(job)
    for when, _, count in wrapper.reservation_log:
        changes[when] += count
    used = 0
    for when in sorted(changes):
        used += changes[when]
        assert 0 <= used <= nodes
    assert used == 0
    # a reservation made before the arrival never outlives the estimated arrival + 10 min
    for job, kind in enumerate(kinds):
        if kind != "on-demand" or not np.isfinite(jobs[job].get("notice_time", math.nan)):
            continue
        deadline = min(result.workload.submit[job], jobs[job]["t_est"] + RELEASE_AFTER)
        before = [
            (when, count)
            for when, od, count in wrapper.reservation_log
            if od == job and when < result.workload.submit[job]
        ]
        assert (
            sum(count for when, count in before if when <= deadline) == 0
            or result.workload.submit[job] <= jobs[job]["t_est"] + RELEASE_AFTER
        )
        assert all(when <= deadline for when, _ in before)


def promise_findings(scenario, prefix: str) -> list[str]:
    """The findings of `promise_violations` with `prefix` for a run of `scenario`."""
    nodes, jobs, periods, mechanism = scenario
    workload = hybrid(jobs)
    engine, result, _ = run(workload, nodes, mechanism, periods, log_actions=True)
    with tempfile.TemporaryDirectory() as folder:
        rows = action_rows(engine, result, workload, folder)
    found = promise_violations(rows, workload.frame(), 120.0, nodes)
    return [text for text in found if text.startswith(prefix)]


@settings(max_examples=100)
@given(scenarios())
def test_no_node_is_promised_to_two_on_demand_jobs_at_once(scenario):
    """A warned job is promised to one on-demand job until its warning ends or is withdrawn, a job
    on an announced job's reserved nodes goes to no other announced job, and every warning is kept
    or withdrawn in time."""
    assert promise_findings(scenario, ONE_PROMISE) == []


@settings(max_examples=100)
@given(scenarios())
def test_an_arrived_on_demand_job_never_waits_while_a_node_goes_to_an_announced_one(scenario):
    """While an arrived on-demand job lacks nodes, announced jobs reserve only nodes it does not
    need."""
    assert promise_findings(scenario, ARRIVED_FIRST) == []


def test_a_notice_before_the_first_arrival_reserves_at_its_time():
    """The clock starts at the earliest event: two late on-demand jobs noticed at 99 (estimated at
    100) reserve then, not at the first arrival (701), and their reservations end 10 min after the
    estimate (004 §IV-B), before they arrive."""
    late = dict(run=10, nodes=1, type="on-demand", estimate=10, notice="late", t_est=100)
    jobs = [dict(late, submit=701, notice_time=99), dict(late, submit=702, notice_time=99)]
    _, result, wrapper = run(jobs, 2, "cua-paa", [math.nan, math.nan])
    assert wrapper.reservation_log == [
        (99.0, 0, 1),
        (99.0, 1, 1),
        (100.0 + RELEASE_AFTER, 0, -1),
        (100.0 + RELEASE_AFTER, 1, -1),
    ]
    assert result.start.tolist() == [701.0, 702.0]
