"""PoolNode-hour arithmetic of measuring the 33-application ARIS NPB heatmap with `cosched
measure-heatmap`.

Takes the applications of the bundled `aris-nas` heatmap (processes, compact time as the estimate)
on ARIS nodes of 20 cores and prints the plan of `--repeats 3`: runs, node-hours, and the shortest
wall time on pools of 210 and 420 nodes. Run: `python benchmarks/heatmap_plan_aris.py` (a second, no
measuring).
"""

from __future__ import annotations

import math

from cosched.measurement.heatmap_plan import build_plan, nodes_needed, plan_summary
from cosched.measurement.heatmap_spec import Application
from cosched.theory.heatmap import read_heatmap

ARIS_CORES = 20  # 2 sockets x 10 cores (platform preset `aris`)
REPEATS = 3
POOLS = (210, 420)  # the smallest pool the largest pair fits, and the whole ARIS partition


def main() -> None:
    heatmap = read_heatmap("aris-nas")
    apps = [
        Application(name, int(procs), "mpirun ...", estimate=float(time))
        for name, procs, time in zip(heatmap.applications, heatmap.procs, heatmap.compact_times)
    ]
    times = {app.name: app.estimate for app in apps}
    plan = build_plan(apps, ARIS_CORES, REPEATS, None, 0)
    nodes = sorted(nodes_needed(app, ARIS_CORES) for app in apps)
    print(
        f"{len(apps)} applications, N from {nodes[0]} to {nodes[-1]} nodes of {ARIS_CORES} cores; "
        f"{len(apps) * (len(apps) + 1) // 2} pairs"
    )
    for pool in POOLS:
        summary = plan_summary(plan, times, pool)
        print(
            f"pool {pool:>3} nodes: {summary['runs']} runs ({summary['compact_runs']} compact, "
            f"{summary['spread_runs']} spread, {summary['pair_runs']} co-located), "
            f"{summary['node_hours']:.1f} node-hours, "
            f"wall time at least {summary['wall_hours_at_least']:.1f} h "
            f"(largest run {summary['largest_run_nodes']} nodes)"
        )
    one = plan_summary(plan, times, max(run.nodes for run in plan))
    serial = sum(max(times[name] for name in run.apps) for run in plan) / 3600
    print(
        f"one run at a time: {serial:.1f} h of wall time ({math.ceil(serial / 24)} days of a "
        f"{one['largest_run_nodes']}-node allocation)"
    )


if __name__ == "__main__":
    main()
