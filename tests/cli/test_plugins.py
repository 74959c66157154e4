"""Plug-ins: `--scheduler FILE.py:Class` and the entry-point group `cosched.schedulers` in simulate,
compare and experiment-sim; `--strategy FILE.py:Class` and `cosched.strategies` in run and ratio; a
plug-in that fails to load is one error line and exit code 2, with no output written."""

import csv
import importlib.metadata
import json
from pathlib import Path

import pytest

from cosched.cli import main

REPO = Path(__file__).resolve().parents[2]
RECIPE = REPO / "docs" / "examples" / "smallest_area_first.py"  # docs/CONTRIBUTING.md's recipe
WORKLOAD = "job_id,submit_time,run_time,cores,estimate\n" + "".join(
    f"{job},{submit},{run},{cores},{run}\n"
    for job, submit, run, cores in [
        (1, 0, 100, 4),  # fills the platform
        (2, 1, 50, 4),  # area 200: the first of the three in arrival order, the last by area
        (3, 2, 10, 4),  # area 40
        (4, 3, 30, 1),  # area 30: the first by area
    ]
)
STRATEGY = """
from cosched.strategies.fcs import FCS


class LastFCS(FCS):
    name = "last-fcs"

    def __init__(self, tie_break="last"):
        super().__init__("last")
"""


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _starts(folder: Path) -> dict[int, float]:
    with open(folder / "jobs.csv", newline="") as handle:
        return {int(row["job_id"]): float(row["start_time"]) for row in csv.DictReader(handle)}


@pytest.fixture
def workload(tmp_path):
    path = tmp_path / "w.csv"
    path.write_text(WORKLOAD)
    platform = tmp_path / "p.json"
    platform.write_text(json.dumps({"nodes": 4, "sockets_per_node": 1, "cores_per_socket": 1}))
    return ["--workload", path, "--platform", platform]


def test_the_contributing_recipe_runs_from_the_command_line(tmp_path, capsys, workload):
    code, _, err = run(
        capsys,
        "simulate",
        *workload,
        "--scheduler",
        f"{RECIPE}:SmallestAreaFirst",
        "--out",
        tmp_path / "saf",
        "--quiet",
    )
    assert code == 0, err
    starts = _starts(tmp_path / "saf")
    assert starts == {1: 0.0, 4: 100.0, 3: 130.0, 2: 140.0}  # smallest area first
    code, _, _ = run(capsys, "simulate", *workload, "--out", tmp_path / "easy", "--quiet")
    assert _starts(tmp_path / "easy")[2] == 100.0  # arrival order differs: the recipe took effect
    summary = json.loads((tmp_path / "saf" / "summary.json").read_text())
    assert summary["scheduler"] == "smallest-area-first"


def test_compare_runs_a_plugin_beside_the_built_in_schedulers(tmp_path, capsys, workload):
    code, _, err = run(
        capsys,
        "compare",
        *workload,
        "--scheduler",
        f"easy,{RECIPE}:SmallestAreaFirst",
        "--out",
        tmp_path / "compare",
        "--no-plots",
        "--quiet",
    )
    assert code == 0, err
    with open(tmp_path / "compare" / "compare.csv", newline="") as handle:
        names = [row["scheduler"] for row in csv.DictReader(handle)]
    assert "smallest-area-first" in names and "easy" in names


def test_experiment_sim_runs_a_plugin(tmp_path, capsys):
    code, out, err = run(
        capsys,
        "experiment-sim",
        "--preset",
        "example-small",
        "--jobs",
        "20",
        "--experiments",
        "1",
        "--scheduler",
        f"easy-co,{RECIPE}:SmallestAreaFirst",
        "--out",
        tmp_path,
        "--workers",
        "1",
        "--no-plots",
        "--quiet",
    )
    assert code == 0, err
    with open(tmp_path / "summary.csv", newline="") as handle:
        names = [row["scheduler"] for row in csv.DictReader(handle)]
    assert names[-1] == f"{RECIPE}:SmallestAreaFirst"  # the name as given labels its rows


def test_an_entry_point_of_cosched_schedulers_is_a_scheduler_name(
    tmp_path, capsys, workload, monkeypatch
):
    point = importlib.metadata.EntryPoint(
        "their-easy", "cosched.simulator.schedulers.easy:EASY", "cosched.schedulers"
    )
    monkeypatch.setattr(
        importlib.metadata,
        "entry_points",
        lambda group=None: [point] if group == "cosched.schedulers" else [],
    )
    code, _, err = run(
        capsys,
        "simulate",
        *workload,
        "--scheduler",
        "their-easy",
        "--out",
        tmp_path / "ep",
        "--quiet",
    )
    assert code == 0, err
    run(capsys, "simulate", *workload, "--out", tmp_path / "easy", "--quiet")
    assert _starts(tmp_path / "ep") == _starts(tmp_path / "easy")


@pytest.mark.parametrize(
    "text, attribute, needles",
    [
        (None, "X", ["no such plug-in file"]),
        ("def broken(:\n", "X", ["line 1", "syntax error"]),
        ("raise RuntimeError('boom\\nsecond line')\n", "X", ["RuntimeError: boom"]),
        ("x = 1\n", "Missing", ["defines no class or function 'Missing'"]),
    ],
)
@pytest.mark.parametrize("command", ["simulate", "compare"])
def test_a_plugin_that_fails_to_load_is_one_error_line(
    tmp_path, capsys, workload, command, text, attribute, needles
):
    plugin = tmp_path / "plugin.py"
    if text is not None:
        plugin.write_text(text)
    out = tmp_path / "out"
    code, _, err = run(
        capsys, command, *workload, "--scheduler", f"{plugin}:{attribute}", "--out", out
    )
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert str(plugin) in err and all(needle in err for needle in needles), err
    assert not out.exists()


@pytest.mark.parametrize("command", ["run", "ratio"])
def test_a_strategy_plugin_file_runs(tmp_path, capsys, command):
    instance = tmp_path / "i.json"
    assert main(["generate", "--n", "3", "--seed", "1", "--out", str(instance)]) == 0
    plugin = tmp_path / "strategy.py"
    plugin.write_text(STRATEGY)
    capsys.readouterr()
    code, out, err = run(capsys, command, instance, "--strategy", f"{plugin}:LastFCS", "--json")
    assert code == 0, err
    theirs = json.loads(out)
    code, out, _ = run(
        capsys, command, instance, "--strategy", "fcs", "--tie-break", "last", "--json"
    )
    ours = json.loads(out)
    assert theirs["makespan"] == ours["makespan"]


@pytest.mark.parametrize("command", ["run", "ratio"])
def test_a_strategy_plugin_that_fails_to_load_is_one_error_line(tmp_path, capsys, command):
    instance = tmp_path / "i.json"
    assert main(["generate", "--n", "3", "--seed", "1", "--out", str(instance)]) == 0
    plugin = tmp_path / "strategy.py"
    plugin.write_text("import not_a_module_anywhere\n")
    capsys.readouterr()
    code, _, err = run(capsys, command, instance, "--strategy", f"{plugin}:X")
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert str(plugin) in err and "ModuleNotFoundError" in err
