"""Exact bookkeeping of preemptions, setups and backfilling (004 §III-A, §III-B, §IV-D), by hand and
by property.

Each hand-computed test derives its expected times in its docstring. The properties run random small
workloads and rebuild the work from the event log in exact rational arithmetic.
"""

import math
from fractions import Fraction

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from cosched.simulator.engine import Engine
from cosched.simulator.hybrid.mechanisms import MECHANISMS
from cosched.simulator.hybrid.run import hybrid_result
from cosched.simulator.jobs import periodic, rigid
from cosched.simulator.platform import Platform
from cosched.simulator.schedulers import make_scheduler
from cosched.simulator.workload import make_workload

from .scenario import hybrid, run

TIME_TOLERANCE = 1e-6  # seconds: float sums of a few hand-picked times
NAN = math.nan


class Preemptions:
    """An event source preempting job 0 at given times (if it runs then)."""

    def __init__(self, times):
        self.times = times

    def attach(self, engine):
        for when in self.times:
            engine.at(when, lambda e: e.preempt(0) if e.state[0] == 2 else None)


def fcfs(engine):
    for job in list(engine.waiting):
        if not engine.start(job):
            break


def one_rigid_job(work, period, setup, preempt_at):
    workload = make_workload([0], [0.0], [work], [1], [work])
    model = rigid(setup=setup, checkpoint=periodic(period))
    engine = Engine(
        workload,
        Platform(1),
        fcfs,
        job_models=[model],
        sources=[Preemptions(preempt_at)],
        log_events=True,
    )
    return engine, engine.run()


def test_a_second_preemption_during_the_setup_keeps_the_checkpoint_just_resumed_from():
    """Work W = 10000.7 s, a checkpoint every P = 1428.57 s of work, setup s = 100 s, one node.

    Starts at 0, setup until 100; checkpoints complete at work 1428.57 and 2857.14 (t = 2957.14).
    Preempted at 3000 with 2900 s done: keeps 2 P = 2857.14, loses 42.86; restarts at once.
    Preempted again at 3050, inside its setup (which ends at 3100): no progress, keeps 2 P (in
    floating point W - (W - 2 P) is 2857.1399999999994, whose floor by P is 1: the old rule threw a
    whole period away). Restarts at 3050: setup until 3150, then W - 2 P = 7143.56 s: ends at
    10293.56. Setup spent by interrupted runs: 100 + 50.
    """
    engine, result = one_rigid_job(10000.7, 1428.57, 100.0, [3000.0, 3050.0])
    assert engine.preemptions[0] == 2 and engine.checkpoints[0] == 2
    assert abs(engine.lost[0] - (2900 - 2857.14)) <= TIME_TOLERANCE
    assert abs(result.end[0] - (3150 + 10000.7 - 2857.14)) <= TIME_TOLERANCE
    assert abs(engine.lost_setup[0] - 150.0) <= TIME_TOLERANCE


@settings(max_examples=200, deadline=None)
@given(
    work=st.floats(500, 20000),
    period=st.integers(400, 24000),
    setup=st.integers(0, 2400),
    gaps=st.lists(st.integers(0, 16000), min_size=1, max_size=8),
)
def test_repeated_preemption_never_loses_checkpointed_work(work, period, setup, gaps):
    """Preempted at random times (in setups too): the work done exactly once, the loss exactly the
    work since the last completed checkpoint, the checkpoint count never decreasing (exact replay in
    fractions).

    Periods, setups and times are multiples of 1/8 s (exact in binary), the work any float: the
    engine's float rebuild of the work done must not decide a checkpoint the exact replay decides
    otherwise."""
    period, setup = period / 8, setup / 8
    times = (np.cumsum(gaps) / 8).tolist()
    engine, result = one_rigid_job(work, period, setup, times)
    starts = [when for when, event, job, _ in result.log if event == "start"]
    stops = [when for when, event, job, _ in result.log if event == "preempt"] + [result.end[0]]
    done, lost, count, spent = Fraction(0), Fraction(0), 0, Fraction(0)
    P, S = Fraction(period), Fraction(setup)
    for begin, end in zip(starts, stops):
        progress = max(Fraction(0), Fraction(end) - Fraction(begin) - S)
        done += progress
        if end is not stops[-1]:  # a preemption: back to the last completed checkpoint
            count = max(count, int(done // P))
            lost += done - count * P
            done = count * P
            spent += min(Fraction(end) - Fraction(begin), S)
    assert abs(float(done) - work) <= 1e-6 * work  # the work done exactly once
    assert abs(float(lost) - engine.lost[0]) <= 1e-6 * work
    assert engine.checkpoints[0] == count
    assert abs(float(spent) - engine.lost_setup[0]) <= 1e-6 * work


@settings(max_examples=50, deadline=None)
@given(
    setup=st.integers(0, 2400),
    gaps=st.lists(st.integers(0, 16000), min_size=1, max_size=8),
)
def test_the_typed_estimates_easy_reads_equal_the_queued_durations_at_every_pass(setup, gaps):
    """EASY reads a waiting job's predicted duration from the engine's typed table
    (`typed_durations`): at every pass it equals `queued_duration`, which each preemption of a
    checkpointing job changes (its setup and the work left)."""
    workload = make_workload([0, 1], [0.0, 0.0], [9000.0, 3000.0], [1, 1], [9000.0, 3000.0])
    model = rigid(setup=setup / 8, checkpoint=periodic(1000.0))
    times, engines, passes = (np.cumsum(gaps) / 8).tolist(), [], []

    def checked(view):
        engine = engines[0]
        passes.append(list(engine.typed_durations) == list(engine.queued_duration))
        fcfs(view)

    engines.append(
        Engine(
            workload, Platform(1), checked, job_models=[model, model], sources=[Preemptions(times)]
        )
    )
    engines[0].run()
    assert passes and all(passes)


def test_cup_counts_a_running_on_demand_job_that_ends_before_the_announced_arrival():
    """4 nodes. On-demand J0 (no notice, 2 nodes) runs 0..1000, estimated 1000; rigid J1 (2 nodes)
    runs 0..5000. On-demand J2 (2 nodes) is announced at 500 for t_est = 2000 and arrives then.

    At the notice no node is idle. J0 is expected to release its 2 nodes by 1000 <= t_est (004
    §III-B), which covers J2: CUP earmarks J0 and preempts nobody. At 1000 J0's nodes are reserved;
    J2 starts on them at 2000 and ends at 2300; J1 runs undisturbed to 5000.
    """
    jobs = [
        dict(submit=0, run=1000, nodes=2, type="on-demand"),
        dict(submit=0, run=5000, nodes=2),
        dict(
            submit=2000,
            run=300,
            nodes=2,
            type="on-demand",
            notice="accurate",
            notice_time=500,
            t_est=2000,
        ),
    ]
    engine, result, wrapper = run(jobs, 4, "cup-paa")
    assert engine.preemptions == [0, 0, 0]
    assert result.end[1] == 5000
    assert result.start[2] == 2000 and result.end[2] == 2300
    assert wrapper.reservation_log[0] == (1000, 2, 2)


def easy_jobs():
    """Shared by the EASY tests: 2 nodes; J0 1 node 0..1000; J1 (2 nodes, run 500) the blocked
    head from 1, reserved at the shadow time 1000; J2 (1 node) submitted at 2."""
    return make_workload([0, 1, 2], [0, 1, 2], [1000, 500, 950], [1, 2, 1], [1000, 500, 950])


def test_easy_backfilling_counts_the_setup_a_started_job_pays():
    """J2 has 950 s of work and a 100 s setup. Started at 2 it would end at 2 + 100 + 950 = 1052
    > 1000, past the head's reservation; without the setup (2 + 950 = 952) it looked short
    enough. So it waits: J1 runs 1000..1500, J2 1500..2550 (setup then work)."""
    scheduler = make_scheduler("easy", record_reservations=True)
    engine = Engine(
        easy_jobs(), Platform(2), scheduler, job_models=[rigid(), rigid(), rigid(setup=100.0)]
    )
    result = engine.run()
    assert scheduler.reservations[1] == 1000
    assert result.start.tolist() == [0, 1000, 1500] and result.end[2] == 2550


def test_easy_backfilling_counts_checkpoint_writes():
    """J2's 950 s of work checkpoint every 400 s at 50 s each: 2 writes, so it runs 1050 s; the
    estimate (950 s) counts them too. Started at 2 it would end at 1052 > 1000: it waits, runs
    1500..2550."""
    scheduler = make_scheduler("easy", record_reservations=True)
    models = [rigid(), rigid(), rigid(checkpoint=periodic(400.0, 50.0))]
    result = Engine(easy_jobs(), Platform(2), scheduler, job_models=models).run()
    assert result.start.tolist() == [0, 1000, 1500] and result.end[2] == 2550


def test_easy_under_a_mechanism_counts_the_setup():
    """The same jobs as a hybrid workload (trace run times hold the setup: J2 runs 1050 s, setup
    100 s) under N-PAA with no on-demand job: the site policy alone, and J2 again waits for the
    head (1500..2550)."""
    jobs = [
        dict(submit=0, run=1000, nodes=1),
        dict(submit=1, run=500, nodes=2),
        dict(submit=2, run=1050, nodes=1, setup=100.0),
    ]
    for mechanism in MECHANISMS[1:]:
        engine, result, _ = run(jobs, 2, mechanism)
        assert result.start.tolist() == [0, 1000, 1500] and result.end[2] == 2550, mechanism


def test_lost_node_hours_count_only_the_setup_actually_spent():
    """2 nodes. Rigid J0 (2 nodes, run 1100 s of which setup 100 s, no checkpoints) starts at 0;
    on-demand J1 (2 nodes, 500 s) arrives at 40. N-PAA preempts J0 (its only candidate) 40 s into
    its setup: no work lost, 40 s x 2 nodes = 80 node-seconds of setup wasted (not the full 200).
    J1 runs 40..540; J0, its lender, restarts at 540 and ends at 540 + 1100 = 1640."""
    jobs = [
        dict(submit=0, run=1100, nodes=2, setup=100.0),
        dict(submit=40, run=500, nodes=2, type="on-demand"),
    ]
    engine, result, _ = run(jobs, 2, "n-paa")
    frame = hybrid_result(engine, result, hybrid(jobs), "n-paa").jobs_frame()
    assert result.start[1] == 40 and result.end[0] == 1640
    assert frame["lost_node_seconds"].tolist() == [80.0, 0.0]


@st.composite
def batch(draw):
    """Rigid (setup, checkpoints) and malleable (setup) jobs, no on-demand job: the site policy's
    guarantee."""
    nodes = draw(st.integers(2, 6))
    jobs, periods = [], []
    for _ in range(draw(st.integers(2, 9))):
        size, run_time = draw(st.integers(1, nodes)), draw(st.integers(20, 400))
        job = dict(
            submit=draw(st.integers(0, 300)),
            run=run_time,
            nodes=size,
            estimate=run_time + draw(st.integers(0, 300)),
            setup=draw(st.integers(0, run_time // 5)),
        )
        period = NAN
        if draw(st.booleans()):
            job.update(type="malleable", n_min=draw(st.integers(1, size)))
        elif draw(st.booleans()):
            period = float(draw(st.integers(5, 100)))
        jobs.append(job)
        periods.append(period)
    order = sorted(range(len(jobs)), key=lambda k: jobs[k]["submit"])
    return (
        nodes,
        [jobs[k] for k in order],
        [periods[k] for k in order],
        draw(st.sampled_from(MECHANISMS[1:])),
    )


@settings(max_examples=150, deadline=None)
@given(batch())
def test_easy_head_starts_by_its_reservation_with_setups_and_checkpoints(case):
    """Every job that was ever the blocked head starts no later than the shadow time it was first
    given."""
    nodes, jobs, periods, mechanism = case
    inner = make_scheduler("easy", record_reservations=True)
    engine, result, _ = run(jobs, nodes, mechanism, periods, scheduler=inner)
    for job, shadow in inner.reservations.items():
        assert result.start[job] <= shadow + TIME_TOLERANCE, (job, shadow)
