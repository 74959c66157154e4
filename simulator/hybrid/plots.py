"""Plots of the hybrid experiment (004 Figs. 6-8 style) and the node timeline of one small run
(004 Fig. 2)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from cosched.outputs import pyplot, save_figure

if TYPE_CHECKING:
    import pandas as pd

    from cosched.simulator.result import SimulationResult

__all__ = ["experiment_plots", "timeline"]

TYPE_COLUMNS = (
    ("on-demand", "turnaround_on_demand"),
    ("rigid", "turnaround_rigid"),
    ("malleable", "turnaround_malleable"),
)
SWEEP_METRICS = (
    ("turnaround [h]", "turnaround_hours", 1),
    ("rigid turnaround [h]", "turnaround_rigid", 1),
    ("utilisation [%]", "utilization_useful", 100),
    ("instant start [%]", "instant_start_ratio", 100),
    ("preempted rigid [%]", "preemption_ratio_rigid", 100),
    ("preempted malleable [%]", "preemption_ratio_malleable", 100),
)


def _bars(
    axis: Any,
    main: pd.DataFrame,
    columns: Sequence[str],
    labels: Sequence[str],
    scale: float = 1.0,
) -> None:
    mechanisms = [m for m in main.index]
    width = 0.8 / len(columns)
    x = np.arange(len(mechanisms))
    for k, (column, label) in enumerate(zip(columns, labels)):
        axis.bar(
            x + k * width,
            main[column] * scale,
            width,
            yerr=main[f"{column}_std"] * scale,
            label=label,
            capsize=2,
        )
    axis.set_xticks(x + width * (len(columns) - 1) / 2, mechanisms, rotation=30)
    # beside the bars: it covers no error bar
    axis.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0))


def experiment_plots(runs: pd.DataFrame, summary: pd.DataFrame, folder: str | Path) -> list[Path]:
    """turnaround_by_type.png, preemption_ratio.png and, if swept, notice_sweep.png and
    checkpoint_sweep.png."""
    plt = pyplot()
    folder = Path(folder)
    written = []
    main = summary.xs("main", level="sweep").droplevel("value")
    figure, axis = plt.subplots(figsize=(8, 4))
    _bars(axis, main, [c for _, c in TYPE_COLUMNS], [t for t, _ in TYPE_COLUMNS])
    axis.set_ylabel("mean turnaround [h]")
    axis.set_title("Turnaround by job type (mean ± std over the typings)")
    figure.tight_layout()
    written.append(save_figure(figure, folder / "turnaround_by_type.png"))
    figure, axis = plt.subplots(figsize=(8, 4))
    _bars(
        axis,
        main,
        ["preemption_ratio_rigid", "preemption_ratio_malleable"],
        ["rigid", "malleable"],
        100,
    )
    axis.set_ylabel("jobs preempted at least once [%]")
    axis.set_title("Preemption ratio (mean ± std over the typings)")
    figure.tight_layout()
    written.append(save_figure(figure, folder / "preemption_ratio.png"))
    sweeps = set(summary.index.get_level_values("sweep"))
    if "notice" in sweeps:
        written.append(
            _sweep(
                plt,
                summary.xs("notice", level="sweep"),
                folder / "notice_sweep.png",
                "notice mix (004 Table II)",
                lambda v: v.upper(),
            )
        )
    if "checkpoint" in sweeps:
        table = summary.xs("checkpoint", level="sweep")
        for mtbf in sorted(
            {v.split(":")[0] for v in table.index.get_level_values("value")}, key=float
        ):
            part = table[[v.split(":")[0] == mtbf for v in table.index.get_level_values("value")]]
            failing = part["failures"].fillna(0).max() > 0
            written.append(
                _sweep(
                    plt,
                    part,
                    folder / f"checkpoint_sweep_mtbf{mtbf}h.png",
                    f"checkpoint interval / Daly optimum (MTBF {mtbf} h "
                    f"{'for Daly and the node failures' if failing else 'for Daly, no failures'})",
                    lambda v: f"{float(v.split(':')[1]):.0%}",
                )
            )
    return written


def _sweep(
    plt: Any, table: pd.DataFrame, path: Path, xlabel: str, tick: Callable[[Any], str]
) -> Path:
    values = list(dict.fromkeys(table.index.get_level_values("value")))
    mechanisms = list(dict.fromkeys(table.index.get_level_values("mechanism")))
    figure, axes = plt.subplots(2, 3, figsize=(13, 6.5))
    for axis, (label, column, scale) in zip(axes.flat, SWEEP_METRICS):
        for mechanism in mechanisms:
            y = [table.loc[(v, mechanism), column] * scale for v in values]
            axis.plot(range(len(values)), y, marker="o", label=mechanism)
        axis.set_xticks(range(len(values)), [tick(v) for v in values])
        axis.set_ylabel(label)
    axes.flat[0].legend(fontsize=7)
    figure.supxlabel(xlabel)
    figure.tight_layout()
    return save_figure(figure, path)


def timeline(
    panels: Sequence[tuple[str, SimulationResult]],
    names: dict[int, str],
    path: str | Path,
    *,
    marks: dict[str, float] | None = None,
) -> Path:
    """Job lanes over time of small runs side by side (004 Fig. 2): one bar per running segment, its
    node count written on it, a cross where the job was preempted.

    panels: [(title, result)] of runs with ``log_events=True``; names: job index -> lane label (only
    these jobs are drawn); marks: label -> time of a dashed vertical line (notice, estimated and
    actual arrival).
    """
    plt = pyplot()
    figure, axes = plt.subplots(
        1,
        len(panels),
        figsize=(5 * len(panels), 0.6 * len(names) + 1.6),
        sharey=True,
        squeeze=False,
    )
    lanes = {job: lane for lane, job in enumerate(names)}
    colours = plt.get_cmap("tab10")
    for axis, (title, result) in zip(axes.flat, panels):
        opened: dict[int, tuple[float, int]] = {}  # job -> (start, nodes) of its open segment
        assert result.log is not None  # runs with log_events=True
        for when, event, job, nodes in result.log:
            if job not in lanes:
                continue
            if event in ("start", "resize"):
                if job in opened:
                    _segment(axis, lanes[job], opened[job], when, colours(lanes[job]))
                opened[job] = (when, nodes)
            elif event in ("finish", "preempt", "kill") and job in opened:
                _segment(axis, lanes[job], opened.pop(job), when, colours(lanes[job]))
                if event == "preempt":
                    axis.plot(when, lanes[job], marker="x", color="black", markersize=9)
        for label, when in (marks or {}).items():
            axis.axvline(when, color="black", linestyle="--", linewidth=0.8)
            axis.text(
                when,
                1.01,
                f" {label}",
                transform=axis.get_xaxis_transform(),
                va="bottom",
                ha="center",
                fontsize=7,
            )
        axis.set_title(title, pad=16)
        axis.set_xlabel("time [s]")
    axes.flat[0].set_yticks(range(len(names)), list(names.values()))
    axes.flat[0].invert_yaxis()
    figure.tight_layout()
    return save_figure(figure, path)


def _segment(axis: Any, lane: int, opened: tuple[float, int], end: float, colour: Any) -> None:
    start, nodes = opened
    axis.broken_barh([(start, end - start)], (lane - 0.35, 0.7), color=colour)
    axis.text(
        (start + end) / 2, lane, f"{nodes} n", ha="center", va="center", fontsize=7, color="white"
    )
