"""Job lifecycle in the engine: resize, preemption, kill, reservations, job models, and their
invariants."""

from __future__ import annotations

import math
import runpy
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cosched.simulator.engine import ActionError
from cosched.simulator.jobs import (
    NO_CHECKPOINT,
    ON_WARNING,
    JobModel,
    amdahl,
    malleable,
    moldable,
    periodic,
)
from cosched.simulator.platform import Platform
from cosched.simulator.schedulers.base import Scheduler
from cosched.simulator.schedulers.easy import EASY
from cosched.simulator.simulation import simulate
from cosched.simulator.workload import make_workload

WORK_TOLERANCE = 1e-6  # relative slack on work sums after many float rescalings
EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "expand_into_idle.py"


def workload(runs, nodes, submit=None, cores_per_node=1):
    n = len(runs)
    return make_workload(
        np.arange(n),
        np.zeros(n) if submit is None else submit,
        runs,
        np.asarray(nodes) * cores_per_node,
    )


class Chaos(Scheduler):
    """Starts, resizes, preempts and kills at random (seeded): exercises every action of the
    engine."""

    name = "chaos"

    def __init__(self, seed: int, kill: bool = True):
        self.rng = np.random.default_rng(seed)
        self.kill = kill
        self.passes = 0

    def attach(self, engine):
        self.submitted = list(engine.submit)

    def schedule(self, engine):
        self.passes += 1
        running_nodes = np.concatenate(
            [engine.allocation[j].nodes for j in engine.running] or [np.zeros(0, int)]
        )
        assert np.unique(running_nodes).size == running_nodes.size  # no node over-committed
        assert not engine.is_idle(running_nodes).any()
        for job in list(engine.running):
            model, draw = engine.model(job), self.rng.random()
            if draw < 0.1:
                engine.preempt(job)
            elif draw < 0.13 and self.kill:
                engine.kill(job)
            elif draw < 0.4 and model.kind == "malleable":
                low, high = model.bounds(engine.requested_nodes(job))
                engine.resize(job, int(self.rng.integers(low, high + 1)))
        for job in list(engine.waiting):
            assert engine.submit[job] <= engine.now  # never waiting before its submission
            model = engine.model(job)
            low, high = model.bounds(engine.requested_nodes(job))
            size = int(self.rng.integers(low, high + 1))
            engine.start(job, size if model.kind != "rigid" else None)
        if engine.running or engine.waiting:
            engine.request_wakeup(engine.now + float(self.rng.uniform(0.5, 5.0)))


def progress_from_log(result, engine_models, requested, cores_per_node):
    """Work each job did, integrated independently from the event log (setup and reconfiguration
    excluded)."""
    done = np.zeros(len(result.start))
    segment = {}  # job -> (since, rate, nodes)
    for time, event, job, value in result.log:
        model = engine_models[job]
        if event == "start":
            segment[job] = (time + model.setup, model.rate(value, requested[job]), value)
        elif event == "resize":
            since, rate, _ = segment[job]
            done[job] += rate * max(0.0, time - since)
            segment[job] = (
                max(since, time) + model.reconfiguration,
                model.rate(value, requested[job]),
                value,
            )
        elif event in ("finish", "preempt", "kill"):
            since, rate, _ = segment.pop(job)
            done[job] += rate * max(0.0, time - since)
    return done


models = st.one_of(
    st.just(JobModel()),
    st.builds(lambda s: JobModel(setup=s), st.floats(0, 3)),
    st.builds(
        lambda lo, hi, s, c: malleable(lo, lo + hi, setup=s, checkpoint=c),
        st.integers(1, 2),
        st.integers(0, 2),
        st.floats(0, 2),
        st.sampled_from([NO_CHECKPOINT, ON_WARNING, periodic(3.0, 0.5)]),
    ),
    st.builds(
        lambda lo, hi: moldable(lo, lo + hi, scaling=amdahl(0.2)),
        st.integers(1, 2),
        st.integers(0, 2),
    ),
)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.floats(1, 20), st.integers(1, 3), st.floats(0, 10), models),
        min_size=1,
        max_size=8,
    ),
    st.integers(0, 2**16),
)
def test_every_action_conserves_work_and_never_overcommits_a_node(jobs, seed):
    jobs = sorted(jobs, key=lambda job: job[2])  # workload order: by submit time
    runs, nodes, submit, job_models = (list(column) for column in zip(*jobs))
    w = workload(runs, nodes, np.array(submit))
    platform = Platform(4)
    result = simulate(w, platform, Chaos(seed), job_models=job_models, log_events=True)
    frame = result.jobs_frame()
    requested = [n for n in nodes]
    progress = progress_from_log(result, job_models, requested, 1)
    for job in range(len(runs)):
        work = frame["work"][job]
        assert work >= runs[job] - 1e-12
        state = frame["state"][job]
        assert state in ("finished", "killed")
        if state == "finished":  # work done = work + work lost (redone after preemptions)
            assert progress[job] == pytest.approx(
                work + frame["lost_work"][job], rel=WORK_TOLERANCE, abs=1e-9
            )
        else:
            assert progress[job] <= work + frame["lost_work"][job] + 1e-9
        assert math.isnan(result.start[job]) or result.start[job] >= submit[job]
        assert frame["lost_work"][job] >= 0
        if job_models[job].checkpoint.on_warning:
            assert frame["lost_work"][job] == pytest.approx(0, abs=1e-9)


def test_results_are_deterministic_under_a_seed():
    w = workload([5.0, 7.0, 3.0, 9.0, 4.0], [1, 2, 1, 3, 2], np.array([0, 1, 1, 2, 3.0]))
    models_ = [malleable(1, 3)] * 5
    first = simulate(w, Platform(4), Chaos(3), job_models=models_).jobs_frame()
    second = simulate(w, Platform(4), Chaos(3), job_models=models_).jobs_frame()
    assert first.equals(second)


def test_preempted_rigid_job_loses_its_work_and_restarts_after_its_setup():
    w = workload([10.0, 4.0], [2, 2], np.array([0.0, 3.0]))

    class PreemptForSecond(Scheduler):
        def schedule(self, engine):
            if 1 in engine.waiting and 0 in engine.running:
                engine.preempt(0)
            for job in sorted(engine.waiting, reverse=True):  # the newcomer first
                engine.start(job)

    result = simulate(w, Platform(2), PreemptForSecond(), job_models=[JobModel(setup=1.0)] * 2)
    frame = result.jobs_frame()
    assert frame["preemptions"].tolist() == [1, 0]
    assert frame["lost_work"][0] == pytest.approx(2.0)  # ran 3 s, of which 1 s setup
    assert result.end[1] == pytest.approx(3.0 + 1.0 + 4.0)
    assert result.end[0] == pytest.approx(
        8.0 + 1.0 + 10.0
    )  # restarts from scratch after the second ends


def test_periodic_checkpoints_keep_the_work_up_to_the_last_checkpoint():
    w = workload([10.0, 1.0], [1, 1], np.array([0.0, 7.0]))

    class PreemptAtSeven(Scheduler):
        def schedule(self, engine):
            if engine.now == 7.0 and 0 in engine.running:
                engine.preempt(0)
            for job in sorted(engine.waiting, reverse=True):
                engine.start(job)

    model = periodic(
        3.0, 0.5
    )  # 3 s of work, then 0.5 s of checkpoint: done 7 s -> kept 7.0 (two periods)
    result = simulate(
        w, Platform(1), PreemptAtSeven(), job_models=[JobModel(checkpoint=model), JobModel()]
    )
    frame = result.jobs_frame()
    assert frame["work"][0] == pytest.approx(10.0 + 3 * 0.5)
    assert frame["lost_work"][0] == pytest.approx(0.0)
    assert result.end[0] == pytest.approx(8.0 + (11.5 - 7.0))


def test_resize_rescales_the_remaining_time_linearly():
    w = workload([12.0], [2])

    class GrowAtThree(Scheduler):
        def schedule(self, engine):
            if 0 in engine.waiting:
                engine.start(0)
                engine.request_wakeup(3.0)
            elif engine.now == 3.0:
                engine.resize(0, 4)

    result = simulate(w, Platform(4), GrowAtThree(), job_models=[malleable(1, 4)])
    assert result.end[0] == pytest.approx(3.0 + 9.0 / 2)  # 9 s of work left at twice the speed


def test_resize_waits_for_the_next_scheduling_point_and_pays_the_reconfiguration():
    w = workload([12.0], [2])

    class GrowAtOne(Scheduler):
        def schedule(self, engine):
            if 0 in engine.waiting:
                engine.start(0)
                engine.request_wakeup(1.0)
            elif engine.now == 1.0:
                engine.resize(0, 4)

    model = malleable(1, 4, scheduling_point=4.0, reconfiguration=0.5)
    result = simulate(w, Platform(4), GrowAtOne(), job_models=[model], log_events=True)
    resize = [entry for entry in result.log if entry[1] == "resize"]
    assert resize == [(4.0, "resize", 0, 4)]
    assert result.end[0] == pytest.approx(4.0 + 0.5 + 8.0 / 2)


@pytest.mark.parametrize(
    "action, message",
    [
        (lambda e: e.resize(0, 2), "rigid: only malleable"),
        (lambda e: e.start(1, [0]), "not free"),
        (lambda e: e.preempt(1), "it is waiting"),
    ],
)
def test_wrong_actions_raise_an_error_naming_the_job(action, message):
    w = workload([5.0, 5.0], [1, 1])

    class Wrong(Scheduler):
        def schedule(self, engine):
            if 0 in engine.waiting:
                engine.start(0)
                action(engine)

    with pytest.raises(ActionError, match=message):
        simulate(w, Platform(2), Wrong())


def test_resize_outside_the_bounds_is_refused():
    w = workload([5.0], [2])

    class TooBig(Scheduler):
        def schedule(self, engine):
            if engine.waiting:
                engine.start(0)
                engine.resize(0, 5)

    with pytest.raises(ActionError, match="job 0 can run on 1..3 nodes, not 5"):
        simulate(w, Platform(8), TooBig(), job_models=[malleable(1, 3)])


def test_reserved_nodes_are_not_given_to_other_jobs_and_start_the_job_they_were_held_for():
    w = workload([10.0, 10.0, 2.0], [2, 2, 2], np.array([0.0, 0.0, 5.0]))

    class HoldForLast(Scheduler):
        def attach(self, engine):
            self.held = None

        def schedule(self, engine):
            if self.held is None:
                self.held = engine.reserve(2)
            for job in list(engine.waiting):
                if job == 2 and self.held is not None:
                    engine.start(2, self.held)
                    self.held = False
                elif job != 2:
                    engine.start(job)

    result = simulate(w, Platform(4), HoldForLast())
    assert result.start.tolist() == [
        0.0,
        7.0,
        5.0,
    ]  # job 1 waits while two nodes are held for, then used by, job 2


def test_killed_jobs_end_at_the_kill():
    w = workload([10.0, 3.0], [1, 1])

    class KillFirst(Scheduler):
        def schedule(self, engine):
            for job in list(engine.waiting):
                engine.start(job)
            if engine.now == 3.0 and 0 in engine.running:
                engine.kill(0)

    frame = simulate(w, Platform(2), KillFirst()).jobs_frame()
    assert frame["state"].tolist() == ["killed", "finished"] and frame["end_time"].tolist() == [
        3.0,
        3.0,
    ]


def test_the_documented_malleable_scheduler_expands_jobs_into_idle_nodes():
    ExpandIntoIdle = runpy.run_path(str(EXAMPLE))["ExpandIntoIdle"]
    w = workload([40.0, 10.0], [2, 2], np.array([0.0, 0.0]))
    jobs = [malleable(1, 8), malleable(1, 8)]
    expanded = simulate(w, Platform(8), ExpandIntoIdle(), job_models=jobs)
    rigid = simulate(w, Platform(8), EASY(), job_models=jobs)
    assert rigid.end.tolist() == [40.0, 10.0]
    assert expanded.end.max() < rigid.end.max()
    assert expanded.jobs_frame()["resizes"].sum() >= 1


def test_plain_rigid_models_change_nothing():
    w = workload([5.0, 7.0, 3.0], [1, 2, 1], np.array([0, 1, 1.0]))
    plain = simulate(w, Platform(2), "easy")
    modelled = simulate(w, Platform(2), "easy", job_models=JobModel())
    assert plain.end.tolist() == modelled.end.tolist()
    assert modelled.jobs_frame()["state"].tolist() == ["finished"] * 3
