"""`cosched experiment-elastic` (the six policies of 001 §6.3 on a real trace) and the
elastic-marking flags
of `cosched simulate` (`add_elastic_options`, `elastic_marking`).

Thin layer: parse, call `cosched.simulator.elastic.experiment` / `traces`, print.
"""

from __future__ import annotations

from cosched.cli_options import (
    LazyChoices,
    add_alias,
    add_json,
    add_name_list,
    add_out,
    add_parallel,
    add_plots,
    add_quiet,
    add_seed,
    announce,
    names_or,
    plots_target,
)
from cosched.data import WORKLOADS
from cosched.simulator.platform import PRESETS as PLATFORMS
from cosched.simulator.schedulers import ELASTIC as POLICIES

__all__ = [
    "register",
    "add_elastic_options",
    "elastic_marking",
    "simulate_job_models",
    "model_columns",
]

# read on use (the module imports numpy; the parser is built without it)
KINDS = LazyChoices("cosched.simulator.elastic.traces", "ELASTIC_KINDS")
SCALINGS = LazyChoices("cosched.simulator.elastic.traces", "SCALINGS")


def add_elastic_options(parser, *, fraction_default: float = 0.0) -> None:
    """The flags that mark a seeded fraction of a trace's jobs moldable or malleable."""
    parser.add_argument(
        "--elastic-fraction",
        type=float,
        default=fraction_default,
        metavar="F",
        help=f"share of the jobs (0..1, chosen with --seed) made elastic "
        f"(default {fraction_default:g})",
    )
    parser.add_argument(
        "--elastic-kind",
        choices=KINDS,
        default="malleable",
        metavar="KIND",
        help="moldable (size chosen at start) or malleable (resized while running; default)",
    )
    parser.add_argument(
        "--elastic-range",
        default="0.5,2",
        metavar="LO,HI",
        help="node bounds of an elastic job as multiples of its trace size, 0 < LO <= 1 <= HI, "
        "clipped to [1, platform nodes] (default 0.5,2)",
    )
    parser.add_argument(
        "--scaling",
        choices=SCALINGS,
        default="linear",
        metavar="LAW",
        help="speed on n nodes: linear (n) or amdahl (1 / (f + (1 - f) / n)); default linear",
    )
    parser.add_argument(
        "--serial-fraction",
        type=float,
        default=0.05,
        metavar="f",
        help="Amdahl's serial fraction f with --scaling amdahl (default 0.05)",
    )
    parser.add_argument(
        "--reconfiguration-cost",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="seconds without progress after every resize of an elastic job (default 0)",
    )


def elastic_marking(args, seed: int):
    """The `ElasticMarking` of the parsed flags (InputError on a bad fraction, range or fraction
    f)."""
    from cosched.simulator.elastic.traces import ElasticMarking, parse_range

    low, high = parse_range(args.elastic_range)
    return ElasticMarking(
        args.elastic_fraction,
        args.elastic_kind,
        low,
        high,
        args.scaling,
        args.serial_fraction,
        args.reconfiguration_cost,
        seed,
    )


def register(subparsers) -> None:
    experiment = subparsers.add_parser(
        "experiment-elastic",
        help="the six rigid and malleable policies of ElastiSim's study on a real trace",
        description="Mark the jobs of a trace elastic (seeded), run fcfs-rigid, fcfs-malleable, "
        "sjf-rigid, sjf-malleable, drf and srtf on them (001 §6.3), resumable; writes runs.csv, "
        "summary.csv, table.md, jobs/ and plots/ into --out.",
    )
    experiment.add_argument(
        "--preset",
        default="kth-sp2",
        metavar="NAME",
        help="kth-sp2: the bundled KTH-SP2 trace on its 100 nodes (default)",
    )
    experiment.add_argument(
        "--workload",
        help=f"bundled trace ({', '.join(WORKLOADS)}), SWF or CSV instead of the preset's",
    )
    experiment.add_argument(
        "--platform",
        help=f"platform preset ({', '.join(PLATFORMS)}) or JSON file instead of the preset's",
    )
    experiment.add_argument(
        "--limit",
        dest="jobs",
        type=int,
        metavar="N",
        help="only the first N jobs of the trace (after cleaning)",
    )
    add_alias(experiment, "--jobs", dest="jobs", type=int)
    add_name_list(
        experiment,
        "--scheduler",
        what="policies to run",
        known=POLICIES,
        default="all six",
        dest="policy",
        alias="--policy",
    )
    add_elastic_options(experiment, fraction_default=1.0)
    experiment.add_argument(
        "--replicates",
        type=int,
        default=1,
        help="markings to run: replicate r marks with seed --seed + r (default 1)",
    )
    experiment.add_argument(
        "--arrival-scale",
        type=float,
        default=1.0,
        metavar="S",
        help="multiply the gaps between submissions by S (< 1 loads the machine; default 1)",
    )
    experiment.add_argument(
        "--run-times",
        action="store_true",
        help="order and backfill with true run times instead of user estimates",
    )
    experiment.add_argument(
        "--no-shrink",
        dest="shrink",
        action="store_false",
        help="malleable policies never shrink a running job to admit a waiting one",
    )
    experiment.add_argument(
        "--replicas",
        type=int,
        default=0,
        metavar="K",
        help="also run every (marking, policy) K more times with every submission moved by an "
        "independent uniform draw in [-J, +J] (J: --jitter): spread.csv gives each metric's min, "
        "median and max over them and the per-job turnaround spread (default 0: off)",
    )
    experiment.add_argument(
        "--jitter",
        type=float,
        default=None,
        metavar="SECONDS",
        help="the largest move of a submission in a replica (default 1e-06)",
    )
    add_seed(experiment, "seed of the marking")
    add_out(
        experiment,
        "folder",
        "runs.csv, summary.csv, table.md, jobs/, plots/ (re-running it resumes)",
        required=True,
        writes=LazyChoices("cosched.simulator.elastic.experiment", "OWNED"),
    )
    add_parallel(experiment)
    add_plots(experiment, "the plots")
    add_quiet(experiment)
    add_json(experiment, "the mean table")
    experiment.add_argument(
        "--force",
        action="store_true",
        help="start over in --out, removing what an earlier experiment-elastic wrote there",
    )
    experiment.set_defaults(func=_experiment_command)


def _experiment_command(args) -> int:
    from cosched.errors import InputError
    from cosched.outputs import check_outputs
    from cosched.simulator.elastic.experiment import experiment_spec, markdown_table, run_experiment

    plots = plots_target(args, f"{args.out}/plots", fixed=True)
    check_outputs(("--out", args.out, "folder"), ("--plots", plots, "folder"))
    if args.workers is not None and args.workers <= 0:
        raise InputError("must be positive", field="workers")
    if args.jobs is not None and args.jobs < 1:
        raise InputError(f"must be positive, got {args.jobs}", field="--limit")
    if args.jitter is not None and not args.replicas:
        raise InputError(
            "needs --replicas K (the jitter moves the replicas' submissions)", field="--jitter"
        )
    preset = None if args.workload and args.platform else args.preset
    spec = experiment_spec(
        preset,
        workload=args.workload,
        platform=args.platform,
        jobs=args.jobs,
        marking=elastic_marking(args, args.seed),
        policies=names_or(args, "policy", POLICIES, "--scheduler"),
        replicates=args.replicates,
        arrival_scale=args.arrival_scale,
        use_run_times=args.run_times,
        shrink=args.shrink,
        replicas=args.replicas,
        jitter=1e-6 if args.jitter is None else args.jitter,
    )
    summary = run_experiment(
        spec,
        args.out,
        workers=args.workers,
        dask=args.dask,
        progress=not args.quiet,
        plots=plots is not None,
        force=args.force,
    )
    announce(
        args,
        *(f"{args.out}/{name}" for name in ("runs.csv", "summary.csv", "table.md")),
        *((f"{args.out}/spread.csv",) if spec.replicas else ()),
        *((f"{plots}/",) if plots is not None else ()),
    )
    if args.json:
        print(summary.reset_index().to_json(orient="records"))
    else:
        print(markdown_table(summary), end="")
        if spec.replicas:
            _print_spread(f"{args.out}/spread.csv", spec.replicas, spec.jitter)
    return 0


def _print_spread(path: str, replicas: int, jitter: float) -> None:
    """Replicate 0's spread of the mean turnaround and the makespan, per policy."""
    import pandas as pd

    spread = pd.read_csv(path)
    spread = spread[spread["replicate"] == 0].set_index(["policy", "metric"])
    print(
        f"\nspread over {replicas} replicas (submissions moved by up to {jitter:g} s), min / max:"
    )
    for policy in dict.fromkeys(spread.index.get_level_values(0)):
        turnaround, makespan = (
            spread.loc[(policy, "mean_turnaround")],
            spread.loc[(policy, "makespan")],
        )
        print(
            f"  {policy:<16} mean turnaround [h] {turnaround['min'] / 3600:.2f} / "
            f"{turnaround['max'] / 3600:.2f}   makespan [d] {makespan['min'] / 86400:.2f} / "
            f"{makespan['max'] / 86400:.2f}"
        )


def simulate_job_models(args, platform, workload):
    """`cosched simulate`: (per-job models, marking) from the marking flags; models None with
    fraction 0."""
    from cosched.simulator.elastic.traces import elastic_models

    marking = elastic_marking(args, args.seed)
    return (elastic_models(workload, platform, marking) if marking.fraction > 0 else None), marking


def model_columns(frame, models, platform):
    """jobs.csv of an elastic run: each job's kind and node bounds beside the lifecycle columns."""
    requested = -(-frame["cores"] // platform.cores_per_node)
    bounds = [model.bounds(int(size)) for model, size in zip(models, requested)]
    return frame.assign(
        kind=[model.kind for model in models],
        min_nodes=[low for low, _ in bounds],
        max_nodes=[high for _, high in bounds],
    )
