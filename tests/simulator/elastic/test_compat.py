"""elastisim-python algorithm files run unmodified; the example project runs end to end from its
root."""

import csv
import shutil
import sys
from pathlib import Path

import pytest

from cosched.cli import main
from cosched.errors import InputError
from cosched.simulator.elastic.cli import PRESET_ROOT
from cosched.simulator.elastic.compat import JobState, JobType, load_algorithm

from .scenario import compute_model, run_scenario, write_scenario

DATA = Path(__file__).parent / "data"
FCFS = PRESET_ROOT / "example" / "algorithm.py"  # an FCFS file as ElastiSim users write it


def test_fcfs_algorithm_file_runs_unmodified(tmp_path):
    schedule = load_algorithm(FCFS)
    assert "elastisim_python" not in sys.modules  # only while loading the file
    jobs = [
        {
            "type": "rigid",
            "submit_time": 0,
            "num_nodes": 2,
            "arguments": {"iterations": 2, "flops": 1e9},
        },
        {
            "type": "moldable",
            "submit_time": 0,
            "num_nodes_min": 1,
            "num_nodes_max": 8,
            "arguments": {"iterations": 2, "flops": 1e9},
        },
        {
            "type": "malleable",
            "submit_time": 0.5,
            "num_nodes_min": 1,
            "num_nodes_max": 8,
            "arguments": {"iterations": 5, "flops": 8e9},
        },
    ]
    # submitted after the moldable job ended (at 1/3 s) and before the rigid one ends (at 1 s): it
    # starts on the
    # 6 free nodes and is expanded at its first scheduling point after the rigid job's nodes are
    # free
    sim = run_scenario(write_scenario(tmp_path, jobs, compute_model()), schedule)
    assert [run.status for run in sim.runs] == ["completed"] * 3
    assert sim.runs[1].history[0][1] == 6  # moldable: all 6 nodes left free at time 0
    assert max(count for _, count in sim.runs[2].history) == 8  # malleable: expanded to its maximum
    views = [run.view for run in sim.runs]
    assert all(
        view.state == JobState.COMPLETED and view.completed_phases == view.total_phase_count
        for view in views
    )
    assert views[0].type == JobType.RIGID
    assert views[0].makespan == pytest.approx(views[0].end_time - views[0].start_time)


def test_main_block_does_not_run_and_module_is_temporary():
    schedule = load_algorithm(DATA / "main_guard.py")
    assert callable(schedule) and "elastisim_python" not in sys.modules


def test_algorithm_file_without_schedule_is_bad_input(tmp_path):
    path = tmp_path / "empty.py"
    path.write_text("from elastisim_python import pass_algorithm\n")
    with pytest.raises(InputError, match="defines no schedule"):
        load_algorithm(path)
    path.write_text("def schedule(jobs, nodes, system:\n")
    with pytest.raises(InputError, match="syntax error"):
        load_algorithm(path)


def test_example_project_from_its_root_writes_all_job_statistics(
    shared_data, tmp_path, monkeypatch, capsys
):
    root = tmp_path / "example-project"
    shutil.copytree(shared_data("elastisim/example-project"), root)
    monkeypatch.chdir(root)
    out = tmp_path / "out"
    assert (
        main(
            [
                "elastic",
                "data/input/configuration.json",
                "--algorithm",
                str(FCFS),
                "--out",
                str(out),
            ]
        )
        == 0
    )
    with open(out / "job_statistics.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert list(rows[0]) == [
        "ID",
        "Type",
        "Submit Time",
        "Start Time",
        "End Time",
        "Wait Time",
        "Makespan",
        "Turnaround Time",
        "Status",
    ]
    assert len(rows) == 500 and {row["Status"] for row in rows} == {"completed"}
    assert [int(row["ID"]) for row in rows] == list(range(500))
    for row in rows:
        assert float(row["Wait Time"]) == pytest.approx(
            float(row["Start Time"]) - float(row["Submit Time"])
        )
        assert float(row["Turnaround Time"]) == pytest.approx(
            float(row["End Time"]) - float(row["Submit Time"])
        )
    for name in ("node_utilization.csv", "pfs_utilization.csv", "jobs.csv", "summary.json"):
        assert (out / name).stat().st_size > 0
    assert not (root / "data" / "output").exists()  # --out overrides every output path
    assert "completed" in capsys.readouterr().out


def test_runtime_arguments_and_gpu_states_reach_the_job(tmp_path):
    seen = []

    def schedule(jobs, nodes, system):
        for job in jobs:
            if job.state == JobState.PENDING:
                job.assign_num_gpus_per_node(1)
                job.update_runtime_argument("factor", 3)
                job.assign(nodes[:1])
        if system["invocation_type"].name == "INVOKE_JOB_COMPLETED":
            seen.append([gpu.state.name for gpu in nodes[0].gpus])

    model = {
        "phases": [
            {"tasks": [{"type": "gpu", "flops": "factor * 1e9", "computation_pattern": "uniform"}]}
        ]
    }
    jobs = [
        {
            "type": "moldable",
            "submit_time": 0,
            "num_nodes_min": 1,
            "num_nodes_max": 2,
            "num_gpus_per_node_min": 1,
            "num_gpus_per_node_max": 2,
            "arguments": {"factor": 1},
        }
    ]
    sim = run_scenario(
        write_scenario(
            tmp_path,
            jobs,
            model,
            properties={"num_gpus": 2, "flops_per_gpu": "1Gf", "gpu_to_gpu_bw": "1GBps"},
        ),
        schedule,
    )
    assert sim.runs[0].end == pytest.approx(3.0)  # the runtime argument, on 1 GPU of 1 Gflop/s
    assert seen == [["FREE", "FREE"]]
    assert sim.node_views[0].gpus[0].state.name == "FREE"


def test_sensing_series_follow_compute_and_io(tmp_path, capsys):
    # 2 nodes compute 3 s, then write 2 GB over both (2 flows at 1 GB/s on a 2 GB/s link: 1 s);
    # sensing every 1 s
    model = {
        "phases": [
            {
                "tasks": [
                    {"type": "cpu", "flops": 3e9, "computation_pattern": "uniform"},
                    {"type": "pfs_write", "bytes": 2e9, "pattern": "all_ranks"},
                ]
            }
        ]
    }
    jobs = [{"type": "rigid", "submit_time": 0, "num_nodes": 2}]
    sensing = {
        "sensing": True,
        "sensing_interval": 1,
        "cpu_utilization": "c.csv",
        "pfs_utilization": "p.csv",
    }
    config = write_scenario(tmp_path, jobs, model, nodes=3, config=sensing)
    out = tmp_path / "sensed"
    assert (
        main(["elastic", str(config), "--scheduler", "fcfs-rigid", "--out", str(out), "--quiet"])
        == 0
    )
    with open(out / "cpu_utilization.csv", newline="") as handle:
        cpu = list(csv.reader(handle))
    assert cpu[0] == ["Time", "n0", "n1", "n2"]
    assert [[float(value) for value in row] for row in cpu[1:]] == [
        [1, 1, 1, 0],
        [2, 1, 1, 0],
        [3, 1, 1, 0],
        [4, 0, 0, 0],
    ]
    with open(out / "pfs_utilization.csv", newline="") as handle:
        pfs = list(csv.reader(handle))
    assert pfs[0] == ["Time", "Read", "Write", "Read (rel.)", "Write (rel.)"]
    assert [float(value) for value in pfs[4]] == [4, 0, 2e9, 0, 1]
