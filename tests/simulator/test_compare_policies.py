"""`cosched compare` with a real cluster: --partitions and --priority, as `cosched simulate` takes
them (cosched.simulator.cli, cosched.simulator.compare)."""

from __future__ import annotations

import json

import pytest

from cosched.cli import main

# SWF records: id submit wait run procs cpu mem req_procs req_time req_mem status user group app
# queue partition preceding think
SWF_LINE = "{id} {submit} -1 {run} {procs} -1 -1 {procs} {run} -1 1 {user} 1 -1 {queue} -1 -1 -1\n"

# queue 0 -> "a" (nodes 0-1), queue 1 -> "b" (nodes 2-3, at most 30 s requested)
PARTITIONS = {
    "map_by": "queue",
    "partitions": [
        {"name": "a", "nodes": "0-1", "swf_ids": [0]},
        {"name": "b", "nodes": "2-3", "swf_ids": [1], "max_time": 30},
    ],
}


def write(tmp_path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def swf(tmp_path, rows) -> str:
    """(submit, run, procs, user, queue) per job; the requested time is the run time."""
    return write(
        tmp_path,
        "jobs.swf",
        "".join(
            SWF_LINE.format(id=i + 1, submit=s, run=r, procs=p, user=u, queue=q)
            for i, (s, r, p, u, q) in enumerate(rows)
        ),
    )


def four_nodes(tmp_path) -> str:
    return write(tmp_path, "platform.json", json.dumps({"nodes": 4, "cores_per_socket": 1}))


def compare_rows(capsys, *argv) -> list[dict]:
    code = main(["compare", *map(str, argv), "--json", "--quiet"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def refused(capsys, *argv) -> str:
    code = main(["compare", *map(str, argv)])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    return err


def test_compare_runs_each_job_in_its_partition_and_counts_rejections(tmp_path, capsys):
    # Job 3 (queue 1, 40 s) breaks b's 30 s limit: rejected. Job 4 (queue 0) arrives at 2 while node
    # 3 of b is idle: it waits for a's nodes until job 1 ends at 10, so it ends at 15 and waits 8;
    # jobs 1 and 2 start at 0. Every scheduler gives this schedule (no job can backfill).
    workload = swf(
        tmp_path, [(0, 10, 2, 1, 0), (0, 10, 1, 1, 1), (1, 40, 1, 1, 1), (2, 5, 1, 1, 0)]
    )
    partitions = write(tmp_path, "partitions.json", json.dumps(PARTITIONS))
    out = tmp_path / "out"
    rows = compare_rows(
        capsys,
        "--workload",
        workload,
        "--platform",
        four_nodes(tmp_path),
        "--partitions",
        partitions,
        "--scheduler",
        "fcfs,easy,conservative",
        "--out",
        out,
    )
    assert [row["scheduler"] for row in rows] == ["fcfs", "easy", "conservative"]
    for row in rows:
        assert row["jobs"] == 3 and row["rejected_partition_limits"] == 1
        assert row["makespan"] == 15.0 and row["max_wait"] == 8.0
        assert row["mean_wait"] == pytest.approx(8 / 3)
        assert row["partitions"] == partitions
    assert "partitions" in (out / "compare.csv").read_text().splitlines()[0].split(",")


def test_compare_orders_the_queue_by_the_multifactor_priority(tmp_path, capsys):
    # docs/partitions.md's worked example: job 1 (user 1) holds the 4 nodes from 0 to 100; job 2
    # (user 1, 4 nodes, submitted at 10) and job 3 (user 2, 1 node, at 50) wait. Submit order runs
    # job 2 at 100 (wait 90), job 3 at 110; the priority runs job 3 first (7090 < 11300), so job 2
    # starts at 110 and waits 100.
    workload = swf(tmp_path, [(0, 100, 4, 1, 0), (10, 10, 4, 1, 0), (50, 10, 1, 2, 0)])
    common = ("--workload", workload, "--platform", four_nodes(tmp_path), "--baseline", "fcfs")
    plain = compare_rows(capsys, *common, "--scheduler", "fcfs,easy")
    weights = "age=1000,fairshare=10000,job_size=1000,partition=1000,max_age=1000,decay_half_life=0"
    ordered = compare_rows(
        capsys,
        *common,
        "--scheduler",
        "fcfs,easy",
        "--priority",
        "multifactor",
        "--priority-weights",
        weights,
    )
    assert [row["max_wait"] for row in plain] == [90.0, 90.0]
    assert [row["max_wait"] for row in ordered] == [100.0, 100.0]
    assert all(row["priority"] == "multifactor" for row in ordered)


def test_compare_refuses_partitions_for_a_co_scheduler_before_any_run(tmp_path, capsys):
    workload = swf(tmp_path, [(0, 10, 1, 1, 0)])
    out = tmp_path / "out"
    err = refused(
        capsys,
        "--workload",
        workload,
        "--platform",
        write(tmp_path, "platform.json", json.dumps({"nodes": 4, "cores_per_socket": 2})),
        "--partitions",
        write(tmp_path, "partitions.json", json.dumps(PARTITIONS)),
        "--scheduler",
        "easy,easy-co",
        "--out",
        out,
    )
    assert "--partitions" in err and "easy-co" in err
    assert not (out / "compare.csv").exists()


@pytest.mark.parametrize("command", ["simulate", "compare"])
def test_partitions_with_compat_cqsim_say_why_they_are_refused(tmp_path, capsys, command):
    workload = swf(tmp_path, [(0, 10, 1, 1, 0)])
    code = main(
        [
            command,
            "--workload",
            workload,
            "--platform",
            four_nodes(tmp_path),
            "--partitions",
            write(tmp_path, "partitions.json", json.dumps(PARTITIONS)),
            "--compat",
            "cqsim",
            "--scheduler",
            "easy",
            *(["--baseline", "easy"] if command == "compare" else []),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1
    assert "without partitions" in err and "leave out --partitions or --compat" in err


def test_compare_with_another_partition_file_is_another_comparison(tmp_path, capsys):
    workload = swf(tmp_path, [(0, 10, 2, 1, 0), (0, 10, 1, 1, 1), (2, 5, 1, 1, 0)])
    out = tmp_path / "out"
    common = ("--workload", workload, "--platform", four_nodes(tmp_path), "--out", out)
    first = write(tmp_path, "partitions.json", json.dumps(PARTITIONS))
    compare_rows(capsys, *common, "--scheduler", "fcfs", "--partitions", first)
    swapped = {
        **PARTITIONS,
        "partitions": [
            {**PARTITIONS["partitions"][0], "nodes": "0-2"},
            {**PARTITIONS["partitions"][1], "nodes": "3"},
        ],
    }
    second = write(tmp_path, "other.json", json.dumps(swapped))
    err = refused(capsys, *common, "--scheduler", "fcfs", "--partitions", second)
    assert "--force" in err


def test_compare_gives_each_scheduler_the_schedule_simulate_gives(tmp_path):
    # one definition of the options: compare's rows are simulate's runs with the same partitions and
    # priority (three users, both partitions busy, some jobs rejected by b's 30 s limit)
    import numpy as np

    from cosched.simulator.compare import compare
    from cosched.simulator.metrics import summarize
    from cosched.simulator.partitions import load_partitions
    from cosched.simulator.platform import Platform
    from cosched.simulator.simulation import simulate
    from cosched.simulator.workload import read_swf

    rng = np.random.default_rng(7)
    rows = [
        (int(s), int(r), int(p), int(u), int(q))
        for s, r, p, u, q in zip(
            np.sort(rng.integers(0, 300, 40)),
            rng.integers(1, 60, 40),
            rng.integers(1, 3, 40),
            rng.integers(1, 4, 40),
            rng.integers(0, 2, 40),
        )
    ]
    workload = read_swf(swf(tmp_path, rows))
    platform = Platform(4)
    assignment = load_partitions(
        write(tmp_path, "partitions.json", json.dumps(PARTITIONS)), platform
    ).assign(workload, 1)
    assert 0 < assignment.rejected < len(workload)
    priority = {"priority": "multifactor", "priority_weights": "slurm-example,max_age=600"}
    schedulers = ["fcfs", "easy", "conservative", "sjf"]
    frame = compare(
        assignment.workload,
        platform,
        schedulers,
        partitions=assignment,
        scheduler_options=priority,
    )
    for row in frame.to_dict("records"):
        alone = summarize(
            simulate(
                assignment.workload,
                platform,
                row["scheduler"],
                partitions=assignment,
                scheduler_options=priority,
            )
        )
        for metric in ("makespan", "mean_wait", "max_wait", "mean_bounded_slowdown"):
            assert row[metric] == alone[metric], (row["scheduler"], metric)
