"""Ctrl-C, SIGTERM and SIGKILL on the real CLI of every long command (docs/guarantees.md).

Each test runs one command as a subprocess into one folder three times, interrupting it at a seeded
point after it made progress: Ctrl-C (SIGINT to its process group, as a terminal sends it),
then SIGTERM, then SIGKILL (to the command's process only, as `kill` does). After each: exit 130 /
143 within 2 s (not for SIGKILL), no process of the run left (found by an environment marker every
descendant inherits, so pool workers, co-run tasks and their forked kernel workers count), in
particular none stopped, and the command's stdout/stderr closed (a `| tee` would not hang). Then a
fourth, uninterrupted rerun into the same folder must give exactly the rows of an uninterrupted run
(timing columns aside; for `measure` the measured keys).

The signals follow events, not clocks: the test watches the file where the command records each
finished cell (the grid's done-file, the rows of compare.csv or speeds.csv) and signals once a
seeded number of further cells is recorded (0: as soon as the command wrote anything into its
folder), after a short seeded delay that lands the signal inside the next cell. So the grids stay
small (each test takes a few seconds) and a loaded machine slows the command and the trigger alike.
"""

from __future__ import annotations

import contextlib
import csv
import itertools
import os
import random
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from cosched.cli import main

SEED = 20240601
EXIT_SECONDS = 2.0  # the promise of docs/guarantees.md for Ctrl-C and SIGTERM
SIGNAL_DELAY = (0.0, 0.05)  # seconds after the chosen event the signal comes (seeded uniform draw)
MORE_CELLS = (0, 2)  # cells a run must record before its signal (seeded draw, inclusive)
POLL_SECONDS = 0.005  # how often the test looks at the progress file
START_SECONDS = 120.0  # the longest wait for the event (a bound for a broken command)
LEFTOVER_GRACE = 3.0  # time the kernel gets to deliver PDEATHSIG and reap
HEATMAP = str(
    Path(__file__).resolve().parents[2] / "simulator" / "data" / "synthetic_npb_heatmap.csv"
)
TIMING = {"wall_seconds", "jobs_per_second", "simulated_days_per_hour"}

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="/proc and PR_SET_PDEATHSIG: Linux"
)


def _marked(marker: str) -> list[tuple[int, str, str]]:
    """(pid, state, command line) of live processes whose environment holds `marker`."""
    found = []
    needle = marker.encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as handle:
                if needle not in handle.read():
                    continue
            with open(f"/proc/{entry}/stat") as handle:
                state = handle.read().rsplit(")", 1)[1].split()[0]
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                command = handle.read().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:  # gone meanwhile, or not ours
            continue
        # a zombie is no process any more (its parent, PID 1 here, reaps it)
        if state not in ("Z", "X"):
            found.append((int(entry), state, command))
    return found


def _leftovers(marker: str) -> list[tuple[int, str, str]]:
    deadline = time.monotonic() + LEFTOVER_GRACE
    while (left := _marked(marker)) and time.monotonic() < deadline:
        time.sleep(0.05)
    for pid, _, _ in left:  # do not leave them to the next test
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    return left


def _snapshot(out: Path) -> dict:
    if not out.exists():
        return {}
    state = {}
    for path in out.rglob("*"):
        try:
            info = path.stat()
        except OSError:
            continue
        state[str(path)] = (info.st_size, info.st_mtime_ns)
    return state


def _start(argv: list[str], marker: str) -> subprocess.Popen:
    env = {**os.environ, "COSCHED_TEST_MARKER": marker, "PYTHONUNBUFFERED": "1"}
    # its own process group: Ctrl-C reaches it and its workers
    return subprocess.Popen(
        [sys.executable, "-m", "cosched", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        start_new_session=True,
    )


def _recorded(path: Path) -> int:
    """Finished cells recorded in `path`: its complete lines after the header (0 if absent)."""
    try:
        return max(path.read_bytes().count(b"\n") - 1, 0)
    except OSError:
        return 0


def _interrupt(argv: list[str], out: Path, progress: str, sig: int, rng: random.Random) -> None:
    """Start the command, wait for the chosen event in `out`, send `sig` and check the aftermath.

    The event: `rng` draws how many more cells the command must record in ``out / progress``
    than before this run (0: the command wrote anything into `out`), then a delay of
    `SIGNAL_DELAY`."""
    marker = uuid.uuid4().hex
    before, recorded = _snapshot(out), _recorded(out / progress)
    target = recorded + rng.randint(*MORE_CELLS)
    delay = rng.uniform(*SIGNAL_DELAY)
    process = _start(argv, marker)
    try:
        deadline = time.monotonic() + START_SECONDS

        def waiting() -> bool:
            if target == recorded:
                return _snapshot(out) == before
            return _recorded(out / progress) < target

        while process.poll() is None and time.monotonic() < deadline and waiting():
            time.sleep(POLL_SECONDS)
        time.sleep(delay)
        assert process.poll() is None, (
            f"{argv[0]} finished before the {signal.Signals(sig).name} "
            f"(exit {process.returncode}): make its grid larger"
        )
        sent = time.monotonic()
        if sig == signal.SIGINT:
            os.killpg(process.pid, sig)  # what Ctrl-C in a terminal does
        else:
            process.send_signal(sig)  # what `kill` does: the command's own process only
        code = process.wait(timeout=30)
        seconds = time.monotonic() - sent
        try:
            _, stderr = process.communicate(timeout=5)
        except subprocess.TimeoutExpired:
            pytest.fail(
                f"{argv[0]}: stdout/stderr still held open after "
                f"{signal.Signals(sig).name} (a `| tee` would hang): {_marked(marker)}"
            )
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    left = _leftovers(marker)
    assert not left, f"{argv[0]} left processes after {signal.Signals(sig).name}: {left}"
    if sig == signal.SIGKILL:
        assert code == -signal.SIGKILL
        return
    assert code == 128 + sig, (
        f"exit {code} after {signal.Signals(sig).name}; stderr: {stderr.decode()[-500:]}"
    )
    assert seconds < EXIT_SECONDS, (
        f"{argv[0]} took {seconds:.2f} s to exit after "
        f"{signal.Signals(sig).name}; "
        f"stderr: {stderr.decode()[-3000:]}"
    )


def _complete(argv: list[str]) -> None:
    marker = uuid.uuid4().hex
    process = _start(argv, marker)
    _, stderr = process.communicate(timeout=300)
    assert process.returncode == 0, stderr.decode()[-1000:]
    assert not _leftovers(marker)


def _rows(path: Path, drop=TIMING) -> list[tuple]:
    with open(path, newline="") as handle:
        reader = csv.DictReader(handle)
        keep = [name for name in reader.fieldnames if name not in drop]
        return sorted(tuple(row[name] for name in keep) for row in reader)


def _run_in_process(argv: list[str], capsys) -> None:
    assert main(argv) == 0
    capsys.readouterr()


@pytest.fixture(scope="module")
def workload_csv(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("workload") / "jobs.csv"
    assert (
        main(
            [
                "generate-workload",
                "--heatmap",
                HEATMAP,
                "--jobs",
                "1000",
                "--interarrival",
                "poisson",
                "--mean-interarrival",
                "5",
                "--out",
                str(path),
                "--quiet",
            ]
        )
        == 0
    )
    return str(path)


# Each grid is large enough that its cells outlast the three signals (at most 2 more cells each)
# and small enough that the whole test takes a few seconds.
def _experiment(out: Path, workers: int = 2) -> list[str]:
    return [
        "experiment",
        "--preset",
        "small",
        "--n",
        "5",
        "--instances",
        "5",
        "--k",
        "0.6",
        "0.9",
        "--workers",
        str(workers),
        "--no-plots",
        "--quiet",
        "--out",
        str(out),
    ]


def _experiment_sim(out: Path, workers: int = 2) -> list[str]:
    return [
        "experiment-sim",
        "--preset",
        "example",
        "--jobs",
        "300",
        "--experiments",
        "6",
        "--scheduler",
        "easy-co,sjf-co,ljf-co",
        "--workers",
        str(workers),
        "--no-plots",
        "--quiet",
        "--out",
        str(out),
    ]


def _compare(out: Path, workload: str) -> list[str]:
    return [
        "compare",
        "--workload",
        workload,
        "--platform",
        "marconi",
        "--heatmap",
        HEATMAP,
        "--scheduler",
        "popularity,filler,sjf-co,easy-co,ljf,sjf,easy,fcfs",
        "--quiet",
        "--out",
        str(out),
    ]


def _interrupted_then_resumed_equals_uninterrupted(
    argv_for, progress: str, table: str, name: str, tmp_path, capsys
) -> None:
    """SIGINT, SIGTERM and SIGKILL at seeded events, a rerun to the end: the rows of one clean
    run."""
    rng = random.Random(f"{SEED}-{name}")
    out = tmp_path / "run"
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGKILL):
        _interrupt(argv_for(out), out, progress, sig, rng)
    _complete(argv_for(out))
    _run_in_process(argv_for(tmp_path / "reference"), capsys)
    assert _rows(out / table) == _rows(tmp_path / "reference" / table)


def test_experiment_survives_ctrl_c_sigterm_and_sigkill(tmp_path, capsys):
    _interrupted_then_resumed_equals_uninterrupted(
        _experiment, "results.done", "results.csv", "experiment", tmp_path, capsys
    )


def test_experiment_sim_survives_ctrl_c_sigterm_and_sigkill(tmp_path, capsys):
    _interrupted_then_resumed_equals_uninterrupted(
        _experiment_sim, "grid.done", "runs.csv", "experiment-sim", tmp_path, capsys
    )


def test_compare_survives_ctrl_c_sigterm_and_sigkill(tmp_path, capsys, workload_csv):
    def argv_for(out: Path, workers: int = 1) -> list[str]:  # compare runs in one process
        return _compare(out, workload_csv)

    _interrupted_then_resumed_equals_uninterrupted(
        argv_for, "compare.csv", "compare.csv", "compare", tmp_path, capsys
    )


def test_measure_with_forked_kernel_threads_survives_ctrl_c_sigterm_and_sigkill(tmp_path):
    rng = random.Random(f"{SEED}-measure")
    out = tmp_path / "run"
    argv = [
        "measure",
        "--kernels",
        "compute,cache,compute",
        "--threads",
        "2",
        "--backend",
        "cputime",
        "--window",
        "0.15",
        "--warmup",
        "0.05",
        "--no-plots",
        "--quiet",
        "--out",
        str(out),
    ]
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGKILL):
        _interrupt(argv, out, "speeds.csv", sig, rng)
    _complete(argv)
    # measured speeds differ from run to run; the rows (which combination, which task) must be
    # those of one run
    names = ["compute1", "cache", "compute2"]
    expected = sorted(
        (str(sum(1 << names.index(m) for m in members)), "+".join(members), str(len(members)), task)
        for size in (1, 2)
        for members in itertools.combinations(names, size)
        for task in members
    )
    keys = ["combination", "members", "size", "task"]
    with open(out / "speeds.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert sorted(tuple(row[key] for key in keys) for row in rows) == expected
    assert all(float(row["speed"]) > 0 for row in rows)


# A worker that stalls between the length header and the payload of a result over 16 KiB (what a
# preempted worker on a loaded machine does), then Ctrl-C: the pool is killed mid-message.
HALF_SENT = """
import os, struct, sys, time
from multiprocessing import connection
from cosched.processes import kill_pool, process_pool, termination_signals

def send_bytes(self, buf):
    self._send(struct.pack("!i", len(buf)))
    open(sys.argv[1], "w").close()  # the header is in the pipe
    time.sleep(60)
    self._send(buf)

def result(size):
    connection.Connection._send_bytes = send_bytes
    return b"x" * size

pool = process_pool(1)
future = pool.submit(result, 20_000)
while not os.path.exists(sys.argv[1]):
    time.sleep(0.01)
with termination_signals():
    kill_pool(pool)
print(type(future.exception()).__name__, flush=True)
"""
HALF_SENT_SECONDS = 20.0  # the script takes about a second; the hang it guards against is endless


def test_a_pool_killed_while_a_worker_sends_its_result_lets_the_command_exit(tmp_path):
    """The cause of a rare 30 s wait in the tests above (a loaded machine): the executor's manager
    thread kept reading the rest of a half-sent result for ever, and the interpreter's exit joins
    it, so the interrupted command never ended. `kill_pool` closes the pipe's last write end."""
    process = subprocess.Popen(
        [sys.executable, "-c", HALF_SENT, str(tmp_path / "header-sent")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = process.communicate(timeout=HALF_SENT_SECONDS)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        pytest.fail("the process did not exit after kill_pool: a half-sent result blocks its exit")
    assert process.returncode == 0, err
    assert out.strip() == "BrokenProcessPool"
