"""The spread of a measured heatmap's repeats: optional columns beside the thesis layout, and their
plot.

`cosched measure-heatmap` writes, after the 003 Table 4.1 columns, the standard deviations of the
repeats (``compact_A_std, compact_B_std, co_A_B_std, co_B_A_std``). `read_spread` turns them into
the standard deviation of each directed speedup compact_A / co_A_B by first-order error propagation;
a heatmap without those columns has no spread (None). `plot_heatmap_spread` draws the speedups
beside their relative spread.
"""

from __future__ import annotations

import csv
import io
import math
import os
from pathlib import Path

import numpy as np

from cosched.data import resolve
from cosched.inputs import read_text
from cosched.outputs import pyplot, save_figure
from cosched.theory.heatmap import Heatmap

__all__ = ["SPREAD_COLUMNS", "read_spread", "plot_heatmap_spread"]

SPREAD_COLUMNS = ("compact_A_std", "compact_B_std", "co_A_B_std", "co_B_A_std")


def _float(text) -> float:
    try:
        value = float(text)
    except (TypeError, ValueError):
        return math.nan
    return value if math.isfinite(value) and value >= 0 else math.nan


def read_spread(path: str | os.PathLike, heatmap: Heatmap) -> np.ndarray | None:
    """Standard deviation of each directed speedup S[a, b] of `heatmap` (read from `path`), NaN
    where the file gives none; None when the file has no spread columns. Bad cells read as NaN: the
    heatmap itself was validated by `read_heatmap`."""
    text = read_text(resolve("heatmap", path))
    reader = csv.DictReader(io.StringIO(text, newline=""))
    header = [name.strip() for name in (reader.fieldnames or [])]
    if not all(column in header for column in SPREAD_COLUMNS):
        return None
    reader.fieldnames = header
    k = len(heatmap)
    compact_std = np.full(k, np.nan)
    co_std = np.full((k, k), np.nan)
    for record in reader:
        a, b = (record.get("name_A") or "").strip(), (record.get("name_B") or "").strip()
        if a not in heatmap.applications or (b and b not in heatmap.applications):
            continue
        i = heatmap.index(a)
        compact_std[i] = _float(record["compact_A_std"])
        if not b:
            continue
        j = heatmap.index(b)
        compact_std[j] = _float(record["compact_B_std"])
        ab, ba = _float(record["co_A_B_std"]), _float(record["co_B_A_std"])
        if i == j:  # two copies of A: the heatmap's time is their mean
            co_std[i, i] = math.sqrt((ab * ab + ba * ba) / 4)
        else:
            co_std[i, j], co_std[j, i] = ab, ba
    speedup = heatmap.measured
    compact = heatmap.compact_times
    # first-order error propagation of S = compact_a / co_a_b (the speedup of 003 §4.2)
    relative = np.sqrt((compact_std / compact)[:, None] ** 2 + (co_std / heatmap.co_times) ** 2)
    return speedup * relative


def plot_heatmap_spread(heatmap: Heatmap, spread: np.ndarray, path: str | os.PathLike) -> Path:
    """Two panels: the speedup of the row application next to the column one, and its spread over
    the repeats (standard deviation relative to the speedup, in percent)."""
    from matplotlib.colors import TwoSlopeNorm

    plt = pyplot()
    order = np.argsort(np.array(heatmap.applications, dtype=object), kind="stable")
    values = heatmap.measured[np.ix_(order, order)]
    relative = 100 * spread[np.ix_(order, order)] / values
    names = [heatmap.applications[i] for i in order]
    k = len(names)
    finite = values[np.isfinite(values)]
    low = min(float(finite.min()) if finite.size else 1.0, 0.99)
    high = max(float(finite.max()) if finite.size else 1.0, 1.01)
    size = max(4.0, 0.45 * k + 2)
    fig, (left, right) = plt.subplots(1, 2, figsize=(2 * size + 2, size))
    speed_map = left.imshow(
        np.ma.masked_invalid(values),
        norm=TwoSlopeNorm(1.0, low, high),
        cmap=plt.get_cmap("RdYlGn").with_extremes(bad="lightgrey"),
    )
    spread_map = right.imshow(
        np.ma.masked_invalid(relative),
        cmap=plt.get_cmap("Greys").with_extremes(bad="white"),
        vmin=0,
    )
    dark = np.nanmax(relative) / 2 if np.isfinite(relative).any() else math.inf
    for axis, matrix, fmt in ((left, values, "{:.2f}"), (right, relative, "{:.1f}")):
        axis.set_xticks(range(k), names, rotation=90, fontsize=8 if k > 16 else 10)
        axis.set_yticks(range(k), names, fontsize=8 if k > 16 else 10)
        axis.set_xlabel("co-runner B")
        if k <= 16:
            for (r, c), value in np.ndenumerate(matrix):
                if np.isfinite(value):
                    colour = "white" if axis is right and value > dark else "black"
                    axis.text(
                        c, r, fmt.format(value), ha="center", va="center", fontsize=7, color=colour
                    )
    left.set_ylabel("application A")
    left.set_title("speedup = compact_A / co_A_B")
    right.set_title("spread of the repeats [% of the speedup]")
    fig.colorbar(speed_map, ax=left)
    fig.colorbar(spread_map, ax=right)
    fig.tight_layout()
    return save_figure(fig, path)
