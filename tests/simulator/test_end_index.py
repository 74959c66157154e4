"""The engine's search of `by_end` (predicted end, job) pairs agrees with `bisect_left`."""

import bisect
import math

from hypothesis import given
from hypothesis import strategies as st

from cosched.simulator.engine import _end_index

# few distinct ends, so that many pairs tie on the end and are ordered by job index
ENDS = st.sampled_from([0.0, 1.5, 2.0, 1e9, math.inf])
PAIRS = st.lists(st.tuples(ENDS, st.integers(0, 40)), unique=True, max_size=30)


@given(PAIRS, ENDS, st.integers(0, 40))
def test_end_index_is_bisect_left_on_pairs(pairs, predicted, job):
    by_end = sorted(pairs)
    assert _end_index(by_end, predicted, job) == bisect.bisect_left(by_end, (predicted, job))


@given(PAIRS)
def test_every_pair_is_found_where_it_is(pairs):
    by_end = sorted(pairs)
    for position, (predicted, job) in enumerate(by_end):
        assert _end_index(by_end, predicted, job) == position
