"""Acquisition functions (002 §5.2, formulas (25)-(29)): ranges, σ = 0 cases,
σ from the interval.
"""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.stats import norm

from cosched.strategies.acquisition import (
    check_k,
    combination_moments,
    expected_improvement,
    probability_of_improvement,
    task_sigma,
    upper_confidence_bound,
)

speeds = st.floats(0, 10, allow_nan=False)
means = arrays(float, st.integers(1, 20), elements=speeds)


@given(means, st.data(), speeds)
def test_pi_lies_in_unit_interval_and_ei_is_never_negative(mean, data, incumbent):
    sigma = data.draw(arrays(float, mean.shape, elements=st.one_of(st.just(0.0), st.floats(0, 3))))
    pi = probability_of_improvement(mean, sigma, incumbent)
    ei = expected_improvement(mean, sigma, incumbent)
    assert ((pi >= 0) & (pi <= 1)).all()
    assert (ei >= 0).all()
    assert (upper_confidence_bound(mean, sigma) >= mean).all()


@given(st.floats(0, 5), st.floats(0, 5), st.floats(1e-3, 2))
def test_formulas_match_the_normal_distribution(mean, incumbent, sigma):
    z = (mean - incumbent) / sigma
    assert np.isclose(probability_of_improvement([mean], [sigma], incumbent)[0], norm.cdf(z))
    expected = (mean - incumbent) * norm.cdf(z) + sigma * norm.pdf(z)
    assert np.isclose(
        expected_improvement([mean], [sigma], incumbent)[0], max(expected, 0), atol=1e-12
    )
    assert upper_confidence_bound([mean], [sigma])[0] == mean + sigma


def test_zero_sigma_cases_follow_formulas_27_and_28():
    mean, sigma = np.array([1.0, 2.0, 3.0]), np.zeros(3)
    assert probability_of_improvement(mean, sigma, 2.0).tolist() == [0.0, 1.0, 1.0]
    assert expected_improvement(mean, sigma, 2.0).tolist() == [0.0, 0.0, 1.0]


def test_sigma_is_the_narrower_half_interval_over_the_k_quantile():
    sigma = task_sigma(np.array([1.0, 0.9]), np.array([0.7, 0.5]), np.array([0.6, 0.5]), k=0.9)
    np.testing.assert_allclose(sigma, np.array([0.1, 0.0]) / norm.ppf(0.9))


def test_larger_k_gives_smaller_sigma():
    upper, estimate, lower = np.array([1.0]), np.array([0.5]), np.array([0.0])
    assert task_sigma(upper, estimate, lower, 0.99) < task_sigma(upper, estimate, lower, 0.6)


@pytest.mark.parametrize("k", [0.5, 1.0, 0.2, 1.5])
def test_k_outside_the_open_interval_is_rejected(k):
    with pytest.raises(ValueError):
        check_k(k)


def test_combination_moments_sum_means_and_variances_over_member_tasks():
    estimate = np.array([[0.5, 0.3], [0.4, 0.0]])
    sigma = np.array([[0.3, 0.4], [0.1, 0.0]])
    mean, spread = combination_moments(estimate, sigma)
    np.testing.assert_allclose(mean, [0.8, 0.4])
    np.testing.assert_allclose(spread, [0.5, 0.1])
