"""Measurement figures: task speed vs combination size (002 Fig. 2) and time ratio vs speed ratio
(002 Fig. 4)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from cosched.outputs import pyplot, save_figure

__all__ = ["plot_speed_by_size", "plot_validation"]


def plot_speed_by_size(instance, path: str | os.PathLike, backend: str) -> Path:
    """Box plots of each task's normalised speed per combination size, one panel per task (002 Fig.
    2)."""
    plt = pyplot()
    frame = instance.to_frame()
    tasks = list(instance.tasks)
    columns = min(len(tasks), 4)
    rows = -(-len(tasks) // columns)
    fig, axes = plt.subplots(
        rows, columns, figsize=(3.2 * columns, 2.8 * rows), squeeze=False, sharey=True
    )
    for ax, task in zip(axes.flat, tasks):
        own = frame[frame["task"] == task]
        sizes = sorted(own["size"].unique())
        ax.boxplot(
            [own.loc[own["size"] == s, "speed"].to_numpy() for s in sizes],
            positions=sizes,
            widths=0.6,
        )
        ax.set_title(task)
        ax.set_xlabel("combination size")
        ax.set_ylim(0, 1.05)
    for ax in axes.flat[len(tasks) :]:
        ax.set_visible(False)
    for ax in axes[:, 0]:
        ax.set_ylabel("speed / speed alone")
    fig.suptitle(f"Task speed vs combination size\n(backend: {backend})")  # two lines fit one panel
    fig.tight_layout()
    return save_figure(fig, path)


def plot_validation(points, fits, path: str | os.PathLike, backend: str) -> Path:
    """Scatter of speed ratio against time ratio per kernel with the y = x line in red
    (002 Fig. 4).
    """
    plt = pyplot()
    kernels = list(fits["kernel"])
    fig, axes = plt.subplots(1, len(kernels), figsize=(3.4 * len(kernels), 3.2), squeeze=False)
    for ax, fit in zip(axes[0], fits.itertuples(index=False)):
        own = points[points["kernel"] == fit.kernel]
        ax.scatter(own["time_ratio"], own["speed_ratio"], s=14, alpha=0.8)
        top = float(np.nanmax([own["time_ratio"].max(), own["speed_ratio"].max(), 1.0])) * 1.05
        ax.plot([0, top], [0, top], color="red", linewidth=1, label="equal ratios")
        line = np.linspace(1.0, top, 2)
        ax.plot(
            line,
            fit.slope * line + fit.intercept,
            color="black",
            linestyle="--",
            linewidth=1,
            label=f"{fit.slope:.3f}x{fit.intercept:+.3f}, R²={fit.r2:.3f}",
        )
        ax.set_xlim(0.9, top)
        ax.set_ylim(0.9, top)
        ax.set_title(fit.kernel)
        ax.set_xlabel("time ratio (co-run / alone)")
        ax.legend(fontsize=7, loc="upper left")
    axes[0, 0].set_ylabel("speed ratio (alone / co-run)")
    # two lines fit one panel
    fig.suptitle(f"Processing time ratio vs speed ratio\n(backend: {backend})")
    fig.tight_layout()
    return save_figure(fig, path)
