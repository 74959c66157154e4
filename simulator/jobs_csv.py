"""jobs.csv without pandas: the bytes `SimulationResult.jobs_frame().to_csv(index=False)` writes.

`cosched simulate --out` writes 54,034 rows of SDSC-SP2 in a few hundredths of a second: the
numbers' digits are computed by numpy for whole columns at once, and Python only joins each row's
two or three pieces. Runs whose columns pandas would quote or type differently (lifecycle columns,
app names with commas or quotes, node ids that are no integers) return None: the caller writes
them through pandas. tests/simulator/test_jobs_csv.py compares the two byte for byte.
"""

from __future__ import annotations

import numpy as np

__all__ = ["jobs_csv_text", "integer_rows", "node_texts", "whole_numbers"]

# below it, repr() writes a whole float as its integer and ".0"; at or above it, in exponent form
WHOLE_FLOAT_LIMIT = 1e16
QUOTED = (",", '"', "\n", "\r")  # characters that make pandas quote a cell
ZERO = ord("0")


def whole_numbers(values: np.ndarray) -> np.ndarray | None:
    """The float64 array as int64 when `repr` writes every value as its integer and ".0" (and
    pandas' to_csv too), else None. -0.0 is no whole number here: it prints as "-0.0"."""
    whole = (np.abs(values) < WHOLE_FLOAT_LIMIT) & (values == np.trunc(values))
    whole &= ~((values == 0) & np.signbit(values))
    return values.astype(np.int64) if whole.all() else None


def integer_rows(table: np.ndarray, suffixes: list[str]) -> list[str]:
    """Each row of an int64 table (rows x columns, at least one row) as text: every cell's decimal
    digits and its column's suffix, joined by ",".

    The digits of all cells are computed a place at a time by numpy into one zero-padded byte
    matrix; deleting the zero bytes leaves the rows' text."""
    rows, columns = table.shape
    negative = table < 0
    magnitude = np.abs(table).astype(np.uint64)  # abs(-2**63) wraps to 2**63, right as uint64
    largest = int(magnitude.max())
    places = len(str(largest))
    sign = int(negative.any())
    width = sign + places + max(map(len, suffixes)) + 1  # the cell, its suffix, then "," or "\n"
    cells = np.zeros((rows, columns, width), np.uint8)
    rest = magnitude.astype(np.uint32) if largest < 2**32 else magnitude  # faster division
    for place in range(places):
        quotient = rest // 10
        digit = (rest - quotient * 10).astype(np.uint8) + np.uint8(ZERO)
        if place:
            digit *= magnitude >= 10**place  # no leading zeros
        cells[:, :, sign + places - 1 - place] = digit
        rest = quotient
    if sign:
        cells[:, :, 0] = negative * np.uint8(ord("-"))  # the zero bytes up to the digits go
    for column, suffix in enumerate(suffixes):
        for offset, character in enumerate(suffix.encode("ascii")):
            cells[:, column, sign + places + offset] = character
    cells[:, :, -1] = ord(",")
    cells[:, -1, -1] = ord("\n")
    return cells.tobytes().translate(None, b"\0").decode("ascii").split("\n")[:-1]


def node_texts(nodes: list[np.ndarray], counts: np.ndarray) -> list[str] | None:
    """`";".join(map(str, ids))` of each job's node ids (`counts` of them), built as one byte
    string whose jobs end in a newline and split there (in C); None unless the ids are non-negative
    integers."""
    if not counts.sum():
        return [""] * len(nodes)
    flat = np.concatenate(nodes)
    if flat.dtype.kind not in "iu" or flat.min() < 0:
        return None
    ids = [f"{node};".encode("ascii") for node in range(int(flat.max()) + 1)]
    sizes = np.fromiter(map(len, ids), np.int64, len(ids))
    table = np.zeros((len(ids), int(sizes.max())), np.uint8)  # row i: the text "i;", 0-padded
    for node, text in enumerate(ids):
        table[node, : len(text)] = np.frombuffer(text, np.uint8)
    chars = table[flat]  # one row per id of every job in turn
    last = np.cumsum(counts)[counts > 0] - 1  # each job's last id
    chars[last, sizes[flat[last]] - 1] = ord("\n")  # its ";" ends the job
    texts = chars.tobytes().translate(None, b"\0").decode("ascii").split("\n")[:-1]
    if len(texts) == len(nodes):
        return texts
    every = [""] * len(nodes)
    for job, text in zip(np.flatnonzero(counts).tolist(), texts):
        every[job] = text
    return every


def _pieces(columns: dict) -> list[list[str]] | None:
    """The columns as row texts: each run of integer (and whole-float) columns one piece, each
    other column its own; None where pandas would quote a cell or no rule here applies."""
    pieces: list[list[str]] = []
    integers: list[np.ndarray] = []
    suffixes: list[str] = []
    for column in columns.values():
        kind = column.dtype.kind if isinstance(column, np.ndarray) else "list"
        texts = None
        if kind in "iu":
            if not np.can_cast(column.dtype, np.int64):
                return None
            integers.append(column.astype(np.int64, copy=False))
            suffixes.append("")
            continue
        if kind == "f":
            whole = whole_numbers(column)
            if whole is not None:
                integers.append(whole)
                suffixes.append(".0")
                continue
            texts = ["" if x != x else repr(x) for x in column.tolist()]  # NaN as pandas: empty
        elif kind in ("list", "U", "O"):
            texts = column.tolist() if isinstance(column, np.ndarray) else column
            distinct = set(texts)
            if not all(isinstance(value, str) for value in distinct) or any(
                character in value for value in distinct for character in QUOTED
            ):
                return None  # pandas would quote these (or they are no text): let it write them
        else:
            return None
        if integers:
            pieces.append(integer_rows(np.column_stack(integers), suffixes))
            integers, suffixes = [], []
        pieces.append(texts)
    if integers:
        pieces.append(integer_rows(np.column_stack(integers), suffixes))
    return pieces


def jobs_csv_text(result) -> str | None:
    """jobs.csv of a run as `result.jobs_frame().to_csv(index=False)` writes it, built with numpy
    alone; None where a column would need pandas' quoting or types (lifecycle columns, app names
    with commas or quotes, node ids that are no integers)."""
    if getattr(result, "lifecycle", None) is not None:
        return None
    w = result.workload
    counts = np.fromiter(map(len, result.nodes), np.int64, len(result.nodes))
    nodes = node_texts(result.nodes, counts)
    if nodes is None:
        return None
    end_minus_start = result.end - result.start
    columns = {
        "job_id": w.job_id,
        "submit_time": w.submit,
        "start_time": result.start,
        "end_time": result.end,
        "wait_time": result.start - w.submit,
        "run_time": end_minus_start,
        "estimate": w.estimate,
        "cores": w.cores,
        "node_count": counts,
        "nodes": nodes,
    }
    if w.app is not None:
        columns["app"] = w.app
    if w.memory is not None:
        columns["memory_per_core"] = w.memory
    if w.gpus is not None:
        columns["gpus"] = w.gpus
    if result.co_scheduled:
        with np.errstate(divide="ignore", invalid="ignore"):
            columns["compact_time"], columns["speedup"] = w.run, w.run / end_minus_start
    header = ",".join(columns) + "\n"
    if not len(counts):
        return header
    pieces = _pieces(columns)
    if pieces is None:
        return None
    rows = pieces[0] if len(pieces) == 1 else map(",".join, zip(*pieces))
    return header + "\n".join(rows) + "\n"
