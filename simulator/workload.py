"""Rigid job workloads: the Standard Workload Format (SWF, 18 fields) and a plain CSV, cleaned with counts.

Cleaning rules (each reported as a count in ``Workload.cleaning``):
records with run time <= 0 or processors <= 0 (allocated, else requested) or a negative submit time are
dropped; processors above the platform size are capped to it; a missing estimate (requested time <= 0)
falls back to the run time; an estimate below the run time is raised to it (jobs are never killed at
their estimate, so reservations stay valid). Jobs are sorted by submit time, ties by file order.
"""
from __future__ import annotations

import gzip
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from cosched.errors import InputError

__all__ = ["Workload", "SWF_FIELDS", "read_swf", "read_csv", "load_workload", "make_workload"]

SWF_FIELDS = (
    "job_number", "submit_time", "wait_time", "run_time", "allocated_processors", "average_cpu_time",
    "used_memory", "requested_processors", "requested_time", "requested_memory", "status", "user_id",
    "group_id", "executable", "queue", "partition", "preceding_job", "think_time",
)
CSV_REQUIRED = ("job_id", "submit_time", "run_time", "cores")
CSV_OPTIONAL = ("estimate", "app")


@dataclass(frozen=True, eq=False)
class Workload:
    """Jobs as parallel arrays sorted by submit time: ids, submit, run time, cores, estimate, app names."""

    job_id: np.ndarray
    submit: np.ndarray
    run: np.ndarray
    cores: np.ndarray
    estimate: np.ndarray
    app: np.ndarray | None = None
    source: str = ""
    header: dict = field(default_factory=dict)
    cleaning: dict = field(default_factory=dict)

    def __len__(self) -> int:
        return int(self.job_id.size)

    def head(self, count: int) -> "Workload":
        """The first `count` jobs (by submit time), keeping the cleaning counts of the whole file."""
        keep = slice(0, count)
        return replace(self, job_id=self.job_id[keep], submit=self.submit[keep], run=self.run[keep],
                       cores=self.cores[keep], estimate=self.estimate[keep],
                       app=None if self.app is None else self.app[keep],
                       cleaning={**self.cleaning, "jobs": int(self.job_id[keep].size)})


def make_workload(job_id, submit, run, cores, estimate=None, app=None, *, source: str = "",
                  header: dict | None = None, cleaning: dict | None = None, max_cores: int | None = None
                  ) -> Workload:
    """Apply the cleaning rules to raw columns and sort by submit time (stable)."""
    job_id = np.asarray(job_id, dtype=np.int64)
    submit = np.asarray(submit, dtype=np.float64)
    run = np.asarray(run, dtype=np.float64)
    cores = np.asarray(cores, dtype=np.int64)
    estimate = run.copy() if estimate is None else np.asarray(estimate, dtype=np.float64)
    counts = dict(cleaning or {})
    counts["records"] = counts.get("records", int(job_id.size))
    drop_run = ~(run > 0)
    drop_cores = ~drop_run & (cores <= 0)
    drop_submit = ~drop_run & ~drop_cores & ~(submit >= 0)
    keep = ~(drop_run | drop_cores | drop_submit)
    counts["dropped_run_time_le_0"] = int(drop_run.sum())
    counts["dropped_processors_le_0"] = int(drop_cores.sum())
    counts["dropped_negative_submit"] = int(drop_submit.sum())
    job_id, submit, run, cores, estimate = (a[keep] for a in (job_id, submit, run, cores, estimate))
    if app is not None:
        app = np.asarray(app, dtype=object)[keep]
    capped = 0
    if max_cores is not None:
        over = cores > max_cores
        capped = int(over.sum())
        cores = np.where(over, max_cores, cores)
    counts["processors_capped"] = capped
    missing = ~(estimate > 0)
    counts["estimate_missing_set_to_run_time"] = int(missing.sum())
    low = ~missing & (estimate < run)
    counts["estimate_below_run_time_raised"] = int(low.sum())
    estimate = np.where(missing | low, run, estimate)
    order = np.argsort(submit, kind="stable")
    counts["jobs"] = int(job_id.size)
    return Workload(job_id[order], submit[order], run[order], cores[order], estimate[order],
                    None if app is None else app[order], source=source, header=dict(header or {}),
                    cleaning=counts)


def _open_text(path: Path):
    return gzip.open(path, "rt") if path.suffix == ".gz" else open(path)


def _swf_header(path: Path) -> dict:
    header = {}
    with _open_text(path) as handle:
        for line in handle:
            if not line.startswith(";"):
                if line.strip():
                    break
                continue
            key, sep, value = line[1:].partition(":")
            if sep and key.strip() and " " not in key.strip():
                header[key.strip()] = value.strip()
    return header


def _swf_bad_line(path: Path) -> tuple[int, str]:
    """Locate the first malformed SWF line (error path only)."""
    with _open_text(path) as handle:
        for number, line in enumerate(handle, 1):
            stripped = line.split(";", 1)[0].split()
            if not stripped:
                continue
            if len(stripped) != len(SWF_FIELDS):
                return number, f"expected {len(SWF_FIELDS)} fields, got {len(stripped)}"
            for name, token in zip(SWF_FIELDS, stripped):
                try:
                    float(token)
                except ValueError:
                    return number, f"field '{name}' is not a number: {token!r}"
    return 0, "unreadable SWF content"


def read_swf(path: str | Path, max_cores: int | None = None) -> Workload:
    """Read a (gzipped) SWF file; cores = allocated processors, else requested; estimate = requested time."""
    import pandas as pd

    path = Path(path)
    if not path.is_file():
        raise InputError("no such workload file", source=str(path))
    try:
        frame = pd.read_csv(path, sep=r"\s+", comment=";", header=None, dtype=np.float64,
                            compression="infer")
    except pd.errors.EmptyDataError:
        raise InputError("no job records", source=str(path)) from None
    except (ValueError, pd.errors.ParserError, UnicodeDecodeError, OSError):
        line, message = _swf_bad_line(path)
        raise InputError(message, source=str(path), line=line or None) from None
    if frame.shape[1] != len(SWF_FIELDS) or frame.isna().to_numpy().any():
        line, message = _swf_bad_line(path)
        raise InputError(message, source=str(path), line=line or None)
    data = frame.to_numpy()
    cores = np.where(data[:, 4] > 0, data[:, 4], data[:, 7])
    return make_workload(data[:, 0], data[:, 1], data[:, 3], cores, data[:, 8], source=str(path),
                         header=_swf_header(path), max_cores=max_cores)


def read_csv(path: str | Path, max_cores: int | None = None) -> Workload:
    """Read a CSV with columns job_id, submit_time, run_time, cores and optional estimate, app."""
    import pandas as pd

    path = Path(path)
    if not path.is_file():
        raise InputError("no such workload file", source=str(path))
    try:
        frame = pd.read_csv(path, skipinitialspace=True)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as error:
        raise InputError(f"unreadable CSV: {error}", source=str(path)) from None
    frame.columns = [str(column).strip() for column in frame.columns]
    for name in CSV_REQUIRED:
        if name not in frame.columns:
            raise InputError("missing column", source=str(path), field=name)
    columns = {}
    for name in CSV_REQUIRED + ("estimate",):
        if name not in frame.columns:
            continue
        values = pd.to_numeric(frame[name], errors="coerce")
        bad = values.isna().to_numpy().copy()
        if name == "estimate":
            bad &= frame[name].notna().to_numpy()
            values = values.fillna(-1)
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise InputError(f"not a number: {frame[name].iloc[row]!r}", source=str(path), line=row + 2,
                             field=name)
        columns[name] = values.to_numpy(dtype=np.float64)
    if np.any(columns["cores"] != np.round(columns["cores"])):
        row = int(np.flatnonzero(columns["cores"] != np.round(columns["cores"]))[0])
        raise InputError("cores must be an integer", source=str(path), line=row + 2, field="cores")
    app = frame["app"].astype(str).to_numpy(dtype=object) if "app" in frame.columns else None
    return make_workload(columns["job_id"], columns["submit_time"], columns["run_time"], columns["cores"],
                         columns.get("estimate"), app, source=str(path), max_cores=max_cores)


def load_workload(path: str | Path, max_cores: int | None = None) -> Workload:
    """SWF (`.swf`, `.swf.gz`) or CSV (`.csv`, `.csv.gz`) by extension."""
    name = Path(path).name.lower()
    if name.endswith((".swf", ".swf.gz")):
        return read_swf(path, max_cores)
    if name.endswith((".csv", ".csv.gz")):
        return read_csv(path, max_cores)
    raise InputError("unknown workload format (expected .swf, .swf.gz, .csv or .csv.gz)", source=str(path))
