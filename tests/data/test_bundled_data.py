"""The real data bundled in `cosched.data`: every preset resolves and loads, matches its provenance
(README.txt), and works the same from Python and from every command that takes a heatmap, workload
or platform.

These tests use only the installed package: they never skip.
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
import warnings
from pathlib import Path

import pytest

import cosched.data
from cosched.cli import build_parser, main
from cosched.data import DATA_PRESETS, HEATMAPS, WORKLOADS, data_path, resolve
from cosched.errors import InputError
from cosched.simulator.platform import PRESETS as PLATFORMS
from cosched.simulator.platform import load_platform
from cosched.simulator.workload import load_workload
from cosched.theory.heatmap import MissingPairsWarning, read_heatmap

PACKAGE = Path(cosched.data.__file__).parent
HEATMAP_SIZES = {
    "aris-nas": (33, 421),
    "aris-spec": (8, 35),
    "g5k-nas": (13, 91),  # applications, CSV rows
    "marconi-fig2": (8, 36),
}
KTH_RECORDS = 28476  # MaxRecords of the header = job records in the file (README.txt)
KTH_JOBS = 28467  # after cleaning: 8 records with run time 0 and 1 without processors dropped
# bundled trace -> (job records, jobs after cleaning on its platform preset), as in README.txt
TRACE_JOBS = {
    "nasa-ipsc": (18239, 18066),
    "kth-sp2": (KTH_RECORDS, KTH_JOBS),
    "sdsc-sp2": (59715, 54034),
    "ctc-sp2": (77222, 77205),
}


def test_every_preset_is_a_bundled_file_with_its_sha256_in_the_readme():
    readme = (PACKAGE / "README.txt").read_text()
    files = [*HEATMAPS.values(), *WORKLOADS.values()]
    assert set(HEATMAP_SIZES) == set(HEATMAPS) and set(WORKLOADS) == set(TRACE_JOBS)
    for name in files:
        path = data_path(name)
        assert path.parent == PACKAGE and path.is_file()
        listed = re.search(rf"^{re.escape(name)}\n\s+sha256 : ([0-9a-f]{{64}})", readme, re.M)
        assert listed, f"README.txt gives no sha256 for {name}"
        assert hashlib.sha256(path.read_bytes()).hexdigest() == listed.group(1)
    assert (
        (PACKAGE / "LICENSE-GPL-3.0.txt")
        .read_text()
        .startswith("                    GNU GENERAL PUBLIC LICENSE")
    )


@pytest.mark.parametrize("preset", sorted(HEATMAPS))
def test_heatmap_preset_loads_and_speedups_match_the_source_csv(preset):
    heatmap = read_heatmap(preset)
    applications, rows = HEATMAP_SIZES[preset]
    assert len(heatmap) == applications
    with open(data_path(HEATMAPS[preset]), newline="") as handle:
        source = list(csv.DictReader(handle))
    assert len(source) == rows
    # the 2 extra columns: compact / co to 4 decimals (+-1e-4); self pairs are averaged
    for row in source:
        if row["name_A"] != row["name_B"]:
            assert heatmap.speedup(row["name_A"], row["name_B"]) == pytest.approx(
                float(row["speedup_A_B"]), abs=1e-4
            )
            assert heatmap.speedup(row["name_B"], row["name_A"]) == pytest.approx(
                float(row["speedup_B_A"]), abs=1e-4
            )


def test_known_aris_nas_speedups():
    heatmap = read_heatmap("aris-nas")
    # derived_pairs_aris_NAS.csv row 4:
    # bt.D.256,256,123.965,bt.D.64,64,486.25,138.96,443.08,0.8921,1.0974
    assert heatmap.speedup("bt.D.256", "bt.D.64") == pytest.approx(123.965 / 138.96)
    assert heatmap.speedup("bt.D.64", "bt.D.256") == pytest.approx(486.25 / 443.08)
    assert list(heatmap.procs[:3]) == [256, 484, 64]


def test_aris_nas_gaps_are_the_five_largest_loads_and_a_default_fills_them():
    heatmap = read_heatmap("aris-nas")
    with pytest.raises(InputError, match="280 pair\\(s\\) measured in neither direction"):
        heatmap.speedup_matrix()
    with warnings.catch_warnings():  # the default was asked for: no warning about it
        warnings.simplefilter("error", MissingPairsWarning)
        assert heatmap.with_default(1.0).speedup("bt.D.256", "cg.E.2048") == 1.0


def test_workload_preset_loads_the_whole_kth_trace():
    workload = load_workload("kth-sp2", max_cores=load_platform("kth-sp2").total_cores)
    assert workload.cleaning["records"] == KTH_RECORDS and len(workload) == KTH_JOBS
    assert (
        workload.cleaning["dropped_run_time_le_0"] == 8
        and workload.cleaning["dropped_processors_le_0"] == 1
    )
    assert workload.cleaning["processors_capped"] == 0
    assert workload.header["MaxRecords"] == str(KTH_RECORDS)


@pytest.mark.parametrize("preset", sorted(WORKLOADS))
def test_every_workload_preset_has_the_platform_of_its_header_and_the_readme_counts(preset):
    platform = PLATFORMS[preset]
    workload = load_workload(preset, max_cores=platform.total_cores)
    records, jobs = TRACE_JOBS[preset]
    assert workload.cleaning["records"] == records and len(workload) == jobs
    header = workload.header
    # the leading number of each field ("338 (batch partition; 512 total)": the batch nodes)
    assert (platform.nodes, platform.total_cores) == (
        int(header["MaxNodes"].split()[0]),
        int(header["MaxProcs"].split()[0]),
    )


def test_presets_ignore_case_and_win_over_a_file_of_the_same_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("aris-nas").write_text("not a heatmap")
    assert (
        read_heatmap("ARIS-NAS")
        == read_heatmap("aris-nas")
        == read_heatmap(data_path(HEATMAPS["aris-nas"]))
    )
    assert read_heatmap(Path("aris-nas")) == read_heatmap("aris-nas")
    with pytest.raises(InputError, match="missing column"):
        read_heatmap("./aris-nas")  # a path is a path


@pytest.mark.parametrize("kind, load", [("heatmap", read_heatmap), ("workload", load_workload)])
def test_unknown_name_is_an_input_error_listing_the_presets(tmp_path, kind, load):
    missing = tmp_path / "aris-nsa.csv"
    for spec in ("aris-nsa", missing):
        with pytest.raises(InputError) as error:
            load(spec)
        assert error.value.source == str(spec)
        assert f"no such file, nor a {kind} preset ({', '.join(DATA_PRESETS[kind])})" in str(
            error.value
        )
    existing = tmp_path / "x.csv"
    existing.write_text("")
    assert resolve(kind, existing) == existing and resolve(kind, str(existing)) == str(existing)


@pytest.mark.parametrize(
    "argv, listed",
    [
        (["simulate", "--workload", "kth-sp3", "--platform", "kth-sp2"], WORKLOADS),
        (["simulate", "--workload", "kth-sp2", "--platform", "kth-sp3"], PLATFORMS),
        (["heatmap", "aris-nsa"], HEATMAPS),
        (["generate-workload", "--heatmap", "aris-nsa", "--jobs", "3", "--out", "w.csv"], HEATMAPS),
        (["experiment-sim", "--heatmap", "aris-nsa", "--out", "exp"], HEATMAPS),
    ],
)
def test_cli_names_the_unknown_preset_and_lists_the_known_ones(
    tmp_path, monkeypatch, capsys, argv, listed
):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert ("kth-sp3" in err or "aris-nsa" in err) and all(name in err for name in listed)
    assert list(tmp_path.iterdir()) == []


def _options(parser):
    """(command, option or positional, help) of every argument of every subcommand."""
    commands = next(a for a in parser._actions if a.dest == "command").choices
    for command, sub in commands.items():
        for action in sub._actions:
            yield command, (action.option_strings or [action.dest])[0], action.help or ""


def test_every_flag_taking_a_heatmap_workload_or_platform_lists_the_presets_in_its_help():
    wanted = {"--heatmap": HEATMAPS, "--workload": WORKLOADS, "--platform": PLATFORMS}
    seen = []
    for command, option, text in _options(build_parser()):
        names = wanted.get(option, HEATMAPS if (command, option) == ("heatmap", "file") else None)
        if names is not None:
            seen.append((command, option))
            text = " ".join(text.split())
            assert all(name in text for name in names), (command, option, text)
    assert {
        ("simulate", "--workload"),
        ("simulate", "--platform"),
        ("simulate", "--heatmap"),
        ("compare", "--workload"),
        ("heatmap", "file"),
        ("generate-workload", "--heatmap"),
        ("experiment-sim", "--heatmap"),
        ("experiment-sim", "--platform"),
    } <= set(seen)


def test_simulate_kth_sp2_preset_in_an_empty_folder(tmp_path, monkeypatch, capsys):
    """The whole trace (28,467 jobs) under EASY: about half a second."""
    monkeypatch.chdir(tmp_path)
    code = main(
        [
            "simulate",
            "--workload",
            "kth-sp2",
            "--platform",
            "kth-sp2",
            "--scheduler",
            "easy",
            "--out",
            "run",
            "--quiet",
            "--json",
        ]
    )
    assert code == 0
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert (
        summary["jobs"] == KTH_JOBS
        and summary["workload"] == "kth-sp2"
        and summary["platform"] == "kth-sp2"
    )
    assert summary["cleaning"]["records"] == KTH_RECORDS
    with open(tmp_path / "run" / "jobs.csv") as handle:
        assert sum(1 for _ in handle) == KTH_JOBS + 1
    assert 0 < summary["utilization"] <= 1


def test_heatmap_command_reads_a_preset(capsys):
    assert main(["heatmap", "g5k-nas", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["file"] == "g5k-nas" and len(document["applications"]) == 13


def test_experiment_sim_on_the_real_aris_heatmap(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingPairsWarning)
        code = main(
            [
                "experiment-sim",
                "--heatmap",
                "aris-nas",
                "--default-speedup",
                "1.0",
                "--jobs",
                "40",
                "--experiments",
                "1",
                "--schedulers",
                "easy,easy-co",
                "--workers",
                "1",
                "--no-plots",
                "--no-progress",
                "--out",
                "exp",
            ]
        )
    assert code == 0
    spec = json.loads((tmp_path / "exp" / "spec.json").read_text())
    assert spec["heatmap"] == "aris-nas" and len(spec["applications"]) == 33
    assert spec["platform"]["name"] == "aris"
    assert (tmp_path / "exp" / "summary.csv").is_file()
