"""`cosched simulate` (one scheduler on one workload) and `cosched compare` (several, side by side).

Thin layer: parse, load the platform and workload, run `cosched.simulator.engine`, write jobs.csv / summary.json,
print the metrics. Heavy imports stay inside the command functions.
"""
from __future__ import annotations

import json
import sys

from cosched.simulator.co_cli import add_simulate_options, co_simulation_options, is_coscheduler
from cosched.simulator.schedulers import CLASSIC
from cosched.simulator.schedulers.base import DEFAULT_DEPTH

__all__ = ["register"]

COMPARE_COLUMNS = (
    ("makespan_days", "makespan [d]", "{:.2f}"), ("makespan_speedup", "mS", "{:.3f}"),
    ("mean_wait", "wait [s]", "{:.0f}"), ("mean_turnaround", "turnaround [s]", "{:.0f}"),
    ("mean_slowdown", "slowdown", "{:.2f}"), ("mean_bounded_slowdown", "bsld", "{:.2f}"),
    ("mean_slowdown_per_processor", "sld/proc", "{:.3f}"), ("utilization", "util", "{:.3f}"),
    ("wall_seconds", "wall [s]", "{:.2f}"),
)


def _common(parser) -> None:
    parser.add_argument("--workload", required=True, help="SWF (.swf, .swf.gz) or CSV (job_id, submit_time, "
                                                          "run_time, cores[, estimate, app])")
    parser.add_argument("--platform", required=True, help="preset (aris, marconi, grvingt, sdsc-sp2, curie, "
                                                          "ricc, ...) or JSON {nodes, sockets_per_node, "
                                                          "cores_per_socket}")
    parser.add_argument("--depth", type=int, default=DEFAULT_DEPTH,
                        help=f"backfill depth (default {DEFAULT_DEPTH}, as Slurm)")
    parser.add_argument("--run-times", action="store_true",
                        help="backfill with true run times instead of user estimates")
    parser.add_argument("--bounded-threshold", type=float, default=10.0,
                        help="bounded slowdown threshold in seconds (default 10)")
    parser.add_argument("--limit", type=int, help="simulate only the first N jobs (after cleaning)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")


def register(subparsers) -> None:
    simulate = subparsers.add_parser(
        "simulate", help="simulate a workload on a cluster under one scheduler",
        description="Discrete-event simulation (ELiSE §3): completions, then arrivals, then one scheduling pass "
                    "per timestamp; compact whole-node allocation. Writes jobs.csv and summary.json to --out.")
    _common(simulate)
    simulate.add_argument("--scheduler", default="easy",
                          help="fcfs, easy, conservative, sjf, ljf (default easy), or a registered co-scheduler")
    simulate.add_argument("--baseline", help="also run this scheduler for the makespan speedup (e.g. conservative)")
    simulate.add_argument("--out", help="output folder: jobs.csv, summary.json (and jobs.parquet, plots)")
    simulate.add_argument("--parquet", action="store_true", help="also write jobs.parquet")
    simulate.add_argument("--plots", metavar="DIR", help="write Gantt, utilization, queue and wait-time PNGs")
    add_simulate_options(simulate)
    simulate.set_defaults(func=_simulate_command)

    compare = subparsers.add_parser(
        "compare", help="run several schedulers on the same workload and print a metrics table",
        description="Same workload, same platform, several schedulers; makespan speedup against --baseline.")
    _common(compare)
    compare.add_argument("--schedulers", default=",".join(CLASSIC),
                         help=f"comma-separated names (default {','.join(CLASSIC)})")
    compare.add_argument("--baseline", default="conservative",
                         help="scheduler whose makespan is the reference (default conservative)")
    compare.add_argument("--out", help="write compare.csv (one row of metrics per scheduler) here")
    add_simulate_options(compare)
    compare.set_defaults(func=_compare_command)


def _load(args):
    from cosched.errors import InputError
    from cosched.simulator.platform import load_platform
    from cosched.simulator.workload import load_workload

    if args.depth < 0:
        raise InputError(f"must be non-negative, got {args.depth}", field="depth")
    if args.limit is not None and args.limit < 1:
        raise InputError(f"must be positive, got {args.limit}", field="limit")
    if args.bounded_threshold <= 0:
        raise InputError(f"must be positive, got {args.bounded_threshold}", field="bounded_threshold")
    platform = load_platform(args.platform)
    workload = load_workload(args.workload, max_cores=platform.total_cores)
    if args.limit is not None and args.limit < len(workload):
        workload = workload.head(args.limit)
    if not len(workload):
        raise InputError("no jobs left after cleaning", source=args.workload)
    return platform, workload


def _scheduler(name: str, depth: int):
    from cosched.errors import InputError
    from cosched.simulator.schedulers import make_scheduler

    try:
        return make_scheduler(name, depth=depth)
    except ValueError as error:
        raise InputError(str(error), field="scheduler") from None


def _run(args, name, platform, workload, progress):
    from cosched.simulator.colocation import simulate_any

    scheduler = _scheduler(name, args.depth)
    co_options = co_simulation_options(args) if is_coscheduler(name) else {}
    return simulate_any(workload, platform, scheduler, use_run_times=args.run_times, progress=progress, **co_options)


def _print_summary(summary: dict, cleaning: dict) -> None:
    print(f"{summary['scheduler']} on {summary['platform']}: {summary['jobs']} jobs "
          f"({cleaning.get('records', summary['jobs'])} records; "
          + ", ".join(f"{k} {v}" for k, v in cleaning.items() if k not in ("records", "jobs") and v) + ")")
    for key, value in summary.items():
        if key in ("scheduler", "platform", "jobs") or value is None:
            continue
        print(f"  {key:<30} {value:.6g}" if isinstance(value, float) else f"  {key:<30} {value}")


def _simulate_command(args) -> int:
    from cosched.outputs import atomic_path, output_dir
    from cosched.simulator.metrics import summarize

    platform, workload = _load(args)
    progress = not args.quiet
    result = _run(args, args.scheduler, platform, workload, progress)
    baseline = _run(args, args.baseline, platform, workload, progress) if args.baseline else None
    summary = summarize(result, baseline, args.bounded_threshold)
    summary["cleaning"] = workload.cleaning
    summary["workload"] = str(args.workload)
    summary["use_run_times"] = args.run_times
    summary["depth"] = args.depth
    if args.out:
        with output_dir(args.out) as folder:
            frame = result.jobs_frame()
            with atomic_path(folder / "jobs.csv") as path:
                frame.to_csv(path, index=False)
            if args.parquet:
                with atomic_path(folder / "jobs.parquet") as path:
                    frame.to_parquet(path, index=False)
            with atomic_path(folder / "summary.json") as path:
                path.write_text(json.dumps(summary, indent=2) + "\n")
    if args.plots:
        from cosched.simulator.plots import write_plots
        write_plots(result, args.plots)
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        _print_summary({k: v for k, v in summary.items() if k not in ("cleaning", "workload")}, workload.cleaning)
        if args.out:
            print(f"wrote {args.out}/jobs.csv and summary.json", file=sys.stderr)
    return 0


def _compare_command(args) -> int:
    from pathlib import Path

    from cosched.errors import InputError
    from cosched.outputs import atomic_path
    from cosched.simulator.metrics import SECONDS_PER_DAY, summarize

    names = [name.strip() for name in args.schedulers.split(",") if name.strip()]
    if not names:
        raise InputError("no scheduler given", field="schedulers")
    for name in names + [args.baseline]:
        _scheduler(name, args.depth)
    platform, workload = _load(args)
    progress = not args.quiet
    # rows are written after each scheduler and reused when the same comparison is run again (resumable)
    identity = {"workload": str(args.workload), "platform": platform.name, "depth": args.depth,
                "run_times": args.run_times, "limit": args.limit or 0, "bounded_threshold": args.bounded_threshold,
                "heatmap": str(args.heatmap or "")}
    path = None
    if args.out:
        path = Path(args.out if str(args.out).endswith(".csv") else f"{args.out}/compare.csv")
    done = _previous_rows(path, identity)
    for name in dict.fromkeys(names + [args.baseline]):
        if name in done:
            continue
        summary = summarize(_run(args, name, platform, workload, progress), None, args.bounded_threshold)
        summary["makespan_days"] = summary["makespan"] / SECONDS_PER_DAY
        done[name] = {**summary, **identity}
        if path is not None:
            _write_rows(path, list(done.values()), atomic_path)
    reference = done[args.baseline]["makespan"]
    for row in done.values():
        row["baseline"] = args.baseline
        row["makespan_speedup"] = reference / row["makespan"] if row["makespan"] > 0 else None  # 003 (2.1)
    if path is not None:
        _write_rows(path, list(done.values()), atomic_path)
    rows = [done[name] for name in dict.fromkeys(names)]
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    print(f"{len(workload)} jobs on {platform.name} ({platform.total_cores} cores), "
          f"makespan speedup against {args.baseline}")
    header = ["scheduler"] + [title for _, title, _ in COMPARE_COLUMNS]
    table = [[row["scheduler"]] + [fmt.format(row[key]) if row[key] is not None else "-"
                                   for key, _, fmt in COMPARE_COLUMNS] for row in rows]
    widths = [max(len(line[i]) for line in table + [header]) for i in range(len(header))]
    for line in [header] + table:
        print("  ".join(cell.rjust(width) if i else cell.ljust(width) for i, (cell, width) in
                        enumerate(zip(line, widths))))
    return 0


def _previous_rows(path, key: dict) -> dict:
    """Rows of an earlier run of the same comparison (same workload, platform and options), by scheduler."""
    if path is None or not path.exists():
        return {}
    import pandas as pd

    try:
        frame = pd.read_csv(path, keep_default_na=False)
    except (pd.errors.ParserError, pd.errors.EmptyDataError):
        return {}
    rows = {}
    for row in frame.to_dict("records"):
        if all(str(row.get(name)) == str(value) for name, value in key.items()):
            rows[row["scheduler"]] = row
    return rows


def _write_rows(path, rows: list, atomic_path) -> None:
    import pandas as pd

    with atomic_path(path) as temporary:
        pd.DataFrame(rows).to_csv(temporary, index=False)
