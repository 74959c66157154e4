"""The task-containment layer on real processes, under every backend this machine offers.

Each test starts real commands (a shell pipeline, a forking task, a `setsid` child, a task ignoring
SIGTERM, a never-ending task interrupted with Ctrl-C) and checks afterwards that nothing it started
is alive and that no cgroup cosched created remains. Backends that cannot run here are skipped with
the reason.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from cosched.containment import (
    CONTAINMENT_KINDS,
    ContainmentUnavailable,
    cosched_cgroups,
    descendants,
    open_containment,
)
from cosched.errors import InputError

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="containment needs Linux"
)

BACKENDS = CONTAINMENT_KINDS[1:]
SETTLE_SECONDS = 0.3  # time a task gets to start its processes before the test looks at them
GONE_SECONDS = 2.0  # longest wait for killed processes to disappear from /proc
CHILD_OVERHEAD_SECONDS = (
    0.15  # CPU time of the shell and the interpreter's exit beyond what the child reports
)


def _alive(pid: int) -> bool:
    """Running or stopped (a zombie waiting for its reaper is dead)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            text = handle.read()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return text[text.rfind(")") + 2] not in "ZX"


def _all_gone(pids, seconds: float = GONE_SECONDS) -> list[int]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        alive = [pid for pid in pids if _alive(pid)]
        if not alive:
            return []
        time.sleep(0.02)
    return [pid for pid in pids if _alive(pid)]


@pytest.fixture(params=BACKENDS)
def containment(request):
    try:
        opened = open_containment(request.param)
    except ContainmentUnavailable as error:
        pytest.skip(f"{request.param} not available here: {error.message}")
    yield opened
    opened.close()
    assert not _ours()
    assert not any(run.exists() for run in opened.runs)


def _ours():
    """cgroups this test process created that still exist (other processes on the machine may have
    theirs)."""
    return [path for path in cosched_cgroups() if path.name.startswith(f"cosched-{os.getpid()}-")]


def _finish(containment, task, seen):
    """Close and check: no process seen is alive, no cgroup of this containment is left."""
    runs = list(containment.runs)
    containment.close()
    assert _all_gone(seen) == []
    assert not [run for run in runs if run.exists()]
    assert not _ours()


def test_shell_pipeline_is_seen_and_killed(containment):
    task = containment.start("yes | cat > /dev/null", name="pipe")
    time.sleep(SETTLE_SECONDS)
    pids = task.pids()
    assert len(pids) >= 2  # yes and cat (and the shell, unless it exec'd the last command)
    assert task.cpu_time() > 0
    task.kill()
    assert task.poll() is not None
    _finish(containment, task, pids)


def test_forking_task_freezes_whole_and_stops_accounting(containment):
    script = "for i in 1 2 3; do (while :; do :; done) & done; wait"
    task = containment.start(script, name="forks")
    time.sleep(SETTLE_SECONDS)
    pids = task.pids()
    assert len(pids) >= 4
    task.freeze()
    frozen_cpu = task.cpu_time()
    time.sleep(0.2)
    assert task.cpu_time() - frozen_cpu < 0.02  # nothing of the task runs while frozen
    task.thaw()
    time.sleep(0.2)
    assert task.cpu_time() > frozen_cpu
    task.freeze()
    task.kill()  # killing a frozen task works
    _finish(containment, task, pids)


def test_setsid_child_is_contained(containment):
    task = containment.start("setsid sh -c 'while :; do :; done' & sleep 30", name="setsid")
    time.sleep(SETTLE_SECONDS)
    pids = task.pids()
    escaped = [pid for pid in pids if os.getsid(pid) != os.getsid(task.pid)]
    assert escaped, "the setsid child should be in another session"
    task.close()
    _finish(containment, task, pids)


def test_setsid_child_of_exited_shell_is_killed_with_the_task(containment):
    task = containment.start("setsid sh -c 'while :; do :; done' &", name="orphan")
    time.sleep(SETTLE_SECONDS)
    pids = task.pids()
    task.wait(
        GONE_SECONDS
    )  # the shell exits at once; the orphan is in the cgroup or was killed at exit
    _finish(containment, task, pids)


def test_sigterm_ignoring_task_ends_within_grace(containment):
    task = containment.start("trap '' TERM; while :; do :; done", name="stubborn", frozen=True)
    pids = task.pids()
    started = time.monotonic()
    task.terminate(grace=0.2)
    assert time.monotonic() - started < 1.0
    assert task.returncode is not None and task.returncode < 0
    _finish(containment, task, pids)


def test_exit_status_and_cpu_after_exit(containment):
    task = containment.start(
        [sys.executable, "-c", "import sys\nx = 0\nfor i in range(10**6): x += i\nsys.exit(3)"],
        name="exits",
    )
    assert task.wait(10) == 3
    assert (
        task.cpu_time() > 0.01
    )  # a cgroup keeps the time of its exited processes; the shepherd reports it
    _finish(containment, task, [])


def test_missing_command(containment):
    with pytest.raises(InputError, match="cannot start task"):
        containment.start(["/nonexistent/command"], name="missing")
    task = containment.start("/nonexistent/command", name="missing-sh", stderr=subprocess.DEVNULL)
    assert task.wait(5) == 127
    _finish(containment, task, [])


def test_a_shell_launched_child_is_accounted_whole(containment, tmp_path):
    """The shell stays (no exec) and its python child does the work: the task's CPU time holds the
    child's."""
    report = tmp_path / "cpu"
    work = (
        "import time, sys\nwhile time.process_time() < 0.3: pass\n"
        "open(sys.argv[1], 'w').write(str(time.process_time()))"
    )
    task = containment.start(f'{sys.executable} -c "{work}" {report}; true', name="shell")
    assert task.wait(30) == 0
    child = float(report.read_text())
    assert child <= task.cpu_time() <= child + CHILD_OVERHEAD_SECONDS
    _finish(containment, task, [])


@pytest.mark.parametrize("kind", BACKENDS)
def test_kill_9_of_the_creator_leaves_nothing(kind, tmp_path):
    """The watchdog kills every task and removes the cgroups when the creating process dies by
    SIGKILL."""
    script = tmp_path / "creator.py"
    script.write_text(
        textwrap.dedent(f"""
        import sys, time
        from cosched.containment import open_containment, ContainmentUnavailable
        try:
            c = open_containment({kind!r})
        except ContainmentUnavailable as error:
            print("unavailable", error, flush=True); sys.exit(0)
        a = c.start("setsid sh -c 'while :; do :; done' & sleep 100", name="a")
        b = c.start("trap '' TERM; while :; do :; done", name="b", frozen=True)
        time.sleep({SETTLE_SECONDS})
        print(" ".join(map(str, a.pids() + b.pids() + [a.pid, b.pid])), *c.runs, flush=True)
        time.sleep(100)
    """)
    )
    creator = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    line = creator.stdout.readline().split()
    if line and line[0] == "unavailable":
        creator.wait()
        pytest.skip(" ".join(line))
    pids = [int(word) for word in line if word.isdigit()]
    runs = [Path(word) for word in line if not word.isdigit()]
    assert pids
    creator.kill()
    creator.wait()
    creator.stdout.close()
    assert _all_gone(pids) == []
    deadline = time.monotonic() + GONE_SECONDS
    while any(run.exists() for run in runs) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not [run for run in runs if run.exists()]


def test_stale_cgroups_of_a_killed_run_are_removed_at_the_next_start():
    try:
        first = open_containment("auto", watchdog=False)
    except ContainmentUnavailable as error:
        pytest.skip(error.message)
    if first.name == "pgroup":
        first.close()
        pytest.skip("no cgroup backend here")
    stale = [
        run.with_name(run.name.replace(f"-{os.getpid()}-", "-999999999-")) for run in first.runs
    ]
    for run in stale:  # a cgroup named after a process that no longer exists
        run.mkdir()
    first.close()
    second = open_containment(first.name, watchdog=False)
    second.close()
    assert not [run for run in stale if run.exists()]


def test_ctrl_c_of_a_command_ends_never_ending_tasks(tmp_path):
    """A never-ending task under a process that gets SIGINT: the process ends within 2 s, nothing
    survives."""
    script = tmp_path / "runner.py"
    script.write_text(
        textwrap.dedent(f"""
        import sys, time
        from cosched.containment import open_containment
        from cosched.processes import termination_signals, interrupt_exit_code
        with termination_signals():
            try:
                with open_containment("auto") as c:
                    t = c.start("while :; do :; done & sleep 1000", name="forever")
                    time.sleep({SETTLE_SECONDS})
                    print(" ".join(map(str, t.pids())), flush=True)
                    t.wait()
            except KeyboardInterrupt as error:
                sys.exit(interrupt_exit_code(error))
    """)
    )
    runner = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    pids = [int(word) for word in runner.stdout.readline().split()]
    runner.stdout.close()
    assert pids
    started = time.monotonic()
    runner.send_signal(signal.SIGINT)
    assert runner.wait(5) == 130
    assert time.monotonic() - started < 2.0
    assert _all_gone(pids) == []


def test_contain_descendants_kills_background_processes(tmp_path):
    script = tmp_path / "user.py"
    script.write_text(
        textwrap.dedent("""
        import subprocess, time
        from cosched.containment import contain_descendants
        with contain_descendants():
            subprocess.Popen("setsid sh -c 'sleep 100' & (sleep 100 &) ; sleep 100 &", shell=True)
            time.sleep(0.3)
            from cosched.containment import descendants
            import os
            print(" ".join(map(str, descendants(os.getpid()))), flush=True)
    """)
    )
    result = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=30
    )
    pids = [int(word) for word in result.stdout.split()]
    assert len(pids) >= 3
    assert _all_gone(pids) == []


def test_descendants_of_this_process_only():
    child = subprocess.Popen(["sleep", "5"])
    try:
        assert child.pid in descendants(os.getpid())
        assert os.getpid() not in descendants(os.getpid())
    finally:
        child.kill()
        child.wait()


def test_unknown_kind_is_an_input_error():
    with pytest.raises(InputError, match="unknown containment"):
        open_containment("docker")
