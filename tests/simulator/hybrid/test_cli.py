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


# the readings of the paper's definitions: (flag, its value, the keyword, the value in spec.json)
READINGS = [
    ("--preemption-warning", "0", "warning", 0.0),
    ("--rigid-overhead", "lost-work", "rigid_overhead", "lost-work"),
    ("--regrow", "pre-shrink", "regrow", "pre-shrink"),
    ("--checkpoint-writes", "inside", "checkpoint_writes", "inside"),
]


def _subcommand_actions(command: str) -> dict:
    from cosched.cli import build_parser

    subparsers = build_parser(command)._subcommands
    return {action.dest: action for action in subparsers.choices[command]._actions}


def test_experiment_hybrid_has_the_readings_of_simulate_hybrid_with_the_same_flags_and_help():
    simulate, experiment = _subcommand_actions("simulate"), _subcommand_actions("experiment-hybrid")
    for flag, *_ in READINGS:
        dest = flag.removeprefix("--").replace("-", "_")
        same = ("option_strings", "default", "choices", "help", "metavar", "type")
        assert [getattr(experiment[dest], name) for name in same] == [
            getattr(simulate[dest], name) for name in same
        ], flag


@pytest.mark.parametrize("flag, value, keyword, stored", READINGS)
def test_experiment_hybrid_runs_every_cell_with_the_reading(tmp_path, flag, value, keyword, stored):
    """On the first 600 KTH-SP2 jobs under CUP-SPAA each reading changes the run: the grid's row is
    the library's run with the reading, not the default run."""
    from dataclasses import replace

    from cosched.simulator.hybrid.experiment import MECHANISM_DEFAULTS, HybridExperiment, run_cell

    out = tmp_path / "grid"
    args = ["experiment-hybrid", "--workload", "kth-sp2", "--platform", "kth-sp2"]
    args += ["--limit", "600", "--typings", "1", "--mechanism", "cup-spaa", "--workers", "1"]
    assert main([*args, "--quiet", "--no-plots", flag, value, "--out", str(out)]) == 0
    document = json.loads((out / "spec.json").read_text())
    assert document[keyword] == stored
    spec = HybridExperiment.from_json(document)
    assert getattr(spec, keyword) == stored
    row = pd.read_csv(out / "runs.csv").iloc[0]
    reading = run_cell(spec, "main", "w5", 0, "cup-spaa")[0]
    default = run_cell(
        replace(spec, **{keyword: MECHANISM_DEFAULTS[keyword]}), "main", "w5", 0, "cup-spaa"
    )[0]
    assert reading["lost_node_hours"] != default["lost_node_hours"]  # the reading matters here
    for metric in ("turnaround_hours", "lost_node_hours"):
        assert row[metric] == reading[metric]
    caption = (out / "table.md").read_text().splitlines()[-1]
    named = {"warning": "preemption warning 0 s"}.get(
        keyword, f"{keyword.replace('_', ' ')} {value}"
    )
    assert named in caption


def test_a_spec_at_the_defaults_names_no_reading_and_an_old_spec_reads_back_the_same():
    from cosched.simulator.compare import load_inputs
    from cosched.simulator.hybrid.experiment import MECHANISM_DEFAULTS, HybridExperiment
    from cosched.simulator.hybrid.workload import trace_projects

    platform, workload = load_inputs("kth-sp2", "kth-sp2", limit=40)
    projects = trace_projects(workload.source, workload.job_id, "group")
    spec = HybridExperiment(workload, projects, platform, typings=1, source="kth-sp2")
    document = spec.to_json()
    assert not set(MECHANISM_DEFAULTS) & set(document)  # as written before they were options
    again = HybridExperiment.from_json(json.loads(json.dumps(document)))
    assert again.mechanism_options() == MECHANISM_DEFAULTS and again.to_json() == document
    changed = HybridExperiment(
        workload, projects, platform, typings=1, source="kth-sp2", warning=30, regrow="pre-shrink"
    )
    round_trip = HybridExperiment.from_json(json.loads(json.dumps(changed.to_json())))
    assert round_trip.mechanism_options() == {
        **MECHANISM_DEFAULTS,
        "warning": 30,
        "regrow": "pre-shrink",
    }


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--preemption-warning", "-1"], "field 'warning': the preemption warning must be >= 0"),
        (["--preemption-warning", "nan"], "field 'warning'"),
    ],
)
def test_experiment_hybrid_bad_reading_is_one_line_exit_2_and_no_folder(
    tmp_path, capsys, flags, message
):
    args = ["experiment-hybrid", *SMALL, "--typings", "1", "--mechanism", "baseline"]
    assert main([*args, *flags, "--out", str(tmp_path / "x")]) == 2
    error = capsys.readouterr().err
    assert message in error and error.strip().count("\n") == 0
    assert not (tmp_path / "x").exists()
