"""PNG plots of one run: Gantt chart (node x time), utilization and queue length over time, wait
times."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np

from cosched.outputs import atomic_path, pyplot
from cosched.simulator.metrics import step_series

__all__ = [
    "write_plots",
    "gantt",
    "utilization_queue",
    "wait_distribution",
    "compare_plot",
    "GANTT_MAX_JOBS",
    "binned_mean",
]

GANTT_MAX_JOBS = 5000  # above this the Gantt chart is skipped (one rectangle per job and node)
HOUR = 3600.0
# a step series with more steps than this is drawn as its mean over as many equal time bins (a
# year of steps drawn one by one fills the plot as a solid block)
SERIES_BINS = 400


def binned_mean(times: np.ndarray, values: np.ndarray, bins: int) -> tuple[np.ndarray, np.ndarray]:
    """The time-weighted mean of a step series (`values[i]` from `times[i]` to `times[i + 1]`) over
    `bins` equal intervals of its span: (left edges, means)."""
    areas = np.concatenate([[0.0], np.cumsum(values[:-1] * np.diff(times))])
    edges = np.linspace(times[0], times[-1], bins + 1)
    # the integral is piecewise linear between the steps, so interpolating it is exact
    return edges[:-1], np.diff(np.interp(edges, times, areas)) / np.diff(edges)


def _drawn(times: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray, bool]:
    """The series to draw: as it is, or `binned_mean` over SERIES_BINS when it has more steps."""
    if times.size <= SERIES_BINS or times[-1] <= times[0]:
        return times, values, False
    left, means = binned_mean(times.astype(float), values.astype(float), SERIES_BINS)
    return left, means, True


def _figure(width=9.0, height=4.0):
    plt = pyplot()
    return plt, plt.subplots(figsize=(width, height))


def gantt(result, path) -> None:
    """Each job as bars on its nodes from start to end (hours since the first submission)."""
    from matplotlib.collections import PolyCollection

    plt, (figure, axes) = _figure(10, 5)
    origin = float(result.workload.submit.min())
    counts = np.fromiter((n.size for n in result.nodes), np.int64, len(result.nodes))
    job = np.repeat(np.arange(counts.size), counts)
    node = np.concatenate(result.nodes) if counts.size else np.zeros(0, np.int64)
    x0 = (result.start[job] - origin) / HOUR
    x1 = (result.end[job] - origin) / HOUR
    verts = np.stack(
        [
            np.c_[x0, node - 0.4],
            np.c_[x1, node - 0.4],
            np.c_[x1, node + 0.4],
            np.c_[x0, node + 0.4],
        ],
        axis=1,
    )
    colours = plt.get_cmap("tab20")(job % 20)
    # matplotlib takes an (n, 4, 2) array of polygons; its stub says Sequence only
    polygons = PolyCollection(verts, facecolors=colours, edgecolors="none")  # type: ignore[arg-type]
    axes.add_collection(polygons)
    axes.set_xlim(0, max(float(x1.max()) if x1.size else 1.0, 1e-9))
    axes.set_ylim(-0.5, result.platform.nodes - 0.5)
    axes.set_xlabel("time since first submission [h]")
    axes.set_ylabel("node")
    axes.set_title(f"Gantt chart: {result.scheduler} on {result.platform.name}")
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)


def utilization_queue(result, path) -> None:
    """Busy cores share and waiting-queue length over time."""
    plt, (figure, axes) = _figure()
    w = result.workload
    origin = float(w.submit.min())
    times, busy, binned = _drawn(*step_series(result.start, result.end, w.cores))
    axes.step(
        (times - origin) / HOUR,
        busy / result.platform.total_cores,
        where="post",
        lw=0.8,
        color="tab:blue",
    )
    axes.set_ylabel("utilization (busy cores)", color="tab:blue")
    axes.set_ylim(0, 1.05)
    queue_axes = axes.twinx()
    queue_times, queue, queue_binned = _drawn(*step_series(w.submit, result.start))
    queue_axes.step((queue_times - origin) / HOUR, queue, where="post", lw=0.8, color="tab:orange")
    queue_axes.set_ylabel("waiting jobs", color="tab:orange")
    means = binned or queue_binned
    axes.set_xlabel(
        "time since first submission [h]"
        + (f" (means over {SERIES_BINS} equal intervals)" if means else "")
    )
    axes.set_title(f"Utilization and queue length: {result.scheduler}")
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)


def wait_distribution(result, path) -> None:
    """Histogram of wait times (log-spaced bins, zero waits counted apart)."""
    plt, (figure, axes) = _figure(7, 4)
    wait = result.start - result.workload.submit
    positive = wait[wait > 0]
    if positive.size:
        bins = np.logspace(np.log10(max(positive.min(), 1e-3)), np.log10(positive.max()) + 1e-9, 40)
        axes.hist(positive, bins=bins, color="tab:blue")
        axes.set_xscale("log")
    axes.set_xlabel("wait time [s]")
    axes.set_ylabel("jobs")
    axes.set_title(
        f"Wait times: {result.scheduler} "
        f"({int((wait <= 0).sum())} of {wait.size} jobs did not wait)"
    )
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)


def compare_plot(frame, path) -> Path:
    """`cosched compare --plots`: makespan, mean wait and utilization per scheduler, side by
    side."""
    from cosched.cli_options import time_unit
    from cosched.outputs import save_figure

    plt = pyplot()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    names = [str(name) for name in frame["scheduler"]]
    unit, scale = time_unit([float(v) for v in frame["makespan"]])
    panels = [
        ("makespan", f"makespan [{unit}]", scale),
        ("mean_wait", "mean wait [s]", 1.0),
        ("utilization", "utilization", 1.0),
    ]
    figure, axes = plt.subplots(1, len(panels), figsize=(4 + 1.1 * len(names), 3.8))
    for axis, (key, label, divisor) in zip(axes, panels):
        values = np.asarray(frame[key], dtype=float) / divisor
        axis.bar(range(len(names)), values, color="tab:blue")
        axis.set_xticks(range(len(names)), names, rotation=45, ha="right")
        axis.set_ylabel(label)
    figure.suptitle(
        f"{frame.attrs.get('jobs', len(frame))} jobs on {frame.attrs.get('platform', '')}"
    )
    figure.tight_layout()
    return save_figure(figure, path, dpi=120)


def write_plots(result, folder) -> list[Path]:
    """All plots of one run into `folder` (Gantt only up to GANTT_MAX_JOBS jobs); returns the
    paths."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    plots = [("utilization_queue.png", utilization_queue), ("wait_times.png", wait_distribution)]
    if len(result.workload) <= GANTT_MAX_JOBS:
        plots.insert(0, ("gantt.png", gantt))
    else:
        warnings.warn(
            f"gantt.png not drawn: {len(result.workload):,} jobs, more than {GANTT_MAX_JOBS:,} "
            f"(a bar per job and node would hide each other); the other plots are written",
            stacklevel=2,
        )
    written = []
    for name, function in plots:
        with atomic_path(folder / name) as path:
            function(result, path)
        written.append(folder / name)
    return written
