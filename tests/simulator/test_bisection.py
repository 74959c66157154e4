"""The simulator's one binary search (`_search`, the typed loop of a compiled run) finds the
positions `bisect` finds: on ascending integers from any bound to any bound, before or after the
equals; the entry point agrees with it. The heap of completion events (`Completions`, its typed
buffers sifted by `_push` and `_pop`) takes the events off in the order `heapq` does. The running
jobs by predicted end (`EndOrder`, its typed buffers searched and shifted) keep the (predicted end,
job) pairs in the order ``insort`` does, through additions, removals and moves. The engine's
touched jobs (`TouchedJobs`) are recorded once each, and those in a state come out ascending, as
``sorted(set(...))`` gives them, leaving nothing recorded."""

import bisect
import heapq
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cosched._compiled import compiled_modules
from cosched.simulator.bisection import (
    Completions,
    EndOrder,
    TouchedJobs,
    _search,
    int_position,
)

# few distinct ends, so that many pairs tie on the end and are ordered by job index
ENDS = st.sampled_from([0.0, 1.5, 2.0, 1e9, math.inf])
PAIRS = st.lists(st.tuples(ENDS, st.integers(0, 40)), unique=True, max_size=30)
# few distinct values, so that runs of equal integers are common (the waiting units)
INTEGERS = st.lists(st.integers(-5, 5), max_size=30)


@given(PAIRS, st.lists(st.tuples(st.booleans(), ENDS), max_size=100))
def test_the_running_jobs_by_end_are_kept_as_insort_keeps_them(pairs, changes):
    ours, theirs = EndOrder(), []
    for (predicted, job), (removed, moved_to) in zip(pairs * 3, changes):
        if (predicted, job) in theirs:  # a running job: it ends, or its predicted end moves
            theirs.remove((predicted, job))
            if removed:
                ours.remove(predicted, job)
            else:
                ours.move(job, predicted, moved_to)
                bisect.insort(theirs, (moved_to, job))
        elif all(job != other for _, other in theirs):  # a job runs once
            ours.add(predicted, job)
            bisect.insort(theirs, (predicted, job))
        assert list(ours) == theirs == ours
        assert len(ours) == len(theirs)
        assert [ours[position] for position in range(len(ours))] == theirs
        assert [ours[-1 - position] for position in range(len(ours))] == theirs[::-1]
    assert EndOrder(theirs) == theirs
    with pytest.raises(IndexError):
        ours[len(ours)]  # a position past the running jobs is refused, compiled or not


@given(
    st.lists(st.lists(st.integers(0, 11), max_size=30), max_size=4),
    st.lists(st.integers(0, 2), min_size=12),
)
def test_the_touched_jobs_are_recorded_once_and_read_ascending_in_a_state(batches, states):
    """Batches of jobs recorded between reads, against a brute-force model: the distinct jobs in
    the order they first came, then the ones in state 1, ascending."""
    touched = TouchedJobs(len(states))
    for batch in batches:
        for job in batch:
            touched.add(job)
        assert touched.first(touched.count) == list(dict.fromkeys(batch))
        count = touched.ascending_in_state(states, 1)
        assert touched.first(count) == sorted({job for job in batch if states[job] == 1})
        assert touched.count == 0


@given(INTEGERS, st.integers(-6, 6), st.data(), st.booleans())
def test_the_search_of_integers_is_bisect_within_any_bounds(values, value, data, right):
    items = sorted(values)
    low = data.draw(st.integers(0, len(items)))
    high = data.draw(st.integers(low, len(items)))
    expected = (bisect.bisect_right if right else bisect.bisect_left)(items, value, low, high)
    assert _search(items, value, low, high, right) == expected
    assert int_position(items, value, low, high, right) == expected


# (end, job, version) events with many ties on the end, and on the job (re-posted completions)
EVENTS = st.lists(st.tuples(ENDS, st.integers(0, 5), st.integers(0, 3)), unique=True, max_size=80)


def _heap_of(completions):
    return sorted(zip(completions.ends[: completions.size], completions.jobs, completions.versions))


@pytest.mark.skipif(
    compiled_modules()["cosched.simulator.bisection"],
    reason="reads the heap's fields and private steps, C-level only when compiled",
)
@given(EVENTS, st.lists(st.booleans(), max_size=100))
def test_the_typed_heap_of_events_is_heapq(events, pops):
    ours, theirs = Completions(), []
    for event, pop in zip(events, pops + [False] * len(events)):
        ours._push(*event)
        heapq.heappush(theirs, event)
        if pop and theirs:
            expected = heapq.heappop(theirs)
            assert (ours.ends[0], ours.jobs[0], ours.versions[0]) == expected
            ours._pop()
        assert _heap_of(ours) == sorted(theirs) and ours.size == len(theirs)
    while theirs:
        assert (ours.ends[0], ours.jobs[0], ours.versions[0]) == heapq.heappop(theirs)
        ours._pop()
    assert ours.size == 0


def test_pop_due_drops_stale_events_and_waits_for_their_end():
    completions = Completions()
    for end, job, version in [(2.0, 1, 0), (1.0, 2, 0), (1.0, 2, 1), (1.0, 0, 0), (3.0, 0, 1)]:
        completions.push(end, job, version)
    current = [0, 0, 1]
    assert len(completions) == 5 and completions.earliest() == 1.0
    assert completions.pop_due(0.5, current) == -1
    assert completions.pop_due(1.0, current) == 0  # (1.0, 0, 0) first: ends, then jobs
    assert completions.pop_due(1.0, current) == 2  # (1.0, 2, 0) is stale
    assert completions.pop_due(1.0, current) == -1 and completions.earliest() == 2.0
    assert completions.pop_due(5.0, current) == 1
    assert completions.pop_due(5.0, current) == -1  # (3.0, 0, 1): job 0 is at version 0
    assert len(completions) == 0 and completions.earliest() == math.inf
