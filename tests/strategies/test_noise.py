"""Measurement noise and re-measurement (beyond 002 §5)."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cosched.errors import InputError
from cosched.strategies.noise import NoiseModel
from cosched.strategies.schedule import execute
from cosched.strategies.search import EI, PI, UCB
from cosched.theory.generators import random_instance


@pytest.mark.parametrize("model", ["lognormal", "normal"])
def test_noise_factors_have_mean_one_and_the_requested_relative_sigma(model):
    factors = NoiseModel(0.1, model).factors(200_000, np.random.default_rng(0))
    assert abs(factors.mean() - 1) < 2e-3
    assert abs(factors.std() - 0.1) < 2e-3
    assert (factors >= 0).all()


def test_zero_noise_is_the_exact_measurement_of_the_paper():
    instance = random_instance(5, alpha=(0.4, 0.5), seed=1)
    exact = execute(instance, UCB(), seed=3)
    noisy = execute(instance, UCB(), seed=3, measure=NoiseModel(0.0))
    np.testing.assert_array_equal(exact.durations, noisy.durations)


@given(
    st.integers(2, 6),
    st.floats(0.0, 0.3),
    st.sampled_from(["lognormal", "normal"]),
    st.booleans(),
    st.sampled_from([UCB, PI, EI]),
    st.integers(0, 1000),
)
def test_noisy_runs_still_complete_exactly_the_work(n, sigma, model, remeasure, strategy, seed):
    instance = random_instance(n, alpha=(0.3, 0.6), seed=seed)
    search = strategy(noise=sigma, remeasure=remeasure, quantum=5.0)
    schedule = execute(instance, search, seed=seed, measure=NoiseModel(sigma, model))
    np.testing.assert_allclose(schedule.work_done(instance), instance.work, rtol=1e-7)


def test_noise_is_reproducible_with_the_run_seed():
    instance = random_instance(6, alpha=(0.4, 0.5), seed=2)
    noise = NoiseModel(0.2)
    runs = [
        execute(instance, PI(noise=0.2, remeasure=True), seed=11, measure=noise) for _ in range(2)
    ]
    np.testing.assert_array_equal(runs[0].durations, runs[1].durations)


def test_remeasurement_runs_measured_combinations_one_quantum_at_a_time():
    instance = random_instance(5, alpha=(0.6, 0.7), seed=4)
    schedule = execute(
        instance, UCB(noise=0.1, remeasure=True, quantum=2.0), seed=0, measure=NoiseModel(0.1)
    )
    multi = np.array([bin(mask).count("1") > 1 for mask in schedule.combinations.tolist()])
    assert (schedule.durations[multi] <= 2.0 + 1e-12).all()


@pytest.mark.parametrize(
    "sigma, model", [(-0.1, "normal"), (np.nan, "lognormal"), (0.1, "uniform")]
)
def test_bad_noise_settings_raise_input_error(sigma, model):
    with pytest.raises(InputError):
        NoiseModel(sigma, model)
