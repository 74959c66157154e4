"""The command line: `simulate --hybrid` (summary keys, jobs.csv columns, bad input),
`hybrid-workload`, `experiment-hybrid` (tables, plots, resumption)."""

import json

import pandas as pd
import pytest

from cosched.cli import main
from cosched.simulator.hybrid.cli import MECHANISM_NAMES
from cosched.simulator.hybrid.mechanisms import MECHANISMS

KEYS = (
    "instant_start_ratio",
    "turnaround_hours",
    "turnaround_hours_by_type",
    "preemption_ratio_rigid",
    "preemption_ratio_malleable",
    "utilization_useful",
    "lost_node_hours",
    "decision_ms_max",
)
COLUMNS = ("job_type", "preemptions", "shrinks", "lost_node_seconds", "instant_start")
SMALL = ["--workload", "kth-sp2", "--platform", "kth-sp2", "--limit", "400", "--quiet"]


def test_cli_names_match_the_library():
    assert MECHANISM_NAMES == MECHANISMS


@pytest.mark.parametrize("mechanism", ["baseline", "cup-spaa"])
def test_simulate_hybrid_writes_the_keys_columns_and_a_workload_that_repeats_the_run(
    tmp_path, mechanism
):
    out = tmp_path / "run"
    assert main(["simulate", *SMALL, "--hybrid", mechanism, "--out", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert set(KEYS) <= set(summary) and "makespan" in summary
    assert set(summary["turnaround_hours_by_type"]) == {"on-demand", "rigid", "malleable"}
    jobs = pd.read_csv(out / "jobs.csv")
    assert set(COLUMNS) <= set(jobs.columns)
    again = tmp_path / "again"
    assert (
        main(
            [
                "simulate",
                "--workload",
                str(out / "workload.csv"),
                "--platform",
                "kth-sp2",
                "--quiet",
                "--hybrid",
                mechanism,
                "--out",
                str(again),
            ]
        )
        == 0
    )
    assert pd.read_csv(again / "jobs.csv")["end_time"].equals(jobs["end_time"])


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--hybrid", "n-xaa"], "unknown mechanism"),
        (["--hybrid", "n-paa", "--job-types", "on-demand=0.5,rigid=0.6"], "sum to 1"),
        (["--hybrid", "n-paa", "--notice", "w7"], "unknown notice mix"),
        (["--hybrid", "n-paa", "--scheduler", "conservative"], "conservative"),
    ],
)
def test_simulate_hybrid_bad_input_is_one_line_and_exit_2(tmp_path, capsys, flags, message):
    assert main(["simulate", *SMALL, *flags, "--out", str(tmp_path / "x")]) == 2
    error = capsys.readouterr().err
    assert message in error and error.count("\n") == 1
    assert not (tmp_path / "x").exists()


def test_hybrid_workload_command(tmp_path, capsys):
    out = tmp_path / "w.csv"
    assert (
        main(
            [
                "hybrid-workload",
                *SMALL,
                "--notice",
                "w2",
                "--seed",
                "4",
                "--out",
                str(out),
                "--json",
            ]
        )
        == 0
    )
    counts = json.loads(capsys.readouterr().out)
    assert counts["jobs"] == 400 and sum(counts["types"].values()) == 400
    assert pd.read_csv(out)["job_type"].isin(["on-demand", "rigid", "malleable"]).all()


def test_experiment_hybrid_table_plots_and_resume(tmp_path, capsys):
    out = tmp_path / "grid"
    args = [
        "experiment-hybrid",
        "--workload",
        "kth-sp2",
        "--platform",
        "kth-sp2",
        "--limit",
        "300",
        "--typings",
        "2",
        "--mechanism",
        "baseline,n-paa,cua-spaa",
        "--sweep",
        "notice",
        "--sweep-typings",
        "1",
        "--workers",
        "1",
        "--quiet",
        "--plots",
        "--out",
        str(out),
    ]
    assert main(args) == 0
    table = (out / "table.md").read_text()
    assert "| cua-spaa |" in table and "±" in table
    runs = pd.read_csv(out / "runs.csv")
    assert len(runs) == 2 * 3 + 5 * 1 * 3
    for name in ("turnaround_by_type.png", "preemption_ratio.png", "notice_sweep.png"):
        assert (out / "plots" / name).stat().st_size > 0
    first = (out / "grid.csv").read_text()
    capsys.readouterr()
    assert main(args) == 0  # everything finished: nothing reruns
    assert (out / "grid.csv").read_text() == first
    assert main([*args[:-2], "--typings", "3", "--out", str(out)]) == 2  # another grid: refused
