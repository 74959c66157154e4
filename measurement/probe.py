"""Task processing speed from cumulative counter readings: formula (30) of 002 §6, averaged over
threads.

nu(t) = (inst(t) - inst(t - dt)) / (cycl(t) - cycl(t - dt)) x (cpu(t) - cpu(t - dt)) / dt per
thread; the task's speed is the mean over its threads (002 §7). Without hardware counters (the
`cputime` backend) the IPC factor is dropped and nu(t) = d cpu / dt. Threads that did not run at all
in an interval (a waiting launcher shell, an idle MPI progress thread) are left out of the mean; a
task none of whose threads ran has speed 0.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from cosched.measurement.counters import SAMPLE_COLUMNS, ThreadReading

__all__ = [
    "thread_speed",
    "interval_speeds",
    "window_speeds",
    "readings_frame",
    "task_speed",
    "CPUTIME_EPSILON",
    "MIN_ALONE_SPEED",
]

# seconds of cputime below which a thread counts as not having run in an interval
CPUTIME_EPSILON = 1e-9
MIN_ALONE_SPEED = 0.05  # a speed alone below this is no divisor (002 §3): re-measured, then refused


def thread_speed(d_instructions, d_cycles, d_cputime, dt):
    """Formula (30) of 002 §6 per thread, vectorised; NaN instruction deltas (no PMU) drop the IPC
    factor."""
    d_instructions, d_cycles = np.asarray(d_instructions, float), np.asarray(d_cycles, float)
    share = np.asarray(d_cputime, float) / np.asarray(dt, float)  # 002 §6, (30): d cpu / dt
    with np.errstate(divide="ignore", invalid="ignore"):
        # 002 §6, (30): d inst / d cycl
        ipc = np.where(d_cycles > 0, d_instructions / d_cycles, 0.0)
    return np.where(np.isnan(d_instructions), share, ipc * share)


def readings_frame(readings: Iterable[ThreadReading]):
    """Readings as a DataFrame with `SAMPLE_COLUMNS` (the raw samples table)."""
    import pandas as pd

    frame = pd.DataFrame(list(readings), columns=list(SAMPLE_COLUMNS))
    return frame.astype(
        {
            "time": float,
            "task": str,
            "pid": np.int64,
            "tid": np.int64,
            "cputime": float,
            "instructions": float,
            "cycles": float,
        }
    )


def interval_speeds(samples):
    """Per task and sampling interval: start, end, speed (mean of (30) over threads that ran),
    threads counted.

    `samples` holds cumulative readings (`SAMPLE_COLUMNS`); each task's threads are read at common
    time stamps, and only threads present at both ends of an interval contribute to it. With a
    `combination` column (the harness's samples) intervals are formed within each combination only.
    """
    import pandas as pd

    keys = ["combination"] if "combination" in samples.columns else []
    frame = samples.sort_values(["task", "tid", "time"], kind="stable")
    previous = frame.groupby(keys + ["task", "tid"], sort=False)[
        ["time", "cputime", "instructions", "cycles"]
    ].shift(1)
    paired = previous["time"].notna().to_numpy()
    d_time = frame["time"].to_numpy() - previous["time"].to_numpy()
    d_cpu = frame["cputime"].to_numpy() - previous["cputime"].to_numpy()
    speed = thread_speed(
        frame["instructions"].to_numpy() - previous["instructions"].to_numpy(),
        frame["cycles"].to_numpy() - previous["cycles"].to_numpy(),
        d_cpu,
        np.where(paired, d_time, 1.0),
    )
    ran = paired & (d_cpu > CPUTIME_EPSILON)
    per_thread = pd.DataFrame(
        {
            **{key: frame[key].to_numpy()[paired] for key in keys},
            "task": frame["task"].to_numpy()[paired],
            "end": frame["time"].to_numpy()[paired],
            "start": previous["time"].to_numpy()[paired],
            "speed": np.where(ran, speed, 0.0)[paired],
            "ran": ran[paired],
        }
    )
    grouped = per_thread.groupby(keys + ["task", "end"], sort=True)
    result = grouped.agg(start=("start", "max"), speed_sum=("speed", "sum"), threads=("ran", "sum"))
    result["speed"] = np.where(
        result["threads"] > 0, result["speed_sum"] / result["threads"].clip(lower=1), 0.0
    )
    return result.reset_index()[keys + ["task", "start", "end", "speed", "threads"]]


def window_speeds(
    before: Iterable[ThreadReading], after: Iterable[ThreadReading]
) -> dict[str, float]:
    """Speed of each task between two readings (one sampling interval of formula (30))."""
    speeds = interval_speeds(readings_frame(list(before) + list(after)))
    return dict(zip(speeds["task"], speeds["speed"].astype(float)))


def task_speed(
    before: Iterable[ThreadReading],
    after: Iterable[ThreadReading],
    cputime: float | None,
    dt: float,
    threads_hint: int = 1,
) -> tuple[float, int]:
    """Speed of one task over one interval of `dt` seconds, and the number of its threads that ran.

    Formula (30) of 002 §6 per thread, averaged over the threads that ran; a thread absent from
    `before` was born in the interval (its whole count is the interval's). `cputime` is the CPU time
    the whole task used in the interval as its container reads it (every process, also those that
    exited or were not seen in the readings); it rescales the mean by (container CPU time / CPU time
    of the threads read), so the work of processes that came and went in the interval counts, and
    clock-tick truncation of the per-thread times drops out. None: per-thread times only. When no
    thread was seen running but the container used CPU time (its processes exited in the interval),
    the speed is that time spread over `threads_hint` threads, a thread getting at most the whole
    interval.
    """
    start = {reading.tid: reading for reading in before}
    speeds, factors, used = [], [], 0.0
    for reading in after:
        first = start.get(reading.tid)
        d_cpu = reading.cputime - (first.cputime if first is not None else 0.0)
        if d_cpu <= CPUTIME_EPSILON:
            continue
        d_inst = reading.instructions - (first.instructions if first is not None else 0.0)
        d_cycl = reading.cycles - (first.cycles if first is not None else 0.0)
        speeds.append(float(thread_speed(d_inst, d_cycl, d_cpu, dt)))  # 002 §6, (30)
        # its IPC factor (1 without counters)
        factors.append(float(thread_speed(d_inst, d_cycl, dt, dt)))
        used += d_cpu
    if not speeds:
        if cputime is None or cputime <= CPUTIME_EPSILON or dt <= 0:
            return 0.0, 0
        return min(cputime / max(1, threads_hint), dt) / dt, 0
    mean = float(np.mean(speeds))  # 002 §7: the task's speed is the mean over its threads
    # exited processes and tick truncation: the container's time
    if cputime is not None and cputime > used:
        mean = min(mean * cputime / used, max(factors))  # a thread runs at most the whole interval
    return mean, len(speeds)
