"""The experiment grid of 002 §8: tidy rows, incremental CSV, resume, local processes and Dask,
plots, CLI."""

import dataclasses
import json

import numpy as np
import pandas as pd
import pytest

import cosched.grid as grid
import cosched.strategies.experiment as experiment
from cosched.cli import main
from cosched.errors import InputError
from cosched.strategies.experiment import (
    RESULT_COLUMNS,
    StrategyExperiment,
    load_results,
    run_experiment,
)
from cosched.strategies.plots import fig7_table, plot_fig6, plot_fig7
from cosched.theory.generators import random_instance
from cosched.theory.instance import save_instance

TINY = StrategyExperiment(
    n=4, instances=2, alpha_ranges=((0.3, 0.4), (0.7, 0.8)), ks=(0.6, 0.9), quantum=5.0
)
PNG = b"\x89PNG"


def ordered(frame):
    return frame.sort_values(["alpha_index", "instance", "strategy", "k"]).reset_index(drop=True)


@pytest.fixture(scope="module")
def tiny_results(tmp_path_factory):
    return run_experiment(TINY, tmp_path_factory.mktemp("tiny"), workers=1, progress=False)


def test_grid_has_one_tidy_row_per_run_and_no_strategy_beats_opt(tiny_results):
    frame = tiny_results
    assert list(frame.columns) == RESULT_COLUMNS
    assert len(frame) == len(TINY.cells()) * TINY.rows_per_cell
    assert (frame["ratio"] >= 1 - 1e-9).all()
    assert (frame.loc[frame["strategy"] == "opt", "ratio"] == 1).all()
    np.testing.assert_allclose(frame["ratio"], frame["makespan"] / frame["opt"])


def test_killed_run_resumes_to_the_same_results(tmp_path, tiny_results, monkeypatch):
    out = tmp_path / "run"
    run_experiment(TINY, out, workers=1, progress=False)
    lines = (out / "results.csv").read_text().splitlines(keepends=True)
    cut = 1 + 2 * TINY.rows_per_cell + 3  # two whole cells, three rows of the third and half a line
    (out / "results.csv").write_text("".join(lines[:cut]) + lines[cut][:17])
    calls = []
    original = experiment.run_cell
    monkeypatch.setattr(
        experiment, "run_cell", lambda *args: calls.append(args[1:]) or original(*args)
    )
    resumed = run_experiment(TINY, out, workers=1, progress=False)
    assert len(calls) == len(TINY.cells()) - 2
    pd.testing.assert_frame_equal(ordered(resumed), ordered(tiny_results))


def test_a_folder_holding_another_grid_is_refused(tmp_path):
    run_experiment(dataclasses.replace(TINY, instances=1), tmp_path, workers=1, progress=False)
    with pytest.raises(InputError):
        run_experiment(TINY, tmp_path, workers=1, progress=False)


def test_an_output_path_that_is_a_file_is_refused(tmp_path):
    (tmp_path / "file").write_text("")
    with pytest.raises(InputError):
        run_experiment(TINY, tmp_path / "file", workers=1, progress=False)


def test_local_processes_give_the_same_rows(tmp_path, tiny_results):
    frame = run_experiment(TINY, tmp_path, workers=2, progress=False)
    pd.testing.assert_frame_equal(ordered(frame), ordered(tiny_results))


def test_dask_local_cluster_gives_the_same_rows(tmp_path, tiny_results):
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(
            n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        frame = run_experiment(TINY, tmp_path, dask=client, progress=False)
    pd.testing.assert_frame_equal(ordered(frame), ordered(tiny_results))


def test_unreachable_dask_scheduler_is_an_input_error_leaving_no_folder(tmp_path, monkeypatch):
    monkeypatch.setattr(grid, "DASK_CONNECT_TIMEOUT", "1s")
    with pytest.raises(InputError):
        run_experiment(TINY, tmp_path / "out", dask="tcp://127.0.0.1:9", progress=False)
    assert not (tmp_path / "out").exists()


def test_config_round_trips_through_json():
    assert StrategyExperiment.from_json(json.loads(json.dumps(TINY.to_json()))) == TINY


@pytest.mark.parametrize(
    "options",
    [
        {"n": 1},
        {"instances": 0},
        {"ks": (0.5,)},
        {"acquisitions": ("xyz",)},
        {"alpha_ranges": ((0.6, 0.4),)},
    ],
)
def test_bad_grid_settings_raise_input_error(options):
    with pytest.raises(InputError):
        dataclasses.replace(TINY, **options)


def test_fig7_keeps_the_lowest_mean_ratio_over_k(tiny_results):
    best = fig7_table(tiny_results)
    means = tiny_results.groupby(["alpha_lo", "strategy", "k"], dropna=False)["ratio"].mean()
    for row in best.itertuples():
        assert np.isclose(row.mean_ratio, means.loc[(row.alpha_lo, row.strategy)].min())
    assert set(best["strategy"]) == {"fcs", "ucb", "pi", "ei"}


def test_figures_are_written_as_png(tmp_path, tiny_results):
    for plot, name in ((plot_fig6, "fig6.png"), (plot_fig7, "fig7.png")):
        path = plot(tiny_results, tmp_path / name)
        assert path.read_bytes()[:4] == PNG


def test_experiment_command_writes_results_summary_and_figures(tmp_path, capsys):
    out = tmp_path / "grid"
    code = main(
        [
            "experiment",
            "--preset",
            "small",
            "--out",
            str(out),
            "--instances",
            "1",
            "--n",
            "4",
            "--k",
            "0.8",
            "--workers",
            "1",
            "--plots",
        ]
    )
    assert code == 0
    for name in (
        "results.csv",
        "results.parquet",
        "summary.csv",
        "plots/fig6.png",
        "plots/fig7.png",
        "config.json",
    ):
        assert (out / name).exists()
    assert len(load_results(out)) == 9 * 5
    assert "fcs" in capsys.readouterr().out


def test_experiment_command_rejects_bad_k_without_creating_output(tmp_path):
    assert main(["experiment", "--out", str(tmp_path / "never"), "--k", "1.5"]) == 2
    assert not (tmp_path / "never").exists()


@pytest.fixture
def instance_file(tmp_path):
    return str(
        save_instance(random_instance(5, alpha=(0.5, 0.6), seed=7), tmp_path / "instance.json")
    )


@pytest.mark.parametrize("strategy", ["ucb", "pi", "ei"])
def test_run_and_ratio_accept_the_search_options(instance_file, capsys, strategy):
    assert (
        main(
            [
                "run",
                instance_file,
                "--strategy",
                strategy,
                "--k",
                "0.9",
                "--quantum",
                "5",
                "--bounds",
                "tight",
                "--json",
            ]
        )
        == 0
    )
    run = json.loads(capsys.readouterr().out)
    assert run["strategy"] == strategy
    assert np.isclose(sum(step["time"] for step in run["schedule"]), run["makespan"])
    assert (
        main(
            [
                "ratio",
                instance_file,
                "--strategy",
                strategy,
                "--k",
                "0.9",
                "--quantum",
                "5",
                "--incumbent",
                "measured",
                "--json",
            ]
        )
        == 0
    )
    ratio = json.loads(capsys.readouterr().out)
    assert ratio["ratio"] >= 1 - 1e-9


def test_noise_options_reach_the_run(instance_file, capsys):
    args = [
        "run",
        instance_file,
        "--strategy",
        "ucb",
        "--noise-sigma",
        "0.2",
        "--remeasure",
        "--seed",
        "3",
        "--json",
    ]
    assert main(args) == 0
    first = capsys.readouterr().out
    assert main(args) == 0
    assert capsys.readouterr().out == first
    assert main(["run", instance_file, "--strategy", "ucb", "--noise-sigma", "-1"]) == 2
