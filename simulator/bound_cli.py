"""`cosched bound`: a lower bound on the makespan of any (co-)schedule of a workload on a platform.

Thin layer over `cosched.simulator.bounds.bound_for`: the workload, platform and co-location flags
are those of `cosched simulate`, so the bound follows the same speed model as a co-scheduled run.
"""

from __future__ import annotations

import json

from cosched.cli_options import LazyChoices, add_json, add_quiet, time_unit
from cosched.data import WORKLOADS
from cosched.simulator.co_cli import add_simulate_options, co_simulation_options
from cosched.simulator.platform import PRESETS as PLATFORMS

__all__ = ["register", "bound_options", "bound_columns"]

MISSING_PAIRS = LazyChoices("cosched.simulator.colocation", "MISSING_PAIRS")


def register(subparsers) -> None:
    bound = subparsers.add_parser(
        "bound",
        help="lower bound on the makespan of any schedule or co-schedule of a workload",
        description="The fluid configuration LP (the combination model and OPT LP applied to the "
        "cluster: "
        "applications as tasks, node configurations as combinations) with release dates. Without "
        "--heatmap it is the classic area and release-date bound; with one it bounds every "
        "co-schedule of the heatmap co-location model, whatever the scheduler and placement "
        "(--placement is accepted as in simulate and changes nothing).",
    )
    bound.add_argument(
        "--workload",
        required=True,
        help=f"bundled trace ({', '.join(WORKLOADS)}), SWF (.swf, "
        ".swf.gz) or CSV (job_id, submit_time, run_time, "
        "cores[, estimate, app])",
    )
    bound.add_argument(
        "--platform",
        required=True,
        help=f"preset ({', '.join(PLATFORMS)}) or JSON {{nodes, "
        "sockets_per_node, cores_per_socket}",
    )
    bound.add_argument("--limit", type=int, help="bound only the first N jobs (after cleaning)")
    add_simulate_options(bound)
    bound.add_argument(
        "--missing-pair",
        choices=MISSING_PAIRS,
        metavar="RULE",
        help="speedup of a pair measured in neither direction: the heatmap's default speedup "
        "(default) or the job's mean measured speedup (mean), as in `simulate`",
    )
    bound.add_argument(
        "--alone-speedup",
        metavar="one|max|VALUE",
        help="speedup of a job alone on its spread nodes: 1.0 (one), its maximum measured speedup "
        "(max) or VALUE (default: the heatmap's per-application value, else 1.0)",
    )
    add_json(bound, "the bound, its terms and the applications' work (times in seconds)")
    add_quiet(bound)
    bound.set_defaults(func=_bound_command)


def bound_options(args) -> dict:
    """The co-location options of `simulate` as `bound_for` keywords (the placement aside: the bound
    holds for any): heatmap, spread_speedup, scheduler_options."""
    options = co_simulation_options(args)
    options.pop("placement", None)
    return options


def bound_columns(args, platform, workload, results, makespan: float) -> dict:
    """`bound` and `makespan_over_bound` of a `simulate` run (`results`: the run and its
    baseline)."""
    from cosched.simulator.bounds import bound_for

    options = bound_options(args) if args.heatmap else {}
    bound = bound_for(workload, platform, results=results, **options).bound
    return {"bound": bound, "makespan_over_bound": makespan / bound if bound > 0 else None}


def _bound_command(args) -> int:
    from cosched.simulator.bounds import bound_for
    from cosched.simulator.compare import load_inputs

    platform, workload = load_inputs(args.workload, args.platform, limit=args.limit)
    result = bound_for(workload, platform, **bound_options(args))
    if args.json:
        print(
            json.dumps(
                {
                    "workload": str(args.workload),
                    "platform": platform.name,
                    "jobs": len(workload),
                    "heatmap": args.heatmap,
                    **result.to_json(),
                },
                indent=2,
            )
        )
        return 0
    terms = (result.bound, result.fluid, result.release, result.job)
    unit, seconds = time_unit(list(terms))  # one unit for the column, fitting its largest value
    decimals = 1 if unit == "s" else 4
    bound, fluid, release, job = (f"{value / seconds:.{decimals}f}" for value in terms)
    kind = (
        f"co-scheduling bound, heatmap {args.heatmap}"
        if result.co_located
        else "area and release-date bound"
    )
    print(f"{len(workload)} jobs on {platform.name} ({platform.total_cores} cores): {kind}")
    in_seconds = f"   ({result.bound:.1f} s)" if unit != "s" else ""
    print(f"  {f'bound [{unit}]':<29}{bound}{in_seconds}")
    print(f"  {f'fluid LP of all jobs [{unit}]':<29}{fluid}")
    print(
        f"  {f'release-date term [{unit}]':<29}{release}   (jobs submitted from "
        f"{result.release_date:.0f} s)"
    )
    print(f"  {f'longest job term [{unit}]':<29}{job}   (job {result.critical_job})")
    print(
        f"  applications {len(result.applications)}, LPs solved {result.solves}, "
        f"{result.seconds:.3f} s"
    )
    return 0
