"""Rigid job workloads: the Standard Workload Format (SWF, 18 fields) and a plain CSV, cleaned with
counts.

Input rules (InputError naming file, line and field; `cosched.inputs` reads and checks every input):
UTF-8 text, plain or gzipped; every number finite; job ids whole, non-negative and unique; processor
counts whole; times at most `MAX_SECONDS`, positive run times at least `MIN_SECONDS`, processor
counts at most `MAX_PROCS`.

Cleaning rules (each reported as a count in ``Workload.cleaning``):
Resources (optional): memory per core in MiB (SWF: requested memory per processor, field 10, or
used memory per processor, field 7, in KB, chosen by `SWF_MEMORY`; CSV: column `memory_per_core`)
and GPUs per job (CSV: column `gpus`); a job without them (an SWF value of -1, an empty cell)
requests none. Without the option or the columns the workload has none (`memory`/`gpus` are None).

records with run time <= 0 or processors <= 0 (allocated, else requested) or a negative submit time
are dropped; processors above the platform size are capped to it; a missing estimate (requested time
<= 0) falls back to the run time; an estimate below the run time is raised to it (jobs are never
killed at their estimate, so reservations stay valid). Jobs are sorted by submit time, ties by file
order.

Named cleaning choices for SWF (`read_swf(..., cleaning=, status=)`, ``--cleaning``, ``--status``):
`SWF_CLEANINGS` "cosched" (the rules above), "keep-estimates" (the same, but an estimate below the
run time is kept: with ``--kill-at-walltime`` such a job is killed at it) and "cqsim" (CQSim's
``Filter_job_SWF.input_check``: processors = requested processors; a run time above the requested
time is cut to it; records without a requested time or requested processors, or with a whole run
time of 0, are dropped); `SWF_STATUS` names the SWF status codes (field 11) a run may keep (all by
default).

Cache: `read_swf` keeps each parsed SWF file of at least `CACHE_MIN_BYTES` in a cache folder
(`cache_folder`: ``$XDG_CACHE_HOME/cosched/workloads``, by default ``~/.cache/cosched/workloads``;
``COSCHED_NO_CACHE=1`` turns it off), under a digest of the file's bytes, the `max_cores` cap, the
input limits and the source of this reader; a changed file, cap or reader is parsed again. Entries
are checked before use (`cosched.simulator.parse_cache`): the cache never changes what is read.
Deleting the folder is always safe.
"""

from __future__ import annotations

import hashlib
import io
import re
import warnings
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from cosched.data import resolve
from cosched.errors import InputError
from cosched.inputs import (
    MAX_ID,
    MAX_PROCS,
    MAX_SECONDS,
    MIN_SECONDS,
    check_columns,
    check_unique,
    parse_numbers,
    read_text,
    shown,
)
from cosched.simulator import parse_cache
from cosched.simulator.platform import MAX_MEMORY_MIB

__all__ = [
    "Workload",
    "SWF_FIELDS",
    "SWF_MEMORY",
    "read_swf",
    "read_csv",
    "load_workload",
    "make_workload",
    "cache_folder",
    "CACHE_MIN_BYTES",
    "SWF_CLEANINGS",
    "SWF_STATUS",
]

SWF_CLEANINGS = ("cosched", "keep-estimates", "cqsim")
# SWF status (field 11) by name: the archive's codes (2-4: partial executions of one job)
SWF_STATUS = {"completed": (1,), "failed": (0,), "cancelled": (5,), "partial": (2, 3, 4)}

SWF_FIELDS = (
    "job_number",
    "submit_time",
    "wait_time",
    "run_time",
    "allocated_processors",
    "average_cpu_time",
    "used_memory",
    "requested_processors",
    "requested_time",
    "requested_memory",
    "status",
    "user_id",
    "group_id",
    "executable",
    "queue",
    "partition",
    "preceding_job",
    "think_time",
)
CSV_REQUIRED = ("job_id", "submit_time", "run_time", "cores")
CSV_OPTIONAL = ("estimate", "app", "memory_per_core", "gpus")
# SWF memory options: the field read as memory per core (KB per processor in the archive's format)
SWF_MEMORY = {"requested": "requested_memory", "used": "used_memory"}
KB_PER_MIB = 1024


@dataclass(frozen=True, eq=False)
class Workload:
    """Jobs as parallel arrays sorted by submit time: ids, submit, run time, cores, estimate, app
    names, and optionally memory per core (MiB) and GPUs per job (None: not requested by any)."""

    job_id: np.ndarray
    submit: np.ndarray
    run: np.ndarray
    cores: np.ndarray
    estimate: np.ndarray
    app: np.ndarray | None = None
    source: str = ""
    header: dict = field(default_factory=dict)
    cleaning: dict = field(default_factory=dict)
    memory: np.ndarray | None = None
    gpus: np.ndarray | None = None

    def __len__(self) -> int:
        return int(self.job_id.size)

    def head(self, count: int) -> Workload:
        """The first `count` jobs (by submit time), keeping the cleaning counts of the whole
        file."""
        first = self.take(slice(0, count))
        return replace(first, cleaning={**self.cleaning, "jobs": len(first)})

    def take(self, index) -> Workload:
        """The jobs at `index` (a slice, or positions in the order wanted), every job array
        alike."""
        return replace(
            self,
            job_id=self.job_id[index],
            submit=self.submit[index],
            run=self.run[index],
            cores=self.cores[index],
            estimate=self.estimate[index],
            app=None if self.app is None else self.app[index],
            memory=None if self.memory is None else self.memory[index],
            gpus=None if self.gpus is None else self.gpus[index],
        )


def make_workload(
    job_id,
    submit,
    run,
    cores,
    estimate=None,
    app=None,
    *,
    source: str = "",
    header: dict | None = None,
    cleaning: dict | None = None,
    max_cores: int | None = None,
    keep_estimates: bool = False,
    memory=None,
    gpus=None,
) -> Workload:
    """Apply the cleaning rules to raw columns and sort by submit time (stable).

    `memory` (MiB per core) and `gpus` (per job) are optional columns of the same length; values
    <= 0 (or NaN memory) mean none requested.

    The columns must hold valid numbers (the rules of the readers, without line numbers): InputError
    otherwise. `keep_estimates`: an estimate below the run time stays (the job is killed at it with
    ``kill_at_walltime``) instead of being raised to it.
    """
    columns = [
        np.asarray(values, dtype=np.float64).reshape(-1)
        for values in (job_id, submit, run, cores, run if estimate is None else estimate)
    ]
    check_columns(
        [(name, values, _CSV_RULES[name]) for name, values in zip(_CSV_RULES, columns)],
        source=source or None,
    )
    check_unique(columns[0], source=source or None, field="job_id", what="job id")
    job_id, cores = (
        columns[0].astype(np.int64),
        np.maximum(columns[3], -1).astype(np.int64),
    )  # <= 0: dropped
    submit, run, estimate = columns[1], columns[2], columns[4].copy()
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
    if memory is not None:
        memory = np.asarray(memory, dtype=np.float64).reshape(-1)
        check_columns(
            [("memory_per_core", memory, _RESOURCE_RULES["memory_per_core"])], source=source or None
        )
        memory = np.maximum(memory, 0.0)[keep]
    if gpus is not None:
        gpus = np.asarray(gpus, dtype=np.float64).reshape(-1)
        check_columns([("gpus", gpus, _RESOURCE_RULES["gpus"])], source=source or None)
        gpus = np.maximum(gpus, 0).astype(np.int64)[keep]
    capped = 0
    if max_cores is not None:
        over = cores > max_cores
        capped = int(over.sum())
        cores = np.where(over, max_cores, cores)
    counts["processors_capped"] = capped
    missing = ~(estimate > 0)
    counts["estimate_missing_set_to_run_time"] = int(missing.sum())
    low = ~missing & (estimate < run)
    if keep_estimates:
        counts["estimate_below_run_time_kept"] = int(low.sum())
        low[:] = False
    else:
        counts["estimate_below_run_time_raised"] = int(low.sum())
    estimate = np.where(missing | low, run, estimate)
    order = np.argsort(submit, kind="stable")
    counts["jobs"] = int(job_id.size)
    return Workload(
        job_id[order],
        submit[order],
        run[order],
        cores[order],
        estimate[order],
        None if app is None else app[order],
        source=source,
        header=dict(header or {}),
        cleaning=counts,
        memory=None if memory is None else memory[order],
        gpus=None if gpus is None else gpus[order],
    )


_SWF_COMMENT = re.compile(r";[^\n]*")
_SWF_SEPARATOR = re.compile(
    r"[ \t]+"
)  # SWF fields are separated by blanks and tabs (as pandas' \s+ splits)
# checks of the SWF fields the simulator uses; every other field only has to be a finite number
_SWF_RULES = {
    "job_number": {"integer": True, "minimum": 0, "limit": MAX_ID},
    "submit_time": {"limit": MAX_SECONDS},
    "run_time": {"limit": MAX_SECONDS, "shortest": MIN_SECONDS},
    "allocated_processors": {"integer": True, "limit": MAX_PROCS},
    "requested_processors": {"integer": True, "limit": MAX_PROCS},
    "requested_time": {"limit": MAX_SECONDS},
}
_CSV_RULES = {
    "job_id": {"integer": True, "minimum": 0, "limit": MAX_ID},
    "submit_time": {"limit": MAX_SECONDS},
    "run_time": {"limit": MAX_SECONDS, "shortest": MIN_SECONDS},
    "cores": {"integer": True, "limit": MAX_PROCS},
    "estimate": {"limit": MAX_SECONDS},
    "memory_per_core": {"minimum": 0, "maximum": MAX_MEMORY_MIB},
    "gpus": {"integer": True, "minimum": 0, "limit": MAX_PROCS},
}
_RESOURCE_RULES = {
    "memory_per_core": {"maximum": MAX_MEMORY_MIB},
    "gpus": {"integer": True, "limit": MAX_PROCS},
}


_SWF_RECORD = re.compile(r"^[ \t\r]*[^ \t\r;\n]", re.MULTILINE)
# ASCII blanks numpy's reader splits fields on and the SWF rules do not (besides space, tab, CR, LF)
_OTHER_BLANKS = "\x0b\x0c\x1c\x1d\x1e\x1f"


def _lines(text: str):
    """The lines of `text`, one at a time (the header needs the first few only)."""
    start = 0
    while start <= len(text):
        end = text.find("\n", start)
        end = len(text) if end < 0 else end
        yield text[start:end]
        start = end + 1


def _swf_header(text: str) -> dict:
    """`; Key: value` lines before the first job record."""
    header = {}
    for line in _lines(text):
        if not line.startswith(";"):
            if line.strip():
                break
            continue
        key, sep, value = line[1:].partition(":")
        if sep and key.strip() and " " not in key.strip():
            header[key.strip()] = value.strip()
    return header


def _swf_rows(text: str) -> tuple[list[int], list[str]]:
    """Line numbers and contents of the job records: comments (from `;`) cut, blank lines
    skipped."""
    lines = _SWF_COMMENT.sub("", text).replace("\r", " ").split("\n")
    numbers = [number for number, line in enumerate(lines, 1) if line.strip(" \t")]
    return numbers, [lines[number - 1] for number in numbers]


def _blanks_agree(text: str) -> bool:
    """True when numpy's reader and the SWF rules split `text` on the same blanks."""
    return text.isascii() and not any(blank in text for blank in _OTHER_BLANKS)


def _swf_values(text: str, source: str) -> tuple[np.ndarray, list[int] | None]:
    """The records as a float array and their line numbers (None: not computed, the file parsed
    cleanly).

    numpy's C reader (`np.loadtxt`, no pandas import) reads a clean file; anything else is read
    field by field, naming the first bad line and field.
    """
    # Without other blanks (and without non-ASCII ones: numpy's reader takes any Unicode blank as
    # one), numpy splits the fields and skips exactly the lines the rules do (blank or comment): its
    # rows are the records. With them, numpy would split where the rules see a bad field.
    if _blanks_agree(text) and _SWF_RECORD.search(text) is not None:
        try:
            with warnings.catch_warnings():  # "no data" (only odd blank lines): the rules say why
                warnings.simplefilter("ignore", UserWarning)
                data = np.loadtxt(
                    io.StringIO(text.replace("\r", " ")),
                    dtype=np.float64,
                    comments=";",
                    delimiter=None,
                    ndmin=2,
                    quotechar=None,
                )
            # the C reader must match the rules: 18 numbers per data line, none NaN
            if data.shape[1] == len(SWF_FIELDS) and not np.isnan(data).any():
                return data, None
        except ValueError:
            pass
    numbers, rows = _swf_rows(text)
    data = np.empty((len(rows), len(SWF_FIELDS)))
    for row, (number, line) in enumerate(zip(numbers, rows)):
        tokens = _SWF_SEPARATOR.split(line.strip(" \t"))
        if len(tokens) != len(SWF_FIELDS):
            raise InputError(
                f"expected {len(SWF_FIELDS)} fields, got {len(tokens)}", source=source, line=number
            )
        for column, (name, token) in enumerate(zip(SWF_FIELDS, tokens)):
            try:
                data[row, column] = float(token)
            except ValueError:
                raise InputError(
                    f"not a number: {shown(token)}", source=source, line=number, field=name
                ) from None
    return data, numbers


CACHE_MIN_BYTES = 100_000  # smaller files (on disk) parse in milliseconds: not cached
_CACHE_FORMAT = b"cosched parsed SWF 2"
_CACHED_COLUMNS = ("job_id", "submit", "run", "cores", "estimate")
# an SWF record is at least 18 one-character fields and their separators: a file of at most
# MAX_INPUT_BYTES holds at most this many jobs, each kept as 5 numbers of 8 bytes (6 with memory)
_SWF_RECORD_MIN_BYTES = 2 * len(SWF_FIELDS)
_CACHED_JOB_BYTES = 8 * (len(_CACHED_COLUMNS) + 1)
_HASH_CHUNK = 1 << 20  # bytes read at a time while hashing an input file


def cache_folder() -> Path | None:
    """Where parsed SWF files are kept: ``$XDG_CACHE_HOME/cosched/workloads`` (``~/.cache`` when
    XDG_CACHE_HOME is unset, empty or relative); None when ``COSCHED_NO_CACHE`` is set to anything
    but 0."""
    return parse_cache.entry_folder("workloads")


_READER_SOURCES: list[bytes] = []  # the digest of this reader's source and its input rules, once


def _cache_key(path: Path, max_cores: int | None, choices: tuple = ()) -> Path | None:
    """The cache entry of `path` read with `max_cores`, or None (no cache, a small, huge or
    unreadable file)."""
    folder = cache_folder()
    if folder is None:
        return None
    from cosched import inputs

    try:
        size = path.stat().st_size
        if not path.is_file() or not CACHE_MIN_BYTES <= size <= inputs.MAX_INPUT_BYTES.value:
            return None
        if not _READER_SOURCES:
            reader = hashlib.sha256(_CACHE_FORMAT + np.__version__.encode())
            for module in (__file__, inputs.__file__, parse_cache.__file__):
                reader.update(Path(module).read_bytes())
            _READER_SOURCES.append(reader.digest())
        limits = [
            getattr(inputs, name).value
            for name in ("MAX_INPUT_BYTES", "MAX_SECONDS", "MIN_SECONDS", "MAX_PROCS", "MAX_ID")
        ]
        digest = hashlib.sha256(_READER_SOURCES[0])
        digest.update(repr((max_cores, limits) + choices).encode())
        with open(path, "rb") as handle:
            while chunk := handle.read(_HASH_CHUNK):
                digest.update(chunk)
    except OSError:
        return None  # read_text names the problem
    return folder / f"{digest.hexdigest()}.swfcache"


def _cached(key: Path, source: str) -> Workload | None:
    """The workload kept under `key`, or None (no valid entry: `parse_cache.load`)."""
    from cosched.inputs import MAX_INPUT_BYTES

    most_jobs = int(MAX_INPUT_BYTES.value) // _SWF_RECORD_MIN_BYTES
    entry = parse_cache.load(key, most_jobs * _CACHED_JOB_BYTES)
    if entry is None:
        return None
    meta, arrays = entry
    try:
        job_id, submit, run, cores, estimate = (arrays[name] for name in _CACHED_COLUMNS)
        header, cleaning = dict(meta["header"]), dict(meta["cleaning"])
    except (KeyError, TypeError, ValueError):
        return None
    memory = arrays.get("memory")
    if not job_id.size == submit.size == run.size == cores.size == estimate.size or (
        memory is not None and memory.size != job_id.size
    ):
        return None
    return Workload(
        job_id,
        submit,
        run,
        cores,
        estimate,
        source=source,
        header=header,
        cleaning=cleaning,
        memory=memory,
    )


def _keep(key: Path, workload: Workload) -> None:
    """Keep `workload` as the entry `key` (atomically; errors are ignored: the cache only saves
    time)."""
    parse_cache.store(
        key,
        {"header": workload.header, "cleaning": workload.cleaning},
        {
            name: getattr(workload, name)
            for name in _CACHED_COLUMNS + (("memory",) if workload.memory is not None else ())
        },
    )


def read_swf(
    path: str | Path,
    max_cores: int | None = None,
    memory: str | None = None,
    *,
    cleaning: str = "cosched",
    status: tuple[str, ...] | None = None,
) -> Workload:
    """Read a (gzipped) SWF file; cores = allocated processors, else requested; estimate = requested
    time; with `memory` ("requested": field 10, "used": field 7, `SWF_MEMORY`) the memory per core
    in MiB (the archive's KB per processor / 1024; -1: none).

    Every field must be a finite number; ids whole, non-negative and unique; processor counts whole;
    times and counts below the limits of `cosched.inputs` (errors name the line and the field).
    `cleaning` is one of `SWF_CLEANINGS`, `status` the names of `SWF_STATUS` kept (None: every
    record). Files of at least `CACHE_MIN_BYTES` are parsed once and then read from the cache
    (module docstring).
    """
    if memory is not None and memory not in SWF_MEMORY:
        raise InputError(
            f"unknown SWF memory field {memory!r}; choose from {', '.join(SWF_MEMORY)}",
            field="swf_memory",
        )
    if cleaning not in SWF_CLEANINGS:
        raise InputError(
            f"unknown cleaning {cleaning!r}; known: {', '.join(SWF_CLEANINGS)}", field="cleaning"
        )
    for name in status or ():
        if name not in SWF_STATUS:
            raise InputError(
                f"unknown status {name!r}; known: {', '.join(SWF_STATUS)}", field="status"
            )
    path = Path(path)
    source = str(path)
    choices: tuple = () if cleaning == "cosched" and status is None else (cleaning, status)
    if memory is not None:
        choices += (memory,)
    key = _cache_key(path, max_cores, choices)
    if key is not None:
        workload = _cached(key, source)
        if workload is not None and (workload.memory is None) == (memory is None):
            return workload
    workload = _parse_swf(path, source, max_cores, memory, cleaning, status)
    # kept only if the file did not change while it was parsed: an entry holds its key's parse
    if key is not None and _cache_key(path, max_cores, choices) == key:
        _keep(key, workload)
    return workload


def _cleaned_swf(data: np.ndarray, cleaning: str, status) -> tuple[np.ndarray, np.ndarray, dict]:
    """The records kept by the `status` and `cleaning` choices (read_swf), their processors and the
    counts of what was dropped or changed."""
    counts = {"records": len(data)}
    if status is not None:
        codes = [code for name in status for code in SWF_STATUS[name]]
        keep = np.isin(data[:, 10], codes)
        counts["dropped_status"] = int((~keep).sum())
        data = data[keep]
    if cleaning != "cqsim":
        return data, np.where(data[:, 4] > 0, data[:, 4], data[:, 7]), counts
    # CQSim's Filter_job_SWF.input_check: whole parts compared, as its int() does
    run, requested = data[:, 3], data[:, 8]
    over = np.trunc(run) > np.trunc(requested)
    data = data.copy()
    data[over, 3] = requested[over]
    no_request = (np.trunc(data[:, 8]) <= 0) | (data[:, 7] <= 0)
    short = ~no_request & (np.trunc(data[:, 3]) <= 0)
    bad_id = ~no_request & ~short & (data[:, 0] <= 0)
    keep = ~(no_request | short | bad_id)
    counts["cqsim_run_time_cut_to_request"] = int((over & keep).sum())
    counts["cqsim_dropped_without_request"] = int(no_request.sum())
    counts["cqsim_dropped_whole_run_time_0"] = int(short.sum())
    counts["cqsim_dropped_job_number_0"] = int(bad_id.sum())
    data = data[keep]
    return data, data[:, 7], counts


def _parse_swf(
    path: Path,
    source: str,
    max_cores: int | None,
    memory: str | None = None,
    cleaning: str = "cosched",
    status: tuple[str, ...] | None = None,
) -> Workload:
    text = read_text(path, comment=";")
    data, numbers = _swf_values(text, source)
    if not len(data):
        raise InputError("no job records", source=source)

    def line(row: int) -> int:  # error path only: where the row is in the file
        return (numbers or _swf_rows(text)[0])[row]

    check_columns(
        [(name, data[:, i], _SWF_RULES.get(name, {})) for i, name in enumerate(SWF_FIELDS)],
        source=source,
        lines=line,
    )
    check_unique(data[:, 0], source=source, field="job_number", lines=line, what="job id")
    data, cores, counts = _cleaned_swf(data, cleaning, status)
    return make_workload(
        data[:, 0],
        data[:, 1],
        data[:, 3],
        cores,
        data[:, 8],
        source=source,
        header=_swf_header(text),
        cleaning=counts,
        max_cores=max_cores,
        keep_estimates=cleaning == "keep-estimates",
        memory=None
        if memory is None
        else data[:, SWF_FIELDS.index(SWF_MEMORY[memory])] / KB_PER_MIB,
    )


def read_csv(
    path: str | Path, max_cores: int | None = None, *, keep_estimates: bool = False
) -> Workload:
    """Read a CSV with columns job_id, submit_time, run_time, cores and optional estimate, app,
    memory_per_core (MiB) and gpus (per job).

    Cells are trimmed; rows of empty cells are skipped; an empty estimate, memory or GPU cell means
    none. The numbers follow the rules of `read_swf`, memory and GPUs are at least 0, GPUs whole;
    errors name the line and the column. `keep_estimates`: as `make_workload`.
    """
    path = Path(path)
    source = str(path)
    header, header_line, rows, lines = _csv_rows(read_text(path), source)
    _check_csv_header(header, header_line, source)
    columns, checks = {}, []
    for name in CSV_REQUIRED + ("estimate", "memory_per_core", "gpus"):
        if name not in header:
            continue
        index = header.index(name)
        cells = [row[index] for row in rows]
        values, _ = parse_numbers(cells)
        if name in CSV_OPTIONAL:  # an empty estimate, memory or GPU cell: none
            values[[not cell for cell in cells]] = -1.0 if name == "estimate" else 0.0
        columns[name] = values
        checks.append((name, values, _CSV_RULES[name], cells))
    check_columns(checks, source=source, lines=lines)
    check_unique(columns["job_id"], source=source, field="job_id", lines=lines, what="job id")
    app = (
        np.array([row[header.index("app")] for row in rows], dtype=object)
        if "app" in header
        else None
    )
    return make_workload(
        columns["job_id"],
        columns["submit_time"],
        columns["run_time"],
        columns["cores"],
        columns.get("estimate"),
        app,
        source=source,
        max_cores=max_cores,
        keep_estimates=keep_estimates,
        memory=columns.get("memory_per_core"),
        gpus=columns.get("gpus"),
    )


def _csv_rows(text: str, source: str) -> tuple[list[str], int, list[list[str]], list[int]]:
    """The header, its line, the data rows (trimmed cells; rows of empty cells skipped) and their
    lines."""
    import csv  # CSV workloads only: an SWF run does not pay its import

    reader = csv.reader(io.StringIO(text, newline=""))
    header: list[str] | None = None
    header_line, rows, lines = 1, [], []
    try:
        for record in reader:
            cells = [cell.strip() for cell in record]
            if not any(cells):
                continue
            if header is None:
                header, header_line = cells, reader.line_num
            elif len(cells) != len(header):
                raise InputError(
                    f"row has {len(cells)} cells, the header has {len(header)}",
                    source=source,
                    line=reader.line_num,
                )
            else:
                rows.append(cells)
                lines.append(reader.line_num)
    except csv.Error as error:
        raise InputError(f"not a valid CSV: {error}", source=source, line=reader.line_num) from None
    if header is None:
        raise InputError("empty file: no header", source=source)
    return header, header_line, rows, lines


def _check_csv_header(header: list[str], line: int, source: str) -> None:
    """Every column once, the required ones present."""
    for name in header:
        if header.count(name) > 1:
            raise InputError("column given twice", source=source, line=line, field=name)
    for name in CSV_REQUIRED:
        if name not in header:
            raise InputError("missing column", source=source, line=line, field=name)


def load_workload(
    path: str | Path,
    max_cores: int | None = None,
    swf_memory: str | None = None,
    *,
    cleaning: str = "cosched",
    status: tuple[str, ...] | None = None,
) -> Workload:
    """SWF (`.swf`, `.swf.gz`) or CSV (`.csv`, `.csv.gz`) by extension, or a preset
    (`cosched.data.WORKLOADS`); `swf_memory` chooses the SWF memory field, `cleaning` and `status`
    the SWF cleaning (`read_swf`)."""
    path = Path(resolve("workload", path))
    name = path.name.lower()
    if name.endswith((".swf", ".swf.gz")):
        return read_swf(path, max_cores, swf_memory, cleaning=cleaning, status=status)
    if name.endswith((".csv", ".csv.gz")):
        if cleaning not in ("cosched", "keep-estimates") or status is not None:
            raise InputError(
                "the cqsim cleaning and the status choice read SWF fields: give an SWF workload",
                source=str(path),
            )
        return read_csv(path, max_cores, keep_estimates=cleaning == "keep-estimates")
    raise InputError(
        "unknown workload format (expected .swf, .swf.gz, .csv or .csv.gz)", source=str(path)
    )
