"""One meaning per policy name: `cosched elastic --algorithm NAME` and `cosched simulate --scheduler
NAME` start the same jobs at the same times on the same small workload (compute-only jobs, so both
front ends know the run times exactly; distinct submit times, so the two event orders agree)."""

import csv
import json

import numpy as np
import pytest

from cosched.cli import main
from cosched.simulator.elastic.traces import node_bounds

NODES = 8
SPEED = 1e9  # flop/s per node of the ElastiSim platform
TIME_TOLERANCE = 1e-6  # seconds: both front ends compute the same sums of run times
# (submit time, run time on the requested nodes, requested nodes): the head J1 needs every node, J3
# would delay
# it (EASY holds it back, greedy first fit starts it), J4 is short enough to backfill
RIGID_JOBS = [
    (0, 100, 6),
    (1, 50, 8),
    (2, 30, 1),
    (3, 200, 1),
    (4, 20, 1),
    (5, 10, 4),
    (6, 60, 2),
    (7, 15, 3),
]
# moldable in [ceil(n / 2), 2 n] (n <= 4: never clipped to the platform, so every key orders alike)
MOLDABLE_JOBS = [
    (0, 100, 2),
    (1, 40, 4),
    (2, 30, 1),
    (3, 80, 3),
    (4, 20, 2),
    (5, 10, 4),
    (6, 60, 1),
    (7, 25, 2),
]
LOW, HIGH = 0.5, 2.0


def many_ties_jobs() -> list[tuple[int, int, int]]:
    """Rigid jobs with many equal sizes, times and predicted ends, in six blocks 1,000 s apart.

    Each block: six jobs of 2 nodes for 100 s at once (four start and end together); then jobs of 3
    and 2 nodes that end together at +400, a 2-node job, a 4-node head blocked until +400, and a
    1-node 500 s job that may backfill only if the tie between the two equal predicted ends is
    broken by node count (the extra node at the shadow time is then 2, else 0). The one tie rule
    (job index) starts it at +400 on both front ends."""
    jobs = []
    for block in range(6):
        t = block * 1000
        jobs += [(t, 100, 2)] * 6
        t += 300
        jobs += [(t, 100, 3), (t + 1, 99, 2), (t + 2, 200, 2), (t + 3, 50, 4), (t + 4, 500, 1)]
    return jobs


def _simulate(tmp_path, name, jobs, moldable):
    workload = tmp_path / "workload.csv"
    workload.write_text(
        "job_id,submit_time,run_time,cores,estimate\n"
        + "".join(
            f"{index + 1},{submit},{run},{size},{run}\n"
            for index, (submit, run, size) in enumerate(jobs)
        )
    )
    platform = tmp_path / "platform.json"
    platform.write_text(json.dumps({"nodes": NODES, "sockets_per_node": 1, "cores_per_socket": 1}))
    out = tmp_path / f"simulate-{name}"
    extra = (
        [
            "--elastic-fraction",
            "1",
            "--elastic-kind",
            "moldable",
            "--elastic-range",
            f"{LOW},{HIGH}",
        ]
        if moldable
        else []
    )
    assert (
        main(
            [
                "simulate",
                "--workload",
                str(workload),
                "--platform",
                str(platform),
                "--scheduler",
                name,
                "--run-times",
                "--out",
                str(out),
                "--json",
                "--quiet",
                *extra,
            ]
        )
        == 0
    )
    with open(out / "jobs.csv", newline="") as handle:
        rows = sorted(csv.DictReader(handle), key=lambda row: int(row["job_id"]))
    return [(float(row["start_time"]), float(row["end_time"])) for row in rows]


def _elastic(tmp_path, name, jobs, moldable):
    folder = tmp_path / f"elastic-{name}"
    folder.mkdir()
    (folder / "model.json").write_text(
        json.dumps(
            {
                "phases": [
                    {
                        "tasks": [
                            {"type": "cpu", "flops": "flops", "computation_pattern": "all_ranks"}
                        ]
                    }
                ]
            }
        )
    )
    sizes = np.array([size for _, _, size in jobs])
    low, high = node_bounds(sizes, LOW, HIGH, NODES)
    entries = []
    for index, (submit, run, size) in enumerate(jobs):
        job = (
            {"type": "rigid", "num_nodes": size}
            if not moldable
            else {
                "type": "moldable",
                "num_nodes_min": int(low[index]),
                "num_nodes_max": int(high[index]),
            }
        )
        entries.append(
            {
                **job,
                "submit_time": submit,
                "application_model": str(folder / "model.json"),
                "arguments": {"flops": run * size * SPEED},
            }
        )
    (folder / "jobs.json").write_text(json.dumps({"jobs": entries}))
    (folder / "platform.json").write_text(
        json.dumps(
            {
                "clusters": [
                    {"prefix": "n", "radical": f"0-{NODES - 1}", "speed": SPEED, "bw": "10GBps"}
                ]
            }
        )
    )
    (folder / "configuration.json").write_text(
        json.dumps(
            {
                "jobs_file": str(folder / "jobs.json"),
                "platform_file": str(folder / "platform.json"),
                "schedule_on_job_submit": True,
                "schedule_on_job_finalize": True,
            }
        )
    )
    assert (
        main(
            [
                "elastic",
                str(folder / "configuration.json"),
                "--scheduler",
                name,
                "--out",
                str(folder / "out"),
                "--quiet",
                "--json",
            ]
        )
        == 0
    )
    with open(folder / "out" / "job_statistics.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    return [(float(row["Start Time"]), float(row["End Time"])) for row in rows]


@pytest.mark.parametrize(
    "name, moldable",
    [
        ("fcfs-rigid", False),
        ("sjf-rigid", False),
        ("fcfs-rigid-greedy", False),
        ("sjf-rigid-greedy", False),
        ("fcfs-malleable", True),
        ("sjf-malleable", True),
        ("srtf", True),
        ("drf", True),
    ],
)
def test_both_front_ends_run_the_same_policy(tmp_path, capsys, name, moldable):
    jobs = MOLDABLE_JOBS if moldable else RIGID_JOBS
    simulated = _simulate(tmp_path, name, jobs, moldable)
    elastic = _elastic(tmp_path, name, jobs, moldable)
    capsys.readouterr()
    assert np.allclose(elastic, simulated, atol=TIME_TOLERANCE), (elastic, simulated)


def test_the_two_readings_of_rigid_fcfs_differ_here(tmp_path, capsys):
    """The workload above tells EASY from greedy first fit (else the test above would not tell them
    apart)."""
    easy = _simulate(tmp_path, "fcfs-rigid", RIGID_JOBS, False)
    greedy = _simulate(tmp_path, "fcfs-rigid-greedy", RIGID_JOBS, False)
    capsys.readouterr()
    assert (
        easy[1][0] == pytest.approx(100.0) and greedy[1][0] > 200.0
    )  # J3 delays the head under greedy only


@pytest.mark.parametrize("name", ["easy", "fcfs-rigid"])
def test_both_front_ends_break_ties_between_equal_predicted_ends_alike(tmp_path, capsys, name):
    jobs = many_ties_jobs()
    simulated = _simulate(tmp_path, name, jobs, False)
    elastic = _elastic(tmp_path, "fcfs-rigid", jobs, False)
    capsys.readouterr()
    assert np.allclose(elastic, simulated, atol=TIME_TOLERANCE), (elastic, simulated)


def equal_estimates_jobs() -> list[tuple[int, int, int]]:
    """Rigid jobs queued with equal sizes and run times, in four blocks 1,000 s apart.

    Each block: an 8-node job for 100 s, then six 3-node jobs of 50 s submitted while it runs; at
    its end two of the six start and the rest wait, so which two is the tie rule's choice (the one
    rule: job index, lowest first)."""
    jobs = []
    for block in range(4):
        t = block * 1000
        jobs += [(t, 100, NODES)] + [(t + 1 + k, 50, 3) for k in range(6)]
    return jobs


@pytest.mark.parametrize("name", ["sjf-rigid", "sjf-rigid-greedy"])
def test_both_front_ends_order_equal_estimates_alike(tmp_path, capsys, name):
    """Shortest first over equal estimates: both front ends order by the one SJF key
    (`co_ordering.sjf_key`), equal keys by job index, so the same jobs start first."""
    jobs = equal_estimates_jobs()
    simulated = _simulate(tmp_path, name, jobs, False)
    elastic = _elastic(tmp_path, name, jobs, False)
    capsys.readouterr()
    assert simulated[1][0] == pytest.approx(100.0) and simulated[6][0] > 100.0  # ties decide
    assert np.allclose(elastic, simulated, atol=TIME_TOLERANCE), (elastic, simulated)
