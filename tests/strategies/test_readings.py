"""The choices 002 §5 leaves open, as options: lower anchor, search tie-break, EI clipping;
exploration counts."""

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cosched.cli import main
from cosched.errors import InputError
from cosched.strategies.acquisition import expected_improvement
from cosched.strategies.experiment import (
    READING,
    RESULT_COLUMNS,
    SPREAD,
    StrategyExperiment,
    run_experiment,
)
from cosched.strategies.interpolation import Bounds
from cosched.strategies.registry import make_strategy
from cosched.strategies.schedule import execute
from cosched.theory.generators import random_instance
from cosched.theory.instance import save_instance
from cosched.theory.lattice import popcount

WORK_RTOL = 1e-7
TIME_RTOL = 1e-9
SEARCH = ("ucb", "pi", "ei")


@st.composite
def search_runs(draw):
    n = draw(st.integers(2, 6))
    low = draw(st.floats(0.05, 0.85))
    instance = random_instance(n, alpha=(low, low + 0.1), seed=draw(st.integers(0, 2**31)))
    options = {
        "lower_anchor": draw(st.sampled_from(["n+1", "n"])),
        "search_tie_break": draw(st.sampled_from(["first", "random"])),
        "ei_unclipped": draw(st.booleans()),
        "quantum": draw(st.sampled_from([1.0, 10.0])),
    }
    return instance, draw(st.sampled_from(SEARCH)), options, draw(st.integers(0, 2**31))


@given(search_runs())
def test_every_reading_completes_the_work_and_counts_its_explorations(case):
    instance, name, options, seed = case
    strategy = make_strategy(name, **options)
    schedule = execute(instance, strategy, seed=seed)
    np.testing.assert_allclose(schedule.work_done(instance), instance.work, rtol=WORK_RTOL)
    # an exploration is the first run of a combination of two tasks or more (singletons are known)
    masks, first = np.unique(schedule.combinations, return_index=True)
    explored = first[popcount(masks) > 1]
    assert strategy.explored == explored.size
    assert np.isclose(strategy.exploration_time, schedule.durations[explored].sum(), rtol=TIME_RTOL)


@given(search_runs())
def test_random_tie_break_is_reproducible_with_the_seed(case):
    instance, name, options, seed = case
    options["search_tie_break"] = "random"
    runs = [execute(instance, make_strategy(name, **options), seed=seed) for _ in range(2)]
    np.testing.assert_array_equal(runs[0].combinations, runs[1].combinations)
    np.testing.assert_array_equal(runs[0].durations, runs[1].durations)


def test_random_tie_break_picks_among_the_equal_first_choices():
    # at the start every pair has the same estimate and σ: `first` takes the smallest bitmask,
    # random any pair
    instance = random_instance(5, alpha=(0.5, 0.6), seed=3)
    first = {
        int(execute(instance, make_strategy("ucb"), seed=s).combinations[0]) for s in range(12)
    }
    drawn = {
        int(
            execute(instance, make_strategy("ucb", search_tie_break="random"), seed=s).combinations[
                0
            ]
        )
        for s in range(12)
    }
    assert len(first) == 1
    assert len(drawn) > 1
    assert all(popcount(np.array(list(drawn))) == popcount(np.array(list(first)))[0])


@pytest.mark.parametrize("n", [2, 3, 6])
def test_lower_anchor_sets_the_size_of_the_lower_bound_zero(n):
    full = (1 << n) - 1
    above, at = Bounds(n, lower_anchor="n+1"), Bounds(n, lower_anchor="n")
    assert (above.estimate()[full] > 0).all()  # 1 at size 1 to 0 at size n + 1: 1/n at size n
    np.testing.assert_allclose(above.estimate()[full], 1.0 / n)
    # the full set is estimated at 0 until measured
    np.testing.assert_array_equal(at.estimate()[full], 0.0)
    if n > 2:
        pair = 0b11
        # 1 at size 1 to 0 at size n
        np.testing.assert_allclose(at.estimate()[pair][:2], (n - 2) / (n - 1))


@given(st.integers(2, 6), st.integers(0, 2**31), st.sampled_from(["paper", "tight"]))
def test_incremental_bounds_equal_the_lattice_transform_for_both_anchors(n, seed, rule):
    rng = np.random.default_rng(seed)
    instance = random_instance(n, alpha=(0.2, 0.9), seed=seed)
    for anchor in ("n+1", "n"):
        bounds = Bounds(n, rule, anchor)
        for mask in rng.permutation(instance.combinations)[: 1 + rng.integers(0, instance.m)]:
            bounds.add(int(mask), instance.column(int(mask)))
        rebuilt = Bounds(n, rule, anchor)
        rebuilt.measured, rebuilt.values = bounds.measured.copy(), bounds.values.copy()
        rebuilt.recompute()
        np.testing.assert_allclose(bounds.estimate(), rebuilt.estimate())


@given(st.lists(st.floats(0.0, 3.0), min_size=1, max_size=8), st.floats(0.0, 3.0))
def test_unclipped_ei_is_the_gap_at_zero_sigma_and_equal_elsewhere(means, incumbent):
    mean = np.asarray(means)
    sigma = np.zeros_like(mean)
    np.testing.assert_array_equal(
        expected_improvement(mean, sigma, incumbent, clip=False), mean - incumbent
    )
    assert (expected_improvement(mean, sigma, incumbent) >= 0).all()
    wide = np.full_like(mean, 0.3)
    np.testing.assert_array_equal(
        expected_improvement(mean, wide, incumbent, clip=False),
        expected_improvement(mean, wide, incumbent),
    )


@pytest.mark.parametrize("options", [{"lower_anchor": "n+2"}, {"search_tie_break": "last"}])
def test_unknown_readings_are_input_errors(options):
    with pytest.raises(InputError):
        make_strategy("ucb", **options)


def test_run_and_ratio_take_the_reading_options(tmp_path, capsys):
    path = str(save_instance(random_instance(5, alpha=(0.45, 0.55), seed=2), tmp_path / "i.json"))
    results = {}
    for flags in (
        [],
        ["--lower-anchor", "n"],
        ["--search-tie-break", "random"],
        ["--ei-unclipped"],
    ):
        assert main(["ratio", path, "--strategy", "ei", "--json", *flags]) == 0
        results[" ".join(flags)] = json.loads(capsys.readouterr().out)["ratio"]
    assert all(value >= 1 - 1e-9 for value in results.values())
    with pytest.raises(SystemExit) as exit_:
        main(["run", path, "--strategy", "ucb", "--lower-anchor", "x"])
    assert exit_.value.code == 2


def test_experiment_runs_every_reading_and_reports_the_spread(tmp_path):
    config = StrategyExperiment(
        n=4,
        instances=2,
        alpha_ranges=((0.4, 0.5),),
        ks=(0.9,),
        lower_anchors=("n+1", "n"),
        search_tie_breaks=("first", "random"),
        ei_unclipped=(False, True),
    )
    frame = run_experiment(config, tmp_path, workers=1, progress=False)
    assert list(frame.columns) == RESULT_COLUMNS
    assert len(frame) == config.instances * config.rows_per_cell == 2 * (2 + 4 + 4 + 8)
    search = frame[frame["strategy"].isin(SEARCH)]
    assert (search["explored"] >= 1).all() and (search["exploration_time"] > 0).all()
    assert (
        (frame.loc[~frame["strategy"].isin(SEARCH), ["explored", "exploration_time"]] == 0)
        .all()
        .all()
    )
    spread = pd.read_csv(tmp_path / SPREAD)
    assert set(spread["strategy"]) == set(SEARCH)
    assert dict(zip(spread["strategy"], spread["readings"])) == {"ucb": 4, "pi": 4, "ei": 8}
    assert (spread["spread"] >= 0).all()
    summary = pd.read_csv(tmp_path / "summary.csv")
    assert {"mean_explored", "mean_exploration_time", *READING} <= set(summary.columns)


def test_experiment_command_all_readings(tmp_path, capsys):
    out = tmp_path / "run"
    assert (
        main(
            [
                "experiment",
                "--preset",
                "small",
                "--instances",
                "1",
                "--n",
                "4",
                "--k",
                "0.9",
                "--strategy",
                "pi",
                "--all-readings",
                "--out",
                str(out),
                "--workers",
                "1",
                "--no-plots",
            ]
        )
        == 0
    )
    assert "spread" in capsys.readouterr().out
    assert (out / SPREAD).exists()
    assert (
        main(
            [
                "experiment",
                "--preset",
                "small",
                "--out",
                str(tmp_path / "bad"),
                "--lower-anchor",
                "n",
                "n",
            ]
        )
        == 2
    )
    assert not (tmp_path / "bad").exists()
