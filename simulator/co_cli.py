"""Co-scheduling commands: ``cosched heatmap``, ``generate-workload``, ``experiment-sim``, and the ``simulate`` options
``--heatmap/--spread-speedup/--default-speedup/--placement`` (registered by ``cosched.simulator.cli``).

Thin layer: parse, call ``cosched.theory.heatmap`` / ``cosched.simulator.colocation`` / ``cosched.simulator.experiment``, print.
"""
from __future__ import annotations

import json
import math

__all__ = ["register", "add_simulate_options", "is_coscheduler", "co_simulation_options"]


def register(subparsers) -> None:
    heatmap = subparsers.add_parser(
        "heatmap", help="inspect a co-execution heatmap CSV (thesis Table 4.1 layout), plot it",
        description="Read a heatmap CSV (name_A, procs_A, compact_A, name_B, procs_B, compact_B, co_A_B, co_B_A), "
                    "print its applications and speedups, optionally plot it or convert it to a theory instance.")
    heatmap.add_argument("file", help="heatmap CSV")
    heatmap.add_argument("--plot", metavar="PNG", help="write the applications x applications speedup plot")
    heatmap.add_argument("--instance", metavar="JSON|NPZ", help="write the pairs as a theory Instance")
    heatmap.add_argument("--default-speedup", type=float, help="speedup for pairs measured in neither direction")
    heatmap.add_argument("--json", action="store_true", help="print a JSON document instead of text")
    heatmap.set_defaults(func=_heatmap_command)

    generate = subparsers.add_parser(
        "generate-workload", help="draw N jobs from an application seed (heatmap or seed JSON) into a CSV workload",
        description="Workload generation of 000 §3.1: applications drawn uniformly, by frequencies or from a list; "
                    "interarrival times batch (all at 0), constant, uniform, Poisson or Weibull; seeded.")
    source = generate.add_mutually_exclusive_group(required=True)
    source.add_argument("--heatmap", help="heatmap CSV: its applications are the seed")
    source.add_argument("--app-seed", help='JSON {"applications": [{"name", "procs", "compact_time"}, ...]}')
    generate.add_argument("--jobs", type=int, help="number of jobs (not with --selection list)")
    generate.add_argument("--selection", choices=("uniform", "frequencies", "list"), default="uniform")
    generate.add_argument("--frequencies", help="comma-separated weights, one per application (seed order)")
    generate.add_argument("--apps", help="comma-separated application names (--selection list)")
    generate.add_argument("--interarrival", choices=("batch", "constant", "uniform", "poisson", "weibull"),
                          default="batch")
    generate.add_argument("--mean", type=float, default=60.0, help="mean gap [s] (constant, poisson, weibull)")
    generate.add_argument("--low", type=float, default=0.0, help="uniform gaps: lower bound [s]")
    generate.add_argument("--high", type=float, default=120.0, help="uniform gaps: upper bound [s]")
    generate.add_argument("--shape", type=float, default=1.5, help="Weibull shape")
    generate.add_argument("--seed", type=int, default=0)
    generate.add_argument("--out", required=True, help="workload CSV (job_id, submit_time, run_time, cores, "
                                                       "estimate, app)")
    generate.set_defaults(func=_generate_command)

    experiment = subparsers.add_parser(
        "experiment-sim", help="thesis-style grid: schedulers x workload shuffles, tables and plots",
        description="Run every scheduler on N shuffles of the same generated workload (003 ch. 6), resumable; "
                    "writes runs.csv, summary.csv, tables.md and plots/ into --out.")
    experiment.add_argument("--preset", default="example", help="example (bundled synthetic NPB-like heatmap, "
                            "ARIS 420 x 20 cores, 10 x 1000 jobs) or example-small")
    experiment.add_argument("--heatmap", help="heatmap CSV instead of the preset's")
    experiment.add_argument("--platform", help="platform preset name or JSON file instead of the preset's")
    experiment.add_argument("--experiments", type=int, help="number of workload shuffles")
    experiment.add_argument("--jobs", type=int, help="jobs per workload")
    experiment.add_argument("--schedulers", help="comma-separated names (default: the 13 of thesis Table 6.1)")
    experiment.add_argument("--seed", type=int, default=0, help="workload seed (default 0)")
    experiment.add_argument("--interarrival", default="batch",
                            choices=("batch", "constant", "uniform", "poisson", "weibull"))
    experiment.add_argument("--mean-interarrival", type=float, default=60.0, help="seconds (default 60)")
    experiment.add_argument("--spread-speedup", type=float,
                            help="speedup of a job alone on spread nodes (default: heatmap per-app value, else 1.0)")
    experiment.add_argument("--default-speedup", type=float, help="speedup for pairs measured in neither direction")
    experiment.add_argument("--out", required=True, help="output folder (re-running it resumes)")
    experiment.add_argument("--workers", type=int, help="local worker processes (default: all cores)")
    experiment.add_argument("--dask", metavar="local|ADDRESS",
                            help="run on dask.distributed: a local cluster or a scheduler address tcp://host:port")
    experiment.add_argument("--no-plots", action="store_true", help="skip the plots")
    experiment.add_argument("--no-progress", action="store_true", help="no progress bar")
    experiment.add_argument("--json", action="store_true", help="print the mean table as JSON")
    experiment.set_defaults(func=_experiment_command)


def add_simulate_options(parser) -> None:
    """Options of ``cosched simulate`` for the co-schedulers."""
    parser.add_argument("--heatmap", help="heatmap CSV linking the workload's app column to pairwise speedups "
                                          "(co-schedulers only)")
    parser.add_argument("--spread-speedup", type=float,
                        help="speedup of a job alone on spread nodes (default: heatmap per-app value, else 1.0)")
    parser.add_argument("--default-speedup", type=float, help="speedup for pairs measured in neither direction")
    parser.add_argument("--placement", choices=("idle", "shared"), default="idle",
                        help="co-location: spread on idle nodes first (default) or fill half-full nodes first")


def is_coscheduler(name: str) -> bool:
    from cosched.simulator.schedulers import COSCHEDULERS
    return name in COSCHEDULERS


def co_simulation_options(args) -> dict:
    """The heatmap options of ``cosched simulate`` for a co-scheduler run (see `colocation.simulate_any`)."""
    from cosched.errors import InputError
    from cosched.theory.heatmap import read_heatmap

    heatmap = read_heatmap(args.heatmap, default=args.default_speedup) if args.heatmap else None
    if heatmap is None and args.default_speedup is not None:
        raise InputError("--default-speedup needs --heatmap", field="default_speedup")
    return {"heatmap": heatmap, "spread_speedup": args.spread_speedup, "prefer": args.placement}


def _heatmap_command(args) -> int:
    import numpy as np

    from cosched.outputs import check_plot_path
    from cosched.theory.heatmap import instance_from_heatmap, plot_heatmap, read_heatmap

    if args.plot:
        check_plot_path(args.plot, "--plot")
    heatmap = read_heatmap(args.file, default=args.default_speedup)
    measured = heatmap.measured
    missing = int(np.isnan(measured).sum())
    instance = instance_from_heatmap(heatmap) if args.instance else None  # fails before any file is written
    if args.plot:
        plot_heatmap(heatmap, args.plot)
    if instance is not None:
        from cosched.theory.instance import save_instance
        save_instance(instance, args.instance)
    finite = measured[np.isfinite(measured)]
    if args.json:
        def clean(values):
            return [[None if math.isnan(v) else round(float(v), 6) for v in row] for row in values]
        print(json.dumps({"file": args.file, "applications": list(heatmap.applications),
                          "procs": heatmap.procs.tolist(), "compact_times": heatmap.compact_times.tolist(),
                          "speedups": clean(measured), "unmeasured_pairs": missing,
                          "mean_speedup": float(finite.mean()) if finite.size else None}))
        return 0
    print(f"{args.file}: {len(heatmap)} applications, {measured.size - missing} measured directed pairs, "
          f"{missing} unmeasured")
    if finite.size:
        print(f"speedup: mean {finite.mean():.3f}, min {finite.min():.3f}, max {finite.max():.3f}, "
              f"below 1: {(finite < 1).mean() * 100:.1f}%")
    width = max(len(name) for name in heatmap.applications)
    for name, procs, compact in zip(heatmap.applications, heatmap.procs, heatmap.compact_times):
        print(f"  {name:<{width}}  {int(procs):>6} procs  {compact:>10.2f} s compact")
    if args.plot:
        print(f"plot: {args.plot}")
    return 0


def _generate_command(args) -> int:
    from cosched.errors import InputError
    from cosched.simulator.generate import ApplicationSeed, generate_workload, load_application_seed, write_workload_csv
    from cosched.theory.heatmap import read_heatmap

    seed = ApplicationSeed.from_heatmap(read_heatmap(args.heatmap)) if args.heatmap \
        else load_application_seed(args.app_seed)
    try:
        frequencies = [float(v) for v in args.frequencies.split(",")] if args.frequencies else None
    except ValueError:
        raise InputError(f"not a list of numbers: {args.frequencies!r}", field="frequencies") from None
    apps = [a.strip() for a in args.apps.split(",") if a.strip()] if args.apps else None
    workload = generate_workload(seed, args.jobs, selection=args.selection, frequencies=frequencies, apps=apps,
                                 interarrival=args.interarrival, mean=args.mean, low=args.low, high=args.high,
                                 shape=args.shape, rng_seed=args.seed)
    write_workload_csv(workload, args.out)
    print(f"{args.out}: {len(workload)} jobs from {len(seed.names)} applications, last submit "
          f"{workload.submit.max():.1f} s")
    return 0


def _experiment_command(args) -> int:
    from cosched.errors import InputError
    from cosched.simulator.experiment import markdown_table, preset_spec, run_experiment

    schedulers = [s.strip() for s in args.schedulers.split(",") if s.strip()] if args.schedulers else None
    if args.workers is not None and args.workers <= 0:
        raise InputError("must be positive", field="workers")
    spec = preset_spec(args.preset, heatmap=args.heatmap, platform=args.platform, jobs=args.jobs,
                       experiments=args.experiments, schedulers=schedulers, seed=args.seed,
                       spread_speedup=args.spread_speedup, interarrival=args.interarrival,
                       mean_interarrival=args.mean_interarrival, default_speedup=args.default_speedup)
    summary = run_experiment(spec, args.out, workers=args.workers, dask=args.dask, progress=not args.no_progress,
                             plots=not args.no_plots)
    if args.json:
        print(summary.reset_index().to_json(orient="records"))
    else:
        print(markdown_table(summary))
        print(f"results: {args.out}/runs.csv, summary.csv, tables.md" + ("" if args.no_plots else ", plots/"))
    return 0
