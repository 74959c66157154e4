"""The real schedule drawn like 002 Fig. 1 (speed against time, bars stacked by task), beside
simulated ones."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from cosched.outputs import pyplot, save_figure

__all__ = ["plot_execution"]


def plot_execution(
    table,
    names: Sequence[str],
    path: str | os.PathLike,
    backend: str,
    schedules: dict | None = None,
    instance=None,
) -> Path:
    """One panel for the real run (`steps_table` rows: measured speeds / speed alone, at their real
    times; gaps are time with every task stopped), then one per simulated schedule (label ->
    Schedule on `instance`)."""
    plt = pyplot()
    schedules = schedules or {}
    colours = plt.get_cmap("tab20" if len(names) > 10 else "tab10")(np.arange(len(names)) % 20)
    figure, axes = plt.subplots(
        1, 1 + len(schedules), figsize=(5.5 * (1 + len(schedules)), 4), sharey=True, squeeze=False
    )
    steps = table.drop_duplicates("step").set_index("step")[["start", "end", "phase"]]
    speeds = table.pivot_table(
        index="step", columns="task", values="normalised_speed", aggfunc="first"
    )
    speeds = speeds.reindex(index=steps.index, columns=list(names)).fillna(0.0)
    real_end = float(steps["end"].max())
    horizon = max([real_end] + [schedule.makespan for schedule in schedules.values()])
    bars = [
        (
            "real",
            steps["start"].to_numpy(),
            (steps["end"] - steps["start"]).to_numpy(),
            speeds.to_numpy().T,
            f"real ({backend}): last exit {real_end:.4g} s",
        )
    ]
    for label, schedule in schedules.items():
        starts = np.cumsum(schedule.durations) - schedule.durations
        bars.append(
            (
                label,
                starts,
                schedule.durations,
                instance.speeds[:, instance.index(schedule.combinations)],
                f"{label}: makespan {schedule.makespan:.4g} s",
            )
        )
    for axis, (label, starts, widths, heights, title) in zip(axes[0], bars):
        bottom = np.zeros(len(starts))
        for task, name in enumerate(names):
            if heights[task].any():
                axis.bar(
                    starts,
                    heights[task],
                    width=widths,
                    bottom=bottom,
                    align="edge",
                    color=colours[task],
                    edgecolor="black",
                    linewidth=0.3,
                    label=name,
                )
            bottom += heights[task]
        if label == "real" and (steps["phase"] == "premeasure").any():
            axis.axvspan(
                0,
                float(steps.loc[steps["phase"] == "premeasure", "end"].max()),
                color="grey",
                alpha=0.15,
                label="premeasure",
            )
        axis.set_title(title)
        axis.set_xlabel("time [s]")
        axis.set_xlim(0, horizon * 1.02)
    axes[0][0].set_ylabel("combination speed (sum of speeds / speed alone)")
    handles, labels = axes[0][0].get_legend_handles_labels()
    axes[0][-1].legend(
        handles,
        labels,
        title="task",
        fontsize="small",
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),
    )
    figure.tight_layout()
    return save_figure(figure, path, dpi=120)
