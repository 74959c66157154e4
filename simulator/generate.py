"""Synthetic workloads drawn from an application seed (000 §3.1; 003 §4.1).

An application seed is a set of applications with their process counts and compact run times (the
applications of a heatmap). N jobs are drawn uniformly, by given frequencies or taken from a list;
submit times follow constant, uniform, Poisson (exponential gaps) or Weibull interarrival times, or
all jobs arrive at time 0 (batch, as in the thesis experiments, 003 ch. 6). Everything is seeded.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from cosched.errors import InputError
from cosched.inputs import (
    MAX_JOBS,
    MAX_PROCS,
    MAX_SECONDS,
    MIN_SECONDS,
    check_number,
    parse_json,
    shown,
)
from cosched.outputs import atomic_path
from cosched.simulator.workload import Workload, make_workload

__all__ = [
    "ApplicationSeed",
    "SELECTIONS",
    "INTERARRIVALS",
    "generate_workload",
    "interarrival_gaps",
    "load_application_seed",
    "write_workload_csv",
]

SELECTIONS = ("uniform", "frequencies", "list")
INTERARRIVALS = ("batch", "constant", "uniform", "poisson", "weibull")


@dataclass(frozen=True, eq=False)
class ApplicationSeed:
    """Applications (names), their process counts and compact run times [s]."""

    names: tuple[str, ...]
    procs: np.ndarray
    compact_times: np.ndarray

    def __post_init__(self):
        names = tuple(str(n) for n in self.names)
        procs = np.asarray(self.procs, dtype=np.int64)
        compact = np.asarray(self.compact_times, dtype=np.float64)
        if not names or len(set(names)) != len(names):
            raise InputError("an application seed needs unique application names", field="name")
        if procs.shape != (len(names),) or compact.shape != (len(names),):
            raise InputError(
                "one process count and one compact time per application", field="procs"
            )
        if (procs <= 0).any() or not (np.isfinite(compact) & (compact > 0)).all():
            raise InputError(
                "process counts and compact times must be positive", field="compact_time"
            )
        if (procs > MAX_PROCS.value).any() or (compact > MAX_SECONDS.value).any():
            raise InputError(
                f"process counts or compact times above the limits {MAX_PROCS}, {MAX_SECONDS}",
                field="procs",
            )
        object.__setattr__(self, "names", names)
        object.__setattr__(self, "procs", procs)
        object.__setattr__(self, "compact_times", compact)

    @classmethod
    def from_heatmap(cls, heatmap) -> ApplicationSeed:
        return cls(heatmap.applications, heatmap.procs, heatmap.compact_times)

    def to_json(self) -> dict:
        return {
            "applications": [
                {"name": n, "procs": int(p), "compact_time": float(t)}
                for n, p, t in zip(self.names, self.procs, self.compact_times)
            ]
        }


def load_application_seed(path: str | os.PathLike) -> ApplicationSeed:
    """Read ``{"applications": [{"name", "procs", "compact_time"}, ...]}`` (JSON).

    Names are non-empty strings without control characters, unique; procs whole, 1..`MAX_PROCS`;
    compact times positive, at most `MAX_SECONDS` (`cosched.inputs`). Other keys are ignored.
    """
    source = os.fspath(path)
    document = parse_json(path)
    apps = document.get("applications") if isinstance(document, dict) else None
    if not isinstance(apps, list) or not apps:
        raise InputError("must be a non-empty list", source=source, field="applications")
    names, procs, compact = [], [], []
    for i, app in enumerate(apps):
        if not isinstance(app, dict) or not all(
            k in app for k in ("name", "procs", "compact_time")
        ):
            raise InputError(
                "each application needs name, procs, compact_time",
                source=source,
                field=f"applications[{i}]",
            )
        name = app["name"]
        if not isinstance(name, str) or not name or any(ord(c) < 32 or ord(c) == 127 for c in name):
            raise InputError(
                f"must be a non-empty string without control characters, got {shown(name)}",
                source=source,
                field=f"applications[{i}].name",
            )
        if name in names:
            raise InputError(
                f"an application seed needs unique application names; {shown(name)} is given twice",
                source=source,
                field=f"applications[{i}].name",
            )
        names.append(name)
        procs.append(
            check_number(
                app["procs"],
                source=source,
                field=f"applications[{i}].procs",
                integer=True,
                minimum=1,
                limit=MAX_PROCS,
                text=False,
            )
        )
        compact.append(
            check_number(
                app["compact_time"],
                source=source,
                field=f"applications[{i}].compact_time",
                minimum=MIN_SECONDS.value,
                limit=MAX_SECONDS,
                text=False,
            )
        )
    try:
        return ApplicationSeed(
            tuple(names), np.asarray(procs, dtype=np.int64), np.asarray(compact, dtype=np.float64)
        )
    except InputError as error:  # before ValueError: InputError is one
        raise InputError(error.message, source=source, field=error.field) from None


def interarrival_gaps(
    kind: str,
    count: int,
    rng: np.random.Generator,
    *,
    mean: float = 60.0,
    low: float = 0.0,
    high: float = 120.0,
    shape: float = 1.5,
) -> np.ndarray:
    """`count` gaps between consecutive submissions [s] (000 §3.1 options)."""
    if kind == "batch":
        return np.zeros(count)
    if kind == "uniform":
        if not 0 <= low <= high:
            raise InputError(f"need 0 <= low <= high, got {low}, {high}", field="interarrival")
        return rng.uniform(low, high, count)
    if not mean > 0:
        raise InputError(f"mean interarrival time must be positive, got {mean}", field="mean")
    if kind == "constant":
        return np.full(count, float(mean))
    if kind == "poisson":
        return rng.exponential(mean, count)  # Poisson arrivals: exponential gaps with this mean
    if kind == "weibull":
        if not shape > 0:
            raise InputError(f"Weibull shape must be positive, got {shape}", field="shape")
        try:
            scale = mean / math.gamma(1 + 1 / shape)
        except OverflowError:
            raise InputError(
                f"Weibull shape {shape:g} is too small (its mean overflows)", field="shape"
            ) from None
        with np.errstate(
            over="ignore"
        ):  # huge draws of a tiny shape: refused by the caller's time limit
            return scale * rng.weibull(shape, count)  # scaled to the requested mean
    raise InputError(
        f"unknown interarrival kind {kind!r}; choose from {INTERARRIVALS}", field="interarrival"
    )


def generate_workload(
    seed: ApplicationSeed,
    jobs: int | None = None,
    *,
    selection: str = "uniform",
    frequencies: Sequence[float] | None = None,
    apps: Sequence[str] | None = None,
    interarrival: str = "batch",
    mean: float = 60.0,
    low: float = 0.0,
    high: float = 120.0,
    shape: float = 1.5,
    rng_seed: int | None = 0,
) -> Workload:
    """N jobs drawn from the seed; run time = estimate = compact time, cores = the application's
    processes.

    selection: "uniform" (each application equally likely), "frequencies" (weights, normalised) or
    "list" (exactly the applications named in `apps`, in that order; `jobs` may be omitted).
    """
    if rng_seed is not None:
        rng_seed = check_number(rng_seed, field="seed", integer=True, minimum=0)
    for name, value in (("mean", mean), ("low", low), ("high", high)):
        check_number(value, field=name, minimum=0, limit=MAX_SECONDS)
    check_number(shape, field="shape", minimum=0, exclusive_minimum=True)
    rng = np.random.default_rng(rng_seed)
    k = len(seed.names)
    if selection == "list":
        if not apps:
            raise InputError("selection 'list' needs a list of application names", field="apps")
        index = {name: i for i, name in enumerate(seed.names)}
        unknown = [a for a in apps if a not in index]
        if unknown:
            raise InputError(f"unknown application(s) {unknown[:5]}", field="apps")
        if jobs is not None and jobs != len(apps):
            raise InputError(f"{jobs} jobs requested but the list names {len(apps)}", field="jobs")
        chosen = np.array([index[a] for a in apps], dtype=np.int64)
    else:
        if jobs is None:
            raise InputError("the number of jobs is missing", field="jobs")
        jobs = check_number(jobs, field="jobs", integer=True, minimum=1, limit=MAX_JOBS)
        if selection == "uniform":
            chosen = rng.integers(0, k, jobs)
        elif selection == "frequencies":
            weights = np.array(
                [check_number(w, field="frequencies", minimum=0) for w in (frequencies or [])]
            )
            if weights.shape != (k,) or not weights.max() > 0:
                raise InputError(
                    f"need {k} non-negative frequencies with a positive sum", field="frequencies"
                )
            weights = weights / weights.max()  # the sum cannot overflow
            chosen = rng.choice(k, size=jobs, p=weights / weights.sum())
        else:
            raise InputError(
                f"unknown selection {selection!r}; choose from {SELECTIONS}", field="selection"
            )
    count = chosen.size
    gaps = interarrival_gaps(interarrival, count, rng, mean=mean, low=low, high=high, shape=shape)
    submit = np.concatenate([[0.0], np.cumsum(gaps[1:])])  # the first job arrives at time 0
    if not submit[-1] <= MAX_SECONDS.value:
        option = {"uniform": "high", "weibull": "shape"}.get(interarrival, "mean")
        raise InputError(
            f"the last of {count} jobs would arrive at {submit[-1]:.3g} s, "
            f"above the limit {MAX_SECONDS}",
            field=option,
        )
    run = seed.compact_times[chosen]
    return make_workload(
        np.arange(count),
        submit,
        run,
        seed.procs[chosen],
        run,
        np.asarray(seed.names, dtype=object)[chosen],
        source=f"generated({selection}, {interarrival}, seed={rng_seed})",
    )


def write_workload_csv(workload: Workload, path: str | os.PathLike) -> Path:
    """The plain CSV workload format (job_id, submit_time, run_time, cores, estimate[, app]),
    atomically; the numbers read back exactly."""
    import pandas as pd

    columns = {
        "job_id": workload.job_id,
        "submit_time": workload.submit,
        "run_time": workload.run,
        "cores": workload.cores,
        "estimate": workload.estimate,
    }
    if workload.app is not None:
        columns["app"] = workload.app
    path = Path(path)
    with atomic_path(path) as tmp:
        pd.DataFrame(columns).to_csv(
            tmp, index=False
        )  # shortest round-trip digits: reads back exactly
    return path
