"""The built-in policies of 001 §6.3 run on every job type; malleable policies use idle nodes; plots
are written."""

import json

import pytest

from cosched.cli import main
from cosched.simulator.elastic.algorithms import ALGORITHMS, make_algorithm

from .scenario import compute_model, run_scenario, write_scenario


def _workload():
    jobs = []
    for index in range(12):
        kind = ("rigid", "moldable", "malleable", "evolving", "adaptive", "malleable")[index % 6]
        job = {
            "type": kind,
            "submit_time": index * 2,
            "arguments": {"iterations": 4 + index % 3, "flops": (5 + index) * 1e9},
        }
        if kind == "rigid":
            job["num_nodes"] = 2
        else:
            job["num_nodes_min"], job["num_nodes_max"] = 1, 4
        jobs.append(job)
    return jobs


@pytest.mark.parametrize("name", list(ALGORITHMS))
def test_policy_completes_every_job_of_every_type(tmp_path, name):
    model = compute_model(pattern="all_ranks")
    model["phases"][0]["evolving_request"] = "num_nodes + 1"
    sim = run_scenario(write_scenario(tmp_path, _workload(), model, nodes=6), make_algorithm(name))
    assert all(run.status == "completed" for run in sim.runs)
    resized = sum(run.reconfigurations for run in sim.runs)
    assert (resized == 0) == ("-rigid" in name)


def test_malleable_fcfs_finishes_no_later_than_rigid_fcfs(tmp_path):
    jobs = [
        {
            "type": "malleable",
            "submit_time": index,
            "num_nodes_min": 1,
            "num_nodes_max": 4,
            "arguments": {"iterations": 8, "flops": 8e9},
        }
        for index in range(6)
    ]
    ends = {}
    for name in ("fcfs-rigid", "fcfs-malleable"):
        sim = run_scenario(
            write_scenario(tmp_path, jobs, compute_model(pattern="all_ranks"), nodes=6),
            make_algorithm(name),
        )
        ends[name] = max(run.end for run in sim.runs)
    assert ends["fcfs-malleable"] <= ends["fcfs-rigid"]


def test_cli_writes_plots_jobs_and_summary(tmp_path, capsys):
    config = write_scenario(tmp_path, _workload(), nodes=6)
    out = tmp_path / "out"
    assert (
        main(
            [
                "elastic",
                str(config),
                "--scheduler",
                "fcfs-malleable",
                "--out",
                str(out),
                "--plots",
                "--json",
                "--quiet",
            ]
        )
        == 0
    )
    summary = json.loads(capsys.readouterr().out)
    assert summary["completed"] == 12 and summary["algorithm"] == "fcfs-malleable"
    assert set(summary["by_type"]) == {"rigid", "moldable", "malleable", "evolving", "adaptive"}
    for name in (
        "plots/gantt.png",
        "plots/utilization.png",
        "plots/wait_turnaround.png",
        "jobs.csv",
        "summary.json",
        "job_statistics.csv",
        "node_utilization.csv",
    ):
        assert (out / name).stat().st_size > 0, name
    header = (out / "jobs.csv").read_text().splitlines()[0]
    assert header.endswith("reconfigurations,node_seconds,node_counts")


def test_the_command_lists_every_built_in_policy():
    from cosched.simulator.elastic.cli import POLICY_NAMES

    assert POLICY_NAMES == ALGORITHMS
