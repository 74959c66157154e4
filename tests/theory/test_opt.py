"""OPT by LP (002 §4.1): direct vs column generation, HiGHS vs PuLP, duals, infeasibility."""

import numpy as np
import pytest
from hypothesis import given, settings

from cosched.errors import InputError
from cosched.theory.generators import random_instance, worst_case_instance
from cosched.theory.instance import Instance
from cosched.theory.opt import InfeasibleError, solve_opt
from cosched.theory.testing import instances

# relative: colgen vs direct (the requirement), HiGHS vs PuLP after polishing
AGREEMENT = 1e-9


@settings(max_examples=80)
@given(instances(n=(1, 7), max_size=(1, 7)))
def test_column_generation_equals_direct_lp(instance):
    direct, colgen = solve_opt(instance, "direct"), solve_opt(instance, "colgen")
    assert colgen.makespan == pytest.approx(direct.makespan, rel=AGREEMENT)
    assert direct.method == "direct" and colgen.method == "colgen"


@settings(max_examples=15)
@given(instances(n=(1, 5)))
def test_highs_equals_pulp(instance):
    highs, pulp = solve_opt(instance, "direct", "highs"), solve_opt(instance, "direct", "pulp")
    assert pulp.makespan == pytest.approx(highs.makespan, rel=AGREEMENT)
    assert pulp.schedule.is_feasible(instance)
    assert pulp.solver == "pulp"


@settings(max_examples=30)
@given(instances(n=(1, 7), max_size=(1, 7)))
def test_opt_schedule_does_exactly_the_work(instance):
    result = solve_opt(instance)
    assert np.allclose(result.schedule.work_done(instance), instance.work, rtol=1e-9, atol=0)
    assert result.schedule.makespan == pytest.approx(result.makespan, rel=1e-12)
    assert (result.times >= 0).all() and result.times.shape == (instance.m,)


@settings(max_examples=30)
@given(instances(n=(1, 7)))
def test_duals_certify_optimality(instance):
    result = solve_opt(instance, "colgen")
    reduced = 1 - result.duals @ instance.speeds  # no column can lower the makespan
    assert reduced.min() >= -1e-8
    assert np.abs(reduced[result.times > 0]).max() <= 1e-8  # complementary slackness
    # strong duality
    assert result.duals @ instance.work == pytest.approx(result.makespan, rel=1e-9)


def test_opt_is_at_least_total_work_over_fastest_speed_and_at_most_sequential():
    instance = random_instance(8, seed=5)
    result = solve_opt(instance)
    assert (
        instance.work.sum() / instance.combination_speeds.max()
        <= result.makespan
        <= instance.work.sum()
    )


@pytest.mark.parametrize("n", [3, 6, 10])
def test_example_1_optimum_is_b1(n):
    assert solve_opt(worst_case_instance(n, b1=2.0)).makespan == pytest.approx(2.0, rel=1e-12)


def test_column_generation_at_n14_matches_direct():
    instance = random_instance(14, alpha=(0.5, 0.9), seed=11)
    direct, colgen = solve_opt(instance, "direct"), solve_opt(instance, "colgen")
    assert colgen.makespan == pytest.approx(direct.makespan, rel=AGREEMENT)
    assert colgen.iterations > 1 and colgen.solve_seconds > 0


def test_auto_picks_direct_for_small_and_colgen_for_large():
    assert solve_opt(random_instance(5, seed=0)).method == "direct"
    assert solve_opt(random_instance(12, seed=0)).method == "colgen"


def test_task_without_any_speed_is_named():
    instance = Instance(np.ones(3), [1, 2, 3], [[1, 0, 0.5], [0, 1, 0.5], [0, 0, 0]])
    with pytest.raises(InfeasibleError, match="T3") as caught:
        solve_opt(instance)
    assert caught.value.tasks == ["T3"]


@pytest.mark.parametrize("method", ["direct", "colgen"])
@pytest.mark.parametrize("backend", ["highs", "pulp"])
def test_restricted_set_that_cannot_finish_a_task_names_it(method, backend):
    # only {T1, T2} at speeds (1, 1) and {T1}: T2 needs 3 units of work but T1 only 1
    instance = Instance([1.0, 3.0], [1, 3], [[1.0, 1.0], [0.0, 1.0]])
    with pytest.raises(InfeasibleError, match="T2") as caught:
        solve_opt(instance, method, backend)
    assert caught.value.tasks == ["T2"]
    assert isinstance(caught.value, InputError)


def test_restricted_set_without_singletons_is_solved_by_column_generation():
    instance = Instance(
        [1.0, 1.0, 2.0], [3, 5, 6, 4], [[0.5, 0.5, 0, 0], [0.5, 0, 0.5, 0], [0, 0.5, 0.5, 1]]
    )
    direct, colgen = solve_opt(instance, "direct"), solve_opt(instance, "colgen")
    assert colgen.makespan == pytest.approx(direct.makespan, rel=AGREEMENT)
    assert direct.schedule.is_feasible(instance)


def test_unknown_method_or_backend_is_an_input_error():
    instance = random_instance(3, seed=0)
    with pytest.raises(InputError, match="method"):
        solve_opt(instance, method="simplex")
    with pytest.raises(InputError, match="backend"):
        solve_opt(instance, backend="gurobi")


def test_result_json_has_the_cli_shape():
    document = solve_opt(random_instance(4, seed=1)).to_json()
    assert set(document) == {"makespan", "schedule", "solver", "method", "solve_seconds"}
    assert all(set(step) == {"combination", "time"} for step in document["schedule"])


@pytest.mark.slow
@pytest.mark.parametrize("n", [16, 17])
def test_column_generation_matches_direct_at_paper_scale(n):
    instance = random_instance(n, alpha=(0.75, 0.85), seed=n)
    direct, colgen = solve_opt(instance, "direct"), solve_opt(instance, "colgen")
    assert colgen.makespan == pytest.approx(direct.makespan, rel=AGREEMENT)
