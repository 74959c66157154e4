"""The action log replayed from outside (action_replay.py) for the baseline and the six
mechanisms: on the bundled KTH-SP2 trace at reduced size here, on the whole of it and on the first
20,000 CEA-Curie jobs in the slow suite."""

from pathlib import Path

import pytest

from cosched.cli import main
from cosched.simulator.hybrid.mechanisms import MECHANISMS
from cosched.simulator.hybrid.models import checkpoint_periods
from cosched.simulator.hybrid.workload import read_hybrid_csv
from cosched.simulator.platform import load_platform as preset

from .action_replay import violations

CURIE = (
    Path(__file__).resolve().parents[3]
    / ".."
    / "shared"
    / "data"
    / "swf"
    / "CEA-Curie-2011-2.1-cln.swf.gz"
)


def replayed(tmp_path, workload, platform, mechanism, limit, *extra):
    out, log = tmp_path / mechanism, tmp_path / f"{mechanism}-actions.csv"
    assert (
        main(
            [
                "simulate",
                "--workload",
                str(workload),
                "--platform",
                platform,
                "--limit",
                str(limit),
                "--hybrid",
                mechanism,
                "--seed",
                "2",
                "--quiet",
                "--out",
                str(out),
                "--log-actions",
                str(log),
                *extra,
            ]
        )
        == 0
    )
    nodes = preset(platform).nodes
    hybrid = read_hybrid_csv(out / "workload.csv", preset(platform).cores_per_node)
    warning = (
        float(extra[extra.index("--preemption-warning") + 1])
        if "--preemption-warning" in extra
        else 120.0
    )
    # Daly's M (docs/hybrid.md)
    mtbf = float(extra[extra.index("--mtbf") + 1]) if "--mtbf" in extra else 50.0
    return violations(
        log,
        out / "workload.csv",
        out / "jobs.csv",
        checkpoint_periods(hybrid, mtbf).tolist(),
        nodes=nodes,
        mechanism=mechanism,
        warning=warning,
    )


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_kth_sp2_action_log_replays_without_violation(tmp_path, mechanism):
    assert replayed(tmp_path, "kth-sp2", "kth-sp2", mechanism, 2500) == []


@pytest.mark.parametrize("mechanism", ["n-paa", "cup-spaa"])
def test_kth_sp2_action_log_without_warning_and_with_failures(tmp_path, mechanism):
    assert (
        replayed(
            tmp_path,
            "kth-sp2",
            "kth-sp2",
            mechanism,
            2000,
            "--preemption-warning",
            "0",
            "--mtbf",
            "20",
        )
        == []
    )


def test_the_replay_finds_a_double_booked_node(tmp_path):
    """The checker is not blind: a log edited so that two jobs share a node is refused."""
    out, log = tmp_path / "run", tmp_path / "actions.csv"
    assert (
        main(
            [
                "simulate",
                "--workload",
                "kth-sp2",
                "--platform",
                "kth-sp2",
                "--limit",
                "300",
                "--hybrid",
                "n-paa",
                "--quiet",
                "--out",
                str(out),
                "--log-actions",
                str(log),
            ]
        )
        == 0
    )
    lines = log.read_text().splitlines()
    starts = [k for k, line in enumerate(lines) if ",start," in line]
    first, second = lines[starts[0]].split(","), lines[starts[1]].split(",")
    second[4] = first[4]  # the second job starts on the first one's nodes
    lines[starts[1]] = ",".join(second)
    log.write_text("\n".join(lines) + "\n")
    hybrid = read_hybrid_csv(out / "workload.csv", 1)
    found = violations(
        log,
        out / "workload.csv",
        out / "jobs.csv",
        checkpoint_periods(hybrid).tolist(),
        nodes=100,
        mechanism="n-paa",
    )
    assert any("not free" in problem for problem in found)


@pytest.mark.slow
@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_whole_kth_sp2_action_log_replays_without_violation(tmp_path, mechanism):
    assert replayed(tmp_path, "kth-sp2", "kth-sp2", mechanism, 28467) == []


@pytest.mark.slow
@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_curie_first_20000_jobs_action_log_replays_without_violation(tmp_path, mechanism):
    assert replayed(tmp_path, CURIE.resolve(), "curie", mechanism, 20000) == []
