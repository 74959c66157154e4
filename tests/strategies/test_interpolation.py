"""Interpolation bounds (002 §5.1): bracketing, the selection rules, incremental = lattice
transform."""

import itertools

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from cosched.strategies.interpolation import Bounds, interpolate
from cosched.theory.generators import random_instance
from cosched.theory.lattice import popcount

TOLERANCE = 1e-12


@st.composite
def measured_runs(draw, max_n=6):
    """An instance, a bounds rule and the order in which some of its combinations get measured."""
    n = draw(st.integers(2, max_n))
    low = draw(st.floats(0.0, 0.95))
    instance = random_instance(
        n, alpha=(low, min(low + 0.1, 1.0)), seed=draw(st.integers(0, 2**31))
    )
    order = draw(st.permutations(range(1, 1 << n)))
    count = draw(st.integers(0, (1 << n) - 1))
    return (
        instance,
        draw(st.sampled_from(["paper", "tight"])),
        [int(mask) for mask in order[:count]],
    )


def measure(instance, rule, masks):
    bounds = Bounds(instance.n, rule)
    for mask in masks:
        if not bounds.measured[mask]:
            bounds.add(mask, instance.column(mask))
    return bounds


@given(measured_runs())
def test_bounds_always_bracket_the_hidden_speeds(case):
    instance, rule, masks = case
    bounds = measure(instance, rule, masks)
    columns = instance.combinations
    upper, lower, estimate = bounds.upper[columns], bounds.lower[columns], bounds.estimate(columns)
    member = bounds.member[columns]
    truth = instance.speeds.T
    assert (lower[member] <= truth[member] + TOLERANCE).all()
    assert (truth[member] <= upper[member] + TOLERANCE).all()
    assert (lower[member] <= estimate[member] + TOLERANCE).all()
    assert (estimate[member] <= upper[member] + TOLERANCE).all()
    assert (estimate[~member] == 0).all()
    measured = bounds.measured[columns]
    np.testing.assert_array_equal(estimate[measured], truth[measured])


@given(measured_runs())
def test_incremental_updates_equal_the_lattice_transform(case):
    instance, rule, masks = case
    bounds = measure(instance, rule, masks)
    incremental = [
        array.copy() for array in (bounds.upper, bounds.upper_size, bounds.lower, bounds.lower_size)
    ]
    bounds.recompute()
    for before, after in zip(
        incremental, (bounds.upper, bounds.upper_size, bounds.lower, bounds.lower_size)
    ):
        np.testing.assert_array_equal(before, after)


@given(measured_runs(), st.data())
def test_skipping_finished_tasks_keeps_the_bounds_of_live_combinations_exact(case, data):
    instance, rule, masks = case
    bounds, live = Bounds(instance.n, rule), (1 << instance.n) - 1
    for mask in masks:
        live &= ~data.draw(st.sampled_from([0, 0, 1 << data.draw(st.integers(0, instance.n - 1))]))
        if mask & ~live == 0 and not bounds.measured[mask]:
            bounds.add(mask, instance.column(mask), live=live)
    alive = (bounds.lattice & ~live) == 0
    incremental = [
        array[alive].copy()
        for array in (bounds.upper, bounds.upper_size, bounds.lower, bounds.lower_size)
    ]
    bounds.recompute()
    for before, after in zip(
        incremental, (bounds.upper, bounds.upper_size, bounds.lower, bounds.lower_size)
    ):
        np.testing.assert_array_equal(before, after[alive])


@given(measured_runs(max_n=4))
def test_bounds_follow_the_selection_rule_by_brute_force(case):
    instance, rule, masks = case
    bounds = measure(instance, rule, masks)
    n = instance.n
    known = {1 << i for i in range(n)} | set(masks)
    for j, i in itertools.product(range(1, 1 << n), range(n)):
        if not j >> i & 1:
            continue
        subsets = [
            (int(popcount(p)), float(instance.column(p)[i]))
            for p in known
            if p & j == p and p >> i & 1
        ]
        supersets = [(int(popcount(q)), float(instance.column(q)[i])) for q in known if q & j == j]
        supersets.append((n + 1, 0.0))
        if rule == "paper":  # largest subset / smallest superset, then the narrowest interval
            expected_upper = max(subsets, key=lambda pair: (pair[0], -pair[1]))
            expected_lower = min(supersets, key=lambda pair: (pair[0], -pair[1]))
        else:
            expected_upper = min(subsets, key=lambda pair: (pair[1], -pair[0]))
            expected_lower = max(supersets, key=lambda pair: (pair[1], -pair[0]))
        if j in known:  # a measured combination is its own bound
            expected_upper = expected_lower = (int(popcount(j)), float(instance.column(j)[i]))
        assert (bounds.upper_size[j, i], bounds.upper[j, i]) == expected_upper
        assert (bounds.lower_size[j, i], bounds.lower[j, i]) == expected_lower


@given(measured_runs())
def test_tight_bounds_are_never_wider_than_the_paper_rule(case):
    instance, _, masks = case
    paper, tight = measure(instance, "paper", masks), measure(instance, "tight", masks)
    member = paper.member
    assert (tight.upper[member] <= paper.upper[member]).all()
    assert (tight.lower[member] >= paper.lower[member]).all()


def test_interpolation_is_linear_in_the_combination_size():
    # S_p of size 2 at speed 0.8, S_q of size 6 at speed 0.4: size 3 -> 0.7, size 5 -> 0.5 (formula
    # (22))
    assert np.allclose(interpolate(0.8, 2, 0.4, 6, np.array([2, 3, 5, 6])), [0.8, 0.7, 0.5, 0.4])


def test_initial_bounds_know_only_the_singletons():
    bounds = Bounds(3)
    pair = 0b011
    assert bounds.measured.sum() == 3
    assert bounds.upper[pair, 0] == 1 and bounds.upper_size[pair, 0] == 1
    # virtual superset at size n + 1
    assert bounds.lower[pair, 0] == 0 and bounds.lower_size[pair, 0] == 4
    assert np.isclose(bounds.estimate()[pair, 0], 2 / 3)


def test_a_measured_combination_is_known_exactly_and_tightens_its_neighbours():
    instance = random_instance(4, alpha=(0.5, 0.6), seed=3)
    bounds = Bounds(4)
    bounds.add(0b0111, instance.column(0b0111))
    np.testing.assert_allclose(bounds.estimate([0b0111])[0], instance.column(0b0111))
    np.testing.assert_allclose(bounds.lower[0b0011, :2], instance.column(0b0111)[:2])
    assert bounds.upper[0b1111, 0] == instance.column(0b0111)[0]
