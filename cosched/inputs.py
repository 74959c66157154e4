"""The one policy for reading input files and checking the numbers in them.

Every reader of a text input (SWF and CSV workloads, heatmap CSVs, platform and application-seed
JSON) gets its text from `read_text` (JSON: `parse_json`) and checks its numeric fields with
`check_number` (one value) or `check_columns` (the columns of a table, errors naming the row's
line); ids are `check_unique`. All raise `InputError` naming the file, the line and the field, so
the CLI prints one line and exits 2 instead of a traceback or a silently wrong result.

Text: plain or gzip-compressed (by content: the gzip magic bytes; a ``.gz`` name that is not gzip is
an error, as is a truncated or corrupt gzip stream). UTF-8 only, a UTF-8 byte-order mark is dropped;
UTF-16/UTF-32 (by byte-order mark) and binary data (a NUL byte) are errors, as is an undecodable
byte outside comments, named by line and column. Comments (from ``comment`` to the end of the line,
e.g. ``;`` in SWF) are ignored whatever their bytes. Files above `MAX_INPUT_BYTES` (after
decompression) are refused before they exhaust memory.

Numbers: finite (no NaN or infinity), whole where an id or a count is expected, within a range, and
below a named size limit (`Limit`) where a larger value would exhaust memory or lose precision; the
limit's name and value appear in the error message.
"""

from __future__ import annotations

import gzip
import json
import math
import os
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from cosched.errors import InputError

__all__ = [
    "Limit",
    "MAX_INPUT_BYTES",
    "MAX_SECONDS",
    "MIN_SECONDS",
    "MAX_PROCS",
    "MAX_NODES",
    "MAX_CORES_PER_NODE",
    "MAX_JOBS",
    "MAX_RUNS",
    "MAX_ID",
    "read_text",
    "decode_text",
    "parse_json",
    "parse_json_object",
    "check_number",
    "check_columns",
    "check_unique",
    "invalid",
    "parse_numbers",
    "shown",
]


@dataclass(frozen=True)
class Limit:
    """A named upper bound; its name and value appear in every error it causes."""

    name: str
    value: int | float
    what: str

    def __str__(self) -> str:
        whole = float(self.value).is_integer() and abs(self.value) < 1e15
        value = f"{int(self.value):,}" if whole else f"{self.value:g}"
        return f"{self.name}={value} ({self.what})"


MAX_INPUT_BYTES = Limit("MAX_INPUT_BYTES", 1 << 30, "bytes of one input file after decompression")
# 1e10 s is ~317 years: any real time (also Unix time stamps) fits, and submit + run time stay exact
# to 2e-6 s
MAX_SECONDS = Limit("MAX_SECONDS", 1e10, "seconds in any time field")
# the shortest positive duration: shorter ones vanish next to time stamps up to MAX_SECONDS (end ==
# start)
MIN_SECONDS = Limit("MIN_SECONDS", 1e-3, "shortest positive duration in seconds")
MAX_PROCS = Limit("MAX_PROCS", 10_000_000, "processes of one job or application")
MAX_NODES = Limit(
    "MAX_NODES", 1_000_000, "nodes of a platform; the simulator keeps per-node arrays"
)
MAX_CORES_PER_NODE = Limit("MAX_CORES_PER_NODE", 65_536, "cores of one node")
MAX_JOBS = Limit("MAX_JOBS", 10_000_000, "jobs of a generated workload")
MAX_RUNS = Limit(
    "MAX_RUNS", 1_000_000, "simulation runs of one experiment grid: experiments x schedulers"
)
MAX_ID = Limit("MAX_ID", 2**53, "job ids, exact in float64")

_GZIP_MAGIC = b"\x1f\x8b"
_BOMS = (  # UTF-32 first: its little-endian mark starts with the UTF-16 one
    (b"\xff\xfe\x00\x00", "UTF-32"),
    (b"\x00\x00\xfe\xff", "UTF-32"),
    (b"\xff\xfe", "UTF-16"),
    (b"\xfe\xff", "UTF-16"),
)
_CHUNK = 1 << 20


def shown(value, width: int = 40) -> str:
    """`repr` of a value for an error message, cut to `width` characters (errors stay one short
    line)."""
    text = repr(value)
    return text if len(text) <= width else text[: width - 3] + "..."


# --- text -----------------------------------------------------------------------------------------


def read_text(path: str | os.PathLike, *, comment: str | None = None) -> str:
    """The UTF-8 text of a plain or gzip-compressed file, under the policy of this module.

    comment: a character that starts a comment running to the end of the line (``;`` for SWF);
    comment bytes are never decoded strictly (undecodable ones become U+FFFD).
    """
    source = os.fspath(path)
    path = Path(path)
    try:
        if path.is_dir():
            raise InputError("cannot read: it is a folder, not a file", source=source)
        with open(path, "rb") as handle:
            head = handle.read(2)
            handle.seek(0)
            if head == _GZIP_MAGIC:
                raw = _gunzip(handle, source)
            elif path.name.lower().endswith(".gz"):
                raise InputError("named .gz but not gzip-compressed", source=source)
            else:
                raw = handle.read(int(MAX_INPUT_BYTES.value) + 1)
    except FileNotFoundError:
        raise InputError("no such file", source=source) from None
    except OSError as error:
        raise InputError(f"cannot read: {error.strerror or error}", source=source) from None
    if len(raw) > MAX_INPUT_BYTES.value:
        raise InputError(f"larger than the limit {MAX_INPUT_BYTES}", source=source)
    return decode_text(raw, source, comment=comment)


def _gunzip(handle, source: str) -> bytes:
    """Decompress a gzip stream, refusing truncated or corrupt data and output above
    MAX_INPUT_BYTES."""
    chunks, size = [], 0
    try:
        with gzip.GzipFile(fileobj=handle, mode="rb") as stream:
            while size <= MAX_INPUT_BYTES.value:
                chunk = stream.read(_CHUNK)
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
    except EOFError:
        raise InputError(
            "truncated gzip file (the compressed stream ends early)", source=source
        ) from None
    except (gzip.BadGzipFile, zlib.error) as error:
        raise InputError(f"corrupt gzip file ({error})", source=source) from None
    if size > MAX_INPUT_BYTES.value:
        raise InputError(
            f"larger than the limit {MAX_INPUT_BYTES} once decompressed", source=source
        )
    return b"".join(chunks)


def decode_text(raw: bytes, source: str, *, comment: str | None = None) -> str:
    """`raw` decoded under the policy of this module (see `read_text`); `source` names the file in
    errors."""
    for bom, encoding in _BOMS:
        if raw.startswith(bom):
            raise InputError(
                f"{encoding} text (byte-order mark); save the file as UTF-8", source=source, line=1
            )
    if raw.startswith(b"\xef\xbb\xbf"):  # spreadsheets write a UTF-8 byte-order mark
        raw = raw[3:]
    if b"\x00" not in raw:
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            pass
    lines = [
        line.partition(comment.encode()) if comment else (line, b"", b"")
        for line in raw.split(b"\n")
    ]
    # a NUL outside comments: binary, whatever else is wrong
    for number, (data, _, _) in enumerate(lines, 1):
        nul = data.find(b"\x00")
        if nul >= 0:
            raise InputError(
                f"binary data: a NUL byte at column {nul + 1} (a binary or UTF-16 file? save it as "
                f"UTF-8 text)",
                source=source,
                line=number,
            )
    return "\n".join(_decode_line(parts, number, source) for number, parts in enumerate(lines, 1))


def _decode_line(parts: tuple[bytes, bytes, bytes], number: int, source: str) -> str:
    data, mark, rest = parts
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InputError(
            f"byte 0x{data[error.start]:02x} at column {error.start + 1} is not UTF-8; "
            "save the file "
            f"as UTF-8",
            source=source,
            line=number,
        ) from None
    return text + mark.decode() + rest.replace(b"\x00", b" ").decode("utf-8", "replace")


def parse_json(path: str | os.PathLike):
    """The JSON document of a file (text under this module's policy);
    duplicate keys are an error.
    """
    source = os.fspath(path)
    text = read_text(path)

    def unique(pairs):
        keys = [key for key, _ in pairs]
        for key in keys:
            if keys.count(key) > 1:
                raise InputError("key given twice", source=source, field=key)
        return dict(pairs)

    # a very long integer: a float (inf past 308 digits), so limits name the field
    def integer(
        digits: str,
    ):
        return int(digits) if len(digits) <= 1000 else float(digits)

    try:
        return json.loads(text, object_pairs_hook=unique, parse_int=integer)
    except json.JSONDecodeError as error:
        raise InputError(
            f"not valid JSON: {error.msg} (column {error.colno})", source=source, line=error.lineno
        ) from None
    except RecursionError:
        raise InputError("not valid JSON: nested too deeply", source=source) from None
    except ValueError as error:  # InputError from `unique`, or an integer too long to convert
        if isinstance(error, InputError):
            raise
        raise InputError(f"not valid JSON: {str(error).splitlines()[0]}", source=source) from None


# --- numbers --------------------------------------------------------------------------------------


def parse_json_object(path: str | os.PathLike, *, missing: str = "no such file") -> dict:
    """The JSON object of a file (`parse_json`); `missing` is the error for a file that does not
    exist, and a document that is not an object is an error too."""
    source = os.fspath(path)
    if not Path(path).exists():
        raise InputError(missing, source=source)
    data = parse_json(path)
    if not isinstance(data, dict):
        raise InputError("expected a JSON object", source=source)
    return data


def _bounds_text(minimum, maximum, exclusive: bool) -> str:
    low = (
        "" if minimum is None else (f"above {minimum:g}" if exclusive else f"at least {minimum:g}")
    )
    high = "" if maximum is None else f"at most {maximum:g}"
    return " and ".join(part for part in (low, high) if part)


def _problem(
    value: float,
    *,
    integer: bool,
    minimum,
    maximum,
    limit: Limit | None,
    exclusive: bool,
    shortest: Limit | None = None,
) -> str | None:
    """Why `value` (a float) breaks the rules, or None."""
    if math.isnan(value) or math.isinf(value):
        return f"must be a finite number, got {value}"
    if shortest is not None and 0 < value < shortest.value:
        return f"got {value:g}, below the limit {shortest} (0 or less: the record is dropped)"
    if integer and not value.is_integer():
        return f"must be a whole number, got {value:g}"
    if minimum is not None and (value <= minimum if exclusive else value < minimum):
        return f"must be {_bounds_text(minimum, None, exclusive)}, got {value:g}"
    if limit is not None and value > limit.value:
        return f"got {value:g}, above the limit {limit}"
    if maximum is not None and value > maximum:
        return f"must be {_bounds_text(None, maximum, exclusive)}, got {value:g}"
    return None


def check_number(
    value,
    *,
    source: str | None = None,
    field: str | None = None,
    line: int | None = None,
    integer: bool = False,
    minimum: float | None = None,
    maximum: float | None = None,
    limit: Limit | None = None,
    exclusive_minimum: bool = False,
    text: bool = True,
):
    """`value` as int (integer=True) or float, else InputError naming source, line and field.

    Accepts numbers and, with `text` (CSV cells, command-line values; not JSON), numeric strings;
    never booleans. `minimum` is inclusive unless `exclusive_minimum`; `limit` is a named size limit
    (checked like `maximum`, its name in the message).
    """
    if (
        isinstance(value, (bool, np.bool_))
        or value is None
        or (isinstance(value, str) and not text)
    ):
        raise InputError(
            f"must be a number, got {shown(value)}", source=source, field=field, line=line
        )
    if isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            raise InputError(
                f"not a number: {shown(value)}", source=source, field=field, line=line
            ) from None
    elif isinstance(value, (int, np.integer)):
        if abs(int(value)) >= 2**63:
            digits = len(str(abs(int(value))))
            if value < 0 and minimum is not None:
                reason = f"must be {_bounds_text(minimum, None, exclusive_minimum)}"
            else:
                reason = (
                    f"above the limit {limit}"
                    if limit is not None
                    else "too large for a 64-bit integer"
                )
            raise InputError(
                f"got a {digits}-digit integer, {reason}", source=source, field=field, line=line
            )
        number = float(value)
    elif isinstance(value, (float, np.floating)):
        number = float(value)
    else:
        raise InputError(
            f"must be a number, got {shown(value)}", source=source, field=field, line=line
        )
    problem = _problem(
        number,
        integer=integer,
        minimum=minimum,
        maximum=maximum,
        limit=limit,
        exclusive=exclusive_minimum,
    )
    if problem:
        raise InputError(problem, source=source, field=field, line=line)
    if integer:
        return int(value) if isinstance(value, (int, np.integer)) else int(number)
    return number


def invalid(
    values: np.ndarray,
    *,
    integer: bool = False,
    minimum: float | None = None,
    maximum: float | None = None,
    limit: Limit | None = None,
    exclusive_minimum: bool = False,
    shortest: Limit | None = None,
) -> np.ndarray:
    """Mask of the entries of a float64 array that break the rules of `check_number`."""
    bad = ~np.isfinite(values)
    if shortest is not None:
        bad |= (values > 0) & (values < shortest.value)
    if integer:
        bad |= values != np.round(values)
    if minimum is not None:
        bad |= (values <= minimum) if exclusive_minimum else (values < minimum)
    for high in (maximum, None if limit is None else limit.value):
        if high is not None:
            bad |= values > high
    return bad


def parse_numbers(cells) -> tuple[np.ndarray, np.ndarray]:
    """Floats of text cells (Python `float` syntax, surrounding blanks ignored) and the mask of
    unparsable ones (NaN in the floats)."""
    values = np.empty(len(cells), dtype=np.float64)
    unparsable = np.zeros(len(cells), dtype=bool)
    for i, cell in enumerate(cells):
        try:
            values[i] = float(cell)
        except ValueError:
            values[i], unparsable[i] = math.nan, True
    return values, unparsable


def check_columns(columns, *, source: str | None = None, lines=None) -> None:
    """Check the columns of one table; the first bad row in file order raises, naming its line and
    column.

    columns: (field, float64 values, rules) or (field, values, rules, cells): rules are the keyword
    arguments of `check_number`; cells, the original text, turns unparsable entries into "not a
    number: 'text'". lines: the line of each row (a sequence, or a callable row -> line, used on the
    error path only).
    """
    first, culprit = None, None
    for column in columns:
        field, values, rules = column[:3]
        bad = np.flatnonzero(invalid(np.asarray(values, dtype=np.float64), **rules))
        if bad.size and (first is None or bad[0] < first):
            first, culprit = int(bad[0]), column
    if culprit is None:
        return
    field, values, rules = culprit[:3]
    line = None if lines is None else int(lines(first) if callable(lines) else lines[first])
    cells = culprit[3] if len(culprit) > 3 else None
    if cells is not None and math.isnan(values[first]):
        try:
            float(cells[first])
        except ValueError:
            raise InputError(
                f"not a number: {shown(cells[first])}", source=source, field=field, line=line
            ) from None
    value = float(values[first])
    problem = _problem(
        value,
        integer=rules.get("integer", False),
        minimum=rules.get("minimum"),
        maximum=rules.get("maximum"),
        limit=rules.get("limit"),
        exclusive=rules.get("exclusive_minimum", False),
        shortest=rules.get("shortest"),
    )
    raise InputError(problem or "invalid value", source=source, field=field, line=line)


def check_unique(
    ids, *, source: str | None = None, field: str | None = None, lines=None, what: str = "id"
) -> None:
    """Every value of `ids` once; else InputError naming the line of the repeat and of the first
    occurrence."""
    ids = np.asarray(ids)
    if ids.size < 2:
        return
    order = np.argsort(ids, kind="stable")
    repeat = np.flatnonzero(ids[order][1:] == ids[order][:-1])
    if not repeat.size:
        return
    first_rows = order[repeat]  # earlier occurrence (stable sort keeps file order)
    second_rows = order[repeat + 1]
    k = int(np.argmin(second_rows))  # the repeat that comes first in the file
    first, second = int(first_rows[k]), int(second_rows[k])
    line_of = (
        (lambda row: None)
        if lines is None
        else (lines if callable(lines) else (lambda row: lines[row]))
    )
    first_line, second_line = line_of(first), line_of(second)
    value = ids[second]
    value = int(value) if float(value).is_integer() else value
    where = f" (first on line {int(first_line)})" if first_line is not None else ""
    raise InputError(
        f"{what} {value} given twice{where}",
        source=source,
        field=field,
        line=None if second_line is None else int(second_line),
    )
