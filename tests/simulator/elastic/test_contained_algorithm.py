"""A user's algorithm file that starts background processes does not outlive `cosched elastic`."""

import os
import subprocess
import sys
import textwrap
import time

import pytest

from .scenario import compute_model, write_scenario

GONE_SECONDS = 2.0  # longest wait for killed processes to disappear from /proc

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="subreapers are Linux-only"
)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            text = handle.read()
    except FileNotFoundError:
        return False
    return text[text.rfind(")") + 2] not in "ZX"


def test_background_processes_of_an_algorithm_file_end_with_the_command(tmp_path):
    pids = tmp_path / "pids"
    algorithm = tmp_path / "leaky.py"
    algorithm.write_text(
        textwrap.dedent(f"""
        import subprocess
        from elastisim_python import JobState, JobType, NodeState, pass_algorithm

        started = []


        def schedule(jobs, nodes, system):
            if not started:  # once: a plain background child and one that leaves the session
                child = subprocess.Popen(["sleep", "300"])
                escaped = subprocess.Popen("setsid sleep 300 & echo $!", shell=True,
                                           stdout=subprocess.PIPE, text=True)
                started.append(child.pid)
                started.append(int(escaped.stdout.readline()))
                with open({str(pids)!r}, "w") as handle:
                    handle.write(" ".join(map(str, started)))
            free = [node for node in nodes if node.state == NodeState.FREE]
            for job in jobs:
                if job.state == JobState.PENDING and job.num_nodes <= len(free):
                    job.assign([free.pop() for _ in range(job.num_nodes)])


        if __name__ == "__main__":
            pass_algorithm(schedule)
    """)
    )
    jobs = [
        {
            "type": "rigid",
            "submit_time": 0,
            "num_nodes": 1,
            "arguments": {"iterations": 1, "flops": 1e9},
        }
    ]
    config = write_scenario(tmp_path, jobs, compute_model(), nodes=2)
    result = subprocess.run(
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
        ],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=os.getcwd(),
    )
    assert result.returncode == 0, result.stderr
    started = [int(word) for word in pids.read_text().split()]
    assert len(started) == 2
    deadline = time.monotonic() + GONE_SECONDS
    while any(_alive(pid) for pid in started) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not [pid for pid in started if _alive(pid)]
