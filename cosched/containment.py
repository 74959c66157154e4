"""Task containment: start a command so that every process it ever starts can be frozen, accounted
and killed.

A process group is not a container: a child that calls `setsid` leaves it, a signal reaches its
members one by one, and the CPU time of a process that exits is gone unless its parent waited for
it. HPC resource managers put each job step in a cgroup instead (Slurm's `proctrack/cgroup`); this
module does the same, behind one interface with three backends:

- `cgroup2`: a child cgroup of the caller's own cgroup in the unified hierarchy (root, or a
  delegated subtree). Freezing is `cgroup.freeze` (atomic, waits for `cgroup.events` to say frozen),
  killing is `cgroup.kill` (the kernel kills every member, including ones forking at that instant),
  CPU time is `usage_usec` of `cpu.stat`: every process that ever ran in the cgroup, exited or not.
- `cgroup1`: one cgroup in each of the `freezer` and `cpuacct` hierarchies. Freezing is
  `freezer.state`; killing freezes, SIGKILLs every pid of `cgroup.procs` and thaws (frozen processes
  cannot fork away); CPU time is `cpuacct.usage`.
- `pgroup` (no cgroups): the command runs under a small shepherd process that is a child subreaper
  (`PR_SET_CHILD_SUBREAPER`), in a session of its own. Every descendant, also one that calls
  `setsid` or double-forks, stays in the shepherd's process tree (orphans are re-parented to the
  shepherd, which reaps them), so the tree is the task. Freezing SIGSTOPs the tree (not atomic: a
  process forked between the scan and the signal is stopped at the next scan), killing SIGKILLs it
  until it is empty, CPU time is the shepherd's own and children's time (exited descendants) plus
  that of the live descendants, from /proc.

`open_containment("auto")` picks the first that works in that order. Every cgroup is named
`cosched-<pid>-<start time>-<k>` after the process that created it: `open_containment` removes those
of processes that are gone (a killed run), killing what is still inside. While a containment is
open, a small watchdog process (its own session, ignoring Ctrl-C) holds a pipe to the creator: when
the creator dies, even by SIGKILL, the pipe closes and the watchdog kills every task and removes the
cgroups. `Containment.limits` says what a backend cannot see; docs/containment.md states each
backend's guarantees.

`contain_descendants()` applies the same idea to the calling command itself: it becomes a child
subreaper and, on leaving the block, kills every descendant still alive (a user's algorithm file or
command that started a background process).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

from cosched.errors import InputError

__all__ = [
    "Containment",
    "ContainedTask",
    "ContainmentUnavailable",
    "open_containment",
    "contain_descendants",
    "CONTAINMENT_KINDS",
    "CONTAINMENT_LIMITS",
    "cosched_cgroups",
    "clean_stale_cgroups",
    "descendants",
    "kill_descendants",
]

CONTAINMENT_KINDS = ("auto", "cgroup2", "cgroup1", "pgroup")
CGROUP_PREFIX = "cosched-"
FREEZE_TIMEOUT_SECONDS = 1.0  # longest wait for a freezer to report the whole cgroup frozen
KILL_TIMEOUT_SECONDS = 1.5  # longest wait for a killed task's processes to be gone
POLL_SECONDS = 0.002  # polling step while waiting for a freezer or for processes to disappear
WATCHDOG_START_SECONDS = 5.0  # longest wait for the watchdog to report it is ready
PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
PR_SET_CHILD_SUBREAPER = 36  # <linux/prctl.h>
_LINUX = sys.platform.startswith("linux")
_TICKS = os.sysconf("SC_CLK_TCK") if _LINUX else 100

CONTAINMENT_LIMITS = {
    "cgroup2": (
        "sees every process of the task and its whole CPU time, exited processes included; a "
        "process that moves itself to another cgroup (needs write access to the hierarchy) leaves "
        "the task"
    ),
    "cgroup1": (
        "sees every process of the task and its whole CPU time (cpuacct), exited processes "
        "included; a process that moves itself to another cgroup (root only) leaves the task"
    ),
    "pgroup": (
        "no cgroups: the task is the process tree of a subreaper shepherd. Freezing signals the "
        "tree (SIGSTOP) process by process, not atomically; CPU time of an exited process counts "
        "only once a process of the tree (or the shepherd) has waited for it; a process started "
        "through a daemon (at, systemd-run) is not seen"
    ),
}


class ContainmentUnavailable(InputError):
    """The requested backend cannot run here (no cgroup mount, no write access, an old kernel)."""


# --- /proc ----------------------------------------------------------------------------------------


def _stat(pid: int) -> tuple[str, int, int, int, float, float, int] | None:
    """(state, ppid, pgrp, session, own CPU s, waited-for children's CPU s, start time ticks) or
    None."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            text = handle.read().decode("ascii", "replace")
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    fields = text[text.rfind(")") + 2 :].split()
    try:
        return (
            fields[0],
            int(fields[1]),
            int(fields[2]),
            int(fields[3]),
            (int(fields[11]) + int(fields[12])) / _TICKS,
            (int(fields[13]) + int(fields[14])) / _TICKS,
            int(fields[19]),
        )
    except (IndexError, ValueError):
        return None


def _start_time(pid: int) -> int | None:
    stat = _stat(pid)
    return None if stat is None else stat[6]


def _process_table() -> dict[int, tuple]:
    """`_stat` of every process, from one scan of /proc."""
    table = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            stat = _stat(int(entry.name))
            if stat is not None:
                table[int(entry.name)] = stat
    return table


def descendants(root: int, table: dict[int, tuple] | None = None) -> list[int]:
    """Pids of the live descendants of `root` (by parent links; zombies included, `root`
    excluded)."""
    table = _process_table() if table is None else table
    children: dict[int, list[int]] = {}
    for pid, stat in table.items():
        children.setdefault(stat[1], []).append(pid)
    found, todo = [], list(children.get(root, ()))
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, ()))
    return found


def _signal(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, sig)


def _prctl(option: int, value: int) -> bool:
    if not _LINUX:
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    return libc.prctl(option, value, 0, 0, 0) == 0


# --- cgroup file systems --------------------------------------------------------------------------


def _mounts() -> list[tuple[str, str, set[str]]]:
    """(mount point, file system type, options) of every cgroup mount."""
    found = []
    with contextlib.suppress(OSError), open("/proc/self/mounts") as handle:
        for line in handle:
            parts = line.split()
            if len(parts) >= 4 and parts[2] in ("cgroup", "cgroup2"):
                found.append((parts[1].replace("\\040", " "), parts[2], set(parts[3].split(","))))
    return found


def _own_cgroups() -> dict[str, str]:
    """Controller (or "" for the unified hierarchy) -> this process's cgroup path, from
    /proc/self/cgroup."""
    paths = {}
    with contextlib.suppress(OSError), open("/proc/self/cgroup") as handle:
        for line in handle:
            _, controllers, path = line.rstrip("\n").split(":", 2)
            for name in controllers.split(",") if controllers else [""]:
                paths[name] = path
    return paths


def _v2_parent() -> Path | None:
    own = _own_cgroups().get("")
    for mount, kind, _ in _mounts():
        if kind == "cgroup2" and own is not None:
            return Path(mount + own.rstrip("/")) if own != "/" else Path(mount)
    return None


def _v1_parents() -> dict[str, Path] | None:
    own = _own_cgroups()
    parents: dict[str, Path] = {}
    for mount, kind, options in _mounts():
        for controller in ("freezer", "cpuacct"):
            if kind == "cgroup" and controller in options and controller in own:
                path = own[controller].rstrip("/")
                parents[controller] = Path(mount + path) if path else Path(mount)
    return parents if len(parents) == 2 else None


def _write(path: Path, text: str) -> None:
    with open(path, "w") as handle:
        handle.write(text)


def _read(path: Path) -> str:
    with open(path) as handle:
        return handle.read()


def _procs(directory: Path) -> list[int]:
    try:
        return [int(line) for line in _read(directory / "cgroup.procs").split()]
    except (FileNotFoundError, OSError):
        return []


def _run_name(pid: int, start: int | None, k: int) -> str:
    return f"{CGROUP_PREFIX}{pid}-{start}-{k}"


def _owner_alive(name: str) -> bool:
    """Whether the process that created cgroup `name` (cosched-<pid>-<start time>-<k>) still
    runs."""
    parts = name[len(CGROUP_PREFIX) :].split("-")
    if len(parts) != 3 or not parts[0].isdigit():
        return True  # not ours: leave it alone
    return str(_start_time(int(parts[0]))) == parts[1]


def cosched_cgroups() -> list[Path]:
    """Every run cgroup cosched created that still exists (in the hierarchies this process can
    see)."""
    found: list[Path] = []
    parents = [p for p in [_v2_parent(), *(_v1_parents() or {}).values()] if p is not None]
    for parent in dict.fromkeys(parents):
        with contextlib.suppress(OSError):
            found.extend(
                entry for entry in parent.iterdir() if entry.name.startswith(CGROUP_PREFIX)
            )
    return _freezers_first(found)


def _freezers_first(runs: Sequence[Path]) -> list[Path]:
    """v1 runs with their freezer side first: the processes die there, then the other sides are
    empty."""
    return sorted(runs, key=lambda run: not (run / "freezer.state").exists())


def _kill_cgroup(directory: Path, kind: str, freezer: Path | None = None) -> None:
    """Kill every process of one task cgroup and wait (bounded) until it is empty."""
    deadline = time.monotonic() + KILL_TIMEOUT_SECONDS
    if kind == "cgroup2" and (directory / "cgroup.kill").exists():
        with contextlib.suppress(OSError):
            _write(directory / "cgroup.kill", "1")
    else:  # freeze, kill every member, thaw: a frozen process cannot fork a new one in between
        freezer = freezer if freezer is not None else directory
        while _procs(directory) and time.monotonic() < deadline:
            _freeze_files(freezer, kind, True, wait=True)
            for pid in _procs(directory):
                _signal(pid, signal.SIGKILL)
            _freeze_files(freezer, kind, False, wait=False)
            time.sleep(POLL_SECONDS)
    while _procs(directory) and time.monotonic() < deadline:
        time.sleep(POLL_SECONDS)


def _freeze_files(directory: Path, kind: str, frozen: bool, wait: bool = True) -> None:
    with contextlib.suppress(OSError):
        if kind == "cgroup2":
            _write(directory / "cgroup.freeze", "1" if frozen else "0")
        else:
            _write(directory / "freezer.state", "FROZEN" if frozen else "THAWED")
    if not wait:
        return
    deadline = time.monotonic() + FREEZE_TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        try:
            if kind == "cgroup2":
                state = "frozen 1" in _read(directory / "cgroup.events")
            else:
                state = _read(directory / "freezer.state").strip() == (
                    "FROZEN" if frozen else "THAWED"
                )
        except OSError:
            return
        if state == frozen or kind == "cgroup2" and not frozen:
            return
        time.sleep(POLL_SECONDS)


def _remove_run(run: Path) -> None:
    """Kill what is left in a run cgroup (one hierarchy) and remove it with its task cgroups."""
    kind = (
        "cgroup2"
        if (run / "cgroup.freeze").exists() or (run / "cgroup.kill").exists()
        else "cgroup1"
    )
    freezer = "freezer.state" in {p.name for p in run.iterdir()} if run.exists() else False
    with contextlib.suppress(OSError):
        children = [child for child in run.iterdir() if child.is_dir()]
        for child in children:
            if kind == "cgroup2" or freezer:
                _kill_cgroup(child, kind)
            else:  # the cpuacct side of a v1 task: its processes die through the freezer side
                for pid in _procs(child):
                    _signal(pid, signal.SIGKILL)
            _rmdir(child)
        if kind == "cgroup2" or freezer:
            _kill_cgroup(run, kind)
    _rmdir(run)


def _rmdir(path: Path) -> None:
    deadline = time.monotonic() + KILL_TIMEOUT_SECONDS
    while True:
        try:
            path.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:  # EBUSY while the last processes are being torn down
            if time.monotonic() >= deadline:
                return
            time.sleep(POLL_SECONDS)


def clean_stale_cgroups() -> list[str]:
    """Remove the cgroups of cosched runs whose process is gone (killed), killing what is still
    inside."""
    removed = []
    for run in cosched_cgroups():
        if not _owner_alive(run.name):
            _remove_run(run)
            removed.append(str(run))
    return removed


# --- tasks ----------------------------------------------------------------------------------------


def _preexec(parent: int, cgroups: Sequence[str], pdeathsig: bool) -> None:
    """In the child, before exec: join the task's cgroups, die with the parent (cgroup backends)."""
    if pdeathsig:
        _prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL))
        if os.getppid() != parent:
            os.kill(os.getpid(), signal.SIGKILL)
    pid = str(os.getpid())
    for path in cgroups:
        with open(path, "w") as handle:
            handle.write(pid)


SHEPHERD = r"""
import ctypes, os, signal, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER: orphans of the task come back to this process
parent = int(sys.argv[1])
def tree():
    kids = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                text = open("/proc/%s/stat" % name).read()
            except OSError:
                continue
            kids.setdefault(int(text[text.rfind(")") + 2:].split()[1]), []).append(int(name))
    found, todo = [], list(kids.get(os.getpid(), ()))
    while todo:
        pid = todo.pop(); found.append(pid); todo.extend(kids.get(pid, ()))
    return found
def end(*_):
    for _ in range(50):
        pids = tree()
        if not pids:
            break
        for pid in pids:
            try: os.kill(pid, signal.SIGKILL)
            except OSError: pass
        try:
            while os.waitpid(-1, os.WNOHANG)[0]: pass
        except ChildProcessError: pass
    os._exit(137)
signal.signal(signal.SIGUSR1, end)  # the parent died (PDEATHSIG): take the task with us
libc.prctl(1, int(signal.SIGUSR1), 0, 0, 0)
if os.getppid() != parent:
    end()
for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
    signal.signal(sig, lambda signum, frame: [os.kill(p, signum) for p in tree() if True])
argv = sys.argv[2:]
try:
    child = os.fork()
except OSError:
    os._exit(126)
if child == 0:
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1):
        signal.signal(sig, signal.SIG_DFL)
    try:
        os.execvp(argv[0], argv)
    except OSError as error:
        sys.stderr.write("%s: %s\n" % (argv[0], error.strerror)); os._exit(127)
while True:
    try:
        pid, status = os.waitpid(-1, 0)
    except ChildProcessError:
        os._exit(0)
    except InterruptedError:
        continue
    if pid == child:
        break
code = os.waitstatus_to_exitcode(status)
for pid in tree():  # the task ends with its command: background processes go too
    try: os.kill(pid, signal.SIGKILL)
    except OSError: pass
try:
    while os.waitpid(-1, 0): pass
except ChildProcessError: pass
if code < 0:
    signal.signal(-code, signal.SIG_DFL); os.kill(os.getpid(), -code)
os._exit(code & 255)
"""


class ContainedTask:
    """One command and everything it starts; see the module docstring for how each backend does each
    thing."""

    def __init__(
        self,
        owner: Containment,
        process: subprocess.Popen,
        name: str,
        directory: Path | None,
        cpuacct: Path | None,
    ):
        self.owner, self.process, self.name = owner, process, name
        self.pid = process.pid
        # cgroup (freezer side for v1), v1 cpuacct side
        self.directory, self.cpuacct = (
            directory,
            cpuacct,
        )
        self.frozen = False
        self.closed = False
        self._known: dict[
            int, int
        ] = {}  # pgroup: pid -> start time of every process seen in the tree
        # pgroup: CPU time never goes down (a reading between an exit and its wait)
        self._cpu_seen = 0.0
        # pgroup: CPU time of the shepherd's whole life (wait4)
        self._leader_usage: float | None = None
        self._start = _start_time(process.pid)

    # -- state
    @property
    def kind(self) -> str:
        return self.owner.name

    @property
    def returncode(self) -> int | None:
        return self.process.returncode

    def poll(self) -> int | None:
        """The command's exit status once it has exited (reaped here), else None."""
        if self.process.returncode is None:
            self._reap(os.WNOHANG)
        return self.process.returncode

    def wait(self, timeout: float | None = None) -> int | None:
        """Wait up to `timeout` seconds (None: forever) for the command to exit; its status, or
        None."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is not None and time.monotonic() >= deadline:
                return None
            time.sleep(POLL_SECONDS if deadline is not None else 0.01)
        return self.process.returncode

    def _reap(self, flags: int) -> None:
        try:
            pid, status, usage = os.wait4(self.pid, flags)
        except ChildProcessError:  # reaped elsewhere (subprocess)
            if self.process.returncode is None:
                self.process.poll()
            return
        if pid == self.pid:
            self.process.returncode = os.waitstatus_to_exitcode(status)
            self._leader_usage = usage.ru_utime + usage.ru_stime

    def pids(self) -> list[int]:
        """Pids of the task's live processes (the pgroup shepherd excluded)."""
        if self.directory is not None:
            return _procs(self.directory)
        table = _process_table()
        return [pid for pid in descendants(self.pid, table) if table[pid][0] not in "ZX"]

    def cpu_time(self) -> float:
        """Seconds of CPU time used by every process of the task so far (exited ones included)."""
        try:
            if self.owner.name == "cgroup2":
                assert self.directory is not None  # a cgroup task has its cgroup
                for line in _read(self.directory / "cpu.stat").splitlines():
                    if line.startswith("usage_usec"):
                        return int(line.split()[1]) / 1e6
            elif self.owner.name == "cgroup1":
                assert self.cpuacct is not None  # a cgroup task has its cgroup
                return int(_read(self.cpuacct / "cpuacct.usage")) / 1e9
        except OSError:
            return self._cpu_seen
        return self._pgroup_cpu_time()

    def _pgroup_cpu_time(self) -> float:
        # the shepherd waited for the whole tree: all of it is in here
        if self._leader_usage is not None:
            total = self._leader_usage
        else:
            table = _process_table()
            leader = table.get(self.pid)
            total = 0.0 if leader is None else leader[4] + leader[5]
            for pid in descendants(self.pid, table):
                total += table[pid][4] + table[pid][5]
        self._cpu_seen = max(self._cpu_seen, total)
        return self._cpu_seen

    # -- control
    def freeze(self) -> None:
        """Stop every process of the task (atomically with cgroups); returns once they are
        stopped."""
        if self.directory is not None:
            _freeze_files(self.directory, self.owner.name, True)
        else:
            # processes forked between the scan and the signal are caught next time
            for _ in range(3):
                pids = [self.pid, *self.pids()]
                for pid in pids:
                    _signal(pid, signal.SIGSTOP)
                if set(self.pids()) <= set(pids):
                    break
        self.frozen = True

    def thaw(self) -> None:
        """Let every process of the task run again."""
        if self.directory is not None:
            _freeze_files(self.directory, self.owner.name, False, wait=False)
        else:
            for pid in [self.pid, *self.pids()]:
                _signal(pid, signal.SIGCONT)
        self.frozen = False

    def signal(self, sig: int) -> None:
        """Send `sig` to every process of the task (a stopped process acts on it once thawed)."""
        for pid in ([self.pid] if self.directory is None else []) + self.pids():
            _signal(pid, sig)

    def terminate(self, grace: float) -> None:
        """SIGTERM every process and thaw them; kill what is left after `grace` seconds."""
        if self.poll() is None or self.pids():
            self.signal(signal.SIGTERM)
            self.thaw()
            deadline = time.monotonic() + grace
            while (self.poll() is None or self.pids()) and time.monotonic() < deadline:
                time.sleep(POLL_SECONDS * 5)
        self.kill()

    def kill(self) -> None:
        """SIGKILL every process of the task, frozen, forking or ignoring SIGTERM, and reap the
        command."""
        if self.directory is not None:
            _kill_cgroup(self.directory, self.owner.name)
        else:
            deadline = time.monotonic() + KILL_TIMEOUT_SECONDS
            # the shepherd must not reap (and lose) the tree while it dies
            _signal(self.pid, signal.SIGSTOP)
            while time.monotonic() < deadline:
                pids = self.pids()
                if not pids:
                    break
                for pid in pids:
                    _signal(pid, signal.SIGKILL)
                time.sleep(POLL_SECONDS)
            _signal(self.pid, signal.SIGKILL)
        self.frozen = False
        if self.process.returncode is None:
            self._reap(0)
        self.owner._reap_orphans()

    def close(self) -> None:
        """Kill what is left and remove the task's cgroups."""
        if self.closed:
            return
        self.kill()
        for directory in (self.directory, self.cpuacct):
            if directory is not None:
                _rmdir(directory)
        self.closed = True

    def __enter__(self) -> ContainedTask:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class Containment:
    """Starts tasks in one backend; closing it kills every task and removes every cgroup it
    created."""

    def __init__(self, kind: str, *, watchdog: bool = True):
        if kind not in CONTAINMENT_KINDS[1:]:
            raise InputError(
                f"unknown containment {kind!r}; choose from {', '.join(CONTAINMENT_KINDS)}",
                field="--containment",
            )
        self.name = kind
        self.limits = CONTAINMENT_LIMITS[kind]
        self.tasks: list[ContainedTask] = []
        self.runs: list[Path] = []  # this containment's run cgroups (one per hierarchy)
        self._watchdog: subprocess.Popen | None = None
        self._closed = False
        if kind == "pgroup":
            if not _LINUX:
                raise ContainmentUnavailable("the pgroup containment needs Linux (/proc, prctl)")
        else:
            parents = {"": _v2_parent()} if kind == "cgroup2" else _v1_parents()
            if not parents or None in parents.values():
                raise ContainmentUnavailable(f"no {kind} hierarchy mounted (see /proc/self/mounts)")
            roots = [parent for parent in parents.values() if parent is not None]  # all of them
            clean_stale_cgroups()
            Containment._counter += 1
            name = _run_name(os.getpid(), _start_time(os.getpid()), Containment._counter)
            try:
                for parent in dict.fromkeys(roots):
                    (parent / name).mkdir()
                    self.runs.append(parent / name)
                if kind == "cgroup2" and not (self.runs[0] / "cgroup.freeze").exists():
                    raise ContainmentUnavailable(
                        "cgroup2 has no cgroup.freeze here (Linux >= 5.2 needed)"
                    )
            except OSError as error:
                self._remove_runs()
                raise ContainmentUnavailable(
                    f"cannot create a {kind} cgroup in {parent}: {error.strerror or error}"
                ) from None
            except BaseException:
                self._remove_runs()
                raise
        if watchdog:
            self._start_watchdog()

    _counter = 0

    def _remove_runs(self) -> None:
        for run in _freezers_first(self.runs):
            _remove_run(run)
        self.runs = []

    # -- watchdog: cleans up after a creator killed with SIGKILL
    def _start_watchdog(self) -> None:
        code = "import cosched.containment as c; c._watchdog_main()"
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
        try:
            self._watchdog = subprocess.Popen(
                [sys.executable, "-c", code, str(os.getpid())],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
                env=env,
                close_fds=True,
            )
            ready = self._watchdog.stdout.readline()  # type: ignore[union-attr]
        except OSError:
            self._watchdog = None
            return
        if ready.strip() != b"ready":
            self._stop_watchdog()
            return
        for run in self.runs:
            self._tell(f"cgroup {run}")

    def _tell(self, line: str) -> None:
        if self._watchdog is not None and self._watchdog.stdin is not None:
            with contextlib.suppress(OSError, ValueError):
                self._watchdog.stdin.write((line + "\n").encode())
                self._watchdog.stdin.flush()

    def _stop_watchdog(self) -> None:
        watchdog, self._watchdog = self._watchdog, None
        if watchdog is None:
            return
        with contextlib.suppress(OSError, ValueError):
            watchdog.stdin.write(b"done\n")  # type: ignore[union-attr]
            watchdog.stdin.close()  # type: ignore[union-attr]
        try:
            watchdog.wait(KILL_TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:
            watchdog.kill()
            watchdog.wait()
        with contextlib.suppress(OSError, ValueError):
            watchdog.stdout.close()  # type: ignore[union-attr]

    # -- tasks
    def start(
        self,
        command: str | Sequence[str],
        *,
        cwd=None,
        env=None,
        name: str | None = None,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        frozen: bool = False,
    ) -> ContainedTask:
        """Start `command` (a shell command line, or an argv list run without a shell) as a
        contained task.

        With `frozen` it is frozen right after it starts (before that it may have run for a few
        milliseconds). A command that does not exist raises `InputError` (argv form) or exits with
        status 127 (shell form).
        """
        if self._closed:
            raise RuntimeError("this containment is closed")
        argv = ["/bin/sh", "-c", command] if isinstance(command, str) else [str(a) for a in command]
        label = name or (command if isinstance(command, str) else shlex.join(argv))
        if not argv or shutil.which(argv[0], path=(env or os.environ).get("PATH")) is None:
            raise InputError(
                f"cannot start task {label!r}: command not found: {argv[0] if argv else ''!r}",
                field="--task",
            )
        index = len(self.tasks)
        directory = cpuacct = None
        cgroups: list[str] = []
        if self.name != "pgroup":
            safe = "".join(ch if ch.isalnum() or ch in "._" else "_" for ch in (name or "task"))[
                :40
            ]
            paths = [run / f"{index}-{safe}" for run in self.runs]
            for path in paths:
                path.mkdir()
            directory = next((p for p in paths if (p / "freezer.state").exists()), paths[0])
            cpuacct = next((p for p in paths if (p / "cpuacct.usage").exists()), directory)
            cgroups = [str(path / "cgroup.procs") for path in paths]
        else:
            argv = [sys.executable, "-I", "-S", "-c", SHEPHERD, str(os.getpid()), *argv]
            # a shepherd killed with SIGKILL leaves its tree to us
            _prctl(PR_SET_CHILD_SUBREAPER, 1)
        parent = os.getpid()
        try:
            process = subprocess.Popen(
                argv,
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=stdout,
                stderr=stderr,
                start_new_session=True,
                close_fds=True,
                preexec_fn=lambda: _preexec(parent, cgroups, pdeathsig=self.name != "pgroup"),
            )
        except OSError as error:
            for procs_file in cgroups:
                _rmdir(Path(procs_file).parent)
            raise InputError(
                f"cannot start task {label!r}: {error.strerror or error}", field="--task"
            ) from None
        task = ContainedTask(self, process, label, directory, cpuacct)
        self.tasks.append(task)
        if directory is None:
            self._tell(f"tree {process.pid} {task._start}")
        if frozen:
            task.freeze()
        return task

    def _reap_orphans(self) -> None:
        """pgroup: reap zombies re-parented to this process by a shepherd that was killed."""
        if self.name != "pgroup":
            return
        me = os.getpid()
        owned = {task.pid for task in self.tasks}
        for pid, stat in _process_table().items():
            if stat[1] == me and stat[0] == "Z" and pid not in owned:
                with contextlib.suppress(ChildProcessError):
                    os.waitpid(pid, os.WNOHANG)

    def close(self) -> None:
        """Kill every task, remove every cgroup, stop the watchdog. Safe to call twice."""
        if self._closed:
            return
        self._closed = True
        try:
            for task in self.tasks:
                task.close()
            self._remove_runs()
        finally:
            self._stop_watchdog()

    def __enter__(self) -> Containment:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Containment({self.name!r}, tasks={len(self.tasks)})"


def open_containment(kind: str = "auto", *, watchdog: bool = True) -> Containment:
    """The containment `kind`; "auto": the first of cgroup2, cgroup1, pgroup that works here.

    `.name` says which one runs and `.limits` what it cannot see; `.reasons` (auto only) why
    stronger backends were skipped."""
    if kind != "auto":
        return Containment(kind, watchdog=watchdog)
    reasons = {}
    for candidate in CONTAINMENT_KINDS[1:]:
        try:
            containment = Containment(candidate, watchdog=watchdog)
        except ContainmentUnavailable as error:
            reasons[candidate] = error.message
            continue
        containment.reasons = reasons  # type: ignore[attr-defined]
        return containment
    raise ContainmentUnavailable(
        "no containment works here: " + "; ".join(f"{k}: {v}" for k, v in reasons.items())
    )


def _watchdog_main() -> None:
    """The watchdog process: read what to clean from stdin; on EOF without "done" (the creator
    died), clean."""
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)
    runs: list[Path] = []
    trees: list[tuple[int, str]] = []
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    for line in sys.stdin:
        kind, _, value = line.strip().partition(" ")
        if kind == "done":
            return
        if kind == "cgroup":
            runs.append(Path(value))
        elif kind == "tree":
            pid, _, start = value.partition(" ")
            trees.append((int(pid), start))
    for pid, start in trees:  # a shepherd (stopped, maybe) and its tree
        if str(_start_time(pid)) == start:
            _signal(pid, signal.SIGSTOP)
            for _ in range(50):
                pids = descendants(pid)
                if not pids:
                    break
                for child in pids:
                    _signal(child, signal.SIGKILL)
                time.sleep(POLL_SECONDS)
            _signal(pid, signal.SIGKILL)
    for run in _freezers_first(runs):
        _remove_run(run)


@contextlib.contextmanager
def contain_descendants() -> Iterator[None]:
    """Within the block this process is a child subreaper; on leaving it, every descendant still
    alive is killed (SIGKILL, after SIGCONT is useless) and reaped: nothing a user's code started
    outlives the command. Processes re-parented away from this process's tree before the block ends
    (to a daemon) are not seen."""
    if not _LINUX:
        yield
        return
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    try:
        yield
    finally:
        kill_descendants()


def kill_descendants(exclude: Sequence[int] = ()) -> list[int]:
    """SIGKILL every live descendant of this process (repeatedly, until none is left) and reap the
    zombies re-parented to it; returns the pids killed."""
    me, killed = os.getpid(), []
    deadline = time.monotonic() + KILL_TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        table = _process_table()
        pids = [
            pid
            for pid in descendants(me, table)
            if pid not in exclude and table[pid][0] not in "ZX"
        ]
        if not pids:
            break
        for pid in pids:
            _signal(pid, signal.SIGSTOP)  # no new forks while the tree is killed
        for pid in pids:
            _signal(pid, signal.SIGKILL)
        killed.extend(pids)
        time.sleep(POLL_SECONDS)
    for pid, stat in _process_table().items():
        if stat[1] == me and stat[0] == "Z":
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, os.WNOHANG)
    return killed
