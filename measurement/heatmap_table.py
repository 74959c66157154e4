"""The measured heatmap from the raw runs: medians in the thesis layout, with the spread of the
repeats.

heatmap.csv has the columns of 003 Table 4.1 (`cosched.theory.heatmap.COLUMNS`, so `--heatmap
DIR/heatmap.csv` reads it) and, after them, ``compact_A_std, compact_B_std, co_A_B_std, co_B_A_std``
(sample standard deviation of the repeats, empty below two), ``runs`` (successful repeats of the
row's co-run) and ``speedup_A_B, speedup_B_A`` (compact / co-located, 003 §4.2), as the bundled
`aris-nas` file has. Times are medians of the repeats (003 §4.2: "the median execution times from
these repeated runs"). A row without ``name_B`` holds an application spread alone (000 §2.2) in
``co_A_B``.
"""

from __future__ import annotations

import math
import os
import statistics
from pathlib import Path

from cosched.measurement.heatmap_spec import Application
from cosched.outputs import atomic_path
from cosched.theory.heatmap import COLUMNS

__all__ = ["MEASURED_COLUMNS", "heatmap_rows", "write_measured_heatmap", "median_times"]

MEASURED_COLUMNS = (
    "compact_A_std",
    "compact_B_std",
    "co_A_B_std",
    "co_B_A_std",
    "runs",
    "speedup_A_B",
    "speedup_B_A",
)


def _std(values: list[float]) -> float | None:
    return statistics.stdev(values) if len(values) >= 2 else None


def median_times(rows: list[dict]) -> dict[str, float]:
    """Median compact time of each application with at least one successful compact run."""
    compact: dict[str, list[float]] = {}
    for row in rows:
        if row["status"] == "ok" and row["mode"] == "compact":
            compact.setdefault(row["app_a"], []).append(float(row["time_a"]))
    return {name: statistics.median(values) for name, values in compact.items()}


def heatmap_rows(
    apps: list[Application], pairs: list[tuple[str, str]], rows: list[dict]
) -> list[dict]:
    """The heatmap's rows (dicts over COLUMNS + MEASURED_COLUMNS) from the successful runs among
    `rows`.

    Applications without a successful compact run are left out (with their pairs); pairs without a
    successful co-run are left out (unmeasured)."""
    compact: dict[str, list[float]] = {}
    spread: dict[str, list[float]] = {}
    co: dict[tuple[str, str], tuple[list[float], list[float]]] = {}
    for row in rows:
        if row["status"] != "ok":
            continue
        if row["mode"] == "compact":
            compact.setdefault(row["app_a"], []).append(float(row["time_a"]))
        elif row["mode"] == "spread":
            spread.setdefault(row["app_a"], []).append(float(row["time_a"]))
        else:
            times = co.setdefault((row["app_a"], row["app_b"]), ([], []))
            times[0].append(float(row["time_a"]))
            times[1].append(float(row["time_b"]))
    procs = {app.name: app.np for app in apps}
    table = []
    for app in apps:
        if app.name not in compact:
            continue
        if app.name in spread:
            c, s = statistics.median(compact[app.name]), statistics.median(spread[app.name])
            # 000 §2.2: spread-alone speedup
            table.append(
                {
                    "name_A": app.name,
                    "procs_A": app.np,
                    "compact_A": c,
                    "name_B": None,
                    "procs_B": None,
                    "compact_B": None,
                    "co_A_B": s,
                    "co_B_A": None,
                    "compact_A_std": _std(compact[app.name]),
                    "co_A_B_std": _std(spread[app.name]),
                    "runs": len(spread[app.name]),
                    "speedup_A_B": c / s,
                }
            )
    for a, b in pairs:
        if a not in compact or b not in compact or (a, b) not in co:
            continue
        times_a, times_b = co[(a, b)]
        ca, cb = statistics.median(compact[a]), statistics.median(compact[b])
        ta, tb = statistics.median(times_a), statistics.median(times_b)
        # 003 §4.2
        table.append(
            {
                "name_A": a,
                "procs_A": procs[a],
                "compact_A": ca,
                "name_B": b,
                "procs_B": procs[b],
                "compact_B": cb,
                "co_A_B": ta,
                "co_B_A": tb,
                "compact_A_std": _std(compact[a]),
                "compact_B_std": _std(compact[b]),
                "co_A_B_std": _std(times_a),
                "co_B_A_std": _std(times_b),
                "runs": len(times_a),
                "speedup_A_B": ca / ta,
                "speedup_B_A": cb / tb,
            }
        )
    return table


def _cell(value) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float):
        return f"{value:.6g}" if abs(value) < 1e-3 else f"{value:.10g}"
    return str(value)


def write_measured_heatmap(table: list[dict], path: str | os.PathLike) -> Path:
    """Write heatmap.csv (the thesis layout plus the spread columns), whole or not at all."""
    import csv

    path = Path(path)
    header = [*COLUMNS, *MEASURED_COLUMNS]
    with atomic_path(path) as tmp, open(tmp, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(header)
        for row in table:
            writer.writerow([_cell(row.get(column)) for column in header])
    return path
