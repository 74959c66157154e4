"""Fast CSV writing of sensing series (ElastiSim's cpu_utilization.csv, pfs_utilization.csv).

A sensing series has one row per sensing interval up to the last job end (100,000 rows for a day at
1 s) and, for the CPU series, one column per node. Almost every cell is 0 or 1 (a node busy or idle
for the whole interval): each run of equal rows has its text made once, and only the cells of
intervals in which something changed are formatted (`%.6g`, ElastiSim's 6 significant digits). A
block of rows is one byte buffer: each row's place follows from the row lengths, the rows of a run
are copied in at their places at once and the changed rows are written in place. The time column
(`%.10g`) is a byte matrix too: whole times are written digit by digit, and the times of one width
are copied in at once. `busy_shares` computes the per-interval shares of a 0/1 step function from
its change points alone: a 0/1 column (the level at each interval's start) and the few intervals
with a change inside, instead of a search per interval; `busy_shares_by_node` does
it for every node in one pass. The PFS series (few columns of mostly other values) formats each run
of equal rows once.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import numpy as np

from cosched.outputs import atomic_path

__all__ = [
    "busy_shares",
    "busy_shares_by_node",
    "node_runs",
    "run_columns",
    "write_series",
    "write_runs",
    "write_runs_into",
    "Sparse",
    "Runs",
]

ROWS_PER_BLOCK = 8192  # rows formatted at a time: the byte matrices stay small (few page faults)
DENSE_COLUMNS = 8  # up to this many plain columns (the PFS series): formatted run by run

INTEGER_STAMPS = 1e10  # whole times below this: `%.10g` writes their digits alone
INTEGER_DIGITS = 10  # digits of the largest such time

# a column as (levels: int8 0/1 per row, rows with another value, their values): see busy_shares
Sparse = tuple


def busy_shares(times: np.ndarray, levels: np.ndarray, rows: int, interval: float) -> Sparse:
    """The mean of a 0/1 step function over each interval [i*interval, (i+1)*interval), i < rows,
    as a sparse
    column (see `Sparse`).

    `levels[k]` holds from `times[k]` on (times ascending; equal times: the last level counts), 0
    before the
    first. The mean of interval i is the level at its start plus, for each change inside it, the
    jump times the
    share of the interval after the change."""
    if not len(times) or rows == 0:
        return np.zeros(rows, dtype=np.int8), np.zeros(0, dtype=np.int64), np.zeros(0)
    last = np.append(times[1:] != times[:-1], True)  # the last entry of each time
    times, levels = times[last], levels[last].astype(np.int8)
    jumps = np.diff(levels, prepend=np.int8(0))
    position = times / interval
    first = np.floor(position).astype(np.int64)  # the interval holding the change
    inside = (
        position > first
    )  # strictly inside: a partial jump there, the whole jump from the next interval on
    start = np.where(inside, first + 1, first)
    steps = np.zeros(rows + 1, dtype=np.int8)
    keep = start < rows
    np.add.at(steps, start[keep], jumps[keep])
    base = np.cumsum(steps[:rows], dtype=np.int8)
    partial = inside & (first < rows)
    odd = np.unique(first[partial])
    values = base[odd].astype(np.float64)
    np.add.at(
        values,
        np.searchsorted(odd, first[partial]),
        jumps[partial] * (first[partial] + 1 - position[partial]),
    )
    exact = (values == 0) | (values == 1)  # changes that cancel inside one interval
    base[odd[exact]] = values[exact].astype(np.int8)
    return base, odd[~exact], values[~exact]


def busy_shares_by_node(
    nodes: np.ndarray, times: np.ndarray, steps: np.ndarray, count: int, rows: int, interval: float
) -> list[Sparse]:
    """`busy_shares` of `count` nodes at once from their events (node, time, +1/-1 step of the
    number of reasons to be busy; busy while above 0), as one `Sparse` column per node."""
    return run_columns(node_runs(nodes, times, steps, count, rows, interval))


class Runs(NamedTuple):
    """A series of `count` columns of mostly 0 and 1 (the CPU series) as runs of equal rows.

    Row r (r < `rows`) holds `levels[k]` for the last k with `starts[k]` <= r, except the cells
    (`odd_rows[i]`, `odd_columns[i]`), which hold `odd_values[i]` (by row, then by column)."""

    rows: int
    starts: np.ndarray  # int64, ascending, starts[0] == 0
    levels: np.ndarray  # int8 0/1, one row per run, one column per node
    odd_rows: np.ndarray  # int64
    odd_columns: np.ndarray  # int64
    odd_values: np.ndarray  # float64


def node_runs(
    nodes: np.ndarray, times: np.ndarray, steps: np.ndarray, count: int, rows: int, interval: float
) -> Runs:
    """The busy shares of `count` nodes (as `busy_shares_by_node`) as `Runs`: the 0/1 levels
    change only in rows where some node changes, so each run of rows is one level vector."""
    if not len(times) or rows == 0:
        return _no_runs(count, rows)
    # by node, then by time (two stable sorts; the node sort is a radix sort on small ints); the
    # order of events at one time of one node does not matter: only its last level is used
    order = np.argsort(times, kind="stable")
    small = np.int16 if count < 2**15 else np.int64
    order = order[np.argsort(nodes[order].astype(small), kind="stable")]
    nodes, times = nodes[order], times[order]
    # each node's steps sum to 0, so a running sum over all nodes in node order restarts at 0
    levels = (np.cumsum(steps[order]) > 0).astype(np.int8)
    last = np.append((times[1:] != times[:-1]) | (nodes[1:] != nodes[:-1]), True)
    nodes, times, levels = nodes[last], times[last], levels[last]
    before = np.append(np.int8(0), levels[:-1])
    before[np.flatnonzero(np.append(True, nodes[1:] != nodes[:-1]))] = 0  # 0 before a node's first
    jumps = levels - before
    position = times / interval
    first = np.floor(position).astype(np.int64)  # the interval holding the change
    inside = position > first  # strictly inside: partial there, the whole jump from the next on
    start = np.where(inside, first + 1, first)
    keep = start < rows
    new_run = np.zeros(rows, dtype=bool)  # rows where some node's level changes: a run starts
    new_run[0] = True
    new_run[start[keep]] = True
    run_of = np.cumsum(new_run) - 1  # the run of each row
    width = int(run_of[-1]) + 1
    table = np.zeros(count * width, dtype=np.int8)  # node-major: a fast cumsum
    np.add.at(table, nodes[keep] * width + run_of[start[keep]], jumps[keep])  # flat: a fast add
    table = np.cumsum(table.reshape(count, width), axis=1, dtype=np.int8).T
    partial = inside & (first < rows)
    keys = nodes[partial] * rows + first[partial]  # ascending: by node, then by time
    new_key = np.diff(keys, prepend=-1) != 0
    odd = keys[new_key]
    odd_nodes, odd_rows = odd // rows, odd % rows
    values = table[run_of[odd_rows], odd_nodes].astype(np.float64)
    np.add.at(
        values,
        np.cumsum(new_key) - 1,  # the place of each key in `odd` (both ascending)
        jumps[partial] * (first[partial] + 1 - position[partial]),
    )
    order = np.argsort(odd_rows * count + odd_nodes)  # by row, then by node (cells unique)
    return Runs(
        rows,
        np.flatnonzero(new_run),
        np.ascontiguousarray(table),
        odd_rows[order],
        odd_nodes[order],
        values[order],
    )


def _no_runs(count: int, rows: int) -> Runs:
    empty = np.zeros(0, dtype=np.int64)
    levels = np.zeros((1, count), dtype=np.int8)
    return Runs(rows, np.zeros(1, dtype=np.int64), levels, empty, empty, np.zeros(0))


def run_columns(runs: Runs) -> list[Sparse]:
    """`Runs` as one `Sparse` column per node (cells of 0 or 1 among the odd ones in the 0/1
    column)."""
    rows, starts, table = runs.rows, runs.starts, runs.levels
    base = table[np.repeat(np.arange(len(starts)), np.diff(np.append(starts, rows)))].T.copy()
    exact = (runs.odd_values == 0) | (runs.odd_values == 1)
    base[runs.odd_columns[exact], runs.odd_rows[exact]] = runs.odd_values[exact].astype(np.int8)
    order = np.lexsort((runs.odd_rows, runs.odd_columns))
    order = order[~exact[order]]
    columns, rows_, values = runs.odd_columns[order], runs.odd_rows[order], runs.odd_values[order]
    bounds = np.searchsorted(columns, np.arange(table.shape[1] + 1)).tolist()
    return [
        (base[node], rows_[low:high], values[low:high])
        for node, (low, high) in enumerate(zip(bounds, bounds[1:]))
    ]


def _sparse(column: np.ndarray) -> Sparse:
    odd = np.flatnonzero((column != 0) & (column != 1))
    return (column == 1).astype(np.int8), odd, column[odd]


def _write_dense(handle, times: np.ndarray, columns: list[np.ndarray]) -> None:
    """Few columns of mostly other values than 0 and 1 (the PFS series): each distinct row of
    values formatted once (series repeat them)."""
    for begin in range(0, len(times), ROWS_PER_BLOCK):
        end = min(begin + ROWS_PER_BLOCK, len(times))
        values = np.column_stack(
            [np.asarray(column[begin:end], dtype=np.float64) for column in columns]
        )
        bits = values.view(np.uint64)  # rows equal bit for bit: -0.0 and NaNs keep their own text
        first = np.flatnonzero(np.append(True, (bits[1:] != bits[:-1]).any(axis=1)))
        texts = _cell_rows(bits[first])  # each run of equal rows once
        stamps, _ = _stamps(times[begin:end])
        # a zero-padded byte matrix of the rows (time, comma, values, newline): dropping the
        # zero bytes leaves the text (the values' texts are padded too)
        width = stamps.shape[1]
        matrix = np.zeros((end - begin, width + texts.shape[1] + 2), dtype=np.uint8)
        matrix[:, :width] = stamps
        matrix[:, width] = ord(",")
        runs = np.repeat(np.arange(len(first)), np.diff(first, append=end - begin))
        matrix[:, width + 1 : -1] = texts[runs]
        matrix[:, -1] = ord("\n")
        flat = matrix.ravel()
        handle.write(flat[flat != 0].tobytes())


def _cell_rows(bits: np.ndarray) -> np.ndarray:
    """Rows of float cells (given as their bits) as text, `%.6g` joined by commas: a byte matrix,
    a row per row, whose zero bytes are padding (each cell is its text, zeros up to the longest
    text, then its comma). Each distinct value is formatted once; the cells are gathered from a
    table of the padded texts at once."""
    distinct, inverse = np.unique(bits, return_inverse=True)
    words = [b"%.6g" % value for value in distinct.view(np.float64).tolist()]
    size = max(map(len, words), default=0)
    table = np.frombuffer(
        b"".join([word.ljust(size, b"\0") + b"," for word in words]), dtype=np.uint8
    ).reshape(len(words), size + 1)
    text = table[inverse.reshape(bits.shape)].reshape(len(bits), -1)
    return text[:, :-1]  # no comma after the last cell


def _stamps(times: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The time column as `%.10g` text: a byte matrix (a row per time, left-aligned, padded) and
    the length of each row's text."""
    whole = np.floor(times)
    if len(times) and bool(np.all((whole == times) & (times > 0) & (times < INTEGER_STAMPS))):
        numbers = times.astype(np.int64)  # `%.10g` writes their digits alone
        powers = 10 ** np.arange(INTEGER_DIGITS, dtype=np.int64)
        lengths = np.maximum(np.searchsorted(powers, numbers, side="right"), 1)
        size = int(lengths.max())
        right = np.empty((len(numbers), size), dtype=np.uint8)  # right-aligned, zeros in front
        rest = numbers.copy()
        for column in range(size - 1, -1, -1):
            rest, digit = np.divmod(rest, 10)
            right[:, column] = digit
        right += ord("0")
        stamps = np.zeros((len(numbers), size), dtype=np.uint8)
        bounds = (np.flatnonzero(np.diff(lengths)) + 1).tolist()
        for low, high in zip([0, *bounds], [*bounds, len(numbers)]):  # rows of one length
            length = int(lengths[low])
            stamps[low:high, :length] = right[low:high, size - length :]
        return stamps, lengths
    texts = np.array([b"%.10g" % value for value in times.tolist()])
    return texts.view(np.uint8).reshape(len(times), -1), np.char.str_len(texts)


class _Words:
    """Each distinct odd value's `%.6g` text once, as one byte blob with offsets and lengths."""

    def __init__(self, values: np.ndarray):
        distinct, self.index = np.unique(values + 0.0, return_inverse=True)  # +0.0: no "-0"
        texts = [b"%.6g" % value for value in distinct.tolist()]
        self.lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
        self.offsets = np.cumsum(self.lengths) - self.lengths
        self.blob = np.frombuffer(b"".join(texts), dtype=np.uint8)


def _place_odd_lines(
    out: np.ndarray,
    at: np.ndarray,
    lengths: np.ndarray,
    levels: np.ndarray,
    rank: np.ndarray,
    columns: np.ndarray,
    words: np.ndarray,
    vocabulary: _Words,
) -> None:
    """Write into `out` (filled with commas), from offsets `at` (ascending, a line each, of
    `lengths` bytes), the lines whose cells are 0/1 `levels` (a row per line) except the cells
    (`rank`, `columns`), which hold the words numbered `words` of `vocabulary`; each cell's place
    comes from the cell lengths and the gaps between the lines, so every byte is placed at once."""
    count = levels.shape[1]
    cells = rank * count + columns
    # int32 offsets (half the memory traffic) unless the text could pass 2 GiB
    offset = np.int32 if len(out) < 2**31 else np.int64
    sizes = vocabulary.lengths[words].astype(offset)
    step = np.full(levels.size, 2, dtype=offset)  # each cell and its comma or newline
    step[cells] = sizes + 1
    chunk = step.copy()  # a line's first cell also spans the bytes since the previous line
    chunk[::count] += (at - np.append(0, at[:-1] + lengths[:-1])).astype(offset)
    ends = np.cumsum(chunk, dtype=offset)
    starts = ends - step
    out[ends[count - 1 :: count] - 1] = ord("\n")
    out[starts] = levels.ravel() + np.int8(ord("0"))
    within = np.arange(int(sizes.sum()), dtype=offset) - np.repeat(
        np.cumsum(sizes, dtype=offset) - sizes, sizes
    )
    out[np.repeat(starts[cells], sizes) + within] = vocabulary.blob[
        np.repeat(vocabulary.offsets[words], sizes) + within
    ]


def _line_lengths(count: int, lines: int, rank: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """The length of `lines` lines of `count` cells (a digit or a word, then a comma or newline)
    where the cells of line `rank[i]` hold `sizes[i]`-byte words (the others one digit)."""
    extra = np.bincount(rank, weights=sizes - 1, minlength=lines).astype(np.int64)
    return 2 * count + extra


def _windows(data: np.ndarray, size: int) -> np.ndarray:
    """Every `size` bytes of a byte array from every offset on (row k: `data[k : k + size]`), a
    writable view: assigning rows at chosen offsets copies whole rows at once."""
    return np.lib.stride_tricks.as_strided(data, (max(len(data) - size + 1, 0), size), (1, 1))


def _write_runs(handle, times: np.ndarray, runs: Runs) -> None:
    """Rows of mostly 0 and 1 (the CPU series): each run's row text is made once, and the few rows
    with other values (`%.6g`, each distinct value formatted once) are made cell by cell; a block
    of rows is one byte buffer, each row's place from the row lengths, and the rows of one run
    text (and the times of one width) are copied in at once."""
    rows, starts = runs.rows, runs.starts
    count = runs.levels.shape[1]
    width = 2 * count  # a digit and a comma per cell; the last comma: the newline
    pairs = runs.levels.astype(np.uint16)  # a digit and a comma: one 16-bit word per cell
    pairs += ord("0") + (ord(",") << 8) if np.little_endian else (ord("0") << 8) + ord(",")
    bodies = pairs.view(np.uint8)
    bodies[:, -1] = ord("\n")
    run_of = np.repeat(np.arange(len(starts)), np.diff(np.append(starts, rows)))
    vocabulary = _Words(runs.odd_values)
    for begin in range(0, rows, ROWS_PER_BLOCK):
        end = min(begin + ROWS_PER_BLOCK, rows)
        stamps, lengths = _stamps(times[begin:end])
        body_lengths = np.full(end - begin, width, dtype=np.int64)
        low, high = np.searchsorted(runs.odd_rows, (begin, end)).tolist()
        odd_rows = runs.odd_rows[low:high] - begin  # the rows with a changed interval
        unique = odd_rows[np.flatnonzero(np.diff(odd_rows, prepend=-1))]
        rank = np.searchsorted(unique, odd_rows)
        words = vocabulary.index[low:high]
        body_lengths[unique] = _line_lengths(count, len(unique), rank, vocabulary.lengths[words])
        row_ends = np.cumsum(lengths + 1 + body_lengths)
        row_starts = row_ends - (lengths + 1 + body_lengths)
        out = np.full(int(row_ends[-1]), ord(","), dtype=np.uint8)  # the commas in place
        bounds = [0, *(np.flatnonzero(np.diff(lengths)) + 1).tolist(), end - begin]
        for low_row, high_row in zip(bounds, bounds[1:]):  # times of one width
            size = int(lengths[low_row])
            _windows(out, size)[row_starts[low_row:high_row]] = stamps[low_row:high_row, :size]
        bodies_at = row_starts + lengths + 1
        plain = np.ones(end - begin, dtype=bool)
        plain[unique] = False
        plain_rows = np.flatnonzero(plain)
        _windows(out, width)[bodies_at[plain_rows]] = bodies[run_of[plain_rows + begin]]
        if len(unique):
            _place_odd_lines(
                out,
                bodies_at[unique],
                body_lengths[unique],
                runs.levels[run_of[unique + begin]],
                rank,
                runs.odd_columns[low:high],
                words,
                vocabulary,
            )
        handle.write(out.data)


def _columns_as_runs(columns: list[Sparse]) -> Runs:
    """`Sparse` columns as `Runs` (rows with equal 0/1 levels merged into one run)."""
    rows = len(columns[0][0])
    if rows == 0:
        return _no_runs(len(columns), 0)
    levels = np.stack([column[0] for column in columns], axis=1).astype(np.int8)
    starts = np.flatnonzero(np.append(True, (levels[1:] != levels[:-1]).any(axis=1)))
    odd_rows = np.concatenate([np.asarray(column[1], dtype=np.int64) for column in columns])
    odd_columns = np.repeat(np.arange(len(columns)), [len(column[1]) for column in columns])
    values = np.concatenate([np.asarray(column[2], dtype=np.float64) for column in columns])
    order = np.lexsort((odd_columns, odd_rows))
    return Runs(rows, starts, levels[starts], odd_rows[order], odd_columns[order], values[order])


def write_runs(path: str | Path, header, times: np.ndarray, runs: Runs) -> Path:
    """A CSV with a time column (`%.10g`) and the columns of `runs` (`%.6g`)."""
    with atomic_path(path) as tmp, open(tmp, "wb") as handle:
        write_runs_into(handle, header, times, runs)
    return Path(path)


def write_runs_into(handle, header, times: np.ndarray, runs: Runs) -> None:
    """`write_runs` into an open binary file."""
    handle.write((",".join(header) + "\n").encode())
    _write_runs(handle, times, runs)


def write_series(path: str | Path, header, times: np.ndarray, columns: list) -> Path:
    """A CSV with a time column (`%.10g`) and value columns (`%.6g`), each an array or a `Sparse`
    column."""
    if (
        columns
        and not any(isinstance(column, tuple) for column in columns)
        and len(columns) <= DENSE_COLUMNS
    ):
        with atomic_path(path) as tmp, open(tmp, "wb") as handle:
            handle.write((",".join(header) + "\n").encode())
            _write_dense(handle, times, columns)
        return Path(path)
    columns = [
        column if isinstance(column, tuple) else _sparse(np.asarray(column, dtype=np.float64))
        for column in columns
    ]
    return write_runs(path, header, times, _columns_as_runs(columns))
