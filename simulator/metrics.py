"""Run metrics of 003 §2.3 and 000 §4.1, vectorised over the per-job arrays of a `SimulationResult`.

``summarize`` gives every metric of one run; ``thesis_metrics`` gives one run's row of the thesis
Tables 6.1/6.2 (compact run time = the workload's run time, actual run time = end - start). Every
metric is computed here, once: the commands (`simulate`, `compare`, `experiment-sim`) call these
functions, notably `makespan_speedup` for 003 (2.1) wherever a makespan is compared with a
baseline's.
"""

from __future__ import annotations

import numpy as np

from cosched.simulator.result import JobNodes

__all__ = [
    "summarize",
    "median",
    "thesis_metrics",
    "makespan_speedup",
    "slowdowns",
    "slowdowns_per_processor",
    "busy_core_utilization",
    "job_speedups",
    "mean_job_speedup",
    "weighted_mean_job_speedup",
    "slowdown_counts",
    "step_series",
    "BOUNDED_SLOWDOWN_THRESHOLD",
    "SECONDS_PER_DAY",
    "SLOWED_BELOW",
    "METRIC_NAMES",
    "UTILIZATION_SPANS",
]

BOUNDED_SLOWDOWN_THRESHOLD = (
    10.0  # seconds: run times below it count as this long in bounded slowdown
)
SECONDS_PER_DAY = 86400.0
SLOWED_BELOW = 0.99  # 003 §2.3.2.4: a job with speedup below this counts as slowed down
# where utilization (003 (2.6)) stops: the last job end, or when the waiting queue empties
# (000 §4.1)
UTILIZATION_SPANS = ("last-end", "queue-empty")
METRIC_NAMES = (
    "makespan",
    "makespan_speedup",
    "mean_slowdown",
    "mean_slowdown_pp",
    "slowdown_counts",
    "utilization",
    "mean_job_speedup",
    "weighted_mean_job_speedup",
)


def makespan_speedup(reference, makespan):
    """Makespan speedup against a baseline run, 003 (2.1): baseline makespan / makespan.

    Scalars give a float, or None without a baseline (`reference` None) or for a makespan that is
    not positive; arrays or pandas Series give an array, NaN there.
    """
    if np.ndim(reference) == 0 and np.ndim(makespan) == 0:
        if reference is None or makespan is None or not makespan > 0:
            return None
        return float(reference) / float(makespan)  # 003 (2.1)
    reference = np.asarray(reference, dtype=np.float64)
    makespan = np.asarray(makespan, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(makespan > 0, reference / makespan, np.nan)  # 003 (2.1)


def slowdowns(result) -> np.ndarray:
    """Per-job slowdown (wait + run) / run, with the actual run time end - start."""
    run = result.end - result.start
    return (run + (result.start - result.workload.submit)) / run  # 003 §2.3.1.2, (2.2)


def slowdowns_per_processor(result) -> np.ndarray:
    """Per-job slowdown divided by the job's cores (003 §2.3.1.3, (2.4))."""
    return slowdowns(result) / result.workload.cores


def busy_core_utilization(result, until: str = "last-end") -> float:
    """Integral of busy cores over [first submit, T] / (cores x span) (003 (2.6), in busy cores).

    until: T = the last job end ("last-end"), or the moment the waiting queue empties for good, the
    last start ("queue-empty", 000 §4.1: "until the waiting queue is empty"; the last end if that is
    no later than the first submit).
    """
    first, last_end = result.workload.submit.min(), result.end.max()
    stop = last_end
    if until == "queue-empty":
        last_start = result.start.max()
        stop = last_start if last_start > first else last_end
    span = stop - first
    busy_time = np.clip(np.minimum(result.end, stop) - result.start, 0.0, None)
    busy = (result.workload.cores * busy_time).sum()  # each job keeps its requested cores busy
    return float(busy / (result.platform.total_cores * span)) if span > 0 else 0.0


def median(values: np.ndarray) -> float:
    """`float(np.median(values))` of a 1-D float array, the same value, without importing numpy.ma
    (np.median's NaN check does: about 10 ms of a `cosched simulate` start). The same partition
    (np.median's kth, the last element included) and the same mean of the middle one or two."""
    half = values.size // 2
    if not values.size:
        return float(np.median(values))
    low = half - 1 if values.size % 2 == 0 else half
    part = np.partition(values, [low, half, -1] if low < half else [half, -1])
    if np.isnan(part[-1]):  # NaN sorts last: np.median's answer (NaN)
        return float(np.median(values))
    return float(np.mean(part[low : half + 1]))


def summarize(
    result,
    baseline=None,
    bounded_threshold: float = BOUNDED_SLOWDOWN_THRESHOLD,
    utilization_until: str = "last-end",
) -> dict:
    """The metrics of one run as a flat dict (JSON-ready); `baseline` is another run for makespan
    speedup; `utilization_until` where utilization stops (`UTILIZATION_SPANS`)."""
    w, platform = result.workload, result.platform
    start, end = result.start, result.end
    run = end - start
    wait = start - w.submit
    makespan = result.makespan  # 000 §4.1: first submission to last completion
    slowdown = slowdowns(result)
    bounded = np.maximum(1.0, (run + wait) / np.maximum(run, bounded_threshold))  # bounded slowdown
    per_processor = slowdowns_per_processor(result)  # 003 §2.3.1.3, (2.4)
    utilization = busy_core_utilization(result, utilization_until)
    if result.co_scheduled:
        allocated = utilization  # co-scheduled runs count the requested cores only
    else:
        nodes = JobNodes.of(result.nodes).counts
        held = float(np.sum(run * nodes * platform.cores_per_node))  # whole nodes are held
        allocated = held / (platform.total_cores * makespan) if makespan > 0 else 0.0
    summary = {
        "scheduler": result.scheduler,
        "platform": platform.name,
        "jobs": len(w),
        "makespan": makespan,
        "makespan_speedup": makespan_speedup(
            baseline.makespan if baseline is not None else None, makespan
        ),
        "baseline": baseline.scheduler if baseline is not None else None,
        "mean_wait": float(wait.mean()),
        "median_wait": median(wait),
        "max_wait": float(wait.max()),
        "mean_turnaround": float((end - w.submit).mean()),
        "mean_slowdown": float(slowdown.mean()),  # 003 §2.3.1.2, (2.3)
        "std_slowdown": float(slowdown.std()),
        "mean_bounded_slowdown": float(bounded.mean()),
        "bounded_slowdown_threshold": bounded_threshold,
        "mean_slowdown_per_processor": float(per_processor.mean()),  # 003 §2.3.1.3, (2.5)
        # 003 §2.3.2.1, (2.6) with rho(t) = busy (requested) cores, over [first submission, last
        # completion]
        "utilization": utilization,
        "allocated_utilization": allocated,
        "simulated_days": makespan / SECONDS_PER_DAY,
        "wall_seconds": result.wall_seconds,
        "jobs_per_second": len(w) / result.wall_seconds if result.wall_seconds > 0 else None,
        # 000 §4.4, Tables 3-4: days of makespan time per hour of simulation time
        "simulated_days_per_hour": makespan / SECONDS_PER_DAY / (result.wall_seconds / 3600.0)
        if result.wall_seconds > 0
        else None,
    }
    if result.co_scheduled:  # 003 §2.3.2.2-2.3.2.4: job speedups and slowdown counts
        summary.update(
            mean_job_speedup=mean_job_speedup(result),
            weighted_mean_job_speedup=weighted_mean_job_speedup(result),
            slowdown_counts=slowdown_counts(result),
        )
    return summary


def _run_times(result) -> np.ndarray:
    return result.end - result.start


def job_speedups(result) -> np.ndarray:
    return result.workload.run / _run_times(result)  # 003 (2.7): compact run time / actual run time


def mean_job_speedup(result) -> float:
    return float(job_speedups(result).mean())  # 003 (2.8)


def weighted_mean_job_speedup(result) -> float:
    weights = _run_times(result) * result.workload.cores  # 003 §2.3.2.3: w_i = t_i^run x N_i
    return float((weights * job_speedups(result)).sum() / weights.sum())  # 003 (2.9)


def slowdown_counts(result) -> float:
    """Share of jobs (0..1) with speedup below 0.99 (003 §2.3.2.4)."""
    return float((job_speedups(result) < SLOWED_BELOW).mean())


def thesis_metrics(
    result, baseline_makespan: float | None = None, utilization_until: str = "last-end"
) -> dict:
    """One run's values of the thesis metrics (003 §2.3; Tables 6.1, 6.2); utilization up to
    `utilization_until`."""
    makespan = result.makespan
    speedup = makespan_speedup(baseline_makespan or None, makespan)  # 003 (2.1)
    return {
        "makespan": makespan,
        "makespan_speedup": float("nan") if speedup is None else speedup,
        "mean_slowdown": float(
            slowdowns(result).mean()
        ),  # 003 (2.2), (2.3), t_run = actual run time
        "mean_slowdown_pp": float(slowdowns_per_processor(result).mean()),  # 003 (2.4), (2.5)
        "slowdown_counts": slowdown_counts(result),
        "utilization": busy_core_utilization(result, utilization_until),
        "mean_job_speedup": mean_job_speedup(result),
        "weighted_mean_job_speedup": weighted_mean_job_speedup(result),
    }


def step_series(times_up: np.ndarray, times_down: np.ndarray, weights: np.ndarray | None = None):
    """A step function from +weight events at `times_up` and -weight at `times_down`: (times,
    values)."""
    weights = np.ones(times_up.size) if weights is None else np.asarray(weights, dtype=np.float64)
    times = np.concatenate([times_up, times_down])
    deltas = np.concatenate([weights, -weights])
    order = np.argsort(times, kind="stable")
    times, values = times[order], np.cumsum(deltas[order])
    last = np.r_[times[1:] != times[:-1], True]  # keep the value after all events at a timestamp
    return times[last], values[last]
