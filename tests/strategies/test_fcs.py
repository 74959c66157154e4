"""FCS (002 §4.2): Theorem 1, Example 1, tie-breaks, and agreement with a brute-force argmax."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cosched.strategies.fcs import FCS
from cosched.strategies.registry import make_strategy
from cosched.strategies.schedule import Decision, StrategyError, execute
from cosched.theory.bounds import example1_ratio, fcs_bound
from cosched.theory.generators import random_instance, worst_case_instance
from cosched.theory.instance import Instance
from cosched.theory.opt import solve_opt
from cosched.theory.testing import instances

RATIO_SLACK = 1e-9  # relative slack on ratio comparisons (LP and float accumulation)


@settings(max_examples=150)
@given(instances(n=(1, 7), alpha=(0.0, 1.0)), st.sampled_from(["first", "last", "random"]))
def test_fcs_never_exceeds_theorem1_bound(instance, tie_break):
    ratio = execute(instance, FCS(tie_break), seed=0).makespan / solve_opt(instance).makespan
    assert ratio <= fcs_bound(instance) * (1 + RATIO_SLACK)


@settings(max_examples=80)
@given(instances(n=(1, 7), max_size=(1, 7)), st.sampled_from(["first", "last", "random"]))
def test_opt_never_exceeds_fcs_and_fcs_does_exactly_the_work(instance, tie_break):
    schedule = execute(instance, FCS(tie_break), seed=1)
    assert solve_opt(instance).makespan <= schedule.makespan * (1 + RATIO_SLACK)
    assert np.allclose(schedule.work_done(instance), instance.work, rtol=1e-9, atol=0)


@pytest.mark.parametrize("n", range(3, 13))
def test_example_1_with_last_tie_break_gives_2n_minus_3_over_n_minus_1(n):
    instance = worst_case_instance(n)
    schedule = execute(instance, FCS("last"))
    assert schedule.combinations.tolist() == [(1 << n) - 2, 1]  # {T2..Tn}, then T1 alone
    ratio = schedule.makespan / solve_opt(instance).makespan
    assert ratio == pytest.approx(example1_ratio(n), rel=1e-12)
    assert ratio == pytest.approx((2 * n - 3) / (n - 1), rel=1e-12)


@settings(max_examples=30)
@given(instances(n=(1, 6), max_size=(1, 6)), st.integers(0, 2**32 - 1))
def test_fcs_picks_a_fastest_combination_of_unfinished_tasks(instance, seed):
    unfinished = int(np.random.default_rng(seed).integers(1, 1 << instance.n))
    allowed = [
        j for j, mask in enumerate(instance.combinations.tolist()) if mask & ~unfinished == 0
    ]
    if not allowed:
        return
    speeds = instance.combination_speeds
    fastest = max(speeds[j] for j in allowed)
    ties = [
        int(instance.combinations[j])
        for j in allowed
        if speeds[j] >= fastest - 1e-12 * max(fastest, 1)
    ]
    for tie_break, expected in (("first", ties[0]), ("last", ties[-1])):
        strategy = FCS(tie_break)
        strategy.start(instance, np.random.default_rng(0))
        assert strategy.decide(unfinished) == Decision(expected)
    strategy = FCS("random")
    strategy.start(instance, np.random.default_rng(seed))
    assert strategy.decide(unfinished).combination in ties


def test_random_tie_break_is_reproducible_with_a_seed():
    instance = worst_case_instance(8)
    runs = [
        execute(instance, FCS("random"), seed=seed).combinations.tolist()
        for seed in (3, 3, 4, 5, 6)
    ]
    assert runs[0] == runs[1]
    assert len({tuple(run) for run in runs}) > 1


def test_unknown_tie_break_is_rejected():
    with pytest.raises(ValueError, match="tie-break"):
        FCS("middle")


def test_registry_builds_fcs_and_ignores_options_it_does_not_take():
    strategy = make_strategy("fcs", tie_break="last", k=0.9, quantum=10.0, bounds="paper")
    assert isinstance(strategy, FCS) and strategy.tie_break == "last"
    assert make_strategy("fcs", tie_break=None).tie_break == "first"


def test_fcs_at_n16_finishes_in_at_most_n_steps():
    instance = random_instance(16, seed=0)
    schedule = execute(instance, FCS())
    assert len(schedule.durations) <= 16
    assert schedule.is_feasible(instance)


def test_fcs_reports_when_no_combination_of_the_unfinished_tasks_exists():
    # only {T1, T2}: T2 is left alone with nothing to run
    instance = Instance([1.0, 3.0], [3], [[1.0], [1.0]])
    with pytest.raises(StrategyError, match=r"unfinished tasks \[1\]"):
        execute(instance, FCS())
