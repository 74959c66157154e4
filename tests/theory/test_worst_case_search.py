"""The public worst-case search of cosched.theory.testing: valid instances, honest ratios,
reproducible."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cosched.theory.instance import validate
from cosched.theory.opt import solve_opt
from cosched.theory.testing import (
    SEARCH_WORK_FLOOR,
    SPEED_FLOOR,
    instance_from_parameters,
    parameter_count,
    parametrised_instances,
    search_worst_case,
)

# the ratio is recomputed with the same LP: only the division may round differently
RATIO_RTOL = 1e-12
OPT_RTOL = 1e-9  # no schedule beats OPT (LP tolerance)
NESTED = settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.nested_given, HealthCheck.too_slow],
)


def tasks_alone(instance):
    """A toy strategy: every task alone, one after another (makespan = sum of the work)."""
    return float(instance.work.sum())


def slowest_pair_first(instance):
    """A toy strategy with a makespan that depends on the speeds: the speed matrix's weakest column,
    then alone."""
    j = int(np.argmin(instance.combination_speeds))
    speeds = instance.speeds[:, j]
    running = speeds > 0
    time = float(np.min(instance.work[running] / speeds[running]))
    return time + float((instance.work - speeds * time).clip(0).sum())


@st.composite
def points(draw):
    n = draw(st.integers(2, 5))
    alpha = draw(st.one_of(st.none(), st.tuples(st.floats(0, 1), st.floats(0, 1)).map(sorted)))
    free = draw(
        st.lists(
            st.floats(-0.5, 1.5),
            min_size=parameter_count(n, alpha),
            max_size=parameter_count(n, alpha),
        )
    )
    return n, alpha, np.asarray(free)


@given(points())
def test_every_point_of_the_cube_maps_to_a_valid_instance(point):
    n, alpha, theta = point
    # constraint (1), singletons 1, b > 0
    instance = validate(instance_from_parameters(theta, n, alpha))
    member = instance.speeds > 0
    assert instance.n == n and instance.is_complete
    assert (instance.speeds[member] >= SPEED_FLOOR).all() and (instance.speeds <= 1).all()
    assert (instance.work >= SEARCH_WORK_FLOOR).all() and (instance.work <= 1).all()
    np.testing.assert_array_equal(
        member.sum(), (instance.combinations[None, :] >> np.arange(n)[:, None] & 1).sum()
    )


@given(st.integers(2, 5).flatmap(lambda n: st.tuples(st.just(n), parametrised_instances(n))))
def test_the_search_draws_points_of_the_cube(case):
    n, theta = case
    assert theta.shape == (parameter_count(n),)
    assert ((theta >= 0) & (theta <= 1)).all()


@NESTED
@given(
    st.integers(2, 4),
    st.integers(0, 2**31),
    st.sampled_from([tasks_alone, slowest_pair_first]),
    st.sampled_from([None, (0.3, 0.7)]),
)
def test_search_returns_a_valid_instance_with_its_ratio_recomputed(n, seed, makespan, alpha):
    worst = search_worst_case(makespan, n, alpha=alpha, budget=10, refine=12, seed=seed)
    validate(worst.instance)
    opt = solve_opt(worst.instance).makespan
    assert worst.ratio == pytest.approx(makespan(worst.instance) / opt, rel=RATIO_RTOL)
    assert worst.ratio == pytest.approx(worst.makespan / worst.opt, rel=RATIO_RTOL)
    assert worst.ratio >= 1 - OPT_RTOL
    assert worst.ratio == worst.history.max() == worst.best_so_far[-1]
    assert 1 <= worst.searched <= 10 and worst.history.size <= 10 + 12
    again = instance_from_parameters(worst.parameters, n, alpha)
    np.testing.assert_array_equal(again.speeds, worst.instance.speeds)
    np.testing.assert_array_equal(again.work, worst.instance.work)


def test_search_is_reproducible_with_its_seed():
    runs = [search_worst_case(tasks_alone, 3, budget=15, refine=10, seed=5) for _ in range(2)]
    np.testing.assert_array_equal(runs[0].history, runs[1].history)
    assert runs[0].ratio == runs[1].ratio


def test_tasks_alone_worst_case_approaches_n():
    # running tasks one after another is at most n times OPT; the search gets close at n = 3
    worst = search_worst_case(tasks_alone, 3, budget=60, seed=0)
    assert 2.5 <= worst.ratio <= 3 + OPT_RTOL
