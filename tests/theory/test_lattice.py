"""Bitmask helpers of the combination lattice."""

from itertools import combinations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cosched.theory.lattice import (
    all_combinations,
    combinations_of_size,
    combinations_up_to,
    is_downward_closed,
    mask_of,
    membership,
    popcount,
    tasks_of,
)


@pytest.mark.parametrize("n", [1, 2, 5, 9])
def test_combinations_of_size_lists_every_subset_of_that_size_ascending(n):
    for size in range(1, n + 1):
        expected = sorted(mask_of(c) for c in combinations(range(n), size))
        assert combinations_of_size(n, size).tolist() == expected


def test_combinations_of_size_reaches_the_top_bits_of_int64():
    assert combinations_of_size(62, 1)[-1] == 1 << 61
    assert combinations_of_size(62, 2)[-1] == (1 << 61) | (1 << 60)
    assert combinations_of_size(40, 3).size == 9880


@pytest.mark.parametrize("n, k", [(4, 1), (6, 3), (7, 7), (7, 9)])
def test_combinations_up_to_is_the_filtered_lattice(n, k):
    masks = all_combinations(n)
    assert np.array_equal(combinations_up_to(n, k), masks[popcount(masks) <= k])


@given(st.lists(st.integers(0, 61), unique=True, min_size=1, max_size=10))
def test_mask_and_task_list_round_trip(tasks):
    mask = mask_of(tasks)
    assert tasks_of(mask) == sorted(tasks)
    assert popcount(np.array([mask]))[0] == len(tasks)
    assert membership(np.array([mask]), 62)[:, 0].nonzero()[0].tolist() == sorted(tasks)


def test_downward_closed_detects_a_missing_subset():
    assert is_downward_closed(combinations_up_to(5, 3))
    assert not is_downward_closed(np.array([1, 2, 7]))
    assert is_downward_closed(np.array([1, 2, 3]))
