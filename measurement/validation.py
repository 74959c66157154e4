"""The Table 2 experiment of 002 §7: does the runtime speed (formula (30)) predict the completion
time?

Each kernel runs a fixed amount of work to completion, alone and next to randomly drawn co-runners
(kernels repeated, random thread counts) that keep running until it has finished, so the measured
task sees one combination for its whole run. Per run: speed ratio = mean speed alone / mean speed in
the co-run, time ratio = completion time co-run / completion time alone; per kernel the linear
regression speed ratio = slope x time ratio + intercept with its R² (Table 2), and the scatter of
Fig. 4.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from cosched.measurement.corun import TaskSpec, start_task, terminate_tasks
from cosched.measurement.counters import CounterBackend
from cosched.measurement.kernels import KERNELS, run_kernel
from cosched.measurement.limits import MAX_MEASURED_RUNS, check_size
from cosched.measurement.probe import interval_speeds, readings_frame

__all__ = [
    "ValidationRun",
    "run_validation",
    "fit_table",
    "kernel_command",
    "calibrate_work",
    "SAMPLE_INTERVAL",
    "CORUNNER_WARMUP",
    "CALIBRATION_UNITS",
]

SAMPLE_INTERVAL = 0.1  # seconds between readings of the measured task
CORUNNER_WARMUP = 0.3  # seconds the co-runners run before the measured task starts
CALIBRATION_UNITS = 20  # work units of the calibration run that sizes each kernel's fixed work
# co-runners run "forever"; they are killed as soon as the measured task finishes
CORUNNER_SECONDS = 3600


@dataclass(frozen=True)
class ValidationRun:
    """One completed run of `kernel` next to `corunners` (empty: alone)."""

    kernel: str
    threads: int
    corunners: tuple[str, ...]
    time: float
    speed: float


def kernel_command(
    name: str, threads: int, work: int | None = None, seconds: float | None = None
) -> str:
    amount = f"--work {work}" if work is not None else f"--seconds {seconds}"
    return (
        f"exec {sys.executable} -m cosched.measurement.kernels {name} {amount} --threads {threads}"
    )


def _run(
    backend: CounterBackend,
    kernel: str,
    threads: int,
    work: int,
    corunners: Sequence[tuple[str, int]],
) -> ValidationRun:
    """Start the co-runners, then the measured kernel; sample it until it exits; kill the
    co-runners."""
    others = [
        start_task(TaskSpec(f"co{k}", kernel_command(name, t, seconds=CORUNNER_SECONDS)))
        for k, (name, t) in enumerate(corunners)
    ]
    processes = list(others)
    try:
        if others:
            time.sleep(CORUNNER_WARMUP)
        started = time.monotonic()
        target = start_task(TaskSpec(kernel, kernel_command(kernel, threads, work=work)))
        processes.append(target)
        readings = []
        while target.poll() is None:
            readings.extend(backend.read({kernel: target.pid}))
            time.sleep(SAMPLE_INTERVAL)
        elapsed = time.monotonic() - started
    finally:
        terminate_tasks(processes)
    if target.returncode != 0:
        raise RuntimeError(f"kernel {kernel} failed with exit code {target.returncode}")
    intervals = interval_speeds(readings_frame(readings))
    # mean of (30) over the run
    speed = float(intervals["speed"].mean()) if len(intervals) else float("nan")
    return ValidationRun(kernel, threads, tuple(name for name, _ in corunners), elapsed, speed)


def calibrate_work(kernel: str, seconds: float) -> int:
    """Work units that take about `seconds` alone with one thread on this machine."""
    started = time.perf_counter()
    run_kernel(kernel, work=CALIBRATION_UNITS)
    per_unit = (time.perf_counter() - started) / CALIBRATION_UNITS
    return max(1, int(round(seconds / per_unit)))


def run_validation(
    backend: CounterBackend,
    kernels: Sequence[str] = tuple(KERNELS),
    *,
    runs: int = 6,
    max_corunners: int = 3,
    max_threads: int = 2,
    seconds: float = 1.5,
    repeats: int = 2,
    seed: int = 0,
    progress: bool = True,
):
    """Runs table (kernel, threads, corunners, size, time, speed, time_ratio, speed_ratio) for every
    kernel: `repeats` runs alone per thread count, `runs` co-runs with 1..max_corunners random
    co-runners."""
    import pandas as pd

    from cosched.progress import progress_bar

    check_size(
        len(kernels) * (runs + max_threads * repeats),
        MAX_MEASURED_RUNS,
        "--runs",
        "runs of the validation (kernels x (runs + max threads x repeats))",
    )
    rng = np.random.default_rng(seed)
    names = sorted(KERNELS)
    plans = []
    for kernel in kernels:
        for _ in range(runs):
            threads = int(rng.integers(1, max_threads + 1))
            size = int(rng.integers(1, max_corunners + 1))
            plans.append(
                (
                    kernel,
                    threads,
                    [
                        (str(rng.choice(names)), int(rng.integers(1, max_threads + 1)))
                        for _ in range(size)
                    ],
                )
            )
    alone_threads = {(kernel, threads) for kernel, threads, _ in plans}
    work = {kernel: calibrate_work(kernel, seconds) for kernel in kernels}
    plans = [(k, t, []) for k, t in sorted(alone_threads) for _ in range(repeats)] + plans
    rows = []
    for kernel, threads, corunners in progress_bar(
        plans, desc="validation runs", unit="run", disable=not progress
    ):
        rows.append(_run(backend, kernel, threads, work[kernel], corunners))
    frame = pd.DataFrame([run.__dict__ for run in rows])
    frame["size"] = 1 + frame["corunners"].apply(len)
    frame["corunners"] = frame["corunners"].apply("+".join)
    alone = frame[frame["size"] == 1].groupby(["kernel", "threads"])[["time", "speed"]].mean()
    ideal = alone.reindex(pd.MultiIndex.from_frame(frame[["kernel", "threads"]]))
    # 002 §7: co-run / ideal time
    frame["time_ratio"] = frame["time"].to_numpy() / ideal["time"].to_numpy()
    # 002 §7: ideal / co-run speed
    frame["speed_ratio"] = ideal["speed"].to_numpy() / frame["speed"].to_numpy()
    frame["work_units"] = frame["kernel"].map(work)
    return frame


def fit_table(frame):
    """Per kernel: least-squares speed_ratio = slope x time_ratio + intercept and R²
    (002 Table 2).
    """
    import pandas as pd

    rows = []
    for kernel, own in frame.groupby("kernel", sort=False):
        x, y = own["time_ratio"].to_numpy(float), own["speed_ratio"].to_numpy(float)
        ok = np.isfinite(x) & np.isfinite(y)
        x, y = x[ok], y[ok]
        if x.size < 2 or np.ptp(x) == 0:
            rows.append((kernel, x.size, np.nan, np.nan, np.nan))
            continue
        slope, intercept = np.polyfit(x, y, 1)
        residual = y - (slope * x + intercept)
        total = ((y - y.mean()) ** 2).sum()
        r2 = 1 - (residual**2).sum() / total if total > 0 else np.nan
        rows.append((kernel, x.size, float(slope), float(intercept), float(r2)))
    return pd.DataFrame(rows, columns=["kernel", "runs", "slope", "intercept", "r2"])
