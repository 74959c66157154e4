"""Figures of the experiment results like 002 §8: Fig. 6 (ratio vs α per acquisition and k), Fig. 7
(best k).

The statistic plotted, the mean ratio over the instances of an α range, is our choice: 002 does not
name it.
"""

from __future__ import annotations

import os
from pathlib import Path

from cosched.outputs import pyplot, save_figure

__all__ = ["plot_fig6", "plot_fig7", "fig7_table", "alpha_labels"]

SEARCH_NAMES = {"ucb": "UCB", "pi": "PI", "ei": "EI", "fcs": "FCS"}


def alpha_labels(frame):
    """'[lo, hi]' labels of the α ranges in ascending order of lo (then hi)."""
    ranges = frame[["alpha_lo", "alpha_hi"]].drop_duplicates().sort_values(["alpha_lo", "alpha_hi"])
    return [(lo, hi, f"[{lo:.2f}, {hi:.2f}]") for lo, hi in ranges.itertuples(index=False)]


def _mean_ratio(frame):
    return (
        frame.groupby(["alpha_lo", "alpha_hi", "strategy", "k"], dropna=False)["ratio"]
        .mean()
        .reset_index()
    )


def fig7_table(frame):
    """Lowest mean competitive ratio over k per α range and strategy (FCS included), with the k
    reaching it."""
    means = _mean_ratio(frame)
    means = means[means["strategy"] != "opt"]
    best = means.loc[means.groupby(["alpha_lo", "alpha_hi", "strategy"])["ratio"].idxmin()]
    return best.rename(columns={"ratio": "mean_ratio", "k": "best_k"}).reset_index(drop=True)


def plot_fig6(frame, path: str | os.PathLike) -> Path:
    """One panel per acquisition: mean competitive ratio vs α range, one line per k (002 §8, Fig.
    6)."""
    plt = pyplot()

    means = _mean_ratio(frame)
    labels = alpha_labels(frame)
    acquisitions = [name for name in ("ucb", "pi", "ei") if name in set(means["strategy"])]
    figure, axes = plt.subplots(
        1, len(acquisitions), figsize=(5 * len(acquisitions), 4.2), sharey=True, squeeze=False
    )
    for axis, name in zip(axes[0], acquisitions):
        rows = means[means["strategy"] == name]
        for k, by_k in rows.groupby("k"):
            ratio = by_k.set_index(["alpha_lo", "alpha_hi"])["ratio"]
            axis.plot(
                range(len(labels)),
                [ratio.get((lo, hi)) for lo, hi, _ in labels],
                marker="o",
                label=f"k={k:g}",
            )
        axis.set_title(SEARCH_NAMES[name])
        axis.set_xticks(
            range(len(labels)), [label for *_, label in labels], rotation=60, fontsize=8
        )
        axis.set_xlabel("α range")
        axis.grid(alpha=0.3)
        axis.legend(fontsize=8)
    axes[0][0].set_ylabel("mean competitive ratio (to OPT)")
    figure.tight_layout()
    return save_figure(figure, path)


def plot_fig7(frame, path: str | os.PathLike) -> Path:
    """Lowest mean competitive ratio over k per α range for each strategy, FCS included (002 §8,
    Fig. 7)."""
    plt = pyplot()

    best = fig7_table(frame)
    labels = alpha_labels(frame)
    figure, axis = plt.subplots(figsize=(7, 4.2))
    for name in ("fcs", "ucb", "pi", "ei"):
        rows = best[best["strategy"] == name].set_index(["alpha_lo", "alpha_hi"])["mean_ratio"]
        if rows.empty:
            continue
        axis.plot(
            range(len(labels)),
            [rows.get((lo, hi)) for lo, hi, _ in labels],
            marker="o",
            label=SEARCH_NAMES[name],
        )
    axis.set_xticks(range(len(labels)), [label for *_, label in labels], rotation=60, fontsize=8)
    axis.set_xlabel("α range")
    axis.set_ylabel("lowest mean competitive ratio over k")
    axis.grid(alpha=0.3)
    axis.legend()
    figure.tight_layout()
    return save_figure(figure, path)
