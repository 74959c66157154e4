"""A queue scheduler's pass runs compiled with its settings read once per run (`_RunPass`), yet a
subclass's override of a pass hook (`nothing_fits`, `decided`, `decides_the_same`,
`scheduling_pass`) is still the one called, and an override that calls the base's decides as the
base."""

from collections import Counter

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from cosched.simulator.platform import Platform
from cosched.simulator.schedulers.backfilling import queue_heads, start_in_order
from cosched.simulator.schedulers.easy import EASY
from cosched.simulator.schedulers.fcfs import FCFS
from cosched.simulator.simulation import simulate
from cosched.simulator.workload import make_workload

from .conftest import platforms_and_workloads


class _CountingEASY(EASY):
    """EASY whose pass hooks are overridden by ones calling the base's, counting their calls."""

    def __init__(self, **options) -> None:
        super().__init__(**options)
        self.calls: Counter[str] = Counter()

    def nothing_fits(self, engine) -> bool:
        self.calls["nothing_fits"] += 1
        return super().nothing_fits(engine)

    def decided(self, engine) -> bool:
        self.calls["decided"] += 1
        return super().decided(engine)

    def decides_the_same(self, waiting: int, idle_waiting: int) -> bool:
        self.calls["decides_the_same"] += 1
        return super().decides_the_same(waiting, idle_waiting)

    def scheduling_pass(self, engine) -> None:
        self.calls["scheduling_pass"] += 1
        super().scheduling_pass(engine)


class _InOrderOnly(EASY):
    """EASY's class with a pass that only starts in order: FCFS's decisions."""

    def scheduling_pass(self, engine) -> None:
        start_in_order(engine, queue_heads(engine.queue))


class _WaitsUntilTen(EASY):
    """Starts nothing before t = 10 s (its `nothing_fits` says so)."""

    def nothing_fits(self, engine) -> bool:
        return engine.now < 10 or super().nothing_fits(engine)


def _same(first, second) -> None:
    assert np.array_equal(first.start, second.start)
    assert [nodes.tolist() for nodes in first.nodes] == [nodes.tolist() for nodes in second.nodes]


@settings(max_examples=30, deadline=None)
@given(case=platforms_and_workloads(max_jobs=30), record=st.booleans())
def test_overridden_hooks_that_call_the_base_are_called_and_decide_as_the_base(case, record):
    platform, workload = case
    counting = _CountingEASY(record_reservations=record)
    _same(simulate(workload, platform, counting), simulate(workload, platform, EASY()))
    assert counting.calls["nothing_fits"] >= 1 and counting.calls["scheduling_pass"] >= 1


@settings(max_examples=30, deadline=None)
@given(case=platforms_and_workloads(max_jobs=30))
def test_an_overridden_scheduling_pass_replaces_the_base_one(case):
    platform, workload = case
    _same(simulate(workload, platform, _InOrderOnly()), simulate(workload, platform, FCFS()))


def test_an_overridden_nothing_fits_is_obeyed():
    # one core; two one-core jobs arriving at 0 and 10 s, running 5 s each
    workload = make_workload([0, 1], [0.0, 10.0], [5.0, 5.0], [1, 1], [5.0, 5.0])
    result = simulate(workload, Platform(1, 1, 1), _WaitsUntilTen())
    assert result.start.tolist() == [10.0, 15.0]
