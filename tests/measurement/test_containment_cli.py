"""`cosched measure` / `cosched execute` with the tasks users actually write: shell pipelines,
forks, setsid children, tasks ignoring SIGTERM or never ending, commands that fail at once; time
limits and Ctrl-C under every containment backend this machine offers. After each run nothing the
test started is alive and no cgroup of the run remains."""

import json
import os
import signal
import subprocess
import sys
import time
import uuid

import pytest

from cosched.cli import main
from cosched.containment import (
    CONTAINMENT_KINDS,
    ContainmentUnavailable,
    cosched_cgroups,
    open_containment,
)

FAST = ["--window", "0.2", "--warmup", "0.05", "--no-plots", "--quiet"]
STOP_SECONDS = 2.0  # Ctrl-C / SIGTERM must end the command within this, whatever the tasks do
GONE_SECONDS = 2.0  # longest wait for killed processes to disappear from /proc
BUSY = f"{sys.executable} -c 'while True: pass'"

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="containment needs Linux"
)


def _available(kind: str) -> None:
    try:
        open_containment(kind, watchdog=False).close()
    except ContainmentUnavailable as error:
        pytest.skip(f"{kind} not available here: {error.message}")


MARKER = "COSCHED_TEST_MARKER"  # environment variable every process a test starts inherits


def _marked(marker: str) -> list[int]:
    """Live (non-zombie) processes other than this one whose environment holds `marker`."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            with open(f"{entry.path}/environ", "rb") as handle:
                if f"{MARKER}={marker}".encode() not in handle.read():
                    continue
            with open(f"{entry.path}/stat") as handle:
                text = handle.read()
        except OSError:
            continue
        if text[text.rfind(")") + 2] not in "ZX":
            found.append(int(entry.name))
    return found


def _none_left(marker: str, pid: int) -> None:
    deadline = time.monotonic() + GONE_SECONDS
    while [p for p in _marked(marker) if p != pid] and time.monotonic() < deadline:
        time.sleep(0.05)
    left = [p for p in _marked(marker) if p != pid]
    for p in left:
        os.kill(p, signal.SIGKILL)
    assert left == []
    assert not [path for path in cosched_cgroups() if path.name.startswith(f"cosched-{pid}-")]


def test_measure_with_a_task_that_fails_at_once_names_it_and_writes_nothing(tmp_path, capsys):
    out = tmp_path / "run"
    code = main(
        [
            "measure",
            "--task",
            f"ok={BUSY}",
            "--task",
            "gone=/nonexistent/command --flag",
            *FAST,
            "--out",
            str(out),
        ]
    )
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "'gone'" in err[0] and "exit status 127" in err[0]
    assert not out.exists()


def test_measure_timeout_stops_the_run_with_a_partial_report(tmp_path, capsys):
    out = tmp_path / "run"
    tasks = [arg for name in "abcd" for arg in ("--task", f"{name}={BUSY}")]
    started = time.monotonic()
    code = main(
        ["measure", *tasks, "--combinations", "all", *FAST, "--timeout", "1", "--out", str(out)]
    )
    assert code == 124
    assert time.monotonic() - started < 6  # 15 combinations of 0.25 s would take 4 s and more
    report = json.loads((out / "report.json").read_text())
    assert report["interrupted_by"] == "timeout" and report["timeout_seconds"] == 1
    assert report["combinations_measured"] < report["combinations_planned"] == 15


def test_execute_task_timeout_kills_a_never_ending_task_and_finishes(tmp_path, monkeypatch):
    marker = uuid.uuid4().hex
    monkeypatch.setenv(MARKER, marker)
    out = tmp_path / "run"
    code = main(
        [
            "execute",
            "--task",
            f"forever={BUSY} & {BUSY}",
            "--task",
            f"short={sys.executable} -c 'import time\nwhile time.process_time() < 0.2: pass'",
            "--strategy",
            "pi",
            "--quantum",
            "0.2",
            *FAST,
            "--task-timeout",
            "1.5",
            "--out",
            str(out),
        ]
    )
    report = json.loads((out / "report.json").read_text())
    states = {task["name"]: task["status"] for task in report["tasks"]}
    assert states == {"forever": "timed-out", "short": "completed"}
    assert code == 1 and report["real"]["timed_out"] == 1
    _none_left(marker, os.getpid())


def test_execute_of_a_shell_launched_task_without_reference_reads_a_real_speed_alone(tmp_path):
    """The launcher shell stays (no exec) and its child computes: its speed alone is that of the
    child, never 0."""
    out = tmp_path / "run"
    work = f"{sys.executable} -c 'import time\nwhile time.process_time() < 0.4: pass'"
    code = main(
        [
            "execute",
            "--task",
            f"a={work}; true",
            "--task",
            f"b={work} | cat",
            "--strategy",
            "fcs",
            "--combinations",
            "all",
            *FAST,
            "--out",
            str(out),
        ]
    )
    assert code == 0
    report = json.loads((out / "report.json").read_text())
    alone = [
        step
        for step in report["real"]["schedule"]
        if step["phase"] == "premeasure" and len(step["combination"]) == 1
    ]
    assert len(alone) >= 2 and all(list(step["speeds"].values())[0] > 0.1 for step in alone)
    assert {task["status"] for task in report["tasks"]} == {"completed"}


def test_execute_refuses_a_task_whose_speed_alone_reads_zero(tmp_path, monkeypatch):
    marker = uuid.uuid4().hex
    monkeypatch.setenv(MARKER, marker)
    out = tmp_path / "run"
    code = main(
        [
            "execute",
            "--task",
            "idle=sleep 1000; true",
            "--task",
            f"busy={BUSY}",
            "--strategy",
            "fcs",
            *FAST,
            "--timeout",
            "20",
            "--out",
            str(out),
        ]
    )
    report = json.loads((out / "report.json").read_text())
    assert code == 1 and "'idle'" in report["error"] and "speed" in report["error"]
    premeasured = [step for step in report["real"]["schedule"] if step["combination"] == ["idle"]]
    assert len(premeasured) == 3  # measured again before it is refused
    _none_left(marker, os.getpid())


NASTY = {  # task name -> shell command: everything a process group cannot hold
    "pipeline": "yes | cat > /dev/null",
    "forks": f"for i in 1 2; do ({BUSY}) & done; wait",
    "setsid": f"setsid {BUSY} & {BUSY}",
    "stubborn": "trap '' TERM; while :; do :; done",
}


@pytest.mark.parametrize(
    "kind, signum, code",
    [
        *((kind, signal.SIGINT, 130) for kind in CONTAINMENT_KINDS[1:]),
        ("cgroup1", signal.SIGTERM, 143),
    ],
)
def test_ctrl_c_or_sigterm_ends_execute_within_2_s_and_leaves_nothing(tmp_path, kind, signum, code):
    _available(kind)
    marker = uuid.uuid4().hex
    out = tmp_path / "run"
    tasks = [arg for name, command in NASTY.items() for arg in ("--task", f"{name}={command}")]
    env = dict(os.environ, **{MARKER: marker})
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "cosched",
            "execute",
            *tasks,
            "--strategy",
            "pi",
            "--quantum",
            "0.1",
            "--containment",
            kind,
            *FAST,
            "--out",
            str(out),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        env=env,
    )
    try:
        deadline = time.monotonic() + 30
        while not (out / "schedule.csv").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)
        assert process.poll() is None, process.stderr.read().decode()
        started = time.monotonic()
        os.killpg(process.pid, signal.SIGINT) if signum == signal.SIGINT else process.send_signal(
            signum
        )
        assert process.wait(timeout=10) == code
        assert time.monotonic() - started < STOP_SECONDS
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        process.stdout.close()
        process.stderr.close()
    report = json.loads((out / "report.json").read_text())
    assert report["interrupted_by"] == signal.Signals(signum).name and report["containment"] == kind
    _none_left(marker, process.pid)
