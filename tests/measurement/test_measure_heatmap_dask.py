"""measure-heatmap on 8 fake hosts through a real `dask scheduler` with 4 workers on 127.0.0.1.

The fake launcher sleeps, from the moment the command launched it, for the time a known synthetic
heatmap gives its application in that mode (compact, spread, next to its co-runner); the measured
heatmap must recover the synthetic speedups. One worker is killed (SIGKILL) mid-run: no finished run
is lost and the run completes; the workers are named after hosts, so the lost one's host leaves the
pool. The launcher also checks that no host ever carries two runs at once.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from cosched.theory.heatmap import read_heatmap

pytestmark = pytest.mark.slow

SPEEDUP_TOLERANCE = 0.02  # relative error of a recovered speedup (the 2 %)
WORKERS = 4
HOSTS = 8
APPS = 6
BOUND_SECONDS = 150  # the whole test, processes included, never runs longer than this
DASK = [sys.executable, "-m", "dask"]

FAKE = r"""
import json, os, sys, time
table_path, busy, app, mode, corunner, hosts, run = sys.argv[1:8]
start = float(os.environ["COSCHED_LAUNCH_START"])
table = json.load(open(table_path))
seconds = table["compact"][app] if mode == "compact" else table["spread"][app] if mode == "spread" \
    else table["co"][app][corunner]
def alive(name):
    try:  # a zombie (killed, not reaped yet) counts as gone
        with open(f"/proc/{int(name.rsplit('@', 1)[1])}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, ValueError):
        return False


mine = []
for host in hosts.split(","):
    others = [name for name in os.listdir(busy) if name.startswith(host + "@")
              and name.split("@")[1] != run and alive(name)]
    if others:
        with open(os.path.join(busy, "violations"), "a") as handle:
            handle.write(f"{run} on {host} while {others}\n")
    path = os.path.join(busy, f"{host}@{run}@{os.getpid()}")
    open(path, "a").close()
    mine.append(path)
time.sleep(max(0.0, start + seconds - time.time()))
for path in mine:
    os.unlink(path)
os._exit(0)  # no interpreter teardown: the launch ends when the table says
"""


def _synthetic(seed: int = 5):
    rng = np.random.default_rng(seed)
    names = [f"app{i}" for i in range(APPS)]
    compact = rng.uniform(0.8, 1.3, APPS)
    spread = compact / rng.uniform(0.9, 1.15, APPS)
    speedup = rng.uniform(0.75, 1.2, (APPS, APPS))
    co = compact[:, None] / speedup
    table = {
        "compact": dict(zip(names, compact.tolist())),
        "spread": dict(zip(names, spread.tolist())),
        "co": {a: dict(zip(names, co[i].tolist())) for i, a in enumerate(names)},
    }
    return names, table, speedup, compact / spread


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def _cluster(tmp_path: Path):
    """A dask scheduler and WORKERS workers (no nanny) on 127.0.0.1; all killed on exit."""
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    env = {**os.environ, "DASK_DISTRIBUTED__WORKER__DAEMON": "False"}
    processes = [
        subprocess.Popen(
            [*DASK, "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
        )
    ]
    try:
        for index in range(WORKERS):
            processes.append(
                subprocess.Popen(
                    [
                        *DASK,
                        "worker",
                        address,
                        "--host",
                        "127.0.0.1",
                        "--nthreads",
                        "1",
                        "--no-nanny",
                        "--no-dashboard",
                        "--name",
                        f"fake{index}",  # named after a host: losing it takes the host out
                        "--death-timeout",
                        "60",
                    ],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    env=env,
                    start_new_session=True,
                )
            )
        from distributed import Client

        with Client(address, timeout="30s") as client:
            client.wait_for_workers(WORKERS, timeout=60)
        yield address, processes[1:]
    finally:
        for process in processes:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)


def test_dask_fake_hosts_recover_synthetic_speedups_and_survive_a_lost_worker(tmp_path):
    deadline = time.monotonic() + BOUND_SECONDS
    names, table, speedup, spread_speedup = _synthetic()
    (tmp_path / "table.json").write_text(json.dumps(table))
    (tmp_path / "fake.py").write_text(FAKE)
    busy = tmp_path / "busy"
    busy.mkdir()
    (tmp_path / "hosts.txt").write_text("".join(f"fake{i} slots=2\n" for i in range(HOSTS)))
    command = [
        sys.executable,
        str(tmp_path / "fake.py"),
        str(tmp_path / "table.json"),
        str(busy),
        "{name}",
        "{mode}",
        "{corunner}",
        "{hosts}",
        "{run}",
    ]
    apps = {
        "applications": [
            {"name": name, "np": 2, "command": command, "estimate": 1.0} for name in names
        ]
    }
    (tmp_path / "apps.json").write_text(json.dumps(apps))
    out = tmp_path / "out"
    with _cluster(tmp_path) as (address, workers):
        run = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "cosched",
                "measure-heatmap",
                "--apps",
                str(tmp_path / "apps.json"),
                "--nodes",
                f"hosts:{tmp_path / 'hosts.txt'}",
                "--out",
                str(out),
                "--repeats",
                "2",
                "--dask",
                address,
                "--quiet",
                "--json",
                "--no-plots",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        runs = out / "runs.csv"
        # kill a worker once some runs finished
        while time.monotonic() < deadline and run.poll() is None:
            if runs.exists() and runs.read_text().count("\n") > 12:
                break
            time.sleep(0.1)
        before = runs.read_text().splitlines()[1:]
        os.killpg(workers[0].pid, signal.SIGKILL)
        try:
            stdout, stderr = run.communicate(timeout=max(1.0, deadline - time.monotonic()))
        finally:
            run.kill()
    assert run.returncode == 0, stderr
    summary = json.loads(stdout)
    assert summary["done"] == summary["runs"] == 2 * (APPS + APPS + APPS * (APPS + 1) // 2)
    assert summary["hosts_left"] == ["fake0"]
    after = runs.read_text().splitlines()[1:]
    finished_before = [line for line in before if ",ok," in line]
    assert finished_before and all(line in after for line in finished_before)
    assert not (busy / "violations").exists(), (busy / "violations").read_text()
    heatmap = read_heatmap(out / "heatmap.csv")
    order = [heatmap.index(name) for name in names]
    measured = heatmap.measured[np.ix_(order, order)]
    assert np.allclose(measured, speedup, rtol=SPEEDUP_TOLERANCE), np.abs(
        measured / speedup - 1
    ).max()
    assert np.allclose(heatmap.spread_speedups()[order], spread_speedup, rtol=SPEEDUP_TOLERANCE)


SLEEPER = "import os, sys, time\nopen(os.path.join(sys.argv[1], str(os.getpid())), 'w').close()\n"
SLEEPER += "time.sleep(600)\n"
LAUNCHES_BEFORE_THE_SIGNAL = 3
GRACE_SECONDS = 3.0  # after the command's exit, no launch may be alive any longer than this


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _interrupt_while_launches_run(tmp_path: Path, address: str, signum: int) -> None:
    """Start measure-heatmap on `address` with launches that sleep, send `signum` once some run
    (SIGINT to the whole process group, as a terminal's Ctrl-C), and check that it exits 128 +
    signum with one line on stderr and that no launch outlives it by `GRACE_SECONDS`."""
    deadline = time.monotonic() + BOUND_SECONDS
    pids = tmp_path / "pids"
    pids.mkdir()
    (tmp_path / "sleeper.py").write_text(SLEEPER)
    command = [sys.executable, str(tmp_path / "sleeper.py"), str(pids)]
    apps = {"applications": [{"name": f"app{i}", "np": 2, "command": command} for i in range(2)]}
    (tmp_path / "apps.json").write_text(json.dumps(apps))
    (tmp_path / "hosts.txt").write_text("".join(f"fake{i} slots=2\n" for i in range(HOSTS)))
    run = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "cosched",
            "measure-heatmap",
            "--apps",
            str(tmp_path / "apps.json"),
            "--nodes",
            f"hosts:{tmp_path / 'hosts.txt'}",
            "--out",
            str(tmp_path / "out"),
            "--dask",
            address,
            "--quiet",
            "--no-plots",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        while len(os.listdir(pids)) < LAUNCHES_BEFORE_THE_SIGNAL and time.monotonic() < deadline:
            assert run.poll() is None, run.communicate()
            time.sleep(0.1)
        if signum == signal.SIGINT:
            os.killpg(run.pid, signum)
        else:
            run.send_signal(signum)
        _, stderr = run.communicate(timeout=max(1.0, deadline - time.monotonic()))
        time.sleep(GRACE_SECONDS)
        alive = [int(pid) for pid in os.listdir(pids) if _alive(int(pid))]
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(run.pid, signal.SIGKILL)
        for pid in os.listdir(pids):
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pid), signal.SIGKILL)
    assert run.returncode == 128 + signum, stderr
    assert not alive, f"{len(alive)} launches alive {GRACE_SECONDS} s after the exit"
    assert stderr == "cosched measure-heatmap: interrupted\n"


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_stops_every_launch_on_the_external_workers(tmp_path, signum):
    with _cluster(tmp_path) as (address, _):
        _interrupt_while_launches_run(tmp_path, address, signum)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_stops_every_launch_on_the_local_cluster_quietly(tmp_path, signum):
    _interrupt_while_launches_run(tmp_path, "local", signum)
