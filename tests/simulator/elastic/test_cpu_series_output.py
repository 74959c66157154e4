"""The CPU series (the largest output) is written all or nothing with the command's other files."""

from __future__ import annotations

import errno
import os

from cosched.cli import main
from cosched.simulator.elastic import results

from .scenario import write_scenario


def _sensed_project(tmp_path):
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
    sensing = {"sensing": True, "sensing_interval": 1, "cpu_utilization": "c.csv"}
    jobs = [{"type": "rigid", "submit_time": 0, "num_nodes": 2}]
    return write_scenario(tmp_path, jobs, model, nodes=3, config=sensing)


def _elastic(config, out):
    return main(["elastic", str(config), "--scheduler", "fcfs-rigid", "--out", str(out), "--quiet"])


def test_the_command_writes_the_cpu_series(tmp_path):
    out = tmp_path / "out"
    assert _elastic(_sensed_project(tmp_path), out) == 0
    lines = (out / "cpu_utilization.csv").read_text().splitlines()
    assert len(lines) > 1


def test_a_failing_cpu_series_is_one_line_exit_2_and_no_output_folder(
    tmp_path, monkeypatch, capsys
):
    config = _sensed_project(tmp_path)

    def full_disk(sim, path, interval):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(results, "write_cpu_series", full_disk)
    out = tmp_path / "out"
    assert _elastic(config, out) == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert "cpu_utilization.csv" in error and "No space left on device" in error
    assert not out.exists()
