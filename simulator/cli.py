"""`cosched simulate` (one scheduler on one workload) and `cosched compare` (several, side by side).

Thin layer: parse, load the platform and workload, run `cosched.simulator.engine` (simulate) or
`cosched.simulator.compare.compare` (compare), write jobs.csv / summary.json, print the metrics.
Heavy imports stay inside the command functions.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from cosched.cli_options import (
    SECONDS_PER_DAY,
    SECONDS_PER_HOUR,
    add_json,
    add_name_list,
    add_out,
    add_plots,
    add_quiet,
    add_seed,
    announce,
    names_or,
    one_name,
    plots_folder,
    plots_target,
    time_unit,
    wanted_command,
)
from cosched.data import WORKLOADS
from cosched.errors import InputError
from cosched.simulator.co_cli import (
    add_fidelity_options,
    add_simulate_options,
    co_simulation_options,
)
from cosched.simulator.compat import run_options
from cosched.simulator.elastic.experiment_cli import (
    add_elastic_options,
    model_columns,
    simulate_job_models,
)
from cosched.simulator.hybrid.cli import add_hybrid_options
from cosched.simulator.hybrid.cli import simulate_command as hybrid_simulate
from cosched.simulator.platform import PRESETS as PLATFORMS
from cosched.simulator.schedulers import CLASSIC, PRIORITIES, SCHEDULERS
from cosched.simulator.schedulers.base import DEFAULT_DEPTH
from cosched.simulator.trace_cli import (
    add_swf_out,
    add_trace_options,
    load_trace,
    measured_runs,
    trace_summary,
)

__all__ = ["register"]

# Text output: makespans in the unit that fits their size (s, h or d; `time_unit`), other durations
# in seconds, the unit in every label; JSON keeps seconds.


def _fitted(seconds: float, unit: str | None = None) -> str:
    """A makespan in `unit` (default: the unit that fits it), two decimals (three digits below
    1)."""
    unit, scale = (
        (unit, dict(s=1.0, h=SECONDS_PER_HOUR, d=SECONDS_PER_DAY)[unit])
        if unit
        else time_unit(seconds)
    )
    value = seconds / scale
    return f"{value:.2f}" if abs(value) >= 1 else f"{value:.3g}"


def _seconds(seconds: float) -> str:
    return f"{seconds:.1f}" if abs(seconds) >= 10 else f"{seconds:.3g}"


def _number(value: float) -> str:
    return f"{value:.0f}" if abs(value) >= 1e4 else f"{value:.4g}"


# summary key -> (unit shown in the label, text of the JSON value)
FITTED = ("makespan", "bound")  # the durations shown in the unit that fits them
UNITS = {
    "mean_wait": ("s", _seconds),
    "median_wait": ("s", _seconds),
    "max_wait": ("s", _seconds),
    "mean_turnaround": ("s", _seconds),
    "bounded_slowdown_threshold": ("s", _seconds),
    "wall_seconds": ("s", _seconds),
    "jobs_per_second": ("jobs/s", _number),
    "simulated_days_per_hour": ("d/h", _number),
}
TEXT_SKIPPED = (
    "scheduler",
    "platform",
    "jobs",
    "simulated_days",
)  # in the title line, or the makespan again
# (summary key, column title with unit, format); makespan: the unit of the column
COMPARE_COLUMNS = (
    ("makespan", "makespan", _fitted),
    ("makespan_speedup", "mS", "{:.3f}".format),
    ("makespan_over_bound", "C/bound", "{:.3f}".format),
    ("mean_wait", "wait [s]", _seconds),
    ("mean_turnaround", "turnaround [s]", _seconds),
    ("mean_slowdown", "slowdown", "{:.2f}".format),
    ("mean_bounded_slowdown", "bsld", "{:.2f}".format),
    ("mean_slowdown_per_processor", "sld/proc", "{:.3f}".format),
    ("utilization", "util", "{:.3f}".format),
    ("wall_seconds", "wall [s]", _seconds),
)


def _common(parser) -> None:
    parser.add_argument(
        "--workload",
        required=True,
        help=f"bundled trace ({', '.join(WORKLOADS)}), SWF (.swf, "
        ".swf.gz) or CSV (job_id, submit_time, run_time, "
        "cores[, estimate, app])",
    )
    parser.add_argument(
        "--platform",
        required=True,
        help=f"preset ({', '.join(PLATFORMS)}), JSON {{nodes, "
        "sockets_per_node, cores_per_socket[, memory_per_node (MiB), gpus_per_node]} or "
        '{"groups": [...]} for several node types, or a SimGrid XML platform (one node type per '
        "<cluster>)",
    )
    parser.add_argument(
        "--swf-memory",
        choices=("requested", "used"),  # cosched.simulator.workload.SWF_MEMORY
        help="read each job's memory per core from an SWF trace: its requested memory (field 10) "
        "or its used memory (field 7); jobs then run only where their memory fits (default: "
        "memory not read)",
    )
    parser.add_argument(
        "--depth",
        type=int,
        default=DEFAULT_DEPTH,
        help=f"backfill depth (default {DEFAULT_DEPTH}, as Slurm)",
    )
    parser.add_argument(
        "--run-times",
        action="store_true",
        help="backfill with true run times instead of user estimates",
    )
    parser.add_argument(
        "--bounded-threshold",
        type=float,
        default=10.0,
        help="bounded slowdown threshold in seconds (default 10)",
    )
    parser.add_argument("--limit", type=int, help="simulate only the first N jobs (after cleaning)")
    add_trace_options(parser)
    add_quiet(parser)
    add_json(parser, "the summary (times in seconds)")


def register(subparsers) -> None:
    if wanted_command(subparsers, "simulate"):
        _register_simulate(subparsers)
    if wanted_command(subparsers, "compare"):
        _register_compare(subparsers)


def _register_simulate(subparsers) -> None:
    simulate = subparsers.add_parser(
        "simulate",
        help="simulate a workload on a cluster under one scheduler",
        description="Discrete-event simulation (ELiSE §3): completions, then arrivals, then one "
        "scheduling pass per timestamp; compact whole-node allocation. Writes jobs.csv and "
        "summary.json to --out.",
    )
    _common(simulate)
    add_name_list(
        simulate,
        "--scheduler",
        what="the scheduler (or a plug-in: FILE.py:Class, or an entry point of cosched.schedulers)",
        known=tuple(SCHEDULERS),
        default="easy",
        single=True,
        alias="--schedulers",
    )
    simulate.add_argument(
        "--baseline", help="also run this scheduler for the makespan speedup (e.g. conservative)"
    )
    add_out(
        simulate,
        "folder",
        "jobs.csv, summary.json (and jobs.parquet, the plots)",
        writes=("jobs.csv", "jobs.parquet", "summary.json", "workload.csv"),
    )
    simulate.add_argument("--parquet", action="store_true", help="also write jobs.parquet")
    add_swf_out(simulate)
    simulate.add_argument(
        "--bound",
        action="store_true",
        help="also compute the lower bound on the makespan of any schedule (bound, "
        "makespan_over_bound; linear programs that take about half a simulation)",
    )
    add_plots(simulate, "Gantt, utilization, queue and wait-time PNGs", where=True)
    add_simulate_options(simulate)
    add_fidelity_options(simulate)
    add_elastic_options(
        simulate
    )  # marks jobs moldable or malleable (cosched.simulator.elastic.traces)
    add_cluster_policy_options(simulate)
    add_seed(simulate, "seed of the elastic marking and of the hybrid typing")
    add_hybrid_options(
        simulate
    )  # --hybrid MECHANISM and the typing flags (cosched.simulator.hybrid)
    simulate.set_defaults(func=_simulate_command)


def _register_compare(subparsers) -> None:
    compare = subparsers.add_parser(
        "compare",
        help="run several schedulers on the same workload and print a metrics table",
        description="Same workload, same platform, several schedulers; makespan speedup against "
        "--baseline. The trace, memory, partition and priority options read and run the jobs as in "
        "simulate, for every scheduler of the comparison.",
    )
    _common(compare)
    add_name_list(
        compare,
        "--scheduler",
        what="schedulers to compare (plug-ins too: FILE.py:Class, entry points of "
        "cosched.schedulers)",
        known=tuple(SCHEDULERS),
        default=",".join(CLASSIC),
        alias="--schedulers",
    )
    compare.add_argument(
        "--baseline",
        default="conservative",
        help="scheduler whose makespan is the reference (default conservative)",
    )
    add_out(
        compare,
        "folder",
        "compare.csv, one row of metrics per scheduler (resumes if it exists)",
        writes=("compare.csv",),
        csv_file=True,  # the older form: --out FILE.csv
    )
    add_plots(compare, "a bar chart of makespan, wait and utilization per scheduler (compare.png)")
    add_simulate_options(compare)
    add_cluster_policy_options(compare)
    compare.add_argument(
        "--force",
        action="store_true",
        help="start over: remove an earlier compare.csv of other options or inputs (by default the "
        "same comparison resumes and others are refused)",
    )
    # compare runs rigid jobs: no hybrid mechanism, no elastic marking (as `_partitioned` reads)
    compare.set_defaults(func=_compare_command, hybrid=None, elastic_fraction=None)


def add_cluster_policy_options(parser) -> None:
    """Slurm's partitions and multifactor priority (docs/partitions.md)."""
    parser.add_argument(
        "--partitions",
        metavar="FILE",
        help="partition file (JSON: named node ranges with max_nodes / max_time limits, SWF "
        "partition or queue numbers mapped to them): jobs run only on their partition's nodes and "
        "each partition's queue is backfilled on its own; jobs breaking a limit (or that no node "
        "type of their partition can hold: memory, GPUs) are rejected at submit (counted as "
        "rejected_partition_limits); works with node types, memory and GPUs",
    )
    parser.add_argument(
        "--priority",
        choices=PRIORITIES,
        help="order the queue by Slurm's multifactor priority (age, job size, fair-share over SWF "
        "users or groups, partition) instead of the scheduler's own order",
    )
    parser.add_argument(
        "--priority-weights",
        metavar="SPEC",
        help="multifactor weights and parameters: a JSON file or key=value,... (age, fairshare, "
        "job_size, partition, max_age, decay_half_life, favor_small, fairshare_by, fair_tree), "
        "optionally after the preset slurm-example (Slurm's configuration example: 1000, 10000, "
        "1000, 1000; 14-day max age and half-life), e.g. slurm-example,max_age=86400; default: "
        "Slurm's defaults (every weight 0, which keeps submit order; 7-day max age and half-life; "
        "Fair Tree fair-share)",
    )


def _policy_options(args) -> dict:
    """The scheduler options of --priority / --priority-weights (checked here: exit 2 on error)."""
    priority, weights = getattr(args, "priority", None), getattr(args, "priority_weights", None)
    if weights is not None and priority is None:
        raise InputError("needs --priority multifactor", field="--priority-weights")
    if priority is not None and getattr(args, "hybrid", None):
        raise InputError("the hybrid mechanisms keep their own order", field="--priority")
    if priority is None:
        return {}
    from cosched.simulator.schedulers.multifactor import load_weights

    return {"priority": priority, "priority_weights": load_weights(weights)}


def _partitioned(args, platform, workload):
    """The workload's jobs assigned to the --partitions file's partitions, or None without it
    (checked before any run)."""
    if not getattr(args, "partitions", None):
        return None
    from cosched.simulator.partitions import load_partitions

    if args.hybrid or args.elastic_fraction:
        raise InputError(
            "partitions run rigid jobs under the queue schedulers; leave out --hybrid and "
            "--elastic-fraction",
            field="--partitions",
        )
    if args.compat:
        raise InputError(
            f"--compat {args.compat} reproduces a simulator without partitions (one queue over "
            f"every node): it has no schedule of a partitioned cluster to reproduce; leave out "
            f"--partitions or --compat",
            field="--partitions",
        )
    assignment = load_partitions(args.partitions, platform).assign(
        workload, platform.cores_per_node, platform=platform
    )
    if not len(assignment.workload):
        raise InputError(
            "every job breaks its partition's limits", source=args.partitions, field="partitions"
        )
    return assignment


def _load(args, schedulers=()):
    """(platform, workload, window, compat): the inputs read with the trace options."""
    if args.depth < 0:
        raise InputError(f"must be non-negative, got {args.depth}", field="depth")
    if args.limit is not None and args.limit < 1:
        raise InputError(f"must be positive, got {args.limit}", field="limit")
    if args.bounded_threshold <= 0:
        raise InputError(
            f"must be positive, got {args.bounded_threshold}", field="bounded_threshold"
        )
    inputs = load_trace(args, schedulers)
    if (
        args.heatmap
    ):  # read and checked also when only classic schedulers run (they ignore it): no garbage passes
        co_simulation_options(args)
    return inputs


def _elastic_with_whole_nodes(args, names) -> None:
    """Elastic jobs resize over whole nodes; a co-scheduler shares nodes by half-socket binding with
    speeds from the heatmap. The two models do not compose (a job would get both speedups), so the
    pair is refused."""
    if not args.elastic_fraction:
        return
    from cosched.simulator.compare import checked_scheduler

    shared = [name for name in names if checked_scheduler(name, args.depth).co_located]
    if shared:
        raise InputError(
            f"elastic jobs run on whole nodes, {', '.join(shared)} shares nodes between two jobs: "
            f"the two models do not compose; use a classic scheduler with --elastic-fraction, or "
            f"leave it out",
            field="--elastic-fraction",
        )


def _note_without_heatmap(args, names) -> None:
    """Warn that a co-scheduler given no --heatmap runs every shared node at speedup 1.0."""
    if args.heatmap:
        return
    from cosched.simulator.compare import checked_scheduler

    shared = [name for name in names if checked_scheduler(name, args.depth).co_located]
    if shared:
        import warnings

        warnings.warn(
            f"{', '.join(shared)} shares nodes between jobs, but no --heatmap was given: every "
            f"pair runs at speedup 1.0 (give --heatmap FILE or a preset for measured speedups)",
            stacklevel=2,
        )


def _preflight(args, names, platform) -> None:
    """Every scheduler of the command can run on the platform, checked before the first
    simulation."""
    from cosched.simulator.compare import preflight

    options = co_simulation_options(args).get("scheduler_options") if args.heatmap else None
    preflight(
        names, platform, depth=args.depth, placement=args.placement, scheduler_options=options
    )


def _run(
    args,
    name,
    platform,
    workload,
    progress,
    job_models=None,
    compat=None,
    partitions=None,
    policy=None,
):
    from cosched.simulator.compare import checked_scheduler
    from cosched.simulator.simulation import simulate

    scheduler = checked_scheduler(name, args.depth)
    co_options = co_simulation_options(args) if scheduler.co_located else {}
    options = co_options.pop("scheduler_options", None) or {}
    options.update(policy or {})
    variant, engine_options = run_options(compat, len(workload), args.kill_at_walltime)
    # the co-schedulers' options (--missing-pair, ...), --priority, the compat variant
    if options or variant:
        scheduler = checked_scheduler(name, args.depth, {**options, **variant})
    return simulate(
        workload,
        platform,
        scheduler,
        use_run_times=args.run_times,
        progress=progress,
        job_models=job_models,
        partitions=partitions,
        **co_options,
        **engine_options,
    )


def _check_policies(args, names, partitions, workload, options):
    """Refuse, before any run, a scheduler that cannot take the --priority `options` or
    --partitions; the workload to simulate (the jobs the partitions accepted)."""
    from cosched.simulator.compare import checked_scheduler
    from cosched.simulator.schedulers.base import QueueScheduler

    for name in filter(None, names):
        scheduler = checked_scheduler(name, args.depth)
        for flag, used in (("--priority", options), ("--partitions", partitions is not None)):
            if used and (not isinstance(scheduler, QueueScheduler) or scheduler.co_located):
                raise InputError(
                    f"{name!r} is not a queue scheduler (fcfs, easy, conservative, sjf, ljf)",
                    field=flag,
                )
        if options:
            checked_scheduler(name, args.depth, options)
    if options and not options["priority_weights"].weighted:
        import warnings

        warnings.warn(
            "every multifactor weight is 0 (Slurm's default): all jobs get priority 0 and the "
            "queue stays in submit order; give --priority-weights, e.g. slurm-example",
            stacklevel=2,
        )
    return workload if partitions is None else partitions.workload


def _policy_summary(args, policy: dict) -> dict:
    """Summary keys of --partitions and --priority (none without them: summaries unchanged)."""
    from dataclasses import asdict

    summary: dict = {}
    if args.partitions:
        summary["partitions"] = str(args.partitions)
    if args.priority:
        summary["priority"] = args.priority
        summary["priority_weights"] = asdict(policy["priority_weights"])
    return summary


def _print_summary(summary: dict, cleaning: dict) -> None:
    """The summary as text: each label carries its unit (makespan in s, h or d, other times in
    seconds)."""
    changes = ", ".join(
        f"{k} {v}" for k, v in cleaning.items() if k not in ("records", "jobs") and v
    )
    print(
        f"{summary['scheduler']} on {summary['platform']}: {summary['jobs']} jobs "
        f"({cleaning.get('records', summary['jobs'])} records"
        + (f"; {changes})" if changes else ")")
    )
    for key, value in summary.items():
        if key in TEXT_SKIPPED or value is None or (key == "elastic" and not value["fraction"]):
            continue  # a rigid run has no elastic marking to report
        if isinstance(value, dict):  # a group of settings: `name value` pairs, not a Python dict
            print(f"  {key:<34} " + ", ".join(f"{name} {shown}" for name, shown in value.items()))
            continue
        unit, text = (
            (time_unit(value)[0], _fitted) if key in FITTED else UNITS.get(key, (None, _number))
        )
        label = f"{key} [{unit}]" if unit else key
        shown = (
            text(value)
            if isinstance(value, (int, float)) and not isinstance(value, bool)
            else value
        )
        print(f"  {label:<34} {shown}")


def _simulate_command(args) -> int:
    from cosched.outputs import atomic_path, check_outputs, output_dir
    from cosched.simulator.jobs_csv import jobs_csv_blocks
    from cosched.simulator.metrics import summarize

    scheduler = one_name(
        args, "scheduler", "easy", "--scheduler", "simulate runs one scheduler (compare: several)"
    )
    plots = plots_target(
        args, plots_folder(args.out)
    )  # off unless asked: plotting doubles the time
    check_outputs(
        ("--out", args.out, "folder"),
        ("--plots", plots, "folder"),
        ("--swf-out", args.swf_out, "file"),
    )
    names = [scheduler] + ([args.baseline] if args.baseline else [])
    _elastic_with_whole_nodes(args, names)
    platform, workload, window, compat = _load(args, names)
    policy = _policy_options(args)  # read once: the weights may be a file
    partitions = _partitioned(args, platform, workload)
    if args.hybrid:  # on-demand, rigid and malleable jobs under a hybrid mechanism
        if _trace_options_given(args) or args.swf_out:
            raise InputError(
                "the trace options (--compat, --cleaning, --status, --kill-at-walltime, --from, "
                "--to, --swf-out) do not apply to --hybrid runs",
                field="--hybrid",
            )
        args.plots_folder = plots
        return hybrid_simulate(args, scheduler, platform, workload)
    _preflight(args, names, platform)
    workload = _check_policies(args, names, partitions, workload, policy)
    _note_without_heatmap(args, names)
    job_models, marking = simulate_job_models(args, platform, workload)
    progress = not args.quiet
    run = (platform, workload, progress, job_models, compat, partitions, policy)
    result = _run(args, scheduler, *run)
    baseline = _run(args, args.baseline, *run) if args.baseline else None
    measured, measured_baseline = measured_runs(window, result, baseline)
    summary = summarize(
        measured, measured_baseline, args.bounded_threshold, args.utilization or "last-end"
    )
    summary.update(trace_summary(args, result, workload, window, compat))
    summary["cleaning"] = workload.cleaning
    summary["workload"] = str(args.workload)
    summary["use_run_times"] = args.run_times
    summary["depth"] = args.depth
    summary.update(_policy_summary(args, policy))
    if (
        args.bound and job_models is None
    ):  # the bound holds for rigid jobs (cosched.simulator.bounds)
        from cosched.simulator.bound_cli import bound_columns

        summary.update(
            bound_columns(
                args,
                platform,
                workload,
                (result, baseline) if baseline else (result,),
                summary["makespan"],
            )
        )
    else:
        summary["elastic"] = marking.to_dict()
    written = []
    if args.out:
        with output_dir(args.out) as folder:
            plain = job_models is None and not args.parquet and window is None
            blocks = jobs_csv_blocks(result) if plain else None
            if blocks is not None:  # pandas' to_csv bytes, without pandas (a fast start)
                with atomic_path(folder / "jobs.csv") as path, open(path, "wb") as handle:
                    handle.writelines(blocks)
            else:
                frame = result.jobs_frame()
                if job_models is not None:
                    frame = model_columns(frame, job_models, platform)
                if window is not None:  # which jobs the metrics count (trace_window.WINDOW_RULE)
                    frame["measured"] = window.measured(workload.submit)
                with atomic_path(folder / "jobs.csv") as path:
                    frame.to_csv(path, index=False)
            written.append(folder / "jobs.csv")
            if args.parquet:
                with atomic_path(folder / "jobs.parquet") as path:
                    frame.to_parquet(path, index=False)
                written.append(folder / "jobs.parquet")
            with atomic_path(folder / "summary.json") as path:
                path.write_text(json.dumps(summary, indent=2) + "\n")
            written.append(folder / "summary.json")
    if args.swf_out:
        from cosched.simulator.swf_out import write_swf

        written.append(write_swf(result, args.swf_out))
    if plots is not None:
        from cosched.simulator.plots import write_plots

        written += write_plots(result, plots)
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        _print_summary(
            {k: v for k, v in summary.items() if k not in ("cleaning", "workload")},
            workload.cleaning,
        )
    announce(args, *written)
    return 0


def _trace_options_given(args) -> bool:
    """True when a trace option (--compat, --cleaning, --status, --kill-at-walltime, --from, --to)
    is on the command line."""
    return any(
        value is not None
        for value in (args.compat, args.cleaning, args.status, args.window_from, args.window_to)
    ) or bool(args.kill_at_walltime)


def _compare_command(args) -> int:
    """Thin layer over `cosched.simulator.compare.compare`: the table (or JSON) of its rows."""
    from cosched.outputs import check_outputs
    from cosched.simulator.compare import compare, compare_path

    names = names_or(args, "scheduler", CLASSIC, "--scheduler")
    path = compare_path(args.out, warn=False)  # compare() warns about the older form
    plots = plots_target(args, None if path is None else path.parent / "plots", fixed=True)
    if (
        path is not None
    ):  # a folder; an --out ending in .csv that is no folder names the file itself (old form)
        check_outputs(
            ("--out", path, "file") if path == Path(args.out) else ("--out", args.out, "folder"),
            ("--plots", plots, "folder"),
        )
    runs = list(dict.fromkeys(names + [args.baseline]))
    policy = _policy_options(args)  # read once: the weights may be a file
    platform, workload, window, compat = args.platform, args.workload, None, None
    if _trace_options_given(args) or args.partitions:  # the jobs as the options read and cut them
        platform, workload, window, compat = _load(args, runs)
    partitions = _partitioned(args, platform, workload)
    workload = _check_policies(args, runs, partitions, workload, policy)
    _note_without_heatmap(args, names)
    frame = compare(
        workload,
        platform,
        names,
        baseline=args.baseline,
        heatmap=args.heatmap,
        alone_speedup=args.spread_speedup,
        default_speedup=args.default_speedup,
        placement=args.placement,
        depth=args.depth,
        use_run_times=args.run_times,
        bounded_threshold=args.bounded_threshold,
        limit=args.limit,
        out=args.out,
        force=args.force,
        progress=not args.quiet,
        compat=compat.name if compat is not None else None,
        kill_at_walltime=args.kill_at_walltime,
        window=window,
        swf_memory=args.swf_memory,
        partitions=partitions,
        scheduler_options=policy or None,
    )
    written = [path] if path is not None else []
    if plots is not None:
        from cosched.simulator.plots import compare_plot

        written.append(compare_plot(frame, plots / "compare.png"))
    announce(args, *written)
    rows = _json_rows(frame)
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    rejected = f", {partitions.rejected} rejected by their partition's limits" if partitions else ""
    print(
        f"{frame.attrs['jobs']} jobs on {frame.attrs['platform']} ({frame.attrs['cores']} cores"
        f"{rejected}), makespan speedup against {args.baseline}"
    )
    unit = time_unit([row["makespan"] for row in rows if row.get("makespan") is not None])[0]
    header = ["scheduler"] + [
        f"{title} [{unit}]" if key == "makespan" else title for key, title, _ in COMPARE_COLUMNS
    ]
    table = [
        [row["scheduler"]]
        + [
            (
                "-"
                if row.get(key) is None
                else _fitted(row[key], unit)
                if key == "makespan"
                else text(row[key])
            )
            for key, _, text in COMPARE_COLUMNS
        ]
        for row in rows
    ]
    widths = [max(len(line[i]) for line in table + [header]) for i in range(len(header))]
    for line in [header] + table:
        print(
            "  ".join(
                cell.rjust(width) if i else cell.ljust(width)
                for i, (cell, width) in enumerate(zip(line, widths))
            )
        )
    return 0


def _json_rows(frame) -> list[dict]:
    """The rows as plain dicts: a missing value is None; co-scheduling metrics only where a
    co-scheduler ran."""
    from cosched.simulator.compare import CO_METRICS

    rows = []
    for record in frame.to_dict("records"):
        row = {}
        for key, value in record.items():
            if value is None or (isinstance(value, float) and math.isnan(value)):
                if key in CO_METRICS:
                    continue
                value = None
            row[key] = value.item() if hasattr(value, "item") else value
        rows.append(row)
    return rows
