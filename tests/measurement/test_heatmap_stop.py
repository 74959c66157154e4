"""Stopping measure-heatmap's launches on Dask workers: `stop_workers` through a real (in-process)
`distributed` client, called exactly as an interrupted command calls it."""

from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

import pytest

from cosched.measurement import heatmap_launch
from cosched.measurement.heatmap_run import stop_workers

distributed = pytest.importorskip("distributed")

STARTED_WITHIN_SECONDS = 30  # the launch writes its pid within this on a busy machine
GONE_WITHIN_SECONDS = 5  # a killed launch is reaped within this

SLEEPER = "import os, sys, time\nopen(sys.argv[1], 'w').write(str(os.getpid()))\ntime.sleep(600)\n"


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _spec(tmp_path: Path, session: str, name: str) -> dict:
    script = tmp_path / "sleeper.py"
    script.write_text(SLEEPER)
    role = {
        "app": name,
        "command": [sys.executable, str(script), str(tmp_path / f"{name}.pid")],
        "values": {"ppn": 1},
        "cwd": None,
        "env": {},
        "timeout": None,
        "hosts": ["h0"],
    }
    return {"run": name, "roles": [role], "containment": "pgroup", "session": session}


def _wait_for_pid(path: Path) -> int:
    deadline = time.monotonic() + STARTED_WITHIN_SECONDS
    while time.monotonic() < deadline:
        if path.exists() and path.read_text():
            return int(path.read_text())
        time.sleep(0.05)
    raise AssertionError(f"the launch never wrote {path}")


def test_stop_workers_kills_the_session_launches_and_stops_its_later_tasks(tmp_path):
    with (
        distributed.LocalCluster(
            n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        running = client.submit(
            heatmap_launch.run_measurement, _spec(tmp_path, "s1", "first"), pure=False
        )
        pid = _wait_for_pid(tmp_path / "first.pid")
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a failed stop is a warning: fail on it
            killed = stop_workers(client, "s1")
        assert sum(killed.values()) == 1
        assert running.result(timeout=GONE_WITHIN_SECONDS)["status"] == "stopped"
        deadline = time.monotonic() + GONE_WITHIN_SECONDS
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(pid)
        # a task of the stopped session that starts late launches nothing
        late = client.submit(
            heatmap_launch.run_measurement, _spec(tmp_path, "s1", "late"), pure=False
        )
        assert late.result(timeout=GONE_WITHIN_SECONDS)["status"] == "stopped"
        assert not (tmp_path / "late.pid").exists()


def test_stop_workers_warns_when_a_worker_fails(monkeypatch):
    with (
        distributed.LocalCluster(
            n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):

        def failing(session):
            raise OSError("cannot kill")

        monkeypatch.setattr(heatmap_launch, "stop_all", failing)
        with pytest.warns(RuntimeWarning, match="may still run on 1 Dask worker"):
            assert stop_workers(client, "s2") == {}
