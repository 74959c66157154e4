"""The experiment of a measured heatmap (003 §4.2): which runs, on how many nodes, bound to which
cores.

For an application of `np` processes on nodes of `c` cores, N = ceil(np / c) nodes hold it
compactly. Each application is run *compact* (N nodes, all cores) and *spread* (2N nodes, half the
cores of each node, the other half idle: the "alone" time of the spread allocation, 000 §2.2); each
pair is run *co-located*: both applications spread on the same 2·max(N_A, N_B) nodes, A bound to the
first half of every node's cores and B to the second (socket binding; 003 §4.2 "paired applications
on the same node and replicated this across all required nodes"). Every run is repeated R times; the
runs are shuffled with the seed so repeats of one configuration do not meet the same machine state.
Nodes of one core (``local:K`` with K = CPUs) cannot be split: there the halves are the two halves
of the node set instead.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from cosched.measurement.heatmap_spec import Application, PoolNode
from cosched.measurement.limits import MAX_MEASURED_RUNS, check_size

__all__ = [
    "PlannedMeasurement",
    "build_plan",
    "plan_size",
    "usable_cores",
    "nodes_needed",
    "place",
    "node_seconds",
    "plan_summary",
    "MODES",
    "SEPARATOR",
]

MODES = ("compact", "spread", "pair")
SEPARATOR = (
    "~"  # joins the parts of a run id; never in an application name (heatmap_spec.NAME_PATTERN)
)


@dataclass(frozen=True)
class PlannedMeasurement:
    """One run of the experiment: a mode, one or two applications, the repeat, its node count."""

    run: str
    mode: str
    apps: tuple[str, ...]
    repeat: int
    nodes: int


def usable_cores(nodes: list[PoolNode]) -> int:
    """Cores per node the experiment uses: the smallest node's, made even (1 stays 1)."""
    cores = min(node.cores for node in nodes)
    return cores if cores == 1 or cores % 2 == 0 else cores - 1


def nodes_needed(app: Application, cores: int) -> int:
    """N of 003 §4.2: the nodes that hold the application compactly."""
    return math.ceil(app.np / cores)


def plan_size(apps: list[Application], repeats: int, pairs: list | None) -> int:
    """Runs of `build_plan`, counted without building it: (2 per application + 1 per pair) x
    repeats."""
    count = len(apps)
    per_repeat = 2 * count + (count * (count + 1) // 2 if pairs is None else len(pairs))
    return per_repeat * repeats


def build_plan(
    apps: list[Application],
    cores: int,
    repeats: int,
    pairs: list[tuple[str, str]] | None,
    seed: int,
) -> list[PlannedMeasurement]:
    """Every run of the experiment (compact and spread per application, co-located per pair) x
    repeats, shuffled by `seed`. pairs: None = every unordered pair, the self-pairs included (33
    apps: 561). InputError, before anything is built, when the plan would hold more than
    MAX_MEASURED_RUNS runs (naming --repeats, or --apps / --pairs when one repeat is too many)."""
    one_repeat = plan_size(apps, 1, pairs)
    check_size(
        one_repeat, MAX_MEASURED_RUNS, "--pairs" if pairs else "--apps", "runs of one repeat"
    )
    check_size(
        one_repeat * repeats,
        MAX_MEASURED_RUNS,
        "--repeats",
        f"runs of {repeats:,} repeats of {one_repeat:,}",
    )
    by_name = {app.name: app for app in apps}
    size = {app.name: nodes_needed(app, cores) for app in apps}
    if pairs is None:
        pairs = [(a.name, b.name) for i, a in enumerate(apps) for b in apps[i:]]
    runs = []
    for repeat in range(repeats):
        for app in apps:
            runs.append(
                PlannedMeasurement(
                    SEPARATOR.join(("compact", app.name, str(repeat))),
                    "compact",
                    (app.name,),
                    repeat,
                    size[app.name],
                )
            )
            runs.append(
                PlannedMeasurement(
                    SEPARATOR.join(("spread", app.name, str(repeat))),
                    "spread",
                    (app.name,),
                    repeat,
                    2 * size[app.name],
                )
            )
        for a, b in pairs:
            assert a in by_name and b in by_name
            runs.append(
                PlannedMeasurement(
                    SEPARATOR.join(("pair", a, b, str(repeat))),
                    "pair",
                    (a, b),
                    repeat,
                    2 * max(size[a], size[b]),
                )
            )
    random.Random(seed).shuffle(runs)
    return runs


def _role(
    app: Application,
    nodes: list[PoolNode],
    cpus: list[tuple[int, ...]],
    mode: str,
    corunner: str,
    run: str,
) -> dict:
    """One launch of a run: the placeholder values and the launch settings of `app` on `nodes`."""
    count = len(nodes)
    ppn = math.ceil(app.np / count)
    if all(node.local for node in nodes):
        # one local process tree over all its "nodes"
        bound = sorted({cpu for ids in cpus for cpu in ids})
    else:
        bound = list(cpus[0])  # the same core ids on every node
    values = {
        "np": app.np,
        "nodes": count,
        "ppn": ppn,
        "hosts": ",".join(node.host for node in nodes),
        "cpus": ",".join(map(str, bound)),
        "name": app.name,
        "mode": mode,
        "corunner": corunner,
        "run": run,
    }
    return {
        "app": app.name,
        "command": app.command,
        "values": values,
        "cwd": app.cwd,
        "env": dict(app.env),
        "timeout": app.timeout,
        "hosts": [node.host for node in nodes],
    }


def place(
    measurement: PlannedMeasurement, apps: dict[str, Application], nodes: list[PoolNode], cores: int
) -> list[dict]:
    """The launches of `measurement` on its `measurement.nodes` nodes, one per application."""
    assert len(nodes) == measurement.nodes
    first = apps[measurement.apps[0]]
    if measurement.mode == "compact":
        return [
            _role(
                first, nodes, [node.cpus[:cores] for node in nodes], "compact", "", measurement.run
            )
        ]
    half = cores // 2
    total = len(nodes)

    def share(app: Application, side: int) -> tuple[list[PoolNode], list[tuple[int, ...]]]:
        count = nodes_needed(app, cores)
        if half == 0:  # one-core nodes: a side is half of the node set
            chosen = nodes[side * total // 2 : side * total // 2 + count]
            return chosen, [node.cpus[:1] for node in chosen]
        chosen = nodes[: 2 * count]
        return chosen, [node.cpus[side * half : (side + 1) * half] for node in chosen]

    if measurement.mode == "spread":
        chosen, cpus = share(first, 0)
        return [_role(first, chosen, cpus, "spread", "", measurement.run)]
    second = apps[measurement.apps[1]]
    roles = []
    for side, (app, other) in enumerate(((first, second), (second, first))):
        chosen, cpus = share(app, side)
        roles.append(_role(app, chosen, cpus, "pair", other.name, measurement.run))
    return roles


def node_seconds(measurement: PlannedMeasurement, times: dict[str, float | None]) -> float | None:
    """PoolNode-seconds a run holds: its nodes x its expected wall time (a pair lasts as long as its
    longer member, the shorter one being restarted, 003 §4.2); None when a time is unknown."""
    expected = [times.get(name) for name in measurement.apps]
    known = [value for value in expected if value is not None]
    if len(known) < len(expected):
        return None
    return measurement.nodes * max(known)


def plan_summary(plan: list[PlannedMeasurement], times: dict[str, float | None], pool: int) -> dict:
    """Runs per mode, node-hours, and the shortest wall time on `pool` nodes (perfect packing, and
    never below the longest single run)."""
    counts = {mode: sum(run.mode == mode for run in plan) for mode in MODES}
    known = [node_seconds(run, times) for run in plan]
    unknown = sum(value is None for value in known)
    total = sum(value for value in known if value is not None)
    longest = max((max(times[name] or 0.0 for name in run.apps) for run in plan), default=0.0)
    wall = max(total / pool, longest) if pool else math.inf
    return {
        "runs": len(plan),
        **{f"{mode}_runs": count for mode, count in counts.items()},
        "node_hours": total / 3600,
        "runs_without_estimate": unknown,
        "pool_nodes": pool,
        "wall_hours_at_least": wall / 3600,
        "largest_run_nodes": max((run.nodes for run in plan), default=0),
    }
