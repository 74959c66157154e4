"""Co-scheduling metrics of the thesis (003 §2.3): job speedups, slowdown counts, busy-core utilization.

``thesis_metrics`` gives one run's row of Tables 6.1/6.2: makespan speedup against a baseline makespan
(Conservative in the thesis), mean slowdown, mean slowdown per processor, slowdown counts, utilization,
mean and weighted mean job speedup. Inputs are the engine's `SimulationResult` (compact run time =
the workload's run time, actual run time = end - start).
"""
from __future__ import annotations

import numpy as np

from cosched.simulator.metrics import busy_core_utilization, slowdowns

__all__ = [
    "SLOWED_BELOW", "job_speedups", "mean_job_speedup", "weighted_mean_job_speedup", "slowdown_counts",
    "busy_core_utilization", "thesis_metrics", "METRIC_NAMES",
]

SLOWED_BELOW = 0.99  # 003 §2.3.2.4: a job with speedup below this counts as slowed down
METRIC_NAMES = ("makespan", "makespan_speedup", "mean_slowdown", "mean_slowdown_pp", "slowdown_counts",
                "utilization", "mean_job_speedup", "weighted_mean_job_speedup")


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


def thesis_metrics(result, baseline_makespan: float | None = None) -> dict:
    """One run's values of the thesis metrics (003 §2.3; Tables 6.1, 6.2)."""
    slowdown = slowdowns(result)  # 003 (2.2), t_run = actual run time
    makespan = result.makespan
    return {
        "makespan": makespan,
        "makespan_speedup": baseline_makespan / makespan if baseline_makespan else float("nan"),  # 003 (2.1)
        "mean_slowdown": float(slowdown.mean()),  # 003 (2.3)
        "mean_slowdown_pp": float((slowdown / result.workload.cores).mean()),  # 003 (2.4), (2.5)
        "slowdown_counts": slowdown_counts(result),
        "utilization": busy_core_utilization(result),
        "mean_job_speedup": mean_job_speedup(result),
        "weighted_mean_job_speedup": weighted_mean_job_speedup(result),
    }
