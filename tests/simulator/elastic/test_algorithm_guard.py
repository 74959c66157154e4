"""An algorithm file's mistakes stop the run with one line naming the mistake, exit 2, nothing
written;
its prints never reach --json output; a looping algorithm meets the time limit and Ctrl-C."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from cosched.cli import main

from .scenario import RIGID, write_scenario

HEADER = "from elastisim_python import JobState, Node\n"
START = (
    "def schedule(jobs, nodes, system):\n"
    "    free = [node for node in nodes if not node.assigned_job_ids]\n"
    "    for job in jobs:\n"
    "        if job.state == JobState.PENDING and len(free) >= 2:\n"
    "            job.assign(free[:2])\n"
    "            del free[:2]\n"
)
CTRL_C_SECONDS = 2.0  # Ctrl-C stops a looping algorithm within this


def _run(tmp_path, capsys, body, *extra, jobs=1):
    config = write_scenario(tmp_path, [dict(RIGID) for _ in range(jobs)])
    algorithm = tmp_path / "algo.py"
    algorithm.write_text(HEADER + body)
    code = main(
        [
            "elastic",
            str(config),
            "--algorithm",
            str(algorithm),
            "--out",
            str(tmp_path / "out"),
            "--quiet",
            *extra,
        ]
    )
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    return code, lines, captured.out


@pytest.mark.parametrize(
    "body, message",
    [
        (
            "def schedule(jobs, nodes, system):\n    raise KeyError('x')\n",
            "schedule() raised KeyError: 'x'",
        ),
        (
            "import sys\ndef schedule(jobs, nodes, system):\n    sys.exit(3)\n",
            "schedule() called sys.exit(3); an algorithm returns instead",
        ),
        (
            "def schedule(jobs, nodes, system):\n    raise KeyboardInterrupt\n",
            "schedule() raised KeyboardInterrupt itself (no Ctrl-C was pressed)",
        ),
        (
            "def schedule(jobs, nodes, system):\n    jobs.clear()\n",
            "schedule() changed the job list it was given (1 jobs before, 0 after, or reordered)",
        ),
        (
            "def schedule(jobs, nodes, system):\n    nodes.reverse()\n",
            "schedule() changed the node list it was given",
        ),
        (
            "def schedule(jobs, nodes, system):\n    jobs[0].assign([Node(99, 0, 0), Node(98, 0, "
            "0)])\n",
            "job 0 (jobs[0]) assigned node 99, which does not exist",
        ),
        (
            START + "    if system['invocation_type'].name == 'INVOKE_JOB_COMPLETED':\n"
            "        system['job'].assign(nodes[0])\n",
            "assigned nodes to job 0, which has completed (time 1, INVOKE_JOB_COMPLETED)",
        ),
        (
            START + "    for job in jobs:\n"
            "        if job.state == JobState.COMPLETED:\n"
            "            try:\n                job.remove(job.assigned_nodes)\n"
            "            except Exception:\n                pass\n",
            "removed nodes from job 0, which has completed",
        ),
        (
            "def schedule(jobs, nodes, system):\n    while True:\n        pass\n",
            "one call of schedule() ran longer than the time limit of 0.2 s (raise it with "
            "--algorithm-time-limit)",
        ),
    ],
    ids=[
        "raises",
        "sys-exit",
        "own-keyboard-interrupt",
        "empties-jobs",
        "reorders-nodes",
        "node-missing",
        "finished-job",
        "finished-job-caught",
        "loops",
    ],
)
def test_algorithm_mistake_is_one_line(tmp_path, capsys, body, message):
    code, lines, out = _run(tmp_path, capsys, body, "--algorithm-time-limit", "0.2")
    assert code == 2 and len(lines) == 1, lines
    assert lines[0].startswith(f"cosched elastic: error: {tmp_path / 'algo.py'}: "), lines[0]
    assert message in lines[0], lines[0]
    assert out == "" and not (tmp_path / "out").exists()


def test_busy_node_is_refused(tmp_path, capsys):
    body = (
        "def schedule(jobs, nodes, system):\n    for job in jobs:\n        if job.state == "
        "JobState.PENDING:\n"
        "            job.assign(nodes[:2])\n"
    )
    code, lines, _ = _run(tmp_path, capsys, body, jobs=2)
    assert (
        code == 2
        and len(lines) == 1
        and "job 1 (jobs[1]) assigned node 0 (n0), which is ALLOCATED" in lines[0]
    )


def test_prints_go_to_stderr_not_into_json(tmp_path, capsys):
    body = "print('loading')\n" + START.replace(
        "    free =", "    print('called', system['time'])\n    free ="
    )
    code, lines, out = _run(tmp_path, capsys, body, "--json")
    assert code == 0
    assert json.loads(out)["completed"] == 1  # stdout is the JSON document alone
    assert "loading" in lines and "called 0.0" in lines


def test_time_limit_is_an_option(tmp_path, capsys):
    body = "import time\n" + START.replace("    free =", "    time.sleep(0.3)\n    free =")
    code, lines, _ = _run(tmp_path, capsys, body, "--algorithm-time-limit", "0.1")
    assert code == 2 and "time limit of 0.1 s" in lines[0]
    code, lines, _ = _run(tmp_path, capsys, body, "--algorithm-time-limit", "0")
    assert code == 0, lines


def _subprocess(tmp_path, body, *extra):
    config = write_scenario(tmp_path, [dict(RIGID)])
    algorithm = tmp_path / "algo.py"
    algorithm.write_text(HEADER + body)
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "cosched",
            "elastic",
            str(config),
            "--algorithm",
            str(algorithm),
            "--out",
            str(tmp_path / "out"),
            "--quiet",
            *extra,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.parametrize(
    "body",
    [
        "def schedule(jobs, nodes, system):\n    print('looping', flush=True)\n    while True:\n  "
        "      pass\n",
        "def schedule(jobs, nodes, system):\n    print('looping', flush=True)\n    while True:\n  "
        "      try:\n"
        "            sum(range(1000))\n        except BaseException:\n            pass\n",
    ],
    ids=["plain-loop", "loop-swallowing-everything"],
)
def test_ctrl_c_stops_a_looping_algorithm(tmp_path, body):
    process = _subprocess(tmp_path, body)
    try:
        assert process.stderr.readline().strip() == "looping"  # the algorithm's print, on stderr
        sent = time.monotonic()
        process.send_signal(signal.SIGINT)
        process.wait(timeout=10)
        elapsed = time.monotonic() - sent
    finally:
        process.kill()
        process.communicate()
    assert process.returncode == 130
    assert elapsed < CTRL_C_SECONDS, elapsed
    assert not (tmp_path / "out").exists()


def test_an_algorithm_swallowing_its_timeout_is_ended(tmp_path):
    body = (
        "def schedule(jobs, nodes, system):\n    while True:\n        try:\n            "
        "sum(range(1000))\n"
        "        except BaseException:\n            pass\n"
    )
    process = _subprocess(tmp_path, body, "--algorithm-time-limit", "0.2")
    _, err = process.communicate(timeout=30)
    assert process.returncode == 2
    # the supervisor ends the run's process: catching the timeout changes nothing
    assert err.strip().splitlines() == [
        f"cosched elastic: error: {tmp_path / 'algo.py'}: one call of schedule() ran longer than "
        f"the time limit of 0.2 s (raise it with --algorithm-time-limit) "
        f"(time 0, INVOKE_JOB_SUBMIT)"
    ]
    assert not (tmp_path / "out").exists()
    assert os.path.exists(tmp_path / "algo.py")
