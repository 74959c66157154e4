"""Bad inputs: exit code 2 and one line naming the file, the job or task, and the field; nothing
written."""

import json

import pytest

from cosched.cli import main

from .scenario import RIGID, write_scenario


def _run(config, capsys, algorithm="fcfs-rigid", out=None):
    flag = (
        "--scheduler" if algorithm in ("fcfs-rigid", "fcfs-malleable") else "--algorithm"
    )  # a built-in or a file
    code = main(["elastic", str(config), flag, str(algorithm), "--out", str(out), "--quiet"])
    lines = capsys.readouterr().err.strip().splitlines()
    return code, lines


@pytest.mark.parametrize(
    "job, pattern",
    [
        (
            {**RIGID, "type": "elastic"},
            r"jobs\.json, field 'jobs\[0\]: type': must be one of rigid",
        ),
        (
            {k: v for k, v in RIGID.items() if k != "num_nodes"},
            r"jobs\.json, field 'jobs\[0\]: num_nodes': missing",
        ),
        (
            {**RIGID, "type": "malleable", "num_nodes_min": 4, "num_nodes_max": 2},
            r"field 'jobs\[0\]: num_nodes_max': below num_nodes_min=4",
        ),
        ({**RIGID, "walltime": -5}, r"field 'jobs\[0\]: walltime': must be at least 0"),
        (
            {**RIGID, "num_nodes": 99},
            r"jobs\.json, field 'jobs\[0\]: num_nodes': job 0 needs at least 99 nodes",
        ),
    ],
)
def test_bad_job_field(tmp_path, capsys, job, pattern):
    config = write_scenario(tmp_path, [job])
    code, lines = _run(config, capsys, out=tmp_path / "out")
    assert code == 2 and len(lines) == 1
    assert lines[0].startswith("cosched elastic: error: ")
    assert __import__("re").search(pattern, lines[0]), lines[0]
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "task, pattern",
    [
        (
            {"type": "cpu", "name": "Solve", "flops": "flops", "computation_pattern": "diagonal"},
            r"model\.json, field 'phases\[0\]\.tasks\[0\] \('Solve'\): computation_pattern': "
            r"must be one of uniform",
        ),
        ({"type": "pfs_write", "bytes": 5}, r"field 'phases\[0\]\.tasks\[0\]: pattern'"),
        (
            {"type": "cpu", "flops": "flops * speedup", "computation_pattern": "uniform"},
            r"model\.json, field 'phases\[0\]\.tasks\[0\]: flops \(job 0\)': "
            r"expression 'flops \* speedup' does not "
            r"compile \(.*speedup.*\); variables: flops, iterations, num_gpus",
        ),
        (
            {"type": "cpu", "flops": "flops / (num_nodes - 2)", "computation_pattern": "uniform"},
            r"field 'phases\[0\]\.tasks\[0\]: flops \(job 0\)': "
            r"expression 'flops / \(num_nodes - 2\)' evaluates to inf "
            r"with flops=1e\+09, .*num_nodes=2",
        ),
        (
            {"type": "cpu", "flops": [1, 2, 3], "computation_pattern": "vector"},
            r"field 'phases\[0\]\.tasks\[0\]: flops': .*got 3 values",
        ),
    ],
)
def test_bad_task_field(tmp_path, capsys, task, pattern):
    model = {"phases": [{"iterations": "iterations", "tasks": [task]}]}
    config = write_scenario(tmp_path, [dict(RIGID)], model)
    code, lines = _run(config, capsys, out=tmp_path / "out")
    assert code == 2 and len(lines) == 1
    assert __import__("re").search(pattern, lines[0]), lines[0]
    assert not (tmp_path / "out").exists()


def test_bad_platform_and_configuration(tmp_path, capsys):
    config = write_scenario(tmp_path, [dict(RIGID)])
    platform = tmp_path / "platform.json"
    document = json.loads(platform.read_text())
    document["clusters"][0]["speed"] = "fast"
    platform.write_text(json.dumps(document))
    code, lines = _run(config, capsys, out=tmp_path / "out")
    assert code == 2 and "platform.json, field 'clusters[0]: speed': not a speed" in lines[0]
    settings = json.loads(config.read_text())
    settings["schedule_on_job_finalize"] = False
    config.write_text(json.dumps(settings))
    code, lines = _run(config, capsys, out=tmp_path / "out")
    assert code == 2 and "configuration.json, field 'scheduling_interval'" in lines[0]


def test_algorithm_mistakes_name_the_file_and_job(tmp_path, capsys):
    config = write_scenario(tmp_path, [dict(RIGID), dict(RIGID)])
    algorithm = tmp_path / "greedy.py"
    algorithm.write_text(
        "from elastisim_python import JobState\n"
        "def schedule(jobs, nodes, system):\n"
        "    for job in jobs:\n"
        "        if job.state == JobState.PENDING:\n"
        "            job.assign(nodes[:2])\n"
    )
    code, lines = _run(config, capsys, algorithm=algorithm, out=tmp_path / "out")
    assert code == 2 and len(lines) == 1
    assert (
        "greedy.py: at time 0, job 1 (jobs[1]) assigned node 0 (n0), which is ALLOCATED for job 0"
        in lines[0]
    )
    algorithm.write_text("def schedule(jobs, nodes, system):\n    raise KeyError('x')\n")
    code, lines = _run(config, capsys, algorithm=algorithm, out=tmp_path / "out")
    assert code == 2 and "schedule() raised KeyError" in lines[0]
    code, lines = _run(config, capsys, algorithm="best-fit", out=tmp_path / "out")
    assert code == 2 and "best-fit, field '--algorithm'" in lines[0]
    assert not (tmp_path / "out").exists()
