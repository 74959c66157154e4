"""Fuzzing what an algorithm file can do to the `cosched elastic` process that runs it.

An algorithm file is given a random set of hostile habits on import and in every call (ignore
every signal, cancel alarms, leave non-daemon and daemon threads running, print from a thread,
write on file descriptor 1, replace `sys.stdout`, change directory, call `sys.exit` or `os._exit`
in a thread) and then either schedules normally, loops past the time limit, or loops until the
command gets Ctrl-C or SIGTERM. Whatever the habits, the command (a real process) must end as its
contract says: exit 0 with the `--json` document alone on stdout and the outputs in `--out`; exit 2
with one error line naming the time limit; exit 130 / 143 within 2 s of the signal; never a hang.
Campaigns as in `conftest.py` (a real process per example: few examples).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from hypothesis import given, note
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "simulator" / "elastic"))
from scenario import RIGID, write_scenario  # noqa: E402

CAMPAIGN_EXAMPLES = {"quick": 1, "long": int(os.environ.get("FUZZ_EXAMPLES", "60"))}
PROCESS_SECONDS = 60.0  # the longest a run may take (a loaded machine)
INTERRUPT_SECONDS = 2.0  # Ctrl-C / SIGTERM end a run within this (docs/guarantees.md)
LIMIT = "0.5"  # --algorithm-time-limit of the runs
HABITS = {
    "ignore-signals": (
        "for number in signal.valid_signals():\n"
        "    try:\n        signal.signal(number, signal.SIG_IGN)\n"
        "    except (OSError, ValueError, RuntimeError):\n        pass\n"
    ),
    "cancel-alarms": (
        "threading.Thread(target=lambda: [signal.setitimer(signal.ITIMER_REAL, 0) "
        "for _ in iter(int, 1)], daemon=True).start()\n"
    ),
    "non-daemon-thread": "threading.Thread(target=time.sleep, args=(600,)).start()\n",
    "printing-thread": (
        "def noise():\n    while True:\n        print('noise', flush=True)\n"
        "        os.write(1, b'raw\\n')\n        time.sleep(0.01)\n"
        "threading.Thread(target=noise, daemon=True).start()\n"
    ),
    "replace-stdout": "sys.stdout = open(os.devnull, 'w')\n",
    "chdir": "os.chdir(tempfile.gettempdir())\n",
    "exit-in-thread": (
        "threading.Thread(target=sys.exit, args=(3,)).start()\n"
        "threading.Thread(target=os._exit, args=(4,)).start()\n"
    ),
}
IN_CALL = {  # what each habit repeats in every call
    "ignore-signals": "    signal.signal(signal.SIGINT, signal.SIG_IGN)\n    signal.alarm(0)\n",
    "replace-stdout": "    sys.stdout = open(os.devnull, 'w')\n",
    "chdir": "    os.chdir(tempfile.gettempdir())\n",
}
ENDINGS = ("schedules", "loops-past-limit", "sigint", "sigterm")
SCHEDULE = (
    "    free = [node for node in nodes if not node.assigned_job_ids]\n"
    "    for job in jobs:\n"
    "        if job.state == JobState.PENDING and len(free) >= 2:\n"
    "            job.assign(free[:2])\n"
    "            del free[:2]\n"
)
LOOP = "    print('looping', file=sys.__stderr__, flush=True)\n    while True:\n        pass\n"


def _algorithm(habits: list[str], ending: str) -> str:
    head = "import os, signal, sys, tempfile, threading, time\n"
    head += "from elastisim_python import JobState\n"
    body = "".join(HABITS[habit] for habit in habits)
    call = "".join(IN_CALL.get(habit, "") for habit in habits)
    return (
        head
        + body
        + "def schedule(jobs, nodes, system):\n"
        + call
        + (SCHEDULE if ending == "schedules" else LOOP)
    )


def _run(folder: Path, habits: list[str], ending: str) -> None:
    config = write_scenario(folder, [dict(RIGID) for _ in range(2)])
    algorithm = folder / "algo.py"
    algorithm.write_text(_algorithm(habits, ending))
    note(algorithm.read_text())
    out = folder / "out"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "cosched",
            "elastic",
            str(config),
            "--algorithm",
            str(algorithm),
            "--out",
            str(out),
            "--json",
            "--algorithm-time-limit",
            LIMIT if ending == "loops-past-limit" else "0",
        ],  # fmt: skip
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=folder,
    )
    try:
        if ending in ("sigint", "sigterm"):
            line = process.stderr.readline()
            while line and b"looping" not in line:
                line = process.stderr.readline()
            sent = time.monotonic()
            sig = signal.SIGINT if ending == "sigint" else signal.SIGTERM
            process.send_signal(sig)
            process.wait(timeout=PROCESS_SECONDS)
            assert time.monotonic() - sent < INTERRUPT_SECONDS
            assert process.returncode == 128 + sig
        stdout, stderr = process.communicate(timeout=PROCESS_SECONDS)
    finally:
        process.kill()
        process.communicate()
    errors = [line for line in stderr.decode().splitlines() if line.startswith("cosched elastic")]
    note(f"exit {process.returncode}: {errors}")
    if ending == "schedules":
        assert process.returncode == 0
        assert json.loads(stdout)["completed"] == 2  # the document alone
        assert (out / "job_statistics.csv").is_file()
    else:
        assert stdout == b"" and not out.exists()
    if ending == "loops-past-limit":
        assert process.returncode == 2
        assert "ran longer than the time limit of 0.5 s" in errors[-1]


def test_no_habit_of_an_algorithm_file_disables_the_command(campaign):
    habits = st.lists(st.sampled_from(sorted(HABITS)), unique=True, max_size=len(HABITS))

    @given(habits=habits, ending=st.sampled_from(ENDINGS))
    def check(habits, ending):
        with tempfile.TemporaryDirectory() as folder:
            _run(Path(folder), habits, ending)

    campaign(check)()
