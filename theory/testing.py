"""Public hypothesis strategies for valid instances, so users can property-test their own strategies.

    from hypothesis import given
    from cosched.theory.testing import instances

    @given(instances(n=(2, 6), alpha=(0.3, 1.0)))
    def test_my_strategy_finishes_the_work(instance): ...
"""
from __future__ import annotations

from hypothesis import strategies as st

from cosched.theory.generators import random_instance

__all__ = ["instances", "alpha_ranges"]


def _range(value) -> tuple:
    return (value, value) if isinstance(value, (int, float)) else tuple(value)


def alpha_ranges(alpha=(0.0, 1.0)) -> st.SearchStrategy:
    """(lo, hi) sub-ranges of `alpha` for the per-task slope alpha_i of 002 §8."""
    lo, hi = _range(alpha)
    bounds = st.floats(min_value=lo, max_value=hi, allow_nan=False)
    return st.tuples(bounds, bounds).map(sorted).map(tuple)


@st.composite
def instances(draw, n=(2, 6), alpha=(0.0, 1.0), max_size=None, work=(100.0, 200.0)):
    """Valid monotone instances from the 002 §8 generator: n tasks (an int or a (lo, hi) range), per-task
    alpha drawn from a sub-range of `alpha`, optionally restricted to combinations of at most `max_size` tasks
    (an int, a (lo, hi) range, or None for all 2^n - 1 combinations)."""
    n_lo, n_hi = _range(n)
    tasks = draw(st.integers(min_value=n_lo, max_value=n_hi))
    size = None
    if max_size is not None:
        size_lo, size_hi = _range(max_size)
        size = draw(st.integers(min_value=min(size_lo, tasks), max_value=min(size_hi, tasks)))
    seed = draw(st.integers(min_value=0, max_value=2**32 - 1))
    return random_instance(tasks, alpha=draw(alpha_ranges(alpha)), seed=seed, work=work, max_size=size)
