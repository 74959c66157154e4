"""The co-scheduling commands through the `cosched` dispatcher: exit codes, one-line errors, no
partial outputs."""

import io
import json

import pandas as pd

from cosched.cli import main
from cosched.simulator.data import EXAMPLE_HEATMAP, example_path

HEATMAP = str(example_path(EXAMPLE_HEATMAP))


def test_bad_heatmap_exits_2_with_one_line_and_no_plot(tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    bad.write_text(
        "name_A,procs_A,compact_A,name_B,procs_B,compact_B,co_A_B,co_B_A\na,x,1,b,1,1,1,1\n"
    )
    assert main(["heatmap", str(bad), "--plots", str(tmp_path / "h.png")]) == 2
    error = capsys.readouterr().err.strip()
    assert error.count("\n") == 0 and "line 2" in error and "procs_A" in error
    assert not (tmp_path / "h.png").exists()


def test_generate_workload_bad_options_exit_2(tmp_path, capsys):
    out = tmp_path / "w.csv"
    assert (
        main(["generate-workload", "--heatmap", HEATMAP, "--selection", "list", "--out", str(out)])
        == 2
    )
    assert "apps" in capsys.readouterr().err and not out.exists()
    assert (
        main(
            [
                "generate-workload",
                "--heatmap",
                HEATMAP,
                "--jobs",
                "5",
                "--selection",
                "frequencies",
                "--frequencies",
                "1,x",
                "--out",
                str(out),
            ]
        )
        == 2
    )


def test_experiment_sim_runs_through_the_dispatcher(tmp_path, capsys):
    code = main(
        [
            "experiment-sim",
            "--preset",
            "example-small",
            "--jobs",
            "20",
            "--experiments",
            "2",
            "--schedulers",
            "sjf-co,popularity",
            "--out",
            str(tmp_path),
            "--workers",
            "1",
            "--no-progress",
            "--no-plots",
            "--json",
        ]
    )
    assert code == 0
    summary = pd.read_json(io.StringIO(capsys.readouterr().out))
    assert set(summary["scheduler"]) == {"sjf-co", "popularity", "conservative"}


def test_experiment_sim_unknown_scheduler_exits_2(tmp_path):
    assert (
        main(
            [
                "experiment-sim",
                "--preset",
                "example-small",
                "--schedulers",
                "nope",
                "--out",
                str(tmp_path / "x"),
            ]
        )
        == 2
    )
    assert not (tmp_path / "x").exists()


def test_simulate_with_heatmap_writes_co_columns(tmp_path):
    workload = tmp_path / "w.csv"
    assert (
        main(
            [
                "generate-workload",
                "--heatmap",
                HEATMAP,
                "--jobs",
                "40",
                "--seed",
                "3",
                "--out",
                str(workload),
            ]
        )
        == 0
    )
    out = tmp_path / "run"
    assert (
        main(
            [
                "simulate",
                "--workload",
                str(workload),
                "--platform",
                "marconi",
                "--scheduler",
                "filler",
                "--heatmap",
                HEATMAP,
                "--out",
                str(out),
                "--quiet",
            ]
        )
        == 0
    )
    jobs = pd.read_csv(out / "jobs.csv")
    assert {"app", "compact_time", "speedup", "nodes"} <= set(jobs.columns)
    node_lists = jobs["nodes"].astype(str).str.split(";")
    assert (node_lists.str.len() == jobs["node_count"]).all()
    assert ((jobs["compact_time"] / jobs["run_time"]) - jobs["speedup"]).abs().max() < 1e-9
    summary = json.loads((out / "summary.json").read_text())
    assert 0 <= summary["slowdown_counts"] <= 1 and summary["mean_job_speedup"] > 0


def test_simulate_with_unknown_application_exits_2_without_output(tmp_path, capsys):
    workload = tmp_path / "w.csv"
    workload.write_text("job_id,submit_time,run_time,cores,app\n1,0,10,4,nope\n")
    out = tmp_path / "run"
    assert (
        main(
            [
                "simulate",
                "--workload",
                str(workload),
                "--platform",
                "marconi",
                "--scheduler",
                "easy-co",
                "--heatmap",
                HEATMAP,
                "--out",
                str(out),
                "--quiet",
            ]
        )
        == 2
    )
    assert "not in the heatmap" in capsys.readouterr().err and not out.exists()
