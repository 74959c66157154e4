"""Hybrid mechanism plug-ins: `simulate --hybrid FILE.py:Class` (docs/CONTRIBUTING.md's recipe) and
the entry-point group `cosched.hybrid_mechanisms`; a plug-in that fails to load, or is no mechanism,
is one error line and exit code 2, with no output written."""

import csv
import importlib.metadata
import json
from pathlib import Path

import pytest

from cosched.cli import main
from cosched.registry import PLUGIN_GROUPS

REPO = Path(__file__).resolve().parents[3]
RECIPE = REPO / "docs" / "examples" / "half_reservation.py"  # docs/CONTRIBUTING.md's recipe
HEADER = "job_id,submit_time,run_time,cores,estimate,job_type,notice,notice_time,"
HEADER += "estimated_arrival,n_min,n_max,setup\n"
# 4 nodes: job 1 holds one; job 2 (all four) is announced at 100 for 500; job 3 (one node, too long
# to run on reserved nodes before 500) comes at 200
WORKLOAD = HEADER + (
    "1,0,1000,1,1000,rigid,,,,1,1,0\n"
    "2,500,100,4,100,on-demand,accurate,100,500,4,4,0\n"
    "3,200,1000,1,1000,rigid,,,,1,1,0\n"
)


@pytest.fixture
def inputs(tmp_path):
    path = tmp_path / "w.csv"
    path.write_text(WORKLOAD)
    platform = tmp_path / "p.json"
    platform.write_text(json.dumps({"nodes": 4, "sockets_per_node": 1, "cores_per_socket": 1}))
    return ["--workload", str(path), "--platform", str(platform), "--quiet"]


def _simulate(tmp_path, inputs, mechanism: str, name: str) -> tuple[int, dict, list[dict]]:
    out, actions = tmp_path / name, tmp_path / f"{name}.csv"
    code = main(
        ["simulate", *inputs, "--hybrid", mechanism, "--out", str(out)]
        + ["--log-actions", str(actions)]
    )
    assert code == 0
    with open(out / "jobs.csv", newline="") as handle:
        starts = {int(row["job_id"]): float(row["start_time"]) for row in csv.DictReader(handle)}
    with open(actions, newline="") as handle:
        return code, starts, list(csv.DictReader(handle))


def _noticed(actions: list[dict]) -> list[str]:
    return [
        row["nodes"] for row in actions if row["action"] == "reserve" and row["reason"] == "notice"
    ]


def test_the_contributing_recipe_holds_half_the_nodes_from_the_command_line(tmp_path, inputs):
    _, half, half_actions = _simulate(tmp_path, inputs, f"{RECIPE}:HalfPaa", "half")
    _, cua, cua_actions = _simulate(tmp_path, inputs, "cua-paa", "cua")
    assert _noticed(half_actions) == ["1;2"] and _noticed(cua_actions) == ["1;2;3"]
    assert half[3] == 200.0 and cua[3] > 200.0  # the node left idle runs job 3 at once
    assert half[2] == cua[2] == 500.0  # PAA makes room for the rest at the arrival
    summary = json.loads((tmp_path / "half" / "summary.json").read_text())
    assert summary["mechanism"] == f"{RECIPE}:HalfPaa"


def test_an_entry_point_of_cosched_hybrid_mechanisms_is_a_mechanism_name(
    tmp_path, inputs, monkeypatch
):
    group = PLUGIN_GROUPS["mechanism"]
    assert group == "cosched.hybrid_mechanisms"
    point = importlib.metadata.EntryPoint(
        "their-cua", "cosched.simulator.hybrid.mechanisms:CuaPaa", group
    )
    monkeypatch.setattr(
        importlib.metadata,
        "entry_points",
        lambda group=None: [point] if group == point.group else [],
    )
    _, theirs, their_actions = _simulate(tmp_path, inputs, "their-cua", "theirs")
    _, ours, our_actions = _simulate(tmp_path, inputs, "cua-paa", "ours")
    assert theirs == ours and their_actions == our_actions


@pytest.mark.parametrize(
    "text, attribute, needles",
    [
        (None, "X", ["no such plug-in file"]),
        ("def broken(:\n", "X", ["line 1", "syntax error"]),
        ("raise RuntimeError('boom\\nsecond line')\n", "X", ["RuntimeError: boom"]),
        ("x = 1\n", "Missing", ["defines no class or function 'Missing'"]),
        ("class X:\n    pass\n", "X", ["is no hybrid mechanism", "plugin.py:X"]),
        (
            "from cosched.simulator.hybrid.mechanisms import Hybrid\nclass X(Hybrid):\n    pass\n",
            "X",
            ["plugin.py:X is no hybrid mechanism", "notice_policy"],
        ),
        (
            "from cosched.simulator.hybrid.mechanisms import ArrivalPolicy, Hybrid, NoNotice\n"
            "class Idle(ArrivalPolicy):\n    pass\n"
            "class X(Hybrid):\n    notice_policy = NoNotice\n    arrival_policy = Idle\n",
            "X",
            ["arrival policy Idle", "make_room"],
        ),
    ],
)
def test_a_mechanism_plugin_that_fails_to_load_is_one_error_line(
    tmp_path, capsys, inputs, text, attribute, needles
):
    plugin = tmp_path / "plugin.py"
    if text is not None:
        plugin.write_text(text)
    out = tmp_path / "out"
    code = main(["simulate", *inputs, "--hybrid", f"{plugin}:{attribute}", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert all(needle in err for needle in needles), err
    assert not out.exists()


def test_an_unknown_mechanism_name_offers_the_closest(tmp_path, capsys, inputs):
    assert main(["simulate", *inputs, "--hybrid", "cua-pa", "--out", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err
    assert "unknown mechanism 'cua-pa'" in err and "did you mean 'cua-paa'" in err, err


def test_experiment_hybrid_refuses_a_broken_plugin_before_any_cell(tmp_path, capsys):
    out = tmp_path / "grid"
    argv = ["experiment-hybrid", "--workload", "kth-sp2", "--platform", "kth-sp2", "--limit", "50"]
    argv += [
        "--typings",
        "1",
        "--mechanism",
        f"cua-paa,{tmp_path / 'none.py'}:X",
        "--out",
        str(out),
    ]
    assert main([*argv, "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "no such plug-in file" in err and err.count("\n") == 1, err
    assert not out.exists()


def test_experiment_hybrid_runs_an_entry_point_mechanism_beside_a_built_in_one(
    tmp_path, capsys, monkeypatch
):
    point = importlib.metadata.EntryPoint(
        "their-cua", "cosched.simulator.hybrid.mechanisms:CuaPaa", PLUGIN_GROUPS["mechanism"]
    )
    monkeypatch.setattr(
        importlib.metadata,
        "entry_points",
        lambda group=None: [point] if group == point.group else [],
    )
    out = tmp_path / "grid"
    argv = ["experiment-hybrid", "--workload", "kth-sp2", "--platform", "kth-sp2", "--limit", "50"]
    argv += ["--typings", "1", "--mechanism", "cua&paa,their-cua", "--workers", "1"]
    assert main([*argv, "--out", str(out), "--no-plots", "--quiet"]) == 0, capsys.readouterr().err
    with open(out / "summary.csv", newline="") as handle:
        rows = {row["mechanism"]: row for row in csv.DictReader(handle) if row["sweep"] == "main"}
    assert set(rows) == {"cua-paa", "their-cua"}  # the registered name as listed, the plug-in's
    ours, theirs = (
        {
            key: value
            for key, value in rows[name].items()
            if key != "mechanism" and not key.startswith("decision_ms")  # measured, not simulated
        }
        for name in ("cua-paa", "their-cua")
    )
    assert ours == theirs  # the same class under another name: the same metrics


def test_experiment_hybrid_refuses_an_unknown_mechanism_naming_its_flag(tmp_path, capsys):
    out = tmp_path / "grid"
    argv = ["experiment-hybrid", "--workload", "kth-sp2", "--platform", "kth-sp2"]
    assert main([*argv, "--mechanism", "cua-pa", "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "field '--mechanism'" in err and "did you mean 'cua-paa'" in err, err
    assert err.count("\n") == 1 and not out.exists()
