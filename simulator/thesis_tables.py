"""Thesis 003 Tables 6.1/6.2 next to ours: the published values, the comparison table and its gaps.

`write_thesis_comparison` turns the summary of ``experiment-sim --preset thesis`` into a table
thesis value / ours / difference for every scheduler and metric of Tables 6.1 and 6.2, with the gaps
the reproduction is judged by (means over the eight co-schedulers).
"""

from __future__ import annotations

import os
from pathlib import Path

from cosched.outputs import atomic_path

__all__ = [
    "THESIS_TABLE",
    "THESIS_METRICS",
    "THESIS_COSCHEDULERS",
    "thesis_comparison",
    "thesis_gaps",
    "thesis_markdown",
    "write_thesis_comparison",
    "SLOWDOWN_GAP_TARGET",
    "SPEEDUP_GAP_TARGET",
    "EASY_CO_SPEEDUP_TOLERANCE",
]

THESIS_METRICS = (
    "mean_slowdown",
    "mean_slowdown_pp",
    "slowdown_counts_pct",
    "utilization",
    "mean_job_speedup",
    "weighted_mean_job_speedup",
    "makespan_speedup",
)
# 003 Tables 6.1 (part 1) and 6.2 (part 2), in THESIS_METRICS order; slowdown counts in %
THESIS_TABLE = {
    "sjf": (20.6, 0.101, 0.00, 0.947, 1.000, 1.000, 1.028),
    "sjf-co": (23.6, 0.118, 17.51, 0.875, 1.062, 1.049, 0.995),
    "sjf-filler": (27.7, 0.109, 22.94, 0.964, 1.074, 1.055, 1.104),
    "filler": (48.1, 0.189, 29.70, 0.965, 1.065, 1.040, 1.086),
    "pop-filler": (63.5, 0.265, 23.78, 0.971, 1.077, 1.038, 1.093),
    "popularity": (64.3, 0.308, 10.10, 0.932, 1.047, 1.020, 1.029),
    "easy": (66.5, 0.372, 0.00, 0.926, 1.000, 1.000, 1.006),
    "easy-co": (67.5, 0.368, 23.82, 0.904, 1.097, 1.060, 1.040),
    "conservative": (80.2, 0.463, 0.00, 0.922, 1.000, 1.000, 1.000),
    "fcfs": (82.9, 0.480, 0.00, 0.899, 1.000, 1.000, 0.976),
    "ljf-co": (109.6, 0.599, 23.62, 0.939, 1.083, 1.042, 1.063),
    "laf-co": (125.7, 0.745, 21.59, 0.937, 1.072, 1.049, 1.065),
    "ljf": (137.2, 0.812, 0.00, 0.960, 1.000, 1.000, 1.043),
}
THESIS_COSCHEDULERS = (
    "sjf-co",
    "sjf-filler",
    "filler",
    "pop-filler",
    "popularity",
    "easy-co",
    "ljf-co",
    "laf-co",
)
SLOWDOWN_GAP_TARGET = 0.12  # mean |ours - thesis| / thesis of the co-schedulers' mean slowdown
SPEEDUP_GAP_TARGET = 0.015  # mean |ours - thesis| of the co-schedulers' mean job speedup
EASY_CO_SPEEDUP_TOLERANCE = 0.02  # |ours - 1.097| for EASY-Co's mean job speedup


def thesis_comparison(summary):
    """One row per (scheduler, metric) of Tables 6.1/6.2 that the summary has: thesis, ours,
    ours_std, difference."""
    import pandas as pd

    rows = []
    for scheduler, values in THESIS_TABLE.items():
        if scheduler not in summary.index:
            continue
        row = summary.loc[scheduler]
        for metric, thesis in zip(THESIS_METRICS, values):
            ours = float(row[metric])
            std = row.get(f"{metric}_std")
            rows.append(
                {
                    "scheduler": scheduler,
                    "metric": metric,
                    "thesis": thesis,
                    "ours": ours,
                    "ours_std": None if std is None else float(std),
                    "difference": ours - thesis,
                }
            )
    return pd.DataFrame(
        rows, columns=["scheduler", "metric", "thesis", "ours", "ours_std", "difference"]
    )


def thesis_gaps(comparison) -> dict:
    """The reproduction's yardsticks over the eight co-schedulers present: mean relative gap of the
    mean slowdown, mean absolute gap of the mean job speedup, EASY-Co's mean job speedup; and
    whether each meets its target (None where a scheduler is missing)."""
    co = comparison[comparison["scheduler"].isin(THESIS_COSCHEDULERS)]
    slowdown = co[co["metric"] == "mean_slowdown"]
    speedup = co[co["metric"] == "mean_job_speedup"]
    easy_co = speedup[speedup["scheduler"] == "easy-co"]["ours"]
    slowdown_gap = (
        float((slowdown["difference"].abs() / slowdown["thesis"]).mean()) if len(slowdown) else None
    )
    speedup_gap = float(speedup["difference"].abs().mean()) if len(speedup) else None
    easy_co_speedup = float(easy_co.iloc[0]) if len(easy_co) else None
    complete = int(slowdown.shape[0]) == len(THESIS_COSCHEDULERS)
    return {
        "coschedulers": int(slowdown.shape[0]),
        "mean_slowdown_relative_gap": slowdown_gap,
        "mean_job_speedup_gap": speedup_gap,
        "easy_co_mean_job_speedup": easy_co_speedup,
        "slowdown_target_met": _met(slowdown_gap, SLOWDOWN_GAP_TARGET) if complete else None,
        "speedup_target_met": _met(speedup_gap, SPEEDUP_GAP_TARGET) if complete else None,
        "easy_co_target_met": None
        if easy_co_speedup is None
        else abs(easy_co_speedup - THESIS_TABLE["easy-co"][4]) <= EASY_CO_SPEEDUP_TOLERANCE,
    }


def _met(gap: float | None, target: float) -> bool | None:
    """Whether a gap is within its target; None without a gap (no such metric in the runs)."""
    return None if gap is None else gap <= target


def thesis_markdown(comparison, gaps: dict) -> str:
    """Per scheduler, each metric as ``ours / thesis (difference)``, then the gap lines."""
    labels = {
        "mean_slowdown": ("mean slowdown", "{:.1f}"),
        "mean_slowdown_pp": ("sld pp", "{:.3f}"),
        "slowdown_counts_pct": ("slowdown %", "{:.2f}"),
        "utilization": ("utilization", "{:.3f}"),
        "mean_job_speedup": ("mean job speedup", "{:.3f}"),
        "weighted_mean_job_speedup": ("weighted job speedup", "{:.3f}"),
        "makespan_speedup": ("makespan speedup", "{:.3f}"),
    }
    lines = [
        "Each cell: ours / thesis (ours - thesis); ours = mean over the experiments "
        "(their spread is in summary.csv and tables.md).",
        "",
        "| scheduler | " + " | ".join(label for label, _ in labels.values()) + " |",
        "|---" * (len(labels) + 1) + "|",
    ]
    for scheduler, rows in comparison.groupby("scheduler", sort=False):
        cells = {row.metric: row for row in rows.itertuples()}
        lines.append(
            f"| {scheduler} | "
            + " | ".join(
                f"{fmt.format(cells[m].ours)} / {fmt.format(cells[m].thesis)} "
                f"({_signed(fmt, cells[m].difference)})"
                for m, (_, fmt) in labels.items()
            )
            + " |"
        )

    def verdict(met):
        return "n/a" if met is None else ("met" if met else "NOT met")

    lines += ["", f"Over the {gaps['coschedulers']} co-schedulers:", ""]
    if gaps["mean_slowdown_relative_gap"] is not None:
        lines.append(
            "- mean slowdown, mean |ours - thesis| / thesis: "
            f"{gaps['mean_slowdown_relative_gap']:.1%} "
            f"(target <= {SLOWDOWN_GAP_TARGET:.0%}: {verdict(gaps['slowdown_target_met'])})"
        )
        lines.append(
            f"- mean job speedup, mean |ours - thesis|: {gaps['mean_job_speedup_gap']:.4f} "
            f"(target <= {SPEEDUP_GAP_TARGET}: {verdict(gaps['speedup_target_met'])})"
        )
    if gaps["easy_co_mean_job_speedup"] is not None:
        lines.append(
            f"- EASY-Co mean job speedup: {gaps['easy_co_mean_job_speedup']:.3f} against "
            f"{THESIS_TABLE['easy-co'][4]} (target within {EASY_CO_SPEEDUP_TOLERANCE}: "
            f"{verdict(gaps['easy_co_target_met'])})"
        )
    return "\n".join(lines) + "\n"


def _signed(fmt: str, value: float) -> str:
    """`value` in format `fmt` with its sign; a difference that rounds to zero is +0."""
    text = fmt.replace("{:", "{:+").format(value)
    return text.replace("-", "+") if float(text) == 0 else text


def write_thesis_comparison(summary, out: str | os.PathLike) -> dict:
    """thesis.csv (long table) and thesis.md (ours / thesis per cell, gap lines) into `out`; returns
    the gaps."""
    out = Path(out)
    comparison = thesis_comparison(summary)
    gaps = thesis_gaps(comparison)
    with atomic_path(out / "thesis.csv") as tmp:
        comparison.to_csv(tmp, index=False)
    with atomic_path(out / "thesis.md") as tmp:
        tmp.write_text(thesis_markdown(comparison, gaps))
    return gaps
