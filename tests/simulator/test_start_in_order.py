"""The one in-order step (`start_in_order`): on generated queues it starts the longest prefix of the
order whose jobs fit one after the other, returns the first that does not (the blocked head), reads
the order only up to that head, and never asks the allocator about a job the free units cannot
hold; over the live queue (`queue_heads`) it gives the same starts. A queue scheduler runs it the
same way whether its queue is in arrival order, kept in a fixed order or sorted every pass."""

from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cosched.simulator.schedulers.backfilling import fcfs_pass, queue_heads, start_in_order
from cosched.simulator.schedulers.base import QueueScheduler
from cosched.simulator.simulation import simulate

from .conftest import platforms_and_workloads


def _view(units: list[int], refused: set[int], free: int, with_table: bool) -> SimpleNamespace:
    """What `start_in_order` reads of a view: the free units, the units table (or none) and a
    start that fails when a job's units exceed the free ones or the allocator refuses it (as
    fragmented free nodes would); `asked` records, per start asked for, whether the job's units
    were within the free ones."""
    view = SimpleNamespace(
        waiting=dict.fromkeys(range(len(units))),
        free=free,
        started=[],
        asked=[],
        units_table=units if with_table else None,
    )
    view.free_units = lambda: view.free

    def start(job: int) -> bool:
        view.asked.append(units[job] <= view.free)
        if units[job] > view.free or job in refused:
            return False
        view.free -= units[job]
        del view.waiting[job]
        view.started.append(job)
        return True

    view.start = start
    return view


def _fitting_prefix(order: list[int], units: list[int], refused: set[int], free: int) -> int:
    """How many jobs of `order` start one after the other before one does not fit."""
    for index, job in enumerate(order):
        if units[job] > free or job in refused:
            return index
        free -= units[job]
    return len(order)


QUEUES = st.integers(0, 12).flatmap(
    lambda count: st.tuples(
        st.lists(st.integers(1, 4), min_size=count, max_size=count),  # units per job
        st.permutations(range(count)),  # the scheduler's order
        st.sets(st.integers(0, max(count - 1, 0))),  # jobs the allocator refuses
        st.integers(0, 12),  # free units
        st.booleans(),  # a units table or not
    )
)


@settings(max_examples=200, deadline=None)
@given(queue=QUEUES)
def test_starts_the_fitting_prefix_and_returns_the_head_read_no_further(queue):
    units, order, refused, free, with_table = queue
    view = _view(units, refused, free, with_table)
    jobs = iter(order)
    head = start_in_order(view, jobs)
    count = _fitting_prefix(order, units, refused, free)
    assert view.started == order[:count]
    assert head == (order[count] if count < len(order) else None)
    assert list(jobs) == order[count + 1 :]  # the candidates behind the head are left to read
    assert view.free == free - sum(units[job] for job in view.started)
    if with_table:  # the allocator is never asked about a job the free units cannot hold
        assert all(view.asked)
    else:  # the allocator alone decides, up to the head
        assert len(view.asked) == count + (head is not None)


@settings(max_examples=200, deadline=None)
@given(queue=QUEUES)
def test_over_the_live_queue_starts_the_same_jobs_as_over_its_copy(queue):
    units, _, refused, free, with_table = queue
    live, copied = (_view(units, refused, free, with_table) for _ in range(2))
    head = start_in_order(live, queue_heads(live.waiting))
    assert head == start_in_order(copied, list(copied.waiting))
    assert live.started == copied.started
    assert list(live.waiting) == list(copied.waiting)
    assert head is None or next(iter(live.waiting)) == head  # the head stays at the front


@settings(max_examples=50, deadline=None)
@given(queue=QUEUES)
def test_the_deprecated_fcfs_pass_warns_and_starts_the_fitting_prefix(queue):
    units, order, refused, free, with_table = queue
    old, new = (_view(units, refused, free, with_table) for _ in range(2))
    with pytest.warns(DeprecationWarning, match="start_in_order"):
        all_started = fcfs_pass(old, order)
    assert all_started == (start_in_order(new, order) is None)
    assert old.started == new.started


class _LowestIndexFirst(QueueScheduler):
    """Arrival order written as a priority (sorted every pass): job index, lowest first."""

    def priority(self, view, jobs):
        return -jobs


class _KeptLowestIndexFirst(_LowestIndexFirst):
    fixed_priority = True


@settings(max_examples=30, deadline=None)
@given(
    case=platforms_and_workloads(max_jobs=30),
    backfill=st.sampled_from(["none", "easy"]),
    record=st.booleans(),
)
def test_arrival_kept_and_sorted_queues_start_the_same_jobs(case, backfill, record):
    platform, workload = case
    schedulers = [
        scheduler(backfill=backfill, record_reservations=record)
        for scheduler in (QueueScheduler, _KeptLowestIndexFirst, _LowestIndexFirst)
    ]
    runs = [simulate(workload, platform, scheduler) for scheduler in schedulers]
    for scheduler, other in zip(schedulers[1:], runs[1:]):
        assert np.array_equal(runs[0].start, other.start)
        assert [nodes.tolist() for nodes in runs[0].nodes] == [
            nodes.tolist() for nodes in other.nodes
        ]
        assert scheduler.reservations == schedulers[0].reservations
