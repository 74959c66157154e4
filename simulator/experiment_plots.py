"""Plots of an experiment grid (003 ch. 6): boxplots, Pareto plots, metric correlations, speedup
over time."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from cosched.outputs import pyplot, save_figure

__all__ = [
    "BOX_METRICS",
    "PARETO_PAIRS",
    "pareto_front",
    "boxplot",
    "pareto_plot",
    "correlation_plot",
    "speedup_over_time",
    "draw_all",
]

BOX_METRICS = {  # metric -> label (003 Figs. 6.1-6.8)
    "makespan_speedup": "makespan speedup",
    "mean_slowdown": "mean slowdown",
    "mean_job_speedup": "mean job speedup",
    "weighted_mean_job_speedup": "weighted mean job speedup",
    "mean_slowdown_pp": "mean slowdown per processor",
    "slowdown_counts": "slowdown counts (share of jobs)",
    "utilization": "utilization",
}
SHORT_LABELS = {
    "makespan_speedup": "makespan sp.",
    "mean_slowdown": "slowdown",
    "mean_job_speedup": "job sp.",
    "weighted_mean_job_speedup": "weighted job sp.",
    "mean_slowdown_pp": "slowdown pp",
    "slowdown_counts": "slowdown counts",
    "utilization": "utilization",
}
PARETO_PAIRS = (  # (x, maximise x, y, maximise y), 003 Figs. 6.11-6.13
    ("makespan_speedup", True, "mean_slowdown", False),
    ("makespan_speedup", True, "slowdown_counts", False),
    ("slowdown_counts", False, "mean_slowdown", False),
)
CORRELATION_METHODS = ("pearson", "kendall", "spearman")  # 003 §6.4
PLOT_DPI = 100
TIME_BINS = 20  # bins of the job-speedup time distribution (003 Fig. 6.4)


def pareto_front(x: np.ndarray, y: np.ndarray, maximize_x: bool, maximize_y: bool) -> np.ndarray:
    """True for points no other point dominates (at least as good in both objectives, better in
    one)."""
    a = np.where(maximize_x, x, -x)
    b = np.where(maximize_y, y, -y)
    at_least = (a[None, :] >= a[:, None]) & (b[None, :] >= b[:, None])
    better = (a[None, :] > a[:, None]) | (b[None, :] > b[:, None])
    return np.asarray(~(at_least & better).any(axis=1))


def _schedulers(runs) -> list[str]:
    return list(dict.fromkeys(runs["scheduler"]))


def boxplot(runs, metric: str, path: Path) -> Path:
    plt = pyplot()
    names = _schedulers(runs)
    fig, ax = plt.subplots(figsize=(max(6, 0.6 * len(names) + 2), 4))
    ax.boxplot([runs.loc[runs["scheduler"] == s, metric].to_numpy() for s in names])
    ax.set_xticks(
        range(1, len(names) + 1), names
    )  # works across matplotlib versions (labels= was renamed)
    ax.set_ylabel(BOX_METRICS.get(metric, metric))
    ax.set_title(
        f"{BOX_METRICS.get(metric, metric)} over {runs['experiment'].nunique()} experiments"
    )
    ax.tick_params(axis="x", rotation=45)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    return save_figure(fig, path, dpi=PLOT_DPI)


def pareto_plot(runs, x: str, maximize_x: bool, y: str, maximize_y: bool, path: Path) -> Path:
    """One point per run, coloured by scheduler; the non-dominated runs are circled and joined."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 5))
    cmap = plt.get_cmap("tab20")
    for i, scheduler in enumerate(_schedulers(runs)):
        part = runs[runs["scheduler"] == scheduler]
        ax.scatter(part[x], part[y], s=22, color=cmap(i % 20), label=scheduler)
    xs, ys = runs[x].to_numpy(float), runs[y].to_numpy(float)
    front = pareto_front(xs, ys, maximize_x, maximize_y)
    order = np.argsort(xs[front])
    ax.plot(xs[front][order], ys[front][order], "k--", linewidth=1)
    ax.scatter(
        xs[front], ys[front], s=90, facecolors="none", edgecolors="black", label="non-dominated"
    )
    ax.set_xlabel(f"{BOX_METRICS.get(x, x)}, {'higher' if maximize_x else 'lower'} is better")
    ax.set_ylabel(f"{BOX_METRICS.get(y, y)}, {'higher' if maximize_y else 'lower'} is better")
    ax.set_title(f"Pareto plot: {BOX_METRICS.get(y, y)} vs {BOX_METRICS.get(x, x)}")
    ax.legend(fontsize=7, ncol=2)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return save_figure(fig, path, dpi=PLOT_DPI)


def correlation_plot(runs, path: Path) -> Path:
    """Pearson, Kendall and Spearman correlations between the metrics over all runs (003 §6.4)."""
    plt = pyplot()
    metrics = [m for m in BOX_METRICS if m in runs and runs[m].nunique() > 1]
    labels = [SHORT_LABELS[m] for m in metrics]
    fig, axes = plt.subplots(1, 3, figsize=(16, 5.5), layout="constrained")
    for ax, method in zip(axes, CORRELATION_METHODS):
        matrix = runs[metrics].corr(method=method).to_numpy()
        image = ax.imshow(matrix, cmap="coolwarm", vmin=-1, vmax=1)
        ax.set_xticks(range(len(metrics)), labels, rotation=45, ha="right", fontsize=9)
        ax.set_yticks(range(len(metrics)), labels if ax is axes[0] else [], fontsize=9)
        for (r, c), value in np.ndenumerate(matrix):
            ax.text(c, r, f"{value:.2f}", ha="center", va="center", fontsize=7)
        ax.set_title(method.capitalize())
    fig.colorbar(image, ax=axes, shrink=0.7)
    return save_figure(fig, path, dpi=PLOT_DPI)


def speedup_over_time(jobs, scheduler: str, path: Path, bins: int = TIME_BINS) -> Path:
    """Job speedups by start time: per-bin means (red) and the cumulative mean (black dotted), 003
    Fig. 6.4."""
    plt = pyplot()
    start, speedup = jobs["start"].to_numpy(float), jobs["speedup"].to_numpy(float)
    edges = np.linspace(start.min(), start.max() + 1e-9, bins + 1)
    which = np.clip(np.digitize(start, edges) - 1, 0, bins - 1)
    counts = np.bincount(which, minlength=bins)
    sums = np.bincount(which, weights=speedup, minlength=bins)
    centres = (edges[:-1] + edges[1:]) / 2
    has = counts > 0
    fig, ax = plt.subplots(figsize=(8, 4))
    ax.scatter(start, speedup, s=6, alpha=0.3, color="tab:blue", label="job speedup")
    ax.scatter(
        centres[has], sums[has] / counts[has], color="red", marker="_", s=300, label="bin mean"
    )
    ax.plot(
        centres[has],
        (np.cumsum(sums) / np.maximum(np.cumsum(counts), 1))[has],
        "k:",
        label="cumulative mean",
    )
    ax.axhline(1.0, color="grey", linewidth=0.8)
    ax.set_xlabel("job start time [s]")
    ax.set_ylabel("job speedup (compact / actual)")
    ax.set_title(f"Time distribution of job speedup ({scheduler}, experiment 0)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return save_figure(fig, path, dpi=PLOT_DPI)


def draw_all(
    runs, jobs: dict, directory: Path, time_bins: int = TIME_BINS, workers: int = 1
) -> list[Path]:
    """Every plot of the grid into `directory`; the time distribution for Popularity (else a
    co-scheduler).

    workers: processes drawing the figures side by side (each figure is drawn whole by one of
    them, so the files are those one process writes); 1 draws them in this process.
    """
    from cosched.simulator.schedulers import COSCHEDULERS

    directory = Path(directory)
    figures: list[tuple] = [(boxplot, runs, m, directory / f"box_{m}.png") for m in BOX_METRICS]
    figures += [
        (pareto_plot, runs, x, mx, y, my, directory / f"pareto_{y}_vs_{x}.png")
        for x, mx, y, my in PARETO_PAIRS
    ]
    if runs["experiment"].nunique() * runs["scheduler"].nunique() > 2:
        figures.append((correlation_plot, runs, directory / "correlation.png"))
    chosen = next((s for s in ("popularity",) + COSCHEDULERS if s in jobs), None)
    if chosen is not None:
        path = directory / f"speedup_time_{chosen}.png"
        figures.append((speedup_over_time, jobs[chosen], chosen, path, time_bins))
    if workers <= 1:
        return [draw(*arguments) for draw, *arguments in figures]
    from cosched.processes import pool_results

    pyplot()  # imported once here, not once per forked process
    written = dict(pool_results(_draw, enumerate(figures), workers))
    return [written[index] for index in range(len(figures))]


def _draw(index: int, figure: tuple) -> tuple[int, Path]:
    """One figure of `draw_all` in a worker process, with its position in the list."""
    draw, *arguments = figure
    return index, draw(*arguments)
