"""Refuse early, never half-way: every scheduler, option and input is checked against the platform
before the first simulation, and a combination that cannot run is one error line naming it
(docs/cli-conventions.md).
"""

from __future__ import annotations

import json

import pytest

from cosched.cli import main

HEADER = "name_A,procs_A,compact_A,name_B,procs_B,compact_B,co_A_B,co_B_A\n"
WORKLOAD = "job_id,submit_time,run_time,cores,estimate,app\n" + "".join(
    f"{i},{i * 7 % 50},{5 + i % 13},3,{20 + i % 13},{'ab'[i % 2]}\n" for i in range(12)
)


@pytest.fixture
def odd_platform(tmp_path):
    """Nodes of 3 cores: no half-socket binding, so no co-scheduler can run."""
    path = tmp_path / "odd.json"
    path.write_text(
        json.dumps({"name": "odd", "nodes": 8, "sockets_per_node": 1, "cores_per_socket": 3})
    )
    return path


@pytest.fixture
def simulations(monkeypatch):
    """How many simulations started (the engine's entry point, wherever it is imported from)."""
    import cosched.simulator.engine as engine

    started = []
    original = engine.Engine.run

    def run(self):
        started.append(self.scheduler)
        return original(self)

    monkeypatch.setattr(engine.Engine, "run", run)
    return started


def _inputs(tmp_path):
    workload, heatmap = tmp_path / "w.csv", tmp_path / "h.csv"
    workload.write_text(WORKLOAD)
    heatmap.write_text(HEADER + "a,3,10,b,3,20,15,30\n")
    return workload, heatmap


@pytest.mark.parametrize(
    "command, schedulers",
    [
        ("compare", "easy,conservative,filler"),
        ("simulate", "sjf-co"),
        ("compare", "fcfs,popularity"),
    ],
)
def test_a_scheduler_the_platform_cannot_run_is_refused_before_any_simulation(
    command, schedulers, tmp_path, capsys, odd_platform, simulations
):
    workload, heatmap = _inputs(tmp_path)
    out = tmp_path / "out"
    code = main(
        [
            command,
            "--workload",
            str(workload),
            "--platform",
            str(odd_platform),
            "--heatmap",
            str(heatmap),
            "--scheduler",
            schedulers,
            "--out",
            str(out),
            "--quiet",
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1
    assert "cannot run on platform 'odd'" in err and "field '--scheduler'" in err
    assert simulations == [] and not out.exists()


def test_the_bundled_kth_trace_refuses_filler_at_once(capsys, simulations):
    """kth-sp2 has one core per node: compare used to simulate easy and conservative first."""
    code = main(
        [
            "compare",
            "--workload",
            "kth-sp2",
            "--platform",
            "kth-sp2",
            "--limit",
            "50",
            "--scheduler",
            "easy,conservative,filler",
            "--quiet",
        ]
    )
    assert code == 2 and simulations == []
    assert "scheduler 'filler' cannot run on platform 'kth-sp2'" in capsys.readouterr().err


def test_a_grid_refuses_before_its_first_run(tmp_path, capsys, odd_platform, simulations):
    _, heatmap = _inputs(tmp_path)
    out = tmp_path / "grid"
    code = main(
        [
            "experiment-sim",
            "--preset",
            "example-small",
            "--heatmap",
            str(heatmap),
            "--platform",
            str(odd_platform),
            "--jobs",
            "6",
            "--experiments",
            "1",
            "--scheduler",
            "easy,sjf-co",
            "--workers",
            "1",
            "--out",
            str(out),
            "--quiet",
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "'sjf-co' cannot run" in err
    assert simulations == [] and not out.exists()


def test_execute_refusing_an_out_of_another_run_says_so_in_one_line(tmp_path, capsys):
    out = tmp_path / "run"
    out.mkdir()
    (out / "config.json").write_text('{"tasks": {"other": "true"}}')
    code = main(
        ["execute", "--kernels", "compute", "--kernel-work", "5", "--out", str(out), "--quiet"]
    )
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "different execute run" in err
