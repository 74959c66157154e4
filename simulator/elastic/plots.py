"""Plots of an ElastiSim run: node allocation Gantt, allocated nodes over time, wait/turnaround box
plots.

The Gantt draws every node as a row and every job's stay on it as a bar coloured by job type, so
expansions and shrinks show as bars starting or ending inside a job's run; reconfigurations are
marked with ticks.
"""

from __future__ import annotations

from pathlib import Path

from cosched.deprecation import module_aliases
from cosched.outputs import pyplot, save_figure
from cosched.simulator.elastic.compat import NodeState
from cosched.simulator.elastic.results import stays
from cosched.simulator.elastic.runtime import Simulation
from cosched.simulator.elastic.workload import JOB_TYPES

__all__ = ["plot_gantt", "plot_utilization", "plot_boxes", "write_elastic_plots"]

_COLOURS = dict(zip(JOB_TYPES, ("tab:gray", "tab:blue", "tab:orange", "tab:green", "tab:purple")))


def plot_gantt(sim: Simulation):
    plt = pyplot()
    figure, axis = plt.subplots(figsize=(11, 5.5))
    bars: dict[str, list] = {}
    for node, job, start, end in stays(sim):
        bars.setdefault(sim.runs[job].spec.type, []).append((node, start, end))
    for kind, items in bars.items():
        axis.barh(
            [node for node, _, _ in items],
            [end - start for _, start, end in items],
            left=[start for _, start, _ in items],
            height=0.9,
            color=_COLOURS[kind],
            label=kind,
            linewidth=0,
        )
    changes = [(when, run.spec.identifier) for run in sim.runs for when, _ in run.history[1:-1]]
    if changes:
        axis.plot(
            [when for when, _ in changes],
            [-2] * len(changes),
            "|",
            color="black",
            markersize=6,
            label="reconfiguration",
        )
    axis.set_xlabel("time [s]")
    axis.set_ylabel("node")
    axis.set_title(f"Node allocation ({sim.algorithm_name})")
    axis.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
    figure.tight_layout()
    return figure


def plot_utilization(sim: Simulation):
    plt = pyplot()
    allocated: list[tuple[float, int]] = []
    busy: set[int] = set()
    for when, node, state, _, _ in sim.node_log:
        (busy.add if state == NodeState.ALLOCATED else busy.discard)(node)
        if (
            allocated and allocated[-1][0] == when
        ):  # one value per instant: a node released and taken again
            allocated[-1] = (
                when,
                len(busy),
            )  # at the same time is no dip (the spikes of the step plot)
        else:
            allocated.append((when, len(busy)))
    figure, axis = plt.subplots(figsize=(10, 3.5))
    if allocated:
        axis.step([when for when, _ in allocated], [count for _, count in allocated], where="post")
    axis.set_ylim(0, len(sim.platform) * 1.05)
    axis.set_xlabel("time [s]")
    axis.set_ylabel("allocated nodes")
    axis.set_title(f"Allocated nodes over time ({sim.algorithm_name})")
    figure.tight_layout()
    return figure


def plot_boxes(rows_by_policy: dict[str, list[dict]]):
    """Wait and turnaround per job type, one box per (type, policy)."""
    plt = pyplot()
    figure, axes = plt.subplots(1, 2, figsize=(11, 4))
    for axis, key, label in (
        (axes[0], "wait_time", "wait [s]"),
        (axes[1], "turnaround_time", "turnaround [s]"),
    ):
        data, names = [], []
        for policy, rows in rows_by_policy.items():
            for kind in JOB_TYPES:
                values = [row[key] for row in rows if row["type"] == kind and row[key] >= 0]
                if values:
                    data.append(values)
                    names.append(kind if len(rows_by_policy) == 1 else f"{kind}\n{policy}")
        if data:
            axis.boxplot(data)
            axis.set_xticks(range(1, len(names) + 1), names, fontsize=7)
        axis.set_ylabel(label)
    figure.suptitle("Wait and turnaround per job type")
    figure.tight_layout()
    return figure


def write_elastic_plots(sim: Simulation, rows: list[dict], folder: str | Path) -> list[Path]:
    folder = Path(folder)
    return [
        save_figure(plot_gantt(sim), folder / "gantt.png"),
        save_figure(plot_utilization(sim), folder / "utilization.png"),
        save_figure(plot_boxes({sim.algorithm_name: rows}), folder / "wait_turnaround.png"),
    ]


__getattr__ = module_aliases(
    __name__, {"write_plots": "write_elastic_plots"}, globals()
)  # the name before 0.3.0
