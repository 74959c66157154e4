"""The random generator of 002 §8 and the worst case of 002 Example 1."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cosched.errors import InputError
from cosched.theory.generators import random_instance, worst_case_instance
from cosched.theory.instance import validate
from cosched.theory.lattice import popcount
from cosched.theory.testing import instances


def test_same_seed_gives_the_same_instance_and_another_seed_does_not():
    a, b, c = random_instance(6, seed=7), random_instance(6, seed=7), random_instance(6, seed=8)
    assert np.array_equal(a.speeds, b.speeds) and np.array_equal(a.work, b.work)
    assert not np.array_equal(a.speeds, c.speeds)


@settings(max_examples=30)
@given(instances(n=(1, 7), alpha=(0.0, 1.0)))
def test_generated_instances_satisfy_every_constraint_of_section_3(instance):
    validate(instance)
    assert ((instance.work >= 100) & (instance.work <= 200)).all()


@settings(max_examples=30)
@given(st.integers(2, 7), st.floats(0, 1), st.floats(0, 1), st.integers(0, 2**32 - 1))
def test_each_speed_is_its_cap_times_a_factor_in_alpha_range(n, lo, hi, seed):
    lo, hi = min(lo, hi), max(lo, hi)
    instance = random_instance(n, alpha=(lo, hi), seed=seed)
    for j, mask in enumerate(instance.combinations.tolist()):
        members = [i for i in range(n) if mask >> i & 1]
        for i in members:
            caps = [instance.column(mask ^ (1 << k))[i] for k in members if k != i]
            if not caps:
                assert instance.speeds[i, j] == 1.0
                continue
            factor = instance.speeds[i, j] / min(caps)
            assert lo - 1e-12 <= factor <= 1 + 1e-12


@pytest.mark.parametrize("n, k", [(5, 1), (6, 3), (7, 6)])
def test_restricted_generation_equals_restricting_the_full_instance(n, k):
    full, small = random_instance(n, seed=3), random_instance(n, seed=3, max_size=k)
    restricted = full.restrict(max_size=k)
    assert np.array_equal(small.combinations, restricted.combinations)
    assert np.allclose(small.speeds, restricted.speeds, rtol=0, atol=0)
    assert popcount(small.combinations).max() == k


def test_large_n_with_small_combinations_needs_no_full_lattice():
    instance = random_instance(40, seed=0, max_size=2)
    assert instance.m == 40 + 40 * 39 // 2
    validate(instance)


def test_n20_complete_instance_is_generated():
    instance = random_instance(20, seed=0)
    assert instance.is_complete and instance.speeds.shape == (20, (1 << 20) - 1)


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(n=0),
        dict(n=3, alpha=(0.9, 0.1)),
        dict(n=3, alpha=(-0.1, 0.5)),
        dict(n=3, work=(0, 5)),
        dict(n=3, max_size=0),
        dict(n=40),
    ],
)
def test_bad_generator_parameters_are_input_errors(kwargs):
    with pytest.raises(InputError):
        random_instance(**kwargs)


@pytest.mark.parametrize("n", [3, 4, 7])
def test_worst_case_matches_example_1(n):
    instance = worst_case_instance(n, b1=3.0)
    validate(instance)
    sizes = popcount(instance.combinations)
    assert np.array_equal(instance.combination_speeds, np.where(sizes < n, sizes, 0))
    assert instance.combination_speeds.max() == n - 1  # a* = n - 1
    assert instance.work[0] == 3.0 and np.allclose(instance.work[1:], (n - 2) / (n - 1) * 3.0)
    with pytest.raises(InputError):
        worst_case_instance(2)
