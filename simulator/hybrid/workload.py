"""Hybrid workloads (004 §IV-A/B): a real trace typed on-demand / rigid / malleable by project, as
an editable CSV.

SWF has no project field: jobs are grouped by group id (field 13) by default, or by user id (field
12), or each job alone. A seeded draw types 10 % of the projects on-demand, 60 % rigid and the rest
malleable; single-node jobs of malleable projects cannot shrink and are re-typed rigid or on-demand
at random (004 §IV-A, Cori). On-demand jobs get an advance-notice kind from a Table II mix (W1-W5 or
explicit shares): the trace submit time is the estimated arrival t_est, the notice comes U(15, 30)
min before it, early jobs arrive U(notice, t_est), late ones U(t_est, t_est + 30 min), the others at
t_est. Setup is U(5 %, 10 %) of the run time for rigid jobs, U(0 %, 5 %) for malleable ones;
malleable jobs run on [ceil(0.2 n_max), n_max] nodes, n_max the trace size.

The CSV (one row per job, sorted by submission) keeps the columns of the plain workload CSV, so any
simulator reads it as a rigid trace, plus ``job_type, notice, notice_time, estimated_arrival, n_min,
n_max, setup``; an on-demand job's ``submit_time`` is its actual arrival. Edit it by hand and run it
again with ``--workload``.
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from cosched.deprecation import warn_renamed
from cosched.errors import InputError
from cosched.inputs import check_columns, parse_numbers, read_text, shown
from cosched.simulator.jobs import JobKind
from cosched.simulator.workload import Workload, read_csv

if TYPE_CHECKING:
    import pandas as pd
    from numpy.typing import ArrayLike

__all__ = [
    "HybridWorkload",
    "TYPES",
    "job_kinds",
    "NOTICE_KINDS",
    "NOTICE_MIXES",
    "TYPE_BY",
    "DEFAULT_FRACTIONS",
    "build_hybrid",
    "parse_shares",
    "type_shares",
    "notice_mix",
    "trace_projects",
    "write_hybrid_csv",
    "read_hybrid_csv",
    "is_hybrid_csv",
    "HYBRID_COLUMNS",
]

# the job kinds of a hybrid workload (004 §III-A), each equal to its spelling in the CSV's job_type
TYPES = (JobKind.ON_DEMAND, JobKind.RIGID, JobKind.MALLEABLE)
NOTICE_KINDS = ("no-notice", "accurate", "early", "late")  # 004 Fig. 1
NO_NOTICE, ACCURATE, EARLY, LATE = range(4)
NOTICE_MIXES = {  # 004 Table II: % no notice / accurate / early / late
    "w1": (0.70, 0.10, 0.10, 0.10),
    "w2": (0.10, 0.70, 0.10, 0.10),
    "w3": (0.10, 0.10, 0.70, 0.10),
    "w4": (0.10, 0.10, 0.10, 0.70),
    "w5": (0.25, 0.25, 0.25, 0.25),
}
DEFAULT_FRACTIONS = (0.1, 0.6, 0.3)  # 004 §IV-A: projects on-demand / rigid / malleable
TYPE_BY = ("group", "user", "job")
NOTICE_LEAD = (900.0, 1800.0)  # 004 §I: notice 15-30 min before the estimated arrival
LATE_WINDOW = 1800.0  # 004 §IV-B: late jobs arrive within 30 min after t_est
RIGID_SETUP = (0.05, 0.10)  # 004 §IV-B: share of the run time
MALLEABLE_SETUP = (0.0, 0.05)
MIN_FRACTION = 0.2  # 004 §IV-B: n_min = 20 % of n_max
SHARE_TOLERANCE = 1e-6  # shares must sum to 1 within this
HYBRID_COLUMNS = (
    "job_type",
    "notice",
    "notice_time",
    "estimated_arrival",
    "n_min",
    "n_max",
    "setup",
)


@dataclass(frozen=True, eq=False)
class HybridWorkload:
    """A trace with a type per job and the on-demand timing, in submission order (arrival for
    on-demand jobs).

    ``job_type`` holds a `JobKind` of `TYPES` per job (given as members or their spellings);
    ``workload.run`` and ``workload.estimate`` are the trace's run time and estimate (setup and
    checkpoint writes inside); ``notice_kind`` is -1 for rigid and malleable jobs; times NaN where
    they do not apply.
    """

    workload: Workload
    job_type: np.ndarray
    notice_kind: np.ndarray
    notice_time: np.ndarray
    estimated_arrival: np.ndarray
    n_min: np.ndarray
    n_max: np.ndarray
    setup: np.ndarray

    def __post_init__(self) -> None:
        job_type = np.asarray(self.job_type)
        if job_type.dtype.kind in "iu":  # the integer codes before 0.3.0: positions in TYPES
            warn_renamed(
                "integer job_type codes",
                "the cosched.simulator.jobs.JobKind members (or their spellings)",
                stacklevel=4,
            )
            if job_type.size and not (job_type.min() >= 0 and job_type.max() < len(TYPES)):
                raise InputError(
                    f"integer codes must be 0 to {len(TYPES) - 1}, got {job_type.min()}..."
                    f"{job_type.max()}",
                    field="job_type",
                )
            job_type = np.array(TYPES, dtype=object)[job_type]
        object.__setattr__(self, "job_type", job_kinds(job_type))

    def __len__(self) -> int:
        return len(self.workload)

    def head(self, count: int) -> HybridWorkload:
        """The first `count` jobs."""
        keep = slice(0, count)
        return HybridWorkload(
            self.workload.head(count), *(getattr(self, name)[keep] for name in _ARRAYS)
        )

    def frame(self) -> pd.DataFrame:
        """The workload as the CSV's table (pandas)."""
        import pandas as pd

        w = self.workload
        has_notice = np.isfinite(self.notice_time)
        od = self.job_type == JobKind.ON_DEMAND
        return pd.DataFrame(
            {
                "job_id": w.job_id,
                "submit_time": w.submit,
                "run_time": w.run,
                "cores": w.cores,
                "estimate": w.estimate,
                "job_type": self.job_type.astype(str),
                "notice": np.where(
                    od, np.array(NOTICE_KINDS, dtype=object)[np.maximum(self.notice_kind, 0)], ""
                ),
                "notice_time": np.where(has_notice, self.notice_time, np.nan),
                "estimated_arrival": np.where(od, self.estimated_arrival, np.nan),
                "n_min": self.n_min,
                "n_max": self.n_max,
                "setup": self.setup,
            }
        )


# the integer codes of the job types before 0.3.0 (deprecated): now the members of JobKind
_OLD_CODES = {
    "ON_DEMAND": JobKind.ON_DEMAND,
    "RIGID": JobKind.RIGID,
    "MALLEABLE": JobKind.MALLEABLE,
}


def __getattr__(name: str) -> JobKind:
    if name in _OLD_CODES:
        warn_renamed(f"{__name__}.{name}", f"cosched.simulator.jobs.JobKind.{name}")
        return _OLD_CODES[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_MEMBERS = {(JobKind, kind) for kind in TYPES}
_ARRAYS = ("job_type", "notice_kind", "notice_time", "estimated_arrival", "n_min", "n_max", "setup")


def job_kinds(values: ArrayLike) -> np.ndarray:
    """`values` (`JobKind` members of `TYPES` or their spellings) as an object array of the members;
    InputError naming a value that is none of them."""
    array = np.asarray(values)
    if array.dtype == object and {(type(v), v) for v in array.tolist()} <= _MEMBERS:
        return array  # the members already (as built and read here): a set is quicker than unique
    spelled = array.astype(str)  # a member's str() is its spelling
    names, inverse = np.unique(spelled, return_inverse=True)
    known = {kind.value: kind for kind in TYPES}
    for name in names:
        if name not in known:
            raise InputError(
                f"unknown job type {shown(name)}; use {', '.join(TYPES)}", field="job_type"
            )
    return np.array([known[name] for name in names], dtype=object)[inverse.reshape(-1)]


def parse_shares(text: str, names: tuple[str, ...], what: str) -> tuple[float, ...]:
    """`name=share,...` over `names` (missing names get 0); shares >= 0 summing to 1."""
    shares = dict.fromkeys(names, 0.0)
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, sep, value = part.partition("=")
        name = name.strip().lower()
        if not sep or name not in shares:
            raise InputError(
                f"expected NAME=SHARE with NAME in {', '.join(names)}, got {shown(part)}",
                field=what,
            )
        try:
            shares[name] = float(value)
        except ValueError:
            raise InputError(f"not a number: {shown(value)}", field=what) from None
        if not (math.isfinite(shares[name]) and shares[name] >= 0):
            raise InputError(f"shares must be finite and >= 0, got {shown(value)}", field=what)
    total = sum(shares.values())
    if abs(total - 1.0) > SHARE_TOLERANCE:
        raise InputError(f"shares must sum to 1, got {total:g}", field=what)
    return tuple(shares[name] for name in names)


def type_shares(text: str) -> tuple[float, float, float]:
    """Shares of the projects per job type, `on-demand=0.1,rigid=0.6,malleable=0.3` (a missing type
    gets 0); they must sum to 1."""
    on_demand, rigid, malleable = parse_shares(text, TYPES, "job_types")
    return on_demand, rigid, malleable


def notice_mix(text: str) -> tuple[float, float, float, float]:
    """A Table II mix by name (w1..w5) or explicit shares `no-notice=0.4,accurate=0.2,...`."""
    key = text.strip().lower()
    if key in NOTICE_MIXES:
        return NOTICE_MIXES[key]
    if "=" not in key:
        raise InputError(
            f"unknown notice mix {shown(text)}; use {', '.join(NOTICE_MIXES)} or shares "
            f"{'=..,'.join(NOTICE_KINDS)}=..",
            field="notice",
        )
    no_notice, accurate, early, late = parse_shares(key, NOTICE_KINDS, "notice")
    return no_notice, accurate, early, late


def trace_projects(path: str | Path, job_ids: np.ndarray, by: str) -> np.ndarray:
    """The project of each job of `job_ids`: its SWF group id or user id, or the job itself, as
    `by` says."""
    if by not in TYPE_BY:
        raise InputError(
            f"unknown --type-by {shown(by)}; use {', '.join(TYPE_BY)}", field="type_by"
        )
    if by == "job":
        return np.arange(job_ids.size, dtype=np.int64)
    name = str(path).lower()
    if not name.endswith((".swf", ".swf.gz")):
        raise InputError(
            f"--type-by {by} needs an SWF trace (group and user ids); use --type-by job",
            source=str(path),
            field="type_by",
        )
    import pandas as pd

    column = 12 if by == "group" else 11  # SWF fields 13 and 12 (1-based)
    frame = pd.read_csv(
        io.StringIO(read_text(path, comment=";")),
        sep=r"\s+",
        comment=";",
        header=None,
        usecols=[0, column],
        dtype=np.float64,
    )
    ids = pd.Series(frame[column].to_numpy(), index=frame[0].to_numpy().astype(np.int64))
    keys = ids.reindex(job_ids).to_numpy()
    if not np.any(keys >= 0):
        raise InputError(
            f"the trace has no {by} ids (SWF field {column + 1} is -1 everywhere); use "
            f"--type-by {'user' if by == 'group' else 'job'}",
            source=str(path),
            field="type_by",
        )
    return np.nan_to_num(keys, nan=-1.0).astype(np.int64)


def build_hybrid(
    workload: Workload,
    cores_per_node: int,
    projects: np.ndarray,
    *,
    seed: int = 0,
    fractions: tuple[float, float, float] = DEFAULT_FRACTIONS,
    mix: tuple[float, float, float, float] = NOTICE_MIXES["w5"],
    rigid_setup: tuple[float, float] = RIGID_SETUP,
    malleable_setup: tuple[float, float] = MALLEABLE_SETUP,
    min_fraction: float = MIN_FRACTION,
) -> HybridWorkload:
    """Type the jobs of `workload` by project and draw the on-demand timing and setups (004
    §IV-A/B), seeded."""
    for name, (low, high) in (("rigid setup", rigid_setup), ("malleable setup", malleable_setup)):
        if not 0 <= low <= high < 1:
            raise InputError(
                f"{name} range must satisfy 0 <= low <= high < 1, got {low}..{high}", field="setup"
            )
    if not 0 < min_fraction <= 1:
        raise InputError(
            f"n_min fraction must be in (0, 1], got {min_fraction}", field="min_fraction"
        )
    rng = np.random.default_rng(seed)
    jobs = len(workload)
    names, project = np.unique(projects, return_inverse=True)
    order = rng.permutation(names.size)  # 004 §IV-A: random projects get each type
    bounds = np.round(np.cumsum(fractions)[:2] * names.size).astype(np.int64)
    project_type = np.empty(names.size, dtype=np.int64)  # positions in TYPES, as `fractions`
    project_type[order] = np.searchsorted(bounds, np.arange(names.size), side="right")
    job_type = np.array(TYPES, dtype=object)[project_type[project]]
    nodes = -(-workload.cores // cores_per_node)
    # 004 §IV-A: a single-node job of a malleable project cannot shrink: rigid or on-demand
    single = (job_type == JobKind.MALLEABLE) & (nodes == 1)
    retyped = np.empty(int(single.sum()), dtype=object)
    retyped[:] = JobKind.ON_DEMAND  # the member itself (np.full would store its spelling)
    retyped[rng.random(retyped.size) < 0.5] = JobKind.RIGID
    job_type[single] = retyped
    run = workload.run
    rigid, malleable = job_type == JobKind.RIGID, job_type == JobKind.MALLEABLE
    setup_low = np.select([rigid, malleable], [rigid_setup[0], malleable_setup[0]], 0.0)
    setup_high = np.select([rigid, malleable], [rigid_setup[1], malleable_setup[1]], 0.0)
    setup = rng.uniform(setup_low, setup_high) * run  # 004 §IV-B
    od = job_type == JobKind.ON_DEMAND
    kind = np.where(od, rng.choice(len(NOTICE_KINDS), size=jobs, p=np.asarray(mix) / sum(mix)), -1)
    estimated = np.where(od, workload.submit, np.nan)  # [impl] the trace submit time is t_est
    lead = rng.uniform(*NOTICE_LEAD, size=jobs)
    notice_time = np.where(od & (kind != NO_NOTICE), estimated - lead, np.nan)
    u = rng.random(jobs)
    arrival = np.select(
        [kind == EARLY, kind == LATE],
        [notice_time + u * (estimated - notice_time), estimated + u * LATE_WINDOW],
        workload.submit,
    )
    n_min = np.where(malleable, np.maximum(1, np.ceil(min_fraction * nodes)), nodes).astype(
        np.int64
    )
    return _sorted(
        workload,
        arrival,
        job_type,
        kind.astype(np.int8),
        notice_time,
        estimated,
        n_min,
        nodes,
        setup,
    )


def _sorted(workload: Workload, submit: np.ndarray, *arrays: ArrayLike) -> HybridWorkload:
    order = np.argsort(submit, kind="stable")
    w = replace(workload, submit=submit).take(order)
    return HybridWorkload(w, *(np.asarray(a)[order] for a in arrays))


def write_hybrid_csv(hybrid: HybridWorkload, path: str | Path) -> None:
    """Write the CSV (through `cosched.outputs.atomic_path`: no partial file on error)."""
    from cosched.outputs import atomic_path

    with atomic_path(path) as tmp:
        hybrid.frame().to_csv(tmp, index=False)  # full precision: a rerun repeats the run exactly


def is_hybrid_csv(path: str | Path) -> bool:
    """Whether `path` is a CSV whose header names a job_type column."""
    name = str(path).lower()
    if not name.endswith((".csv", ".csv.gz")) or not Path(path).is_file():
        return False
    first = read_text(path).split("\n", 1)[0]
    return "job_type" in (cell.strip() for cell in first.split(","))


def read_hybrid_csv(
    path: str | Path, cores_per_node: int, max_cores: int | None = None
) -> HybridWorkload:
    """Read a hybrid CSV and check it; errors name the line and the column."""
    source = str(path)
    # the plain columns, cleaned and sorted by submit time
    base = read_csv(path, max_cores=max_cores)
    rows = list(csv.reader(io.StringIO(read_text(path), newline="")))
    header_index = next(i for i, row in enumerate(rows) if any(cell.strip() for cell in row))
    header = [cell.strip() for cell in rows[header_index]]
    for name in HYBRID_COLUMNS:
        if name not in header:
            raise InputError("missing column", source=source, line=header_index + 1, field=name)
    body = [
        (number, [cell.strip() for cell in row])
        for number, row in enumerate(rows[header_index + 1 :], header_index + 2)
        if any(cell.strip() for cell in row)
    ]
    lines = [number for number, _ in body]
    column = {name: [row[header.index(name)] for _, row in body] for name in header}
    ids, _ = parse_numbers(column["job_id"])
    types = np.array(
        [
            TYPES[_index(TYPES, cell, source, line, "job_type")]
            for cell, line in zip(column["job_type"], lines)
        ],
        dtype=object,
    )
    kinds = np.array(
        [
            _index(NOTICE_KINDS, cell, source, line, "notice") if t is JobKind.ON_DEMAND else -1
            for cell, t, line in zip(column["notice"], types, lines)
        ],
        dtype=np.int8,
    )
    values = {}
    for name in ("notice_time", "estimated_arrival", "n_min", "n_max", "setup"):
        cells = column[name]
        numbers, _ = parse_numbers([cell or "nan" for cell in cells])
        values[name] = (numbers, cells)
    od = types == JobKind.ON_DEMAND
    noticed = od & (kinds != NO_NOTICE)
    times = [
        ("notice_time", np.where(noticed, values["notice_time"][0], 0.0), {}),
        ("estimated_arrival", np.where(od, values["estimated_arrival"][0], 0.0), {}),
        ("n_min", values["n_min"][0], {"integer": True, "minimum": 1}),
        ("n_max", values["n_max"][0], {"integer": True, "minimum": 1}),
        ("setup", values["setup"][0], {"minimum": 0}),
    ]
    check_columns(
        [(name, numbers, rules, values[name][1]) for name, numbers, rules in times],
        source=source,
        lines=lines,
    )
    n_min, n_max = values["n_min"][0].astype(np.int64), values["n_max"][0].astype(np.int64)
    setup, notice_time = values["setup"][0], np.where(noticed, values["notice_time"][0], np.nan)
    estimated = np.where(od, values["estimated_arrival"][0], np.nan)
    raw_run, _ = parse_numbers(column["run_time"])
    raw_submit, _ = parse_numbers(column["submit_time"])
    raw_cores, _ = parse_numbers(column["cores"])
    if max_cores is not None:
        raw_cores = np.minimum(raw_cores, max_cores)
    nodes = -(-raw_cores.astype(np.int64) // cores_per_node)
    problems = [
        (n_min > n_max, "n_min", "n_min must be <= n_max"),
        (n_max != nodes, "n_max", f"n_max must be the job's nodes, ceil(cores / {cores_per_node})"),
        (
            (types != JobKind.MALLEABLE) & (n_min != n_max),
            "n_min",
            "rigid and on-demand jobs need n_min = n_max",
        ),
        (
            setup >= np.where(raw_run > 0, raw_run, np.inf),
            "setup",
            "setup must be shorter than the run time",
        ),
        (
            noticed & (notice_time > estimated),
            "notice_time",
            "the notice must come before the estimated arrival",
        ),
        (
            noticed & (raw_submit < notice_time),
            "submit_time",
            "an on-demand job cannot arrive before its own notice (submit_time < notice_time)",
        ),
    ]
    for bad, field, message in problems:
        if bad.any():
            raise InputError(message, source=source, line=lines[int(np.argmax(bad))], field=field)
    position = {int(job): row for row, job in enumerate(ids)}
    rows_of = np.fromiter((position[int(job)] for job in base.job_id), np.int64, len(base))
    arrays = (types, kinds, notice_time, estimated, n_min, n_max, setup)
    return HybridWorkload(base, *(a[rows_of] for a in arrays))


def _index(names: tuple[str, ...], cell: str, source: str, line: int, field: str) -> int:
    key = cell.strip().lower()
    if key not in names:
        raise InputError(
            f"unknown {field} {shown(cell)}; use {', '.join(names)}",
            source=source,
            line=line,
            field=field,
        )
    return names.index(key)
