"""jobs.csv without pandas: the bytes `SimulationResult.jobs_frame().to_csv(index=False)` writes.

`cosched simulate --out` writes 54,034 rows of SDSC-SP2 in about three hundredths of a second, with
no Python work per row: every column becomes a matrix of bytes (one row per job, the cell's text
after zero bytes), the digits of a whole column computed by numpy four at a time from a table; the
node ids, the one column of varying width, are laid out flat between the columns before and after
them, `BLOCK_ROWS` jobs at a time (each block reuses the memory of the one before: a third of the
page faults of the whole file at once); deleting the zero bytes leaves the file's text. Runs
whose columns pandas would quote or type differently (lifecycle columns, app names with commas,
quotes or zero bytes, node ids that are no integers) return None: the caller writes them through
pandas. tests/simulator/test_jobs_csv.py compares the two byte for byte.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache

import numpy as np

from cosched.simulator.result import JobNodes

__all__ = ["jobs_csv_blocks", "jobs_csv_text", "integer_words", "node_cells", "whole_numbers"]

# below it, repr() writes a whole float as its integer and ".0"; at or above it, in exponent form
WHOLE_FLOAT_LIMIT = 1e16
QUOTED = (",", '"', "\n", "\r")  # characters that make pandas quote a cell
ZERO = ord("0")
DIGITS_PER_STEP = 4  # digits looked up at a time (a table of 10**4 rows)
STEP = 10**DIGITS_PER_STEP
# rows joined at a time: blocks reuse memory (8,192 did not: 2.8x the page faults)
BLOCK_ROWS = 2048


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


def integer_words(values: np.ndarray, suffix: bytes = b"") -> np.ndarray:
    """(len(values), words) uint32, DIGITS_PER_STEP bytes a word: each int64's decimal text ("-"
    and digits) after zero bytes, then `suffix` (at most one word) and zero bytes."""
    magnitude = np.abs(values).astype(np.uint64)  # abs(-2**63) wraps to 2**63, right as uint64
    largest = int(magnitude.max()) if magnitude.size else 0
    steps = -(-len(str(largest)) // DIGITS_PER_STEP)
    negative = values < 0
    sign = int(bool(negative.any()))
    words = np.empty((len(values), sign + steps + bool(suffix)), np.uint32)
    rest = magnitude.astype(np.uint32) if largest < 2**32 else magnitude  # faster division
    table = _digit_words()
    for step in range(steps):
        quotient = rest // STEP
        word = (rest - quotient * STEP).astype(np.intp)
        word += np.where(quotient > 0, STEP, 2 * STEP if step == 0 else 0)
        words[:, sign + steps - 1 - step] = table.take(word)
        rest = quotient
    if suffix:
        words[:, -1] = np.frombuffer(suffix.ljust(DIGITS_PER_STEP, b"\0"), np.uint32)[0]
    if sign:  # "-" in the last byte before the digits; the zero bytes up to them go
        words[:, 0] = 0
        words.view(np.uint8)[:, DIGITS_PER_STEP - 1] = negative * np.uint8(ord("-"))
    return words


def node_cells(flat: np.ndarray, counts: np.ndarray) -> np.ndarray | None:
    """Each job's node ids (`counts[j]` of `flat` for job j) as `";".join(map(str, ids))` with zero
    bytes among them: a (len(flat), width) byte matrix, width a whole number of words, one row per
    id ("id;", the last id of each job without its ";"); None unless the ids are non-negative
    integers."""
    if flat.dtype.kind not in "iu" or (flat.size and flat.min() < 0):
        return None
    top = int(flat.max()) if flat.size else 0
    by_id = top < flat.size  # the text of each id 0 ... top, looked up: fewer ids to format
    digits = integer_words(np.arange(top + 1) if by_id else flat.astype(np.int64)).view(np.uint8)
    pad = np.zeros((len(digits), DIGITS_PER_STEP - 1), np.uint8)  # room to round up to words
    chars = np.hstack([pad, digits, np.full((len(digits), 1), ord(";"), np.uint8)])
    if by_id:  # as few whole words as the longest id and ";" need, gathered a word at a time
        width = -(-(len(str(top)) + 1) // DIGITS_PER_STEP) * DIGITS_PER_STEP
        words = np.ascontiguousarray(chars[:, chars.shape[1] - width :]).view(np.uint32)
        chars = np.take(words, flat, axis=0).view(np.uint8)
    chars[np.cumsum(counts)[counts > 0] - 1, -1] = 0  # each job's last id ends its cell
    return chars


def _text_words(texts: list, end: str) -> np.ndarray | None:
    """(len(texts), words) uint32 of each text (UTF-8) and `end`, then zero bytes; None if pandas
    would quote one or one is no text or holds a zero byte."""
    distinct = set(texts)
    if not all(isinstance(value, str) for value in distinct) or any(
        character in value for value in distinct for character in (*QUOTED, "\0")
    ):
        return None
    encoded = {value: (value + end).encode() for value in distinct}
    width = -(-max(map(len, encoded.values())) // DIGITS_PER_STEP) * DIGITS_PER_STEP
    data = np.array([encoded[value] for value in texts], dtype=f"S{width}")
    return data.view(np.uint32).reshape(len(texts), width // DIGITS_PER_STEP)


def _column_words(column, end: str) -> np.ndarray | None:
    """(rows, words) uint32 of a column's cells as pandas writes them, each followed by `end`, or
    None (no rule here)."""
    kind = column.dtype.kind if isinstance(column, np.ndarray) else "list"
    if kind in "iu":
        if not np.can_cast(column.dtype, np.int64):
            return None
        return integer_words(column.astype(np.int64, copy=False), end.encode())
    if kind == "f":
        whole = whole_numbers(column)
        if whole is not None:
            return integer_words(whole, b".0" + end.encode())
        return _text_words(["" if x != x else repr(x) for x in column.tolist()], end)  # NaN: ""
    if kind in ("list", "U", "O"):
        return _text_words(column.tolist() if isinstance(column, np.ndarray) else column, end)
    return None


def _row_words(columns: list, end: str) -> list[np.ndarray] | None:
    """The cells of `columns`, each followed by "," (the last by `end`): one (rows, words) uint32
    matrix per column, or None (a column needs pandas)."""
    blocks = []
    for number, column in enumerate(columns):
        words = _column_words(column, end if number == len(columns) - 1 else ",")
        if words is None:
            return None
        blocks.append(words)
    return blocks


def _joined(before: list, nodes: np.ndarray, counts: np.ndarray, after: list) -> bytearray:
    """The rows' text: each job's words of the `before` columns, its `counts[j]` rows of `nodes`
    (bytes, whole words wide), its words of the `after` columns (the zero bytes deleted). One mask
    marks the fixed words of the rows; the fixed and the node words each fill their places in one
    numpy call, a word (not a byte) at a time, in a bytearray whose zero bytes are then deleted in
    place of a copy (`tobytes`: SDSC-SP2's jobs.csv took a third longer)."""
    rows = len(counts)
    fixed_words = np.hstack([*before, *after])
    node_words = nodes.view(np.uint32)
    lengths = np.empty((rows, 3), np.int64)
    lengths[:, 0] = sum(column.shape[1] for column in before)
    lengths[:, 1] = counts * node_words.shape[1]
    lengths[:, 2] = sum(column.shape[1] for column in after)
    fixed = np.repeat(np.tile(np.array([True, False, True]), rows), lengths.ravel())
    buffer = bytearray(fixed.size * DIGITS_PER_STEP)
    text = np.frombuffer(buffer, np.uint32)
    text[fixed] = fixed_words.ravel()
    text[~fixed] = node_words.ravel()
    return buffer.translate(None, b"\0")


def _blocks(
    header: str, before: list, nodes: np.ndarray, counts: np.ndarray, after: list
) -> Iterator[bytes | bytearray]:
    """The header, then the rows' text `BLOCK_ROWS` jobs at a time (`_joined`): the columns'
    words are put side by side a block at a time, never for the whole file."""
    yield header.encode()
    first_node = np.zeros(len(counts) + 1, np.int64)  # of each job in `nodes`, then their count
    np.cumsum(counts, out=first_node[1:])
    for begin in range(0, len(counts), BLOCK_ROWS):
        end = min(begin + BLOCK_ROWS, len(counts))
        yield _joined(
            [column[begin:end] for column in before],
            nodes[first_node[begin] : first_node[end]],
            counts[begin:end],
            [column[begin:end] for column in after],
        )


def jobs_csv_blocks(result) -> Iterator[bytes | bytearray] | None:
    """jobs.csv of a run as `result.jobs_frame().to_csv(index=False)` writes it (UTF-8), built with
    numpy alone, in blocks of bytes to write one after the other: the header, then `BLOCK_ROWS` rows
    at a time; None where a column would need pandas' quoting or types (lifecycle columns, app names
    with commas or quotes, node ids that are no integers), decided before the first block."""
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
        return iter([header.encode()])
    nodes = node_cells(job_nodes.flat, job_nodes.counts)
    first = _row_words(list(before.values()), ",")  # the "," before the nodes
    nodes_end = np.full((rows, 1), ord("," if after else "\n"), np.uint32)  # one word
    rest = _row_words(list(after.values()), "\n") if after else []
    if nodes is None or first is None or rest is None:
        return None
    return _blocks(header, first, nodes, job_nodes.counts, [nodes_end, *rest])


def jobs_csv_text(result) -> str | None:
    """jobs.csv of a run as one text (`jobs_csv_blocks` joined), or None where pandas is
    needed."""
    blocks = jobs_csv_blocks(result)
    return None if blocks is None else b"".join(blocks).decode()
