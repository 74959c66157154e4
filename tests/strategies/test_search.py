"""Search strategies UCB / PI / EI (002 §5) through the one execution loop."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cosched.errors import InputError
from cosched.strategies.fcs import FCS
from cosched.strategies.registry import make_strategy
from cosched.strategies.schedule import StrategyError, execute
from cosched.strategies.search import EI, PI, UCB
from cosched.theory.generators import random_instance
from cosched.theory.lattice import all_combinations
from cosched.theory.opt import solve_opt
from cosched.theory.testing import instances

SEARCH = (UCB, PI, EI)
WORK_RTOL = 1e-7


@st.composite
def runs(draw, max_n=6):
    n = draw(st.integers(2, max_n))
    low = draw(st.floats(0.05, 0.85))
    instance = random_instance(n, alpha=(low, low + 0.1), seed=draw(st.integers(0, 2**31)))
    strategy = draw(st.sampled_from(SEARCH))(
        k=draw(st.floats(0.51, 0.999)),
        quantum=draw(st.sampled_from([1.0, 10.0, 50.0])),
        bounds=draw(st.sampled_from(["paper", "tight"])),
        incumbent=draw(st.sampled_from(["estimate", "measured"])),
    )
    return instance, strategy


def opt_makespan(instance):
    return solve_opt(instance).makespan


@given(runs(), instances(n=(2, 6), max_size=(1, 6)))
def test_every_search_strategy_completes_exactly_the_work(case, instance):
    _, strategy = case
    schedule = execute(instance, strategy)
    np.testing.assert_allclose(schedule.work_done(instance), instance.work, rtol=WORK_RTOL)
    assert schedule.strategy == strategy.name


@given(runs())
def test_opt_never_exceeds_a_search_strategy(case):
    instance, strategy = case
    assert opt_makespan(instance) <= execute(instance, strategy).makespan * (1 + 1e-9)


@given(runs(), st.data())
def test_with_all_combinations_measured_ucb_makes_fcs_choices(case, data):
    instance, _ = case
    strategy = UCB(k=data.draw(st.floats(0.51, 0.999)))
    strategy.start(instance, np.random.default_rng(0))
    for mask in all_combinations(instance.n):
        strategy.observe(int(mask), 1.0, instance.column(int(mask)), 0)
    unfinished = data.draw(st.integers(1, (1 << instance.n) - 1))
    fcs = FCS(tie_break="first")
    fcs.start(instance, np.random.default_rng(0))
    fastest = fcs.decide(unfinished).combination
    decision = strategy.decide(unfinished)
    assert decision.combination == fastest
    assert decision.limit == np.inf


class Blind:
    """An instance view without speeds or work: what a search strategy is allowed to see."""

    def __init__(self, instance):
        self.n, self.combinations = instance.n, instance.combinations


@pytest.mark.parametrize("strategy", SEARCH)
def test_search_reads_neither_speeds_nor_work(strategy):
    instance = random_instance(5, alpha=(0.4, 0.5), seed=2)
    search = strategy()
    search.start(Blind(instance), np.random.default_rng(0))
    unfinished = (1 << instance.n) - 1
    for _ in range(5):
        decision = search.decide(unfinished)
        search.observe(decision.combination, 1.0, instance.column(decision.combination), 0)


@pytest.mark.parametrize("strategy", SEARCH)
def test_unmeasured_combinations_run_one_quantum_measured_ones_until_completion(strategy):
    instance = random_instance(6, alpha=(0.7, 0.8), seed=5)
    schedule = execute(instance, strategy(quantum=3.0))
    seen = set()
    for mask, duration in zip(schedule.combinations.tolist(), schedule.durations.tolist()):
        if mask not in seen and bin(mask).count("1") > 1:
            assert duration <= 3.0 + 1e-12
        seen.add(mask)
    assert schedule.makespan >= opt_makespan(instance)


def test_strategies_are_deterministic():
    instance = random_instance(6, alpha=(0.3, 0.4), seed=9)
    for strategy in SEARCH:
        first, second = execute(instance, strategy(k=0.8)), execute(instance, strategy(k=0.8))
        np.testing.assert_array_equal(first.durations, second.durations)


def test_pi_with_the_estimate_incumbent_does_not_depend_on_k():
    instance = random_instance(7, alpha=(0.45, 0.55), seed=4)
    makespans = {round(execute(instance, PI(k=k)).makespan, 9) for k in (0.6, 0.7, 0.8, 0.9, 0.99)}
    assert len(makespans) == 1


def test_restricted_combination_sets_are_respected():
    instance = random_instance(5, alpha=(0.6, 0.7), seed=1).restrict(max_size=2)
    schedule = execute(instance, UCB())
    assert (np.isin(schedule.combinations, instance.combinations)).all()
    np.testing.assert_allclose(schedule.work_done(instance), instance.work, rtol=WORK_RTOL)


def test_registry_builds_search_strategies_from_cli_options():
    strategy = make_strategy("pi", k=0.7, quantum=5.0, bounds="tight", tie_break="first")
    assert (strategy.name, strategy.k, strategy.quantum, strategy.rule) == ("pi", 0.7, 5.0, "tight")


@pytest.mark.parametrize(
    "options, field",
    [
        ({"k": 0.5}, "k"),
        ({"k": 1.0}, "k"),
        ({"quantum": 0.0}, "quantum"),
        ({"bounds": "loose"}, "bounds"),
        ({"noise": -0.1}, "noise"),
        ({"incumbent": "best"}, "incumbent"),
    ],
)
def test_bad_options_raise_input_error_naming_the_field(options, field):
    with pytest.raises(InputError) as error:
        UCB(**options)
    assert error.value.field == field


def test_pi_with_the_measured_incumbent_runs_the_tasks_alone():
    # a+ = best measured speed: the best measured combination has PI = 1 (formula (27), σ_j = 0),
    # every unmeasured one Φ(z) < 1, so with a wide σ (small k) PI never explores: the makespan is
    # sum(b)
    instance = random_instance(6, alpha=(0.6, 0.7), seed=8)
    schedule = execute(instance, PI(k=0.6, incumbent="measured"))
    assert all(bin(mask).count("1") == 1 for mask in schedule.combinations.tolist())
    assert np.isclose(schedule.makespan, instance.work.sum())


def test_a_new_acquisition_is_a_small_subclass_usable_by_name():
    from cosched.strategies.registry import STRATEGIES, register_strategy
    from cosched.strategies.search import SearchStrategy

    class Greedy(SearchStrategy):
        name = "greedy-estimate"
        acquisition = staticmethod(lambda mean, sigma, incumbent: mean)

    register_strategy(Greedy.name, Greedy)
    try:
        instance = random_instance(5, alpha=(0.5, 0.6), seed=6)
        schedule = execute(instance, make_strategy(Greedy.name, k=0.9, quantum=4.0))
        np.testing.assert_allclose(schedule.work_done(instance), instance.work, rtol=WORK_RTOL)
    finally:
        STRATEGIES.pop(Greedy.name)


def test_a_task_left_without_any_combination_is_a_strategy_error():
    instance = random_instance(3, alpha=(0.5, 0.6), seed=1).restrict(combinations=[0b011, 0b100])
    with pytest.raises(StrategyError):
        execute(instance, UCB())
