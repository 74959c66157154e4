"""Workload generation from an application seed (000 §3.1)."""

import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cosched.errors import InputError
from cosched.simulator.generate import (
    INTERARRIVALS,
    ApplicationSeed,
    generate_workload,
    interarrival_gaps,
    load_application_seed,
    write_workload_csv,
)
from cosched.simulator.workload import read_csv

SEED = ApplicationSeed(("bt", "cg", "ep"), [64, 128, 256], [100.0, 50.0, 20.0])


@given(st.sampled_from(INTERARRIVALS), st.integers(1, 200), st.integers(0, 2**31))
def test_jobs_are_seed_applications_with_their_cores_and_compact_times(kind, jobs, rng_seed):
    workload = generate_workload(SEED, jobs, interarrival=kind, rng_seed=rng_seed)
    assert len(workload) == jobs
    index = np.array([SEED.names.index(a) for a in workload.app])
    assert np.array_equal(workload.cores, SEED.procs[index])
    assert np.array_equal(workload.run, SEED.compact_times[index])
    assert np.array_equal(workload.estimate, workload.run)
    assert workload.submit[0] == 0 and (np.diff(workload.submit) >= 0).all()


@given(st.sampled_from(INTERARRIVALS), st.integers(0, 2**31))
def test_same_seed_gives_the_same_workload(kind, rng_seed):
    first = generate_workload(SEED, 50, interarrival=kind, rng_seed=rng_seed)
    second = generate_workload(SEED, 50, interarrival=kind, rng_seed=rng_seed)
    assert np.array_equal(first.submit, second.submit) and list(first.app) == list(second.app)


def test_batch_puts_every_job_at_time_zero():
    assert (generate_workload(SEED, 30, interarrival="batch").submit == 0).all()


@pytest.mark.parametrize("kind", ["constant", "poisson", "weibull"])
def test_interarrival_gaps_have_the_requested_mean(kind):
    gaps = interarrival_gaps(kind, 20000, np.random.default_rng(1), mean=30.0, shape=2.0)
    assert gaps.mean() == pytest.approx(30.0, rel=0.03) and (gaps >= 0).all()


def test_uniform_gaps_stay_in_range():
    gaps = interarrival_gaps("uniform", 1000, np.random.default_rng(1), low=5, high=7)
    assert gaps.min() >= 5 and gaps.max() <= 7


def test_frequencies_zero_weight_application_never_drawn():
    workload = generate_workload(SEED, 500, selection="frequencies", frequencies=[1, 0, 3])
    assert "cg" not in set(workload.app)
    share = np.mean(workload.app == "ep")
    assert 0.65 < share < 0.85


def test_list_selection_keeps_the_order():
    workload = generate_workload(
        SEED, selection="list", apps=["ep", "bt", "ep"], interarrival="constant", mean=10
    )
    assert list(workload.app) == ["ep", "bt", "ep"] and list(workload.submit) == [0, 10, 20]


@pytest.mark.parametrize(
    "kwargs, field",
    [
        (dict(jobs=0), "jobs"),
        (dict(jobs=5, selection="nope"), "selection"),
        (dict(jobs=5, selection="frequencies", frequencies=[1, 2]), "frequencies"),
        (dict(selection="list", apps=["zz"]), "apps"),
        (dict(jobs=5, interarrival="gamma"), "interarrival"),
        (dict(jobs=5, interarrival="poisson", mean=0), "mean"),
    ],
)
def test_bad_options_raise_input_error(kwargs, field):
    with pytest.raises(InputError) as error:
        generate_workload(SEED, **kwargs)
    assert error.value.field == field


def test_seed_json_and_csv_round_trip(tmp_path):
    path = tmp_path / "seed.json"
    path.write_text(json.dumps(SEED.to_json()))
    seed = load_application_seed(path)
    assert seed.names == SEED.names and np.array_equal(seed.procs, SEED.procs)
    workload = generate_workload(seed, 20, interarrival="poisson", rng_seed=3)
    back = read_csv(write_workload_csv(workload, tmp_path / "w.csv"))
    assert list(back.app) == list(workload.app) and np.allclose(back.submit, workload.submit)


def test_bad_seed_file_names_the_field(tmp_path):
    path = tmp_path / "seed.json"
    path.write_text(json.dumps({"applications": [{"name": "a", "procs": 4}]}))
    with pytest.raises(InputError, match="applications\\[0\\]"):
        load_application_seed(path)
