"""Hybrid workload commands: ``cosched hybrid-workload``, ``cosched experiment-hybrid`` and the
``--hybrid`` options of ``cosched simulate`` (registered by ``cosched.simulator.cli``).

Thin layer: parse, call ``cosched.simulator.hybrid`` (workload, run, experiment), write, print.
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from cosched.cli_options import (
    LazyChoices,
    add_json,
    add_name_list,
    add_out,
    add_parallel,
    add_plots,
    add_quiet,
    add_seed,
    announce,
    mark_output,
    names_or,
    only_with,
    plots_target,
)
from cosched.data import WORKLOADS
from cosched.names import canonical, is_plugin
from cosched.simulator.platform import PRESETS as PLATFORMS

if TYPE_CHECKING:
    from cosched.simulator.hybrid.workload import HybridWorkload
    from cosched.simulator.platform import Platform
    from cosched.simulator.workload import Workload

__all__ = [
    "register",
    "add_hybrid_options",
    "add_workload_options",
    "hybrid_workload",
    "simulate_command",
]

# the names of cosched.simulator.hybrid.mechanisms.MECHANISMS, without importing it
MECHANISM_NAMES = (
    "baseline",
    "n-paa",
    "n-spaa",
    "cua-paa",
    "cua-spaa",
    "cup-paa",
    "cup-spaa",
)


def add_workload_options(parser: argparse.ArgumentParser) -> None:
    """How a trace becomes a hybrid workload (004 §IV-A/B); a hybrid CSV holds it all already."""
    parser.add_argument(
        "--job-types",
        default="on-demand=0.1,rigid=0.6,malleable=0.3",
        metavar="SHARES",
        help="shares of the projects per type, summing to 1 (default on-demand=0.1,rigid=0.6,"
        "malleable=0.3)",
    )
    parser.add_argument(
        "--type-by",
        choices=("group", "user", "job"),
        default="group",
        help="what a project is: SWF group id (default), user id, or each job alone",
    )
    parser.add_argument(
        "--notice",
        default="w5",
        metavar="MIX",
        help="on-demand notice kinds: w1..w5 (Table II of Fan et al.) or shares no-notice=..,"
        "accurate=..,early=..,late=.. (default w5: a quarter each)",
    )
    parser.add_argument(
        "--rigid-setup",
        default="0.05,0.10",
        metavar="LO,HI",
        help="rigid setup as a share of the run time, drawn uniformly (default 0.05,0.10)",
    )
    parser.add_argument(
        "--malleable-setup",
        default="0,0.05",
        metavar="LO,HI",
        help="malleable setup as a share of the run time (default 0,0.05)",
    )
    parser.add_argument(
        "--min-fraction",
        type=float,
        default=0.2,
        metavar="F",
        help="malleable n_min = ceil(F x n_max) (default 0.2)",
    )


def add_hybrid_options(parser: argparse.ArgumentParser) -> None:
    """The ``cosched simulate`` flags of hybrid runs: the others only with ``--hybrid``."""
    hybrid = parser.add_argument(
        "--hybrid",
        metavar="MECHANISM",
        type=_mechanism_argument,
        help=f"on-demand mechanism around --scheduler: {', '.join(MECHANISM_NAMES)}, or a plug-in "
        "(FILE.py:Class, entry points of cosched.hybrid_mechanisms; the workload is typed from the "
        "trace, or read from a hybrid CSV)",
    )
    first = len(parser._actions)
    add_workload_options(parser)
    _checkpoint_options(parser)
    _mechanism_options(parser)
    log = parser.add_argument(
        "--log-actions",
        metavar="CSV",
        help="write every start, resize, preempt, kill, finish, reserve and release with its nodes "
        "and reason (which mechanism step, which on-demand job) to CSV, for replay",
    )
    mark_output(log, "file")
    only_with(hybrid, parser._actions[first:])


def _mechanism_argument(value: str) -> str:
    """A mechanism name in lower case; a plug-in file as given (its path and class keep their
    case)."""
    return value if is_plugin(value) else value.lower()


def _mechanism_options(parser: argparse.ArgumentParser) -> None:
    """The paper's definitions by default; the other readings by name (docs/hybrid.md)."""
    parser.add_argument(
        "--preemption-warning",
        type=float,
        default=120.0,
        metavar="SECONDS",
        help="warning a malleable job gets before it is shrunk or preempted (default 120, "
        "the paper's two minutes; 0: at once)",
    )
    parser.add_argument(
        "--rigid-overhead",
        choices=("elapsed", "lost-work"),
        default="elapsed",
        help="preemption cost of a rigid job without checkpoints: its elapsed time (default, "
        "the paper's) or the work it would lose plus its setup",
    )
    parser.add_argument(
        "--regrow",
        choices=("n_max", "pre-shrink"),
        default="n_max",
        help="a shrunk job grows back up to n_max (default) or to its size before the shrink",
    )
    parser.add_argument(
        "--checkpoint-writes",
        choices=("added", "inside"),
        default="added",
        help="checkpoint writes add their cost to a rigid job's run (default) or fit inside "
        "its trace run time",
    )


def _mechanism_settings(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "warning": args.preemption_warning,
        "rigid_overhead": args.rigid_overhead,
        "regrow": args.regrow,
        "checkpoint_writes": args.checkpoint_writes,
    }


def _checkpoint_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--checkpoint-mtbf",
        type=float,
        metavar="HOURS",
        help="MTBF in Daly's optimum checkpoint interval of rigid jobs (default --mtbf if given, "
        "else 50)",
    )
    parser.add_argument(
        "--checkpoint-factor",
        type=float,
        default=1.0,
        metavar="F",
        help="checkpoint interval as a multiple of Daly's optimum (default 1)",
    )
    _failure_options(parser)


def _failure_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--mtbf",
        type=float,
        metavar="HOURS",
        help="inject node failures: one per HOURS on the whole system, exponential intervals "
        "(seeded by --seed); default: no failures",
    )
    parser.add_argument(
        "--down-hours",
        type=float,
        default=6.0,
        metavar="HOURS",
        help="mean time a failed node stays down, exponential (default 6)",
    )


def _failure_settings(args: argparse.Namespace) -> tuple[float | None, float, float]:
    """(failure MTBF or None, down hours, Daly's MTBF) of the flags, checked."""
    from cosched.simulator.hybrid.failures import check_failure_options
    from cosched.simulator.hybrid.models import CHECKPOINT_MTBF_HOURS

    check_failure_options(args.mtbf, args.down_hours)
    daly = (
        args.checkpoint_mtbf
        if args.checkpoint_mtbf is not None
        else (args.mtbf if args.mtbf is not None else CHECKPOINT_MTBF_HOURS)
    )
    return args.mtbf, args.down_hours, daly


def _pair(text: str, field: str) -> tuple[float, float]:
    from cosched.errors import InputError

    parts = text.split(",")
    try:
        low, high = (float(p) for p in parts)
    except ValueError:
        raise InputError(f"expected LO,HI, got {text!r}", field=field) from None
    return low, high


def hybrid_workload(
    args: argparse.Namespace, platform: Platform, workload: Workload, seed: int
) -> HybridWorkload:
    """The hybrid workload of the flags: read from a hybrid CSV, or typed from the trace, seeded."""
    from cosched.simulator.hybrid.workload import (
        build_hybrid,
        is_hybrid_csv,
        notice_mix,
        read_hybrid_csv,
        trace_projects,
        type_shares,
    )

    if is_hybrid_csv(args.workload):
        hybrid = read_hybrid_csv(args.workload, platform.cores_per_node, platform.total_cores)
        return hybrid.head(len(workload)) if len(workload) < len(hybrid) else hybrid
    projects = trace_projects(workload.source or args.workload, workload.job_id, args.type_by)
    return build_hybrid(
        workload,
        platform.cores_per_node,
        projects,
        seed=seed,
        fractions=type_shares(args.job_types),
        mix=notice_mix(args.notice),
        rigid_setup=_pair(args.rigid_setup, "rigid_setup"),
        malleable_setup=_pair(args.malleable_setup, "malleable_setup"),
        min_fraction=args.min_fraction,
    )


def simulate_command(
    args: argparse.Namespace, scheduler: str, platform: Platform, workload: Workload
) -> int:
    """`cosched simulate --hybrid M`: jobs.csv, summary.json (with the hybrid keys) and workload.csv
    in --out."""
    from cosched.errors import InputError
    from cosched.outputs import atomic_path, output_dir
    from cosched.simulator.hybrid.run import hybrid_metrics, simulate_hybrid
    from cosched.simulator.hybrid.workload import write_hybrid_csv
    from cosched.simulator.metrics import summarize

    if args.baseline:
        raise InputError(
            "--baseline compares schedulers; with --hybrid run --hybrid baseline instead",
            field="baseline",
        )
    if getattr(args, "elastic_fraction", 0):
        raise InputError(
            "--hybrid types the jobs itself; leave out --elastic-fraction", field="elastic_fraction"
        )
    mtbf, down_hours, daly = _failure_settings(args)
    hybrid = hybrid_workload(args, platform, workload, args.seed)
    options = _mechanism_settings(args)
    if args.log_actions:
        options["log_actions"] = True
    result = simulate_hybrid(
        hybrid,
        platform,
        args.hybrid,
        scheduler=scheduler,
        depth=args.depth,
        checkpoint_mtbf=daly,
        checkpoint_factor=args.checkpoint_factor,
        mtbf=mtbf,
        down_hours=down_hours,
        failure_seed=args.seed,
        progress=not args.quiet,
        **options,
    )
    summary = summarize(result, None, args.bounded_threshold)
    summary.update(hybrid_metrics(result, hybrid))
    summary.update(
        scheduler=scheduler,
        cleaning=workload.cleaning,
        workload=str(args.workload),
        depth=args.depth,
        seed=args.seed,
        checkpoint_mtbf=daly,
        mtbf=mtbf,
        down_hours=down_hours if mtbf else None,
        **{key: value for key, value in options.items() if key != "log_actions"},
    )
    written = []
    if args.out:
        with output_dir(args.out) as folder:
            with atomic_path(folder / "jobs.csv") as path:
                result.jobs_frame().to_csv(path, index=False)
            with atomic_path(folder / "summary.json") as path:
                path.write_text(json.dumps(summary, indent=2) + "\n")
            write_hybrid_csv(hybrid, folder / "workload.csv")
            written += [folder / "jobs.csv", folder / "summary.json", folder / "workload.csv"]
    if args.log_actions:
        from cosched.simulator.action_log import write_actions

        assert result.actions is not None  # a run with log_actions
        with atomic_path(args.log_actions) as path:
            write_actions(result.actions, hybrid.workload.job_id, path)
        written.append(args.log_actions)
    if getattr(args, "plots_folder", None) is not None:  # simulate --hybrid --plots (one rule)
        from cosched.simulator.plots import write_plots

        written += write_plots(result, args.plots_folder)
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        _print(summary)
    announce(args, *written)
    return 0


def _print(summary: dict[str, Any]) -> None:
    by_type = summary["turnaround_hours_by_type"]
    print(
        f"{summary['mechanism']} ({summary['scheduler']}) on {summary['platform']}: "
        f"{summary['jobs']} jobs"
    )
    rows = [
        ("instant start ratio", summary["instant_start_ratio"], "{:.3f}"),
        ("turnaround [h]", summary["turnaround_hours"], "{:.3f}"),
    ]
    rows += [(f"  {name} [h]", value, "{:.3f}") for name, value in by_type.items()]
    rows += [
        ("preemption ratio rigid", summary["preemption_ratio_rigid"], "{:.4f}"),
        ("preemption ratio malleable", summary["preemption_ratio_malleable"], "{:.4f}"),
        ("utilization useful", summary["utilization_useful"], "{:.4f}"),
        ("lost [node-h]", summary["lost_node_hours"], "{:.1f}"),
    ]
    if summary["mtbf"] is not None:
        rows += [
            ("node failures", summary["failures"], "{:d}"),
            ("  jobs hit", summary["failure_hits"], "{:d}"),
            ("  lost to failures [node-h]", summary["failure_lost_node_hours"], "{:.1f}"),
        ]
    rows += [
        ("decision max [ms]", summary["decision_ms_max"], "{:.3f}"),
        ("wall [s]", summary["wall_seconds"], "{:.1f}"),
    ]
    for label, value, fmt in rows:
        print(f"  {label:<30} {'-' if value is None else fmt.format(value)}")


def register(subparsers: Any) -> None:
    build = subparsers.add_parser(
        "hybrid-workload",
        help="type a trace's jobs on-demand / rigid / malleable into an editable CSV",
        description="Hybrid workload of Fan et al. (§IV): projects typed at random (seeded), "
        "on-demand notice kinds, setups and malleable bounds, written as a CSV that "
        "`simulate --hybrid` reads back.",
    )
    build.add_argument(
        "--workload", required=True, help=f"bundled trace ({', '.join(WORKLOADS)}) or SWF"
    )
    build.add_argument(
        "--platform", required=True, help=f"preset ({', '.join(PLATFORMS)}) or JSON file"
    )
    build.add_argument("--limit", type=int, help="only the first N jobs (after cleaning)")
    add_workload_options(build)
    add_seed(build, "seed of the typing and the draws")
    add_out(build, "file", "the hybrid workload CSV", required=True)
    add_json(build, "counts per type and notice kind")
    add_quiet(build)
    build.set_defaults(func=_workload_command)

    experiment = subparsers.add_parser(
        "experiment-hybrid",
        help="Fan et al.'s hybrid grid: 7 configurations x seeded typings, tables and plots",
        description="Run the baseline and the six mechanisms on N seeded typings of a trace "
        "(resumable, local processes or Dask); optional notice-mix (W1-W5) and "
        "checkpoint-interval sweeps. Writes grid.csv, runs.csv, summary.csv, table.md and plots/ "
        "into --out.",
    )
    experiment.add_argument(
        "--workload", required=True, help=f"bundled trace ({', '.join(WORKLOADS)}) or SWF"
    )
    experiment.add_argument(
        "--platform", required=True, help=f"preset ({', '.join(PLATFORMS)}) or JSON file"
    )
    experiment.add_argument("--limit", type=int, help="only the first N jobs (after cleaning)")
    experiment.add_argument(
        "--typings", type=int, default=10, help="seeded typings of the trace (default 10)"
    )
    add_name_list(
        experiment,
        "--mechanism",
        what="configurations",
        known=MECHANISM_NAMES,
        default="all seven",
        alias="--mechanisms",
    )
    experiment.add_argument(
        "--scheduler", default="easy", help="site policy: a queue scheduler (default easy)"
    )
    experiment.add_argument(
        "--sweep",
        action="append",
        choices=("notice", "checkpoint"),
        default=[],
        help="also run a sweep: notice (W1-W5) or checkpoint (25-200 %% of Daly's interval, "
        "MTBF 5 h and 50 h); repeatable",
    )
    experiment.add_argument(
        "--sweep-typings", type=int, help="typings per sweep point (default --typings)"
    )
    add_workload_options(experiment)
    experiment.add_argument(
        "--checkpoint-mtbf",
        type=float,
        metavar="HOURS",
        help="MTBF in Daly's interval outside the checkpoint sweep (default --mtbf if given, "
        "else 50)",
    )
    _failure_options(experiment)
    _mechanism_options(experiment)
    add_seed(experiment, "seed of the typings")
    add_out(
        experiment,
        "folder",
        "grid.csv, runs.csv, summary.csv, table.md, plots/",
        required=True,
        writes=LazyChoices("cosched.simulator.hybrid.experiment", "OWNED"),
    )
    add_parallel(experiment)
    experiment.add_argument(
        "--force", action="store_true", help="start over in a folder of another grid"
    )
    add_plots(experiment, "the bar charts and sweep plots")
    add_json(experiment, "the summary table")
    add_quiet(experiment)
    experiment.set_defaults(func=_experiment_command)


def _load(args: argparse.Namespace) -> tuple[Platform, Workload]:
    from cosched.simulator.compare import load_inputs

    return load_inputs(args.workload, args.platform, limit=args.limit)


def _workload_command(args: argparse.Namespace) -> int:
    from cosched.outputs import check_outputs
    from cosched.simulator.hybrid.workload import NOTICE_KINDS, TYPES, write_hybrid_csv
    from cosched.simulator.jobs import JobKind

    check_outputs(("--out", args.out, "file"))
    platform, workload = _load(args)
    hybrid = hybrid_workload(args, platform, workload, args.seed)
    write_hybrid_csv(hybrid, args.out)
    od = hybrid.job_type == JobKind.ON_DEMAND
    types = {kind.value: int((hybrid.job_type == kind).sum()) for kind in TYPES}
    notice = {name: int((hybrid.notice_kind[od] == k).sum()) for k, name in enumerate(NOTICE_KINDS)}
    if args.json:
        print(json.dumps({"jobs": len(hybrid), "types": types, "notice": notice}, indent=2))
    else:
        print(
            f"{len(hybrid)} jobs: "
            + ", ".join(f"{v} {k}" for k, v in types.items())
            + "; on-demand notice: "
            + ", ".join(f"{v} {k}" for k, v in notice.items())
        )
    announce(args, args.out)
    return 0


def _grid_mechanism(name: str) -> str:
    """A registered mechanism's name as listed, or a plug-in (``FILE.py:Class``, an entry point of
    ``cosched.hybrid_mechanisms``) as given, loaded now: one that fails to load, or an unknown
    name, stops the command before any cell runs."""
    from cosched.simulator.hybrid.mechanisms import mechanism_class

    if not is_plugin(name):
        known = canonical(name.replace("&", "-"), MECHANISM_NAMES)
        if known in MECHANISM_NAMES:
            return known
    mechanism_class(name, field="--mechanism")
    return name


def _experiment_command(args: argparse.Namespace) -> int:
    from cosched.errors import InputError
    from cosched.inputs import MAX_RUNS, check_number
    from cosched.simulator.hybrid.experiment import HybridExperiment, markdown_table, run_experiment
    from cosched.simulator.hybrid.workload import notice_mix, trace_projects, type_shares

    plots = plots_target(args, f"{args.out}/plots", fixed=True)
    # before anything is written (a grid of an unknown mechanism left files behind)
    mechanisms = tuple(
        _grid_mechanism(name)
        for name in names_or(args, "mechanism", MECHANISM_NAMES, "--mechanism")
    )
    typings = check_number(args.typings, field="typings", integer=True, minimum=1, limit=MAX_RUNS)
    if args.sweep_typings is not None:
        check_number(
            args.sweep_typings, field="sweep_typings", integer=True, minimum=1, limit=MAX_RUNS
        )
    if args.workers is not None and args.workers < 1:
        raise InputError(f"must be positive, got {args.workers}", field="workers")
    mtbf, down_hours, daly = _failure_settings(args)
    platform, workload = _load(args)
    if mtbf is not None and len(workload):  # before any cell runs: the failures' event count
        from cosched.simulator.hybrid.failures import check_failure_options

        span = float(workload.submit.max() - workload.submit.min() + workload.run.max())
        check_failure_options(mtbf, down_hours, span)
    notice_mix(args.notice)
    spec = HybridExperiment(
        workload,
        trace_projects(workload.source or args.workload, workload.job_id, args.type_by),
        platform,
        typings,
        mechanisms,
        tuple(dict.fromkeys(args.sweep)),
        args.sweep_typings,
        args.seed,
        args.scheduler,
        type_shares(args.job_types),
        args.notice.lower(),
        _pair(args.rigid_setup, "rigid_setup"),
        _pair(args.malleable_setup, "malleable_setup"),
        args.min_fraction,
        daly,
        str(args.workload),
        mtbf,
        down_hours,
        **_mechanism_settings(args),
    )
    check_number(len(spec.cells()), field="typings", limit=MAX_RUNS)
    from cosched.simulator.hybrid.mechanisms import check_site_policy
    from cosched.simulator.schedulers import SCHEDULERS, make_scheduler

    if spec.scheduler not in SCHEDULERS:
        raise InputError(
            f"unknown scheduler {spec.scheduler!r}; known: {', '.join(SCHEDULERS)}",
            field="scheduler",
        )
    check_site_policy(make_scheduler(spec.scheduler))
    summary = run_experiment(
        spec,
        args.out,
        workers=args.workers,
        dask=args.dask,
        progress=not args.quiet,
        plots=plots is not None,
        force=args.force,
    )
    if args.json:
        main = summary.xs("main", level="sweep").reset_index()
        print(json.dumps(json.loads(main.to_json(orient="records")), indent=2))
    else:
        print(markdown_table(summary, spec), end="")
    announce(args, args.out)
    return 0
