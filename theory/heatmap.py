"""Pairwise co-execution heatmaps in the thesis file layout (003 §4.2, Table 4.1).

One row per measured pair: ``name_A, procs_A, compact_A, name_B, procs_B, compact_B, co_A_B,
co_B_A`` (times in seconds, empty cells = unmeasured). The speedup of A next to B is compact_A /
co_A_B (003 §4.2; 000 §2.2). A row with an empty ``name_B`` gives A's run time spread alone
(half-socket binding, no neighbour) in ``co_A_B``: its per-application spread speedup compact_A /
co_A_B.

Missing pairs are resolved by ``Heatmap.speedup`` / ``speedup_matrix`` in this order: the measured
value; else the mirrored pair (speedup of B next to A); else the heatmap's ``default``; else an
``InputError``. Every use of a fallback emits one ``MissingPairsWarning`` listing the pairs.
"""

from __future__ import annotations

import csv
import io
import math
import os
import warnings
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np

from cosched.data import HEATMAPS, resolve
from cosched.errors import InputError
from cosched.inputs import MAX_PROCS, MAX_SECONDS, MIN_SECONDS, check_number, read_text, shown
from cosched.outputs import atomic_path, pyplot, save_figure

__all__ = [
    "Heatmap",
    "MissingPairsWarning",
    "COLUMNS",
    "read_heatmap",
    "write_heatmap",
    "plot_heatmap",
    "heatmap_figure",
    "heatmap_from_instance",
    "instance_from_heatmap",
    "heatmap_from_speedups",
]

COLUMNS = ("name_A", "procs_A", "compact_A", "name_B", "procs_B", "compact_B", "co_A_B", "co_B_A")
# relative slack when one application's compact time is repeated on several rows
TIME_TOLERANCE = 1e-6
WARN_LIST_LIMIT = 12  # pairs named in a warning before "... and N more"


class MissingPairsWarning(UserWarning):
    """Some pairs were measured in one direction only and the mirrored pair was used for them."""


class Heatmap:
    """Immutable heatmap: applications (name, procs, compact time) and directed speedups S[a, b].

    ``S[a, b]`` = compact_a / co_a_b (003 §4.2), NaN where unmeasured; ``default`` fills pairs with
    neither direction measured (None: such pairs raise).
    """

    __slots__ = ("_names", "_index", "_procs", "_compact", "_co", "_spread", "_default", "_source")

    def __init__(
        self,
        names,
        procs,
        compact,
        co,
        spread=None,
        *,
        default: float | None = None,
        source: str | None = None,
    ):
        names = tuple(str(name) for name in names)
        k = len(names)
        procs = np.array(procs, dtype=np.int64)
        compact = np.array(compact, dtype=np.float64)
        co = np.array(co, dtype=np.float64)
        spread = np.full(k, np.nan) if spread is None else np.array(spread, dtype=np.float64)
        if k == 0:
            raise InputError("a heatmap needs at least one application", source=source)
        if len(set(names)) != k:
            raise InputError("application names must be unique", source=source, field="name_A")
        if (
            procs.shape != (k,)
            or compact.shape != (k,)
            or co.shape != (k, k)
            or spread.shape != (k,)
        ):
            raise InputError(f"shapes do not match {k} applications", source=source)
        if (procs <= 0).any():
            raise InputError("processes must be positive", source=source, field="procs_A")
        if not (np.isfinite(compact) & (compact > 0)).all():
            raise InputError("compact times must be positive", source=source, field="compact_A")
        if (co[~np.isnan(co)] <= 0).any() or (spread[~np.isnan(spread)] <= 0).any():
            raise InputError("co-execution times must be positive", source=source, field="co_A_B")
        if default is not None and not (math.isfinite(default) and default > 0):
            raise InputError(
                f"default speedup must be positive, got {default}", source=source, field="default"
            )
        for array in (procs, compact, co, spread):
            array.flags.writeable = False
        self._names, self._procs, self._compact, self._co, self._spread = (
            names,
            procs,
            compact,
            co,
            spread,
        )
        self._index = {name: i for i, name in enumerate(names)}
        self._default = default
        self._source = source

    # -- construction
    # -------------------------------------------------------------------------------------------
    @classmethod
    def from_records(
        cls, records: Iterable[Mapping], *, default: float | None = None, source: str | None = None
    ) -> Heatmap:
        """Build from dicts with the 8 Table 4.1 keys (None, NaN or '' = unmeasured)."""
        return _build(((None, record) for record in records), default=default, source=source)

    def with_default(self, default: float | None) -> Heatmap:
        """The same heatmap with another fallback speedup for pairs measured in neither
        direction."""
        return Heatmap(
            self._names,
            self._procs,
            self._compact,
            self._co,
            self._spread,
            default=default,
            source=self._source,
        )

    # -- read access
    # --------------------------------------------------------------------------------------------
    @property
    def applications(self) -> tuple[str, ...]:
        return self._names

    @property
    def default(self) -> float | None:
        return self._default

    @property
    def procs(self) -> np.ndarray:
        """Processes (cores) of each application, in ``applications`` order."""
        return self._procs

    @property
    def compact_times(self) -> np.ndarray:
        """Run time with compact allocation [s] of each application."""
        return self._compact

    @property
    def co_times(self) -> np.ndarray:
        """co[a, b] = run time of a next to b [s], NaN = unmeasured."""
        return self._co

    def index(self, name: str) -> int:
        try:
            return self._index[name]
        except KeyError:
            raise InputError(
                f"unknown application {name!r}", source=self._source, field="app"
            ) from None

    @property
    def measured(self) -> np.ndarray:
        """Directed speedups S[a, b] = compact_a / co_a_b (003 §4.2), NaN = unmeasured."""
        return self._compact[:, None] / self._co

    def spread_speedups(self, default: float = 1.0) -> np.ndarray:
        """Speedup of each application alone on a spread allocation (compact / spread-alone time),
        else default."""
        speedup = self._compact / self._spread  # 000 §2.2: spread alone vs compact
        return np.where(np.isnan(speedup), default, speedup)

    def speedup(self, a: str, b: str) -> float:
        """Speedup of a next to b: measured, else mirrored pair, else default, else InputError."""
        i, j = self.index(a), self.index(b)
        value = self.measured[i, j]
        if not np.isnan(value):
            return float(value)
        return float(
            self._fill(np.array([[value]]), np.array([[self.measured[j, i]]]), [(a, b)])[0, 0]
        )

    def speedup_matrix(self, applications=None) -> np.ndarray:
        """Directed speedups with the documented fallback applied (one warning listing filled
        pairs).

        applications: names to restrict to (rows and columns in that order); None = all.
        """
        order = (
            np.arange(len(self._names))
            if applications is None
            else np.array([self.index(name) for name in applications], dtype=np.int64)
        )
        measured = self.measured[np.ix_(order, order)]
        missing = np.argwhere(np.isnan(measured))
        pairs = [(self._names[order[i]], self._names[order[j]]) for i, j in missing]
        return self._fill(measured, measured.T, pairs)

    def _fill(
        self, values: np.ndarray, mirrored: np.ndarray, pairs: list[tuple[str, str]]
    ) -> np.ndarray:
        missing = np.isnan(values)
        if not missing.any():
            return values
        filled = np.where(missing, mirrored, values)
        unresolved = np.isnan(filled)
        if unresolved.any() and self._default is None:
            flat = [pair for pair, bad in zip(pairs, unresolved[missing]) if bad]
            raise InputError(
                f"{len(flat)} pair(s) measured in neither direction and no default speedup: "
                f"{_list_pairs(flat)}",
                source=self._source,
                field="co_A_B",
            )
        filled = np.where(
            unresolved, self._default if self._default is not None else np.nan, filled
        )
        # a pair the default speedup fills is what the caller asked for: only a mirrored one warns
        mirrored_used = [pair for pair, bad in zip(pairs, unresolved[missing]) if not bad]
        if mirrored_used:
            warnings.warn(
                f"{self._source or 'heatmap'}: unmeasured pairs; {len(mirrored_used)} pair(s) use "
                f"the mirrored pair: {_list_pairs(mirrored_used)}",
                MissingPairsWarning,
                stacklevel=3,
            )
        return filled

    @property
    def frame(self):
        """The Table 4.1 layout: one row per unordered pair with at least one measured direction."""
        import pandas as pd

        measured = ~np.isnan(self._co)
        listed = measured | measured.T
        lonely = ~listed.any(axis=1) & np.isnan(self._spread)  # kept by an unmeasured self-pair row
        rows = []
        for i in range(len(self._names)):
            if not np.isnan(self._spread[i]):
                rows.append(self._row(i, None))
            for j in range(i, len(self._names)):
                if listed[i, j] or (i == j and lonely[i]):
                    rows.append(self._row(i, j))
        frame = pd.DataFrame(rows, columns=list(COLUMNS))
        frame["procs_A"] = frame["procs_A"].astype("int64")
        frame["procs_B"] = frame["procs_B"].astype("Int64")
        return frame

    def _row(self, i: int, j: int | None) -> tuple:
        if j is None:
            return (
                self._names[i],
                int(self._procs[i]),
                float(self._compact[i]),
                None,
                None,
                np.nan,
                float(self._spread[i]),
                np.nan,
            )
        return (
            self._names[i],
            int(self._procs[i]),
            float(self._compact[i]),
            self._names[j],
            int(self._procs[j]),
            float(self._compact[j]),
            float(self._co[i, j]),
            float(self._co[j, i]),
        )

    def __len__(self) -> int:
        return len(self._names)

    def __eq__(self, other) -> bool:
        """Same applications (in any order), times and default."""
        if (
            not isinstance(other, Heatmap)
            or set(self._names) != set(other._names)
            or self._default != other._default
        ):
            return False
        order = np.array([other._index[name] for name in self._names])
        return (
            np.array_equal(self._procs, other._procs[order])
            and np.allclose(self._compact, other._compact[order])
            and np.allclose(self._co, other._co[np.ix_(order, order)], equal_nan=True)
            and np.allclose(self._spread, other._spread[order], equal_nan=True)
        )

    __hash__ = None  # type: ignore[assignment]  # equal heatmaps compare by content: unhashable

    def __repr__(self) -> str:
        pairs = int((~np.isnan(self._co)).sum())
        return f"Heatmap({len(self._names)} applications, {pairs} measured directed pairs)"


def _list_pairs(pairs: list[tuple[str, str]]) -> str:
    shown = ", ".join(f"{a}|{b}" for a, b in pairs[:WARN_LIST_LIMIT])
    return shown + (
        f" ... and {len(pairs) - WARN_LIST_LIMIT} more" if len(pairs) > WARN_LIST_LIMIT else ""
    )


def _cell(record: Mapping, key: str, line, source):
    """A record's value with empty strings, None and NaN mapped to None."""
    if key not in record:
        raise InputError("missing column", source=source, line=line, field=key)
    value = record[key]
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    return value.strip() if isinstance(value, str) else value


def _number(record, key, line, source, *, integer=False, required=True):
    value = _cell(record, key, line, source)
    if value is None:
        if required:
            raise InputError("empty cell", source=source, line=line, field=key)
        return None
    if isinstance(value, (bytes, bool)) or not isinstance(value, (str, int, float, np.number)):
        raise InputError(f"not a number: {shown(value)}", source=source, line=line, field=key)
    if integer:
        return check_number(
            value, source=source, line=line, field=key, integer=True, minimum=1, limit=MAX_PROCS
        )
    return check_number(
        value, source=source, line=line, field=key, minimum=MIN_SECONDS.value, limit=MAX_SECONDS
    )


def _spread_time(record, name_a: str, co_ab, spread: dict, label, source) -> float:
    """The spread-alone time of a row without name_B (in co_A_B); the B cells must be empty."""
    if co_ab is None:
        raise InputError(
            "a row without name_B must give the spread-alone time in co_A_B",
            source=source,
            line=label,
            field="co_A_B",
        )
    # unused there: a value is a mistake, not data
    for key in ("procs_B", "compact_B", "co_B_A"):
        if _cell(record, key, label, source) is not None:
            raise InputError(
                "must be empty on a row without name_B (a spread-alone time)",
                source=source,
                line=label,
                field=key,
            )
    if name_a in spread:
        raise InputError(
            f"spread time of {name_a!r} given twice", source=source, line=label, field="name_B"
        )
    return co_ab


def _co_times(name_a: str, name_b: str, co_ab, co_ba, label) -> dict:
    """The directed co-run times a row gives: (A, B) and (B, A), or the mean for two copies of A."""
    if name_a == name_b and co_ab is not None and co_ba is not None:
        return {(name_a, name_a): ((co_ab + co_ba) / 2, label)}  # both copies of A: their mean
    pairs = (((name_a, name_b), co_ab), ((name_b, name_a), co_ba))
    return {pair: (value, label) for pair, value in pairs if value is not None}


def _build(numbered_records, *, default, source) -> Heatmap:
    """Collect applications and directed co-run times from rows; rows carry an optional line
    number."""
    apps: dict[str, tuple[int, float, object]] = {}
    co: dict[tuple[str, str], tuple[float, object]] = {}
    spread: dict[str, float] = {}
    seen: dict[frozenset, object] = {}

    def register(name, procs, compact, line, side):
        known = apps.get(name)
        if known is None:
            apps[name] = (procs, compact, line)
        elif known[0] != procs or abs(known[1] - compact) > TIME_TOLERANCE * max(known[1], compact):
            where = f"line {known[2]}" if known[2] is not None else "an earlier record"
            raise InputError(
                f"{name!r} has procs={procs}, compact={compact} here but procs={known[0]}, "
                f"compact={known[1]} on {where}",
                source=source,
                line=line,
                field=f"procs_{side}" if known[0] != procs else f"compact_{side}",
            )

    for position, (label, record) in enumerate(numbered_records):
        name_a = _cell(record, "name_A", label, source)
        if name_a is None:
            raise InputError(
                f"empty cell (record {position})", source=source, line=label, field="name_A"
            )
        name_a = str(name_a)
        register(
            name_a,
            _number(record, "procs_A", label, source, integer=True),
            _number(record, "compact_A", label, source),
            label,
            "A",
        )
        name_b = _cell(record, "name_B", label, source)
        co_ab = _number(record, "co_A_B", label, source, required=False)
        if name_b is None:
            spread[name_a] = _spread_time(record, name_a, co_ab, spread, label, source)
            continue
        name_b = str(name_b)
        register(
            name_b,
            _number(record, "procs_B", label, source, integer=True),
            _number(record, "compact_B", label, source),
            label,
            "B",
        )
        key = frozenset((name_a, name_b))
        if key in seen:
            where = f" (first on line {seen[key]})" if seen[key] is not None else ""
            raise InputError(
                f"pair {name_a}|{name_b} listed twice{where}",
                source=source,
                line=label,
                field="name_B",
            )
        seen[key] = label
        co_ba = _number(record, "co_B_A", label, source, required=False)
        co.update(_co_times(name_a, name_b, co_ab, co_ba, label))
    if not apps:
        raise InputError("no rows", source=source)
    names = list(apps)
    index = {name: i for i, name in enumerate(names)}
    matrix = np.full((len(names), len(names)), np.nan)
    for (a, b), (value, _) in co.items():
        matrix[index[a], index[b]] = value
    return Heatmap(
        names,
        [apps[n][0] for n in names],
        [apps[n][1] for n in names],
        matrix,
        [spread.get(n, np.nan) for n in names],
        default=default,
        source=source,
    )


def _csv_rows(reader: csv.DictReader, source: str):
    """(line, record) of each row; a row with fewer or more cells than the header is an error, not
    empty cells."""
    width = len(reader.fieldnames or ())
    for record in reader:
        short = [key for key, value in record.items() if key is not None and value is None]
        if short or None in record:
            cells = width - len(short) + len(record.get(None, []))
            raise InputError(
                f"row has {cells} cells, the header has {width}",
                source=source,
                line=reader.line_num,
                field=short[0] if short else None,
            )
        yield reader.line_num, record


def read_heatmap(path: str | os.PathLike, *, default: float | None = None) -> Heatmap:
    """Read a Table 4.1 heatmap CSV or a bundled preset (`cosched.data.HEATMAPS`); extra columns are
    ignored, bad cells raise InputError with line/column."""
    preset = str(path).lower() in HEATMAPS
    source = str(path).lower() if preset else str(path)  # errors name the preset, not its file
    path = Path(resolve("heatmap", path))
    # cosched.inputs: plain or gzip, UTF-8 (a byte-order mark is dropped), else InputError
    text = read_text(path)
    reader = csv.DictReader(io.StringIO(text, newline=""))
    try:
        header = [name.strip() for name in (reader.fieldnames or [])]
        missing = [column for column in COLUMNS if column not in header]
        if missing:
            raise InputError(
                f"missing column(s) {missing}; expected {list(COLUMNS)}",
                source=source,
                line=1,
                field=missing[0],
            )
        twice = [column for column in COLUMNS if header.count(column) > 1]
        if twice:
            raise InputError("column given twice", source=source, line=1, field=twice[0])
        reader.fieldnames = header
        return _build(_csv_rows(reader, source), default=default, source=source)
    except csv.Error as error:
        raise InputError(f"not a valid CSV: {error}", source=source, line=reader.line_num) from None


def write_heatmap(heatmap: Heatmap, path: str | os.PathLike) -> Path:
    """Write the Table 4.1 CSV (empty cells for unmeasured pairs); the file appears whole or not at
    all."""
    path = Path(path)
    frame = heatmap.frame
    with atomic_path(path) as tmp:
        frame.to_csv(tmp, index=False, float_format="%.10g")
    return path


def plot_heatmap(heatmap: Heatmap, path: str | os.PathLike) -> Path:
    """Applications x applications, colour = speedup of the row application next to the column
    one."""
    return save_figure(heatmap_figure(heatmap), path)


CHARACTER_WIDTH = 0.62  # a tick label character's width, in units of its font size (DejaVu Sans)


def heatmap_figure(heatmap: Heatmap):
    """The figure `plot_heatmap` writes, sized from its number of applications and the length of
    their names, so long names neither overlap nor squeeze the matrix."""
    from matplotlib.colors import TwoSlopeNorm

    plt = pyplot()

    order = np.argsort(np.array(heatmap.applications, dtype=object), kind="stable")
    values = heatmap.measured[np.ix_(order, order)]
    names = [heatmap.applications[i] for i in order]
    k = len(names)
    finite = values[np.isfinite(values)]
    low = min(float(finite.min()) if finite.size else 1.0, 0.99)
    high = max(float(finite.max()) if finite.size else 1.0, 1.01)
    font = 8 if k > 16 else 10
    labels = max(map(len, names)) * font * CHARACTER_WIDTH / 72  # inches
    cells = max(3.0, 0.45 * k)
    fig, ax = plt.subplots(figsize=(cells + labels + 2.4, cells + labels + 1.6))
    cmap = plt.get_cmap("RdYlGn").with_extremes(bad="lightgrey")
    image = ax.imshow(np.ma.masked_invalid(values), cmap=cmap, norm=TwoSlopeNorm(1.0, low, high))
    ax.set_xticks(range(k), names, rotation=90, fontsize=font)
    ax.set_yticks(range(k), names, fontsize=font)
    ax.set_xlabel("co-runner B")
    ax.set_ylabel("application A (speedup shown)")
    if k <= 16:
        for (r, c), value in np.ndenumerate(values):
            if np.isfinite(value):
                ax.text(c, r, f"{value:.2f}", ha="center", va="center", fontsize=7)
    fig.colorbar(image, ax=ax, label="speedup = compact_A / co_A_B")
    ax.set_title(f"Co-execution speedups\n({k} applications, grey = unmeasured)")
    fig.tight_layout()
    return fig


def heatmap_from_speedups(
    names, speedups, compact_times, procs, *, default: float | None = None
) -> Heatmap:
    """A heatmap from a speedup matrix (row = application, column = co-runner; NaN = unmeasured)."""
    speedups = np.asarray(speedups, dtype=np.float64)
    compact = np.asarray(compact_times, dtype=np.float64)
    if speedups.shape != (len(names), len(names)):
        raise InputError(f"speedup matrix must be {len(names)} x {len(names)}", field="speedups")
    if (speedups[~np.isnan(speedups)] <= 0).any():
        raise InputError("speedups must be positive", field="speedups")
    return Heatmap(names, procs, compact, compact[:, None] / speedups, default=default)


def heatmap_from_instance(
    instance, compact_times=None, procs=None, *, default: float | None = None
) -> Heatmap:
    """Pairs of a theory `Instance` as a heatmap: speedup of i next to j = a_i,{i,j} / a_i,{i} (002
    §3).

    Compact times default to the instance's work (time alone at speed 1), processes to 1.
    """
    n = instance.n
    compact = np.asarray(
        instance.work if compact_times is None else compact_times, dtype=np.float64
    )
    procs = np.ones(n, dtype=np.int64) if procs is None else np.asarray(procs, dtype=np.int64)
    bit = np.int64(1) << np.arange(n, dtype=np.int64)
    alone_column = instance.index(bit)
    alone = np.where(
        alone_column >= 0, instance.speeds[np.arange(n), np.maximum(alone_column, 0)], 1.0
    )
    pair_column = instance.index(bit[:, None] | bit[None, :])
    np.fill_diagonal(pair_column, -1)
    rows = np.arange(n)[:, None].repeat(n, axis=1)
    speed = instance.speeds[rows, np.maximum(pair_column, 0)]
    # 002 §3: a_ij relative to alone
    speedups = np.where(pair_column >= 0, speed / alone[:, None], np.nan)
    return heatmap_from_speedups(instance.tasks, speedups, compact, procs, default=default)


def instance_from_heatmap(heatmap: Heatmap, work=None):
    """The pairs of a heatmap as a theory `Instance`: singletons speed 1, pair speeds = speedups.

    Self-pairs (A next to another copy of A) have no combination in the model and are left out; a
    pair is included when both directions resolve (measured or mirrored, else the heatmap's
    default). Speedups above 1 break the [0, 1] bound of 002 §3: validate with monotone=False where
    needed.
    """
    from cosched.theory.instance import Instance

    k = len(heatmap)
    work = heatmap.compact_times if work is None else np.asarray(work, dtype=np.float64)
    measured = heatmap.measured
    filled = np.where(np.isnan(measured), measured.T, measured)
    if heatmap.default is not None:
        filled = np.where(np.isnan(filled), heatmap.default, filled)
    a, b = np.triu_indices(k, 1)
    keep = ~(np.isnan(filled[a, b]) | np.isnan(filled[b, a]))
    a, b = a[keep], b[keep]
    singles = np.int64(1) << np.arange(k, dtype=np.int64)
    masks = np.concatenate([singles, singles[a] | singles[b]])
    speeds = np.zeros((k, masks.size))
    speeds[np.arange(k), np.arange(k)] = 1.0
    columns = k + np.arange(a.size)
    speeds[a, columns] = filled[a, b]
    speeds[b, columns] = filled[b, a]
    return Instance(work, masks, speeds, heatmap.applications)
