"""Replicas of one ElastiSim run with jittered submission times: how many digits of a run to trust.

A long ElastiSim workload is chaotic: moving one submission by 1e-12 s can move the mean turnaround
by percents, in ElastiSim as in cosched (their event loops round differently from the first
contention on). Running the same project K times, each with every submission time moved by an
independent uniform draw in [-jitter, +jitter] (never before 0), shows the spread a single run
carries. Jobs keep their identity by their position in the jobs file; their ids follow the jittered
submission order, as ElastiSim numbers them.
"""

from __future__ import annotations

import dataclasses
import statistics

import numpy as np

from cosched.simulator.elastic.workload import JobSpec

__all__ = ["SPREAD_METRICS", "jittered_jobs", "replica_spread"]

# the summary's metrics whose spread over the replicas is reported
SPREAD_METRICS = (
    "makespan",
    "utilization",
    "mean_wait",
    "median_wait",
    "mean_turnaround",
    "median_turnaround",
    "reconfigurations",
    "invocations",
)


def jittered_jobs(jobs: list[JobSpec], jitter: float, rng: np.random.Generator) -> list[JobSpec]:
    """Copies of `jobs` with each submission time moved by an independent uniform draw in
    [-jitter, jitter] (clipped at 0), ordered and numbered by the new times (then file order)."""
    shifts = rng.uniform(-jitter, jitter, size=len(jobs))
    by_position = sorted(jobs, key=lambda job: job.position)
    moved = [
        dataclasses.replace(job, submit_time=max(0.0, job.submit_time + float(shift)))
        for job, shift in zip(by_position, shifts)
    ]
    moved.sort(key=lambda job: (job.submit_time, job.position))
    for identifier, job in enumerate(moved):
        job.identifier = identifier
    return moved


def _range(values: list[float]) -> dict:
    return {
        "min": min(values),
        "median": statistics.median(values),
        "max": max(values),
    }


def replica_spread(
    summaries: list[dict], job_rows: list[list[dict]], jitter: float, seed: int
) -> dict:
    """Each metric's min, median and max over the replicas' `summaries`, and the spread (max - min)
    of each completed job's turnaround over the replicas (`job_rows`: each replica's rows, with
    `position`, `status` and `turnaround_time`): its median and max, absolute and relative to the
    job's median turnaround."""
    metrics = {
        name: _range([summary[name] for summary in summaries])
        for name in SPREAD_METRICS
        if all(summary.get(name) is not None for summary in summaries)
    }
    turnarounds: dict[int, list[float]] = {}
    for rows in job_rows:
        for row in rows:
            if row["status"] == "completed":
                turnarounds.setdefault(row["position"], []).append(row["turnaround_time"])
    # only the jobs every replica completed
    complete = [values for values in turnarounds.values() if len(values) == len(job_rows)]
    widths = [max(values) - min(values) for values in complete]
    relative = [
        width / statistics.median(values)
        for width, values in zip(widths, complete)
        if statistics.median(values) > 0
    ]
    return {
        "replicas": len(summaries),
        "jitter": jitter,
        "seed": seed,
        "metrics": metrics,
        "turnaround_spread_per_job": {
            "jobs": len(widths),
            "median": statistics.median(widths) if widths else None,
            "max": max(widths) if widths else None,
            "median_relative": statistics.median(relative) if relative else None,
            "max_relative": max(relative) if relative else None,
        },
    }
