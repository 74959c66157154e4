"""The simulator's one binary search (`_search`, the typed loop of a compiled run) finds the
positions `bisect` finds: on ascending integers from any bound to any bound, before or after the
equals, and on the running jobs' (predicted end, job) pairs; the entry points agree with it. The
heap of completion events (`_push`, `_pop`) keeps the very list `heapq` keeps."""

import bisect
import heapq
import math

from hypothesis import given
from hypothesis import strategies as st

from cosched.simulator.bisection import (
    _pop,
    _push,
    _search,
    end_position,
    int_position,
    pop_due,
    push_event,
)

# few distinct ends, so that many pairs tie on the end and are ordered by job index
ENDS = st.sampled_from([0.0, 1.5, 2.0, 1e9, math.inf])
PAIRS = st.lists(st.tuples(ENDS, st.integers(0, 40)), unique=True, max_size=30)
# few distinct values, so that runs of equal integers are common (the waiting units)
INTEGERS = st.lists(st.integers(-5, 5), max_size=30)


@given(PAIRS, ENDS, st.integers(0, 40))
def test_the_search_of_pairs_is_bisect_left(pairs, predicted, job):
    by_end = sorted(pairs)
    expected = bisect.bisect_left(by_end, (predicted, job))
    assert _search(by_end, True, predicted, job, 0, len(by_end), False) == expected
    assert end_position(by_end, predicted, job) == expected


@given(PAIRS)
def test_every_pair_is_found_where_it_is(pairs):
    by_end = sorted(pairs)
    for position, (predicted, job) in enumerate(by_end):
        assert _search(by_end, True, predicted, job, 0, len(by_end), False) == position
        assert end_position(by_end, predicted, job) == position


@given(INTEGERS, st.integers(-6, 6), st.data(), st.booleans())
def test_the_search_of_integers_is_bisect_within_any_bounds(values, value, data, right):
    items = sorted(values)
    low = data.draw(st.integers(0, len(items)))
    high = data.draw(st.integers(low, len(items)))
    expected = (bisect.bisect_right if right else bisect.bisect_left)(items, value, low, high)
    assert _search(items, False, 0.0, value, low, high, right) == expected
    assert int_position(items, value, low, high, right) == expected


# (end, job, version) events with many ties on the end, and on the job (re-posted completions)
EVENTS = st.lists(st.tuples(ENDS, st.integers(0, 5), st.integers(0, 3)), max_size=40)


@given(EVENTS, st.lists(st.booleans(), max_size=60))
def test_the_heap_of_events_is_heapq(events, pops):
    ours, theirs = [], []
    for event, pop in zip(events, pops + [False] * len(events)):
        _push(ours, event)
        heapq.heappush(theirs, event)
        if pop and theirs:
            assert _pop(ours) == heapq.heappop(theirs)
        assert ours == theirs
    while theirs:
        due = pop_due(theirs, theirs[0][0])
        assert due is not None and _pop(ours) == due
    push_event(theirs, (1.0, 2, 3))
    assert theirs == [(1.0, 2, 3)] and pop_due(theirs, 0.5) is None
    assert pop_due(theirs, 1.0) == (1.0, 2, 3) and pop_due(theirs, 2.0) is None
