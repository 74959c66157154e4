"""A fixed priority (`QueueScheduler.fixed_priority`): the queue kept in its order between passes is
the queue sorted by descending key, ties in queue order, after any arrivals, starts, preemptions
and kills; and a simulation with it gives the jobs the starts, ends and nodes of the same priority
sorted in every pass."""

import importlib.util
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cosched.errors import InputError
from cosched.simulator.engine import Engine
from cosched.simulator.jobs import JobState
from cosched.simulator.platform import Platform
from cosched.simulator.schedulers import make_scheduler
from cosched.simulator.schedulers.base import QueueScheduler
from cosched.simulator.schedulers.ordering import LJF, SJF
from cosched.simulator.simulation import simulate
from cosched.simulator.view import scheduling_pass_of
from cosched.simulator.workload import make_workload

from .conftest import platforms_and_workloads

RECIPE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "smallest_area_first.py"
WAITING, RUNNING, KILLED = int(JobState.WAITING), int(JobState.RUNNING), int(JobState.KILLED)


def _recipe() -> type:
    spec = importlib.util.spec_from_file_location("smallest_area_first", RECIPE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.SmallestAreaFirst


class _ByEstimate(QueueScheduler):
    """Largest estimate first, a fixed priority."""

    fixed_priority = True

    def priority(self, view, jobs):
        return self.estimate[jobs]


def _queue(keys: list[int]) -> SimpleNamespace:
    """The part of a scheduler's view a kept order reads: per-job values, states and the queue."""
    estimates = [float(key) for key in keys]
    return SimpleNamespace(
        cores=[1] * len(keys),
        estimate=estimates,
        workload=SimpleNamespace(cores=np.ones(len(keys), np.int64), estimate=np.array(estimates)),
        use_run_times=False,
        state=[int(JobState.FUTURE)] * len(keys),
        waiting={},
        partitions=None,
        eligible=None,
    )


# what happens to the queue: the next job arrives, or the i-th waiting or running job (modulo their
# number) starts, is killed or is preempted back to the queue
EVENTS = st.one_of(
    st.just(("arrive", 0)),
    st.tuples(st.sampled_from(["start", "kill", "preempt"]), st.integers(0, 1_000)),
)


@settings(max_examples=100, deadline=None)
@given(
    keys=st.lists(st.integers(0, 3), min_size=1, max_size=60),  # few keys: many ties
    # after an event, the order is read (all of it: None, or its first jobs) or not: a kept order
    # meets the jobs that left the queue only when a pass reads that far
    events=st.lists(st.tuples(EVENTS, st.booleans(), st.none() | st.integers(1, 8)), max_size=120),
)
def test_kept_order_is_the_sorted_queue_ties_in_queue_order(keys, events):
    view = _queue(keys)
    scheduler = _ByEstimate()
    scheduler.attach(view)
    assert scheduler.listens("on_arrival") and scheduler.listens("on_preempt")
    arrived = 0
    for (kind, pick), read, limit in events:
        waiting = list(view.waiting)
        running = [job for job, state in enumerate(view.state) if state == RUNNING]
        if kind == "arrive" and arrived < len(keys):
            view.state[arrived] = WAITING
            view.waiting[arrived] = None
            scheduler.on_arrival(view, arrived)
            arrived += 1
        elif kind in ("start", "kill") and waiting:
            job = waiting[pick % len(waiting)]
            view.state[job] = RUNNING if kind == "start" else KILLED
            del view.waiting[job]
        elif kind == "preempt" and running:
            job = running[pick % len(running)]
            view.state[job] = WAITING
            view.waiting = dict.fromkeys(sorted([*view.waiting, job]))  # back to its submit place
            scheduler.on_preempt(view, job)
        if read:
            expected = sorted(view.waiting, key=lambda job: (-keys[job], job))
            assert scheduler.order(view, limit) == expected[:limit]
    assert scheduler.order(view) == sorted(view.waiting, key=lambda job: (-keys[job], job))


def test_a_job_preempted_before_a_pass_met_it_is_kept_once():
    view = _queue([0, 0, 0])
    scheduler = _ByEstimate()
    scheduler.attach(view)
    for job in range(3):
        view.state[job] = WAITING
        view.waiting[job] = None
        scheduler.on_arrival(view, job)
    assert scheduler.order(view, 1) == [0]
    view.state[2] = RUNNING  # started and preempted behind the jobs the last pass read
    del view.waiting[2]
    view.state[2] = WAITING
    view.waiting[2] = None
    scheduler.on_preempt(view, 2)
    assert scheduler.order(view) == [0, 1, 2]


def _same_jobs(first, second):
    assert np.array_equal(first.start, second.start)
    assert np.array_equal(first.end, second.end)
    assert [nodes.tolist() for nodes in first.nodes] == [nodes.tolist() for nodes in second.nodes]


@settings(max_examples=40, deadline=None)
@given(case=platforms_and_workloads(max_jobs=30), family=st.sampled_from(["recipe", "sjf", "ljf"]))
def test_fixed_priority_gives_the_jobs_of_the_priority_sorted_every_pass(case, family):
    platform, workload = case
    fixed = {"recipe": _recipe(), "sjf": SJF, "ljf": LJF}[family]
    sorted_every_pass = type("SortedEveryPass", (fixed,), {"fixed_priority": False})
    _same_jobs(
        simulate(workload, platform, fixed()), simulate(workload, platform, sorted_every_pass())
    )


def test_fixed_priority_is_asked_once_over_every_job():
    recipe = _recipe()
    asked: list[int] = []

    class Counted(recipe):
        def priority(self, view, jobs):
            asked.append(len(jobs))
            return super().priority(view, jobs)

    workload = make_workload(
        list(range(6)), [0, 1, 2, 3, 4, 5], [50, 40, 30, 20, 10, 5], [4, 2, 3, 1, 4, 2], None
    )
    simulate(workload, Platform(4, 1, 1), Counted())
    assert asked == [6]


def test_an_arrival_hook_that_skips_the_base_one_is_named():
    class Forgetful(_recipe()):
        def on_arrival(self, view, job):
            pass  # the kept order never hears of the job

    workload = make_workload([0, 1], [0, 0], [10, 10], [1, 1], None)
    with pytest.raises(InputError, match="must call the base one"):
        simulate(workload, Platform(1, 1, 1), Forgetful())


def test_an_arrival_hook_overridden_in_python_hears_each_arrival_once():
    heard: list[int] = []

    class Listening(_recipe()):
        def on_arrival(self, view, job):
            heard.append(job)
            super().on_arrival(view, job)

    workload = make_workload(
        list(range(6)), [0, 1, 1, 3, 4, 5], [50, 40, 30, 20, 10, 5], [4, 2, 3, 1, 4, 2], None
    )
    listening = simulate(workload, Platform(4, 1, 1), Listening())
    assert heard == list(range(6))
    assert (
        listening.start.tolist()
        == simulate(workload, Platform(4, 1, 1), _recipe()()).start.tolist()
    )


def test_a_pass_hears_arrivals_only_where_the_scheduler_listens():
    workload = make_workload([0, 1], [0, 0], [10, 10], [1, 1], None)
    heard = {}
    for name, scheduler in (("easy", make_scheduler("easy")), ("recipe", _recipe()())):
        engine = Engine(workload, Platform(1, 1, 1), scheduler)
        scheduler.attach(engine.view)
        heard[name] = scheduling_pass_of(scheduler, engine.view).hears_arrivals
    assert heard == {"easy": False, "recipe": True}  # a kept order ranks each arrival
