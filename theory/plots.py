"""Schedules drawn like 002 Fig. 1: speed against time, one bar per step stacked by task speeds
a_ij."""

from __future__ import annotations

import os

import numpy as np

from cosched.outputs import pyplot, save_figure
from cosched.theory.instance import Instance

__all__ = ["plot_schedules"]


def plot_schedules(
    instance: Instance, schedules: dict, path: str | os.PathLike, title: str | None = None
):
    """Write a PNG with one panel per schedule (label -> Schedule); the area under each is the total
    work D."""
    plt = pyplot()
    colours = plt.get_cmap("tab20" if instance.n > 10 else "tab10")(np.arange(instance.n) % 20)
    figure, axes = plt.subplots(
        1, len(schedules), figsize=(5.5 * len(schedules), 4), sharey=True, squeeze=False
    )
    horizon = max(schedule.makespan for schedule in schedules.values())
    for axis, (label, schedule) in zip(axes[0], schedules.items()):
        speeds = instance.speeds[:, instance.index(schedule.combinations)]
        starts = np.cumsum(schedule.durations) - schedule.durations
        bottom = np.zeros(len(schedule.durations))
        for task in range(instance.n):
            if speeds[task].any():
                axis.bar(
                    starts,
                    speeds[task],
                    width=schedule.durations,
                    bottom=bottom,
                    align="edge",
                    color=colours[task],
                    edgecolor="black",
                    linewidth=0.3,
                    label=instance.tasks[task],
                )
            bottom += speeds[task]
        axis.set_title(f"{label}: makespan {schedule.makespan:.4g}")
        axis.set_xlabel("time")
        axis.set_xlim(0, horizon * 1.02)
    axes[0][0].set_ylabel("combination speed (sum of task speeds)")
    axes[0][-1].legend(title="task", fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    if title:
        figure.suptitle(title)
    figure.tight_layout()
    save_figure(figure, path, dpi=120)
    return path
