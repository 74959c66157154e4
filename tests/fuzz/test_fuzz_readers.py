"""Fuzzing every file reader through the real CLI (issue "Reliability: no wrong answer, no
traceback").

Valid SWF and CSV workloads, heatmap CSVs, platform JSON and application-seed JSON (generated here;
the real traces and heatmaps under ``../shared/data`` join in when present) are mutated: byte flips,
inserted Latin-1 / NUL / byte-order-mark bytes, truncation, re-encoding (UTF-16, UTF-32), gzip
wrapping and gzip corruption, duplicated and deleted lines, fields replaced by huge, negative, NaN,
infinite, fractional or non-numeric values. Each mutant goes through ``cosched.cli.main`` in-process
and must give

- exit 0 and output that agrees with an independent reading of the input (the jobs kept, their times
  and cores, no silently dropped or altered record), or
- exit 2 with exactly one stderr line ``cosched CMD: error: ...`` naming the file (and the line and
  field of a replaced field), and nothing left in the ``--out`` location;

never a traceback (any other exception fails the test) and no numeric RuntimeWarning. For the
workload, platform and seed formats the oracle also predicts which of the two outcomes is right.

Each target runs in the two campaigns of ``conftest.py``: the default suite runs 50 mutants per
format (``[quick]``); ``python3 -m pytest -m fuzz tests/fuzz`` runs ``FUZZ_EXAMPLES`` (default 1000)
per format and generator option set (``[long]``).
"""

from __future__ import annotations

import contextlib
import csv
import gzip
import io
import json
import math
import re
import shutil
import tempfile
import warnings
from pathlib import Path

import numpy as np
from hypothesis import given, note
from hypothesis import strategies as st

from cosched.cli import main
from cosched.inputs import (
    MAX_CORES_PER_NODE,
    MAX_ID,
    MAX_JOBS,
    MAX_NODES,
    MAX_PROCS,
    MAX_SECONDS,
    MIN_SECONDS,
)
from cosched.simulator.workload import load_workload

REPO = Path(__file__).resolve().parents[2]
# real traces and heatmaps, when the checkout has them beside it
SHARED = REPO.parent / "shared" / "data"

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
SWF_PLATFORM_CORES = 100  # the kth-sp2 preset: 100 single-core nodes

# field values that broke readers: huge, tiny, negative, non-finite, fractional, non-numeric, odd
# spellings
VALUES = [
    "1e30",
    "-1e30",
    "1e300",
    "-1e300",
    "1e309",
    "inf",
    "-inf",
    "Infinity",
    "nan",
    "NaN",
    "-1",
    "0",
    "-0",
    "7.5",
    "0.5",
    "1e-300",
    "3.0",
    "+5",
    ".5",
    "5.",
    "abc",
    "0x10",
    "9" * 40,
    "1e18",
    "2147483648",
    "9007199254740993",
    "1e10",
    "1e11",
    "1_000",
    "\u0661\u0662",
    "\u00e9",
    "1e",
    "--1",
    "NA",
    "null",
    "1e12",
]
SPECIAL_BYTES = [
    b"\xe9",
    b"\x00",
    b"\xff\xfe",
    b"\xfe\xff",
    b"\xef\xbb\xbf",
    b"\x80",
    b"\xc3",
    b"\r",
    b"\n",
    b"\t",
    b";",
    b",",
    b'"',
    b"\x0c",
    b"\xc2\xa0",
    b"\xe2\x80\xa8",
    b"\x1f\x8b",
    b" ",
]


# --- valid inputs ---------------------------------------------------------------------------------


def swf_base(jobs: int = 10) -> str:
    lines = [
        "; Version: 2.2",
        "; Computer: fuzz cluster",
        "; MaxNodes: 100",
        "; MaxProcs: 100",
        "; Note: generated for the fuzz tests",
    ]
    for i in range(jobs):
        run = 30 + 7 * i
        procs = i % 5 + 1
        estimate = -1 if i % 4 == 0 else 2 * run
        lines.append(
            f"{i + 1} {10 * i} 0 {run} {procs} -1 -1 {procs} {estimate} -1 1 1 1 1 1 -1 -1 -1"
        )
    return "\n".join(lines) + "\n"


def csv_base(jobs: int = 10) -> str:
    rows = ["job_id,submit_time,run_time,cores,estimate,app"]
    for i in range(jobs):
        estimate = "" if i % 3 == 0 else 40 + 3 * i
        rows.append(f"{100 + i},{5 * i},{20 + 3 * i},{i % 4 + 1},{estimate},app{i % 3}")
    return "\n".join(rows) + "\n"


HEATMAP_APPS = (("cg", 4, 100.0), ("ft", 2, 50.0), ("lu", 4, 80.0))


def heatmap_base() -> str:
    rows = ["name_A,procs_A,compact_A,name_B,procs_B,compact_B,co_A_B,co_B_A", "cg,4,100,,,,90,"]
    for i, (a, pa, ta) in enumerate(HEATMAP_APPS):
        for b, pb, tb in HEATMAP_APPS[i:]:
            rows.append(f"{a},{pa},{ta:g},{b},{pb},{tb:g},{ta * 1.1:g},{tb * 1.2:g}")
    return "\n".join(rows) + "\n"


def platform_base() -> dict:
    return {"name": "fuzz", "nodes": 8, "sockets_per_node": 2, "cores_per_socket": 2}


def seed_base() -> dict:
    return {
        "note": "fuzz",
        "applications": [{"name": n, "procs": p, "compact_time": t} for n, p, t in HEATMAP_APPS],
    }


def _shared_head(path: Path, lines: int) -> str | None:
    """The first `lines` lines of a real data file, if the shared data folder is there."""
    if not path.is_file():
        return None
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8", errors="replace") as handle:
        return "".join(handle.readline() for _ in range(lines))


SWF_BASES = [swf_base()] + [
    text for text in [_shared_head(SHARED / "swf" / "KTH-SP2-1996-2.1-cln.swf.gz", 45)] if text
]
CSV_BASES = [csv_base()]
HEATMAP_BASES = [heatmap_base()] + [
    text
    for text in [
        _shared_head(SHARED / "heatmaps" / "elise" / "derived_pairs_g5k_grvingt_NAS.csv", 12),
        (REPO / "simulator" / "data" / "synthetic_npb_heatmap.csv")
        .read_text()[:2000]
        .rsplit("\n", 1)[0]
        + "\n",
    ]
    if text
]


# --- mutations ------------------------------------------------------------------------------------


@st.composite
def byte_mutations(draw, text: str, comment: bytes | None = None):
    """1-3 byte-level edits of `text` (UTF-8), plus an optional gzip wrapping: (bytes, gzipped,
    description)."""
    data = bytearray(text.encode())
    steps = []
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(
            st.sampled_from(
                [
                    "flip",
                    "insert",
                    "delete",
                    "truncate",
                    "dup_line",
                    "del_line",
                    "encode",
                    "comment_latin1",
                ]
            )
        )
        position = draw(st.integers(0, max(len(data) - 1, 0)))
        if kind == "flip" and data:
            data[position] ^= draw(st.integers(1, 255))
        elif kind == "insert":
            chunk = draw(
                st.one_of(st.sampled_from(SPECIAL_BYTES), st.binary(min_size=1, max_size=4))
            )
            data[position:position] = chunk
            kind += f" {chunk!r}"
        elif kind == "delete":
            del data[position : position + draw(st.integers(1, 20))]
        elif kind == "truncate":
            del data[position:]
        elif kind in ("dup_line", "del_line"):
            lines = bytes(data).split(b"\n")
            index = draw(st.integers(0, len(lines) - 1))
            if kind == "dup_line":
                lines.insert(draw(st.integers(0, len(lines))), lines[index])
            else:
                del lines[index]
            data = bytearray(b"\n".join(lines))
        elif kind == "encode":
            encoding = draw(
                st.sampled_from(
                    ["utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-8-sig", "latin-1"]
                )
            )
            decoded = bytes(data).decode("utf-8", "replace")
            if encoding == "latin-1":
                decoded = decoded.replace("1", "\u00b9", 1)
            data = bytearray(decoded.encode(encoding, "replace"))
            kind += f" {encoding}"
        elif kind == "comment_latin1" and comment:
            lines = bytes(data).split(b"\n")
            lines.insert(draw(st.integers(0, len(lines))), comment + b" caf\xe9 \x00 \xff")
            data = bytearray(b"\n".join(lines))
        steps.append(kind)
    raw, gzipped = bytes(data), False
    wrap = draw(st.sampled_from(["plain", "plain", "gzip", "gzip-corrupt", "gzip-truncate"]))
    if wrap != "plain":
        raw, gzipped = gzip.compress(raw, mtime=0), True
        if wrap == "gzip-corrupt":
            position = draw(st.integers(0, len(raw) - 1))
            raw = (
                raw[:position]
                + bytes([raw[position] ^ draw(st.integers(1, 255))])
                + raw[position + 1 :]
            )
        elif wrap == "gzip-truncate":
            raw = raw[: draw(st.integers(0, len(raw) - 1))]
        steps.append(wrap)
    return raw, gzipped, ", ".join(steps)


@st.composite
def field_replacements(draw, text: str, separator: str | None, names, first_data_line: int):
    """One field of one data line replaced: (bytes, line number, field name, value)."""
    lines = text.split("\n")
    data_lines = [
        i
        for i, line in enumerate(lines)
        if i + 1 >= first_data_line and line.strip() and not line.startswith(";")
    ]
    index = draw(st.sampled_from(data_lines))
    cells = lines[index].split(separator) if separator else lines[index].split()
    column = draw(st.integers(0, len(cells) - 1))
    value = draw(
        st.one_of(
            st.sampled_from(VALUES),
            st.sampled_from(cells),  # another field's value (duplicates)
            st.floats(allow_nan=True, allow_infinity=True).map(repr),
            st.integers(-(10**20), 10**20).map(str),
        )
    )
    cells[column] = value
    lines[index] = (separator or " ").join(cells)
    return "\n".join(lines).encode(), index + 1, names[column], value


# --- running the CLI ------------------------------------------------------------------------------


@contextlib.contextmanager
def workspace(factory):
    folder = Path(tempfile.mkdtemp(dir=factory.getbasetemp()))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    """`cosched.cli.main(argv)` in-process: (exit code, stdout, stderr); tracebacks and
    RuntimeWarnings fail."""
    out, err = io.StringIO(), io.StringIO()
    with (
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
        warnings.catch_warnings(),
    ):
        # overflow / invalid value: a wrong number on its way
        warnings.simplefilter("error", RuntimeWarning)
        try:
            code = main(argv)
        except SystemExit as exit_:
            code = exit_.code
    return code, out.getvalue(), err.getvalue()


def assert_failure_names(
    code: int,
    err: str,
    command: str,
    path: Path,
    *,
    line: int | None = None,
    field: str | None = None,
) -> None:
    """Exit 2 with one stderr line `cosched COMMAND: error: ...` naming the file
    (and line / field).
    """
    assert code == 2, f"exit {code}, stderr {err!r}"
    lines = err.splitlines()
    assert len(lines) == 1, f"expected one stderr line, got {lines!r}"
    assert lines[0].startswith(f"cosched {command}: error: "), lines[0]
    assert str(path) in lines[0], f"the error does not name {path}: {lines[0]}"
    if line is not None:
        assert re.search(rf"\bline {line}\b", lines[0]), (
            f"the error does not name line {line}: {lines[0]}"
        )
    if field is not None:
        assert field in lines[0], f"the error does not name field {field}: {lines[0]}"


def assert_nothing_left(folder: Path, inputs: set[str]) -> None:
    left = {p.name for p in folder.iterdir()} - inputs
    assert not left, f"a failed run left {left} behind"


def strict_json(text: str):
    def refuse(constant):
        raise AssertionError(f"non-standard JSON constant {constant} in the output")

    return json.loads(text, parse_constant=refuse)


# --- an independent reading of the workload formats (the oracle) ----------------------------------


class Reject(Exception):
    """The oracle's verdict: the input is invalid and must be refused (exit 2)."""


def oracle_text(raw: bytes, name: str, comment: bytes | None = None) -> str:
    """The text the readers must see, or Reject: gzip by magic bytes, UTF-8, no NUL or BOM-marked
    UTF-16/32."""
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except Exception as error:  # noqa: BLE001 - any corruption
            raise Reject(f"gzip: {error}") from None
    elif name.endswith(".gz"):
        raise Reject("not gzip")
    if raw.startswith((b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff")):
        raise Reject("UTF-16/32 byte-order mark")
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    lines = []
    for line in raw.split(b"\n"):
        data, mark, rest = line.partition(comment) if comment else (line, b"", b"")
        if b"\x00" in data:
            raise Reject("NUL")
        try:
            lines.append(data.decode("utf-8") + (mark + rest).decode("utf-8", "replace"))
        except UnicodeDecodeError:
            raise Reject("not UTF-8") from None
    return "\n".join(lines)


def _number(token: str) -> float:
    try:
        value = float(token)
    except ValueError:
        raise Reject(f"not a number {token!r}") from None
    if not math.isfinite(value):
        raise Reject(f"not finite {token!r}")
    return value


def _check_job(job_id, submit, run, procs, estimate):
    if not (job_id.is_integer() and 0 <= job_id <= MAX_ID.value):
        raise Reject(f"job id {job_id}")
    if any(v > MAX_SECONDS.value for v in (submit, run, estimate)):
        raise Reject("time above MAX_SECONDS")
    if 0 < run < MIN_SECONDS.value:
        raise Reject("run time below MIN_SECONDS")
    for value in procs:
        if not value.is_integer() or value > MAX_PROCS.value:
            raise Reject(f"procs {value}")


def oracle_swf(raw: bytes, name: str) -> list[dict]:
    """The jobs a correct SWF reader keeps (before capping), or Reject."""
    text = oracle_text(raw, name, b";")
    jobs, ids = [], set()
    for number, line in enumerate(text.split("\n"), 1):
        tokens = [t for t in re.split(r"[ \t\r]+", line.split(";", 1)[0]) if t]
        if not tokens:
            continue
        if len(tokens) != len(SWF_FIELDS):
            raise Reject(f"line {number}: {len(tokens)} fields")
        values = [_number(token) for token in tokens]
        job_id, submit, run, alloc, req, estimate = (values[i] for i in (0, 1, 3, 4, 7, 8))
        _check_job(job_id, submit, run, (alloc, req), estimate)
        if job_id in ids:
            raise Reject(f"duplicate id {job_id}")
        ids.add(job_id)
        procs = alloc if alloc > 0 else req
        if run > 0 and procs > 0 and submit >= 0:
            jobs.append(
                {
                    "id": int(job_id),
                    "submit": submit,
                    "run": run,
                    "cores": procs,
                    "estimate": estimate if estimate > 0 else run,
                }
            )
    if not jobs:
        raise Reject("no jobs left")
    return jobs


CSV_REQUIRED = ("job_id", "submit_time", "run_time", "cores")


def oracle_csv(raw: bytes, name: str) -> list[dict]:
    """The jobs a correct CSV workload reader keeps (before capping), or Reject."""
    text = oracle_text(raw, name)
    try:
        rows = list(csv.reader(io.StringIO(text, newline="")))
    except csv.Error as error:
        raise Reject(f"csv: {error}") from None
    rows = [[cell.strip() for cell in row] for row in rows if row]
    if not rows:
        raise Reject("empty")
    header = rows[0]
    if len(set(header)) != len(header) or any(c not in header for c in CSV_REQUIRED):
        raise Reject("header")
    jobs, ids = [], set()
    for row in rows[1:]:
        if all(not cell for cell in row):
            continue
        if len(row) != len(header):
            raise Reject("cells")
        cell = dict(zip(header, row))
        job_id, submit, run, cores = (_number(cell[c]) for c in CSV_REQUIRED)
        estimate = _number(cell["estimate"]) if cell.get("estimate", "") != "" else -1.0
        _check_job(job_id, submit, run, (cores,), estimate)
        if job_id in ids:
            raise Reject("duplicate id")
        ids.add(job_id)
        if run > 0 and cores > 0 and submit >= 0:
            jobs.append(
                {
                    "id": int(job_id),
                    "submit": submit,
                    "run": run,
                    "cores": cores,
                    "estimate": estimate if estimate > 0 else run,
                }
            )
    if not jobs:
        raise Reject("no jobs left")
    return jobs


def check_simulation(
    folder: Path, out: Path, path: Path, raw: bytes, oracle, *, line=None, field=None, value=None
) -> None:
    code, _, err = run_cli(
        [
            "simulate",
            "--workload",
            str(path),
            "--platform",
            "kth-sp2",
            "--scheduler",
            "easy",
            "--quiet",
            "--no-plots",
            "--out",
            str(out),
        ]
    )
    try:
        expected = oracle(raw, path.name)
    except Reject as reason:
        note(f"oracle: reject ({reason})")
        expected = None
    if expected is None:
        assert code == 2, f"exit {code} for an invalid input; stderr {err!r}"
    if code == 2:
        named_field = field if value and not re.search(r"[\s,;\"]", value) else None
        assert_failure_names(code, err, "simulate", path, line=line, field=named_field)
        assert_nothing_left(folder, {path.name})
        assert expected is None, f"valid input refused: {err.strip()}"
        return
    assert code == 0, f"exit {code}, stderr {err!r}"
    summary = strict_json((out / "summary.json").read_text())
    import pandas as pd

    jobs = pd.read_csv(out / "jobs.csv")
    assert summary["jobs"] == len(jobs) == len(expected)
    by_id = {job["id"]: job for job in expected}
    assert set(jobs["job_id"]) == set(by_id), "jobs silently dropped, added or renumbered"
    for row in jobs.itertuples():
        job = by_id[row.job_id]
        assert row.submit_time == job["submit"]
        assert row.cores == min(job["cores"], SWF_PLATFORM_CORES)
        assert row.start_time >= row.submit_time
        assert abs((row.end_time - row.start_time) - job["run"]) <= 1e-5 + 1e-9 * job["run"], (
            f"job {row.job_id} ran {row.end_time - row.start_time} s, not {job['run']} s"
        )
        assert row.estimate == max(job["estimate"], job["run"])


# --- SWF and CSV workloads ------------------------------------------------------------------------


def _swf_case(factory, raw: bytes, gzipped: bool, **located):
    with workspace(factory) as folder:
        path = folder / ("trace.swf.gz" if gzipped else "trace.swf")
        path.write_bytes(raw)
        check_simulation(folder, folder / "out", path, raw, oracle_swf, **located)


def _csv_case(factory, raw: bytes, gzipped: bool, **located):
    with workspace(factory) as folder:
        path = folder / ("jobs.csv.gz" if gzipped else "jobs.csv")
        path.write_bytes(raw)
        check_simulation(folder, folder / "out", path, raw, oracle_csv, **located)


swf_bytes = st.sampled_from(SWF_BASES).flatmap(lambda text: byte_mutations(text, b";"))
swf_fields = st.sampled_from(SWF_BASES).flatmap(
    lambda text: field_replacements(text, None, SWF_FIELDS, 1)
)
csv_bytes = st.sampled_from(CSV_BASES).flatmap(lambda text: byte_mutations(text))
csv_names = ("job_id", "submit_time", "run_time", "cores", "estimate", "app")
csv_fields = st.sampled_from(CSV_BASES).flatmap(
    lambda text: field_replacements(text, ",", csv_names, 2)
)


def _swf_bytes(factory, case):
    raw, gzipped, steps = case
    note(steps)
    _swf_case(factory, raw, gzipped)


def _swf_field(factory, case):
    raw, line, field, value = case
    note(f"line {line} field {field} = {value!r}")
    _swf_case(factory, raw, False, line=line, field=field, value=value)


def _csv_bytes(factory, case):
    raw, gzipped, steps = case
    note(steps)
    _csv_case(factory, raw, gzipped)


def _csv_field(factory, case):
    raw, line, field, value = case
    note(f"line {line} field {field} = {value!r}")
    _csv_case(factory, raw, False, line=line, field=field, value=value)


def test_swf_byte_mutations(tmp_path_factory, campaign):
    campaign(given(case=swf_bytes)(lambda case: _swf_bytes(tmp_path_factory, case)))()


def test_swf_field_replacements(tmp_path_factory, campaign):
    campaign(given(case=swf_fields)(lambda case: _swf_field(tmp_path_factory, case)))()


def test_csv_workload_byte_mutations(tmp_path_factory, campaign):
    campaign(given(case=csv_bytes)(lambda case: _csv_bytes(tmp_path_factory, case)))()


def test_csv_workload_field_replacements(tmp_path_factory, campaign):
    campaign(given(case=csv_fields)(lambda case: _csv_field(tmp_path_factory, case)))()


# --- heatmap CSVs ---------------------------------------------------------------------------------

HEATMAP_NUMBERS = {"procs_A", "compact_A", "procs_B", "compact_B", "co_A_B", "co_B_A"}


def _heatmap_value_is_invalid(field: str, value: str) -> bool:
    """A number cell that no heatmap may hold (non-numeric, non-finite, not positive, above a
    limit)."""
    if field not in HEATMAP_NUMBERS or not value.strip():
        return False
    try:
        number = float(value)
    except ValueError:
        return True
    if not math.isfinite(number) or number <= 0:
        return True
    if field.startswith("procs"):
        return not number.is_integer() or number > MAX_PROCS.value
    return not MIN_SECONDS.value <= number <= MAX_SECONDS.value


def _heatmap_case(
    factory, raw: bytes, gzipped: bool, *, line=None, field=None, value=None, command="heatmap"
):
    with workspace(factory) as folder:
        path = folder / ("map.csv.gz" if gzipped else "map.csv")
        path.write_bytes(raw)
        out = folder / "out.csv"
        if command == "heatmap":
            code, stdout, err = run_cli(["heatmap", str(path), "--json"])
        else:
            code, stdout, err = run_cli(
                ["generate-workload", "--heatmap", str(path), "--jobs", "6", "--out", str(out)]
            )
        must_fail = field is not None and _heatmap_value_is_invalid(field, value)
        if code == 2 or must_fail:
            named = field if must_fail and not re.search(r"[\s,\"]", value) else None
            assert_failure_names(
                code, err, command, path, line=line if must_fail else None, field=named
            )
            assert_nothing_left(folder, {path.name})
            return
        assert code == 0, f"exit {code}, stderr {err!r}"
        if command == "heatmap":
            document = strict_json(stdout)
            assert len(document["applications"]) == len(set(document["applications"])) > 0
            assert all(isinstance(p, int) and 0 < p <= MAX_PROCS.value for p in document["procs"])
            assert all(
                math.isfinite(t) and 0 < t <= MAX_SECONDS.value for t in document["compact_times"]
            )
            speedups = [v for row in document["speedups"] for v in row if v is not None]
            # >= 0: printed rounded to 6 digits
            assert all(math.isfinite(v) and v >= 0 for v in speedups)
        else:
            import pandas as pd

            jobs = pd.read_csv(out, keep_default_na=False)
            assert len(jobs) == 6 and jobs["job_id"].is_unique
            assert np.isfinite(
                jobs[["submit_time", "run_time", "cores", "estimate"]].to_numpy(float)
            ).all()
            assert (jobs["cores"] > 0).all() and (jobs["run_time"] > 0).all()


heatmap_bytes = st.sampled_from(HEATMAP_BASES).flatmap(lambda text: byte_mutations(text))
heatmap_fields = st.sampled_from(HEATMAP_BASES).flatmap(
    lambda text: field_replacements(text, ",", text.split("\n", 1)[0].split(","), 2)
)
heatmap_commands = st.sampled_from(["heatmap", "generate-workload"])


def _heatmap_bytes(factory, case, command):
    raw, gzipped, steps = case
    note(steps)
    _heatmap_case(factory, raw, gzipped, command=command)


def _heatmap_field(factory, case, command):
    raw, line, field, value = case
    note(f"line {line} field {field} = {value!r}")
    _heatmap_case(factory, raw, False, line=line, field=field, value=value, command=command)


def test_heatmap_byte_mutations(tmp_path_factory, campaign):
    campaign(
        given(case=heatmap_bytes, command=heatmap_commands)(
            lambda case, command: _heatmap_bytes(tmp_path_factory, case, command)
        )
    )()


def test_heatmap_field_replacements(tmp_path_factory, campaign):
    campaign(
        given(case=heatmap_fields, command=heatmap_commands)(
            lambda case, command: _heatmap_field(tmp_path_factory, case, command)
        )
    )()


# --- platform and application-seed JSON -----------------------------------------------------------

JSON_VALUES = [
    10**30,
    -1,
    0,
    1,
    2,
    3,
    2.5,
    4.0,
    "8",
    None,
    True,
    False,
    [],
    {},
    float("nan"),
    float("inf"),
    -float("inf"),
    1e300,
    10**7,
    10**6,
    10**6 + 1,
    65536,
    65537,
    2**63,
    "",
    "x" * 300,
    "caf\u00e9",
    "a\u0000b",
    "a\nb",
]
RAW_JSON_VALUES = [
    "1e999",
    "-1e999",
    "1" + "0" * 5000,
    "NaN",
    "Infinity",
    "01",
    "0x10",
    "1.",
    "[" * 5000 + "]" * 5000,
]


@st.composite
def json_mutations(draw, document: dict, paths: list[tuple]):
    """A JSON document with one value replaced, a key deleted, added or doubled, or its text
    byte-mutated.

    Returns (bytes, field or None): field is the dotted/indexed name of the replaced value.
    """
    kind = draw(
        st.sampled_from(["replace", "replace", "raw", "delete", "add", "duplicate", "bytes"])
    )
    doc = json.loads(json.dumps(document))
    path = draw(st.sampled_from(paths))
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    field = "".join(
        f"[{k}]" if isinstance(k, int) else (f".{k}" if i else k) for i, k in enumerate(path)
    )
    if kind == "replace":
        parent[path[-1]] = draw(
            st.one_of(st.sampled_from(JSON_VALUES), st.integers(-(10**25), 10**25), st.floats())
        )
        return json.dumps(doc).encode(), field
    if kind == "raw":
        marker = '"@@RAW@@"'
        parent[path[-1]] = "@@RAW@@"
        return json.dumps(doc).replace(
            marker, draw(st.sampled_from(RAW_JSON_VALUES)), 1
        ).encode(), field
    if kind == "delete":
        del parent[path[-1]]
        return json.dumps(doc).encode(), None
    if kind == "add":
        value = draw(st.sampled_from(JSON_VALUES[:8]))
        if isinstance(parent, list):
            parent.append(value)
        else:
            parent[draw(st.sampled_from(["extra", "nodes", "name", "procs"]))] = value
        return json.dumps(doc).encode(), None
    if kind == "duplicate":
        text = json.dumps(doc)
        key = json.dumps(path[-1]) if isinstance(path[-1], str) else None
        if key and key + ":" in text:
            text = text.replace(key + ":", f"{key}: 5, {key}:", 1)
        return text.encode(), None
    raw, _, _ = draw(byte_mutations(json.dumps(doc, indent=1)))
    return raw, None


def parses(raw: bytes) -> bool:
    """Whether `raw` is JSON at all (only then can an error name the field)."""
    try:
        json.loads(raw)
    except (ValueError, RecursionError):
        return False
    return True


def oracle_json(raw: bytes, name: str):
    """The JSON document of `raw` as the readers accept it (UTF-8 text, no duplicate keys), or
    Reject."""
    text = oracle_text(raw, name)

    def unique(pairs):
        keys = [k for k, _ in pairs]
        if len(set(keys)) != len(keys):
            raise Reject("duplicate key")
        return dict(pairs)

    try:
        return json.loads(text, object_pairs_hook=unique)
    except (ValueError, RecursionError) as error:
        raise Reject(f"json: {error}") from None


def oracle_platform(raw: bytes) -> int:
    """Total cores of a valid platform JSON, or Reject."""
    data = oracle_json(raw, "p.json")
    if not isinstance(data, dict) or set(data) - {
        "name",
        "nodes",
        "sockets_per_node",
        "cores_per_socket",
    }:
        raise Reject("shape")
    if "name" in data and not isinstance(data["name"], str):
        raise Reject("name")
    counts = {}
    for key, limit in (
        ("nodes", MAX_NODES.value),
        ("sockets_per_node", MAX_CORES_PER_NODE.value),
        ("cores_per_socket", MAX_CORES_PER_NODE.value),
    ):
        value = data.get(key, None if key == "nodes" else 1)
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not math.isfinite(value)
            or not float(value).is_integer()
            or not 1 <= value <= limit
        ):
            raise Reject(key)
        counts[key] = int(value)
    if counts["sockets_per_node"] * counts["cores_per_socket"] > MAX_CORES_PER_NODE.value:
        raise Reject("cores per node")
    return counts["nodes"] * counts["sockets_per_node"] * counts["cores_per_socket"]


PLATFORM_PATHS = [("nodes",), ("sockets_per_node",), ("cores_per_socket",), ("name",)]


def _platform(factory, case):
    raw, field = case
    note(f"{raw[:300]!r} field {field}")
    with workspace(factory) as folder:
        path = folder / "platform.json"
        path.write_bytes(raw)
        workload = folder / "jobs.csv"
        workload.write_text(csv_base())
        out = folder / "out"
        code, _, err = run_cli(
            [
                "simulate",
                "--workload",
                str(workload),
                "--platform",
                str(path),
                "--quiet",
                "--no-plots",
                "--scheduler",
                "easy",
                "--out",
                str(out),
            ]
        )
        try:
            total = oracle_platform(raw)
        except Reject as reason:
            note(f"oracle: reject ({reason})")
            total = None
        if code == 2 or total is None:
            assert_failure_names(
                code, err, "simulate", path, field=field if total is None and parses(raw) else None
            )
            assert_nothing_left(folder, {path.name, workload.name})
            assert total is None, f"valid platform refused: {err.strip()}"
            return
        assert code == 0, f"exit {code}, stderr {err!r}"
        import pandas as pd

        jobs = pd.read_csv(out / "jobs.csv")
        assert strict_json((out / "summary.json").read_text())["jobs"] == len(jobs) == 10
        assert (jobs["cores"] <= total).all()


platform_cases = json_mutations(platform_base(), PLATFORM_PATHS)


def test_platform_json_mutations(tmp_path_factory, campaign):
    campaign(given(case=platform_cases)(lambda case: _platform(tmp_path_factory, case)))()


def oracle_seed(raw: bytes) -> dict:
    """name -> (procs, compact time) of a valid application seed, or Reject."""
    data = oracle_json(raw, "seed.json")
    apps = data.get("applications") if isinstance(data, dict) else None
    if not isinstance(apps, list) or not apps:
        raise Reject("applications")
    seed = {}
    for app in apps:
        if not isinstance(app, dict) or not {"name", "procs", "compact_time"} <= set(app):
            raise Reject("application")
        name, procs, time = app["name"], app["procs"], app["compact_time"]
        if (
            not isinstance(name, str)
            or not name
            or any(ord(c) < 32 or ord(c) == 127 for c in name)
            or name in seed
        ):
            raise Reject("name")
        for value in (procs, time):
            if (
                isinstance(value, bool)
                or not isinstance(value, (int, float))
                or not math.isfinite(value)
                or value <= 0
            ):
                raise Reject("number")
        if (
            not float(procs).is_integer()
            or procs > MAX_PROCS.value
            or not MIN_SECONDS.value <= time <= MAX_SECONDS.value
        ):
            raise Reject("range")
        seed[name] = (int(procs), float(time))
    return seed


SEED_PATHS = [
    ("applications",),
    ("applications", 0),
    ("applications", 1, "name"),
    ("applications", 0, "procs"),
    ("applications", 2, "compact_time"),
    ("applications", 1, "procs"),
]


def _seed(factory, case, jobs: int = 7):
    raw, field = case
    note(f"{raw[:300]!r} field {field}")
    with workspace(factory) as folder:
        path = folder / "seed.json"
        path.write_bytes(raw)
        out = folder / "jobs.csv"
        code, _, err = run_cli(
            ["generate-workload", "--app-seed", str(path), "--jobs", str(jobs), "--out", str(out)]
        )
        try:
            seed = oracle_seed(raw)
        except Reject as reason:
            note(f"oracle: reject ({reason})")
            seed = None
        if code == 2 or seed is None:
            assert_failure_names(code, err, "generate-workload", path)
            assert_nothing_left(folder, {path.name})
            assert seed is None, f"valid seed refused: {err.strip()}"
            return
        assert code == 0, f"exit {code}, stderr {err!r}"
        import pandas as pd

        frame = pd.read_csv(out, keep_default_na=False, dtype={"app": str})
        assert len(frame) == jobs and frame["job_id"].is_unique
        for row in frame.itertuples():
            assert (row.cores, row.run_time) == seed[row.app]


seed_cases = json_mutations(seed_base(), SEED_PATHS)


def test_application_seed_mutations(tmp_path_factory, campaign):
    campaign(given(case=seed_cases)(lambda case: _seed(tmp_path_factory, case)))()


# --- generate-workload size and distribution options ----------------------------------------------

ODD_FLOATS = [
    "nan",
    "inf",
    "-inf",
    "-1",
    "0",
    "1e-300",
    "1e300",
    "1e12",
    "60",
    "0.5",
    "1e-5",
    "1e5",
]


@st.composite
def generator_options(draw):
    options = [
        f"--jobs={draw(st.sampled_from([-1, 0, 1, 5, 40, MAX_JOBS.value + 1, 10**9, 10**12]))}"
    ]
    options += [
        "--interarrival",
        draw(st.sampled_from(["batch", "constant", "uniform", "poisson", "weibull"])),
    ]
    for flag in ("--mean-interarrival", "--low", "--high", "--shape"):
        if draw(st.booleans()):
            # `=`: argparse takes "-inf" as a value
            options.append(f"{flag}={draw(st.sampled_from(ODD_FLOATS))}")
    selection = draw(st.sampled_from(["uniform", "frequencies", "list"]))
    options += ["--selection", selection]
    if selection == "frequencies" or draw(st.booleans()):
        options.append(
            "--frequencies="
            + ",".join(
                draw(
                    st.lists(
                        st.sampled_from(["1", "0", "-1", "nan", "inf", "2.5", "1e308", "x"]),
                        min_size=1,
                        max_size=4,
                    )
                )
            )
        )
    if selection == "list" or draw(st.booleans()):
        options.append(
            "--apps="
            + ",".join(draw(st.lists(st.sampled_from(["cg", "ft", "lu", "zz"]), max_size=5)))
        )
    if draw(st.booleans()):
        options.append(f"--seed={draw(st.sampled_from([-1, 0, 7, 2**64]))}")
    return options


def _generator(factory, options):
    note(" ".join(options))
    with workspace(factory) as folder:
        seed = folder / "seed.json"
        seed.write_text(json.dumps(seed_base()))
        out = folder / "jobs.csv"
        code, _, err = run_cli(
            ["generate-workload", "--app-seed", str(seed), "--out", str(out), *options]
        )
        if code != 0:
            assert code == 2, f"exit {code}, stderr {err!r}"
            lines = err.splitlines()
            assert len(lines) == 1 and lines[0].startswith("cosched generate-workload: error: "), (
                lines
            )
            assert_nothing_left(folder, {seed.name})
            return
        import pandas as pd

        frame = pd.read_csv(out, keep_default_na=False)
        jobs = int(options[0].split("=")[1])
        assert len(frame) == jobs or "list" in options
        submit = frame["submit_time"].to_numpy(float)
        assert (
            np.isfinite(submit).all()
            and (submit >= 0).all()
            and (submit <= MAX_SECONDS.value).all()
        )
        assert (np.diff(submit) >= 0).all()
        seed_apps = {n: (p, t) for n, p, t in HEATMAP_APPS}
        for row in frame.itertuples():
            assert (row.cores, row.run_time) == seed_apps[row.app]
        assert len(load_workload(out)) == len(frame)  # the output reads back


def test_generate_workload_options(tmp_path_factory, campaign):
    campaign(
        given(options=generator_options())(lambda options: _generator(tmp_path_factory, options))
    )()
