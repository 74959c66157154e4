"""jobs.csv without pandas: the bytes `SimulationResult.jobs_frame().to_csv(index=False)` writes.

`cosched simulate --out` writes 54,034 rows of SDSC-SP2 in about two hundredths of a second, with
no Python work per row: every column becomes a matrix of bytes (one row per job, the cell's text
after zero bytes), the digits of a whole column computed by numpy four at a time from a table; the
node ids, the one column of varying width, are laid out flat between the columns before and after
them; deleting the zero bytes leaves the file's text. Runs whose columns pandas would quote or type
differently (lifecycle columns, app names with commas, quotes or zero bytes, node ids that are no
integers) return None: the caller writes them through pandas. tests/simulator/test_jobs_csv.py
compares the two byte for byte.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from cosched.simulator.result import JobNodes

__all__ = ["jobs_csv_text", "integer_cells", "node_cells", "whole_numbers"]

# below it, repr() writes a whole float as its integer and ".0"; at or above it, in exponent form
WHOLE_FLOAT_LIMIT = 1e16
QUOTED = (",", '"', "\n", "\r")  # characters that make pandas quote a cell
ZERO = ord("0")
DIGITS_PER_STEP = 4  # digits looked up at a time (a table of 10**4 rows)
STEP = 10**DIGITS_PER_STEP


def whole_numbers(values: np.ndarray) -> np.ndarray | None:
    """The float64 array as int64 when `repr` writes every value as its integer and ".0" (and
    pandas' to_csv too), else None. -0.0 is no whole number here: it prints as "-0.0"."""
    whole = (np.abs(values) < WHOLE_FLOAT_LIMIT) & (values == np.trunc(values))
    whole &= ~((values == 0) & np.signbit(values))
    return values.astype(np.int64) if whole.all() else None


@cache
def _digit_words() -> np.ndarray:
    """The ASCII digits of 0 ... STEP - 1, each number's DIGITS_PER_STEP bytes as one uint32 word
    (3 STEP words): words [STEP, 2 STEP) zero-padded ("0042", the inner steps of a number), words
    [0, STEP) with zero bytes for the leading zeros (a number's first step: 0 is no digit at all),
    words [2 STEP, 3 STEP) the same but 0 as "0" (a number with a single step)."""
    numbers = np.arange(STEP)[:, None]
    places = 10 ** np.arange(DIGITS_PER_STEP - 1, -1, -1)
    padded = (numbers // places % 10 + ZERO).astype(np.uint8)
    leading = np.where(numbers >= places, padded, 0).astype(np.uint8)
    alone = leading.copy()
    alone[0, -1] = ZERO
    return np.concatenate([leading, padded, alone]).view(np.uint32).ravel()


def integer_cells(values: np.ndarray) -> np.ndarray:
    """(len(values), width) bytes: each int64's decimal text ("-" and digits) after zero bytes."""
    magnitude = np.abs(values).astype(np.uint64)  # abs(-2**63) wraps to 2**63, right as uint64
    largest = int(magnitude.max()) if magnitude.size else 0
    places = len(str(largest))
    steps = -(-places // DIGITS_PER_STEP)
    words = np.empty((len(values), steps), np.uint32)  # a number's steps, most significant first
    rest = magnitude.astype(np.uint32) if largest < 2**32 else magnitude  # faster division
    table = _digit_words()
    for step in range(steps):
        quotient = rest // STEP
        word = (rest - quotient * STEP).astype(np.intp)
        word += np.where(quotient > 0, STEP, 2 * STEP if step == 0 else 0)
        words[:, steps - 1 - step] = table.take(word)
        rest = quotient
    cells = words.view(np.uint8)[:, steps * DIGITS_PER_STEP - places :]  # no column of zeros only
    if not (values < 0).any():
        return cells
    signs = (values < 0).astype(np.uint8) * np.uint8(ord("-"))  # the zero bytes up to the digits go
    return np.hstack([signs[:, None], cells])


def node_cells(flat: np.ndarray, counts: np.ndarray) -> np.ndarray | None:
    """Each job's node ids (`counts[j]` of `flat` for job j) as `";".join(map(str, ids))` with zero
    bytes among them: a (len(flat), width) byte matrix, one row per id ("id;", the last id of each
    job without its ";"); None unless the ids are non-negative integers."""
    if flat.dtype.kind not in "iu" or (flat.size and flat.min() < 0):
        return None
    top = int(flat.max()) if flat.size else 0
    by_id = top < flat.size  # the text of each id 0 ... top, looked up: fewer ids to format
    cells = integer_cells(np.arange(top + 1) if by_id else flat.astype(np.int64))
    chars = np.hstack([cells, np.full((len(cells), 1), ord(";"), np.uint8)])
    if by_id:
        chars = chars[flat]
    chars[np.cumsum(counts)[counts > 0] - 1, -1] = 0  # each job's last id ends its cell
    return chars


def _text_cells(texts: list) -> np.ndarray | None:
    """(len(texts), width) bytes of each text (UTF-8, then zero bytes); None if pandas would quote
    one or one is no text or holds a zero byte."""
    distinct = set(texts)
    if not all(isinstance(value, str) for value in distinct) or any(
        character in value for value in distinct for character in (*QUOTED, "\0")
    ):
        return None
    encoded = {value: value.encode() for value in distinct}
    data = np.array([encoded[value] for value in texts], dtype=bytes)
    return data.view(np.uint8).reshape(len(texts), data.dtype.itemsize)


def _column_cells(column) -> np.ndarray | None:
    """(rows, width) bytes of a column's cells as pandas writes them, or None (no rule here)."""
    kind = column.dtype.kind if isinstance(column, np.ndarray) else "list"
    if kind in "iu":
        return (
            integer_cells(column.astype(np.int64)) if np.can_cast(column.dtype, np.int64) else None
        )
    if kind == "f":
        whole = whole_numbers(column)
        if whole is not None:
            cells = integer_cells(whole)
            return np.hstack(
                [cells, np.broadcast_to(np.frombuffer(b".0", np.uint8), (len(cells), 2))]
            )
        return _text_cells(["" if x != x else repr(x) for x in column.tolist()])  # NaN: empty
    if kind in ("list", "U", "O"):
        return _text_cells(column.tolist() if isinstance(column, np.ndarray) else column)
    return None


def _row_part(columns: list, rows: int, last: bool) -> np.ndarray | None:
    """The cells of `columns` side by side, each followed by "," (the row's last by a newline when
    `last`): a (rows, width) byte matrix, or None (a column needs pandas)."""
    blocks = []
    for number, column in enumerate(columns):
        cells = _column_cells(column)
        if cells is None:
            return None
        end = "\n" if last and number == len(columns) - 1 else ","
        blocks += [cells, np.full((rows, 1), ord(end), np.uint8)]
    return np.hstack(blocks) if blocks else np.zeros((rows, 0), np.uint8)


def _joined(before: np.ndarray, nodes: np.ndarray, counts: np.ndarray, after: np.ndarray) -> str:
    """The rows' text: each job's bytes of `before`, its `counts[j]` rows of `nodes`, its bytes of
    `after` (the zero bytes deleted). One mask marks the fixed bytes of the whole file; the fixed
    and the node bytes each fill their places in one numpy call."""
    rows = len(counts)
    lengths = np.empty((rows, 3), np.int64)
    lengths[:, 0], lengths[:, 1], lengths[:, 2] = (
        before.shape[1],
        counts * nodes.shape[1],
        after.shape[1],
    )
    fixed = np.repeat(np.tile(np.array([True, False, True]), rows), lengths.ravel())
    text = np.empty(fixed.size, np.uint8)
    text[fixed] = np.hstack([before, after]).ravel()
    text[~fixed] = nodes.ravel()
    return text.tobytes().translate(None, b"\0").decode()


def jobs_csv_text(result) -> str | None:
    """jobs.csv of a run as `result.jobs_frame().to_csv(index=False)` writes it, built with numpy
    alone; None where a column would need pandas' quoting or types (lifecycle columns, app names
    with commas or quotes, node ids that are no integers)."""
    if getattr(result, "lifecycle", None) is not None:
        return None
    w = result.workload
    job_nodes = JobNodes.of(result.nodes)
    end_minus_start = result.end - result.start
    before = {
        "job_id": w.job_id,
        "submit_time": w.submit,
        "start_time": result.start,
        "end_time": result.end,
        "wait_time": result.start - w.submit,
        "run_time": end_minus_start,
        "estimate": w.estimate,
        "cores": w.cores,
        "node_count": job_nodes.counts,
    }
    after = {}
    if w.app is not None:
        after["app"] = w.app
    if w.memory is not None:
        after["memory_per_core"] = w.memory
    if w.gpus is not None:
        after["gpus"] = w.gpus
    if result.co_scheduled:
        with np.errstate(divide="ignore", invalid="ignore"):
            after["compact_time"], after["speedup"] = w.run, w.run / end_minus_start
    header = ",".join([*before, "nodes", *after]) + "\n"
    rows = len(job_nodes)
    if not rows:
        return header
    nodes = node_cells(job_nodes.flat, job_nodes.counts)
    first = _row_part(list(before.values()), rows, last=False)
    rest = _row_part(list(after.values()), rows, last=True)
    if nodes is None or first is None or rest is None:
        return None
    if not after:  # the nodes end the row
        rest = np.full((rows, 1), ord("\n"), np.uint8)
    else:
        rest = np.hstack([np.full((rows, 1), ord(","), np.uint8), rest])
    return header + _joined(first, nodes, job_nodes.counts, rest)
