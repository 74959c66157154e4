"""An algorithm file cannot switch off what ends a `cosched elastic` run, keep it alive, write into
its results or move its outputs: the run is a child process the command supervises. And values an
algorithm or a model gives that no batch system accepts stop the run with one line, exit 2."""

import json
import os
import subprocess
import sys

import pytest

from cosched.cli import main

from .scenario import RIGID, compute_model, write_scenario

HEADER = "import os, signal, sys, threading, time\nfrom elastisim_python import JobState, Node\n"
START = (
    "def schedule(jobs, nodes, system):\n"
    "    free = [node for node in nodes if not node.assigned_job_ids]\n"
    "    for job in jobs:\n"
    "        if job.state == JobState.PENDING and len(free) >= 2:\n"
    "            job.assign(free[:2])\n"
    "            del free[:2]\n"
)
LOOP = "def schedule(jobs, nodes, system):\n    while True:\n"
PROCESS_SECONDS = 60.0  # the longest a run in a subprocess may take (a loaded machine)
INTERRUPT_SECONDS = 2.0  # Ctrl-C / SIGTERM end a run within this (docs/guarantees.md)
IGNORE_ALL = (  # every signal Python may handle, ignored
    "for number in signal.valid_signals():\n"
    "    try:\n        signal.signal(number, signal.SIG_IGN)\n"
    "    except (OSError, ValueError, RuntimeError):\n        pass\n"
)


def _algorithm(tmp_path, body: str):
    path = tmp_path / "algo.py"
    path.write_text(HEADER + body)
    return path


def _cosched(tmp_path, body: str, *extra: str) -> subprocess.Popen:
    config = write_scenario(tmp_path, [dict(RIGID)])
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "cosched",
            "elastic",
            str(config),
            "--algorithm",
            str(_algorithm(tmp_path, body)),
            "--out",
            str(tmp_path / "out"),
            *extra,
        ],  # fmt: skip
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_threads_the_file_leaves_running_do_not_keep_the_command_alive(tmp_path):
    body = (
        "threading.Thread(target=time.sleep, args=(600,)).start()\n"  # not a daemon
        "threading.Thread(target=lambda: (time.sleep(0.05), sys.exit(3))).start()\n" + START
    )
    process = _cosched(tmp_path, body, "--quiet")
    _, err = process.communicate(timeout=PROCESS_SECONDS)
    assert process.returncode == 0, err
    assert (tmp_path / "out" / "job_statistics.csv").is_file()


@pytest.mark.parametrize(
    "prelude, cancel",
    [
        ("signal.signal(signal.SIGALRM, signal.SIG_IGN)\n", "signal.alarm(0)"),
        (
            "threading.Thread(target=lambda: [signal.setitimer(signal.ITIMER_REAL, 0) "
            "for _ in iter(int, 1)], daemon=True).start()\n" + IGNORE_ALL,
            "pass",
        ),
    ],
    ids=["ignores-sigalrm-alarm-0", "cancelling-thread-ignoring-all"],
)
def test_the_time_limit_holds_whatever_the_file_does_to_alarms(tmp_path, capsys, prelude, cancel):
    body = prelude + LOOP + f"        {cancel}\n"
    line = _refused(tmp_path, capsys, body, "--algorithm-time-limit", "0.3")
    assert "ran longer than the time limit of 0.3 s" in line, line


def test_the_files_prints_threads_and_stdout_never_reach_the_json_output(tmp_path, capsys):
    body = (
        "def noise():\n    while True:\n        print('noise', flush=True)\n"
        "        os.write(1, b'raw\\n')\n        time.sleep(0.001)\n"
        "threading.Thread(target=noise, daemon=True).start()\n"
        "sys.stdout = open(os.devnull, 'w')\n" + START
    )
    config = write_scenario(tmp_path, [dict(RIGID) for _ in range(3)])
    algorithm = _algorithm(tmp_path, body)
    out = tmp_path / "out"
    code = main(
        ["elastic", str(config), "--algorithm", str(algorithm), "--out", str(out), "--json"]
    )
    captured = capsys.readouterr()
    assert code == 0 and json.loads(captured.out)["completed"] == 3  # the JSON document alone
    assert "raw" in captured.err.split()  # its writes on stdout's descriptor: on stderr


def test_changing_directory_does_not_move_the_outputs(tmp_path, monkeypatch):
    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    project.mkdir()
    elsewhere.mkdir()
    config = write_scenario(
        project,
        [dict(RIGID) for _ in range(2)],
        config={"job_statistics": "out/job_statistics.csv", "node_utilization": "out/nodes.csv"},
    )
    chdir = f"os.chdir({str(elsewhere)!r})\n"
    body = chdir + START.replace("    free =", f"    {chdir}    free =")
    monkeypatch.chdir(project)
    algorithm = str(_algorithm(project, body))
    assert main(["elastic", str(config), "--algorithm", algorithm, "--quiet"]) == 0
    assert os.getcwd() == str(project)
    assert (project / "out" / "job_statistics.csv").is_file()
    assert (project / "out" / "nodes.csv").is_file() and not (elsewhere / "out").exists()


def _refused(tmp_path, capsys, body: str, *extra: str) -> str:
    config = write_scenario(tmp_path, [dict(RIGID)])
    algorithm = _algorithm(tmp_path, body)
    code = main(
        ["elastic", str(config), "--algorithm", str(algorithm), "--out", str(tmp_path / "out")]
        + ["--json", *extra]
    )
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert code == 2 and len(lines) == 1, (code, lines)
    assert lines[0].startswith(f"cosched elastic: error: {algorithm}: "), lines
    assert captured.out == "" and not (tmp_path / "out").exists()
    return lines[0]


@pytest.mark.parametrize(
    "body",
    [
        "def schedule(jobs, nodes, system):\n    raise ValueError('x' * 1_000_000)\n",
        "raise ValueError('y\\n' * 500_000)\n",
        "def schedule(jobs, nodes, system):\n    sys.exit('z' * 1_000_000)\n",
    ],
    ids=["in-schedule", "on-import-many-lines", "sys-exit"],
)
def test_a_huge_message_from_the_file_is_cut(tmp_path, capsys, body):
    line = _refused(tmp_path, capsys, body)
    assert len(line) < 1000 and "(cut: the message has 1,0" in line, line[:300]


@pytest.mark.parametrize("limit", ["inf", "1e308"])
def test_an_infinite_or_huge_time_limit_is_no_limit(tmp_path, capsys, limit):
    config = write_scenario(tmp_path, [dict(RIGID)])
    algorithm = _algorithm(tmp_path, START)
    out = str(tmp_path / "out")
    arguments = ["--algorithm", str(algorithm), "--out", out, "--algorithm-time-limit", limit]
    assert main(["elastic", str(config), *arguments, "--quiet"]) == 0, capsys.readouterr().err


@pytest.mark.parametrize(
    "assign, shown",
    [
        (
            "jobs[0].assign([nodes[0], Node('a', 0, 0)])",
            "was assigned node 'a', which is not a node id",
        ),
        (
            "jobs[0].assign([nodes[0], Node(1.0, 0, 0)])",
            "was assigned node 1.0, which is not a node id",
        ),
        (
            "jobs[0].assign(nodes[:2])\n    jobs[0].assign_num_gpus_per_node('2')",
            "'2' GPUs per node",
        ),
        (
            "jobs[0].assign(nodes[:2])\n    jobs[0].assigned_nodes.append(3)",
            "left job 0 in a state",
        ),
    ],
    ids=["string-node", "float-node", "string-gpus", "not-a-node"],
)
def test_a_node_or_gpu_count_that_is_not_a_number_is_one_line(tmp_path, capsys, assign, shown):
    line = _refused(tmp_path, capsys, f"def schedule(jobs, nodes, system):\n    {assign}\n")
    assert "job 0" in line and shown in line, line


@pytest.mark.parametrize("request_", ["0 - 3", "num_nodes_max + 1"], ids=["negative", "above-max"])
def test_an_evolving_request_outside_the_bounds_without_clipping_is_refused(
    tmp_path, capsys, request_
):
    model = compute_model()
    model["phases"][0]["evolving_request"] = request_
    job = {
        "type": "evolving",
        "submit_time": 0,
        "num_nodes_min": 1,
        "num_nodes_max": 4,
        "arguments": {"iterations": 3, "flops": 1e9},
    }
    config = write_scenario(tmp_path, [job], model, config={"clip_evolving_requests": False})
    code = main(
        ["elastic", str(config), "--scheduler", "fcfs-malleable", "--out", str(tmp_path / "out")]
    )
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert code == 2 and len(lines) == 1, lines
    assert "evolving_request (job 0)" in lines[0] and "outside the job's 1 to 4" in lines[0]
    assert "model.json" in lines[0] and not (tmp_path / "out").exists()
