"""`cosched measure-heatmap`: measure the co-location heatmap of applications on a cluster."""

from __future__ import annotations

import json
import sys

from cosched.cli_options import (
    LazyChoices,
    add_json,
    add_out,
    add_plots,
    add_quiet,
    add_seed,
    announce,
    notice,
    plots_target,
)
from cosched.errors import InputError
from cosched.measurement.flags import count

__all__ = ["register"]

DEFAULT_REPEATS = 3
DEFAULT_RETRIES = 2


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "measure-heatmap",
        help="measure the pairwise co-location heatmap of applications on a cluster's nodes",
        description="Run every application compact (N nodes) and spread (2N nodes, half the "
        "cores), and every "
        "pair co-located on the same 2N nodes (each on its half of every node), R times in random "
        "order, on disjoint node sets in parallel; write DIR/heatmap.csv (thesis layout with the "
        "spread of the repeats, loads with --heatmap), runs.csv (every attempt), summary.json. "
        "Rerunning the same command resumes.",
    )
    parser.add_argument(
        "--apps",
        required=True,
        metavar="APPS.json",
        help="applications: name, np, command template with {np} {nodes} {ppn} {hosts} "
        "{hostfile} {cpus} {name} {mode} {corunner} {run}; optional cwd, env, timeout, "
        "estimate",
    )
    parser.add_argument(
        "--nodes",
        required=True,
        metavar="SPEC",
        help="the node pool: slurm (this allocation), hosts:FILE (hostfile with slots) or "
        "local:K (this machine's CPUs as K nodes)",
    )
    parser.add_argument(
        "--repeats",
        type=count("MAX_MEASURED_RUNS"),
        default=DEFAULT_REPEATS,
        help=f"repeats of every run (default {DEFAULT_REPEATS})",
    )
    parser.add_argument(
        "--pairs",
        default="all",
        metavar="all|FILE",
        help="pairs to co-run: all (every unordered pair with self-pairs) or a file of 'A,B' "
        "lines (default all)",
    )
    parser.add_argument(
        "--retries",
        type=count("MAX_RETRIES", minimum=0),
        default=DEFAULT_RETRIES,
        help=f"retries of a failed run per invocation (default {DEFAULT_RETRIES})",
    )
    parser.add_argument(
        "--dask",
        metavar="ADDRESS",
        help="run the launches on a dask.distributed cluster: tcp://host:port or local",
    )
    parser.add_argument(
        "--containment",
        choices=("auto", "cgroup2", "cgroup1", "pgroup"),
        default="auto",
        help="how each launch's processes are held together (here and on Dask workers): auto "
        "(the strongest that works, reported), cgroup2, cgroup1, pgroup (a subreaper shepherd)",
    )
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="print the plan (runs, node-hours, shortest wall time on this pool) and exit",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="start over in DIR, removing what an earlier measure-heatmap wrote there",
    )
    add_seed(parser, "seed of the random run order")
    add_plots(parser, "heatmap.png", place="into the --out folder")
    add_out(
        parser,
        "folder",
        "heatmap.csv, runs.csv, runs.done, logs/, summary.json; with --plots: heatmap.png",
        writes=LazyChoices("cosched.measurement.heatmap_run", "OWNED"),
    )
    add_json(parser, "the plan (--dry-run) or the summary")
    add_quiet(parser)
    parser.set_defaults(func=_measure_heatmap)


def _pairs(args, apps):
    from cosched.measurement.heatmap_spec import read_pairs

    if args.pairs == "all":
        return None
    return read_pairs(args.pairs, [app.name for app in apps])


def _dry_run(args, apps, nodes, pairs) -> int:
    from cosched.measurement.heatmap_plan import build_plan, plan_summary, usable_cores

    cores = usable_cores(nodes)
    plan = build_plan(apps, cores, args.repeats, pairs, args.seed)
    summary = plan_summary(plan, {app.name: app.estimate for app in apps}, len(nodes))
    summary["cores_per_node"] = cores
    if args.json:
        print(json.dumps(summary))
        return 0
    print(
        f"{summary['runs']} runs: {summary['compact_runs']} compact, "
        f"{summary['spread_runs']} spread, "
        f"{summary['pair_runs']} co-located ({args.repeats} repeats); "
        f"{len(nodes)} nodes of {cores} cores, "
        f"largest run {summary['largest_run_nodes']} nodes"
    )
    unknown = summary["runs_without_estimate"]
    note = f" (+ {unknown} runs without an 'estimate')" if unknown else ""
    print(
        f"node-hours: {summary['node_hours']:.4g}{note}; wall time on {len(nodes)} nodes: at least "
        f"{summary['wall_hours_at_least']:.4g} h"
    )
    return 0


def _measure_heatmap(args) -> int:
    from cosched.measurement.heatmap_spec import check_launchable, load_apps, parse_nodes
    from cosched.measurement.limits import check_seed
    from cosched.outputs import check_outputs

    check_seed(args.seed)

    apps = load_apps(args.apps)
    if args.dask in (None, "local"):  # a remote worker has its own file system
        check_launchable(apps, args.apps)
    nodes = parse_nodes(args.nodes)
    pairs = _pairs(args, apps)
    if args.dry_run:
        return _dry_run(args, apps, nodes, pairs)
    if args.out is None:
        raise InputError("give the output folder (or --dry-run)", field="--out")
    plots = plots_target(args, f"{args.out}/heatmap.png", fixed=True)
    check_outputs(("--out", args.out, "folder"))
    from cosched.measurement.heatmap_run import measure_heatmap

    result = measure_heatmap(
        apps,
        nodes,
        args.out,
        repeats=args.repeats,
        pairs=pairs,
        seed=args.seed,
        retries=args.retries,
        dask=args.dask,
        progress=not args.quiet,
        force=args.force,
        containment=args.containment,
        say=lambda text: notice(args, text),
    )
    if plots is not None and result.heatmap is not None:
        from cosched.theory.heatmap import read_heatmap
        from cosched.theory.heatmap_spread import plot_heatmap_spread, read_spread

        heatmap = read_heatmap(result.heatmap)
        spread = read_spread(result.heatmap, heatmap)
        assert spread is not None  # a measured heatmap has the spread columns
        plot_heatmap_spread(heatmap, spread, plots)
    else:
        plots = None
    if args.json:
        print(json.dumps(result.to_json()))
    else:
        print(
            f"{result.done}/{result.runs} runs done ({result.done - result.done_before} now, "
            f"{result.attempts} attempts, {result.node_hours:.3g} node-hours, "
            f"{result.seconds:.1f} s)"
        )
        if result.containment:
            print(f"containment: {', '.join(result.containment)}")
    announce(args, result.heatmap, f"{args.out}/runs.csv", f"{args.out}/summary.json", plots)
    problems = []
    if result.failed_runs:
        problems.append(
            f"{len(result.failed_runs)} run(s) failed after every retry (see {args.out}/logs; "
            f"rerun to try them again)"
        )
    if result.unplaced_runs:
        problems.append(
            f"{len(result.unplaced_runs)} run(s) need more nodes than are left in the pool "
            f"(hosts left: {', '.join(result.hosts_left)})"
        )
    for problem in problems:
        print(f"cosched measure-heatmap: {problem}", file=sys.stderr)
    return 1 if problems else 0
