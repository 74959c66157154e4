"""One run of a heatmap measurement: start its launches, time them, restart the shorter member of a
pair.

`run_measurement(spec)` is what a local thread or a Dask worker executes for one run
(`heatmap_plan.place` gives the launches). Wall time is measured around each launch (from just
before the start to the moment its process is reaped, seen by a thread blocked on it). In a pair
both applications start together; one that finishes first is restarted at once, so that the other
has its neighbour until it finishes (003 §4.2: "any completed job being restarted"); each
application's time is its first complete run. A non-zero exit, a timeout or a stop ends the run and
kills every launch of it.

Every launch goes through the task containment (`cosched.containment`): one containment per process,
opened on first use. A measurement belongs to the session of the command that submitted it
(``spec["session"]``): `stop_all(session)` kills that session's launches in this process and makes
its running and later measurements return "stopped" for good (Ctrl-C of the command, or `Client.run`
on every Dask worker: a task that starts after the stop, its cancellation late, launches nothing);
`stop_all()` stops every session until `reset`.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import queue
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from cosched.measurement.heatmap_spec import render

__all__ = [
    "containment_name",
    "launches",
    "run_measurement",
    "stop_all",
    "reset",
    "OUTPUT_TAIL_CHARS",
    "ENV_LAUNCH_START",
    "ENV_RUN",
]

OUTPUT_TAIL_CHARS = 4000  # characters of a failed launch's output kept in its log
ENV_LAUNCH_START = (
    "COSCHED_LAUNCH_START"  # Unix time just before the launch (a fake launcher may use it)
)
ENV_RUN = "COSCHED_HEATMAP_RUN"  # the run id, also in the environment of every launch
STOPPED = "stopped"
POLL_SECONDS = 0.2  # longest wait for a launch to exit before timeouts and Ctrl-C are looked at

_lock = threading.Lock()
_start_lock = threading.Lock()
_EVERY_SESSION = ""  # in `_stopped`: `stop_all()` without a session, until `reset`
_stopped: set[str] = set()  # sessions stopped in this process
_active: dict = {}  # containment task -> its session
_containments: dict = {}  # kind -> this process's containment of that kind


class _Session:
    """A launch in a session of its own, killed as a process group: the stand-in where the task
    containment (`cosched.containment`) is not installed. Processes that leave the group are not
    seen."""

    def __init__(self, command, *, cwd, env, stdout, stderr):
        from cosched.processes import die_with_parent

        parent = os.getpid()
        self.process = subprocess.Popen(
            ["/bin/sh", "-c", command] if isinstance(command, str) else command,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=stderr,
            start_new_session=True,
            preexec_fn=lambda: die_with_parent(parent),
        )

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()

    def close(self) -> None:
        self.kill()


class _Sessions:
    def start(
        self, command, *, cwd=None, env=None, name=None, stdout=None, stderr=None
    ) -> _Session:
        return _Session(command, cwd=cwd, env=env, stdout=stdout, stderr=stderr)

    def close(self) -> None:
        pass


def _new(kind: str):
    try:
        from cosched.containment import open_containment
    except ModuleNotFoundError:
        return _Sessions()
    return open_containment(kind)


def _open(kind: str = "auto"):
    """The containment of `kind` launches use in this process: the one of an active `launches`
    block, else one opened on first use and closed at exit (a Dask worker's); without the
    `cosched.containment` module, sessions of their own."""
    with _lock:
        if kind not in _containments:
            _containments[kind] = _new(kind)
            atexit.register(_containments[kind].close)
        return _containments[kind]


@contextlib.contextmanager
def launches(kind: str = "auto") -> Iterator[None]:
    """Within the block, launches of `kind` go through one containment that is closed when the block
    ends (every task it started killed, its cgroups removed): the command leaves nothing behind in
    its own process. Inside a process-wide one already open, the block uses that one."""
    with _lock:
        if kind in _containments:
            owned = None
        else:
            owned = _containments[kind] = _new(kind)
    try:
        yield
    finally:
        if owned is not None:
            with _lock:
                _containments.pop(kind, None)
            owned.close()


def containment_name(kind: str = "auto") -> str:
    """The backend running launches of `kind` here (cgroup2, cgroup1, pgroup or session)."""
    return getattr(_open(kind), "name", "session")


def stop_all(session: str | None = None) -> int:
    """Kill the launches of `session` (None: of every session) in this process and stop its
    measurements, running or yet to start; returns how many launches were killed."""
    with _lock:
        _stopped.add(_EVERY_SESSION if session is None else session)
        tasks = [task for task, owner in _active.items() if session is None or owner == session]
    for task in tasks:
        task.kill()
    return len(tasks)


def reset() -> None:
    """Allow measurements again after `stop_all()` without a session (a new command in the same
    process); stopped sessions stay stopped."""
    with _lock:
        _stopped.discard(_EVERY_SESSION)


def _is_stopped(session: str) -> bool:
    return _EVERY_SESSION in _stopped or session in _stopped


class _Launch:
    """One started launch of a role, with the thread that reaps it and reports its end."""

    def __init__(
        self,
        role: dict,
        index: int,
        folder: Path,
        count: int,
        events: queue.Queue,
        run: str,
        containment: str,
        session: str,
    ):
        values = dict(role["values"])
        hostfile = folder / f"hosts{index}.txt"
        hostfile.write_text("".join(f"{host} slots={values['ppn']}\n" for host in role["hosts"]))
        values["hostfile"] = str(hostfile)
        command = render(role["command"], values)
        env = {**os.environ, **role["env"], ENV_RUN: run}
        self.log = folder / f"output{index}.{count}.txt"
        self.killed = False
        with open(self.log, "wb") as output, _start_lock:  # one start at a time per containment
            env[ENV_LAUNCH_START] = repr(time.time())
            self.started = time.monotonic()
            self.task = _open(containment).start(
                command,
                cwd=role["cwd"],
                env=env,
                name=f"{role['app']}-{index}",
                stdout=output,
                stderr=subprocess.STDOUT,
            )
        with _lock:
            _active[self.task] = session
        self.thread = threading.Thread(target=self._reap, args=(index, events), daemon=True)
        self.thread.start()

    def _reap(self, index: int, events: queue.Queue) -> None:
        code = self.task.process.wait()
        events.put((index, time.monotonic(), code, self))

    def kill(self) -> None:
        self.killed = True
        self.task.kill()
        self.thread.join(5.0)
        with _lock:
            _active.pop(self.task, None)
        self.task.close()

    def finish(self) -> None:
        with _lock:
            _active.pop(self.task, None)
        self.task.close()

    def output(self) -> str:
        try:
            text = self.log.read_text(errors="replace")
        except OSError:
            return ""
        return text[-OUTPUT_TAIL_CHARS:]


def _next_wait(running: dict[int, _Launch], roles: list[dict]) -> float:
    """Seconds to wait for the next exit: `POLL_SECONDS`, less when a launch's timeout is
    nearer."""
    deadline = min(
        (
            launch_.started + roles[i]["timeout"]
            for i, launch_ in running.items()
            if roles[i]["timeout"] is not None
        ),
        default=None,
    )
    if deadline is None:
        return POLL_SECONDS
    return max(0.0, min(POLL_SECONDS, deadline - time.monotonic()))


def _idle_end(
    result: dict, running: dict[int, _Launch], roles: list[dict], session: str
) -> dict | None:
    """After a wait without an exit: the measurement's result if it ends now (stopped from outside,
    a launch past its timeout), else None."""
    if _is_stopped(session):
        return {**result, "status": STOPPED}
    late = [
        i
        for i, launch_ in running.items()
        if roles[i]["timeout"] is not None
        and time.monotonic() - launch_.started >= roles[i]["timeout"]
    ]
    if not late:
        return None
    output = running[late[0]].output()
    return {
        **result,
        "status": "timeout",
        "returncode": None,
        "output": f"{roles[late[0]]['app']}: no exit within {roles[late[0]]['timeout']} s"
        f"\n{output}",
    }


def _next_exit(
    events: queue.Queue[tuple[int, float, int, _Launch]],
    running: dict[int, _Launch],
    roles: list[dict],
    result: dict,
    session: str,
) -> tuple[int, float, int, _Launch] | dict:
    """The next exit of a current launch (role index, end time, exit status, launch), or the
    measurement's result when it ends first (stopped from outside, a launch past its timeout).
    Exits of launches killed or replaced meanwhile are skipped."""
    while True:
        try:
            index, ended, code, which = events.get(timeout=_next_wait(running, roles))
        except queue.Empty:
            ending = _idle_end(result, running, roles, session)
            if ending is not None:
                return ending
            continue
        if which.killed or running.get(index) is not which:
            continue
        if _is_stopped(session):
            return {**result, "status": STOPPED}
        return index, ended, code, which


def run_measurement(spec: dict) -> dict:
    """Run the launches of one measurement (`spec`: run id, roles, containment kind, session) and
    return its result: ``status`` (ok, failed, timeout, stopped), ``times`` (seconds per role,
    first complete run), ``returncode``, ``output`` (tail of a failed launch's output), ``hosts``,
    ``restarts``, ``containment`` (the backend that ran the launches)."""
    roles = spec["roles"]
    events: queue.Queue[tuple[int, float, int, _Launch]] = queue.Queue()
    times: list[float | None] = [None] * len(roles)
    hosts = sorted({host for role in roles for host in role["hosts"]})
    kind = spec.get("containment", "auto")
    session = spec.get("session", "")
    result = {
        "run": spec["run"],
        "status": "ok",
        "times": times,
        "returncode": 0,
        "output": "",
        "hosts": hosts,
        "restarts": 0,
        "containment": containment_name(kind),
    }
    if _is_stopped(session):
        return {**result, "status": STOPPED}
    with tempfile.TemporaryDirectory(prefix="cosched-heatmap-") as folder:
        running: dict[int, _Launch] = {}
        counts = [0] * len(roles)

        def launch(index: int) -> None:
            counts[index] += 1
            running[index] = _Launch(
                roles[index], index, Path(folder), counts[index], events, spec["run"], kind, session
            )

        try:
            for index in range(len(roles)):
                launch(index)
            while True:
                event = _next_exit(events, running, roles, result, session)
                if isinstance(event, dict):  # stopped, or a launch past its timeout
                    return event
                index, ended, code, which = event
                del running[index]
                which.finish()
                if code != 0:
                    return {
                        **result,
                        "status": "failed",
                        "returncode": code,
                        "output": f"{roles[index]['app']} exited with status {code}\n"
                        + which.output(),
                    }
                if times[index] is None:
                    times[index] = ended - which.started
                if all(value is not None for value in times):
                    return result
                launch(index)  # its neighbour is still running: keep it company (003 §4.2)
                result["restarts"] += 1
        finally:
            for launch_ in list(running.values()):
                launch_.kill()
