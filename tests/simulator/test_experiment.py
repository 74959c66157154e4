"""experiment-sim (003 ch. 6): grid, resumption, tables, plots, Pareto front, local and dask
execution."""

import argparse
import json
import shutil
import threading

import numpy as np
import pandas as pd
import pytest

import cosched.simulator.experiment as experiment
from cosched.errors import InputError
from cosched.simulator import co_cli
from cosched.simulator.data import EXAMPLE_HEATMAP, example_path
from cosched.simulator.experiment import experiment_workload, preset_spec, run_cell, run_experiment
from cosched.simulator.experiment_plots import pareto_front
from cosched.simulator.schedulers import COSCHEDULERS
from cosched.theory.heatmap import read_heatmap

SMALL = dict(jobs=40, experiments=2, schedulers=["easy", "easy-co", "filler"])


def small_spec(**overrides):
    return preset_spec("example-small", **{**SMALL, **overrides})


def test_grid_writes_one_row_per_run_with_conservative_baseline(tmp_path):
    summary = run_experiment(small_spec(), tmp_path, workers=1, progress=False, plots=False)
    runs = pd.read_csv(tmp_path / "runs.csv")
    assert len(runs) == 2 * 4 and set(runs["scheduler"]) == {
        "easy",
        "easy-co",
        "filler",
        "conservative",
    }
    assert np.allclose(runs.loc[runs["scheduler"] == "conservative", "makespan_speedup"], 1.0)
    assert list(summary.index) == ["filler", "easy", "easy-co", "conservative"]
    assert "| filler |" in (tmp_path / "tables.md").read_text()
    classic = runs[runs["scheduler"].isin(["easy", "conservative"])]
    assert np.allclose(classic["mean_job_speedup"], 1.0) and (classic["slowdown_counts"] == 0).all()


def test_experiments_shuffle_the_same_jobs():
    spec = small_spec()
    first, second = experiment_workload(spec, 0), experiment_workload(spec, 1)
    assert sorted(first.app) == sorted(second.app) and list(first.app) != list(second.app)


def test_interrupted_grid_resumes_only_missing_runs(tmp_path, monkeypatch):
    spec = small_spec()
    run_experiment(spec, tmp_path, workers=1, progress=False, plots=False)
    before = pd.read_csv(tmp_path / "runs.csv")
    lines = (tmp_path / "grid.csv").read_text().splitlines(keepends=True)
    (tmp_path / "grid.csv").write_text(
        "".join(lines[:-2]) + lines[-2][:9]
    )  # killed while writing a row
    calls = []
    monkeypatch.setattr(
        experiment, "run_cell", lambda *args: calls.append(args[1:]) or run_cell(*args)
    )
    run_experiment(spec, tmp_path, workers=1, progress=False, plots=False)
    assert calls == [(1, "filler"), (1, "conservative")]
    pd.testing.assert_frame_equal(
        pd.read_csv(tmp_path / "runs.csv").drop(columns="wall_seconds"),
        before.drop(columns="wall_seconds"),
    )
    assert list(before.columns) == [
        "experiment",
        "scheduler",
        "makespan",
        "makespan_speedup",
        "bound",
        "makespan_over_bound",
        "mean_slowdown",
        "mean_slowdown_pp",
        "slowdown_counts",
        "utilization",
        "mean_job_speedup",
        "weighted_mean_job_speedup",
        "wall_seconds",
    ]


def test_a_folder_of_the_older_per_run_format_is_refused_unless_forced(tmp_path):
    spec = small_spec(experiments=1, schedulers=["easy"])
    run_experiment(spec, tmp_path, workers=1, progress=False, plots=False)
    for name in ("grid.csv", "grid.done"):
        (tmp_path / name).unlink()
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "e000_easy.json").write_text("{}")
    with pytest.raises(InputError, match="older per-run format.*--force"):
        run_experiment(spec, tmp_path, workers=1, progress=False, plots=False)
    run_experiment(spec, tmp_path, workers=1, progress=False, plots=False, force=True)
    assert not (tmp_path / "runs").exists() and len(pd.read_csv(tmp_path / "runs.csv")) == 2


def test_other_spec_in_the_same_folder_is_refused(tmp_path):
    run_experiment(small_spec(), tmp_path, workers=1, progress=False, plots=False)
    with pytest.raises(InputError, match="different experiment"):
        run_experiment(small_spec(seed=5), tmp_path, workers=1, progress=False, plots=False)


def test_local_processes_give_the_same_results_as_in_process(tmp_path):
    spec = small_spec()
    run_experiment(spec, tmp_path / "a", workers=1, progress=False, plots=False)
    run_experiment(spec, tmp_path / "b", workers=2, progress=False, plots=False)
    a = pd.read_csv(tmp_path / "a" / "runs.csv").sort_values(
        ["experiment", "scheduler"], ignore_index=True
    )
    b = pd.read_csv(tmp_path / "b" / "runs.csv").sort_values(
        ["experiment", "scheduler"], ignore_index=True
    )
    pd.testing.assert_frame_equal(a.drop(columns="wall_seconds"), b.drop(columns="wall_seconds"))


def test_bounds_are_computed_once_while_worker_cells_run(tmp_path, monkeypatch):
    spec, computed = small_spec(), experiment.experiment_bounds
    calls: list[tuple[int, bool]] = []

    def counted(spec):
        finished = len(pd.read_csv(tmp_path / "grid.done"))
        calls.append((finished, threading.current_thread() is threading.main_thread()))
        return computed(spec)

    monkeypatch.setattr(experiment, "experiment_bounds", counted)
    run_experiment(spec, tmp_path, workers=2, progress=False, plots=False)
    # once, after the first cell, beside the thread that appends the others
    assert len(calls) == 1 and calls[0][0] >= 1 and not calls[0][1]
    runs = pd.read_csv(tmp_path / "runs.csv")
    assert runs["bound"].tolist() == runs["experiment"].map(computed(spec)).tolist()


def test_bounds_that_fail_while_cells_run_are_computed_again_at_the_end(tmp_path, monkeypatch):
    spec, computed = small_spec(), experiment.experiment_bounds
    calls: list[int] = []

    def fails_first(spec):
        calls.append(len(calls))
        if len(calls) == 1:
            raise RuntimeError("solver unavailable")
        return computed(spec)

    monkeypatch.setattr(experiment, "experiment_bounds", fails_first)
    run_experiment(spec, tmp_path, workers=2, progress=False, plots=False)
    assert calls == [0, 1]
    assert len(pd.read_csv(tmp_path / "runs.csv")) == len(spec.cells())


@pytest.mark.slow  # starts a Dask LocalCluster: seconds of start-up
def test_dask_local_cluster_runs_the_grid(tmp_path):
    spec = small_spec(experiments=1, schedulers=["easy-co"])
    run_experiment(spec, tmp_path, workers=1, dask="local", progress=False, plots=False)
    assert len(pd.read_csv(tmp_path / "runs.csv")) == 2


# every plot of a grid; tests/cli/test_plots_rule.py renders them under -m slow too
@pytest.mark.slow
def test_plots_are_written(tmp_path):
    run_experiment(small_spec(), tmp_path, workers=1, progress=False, plots=True)
    names = {p.name for p in (tmp_path / "plots").glob("*.png")}
    assert {
        "box_makespan_speedup.png",
        "correlation.png",
        "pareto_mean_slowdown_vs_makespan_speedup.png",
        "speedup_time_easy-co.png",
    } <= names
    jobs = pd.read_csv(
        tmp_path / "jobs" / "e000_easy-co.csv"
    )  # written by the grid with the run's row
    assert list(jobs.columns) == ["start", "end", "speedup", "app"] and len(jobs) == SMALL["jobs"]


@pytest.mark.slow
def test_plots_drawn_by_two_processes_are_the_files_one_process_draws(tmp_path):
    spec = small_spec()
    run_experiment(spec, tmp_path / "one", workers=1, progress=False, plots=False)
    shutil.copytree(tmp_path / "one", tmp_path / "two")
    experiment.finish(spec, tmp_path / "one", workers=1)
    experiment.finish(spec, tmp_path / "two", workers=2)
    drawn = sorted(p.name for p in (tmp_path / "one" / "plots").glob("*.png"))
    assert len(drawn) == 12
    assert drawn == sorted(p.name for p in (tmp_path / "two" / "plots").glob("*.png"))
    for name in drawn:
        one, two = (tmp_path / folder / "plots" / name for folder in ("one", "two"))
        assert one.read_bytes() == two.read_bytes(), name


def test_workers_start_the_matching_cells_then_the_co_schedulers_cells_first():
    spec = preset_spec("thesis")
    cells = spec.cells()
    order = spec.dispatch_order(cells)
    matching = [cell for cell in cells if cell[1] == "matching"]
    co = [cell for cell in cells if cell[1] in COSCHEDULERS and cell[1] != "matching"]
    classic = [cell for cell in cells if cell[1] not in COSCHEDULERS]
    assert order == matching + co + classic
    assert len(matching) == spec.experiments and co and classic


def test_pareto_front_marks_exactly_the_non_dominated_points():
    x = np.array([1.0, 1.1, 1.2, 1.05, 1.2])
    y = np.array([5.0, 4.0, 6.0, 7.0, 6.5])  # maximise x, minimise y
    assert list(pareto_front(x, y, True, False)) == [False, True, True, False, False]


def test_unknown_scheduler_or_preset_raises():
    with pytest.raises(InputError, match="unknown scheduler"):
        preset_spec("example-small", schedulers=["nope"])
    with pytest.raises(InputError, match="unknown preset"):
        preset_spec("nope")


def parser():
    root = argparse.ArgumentParser()
    co_cli.register(root.add_subparsers(dest="command"))
    return root


def test_heatmap_command_prints_json_and_plots(tmp_path, capsys):
    args = parser().parse_args(
        [
            "heatmap",
            str(example_path(EXAMPLE_HEATMAP)),
            "--json",
            "--plot",
            str(tmp_path / "h.png"),
            "--instance",
            str(tmp_path / "i.json"),
        ]
    )
    assert args.func(args) == 0
    document = json.loads(capsys.readouterr().out)
    assert len(document["applications"]) == 12 and (tmp_path / "h.png").exists()
    assert json.loads((tmp_path / "i.json").read_text())["tasks"] == document["applications"]


def test_experiment_command_prints_tables(tmp_path, capsys):
    args = parser().parse_args(
        [
            "experiment-sim",
            "--preset",
            "example-small",
            "--jobs",
            "30",
            "--experiments",
            "1",
            "--schedulers",
            "easy-co",
            "--out",
            str(tmp_path),
            "--workers",
            "1",
            "--no-plots",
            "--no-progress",
        ]
    )
    assert args.func(args) == 0
    assert "| easy-co |" in capsys.readouterr().out


def test_generate_workload_command_writes_a_csv_workload(tmp_path):
    out = tmp_path / "w.csv"
    args = parser().parse_args(
        [
            "generate-workload",
            "--heatmap",
            str(example_path(EXAMPLE_HEATMAP)),
            "--jobs",
            "25",
            "--interarrival",
            "poisson",
            "--mean",
            "5",
            "--out",
            str(out),
        ]
    )
    assert args.func(args) == 0
    frame = pd.read_csv(out)
    assert len(frame) == 25 and set(frame["app"]) <= set(
        read_heatmap(example_path(EXAMPLE_HEATMAP)).applications
    )


def test_bundled_example_is_labelled_synthetic_and_loads():
    heatmap = read_heatmap(example_path(EXAMPLE_HEATMAP))
    assert len(heatmap) == 12 and np.isfinite(heatmap.speedup_matrix()).all()
    assert "SYNTHETIC" in json.loads(example_path("synthetic_npb_seed.json").read_text())["note"]
