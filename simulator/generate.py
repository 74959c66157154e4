"""Synthetic workloads drawn from an application seed (000 §3.1; 003 §4.1).

An application seed is a set of applications with their process counts and compact run times (the
applications of a heatmap). N jobs are drawn uniformly, by given frequencies or taken from a list;
submit times follow constant, uniform, Poisson (exponential gaps) or Weibull interarrival times, or
all jobs arrive at time 0 (batch, as in the thesis experiments, 003 ch. 6). Everything is seeded.
"""
from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from cosched.errors import InputError
from cosched.outputs import atomic_path
from cosched.simulator.workload import Workload, make_workload

__all__ = [
    "ApplicationSeed", "SELECTIONS", "INTERARRIVALS", "generate_workload", "interarrival_gaps",
    "load_application_seed", "write_workload_csv",
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
            raise InputError("one process count and one compact time per application", field="procs")
        if (procs <= 0).any() or not (np.isfinite(compact) & (compact > 0)).all():
            raise InputError("process counts and compact times must be positive", field="compact_time")
        object.__setattr__(self, "names", names)
        object.__setattr__(self, "procs", procs)
        object.__setattr__(self, "compact_times", compact)

    @classmethod
    def from_heatmap(cls, heatmap) -> "ApplicationSeed":
        return cls(heatmap.applications, heatmap.procs, heatmap.compact_times)

    def to_json(self) -> dict:
        return {"applications": [{"name": n, "procs": int(p), "compact_time": float(t)}
                                 for n, p, t in zip(self.names, self.procs, self.compact_times)]}


def load_application_seed(path: str | os.PathLike) -> ApplicationSeed:
    """Read ``{"applications": [{"name", "procs", "compact_time"}, ...]}`` (JSON)."""
    path = Path(path)
    source = str(path)
    try:
        document = json.loads(path.read_text())
    except FileNotFoundError:
        raise InputError("no such file", source=source) from None
    except json.JSONDecodeError as error:
        raise InputError(f"not valid JSON: {error.msg}", source=source, line=error.lineno) from None
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(f"cannot read: {error}", source=source) from None
    apps = document.get("applications") if isinstance(document, dict) else None
    if not isinstance(apps, list) or not apps:
        raise InputError("must be a non-empty list", source=source, field="applications")
    for i, app in enumerate(apps):
        if not isinstance(app, dict) or not all(k in app for k in ("name", "procs", "compact_time")):
            raise InputError("each application needs name, procs, compact_time", source=source,
                             field=f"applications[{i}]")
        for key in ("procs", "compact_time"):
            value = app[key]
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not (math.isfinite(value)
                                                                                    and value > 0):
                raise InputError(f"must be a positive number, got {value!r}", source=source,
                                 field=f"applications[{i}].{key}")
        if app["procs"] != int(app["procs"]):
            raise InputError(f"must be a whole number, got {app['procs']!r}", source=source,
                             field=f"applications[{i}].procs")
    try:
        return ApplicationSeed(tuple(a["name"] for a in apps), [a["procs"] for a in apps],
                               [a["compact_time"] for a in apps])
    except InputError as error:  # before ValueError: InputError is one
        raise InputError(error.message, source=source, field=error.field) from None


def interarrival_gaps(kind: str, count: int, rng: np.random.Generator, *, mean: float = 60.0,
                      low: float = 0.0, high: float = 120.0, shape: float = 1.5) -> np.ndarray:
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
        return mean / math.gamma(1 + 1 / shape) * rng.weibull(shape, count)  # scaled to the requested mean
    raise InputError(f"unknown interarrival kind {kind!r}; choose from {INTERARRIVALS}", field="interarrival")


def generate_workload(seed: ApplicationSeed, jobs: int | None = None, *, selection: str = "uniform",
                      frequencies: Sequence[float] | None = None, apps: Sequence[str] | None = None,
                      interarrival: str = "batch", mean: float = 60.0, low: float = 0.0, high: float = 120.0,
                      shape: float = 1.5, rng_seed: int | None = 0) -> Workload:
    """N jobs drawn from the seed; run time = estimate = compact time, cores = the application's processes.

    selection: "uniform" (each application equally likely), "frequencies" (weights, normalised) or
    "list" (exactly the applications named in `apps`, in that order; `jobs` may be omitted).
    """
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
        if jobs is None or jobs <= 0:
            raise InputError(f"the number of jobs must be positive, got {jobs}", field="jobs")
        if selection == "uniform":
            chosen = rng.integers(0, k, jobs)
        elif selection == "frequencies":
            weights = np.asarray(frequencies if frequencies is not None else [], dtype=np.float64)
            if weights.shape != (k,) or (weights < 0).any() or not weights.sum() > 0:
                raise InputError(f"need {k} non-negative frequencies with a positive sum", field="frequencies")
            chosen = rng.choice(k, size=jobs, p=weights / weights.sum())
        else:
            raise InputError(f"unknown selection {selection!r}; choose from {SELECTIONS}", field="selection")
    count = chosen.size
    gaps = interarrival_gaps(interarrival, count, rng, mean=mean, low=low, high=high, shape=shape)
    submit = np.concatenate([[0.0], np.cumsum(gaps[1:])])  # the first job arrives at time 0
    run = seed.compact_times[chosen]
    return make_workload(np.arange(count), submit, run, seed.procs[chosen], run,
                         np.asarray(seed.names, dtype=object)[chosen],
                         source=f"generated({selection}, {interarrival}, seed={rng_seed})")


def write_workload_csv(workload: Workload, path: str | os.PathLike) -> Path:
    """The plain CSV workload format (job_id, submit_time, run_time, cores, estimate[, app]), atomically."""
    import pandas as pd

    columns = {"job_id": workload.job_id, "submit_time": workload.submit, "run_time": workload.run,
               "cores": workload.cores, "estimate": workload.estimate}
    if workload.app is not None:
        columns["app"] = workload.app
    path = Path(path)
    with atomic_path(path) as tmp:
        pd.DataFrame(columns).to_csv(tmp, index=False, float_format="%.10g")
    return path
