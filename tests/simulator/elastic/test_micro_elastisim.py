"""Micro projects run in the real ElastiSim: cosched gives every job's start and end time, and every
row of node_utilization.csv, to ElastiSim's printed precision (its CSV files carry 6 significant
digits).

Each project isolates one behaviour of ElastiSim and SimGrid (TCP window of PFS flows, PFS sharing,
asynchronous I/O, per-node tasks, evolving requests, GPU links, scheduling points, wide-striped
burst buffers, ...). The projects come from two places: ../shared/peers/elastisim/micro (skipped
with a reason when absent) and tests/simulator/elastic/data/micro (bundled, with ElastiSim's outputs
in `expected/`)."""

import csv
import math
from pathlib import Path

import pytest

from cosched.cli import main

PRINTED_DIGITS = 6  # ElastiSim writes times with std::ostream's default precision
SHARED_MICRO = (
    Path(__file__).resolve().parents[3] / ".." / "shared" / "peers" / "elastisim" / "micro"
)
BUNDLED_MICRO = Path(__file__).parent / "data" / "micro"
SHARED_NAMES = (
    "m1_tcp_window",
    "m2_pfs_share",
    "m3_async",
    "m4_per_node",
    "m5_evolving",
    "m6_gpu_a2a",
    "m7_sched_point",
    "m8_bb_stripe",
    "s1_stripe_mixed",
    "s3_min_interval_epsilon",
    "s4_kill_then_submit",
    "s5_periodic_then_submit",
    "s6_stripe_ranks_busy_wait",
)


def _bundled():
    return (
        sorted(path.name for path in BUNDLED_MICRO.iterdir() if (path / "expected").is_dir())
        if BUNDLED_MICRO.is_dir()
        else []
    )


def printed_tolerance(value: float) -> float:
    """Half a unit of the last printed digit of `value` (plus rounding noise)."""
    if value == 0:
        return 1e-9
    exponent = math.floor(math.log10(abs(value)))
    return 0.5 * 10.0 ** (exponent - PRINTED_DIGITS + 1) * (1 + 1e-9)


def run_project(project: Path, out: Path, monkeypatch) -> dict:
    monkeypatch.chdir(project)
    assert (
        main(
            [
                "elastic",
                "data/input/configuration.json",
                "--algorithm",
                "algorithm.py",
                "--out",
                str(out),
                "--quiet",
            ]
        )
        == 0
    )
    with open(out / "job_statistics.csv", newline="") as handle:
        return {row["ID"]: row for row in csv.DictReader(handle)}


def node_rows(path: Path) -> dict:
    """node_utilization.csv as, per node, its rows (time, state, running jobs, expected jobs) in
    file order."""
    per_node: dict = {}
    with open(path, newline="") as handle:
        for row in csv.DictReader(handle):
            per_node.setdefault(row["Node"], []).append(
                (float(row["Time"]), row["State"], row["Running jobs"], row["Expected jobs"])
            )
    return per_node


def check_node_utilization(project: Path, out: Path) -> None:
    expected, got = (
        node_rows(project / "expected" / "node_utilization.csv"),
        node_rows(out / "node_utilization.csv"),
    )
    assert expected.keys() == got.keys()
    for node, rows in expected.items():
        assert [row[1:] for row in got[node]] == [row[1:] for row in rows], f"node {node}"
        for want, have in zip(rows, got[node]):
            assert abs(have[0] - want[0]) <= printed_tolerance(want[0]), (
                f"node {node}: {have} vs ElastiSim {want}"
            )


def check_against_expected(project: Path, tmp_path, monkeypatch) -> None:
    got = run_project(project, tmp_path / "out", monkeypatch)
    check_node_utilization(project, tmp_path / "out")
    with open(project / "expected" / "job_statistics.csv", newline="") as handle:
        expected = {row["ID"]: row for row in csv.DictReader(handle)}
    assert got.keys() == expected.keys()
    for job, row in expected.items():
        assert got[job]["Status"] == row["Status"], f"job {job}"
        for column in ("Start Time", "End Time"):
            want, have = float(row[column]), float(got[job][column])
            assert abs(have - want) <= printed_tolerance(want), (
                f"job {job} {column}: {have} vs ElastiSim {want}"
            )


@pytest.mark.parametrize("name", SHARED_NAMES)
def test_shared_micro_project_matches_elastisim(name, tmp_path, monkeypatch):
    project = SHARED_MICRO / name
    if not (project / "expected").is_dir():
        pytest.skip(f"the ElastiSim peer's micro projects are not present: {project}")
    check_against_expected(project, tmp_path, monkeypatch)


@pytest.mark.parametrize("name", _bundled())
def test_bundled_micro_project_matches_elastisim(name, tmp_path, monkeypatch):
    check_against_expected(BUNDLED_MICRO / name, tmp_path, monkeypatch)


@pytest.mark.parametrize("value", [52.4532, 4.50001, 317.667, 1.0, 113964.0, 0.000123457])
def test_printed_tolerance_is_half_a_unit_of_the_sixth_digit(value):
    tolerance = printed_tolerance(value)
    assert float(f"{value + 0.9 * tolerance:.{PRINTED_DIGITS}g}") == pytest.approx(value, rel=1e-12)
    assert float(f"{value + 1.1 * tolerance:.{PRINTED_DIGITS}g}") != pytest.approx(value, rel=1e-12)


# Known differences (docs/elastisim.md, "Where cosched still differs"): the project (in
# data/differences/), the job that shows it, ElastiSim's end of that job, cosched's. None is left:
# the last one (x34_end_after_local_compute) now matches.
DIFFERENCES: dict[str, tuple[str, float, float]] = {}
DIFFERENCE_TOLERANCE = 1e-6  # relative, on cosched's own end time


@pytest.mark.parametrize("name", sorted(DIFFERENCES))
def test_documented_difference_has_the_documented_size(name, tmp_path, monkeypatch):
    project = Path(__file__).parent / "data" / "differences" / name
    job, documented_elastisim, documented_cosched = DIFFERENCES[name]
    with open(project / "expected" / "job_statistics.csv", newline="") as handle:
        elastisim = next(row for row in csv.DictReader(handle) if row["ID"] == job)
    got = run_project(project, tmp_path / "out", monkeypatch)[job]
    assert abs(float(elastisim["End Time"]) - documented_elastisim) <= printed_tolerance(
        documented_elastisim
    )
    assert float(got["End Time"]) == pytest.approx(documented_cosched, rel=DIFFERENCE_TOLERANCE)


DOCS = Path(__file__).resolve().parents[3] / "docs" / "elastisim.md"


def _doc_row(name: str) -> list[str]:
    rows = [
        line
        for line in DOCS.read_text().splitlines()
        if line.startswith("|") and f"`{name}`" in line
    ]
    assert len(rows) == 1, f"docs/elastisim.md lists {name} {len(rows)} times"
    return [cell.strip() for cell in rows[0].strip("|").split("|")]


@pytest.mark.parametrize("name", _bundled())
def test_docs_list_each_matched_project_with_elastisim_end_times(name):
    with open(BUNDLED_MICRO / name / "expected" / "job_statistics.csv", newline="") as handle:
        ends = {row["End Time"] for row in csv.DictReader(handle)}
    listed = _doc_row(name)[-1].split(", ")
    assert set(listed) <= ends, f"{name}: the docs give {listed}, ElastiSim ended jobs at {ends}"


def test_docs_list_each_difference_and_only_those():
    folder = Path(__file__).parent / "data" / "differences"
    found = sorted(path.name for path in folder.iterdir()) if folder.is_dir() else []
    assert found == sorted(DIFFERENCES)
    for name, (_, elastisim, cosched) in DIFFERENCES.items():
        cells = _doc_row(name)
        assert cells[-2] == f"{elastisim:g} s" and cells[-1] == f"{cosched:.6g} s", name
