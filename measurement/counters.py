"""Per-thread counters behind one protocol: perf_event_open (ctypes), procfs cputime, and
recorded-sample replay.

Every backend answers `read({task: pgid, ...})` with the cumulative `ThreadReading`s of all threads
of all processes in each task's process group (one /proc scan and one time stamp per call), so the
speed probe (formula (30), `cosched.measurement.probe`) never knows where the numbers came from.
`open_backend("auto")` picks hardware counters when they work and says so when they do not.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import os
import platform
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple, Protocol, cast

from cosched.errors import InputError

__all__ = [
    "ThreadReading",
    "CounterBackend",
    "CountersUnavailable",
    "ProcfsCounters",
    "PerfCounters",
    "ReplayCounters",
    "PerfEventGroup",
    "parse_stat",
    "read_stat",
    "group_threads",
    "groups_threads",
    "members_threads",
    "open_backend",
    "perf_event_paranoid",
    "load_samples",
    "scale_count",
    "BACKEND_IPC_CPUTIME",
    "BACKEND_CPUTIME",
    "BACKEND_REPLAY",
    "PERF_TYPE_HARDWARE",
    "PERF_TYPE_SOFTWARE",
    "PERF_COUNT_HW_CPU_CYCLES",
    "PERF_COUNT_HW_INSTRUCTIONS",
    "PERF_COUNT_SW_TASK_CLOCK",
    "SAMPLE_COLUMNS",
    "BACKEND_NAMES",
]

BACKEND_IPC_CPUTIME = "ipc×cputime"  # formula (30) with hardware instructions and cycles
BACKEND_CPUTIME = "cputime"  # no hardware counters: formula (30) with the IPC factor dropped
BACKEND_REPLAY = "replay"
# what `open_backend` takes (auto: perf, else cputime with a reason)
BACKEND_NAMES = (
    "auto",
    "perf",
    "cputime",
)

SYSCALL_PERF_EVENT_OPEN = {
    "x86_64": 298,
    "amd64": 298,
    "aarch64": 241,
    "arm64": 241,
    "i386": 336,
    "i686": 336,
    "ppc64le": 319,
    "s390x": 331,
    "riscv64": 241,
}
PERF_TYPE_HARDWARE, PERF_TYPE_SOFTWARE = 0, 1
PERF_COUNT_HW_CPU_CYCLES, PERF_COUNT_HW_INSTRUCTIONS = 0, 1
PERF_COUNT_SW_TASK_CLOCK = 1
PERF_FORMAT_TOTAL_TIME_ENABLED, PERF_FORMAT_TOTAL_TIME_RUNNING, PERF_FORMAT_GROUP = 1, 2, 8
PERF_FLAG_FD_CLOEXEC = 8
PERF_EVENT_IOC_ENABLE, PERF_EVENT_IOC_DISABLE = 0x2400, 0x2401  # _IO('$', 0), _IO('$', 1)
PERF_IOC_FLAG_GROUP = 1
PERF_ATTR_SIZE_VER5 = 112
ATTR_DISABLED, ATTR_EXCLUDE_KERNEL, ATTR_EXCLUDE_HV = 1 << 0, 1 << 5, 1 << 6
PARANOID_PATH = "/proc/sys/kernel/perf_event_paranoid"

SAMPLE_COLUMNS = ("time", "task", "pid", "tid", "cputime", "instructions", "cycles")


class ThreadReading(NamedTuple):
    """Cumulative values of one thread at `time` (seconds): cputime in seconds, user-space
    instructions/cycles already scaled for multiplexing (NaN when the backend has no hardware
    counters)."""

    time: float
    task: str
    pid: int
    tid: int
    cputime: float
    instructions: float = float("nan")
    cycles: float = float("nan")


class CounterBackend(Protocol):
    """What the harness and the probe need from a counter source."""

    name: str

    def read(self, groups: Mapping[str, int | Sequence[int]]) -> list[ThreadReading]:
        """Cumulative readings of every thread currently in each task (task name -> its process
        group id, or the pids of its processes)."""

    def close(self) -> None:
        """Release counters (file descriptors) held by the backend."""


class CountersUnavailable(InputError):
    """perf_event_open refused: no PMU (ENOENT), paranoid setting or missing capability
    (EACCES/EPERM)."""

    def __init__(self, message: str, errno_value: int):
        self.errno = errno_value
        super().__init__(message)


# --- procfs ---------------------------------------------------------------------------------------


def parse_stat(text: str) -> tuple[str, str, int, int, int]:
    """(comm, state, pgrp, utime ticks, stime ticks) of a /proc/.../stat line.

    The thread name sits in parentheses and may itself hold spaces and ')', so the fields after it
    are located from the LAST ')' of the line.
    """
    close = text.rfind(")")
    start = text.find("(")
    if start < 0 or close < start:
        raise ValueError(f"not a /proc stat line: {text[:80]!r}")
    fields = text[close + 2 :].split()  # fields 3.. of proc(5): state is fields[0]
    return text[start + 1 : close], fields[0], int(fields[2]), int(fields[11]), int(fields[12])


def read_stat(path: str | os.PathLike) -> tuple[str, str, int, int, int] | None:
    """`parse_stat` of a file, or None when the process/thread is gone."""
    try:
        with open(path) as handle:
            return parse_stat(handle.read())
    except (FileNotFoundError, ProcessLookupError):
        return None


def group_threads(pgid: int, proc: str = "/proc") -> list[tuple[int, int]]:
    """(pid, tid) of every thread of every live process in the process group `pgid`."""
    return groups_threads([pgid], proc)[pgid]


def members_threads(
    groups: Mapping[str, int | Sequence[int]], proc: str = "/proc"
) -> dict[str, list[tuple[int, int]]]:
    """(pid, tid) of every live thread of each task, given as a process group id or as its member
    pids (a contained task: `cosched.containment.ContainedTask.pids`, which also sees processes that
    left the group)."""
    listed = (list, tuple, set, frozenset)
    pgids = [int(cast(int, value)) for value in groups.values() if not isinstance(value, listed)]
    by_group = groups_threads(pgids, proc) if pgids else {}
    threads: dict[str, list[tuple[int, int]]] = {}
    for task, value in groups.items():
        if not isinstance(value, (list, tuple, set, frozenset)):
            threads[task] = by_group[int(cast(int, value))]
            continue
        found = threads[task] = []
        for pid in value:
            stat = read_stat(f"{proc}/{pid}/stat")
            if stat is None or stat[1] in "ZX":
                continue
            try:
                found.extend((int(pid), int(tid)) for tid in os.listdir(f"{proc}/{pid}/task"))
            except FileNotFoundError:
                continue
    return threads


def groups_threads(pgids, proc: str = "/proc") -> dict[int, list[tuple[int, int]]]:
    """(pid, tid) of the live threads of each process group, from one scan of `proc`."""
    threads: dict[int, list[tuple[int, int]]] = {int(pgid): [] for pgid in pgids}
    for entry in os.scandir(proc):
        if not entry.name.isdigit():
            continue
        stat = read_stat(f"{entry.path}/stat")
        if stat is None or stat[2] not in threads or stat[1] in "ZX":
            continue
        pid = int(entry.name)
        try:
            threads[stat[2]].extend((pid, int(tid)) for tid in os.listdir(f"{entry.path}/task"))
        except FileNotFoundError:
            continue
    return threads


class ProcfsCounters:
    """Per-thread cputime (user + system) from /proc/PID/task/TID/stat; the `cputime` backend."""

    name = BACKEND_CPUTIME

    def __init__(self, proc: str = "/proc"):
        self.proc = proc
        self.ticks = os.sysconf("SC_CLK_TCK")

    def cputime(self, pid: int, tid: int) -> float | None:
        stat = read_stat(f"{self.proc}/{pid}/task/{tid}/stat")
        return None if stat is None else (stat[3] + stat[4]) / self.ticks

    def read(self, groups: Mapping[str, int | Sequence[int]]) -> list[ThreadReading]:
        now = time.monotonic()
        threads = members_threads(groups, self.proc)
        readings = []
        for task in groups:
            for pid, tid in threads[task]:
                cputime = self.cputime(pid, tid)
                if cputime is not None:
                    readings.append(ThreadReading(now, task, pid, tid, cputime))
        return readings

    def close(self) -> None:
        pass


# --- perf_event_open ------------------------------------------------------------------------------


class PerfEventAttr(ctypes.Structure):
    """`struct perf_event_attr` up to PERF_ATTR_SIZE_VER5 (linux/perf_event.h); flags are one u64
    bitfield."""

    _fields_ = [
        ("type", ctypes.c_uint32),
        ("size", ctypes.c_uint32),
        ("config", ctypes.c_uint64),
        ("sample_period", ctypes.c_uint64),
        ("sample_type", ctypes.c_uint64),
        ("read_format", ctypes.c_uint64),
        ("flags", ctypes.c_uint64),
        ("wakeup_events", ctypes.c_uint32),
        ("bp_type", ctypes.c_uint32),
        ("config1", ctypes.c_uint64),
        ("config2", ctypes.c_uint64),
        ("branch_sample_type", ctypes.c_uint64),
        ("sample_regs_user", ctypes.c_uint64),
        ("sample_stack_user", ctypes.c_uint32),
        ("clockid", ctypes.c_int32),
        ("sample_regs_intr", ctypes.c_uint64),
        ("aux_watermark", ctypes.c_uint32),
        ("sample_max_stack", ctypes.c_uint16),
        ("reserved_2", ctypes.c_uint16),
    ]


assert ctypes.sizeof(PerfEventAttr) == PERF_ATTR_SIZE_VER5

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


def perf_event_paranoid() -> int | None:
    try:
        return int(Path(PARANOID_PATH).read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _unavailable(code: int, what: str) -> CountersUnavailable:
    if code == errno.ENOENT or code == errno.EOPNOTSUPP:
        return CountersUnavailable(
            f"{what}: the kernel has no such hardware event "
            f"({errno.errorcode.get(code, code)}); no hardware PMU "
            "is exposed, as on most virtual machines. Run on bare metal or a VM with a "
            "virtual PMU, or use the "
            "'cputime' backend (speed without the IPC factor)",
            code,
        )
    if code in (errno.EACCES, errno.EPERM):
        paranoid = perf_event_paranoid()
        return CountersUnavailable(
            f"{what}: permission denied ({errno.errorcode[code]}); "
            f"kernel.perf_event_paranoid is {paranoid}. "
            "Per-thread user-space counting of your own processes needs a value <= 2 "
            "(sudo sysctl kernel.perf_event_paranoid=2, or 1), or CAP_PERFMON (Linux >= "
            "5.8) / CAP_SYS_ADMIN "
            "on the measuring process; inside containers the seccomp profile must allow "
            "perf_event_open",
            code,
        )
    return CountersUnavailable(f"{what}: perf_event_open failed ({os.strerror(code)})", code)


def _syscall_number() -> int:
    machine = platform.machine().lower()
    if machine not in SYSCALL_PERF_EVENT_OPEN:
        raise CountersUnavailable(
            f"perf_event_open syscall number unknown for architecture {machine}", errno.ENOSYS
        )
    return SYSCALL_PERF_EVENT_OPEN[machine]


def _open_event(event_type: int, config: int, tid: int, group_fd: int, leader: bool) -> int:
    attr = PerfEventAttr()
    attr.type, attr.size, attr.config = event_type, PERF_ATTR_SIZE_VER5, config
    attr.read_format = (
        PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING
    )
    attr.flags = ATTR_EXCLUDE_KERNEL | ATTR_EXCLUDE_HV | (ATTR_DISABLED if leader else 0)
    fd = _libc.syscall(
        _syscall_number(),
        ctypes.byref(attr),
        ctypes.c_int(tid),
        ctypes.c_int(-1),
        ctypes.c_int(group_fd),
        ctypes.c_ulong(PERF_FLAG_FD_CLOEXEC),
    )
    if fd < 0:
        code = ctypes.get_errno()
        raise _unavailable(code, f"perf_event_open(type={event_type}, config={config}, tid={tid})")
    return fd


def scale_count(value: float, enabled: float, running: float) -> float:
    """Estimate a multiplexed counter: value x time_enabled / time_running (0 when it never ran)."""
    return value * enabled / running if running > 0 else 0.0


class PerfEventGroup:
    """One counter group on one thread (user space only), read as PERF_FORMAT_GROUP with
    enabled/running times."""

    def __init__(self, tid: int, events: Sequence[tuple[int, int]]):
        self.tid = tid
        self.fds: list[int] = []
        try:
            for event_type, config in events:
                leader = not self.fds
                self.fds.append(
                    _open_event(event_type, config, tid, -1 if leader else self.fds[0], leader)
                )
            fcntl.ioctl(self.fds[0], PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP)
        except BaseException:
            self.close()
            raise

    def read(self) -> tuple[list[float], int, int]:
        """(scaled values, time_enabled ns, time_running ns); layout: nr, enabled, running,
        value[nr]."""
        count = len(self.fds)
        raw = os.read(self.fds[0], 8 * (3 + count))
        words = memoryview(raw).cast("Q")
        nr, enabled, running = words[0], words[1], words[2]
        return [scale_count(v, enabled, running) for v in words[3 : 3 + nr]], enabled, running

    def disable(self) -> None:
        fcntl.ioctl(self.fds[0], PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP)

    def close(self) -> None:
        for fd in reversed(self.fds):
            os.close(fd)
        self.fds = []


HARDWARE_EVENTS = (
    (PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES),
    (PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS),
)


class PerfCounters:
    """`ipc×cputime` backend: user-space cycles + instructions per thread (perf_event_open) plus
    procfs cputime.

    New threads get counters when first seen; counters of exited threads are closed. A thread is
    counted from the moment it is discovered, so the probe only differences readings of the same
    thread.
    """

    name = BACKEND_IPC_CPUTIME

    def __init__(self, proc: str = "/proc", events: Sequence[tuple[int, int]] = HARDWARE_EVENTS):
        self.procfs = ProcfsCounters(proc)
        self.events = tuple(events)
        self.groups: dict[int, PerfEventGroup] = {}
        self.task_tids: dict[str, set[int]] = {}

    def read(self, groups: Mapping[str, int | Sequence[int]]) -> list[ThreadReading]:
        now = time.monotonic()
        threads = members_threads(groups, self.procfs.proc)
        readings = []
        for task in groups:
            alive = set()
            for pid, tid in threads[task]:
                group = self.groups.get(tid)
                if group is None:
                    try:
                        group = self.groups[tid] = PerfEventGroup(tid, self.events)
                    except CountersUnavailable as error:
                        if error.errno == errno.ESRCH:  # the thread exited in between
                            continue
                        raise
                cputime = self.procfs.cputime(pid, tid)
                if cputime is None:
                    continue
                alive.add(tid)
                (cycles, instructions), _, _ = group.read()
                readings.append(ThreadReading(now, task, pid, tid, cputime, instructions, cycles))
            self._forget(task, alive)
        return readings

    def _forget(self, task: str, alive: set[int]) -> None:
        """Close the counters of this task's threads that are gone since its previous reading."""
        for tid in self.task_tids.get(task, set()) - alive:
            group = self.groups.pop(tid, None)
            if group is not None:
                group.close()
        self.task_tids[task] = alive

    def close(self) -> None:
        for group in self.groups.values():
            group.close()
        self.groups.clear()


# --- recorded samples -----------------------------------------------------------------------------


def _read_samples_frame(path: Path, source: str):
    """The recorded readings of `path` as read (CSV, JSON records or Parquet); InputError if
    unreadable."""
    import pandas as pd

    try:
        suffix = path.suffix.lower()
        if suffix == ".parquet":
            frame = pd.read_parquet(path)
        else:  # text: the one decoding policy of cosched.inputs (plain or gzip, UTF-8, no binary)
            from io import StringIO

            from cosched.inputs import read_text

            text = StringIO(read_text(path))
            frame = pd.read_json(text, orient="records") if suffix == ".json" else pd.read_csv(text)
    except InputError:
        raise
    except FileNotFoundError:
        raise InputError("no such file", source=source) from None
    except OSError as error:
        raise InputError(f"cannot read: {error.strerror or error}", source=source) from None
    except (ValueError, pd.errors.ParserError) as error:
        raise InputError(
            f"cannot parse recorded samples ({' '.join(str(error).split())})", source=source
        ) from None
    return frame


def load_samples(path: str | os.PathLike):
    """Recorded readings (CSV, JSON records or Parquet) as a DataFrame with `SAMPLE_COLUMNS`, counts
    scaled.

    Required columns: time, task, tid, cputime. Optional: pid (default tid), instructions and cycles
    (default NaN: cputime backend), time_enabled and time_running (raw multiplexed counts are then
    scaled by enabled / running), combination (kept: the harness's `samples.csv`; intervals never
    span two).
    """
    import numpy as np
    import pandas as pd

    path = Path(path)
    source = str(path)
    suffix = path.suffix.lower()
    frame = _read_samples_frame(path, source)
    for column in ("time", "task", "tid", "cputime"):
        if column not in frame.columns:
            raise InputError("missing column", source=source, field=column)
    if "pid" not in frame.columns:
        frame["pid"] = frame["tid"]
    for column in ("instructions", "cycles"):
        if column not in frame.columns:
            frame[column] = np.nan
    numeric = [
        "time",
        "pid",
        "tid",
        "cputime",
        "instructions",
        "cycles",
        "time_enabled",
        "time_running",
    ]
    for column in (c for c in numeric if c in frame.columns):
        values = pd.to_numeric(frame[column], errors="coerce")
        bad = values.isna() & frame[column].notna()
        if bad.any():
            row = int(np.flatnonzero(bad.to_numpy())[0])
            raise InputError(
                f"not a number: {frame[column].iloc[row]!r}",
                source=source,
                field=column,
                line=row + 2 if suffix not in (".json", ".parquet") else None,
            )
        frame[column] = values
    if frame[["time", "tid", "cputime"]].isna().any().any():
        raise InputError("time, tid and cputime must be present in every row", source=source)
    _check_cumulative(frame, source, line_offset=None if suffix in (".json", ".parquet") else 2)
    if "time_enabled" in frame.columns and "time_running" in frame.columns:
        factor = np.where(
            frame["time_running"] > 0,
            frame["time_enabled"] / frame["time_running"].where(frame["time_running"] > 0, 1),
            0.0,
        )
        frame["instructions"] = frame["instructions"] * factor
        frame["cycles"] = frame["cycles"] * factor
    frame["task"] = frame["task"].astype(str)
    frame["pid"] = frame["pid"].astype(np.int64)
    frame["tid"] = frame["tid"].astype(np.int64)
    extra = ["combination"] if "combination" in frame.columns else []
    return frame[extra + list(SAMPLE_COLUMNS)].sort_values(
        ["task", "time", "tid"], ignore_index=True
    )


def _check_cumulative(frame, source: str, line_offset: int | None) -> None:
    """Readings are cumulative: per thread (and combination), time strictly increases and counters
    never drop."""
    import numpy as np

    keys = (["combination"] if "combination" in frame.columns else []) + ["task", "tid"]
    ordered = frame.sort_values(keys + ["time"], kind="stable")
    same_thread = ordered[keys].eq(ordered[keys].shift(1)).all(axis=1).to_numpy()
    for column in ("time", "cputime", "instructions", "cycles"):
        step = ordered[column].diff().to_numpy()
        bad = same_thread & ((step <= 0) if column == "time" else (step < 0))
        if bad.any():
            row = int(ordered.index[np.flatnonzero(bad)[0]])
            rule = (
                "time stamps of a thread must increase"
                if column == "time"
                else "cumulative readings of a thread must not decrease"
            )
            raise InputError(
                rule,
                source=source,
                field=column,
                line=row + line_offset if line_offset is not None else None,
            )


@dataclass
class ReplayCounters:
    """The `replay` backend: each `read` returns, for every task asked for, its next recorded time
    stamp."""

    frame: object
    name: str = BACKEND_REPLAY

    @classmethod
    def from_file(cls, path: str | os.PathLike) -> ReplayCounters:
        return cls(load_samples(path))

    def __post_init__(self):
        self._steps = {
            task: [rows for _, rows in group.groupby("time", sort=True)]
            for task, group in self.frame.groupby("task", sort=False)
        }
        self._cursor = {task: 0 for task in self._steps}

    def read(self, groups: Mapping[str, int | Sequence[int]]) -> list[ThreadReading]:
        readings: list[ThreadReading] = []
        for task in groups:
            steps = self._steps.get(task, [])
            position = self._cursor.get(task, 0)
            if position < len(steps):
                self._cursor[task] = position + 1
                rows = steps[position][list(SAMPLE_COLUMNS)].itertuples(index=False)
                readings.extend(ThreadReading(*row) for row in rows)
        return readings

    def close(self) -> None:
        pass


def open_backend(name: str = "auto", proc: str = "/proc") -> tuple[CounterBackend, str | None]:
    """(backend, why hardware counters are not used or None). `auto` tries perf first and falls back
    to procfs cputime, returning the reason so callers report it; `perf` raises
    `CountersUnavailable` instead."""
    if name in ("auto", "perf"):
        try:
            PerfEventGroup(0, HARDWARE_EVENTS).close()
            return PerfCounters(proc), None
        except CountersUnavailable as error:
            if name == "perf":
                raise
            return ProcfsCounters(proc), str(error)
    if name == "cputime":
        return ProcfsCounters(proc), "cputime backend requested"
    raise InputError(
        f"unknown counter backend {name!r} ({', '.join(BACKEND_NAMES)})", field="backend"
    )
