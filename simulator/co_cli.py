"""Co-scheduling commands: ``cosched heatmap``, ``generate-workload``, ``experiment-sim``, and the
``simulate`` options ``--heatmap/--spread-speedup/--default-speedup/--placement`` and
``--missing-pair/--alone-speedup/--reserve/ --compact-below/--utilization`` (registered by
``cosched.simulator.cli``).

Thin layer: parse, call
``cosched.theory.heatmap`` / ``cosched.simulator.colocation`` / ``cosched.simulator.experiment``,
print.
"""

from __future__ import annotations

import json
import math

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
    mark_output,
    names_or,
    plots_target,
    speedup,
)
from cosched.data import HEATMAPS
from cosched.simulator.platform import PRESETS as PLATFORMS
from cosched.simulator.schedulers import SCHEDULERS

# read on use (the modules import pandas/scipy; the parser is built without them)
INTERARRIVALS = LazyChoices("cosched.simulator.generate", "INTERARRIVALS")
SELECTIONS = LazyChoices("cosched.simulator.generate", "SELECTIONS")
PLACEMENTS = LazyChoices("cosched.simulator.colocation", "PLACEMENTS")
MISSING_PAIRS = LazyChoices("cosched.simulator.colocation", "MISSING_PAIRS")
RESERVATIONS = LazyChoices("cosched.simulator.schedulers.coscheduling", "RESERVATIONS")
UTILIZATION_SPANS = LazyChoices("cosched.simulator.metrics", "UTILIZATION_SPANS")
WORKLOADS = LazyChoices("cosched.simulator.experiment", "WORKLOAD_MODES")

__all__ = ["register", "add_simulate_options", "add_fidelity_options", "co_simulation_options"]


def register(subparsers) -> None:
    heatmap = subparsers.add_parser(
        "heatmap",
        help="inspect a co-execution heatmap CSV (thesis Table 4.1 layout), plot it",
        description="Read a heatmap CSV (name_A, procs_A, compact_A, name_B, procs_B, compact_B, "
        "co_A_B, co_B_A), print its applications and speedups, optionally plot it or convert it "
        "to a theory instance.",
    )
    heatmap.add_argument("file", help=f"heatmap CSV or bundled preset ({', '.join(HEATMAPS)})")
    add_plots(
        heatmap,
        "the applications x applications speedup plot to this file",
        default_on=False,
        metavar="PNG",
        value_required=True,
        aliases=("--plot",),
    )
    mark_output(
        heatmap.add_argument(
            "--instance", metavar="JSON|NPZ", help="write the pairs as a theory Instance"
        ),
        "file",
    )
    heatmap.add_argument(
        "--default-speedup", type=speedup, help="speedup for pairs measured in neither direction"
    )
    add_json(heatmap, "the applications and speedups")
    add_quiet(heatmap)
    heatmap.set_defaults(func=_heatmap_command)

    generate = subparsers.add_parser(
        "generate-workload",
        help="draw N jobs from an application seed (heatmap or seed JSON) into a CSV workload",
        description="Workload generation of 000 §3.1: applications drawn uniformly, by frequencies "
        "or from a list; "
        "interarrival times batch (all at 0), constant, uniform, Poisson or Weibull; seeded.",
    )
    source = generate.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--heatmap",
        help=f"heatmap CSV or bundled preset ({', '.join(HEATMAPS)}): its "
        "applications are the seed",
    )
    source.add_argument(
        "--app-seed", help='JSON {"applications": [{"name", "procs", "compact_time"}, ...]}'
    )
    generate.add_argument("--jobs", type=int, help="number of jobs (not with --selection list)")
    generate.add_argument(
        "--selection",
        choices=SELECTIONS,
        default="uniform",
        metavar="HOW",
        help="how applications are drawn: %(choices)s (default uniform)",
    )
    generate.add_argument(
        "--frequencies", help="comma-separated weights, one per application (seed order)"
    )
    generate.add_argument("--apps", help="comma-separated application names (--selection list)")
    generate.add_argument(
        "--interarrival",
        choices=INTERARRIVALS,
        default="batch",
        metavar="KIND",
        help="gaps between submissions: %(choices)s (default batch: all at 0)",
    )
    generate.add_argument(
        "--mean-interarrival",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="mean gap [s] (constant, poisson, weibull; default 60)",
    )
    add_alias(generate, "--mean", dest="mean_interarrival", type=float)
    generate.add_argument("--low", type=float, default=0.0, help="uniform gaps: lower bound [s]")
    generate.add_argument("--high", type=float, default=120.0, help="uniform gaps: upper bound [s]")
    generate.add_argument("--shape", type=float, default=1.5, help="Weibull shape")
    add_seed(generate, "seed of the draws")
    add_out(
        generate,
        "file",
        "the workload CSV (job_id, submit_time, run_time, cores, estimate, app)",
        required=True,
    )
    add_json(generate, "a summary")
    add_quiet(generate)
    generate.set_defaults(func=_generate_command)

    experiment = subparsers.add_parser(
        "experiment-sim",
        help="thesis-style grid: schedulers x workloads, tables and plots",
        description="Run every scheduler on N shuffles or draws of a generated workload "
        "(003 ch. 6), resumable; "
        "writes runs.csv, summary.csv, tables.md and plots/ into --out; --preset thesis adds "
        "thesis.md/.csv (003 Tables 6.1/6.2 against ours), --preset elise-table2 writes "
        "elise_table2.md/.csv (000 Table 2) over one grid per sub-heatmap.",
    )
    experiment.add_argument(
        "--preset",
        default="example",
        metavar="NAME",
        help="example (bundled synthetic NPB-like heatmap, ARIS 420 x 20 cores, 10 x 1000 jobs; "
        "default), example-small, thesis (the ARIS NAS heatmap with ELiSE's rules, 10 new "
        "draws of 1000 jobs, compared with 003 Tables 6.1/6.2) or elise-table2 (Marconi "
        "Fig. 2 heatmap, 100 x 48 cores, 4 shuffles of 500 jobs per sub-heatmap, 000 "
        "Table 2); an unknown name lists the known ones",
    )
    experiment.add_argument(
        "--heatmap",
        help=f"heatmap CSV or bundled heatmap ({', '.join(HEATMAPS)}) instead of the preset's",
    )
    experiment.add_argument(
        "--platform",
        help=f"platform preset ({', '.join(PLATFORMS)}), JSON file (several node types: groups) "
        "or SimGrid XML instead of the preset's",
    )
    experiment.add_argument(
        "--experiments", type=int, help="number of experiments (workload shuffles or draws)"
    )
    experiment.add_argument("--jobs", type=int, help="jobs per workload")
    add_name_list(
        experiment,
        "--scheduler",
        what="schedulers to run (plug-ins too: FILE.py:Class, entry points of cosched.schedulers)",
        known=tuple(SCHEDULERS),
        default="the 13 of thesis Table 6.1 and matching",
        alias="--schedulers",
    )
    add_seed(experiment, "workload seed")
    experiment.add_argument(
        "--interarrival",
        default="batch",
        choices=INTERARRIVALS,
        metavar="KIND",
        help="gaps between submissions: %(choices)s (default batch)",
    )
    experiment.add_argument(
        "--mean-interarrival",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="mean gap [s] (default 60)",
    )
    add_alias(experiment, "--mean", dest="mean_interarrival", type=float)
    experiment.add_argument(
        "--default-speedup",
        type=speedup,
        help="speedup for pairs measured in neither direction (--missing-pair default)",
    )
    add_fidelity_options(experiment, preset=True)
    experiment.add_argument(
        "--workloads",
        choices=WORKLOADS,
        metavar="HOW",
        help="each experiment a shuffle of one drawn workload (shuffle, 000 §4.3) or a new draw "
        "(draw, 003 ch. 6); default: the preset's (thesis: draw, others: shuffle)",
    )
    add_out(
        experiment,
        "folder",
        "runs.csv, summary.csv, tables.md, plots/ (re-running it resumes)",
        required=True,
        writes=LazyChoices("cosched.simulator.experiment", "OWNED"),
    )
    add_parallel(experiment)
    add_plots(experiment, "the plots")
    add_quiet(experiment, "--no-progress")
    add_json(experiment, "the mean table")
    experiment.add_argument(
        "--force",
        action="store_true",
        help="start over in --out, removing what an earlier experiment-sim wrote there (by "
        "default the same spec resumes and another spec or foreign files are refused)",
    )
    experiment.set_defaults(func=_experiment_command)


def add_simulate_options(parser) -> None:
    """Options of ``cosched simulate`` for the co-schedulers."""
    parser.add_argument(
        "--heatmap",
        help=f"heatmap CSV or bundled preset ({', '.join(HEATMAPS)}) linking the "
        "workload's app column to pairwise speedups "
        "(co-schedulers only)",
    )
    parser.add_argument(
        "--spread-speedup",
        type=speedup,
        help="speedup of a job alone on spread nodes (default: heatmap per-app value, else 1.0)",
    )
    parser.add_argument(
        "--default-speedup", type=speedup, help="speedup for pairs measured in neither direction"
    )
    parser.add_argument(
        "--placement",
        choices=PLACEMENTS,
        default="idle",
        metavar="HOW",
        help="co-location (%(choices)s): spread on idle nodes first (default idle) or fill "
        "half-full nodes first",
    )


def add_fidelity_options(parser, preset: bool = False) -> None:
    """The co-scheduling choices the papers leave open (`simulate` and `experiment-sim`): None = the
    default (or, with `preset`, the preset's value)."""
    default = "the preset's" if preset else None

    def said(value: str) -> str:
        return default or f"default {value}"

    parser.add_argument(
        "--missing-pair",
        choices=MISSING_PAIRS,
        metavar="RULE",
        help="speedup of a pair measured in neither direction: the heatmap's default speedup "
        "(default) or the job's mean measured speedup, as ELiSE (mean); Popularity ranks "
        f"count measured pairs only ({said('default')})",
    )
    parser.add_argument(
        "--alone-speedup",
        metavar="one|max|VALUE",
        help="speedup of a job alone on its spread nodes: 1.0 (one), its maximum measured speedup, "
        "as ELiSE (max), or VALUE (default: the heatmap's per-application value, else 1.0"
        + ("; the thesis and elise-table2 presets: max)" if preset else ")"),
    )
    if preset:
        add_alias(parser, "--spread-speedup", dest="alone_speedup")
        parser.add_argument(
            "--placement",
            choices=PLACEMENTS,
            metavar="HOW",
            help="co-location: spread on idle nodes first (idle) or fill half-full nodes first "
            f"(shared, ELiSE's random co-scheduler) ({said('idle')})",
        )
    parser.add_argument(
        "--reserve",
        choices=RESERVATIONS,
        metavar="WHO",
        help="co-schedulers' EASY reservation: the first job of the sorted queue that does not fit "
        "(head) or the oldest waiting job, backfill candidates in arrival order, as ELiSE "
        f"(oldest) ({said('head')})",
    )
    parser.add_argument(
        "--compact-below",
        type=int,
        metavar="RANK",
        help="Popularity deploys a job compact when its rank is below RANK (003 §5.2.5: 3; "
        f"{said('3')})",
    )
    parser.add_argument(
        "--utilization",
        choices=UTILIZATION_SPANS,
        metavar="UNTIL",
        help="utilization (003 (2.6)) up to the last job end (last-end) or until the waiting queue "
        f"is empty, as ELiSE §4.1 (queue-empty) ({said('last-end')})",
    )


def co_simulation_options(args) -> dict:
    """The heatmap options of ``cosched simulate`` for a co-scheduler run (see
    `simulation.simulate`)."""
    from cosched.errors import InputError
    from cosched.simulator.colocation import alone_speedup_value
    from cosched.theory.heatmap import read_heatmap

    heatmap = read_heatmap(args.heatmap, default=args.default_speedup) if args.heatmap else None
    if heatmap is None and args.default_speedup is not None:
        raise InputError("--default-speedup needs --heatmap", field="default_speedup")
    alone = alone_speedup_value(getattr(args, "alone_speedup", None))
    if alone is not None and args.spread_speedup is not None:
        raise InputError(
            "give --alone-speedup or --spread-speedup, not both", field="alone_speedup"
        )
    options = {
        "heatmap": heatmap,
        "alone_speedup": args.spread_speedup if alone is None else alone,
        "placement": args.placement,
    }
    scheduler_options = {
        name: getattr(args, name)
        for name in ("missing_pair", "reserve", "compact_below")
        if getattr(args, name, None) is not None
    }
    if scheduler_options:
        options["scheduler_options"] = scheduler_options
    return options


def _heatmap_command(args) -> int:
    import numpy as np

    from cosched.errors import InputError
    from cosched.outputs import check_outputs
    from cosched.theory.heatmap import instance_from_heatmap, plot_heatmap, read_heatmap

    plot = plots_target(args, None)
    if args.instance and not args.instance.lower().endswith((".json", ".npz")):
        raise InputError(
            "the instance file must end in .json or .npz", source=args.instance, field="--instance"
        )
    check_outputs(("--plots", plot, "plot"), ("--instance", args.instance, "file"))
    heatmap = read_heatmap(args.file, default=args.default_speedup)
    measured = heatmap.measured
    missing = int(np.isnan(measured).sum())
    instance = (
        instance_from_heatmap(heatmap) if args.instance else None
    )  # fails before any file is written
    if plot is not None:
        from cosched.theory.heatmap_spread import plot_heatmap_spread, read_spread

        spread = read_spread(
            args.file, heatmap
        )  # a measured heatmap: the spread of its repeats beside it
        if spread is None:
            plot_heatmap(heatmap, plot)
        else:
            plot_heatmap_spread(heatmap, spread, plot)
    if instance is not None:
        from cosched.theory.instance import save_instance

        save_instance(instance, args.instance)
    announce(args, plot, args.instance)
    finite = measured[np.isfinite(measured)]
    if args.json:

        def clean(values):
            return [[None if math.isnan(v) else round(float(v), 6) for v in row] for row in values]

        print(
            json.dumps(
                {
                    "file": args.file,
                    "applications": list(heatmap.applications),
                    "procs": heatmap.procs.tolist(),
                    "compact_times": heatmap.compact_times.tolist(),
                    "speedups": clean(measured),
                    "unmeasured_pairs": missing,
                    "mean_speedup": float(finite.mean()) if finite.size else None,
                }
            )
        )
        return 0
    print(
        f"{args.file}: {len(heatmap)} applications, "
        f"{measured.size - missing} measured directed pairs, "
        f"{missing} unmeasured"
    )
    if finite.size:
        print(
            f"speedup: mean {finite.mean():.3f}, min {finite.min():.3f}, max {finite.max():.3f}, "
            f"below 1: {(finite < 1).mean() * 100:.1f}%"
        )
    width = max(len(name) for name in heatmap.applications)
    for name, procs, compact in zip(heatmap.applications, heatmap.procs, heatmap.compact_times):
        print(f"  {name:<{width}}  {int(procs):>6} procs  {compact:>10.2f} s compact")
    return 0


def _generate_command(args) -> int:
    from cosched.errors import InputError
    from cosched.outputs import check_outputs
    from cosched.simulator.generate import (
        ApplicationSeed,
        generate_workload,
        load_application_seed,
        write_workload_csv,
    )
    from cosched.theory.heatmap import read_heatmap

    check_outputs(("--out", args.out, "file"))
    seed = (
        ApplicationSeed.from_heatmap(read_heatmap(args.heatmap))
        if args.heatmap
        else load_application_seed(args.app_seed)
    )
    try:
        frequencies = [float(v) for v in args.frequencies.split(",")] if args.frequencies else None
    except ValueError:
        raise InputError(
            f"not a list of numbers: {args.frequencies!r}", field="frequencies"
        ) from None
    apps = [a.strip() for a in args.apps.split(",") if a.strip()] if args.apps else None
    workload = generate_workload(
        seed,
        args.jobs,
        selection=args.selection,
        frequencies=frequencies,
        apps=apps,
        interarrival=args.interarrival,
        mean=args.mean_interarrival,
        low=args.low,
        high=args.high,
        shape=args.shape,
        rng_seed=args.seed,
    )
    write_workload_csv(workload, args.out)
    announce(args, args.out)
    if args.json:
        print(
            json.dumps(
                {
                    "out": args.out,
                    "jobs": len(workload),
                    "applications": len(seed.names),
                    "last_submit": float(workload.submit.max()),
                    "seed": args.seed,
                }
            )
        )
        return 0
    print(
        f"{args.out}: {len(workload)} jobs from {len(seed.names)} applications, last submit "
        f"{workload.submit.max():.1f} s"
    )
    return 0


def _experiment_command(args) -> int:
    from pathlib import Path

    from cosched.errors import InputError
    from cosched.outputs import check_outputs
    from cosched.simulator.experiment import markdown_table, preset_spec, run_experiment

    schedulers = names_or(args, "scheduler", (), "--scheduler") or None
    plots = plots_target(args, f"{args.out}/plots", fixed=True)
    check_outputs(("--out", args.out, "folder"), ("--plots", plots, "folder"))
    if args.workers is not None and args.workers <= 0:
        raise InputError("must be positive", field="workers")
    spec = preset_spec(
        args.preset,
        heatmap=args.heatmap,
        platform=args.platform,
        jobs=args.jobs,
        experiments=args.experiments,
        schedulers=schedulers,
        seed=args.seed,
        alone_speedup=args.alone_speedup,
        interarrival=args.interarrival,
        mean_interarrival=args.mean_interarrival,
        default_speedup=args.default_speedup,
        workloads=args.workloads,
        missing_pair=args.missing_pair,
        placement=args.placement,
        reserve=args.reserve,
        compact_below=args.compact_below,
        utilization=args.utilization,
    )
    from cosched.simulator.compare import preflight

    preflight(
        spec.schedulers,
        spec.platform,
        placement=spec.placement,
        scheduler_options=spec.scheduler_options(),
    )  # every scheduler can run here, before the first run
    if spec.reference == "elise-table2":
        from cosched.simulator.elise_table2 import run_elise_table2

        table = run_elise_table2(
            spec,
            args.out,
            workers=args.workers,
            dask=args.dask,
            progress=not args.quiet,
            plots=plots is not None,
            force=args.force,
        )
        announce(args, f"{args.out}/elise_table2.md", f"{args.out}/elise_table2.csv")
        if args.json:
            print(table.to_json(orient="records"))
        else:
            print((Path(args.out) / "elise_table2.md").read_text(), end="")
        return 0
    summary = run_experiment(
        spec,
        args.out,
        workers=args.workers,
        dask=args.dask,
        progress=not args.quiet,
        plots=plots is not None,
        force=args.force,
    )
    written = ("runs.csv", "summary.csv", "tables.md") + (
        ("thesis.md", "thesis.csv") if spec.reference else ()
    )
    announce(
        args,
        *(f"{args.out}/{name}" for name in written),
        *((f"{plots}/",) if plots is not None else ()),
    )
    if args.json:
        print(summary.reset_index().to_json(orient="records"))
    elif spec.reference == "thesis":
        print((Path(args.out) / "thesis.md").read_text(), end="")
    else:
        print(markdown_table(summary))
    return 0
