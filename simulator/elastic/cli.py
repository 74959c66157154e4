"""`cosched elastic`: run an ElastiSim scenario (configuration, jobs, application models, platform)
in process.

Thin layer: read the configuration, platform and jobs, load the algorithm (an elastisim-python file
or a built-in
policy name), simulate, write ElastiSim's CSV files plus jobs.csv and summary.json, print the
summary. The
simulation modules are imported when the command runs, matplotlib only with --plots.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import warnings
from pathlib import Path
from typing import TextIO

from cosched.cli_options import (
    add_json,
    add_out,
    add_plots,
    add_quiet,
    add_seed,
    announce,
    deprecation,
    notice,
    plots_target,
)
from cosched.collector import rare_collections
from cosched.errors import InputError

__all__ = ["register", "PRESETS", "POLICY_NAMES"]

_UNWRITTEN = ("network_activity", "gpu_utilization", "task_times")
# the built-in policies (cosched.simulator.elastic.algorithms.ALGORITHMS; listed here so --help
# imports nothing)
POLICY_NAMES = (
    "fcfs-rigid",
    "sjf-rigid",
    "fcfs-rigid-greedy",
    "sjf-rigid-greedy",
    "fcfs-malleable",
    "sjf-malleable",
    "srtf",
    "drf",
)
PRESET_ROOT = Path(__file__).resolve().parent / "presets"
PRESETS = {
    "example": "ElastiSim's example project: 500 jobs of all five types on 128 nodes (BSD-3, "
    "bundled)"
}
PRESET_CONFIG = "data/input/configuration.json"
DEFAULT_JITTER = 1e-6  # s: far below any time ElastiSim prints, far above float rounding


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "elastic",
        help="run an ElastiSim configuration (rigid, moldable, malleable, evolving, adaptive jobs)",
        description="Simulate an ElastiSim scenario without SimGrid or ZeroMQ: the "
        "configuration's jobs file, "
        "application models and platform (SimGrid XML subset or JSON) under an elastisim-python "
        "algorithm file, run unmodified, or a built-in policy. Relative paths in the inputs "
        "resolve "
        "against the working directory, as in ElastiSim. Writes job_statistics.csv and "
        "node_utilization.csv (and cpu_utilization.csv, pfs_utilization.csv with sensing on) where "
        "the configuration says, or all into --out, plus jobs.csv (node count over time per job) "
        "and "
        "summary.json.",
    )
    parser.add_argument(
        "config",
        metavar="CONFIG.json|PRESET",
        help="ElastiSim configuration file, or a bundled project: "
        + "; ".join(f"{name}: {text}" for name, text in PRESETS.items())
        + f" (needs --out; the project's files are in {PRESET_ROOT})",
    )
    policy = parser.add_mutually_exclusive_group()
    policy.add_argument(
        "--scheduler",
        dest="algorithm",
        choices=POLICY_NAMES,
        metavar="NAME",
        help=f"a built-in policy, one of: {', '.join(POLICY_NAMES)}",
    )
    policy.add_argument(
        "--algorithm",
        action=_AlgorithmFile,
        metavar="ALGO.py",
        help="an elastisim-python algorithm file (defines schedule(jobs, nodes, system)); one of "
        "--scheduler or --algorithm is required, except for a preset, which runs its own "
        "algorithm.py by default",
    )
    parser.add_argument(
        "--algorithm-time-limit",
        type=float,
        default=None,
        metavar="SECONDS",
        help="wall time loading an algorithm file, and one call of its schedule(), may take before "
        "the run stops (exit 2); 0 or inf: no limit (default 30)",
    )
    parser.add_argument(
        "--replicas",
        type=int,
        default=0,
        metavar="K",
        help="also run the project K more times, each with every submission time moved by an "
        "independent uniform draw in [-J, +J] (J: --jitter), and report each metric's min, median "
        "and max and the per-job turnaround spread in summary.json and the text output: how many "
        "digits of one run to trust (default 0: off; the output files stay the unjittered run's)",
    )
    parser.add_argument(
        "--jitter",
        type=float,
        default=None,
        metavar="SECONDS",
        help=f"the largest move of a submission time in a replica (default {DEFAULT_JITTER:g})",
    )
    add_seed(parser, "seed of the replicas' submission-time draws")
    add_out(
        parser, "folder", "every output file goes here instead of the paths in the configuration"
    )
    add_plots(
        parser,
        "the node-allocation Gantt, allocated nodes over time and wait/turnaround box plots "
        "(matplotlib is imported only then)",
    )
    add_json(parser, "the summary")
    add_quiet(parser)
    parser.set_defaults(func=_contained_command)


class _AlgorithmFile(argparse.Action):
    """`--algorithm FILE.py`; a built-in policy name there is the old spelling of
    `--scheduler NAME`."""

    def __call__(self, parser, namespace, values, option_string=None):
        if values in POLICY_NAMES:
            warnings.warn(
                deprecation(f"--algorithm {values}", f"--scheduler {values}"),
                FutureWarning,
                stacklevel=1,
            )
        setattr(namespace, self.dest, values)


def _outputs(configuration, out: str | None) -> dict[str, Path]:
    """Every output path: the configuration's, or all inside --out. Two outputs on one file are bad
    input."""
    keys = [key for key in configuration.outputs if key not in _UNWRITTEN]
    if out is not None:
        folder = Path(out)
        paths = {key: folder / f"{key}.csv" for key in keys}
        paths.setdefault("job_statistics", folder / "job_statistics.csv")
    else:
        paths = {key: Path(configuration.outputs[key]) for key in keys}
        folder = paths["job_statistics"].parent if "job_statistics" in paths else Path(".")
        seen: dict[str, str] = {}
        own = {
            os.path.abspath(folder / "jobs.csv"): "jobs.csv (cosched's node counts per job)",
            os.path.abspath(folder / "summary.json"): "summary.json (cosched's summary)",
        }
        for key in (*keys, *(key for key in configuration.outputs if key in _UNWRITTEN)):
            where = os.path.abspath(configuration.outputs[key])
            other = seen.get(where) or own.get(where)
            if other is not None:
                raise InputError(
                    f"{configuration.outputs[key]} is also the output of {other}; give each output "
                    f"its own file (or use --out DIR)",
                    source=configuration.source,
                    field=key,
                )
            seen[where] = key
    paths["jobs"] = folder / "jobs.csv"
    paths["summary"] = folder / "summary.json"
    return paths


def _algorithm(value: str, time_limit: float, name: str | None = None):
    if value in POLICY_NAMES:
        from cosched.simulator.elastic.algorithms import make_algorithm

        return make_algorithm(value), value
    if value.endswith(".py") or Path(value).exists():
        from cosched.simulator.elastic.compat import GuardedAlgorithm, load_algorithm
        from cosched.simulator.elastic.supervision import current_watch

        watch = current_watch()  # the supervisor of this process keeps the time limit
        if watch is not None:
            watch.configure(time_limit, value)
        schedule = load_algorithm(value, watch)
        if watch is not None:
            watch.name(name or value)
        return GuardedAlgorithm(schedule, name or value, watch), name or value
    raise InputError(
        f"neither a .py file nor a built-in policy ({', '.join(POLICY_NAMES)})",
        source=value,
        field="--algorithm",
    )


@contextlib.contextmanager
def _inside(folder: Path | None):
    """Run with `folder` as working directory (a preset's relative paths), or where we are."""
    if folder is None:
        yield
        return
    before = os.getcwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(before)


def _preset(args) -> Path | None:
    """The bundled project's root if CONFIG names a preset (and no such file exists here), else
    None."""
    if args.config not in PRESETS or Path(args.config).exists():
        return None
    if args.out is None:
        raise InputError(
            "a preset writes into --out DIR (its own folder is part of the installed package)",
            source=args.config,
            field="--out",
        )
    return PRESET_ROOT / args.config


def _command(args, out: TextIO | None = None) -> int:
    """The command; its results (the summary) go to `out` (default: stdout), taken before an
    algorithm file is loaded, so nothing the file does to `sys.stdout` reaches them."""
    from cosched.simulator.elastic import results

    out = sys.stdout if out is None else out
    with rare_collections(getattr(args, "whole_process", False)):
        preset, time_limit = _checked(args)
        with _inside(preset):
            configuration, paths, plots = _configuration(args, preset)
            project = _load(args, preset, configuration, time_limit)
        with _inside(preset):
            sim = _simulate(configuration, *project)
        skipped = [key for key in _UNWRITTEN if key in configuration.outputs]
        if skipped:  # after the run: a refused project gets its one error line alone
            why = (
                f"{', '.join(skipped)} not written: the flow model does not track GPU or network "
                f"activity per node, nor single task times"
            )
            if preset is None:
                warnings.warn(why, stacklevel=1)
            else:  # the bundled project asks for them as ElastiSim ships it: not the user's doing
                notice(args, why)
        rows = results.job_rows(sim)
        summary = results.summary(sim, rows)
        if args.replicas:
            with _inside(preset):
                summary["replicas"] = _replicas(args, configuration, project, time_limit, preset)
        never = summary["never_started"]
        if never:
            warnings.warn(
                f"{never} job(s) never started (status 'pending' in job_statistics.csv): the "
                f"algorithm left them waiting when nothing else could happen",
                stacklevel=1,
            )
        written = _write(args, configuration, paths, plots, sim, rows, summary)
    announce(args, *written)
    if args.json:
        print(json.dumps(summary, indent=2), file=out)
    else:
        _print_text(summary, out)
    return 0


def _replicas(args, configuration, project: tuple, time_limit: float, preset) -> dict:
    """Run the project `--replicas` more times with jittered submissions (a fresh algorithm each:
    a file's module state starts anew, as in a new ElastiSim run); the spread of their results."""
    import numpy as np

    from cosched.simulator.elastic import results
    from cosched.simulator.elastic.replicas import jittered_jobs, replica_spread

    platform, jobs, _, _, expressions = project
    rng = np.random.default_rng(args.seed)
    summaries, job_rows = [], []
    for _ in range(args.replicas):
        algorithm, name = _algorithm_of(args, preset, time_limit)
        moved = jittered_jobs(jobs, args.jitter, rng)
        sim = _simulate(configuration, platform, moved, algorithm, name, expressions)
        rows = results.job_rows(sim)
        summaries.append(results.summary(sim, rows))
        job_rows.append(rows)
    return replica_spread(summaries, job_rows, args.jitter, args.seed)


def _checked(args) -> tuple[Path | None, float]:
    """The preset's folder (or None) and the algorithm's time limit; the paths the user gave made
    absolute (the preset's folder becomes the working one)."""
    from cosched.simulator.elastic.compat import DEFAULT_TIME_LIMIT

    preset = _preset(args)
    time_limit = (
        DEFAULT_TIME_LIMIT if args.algorithm_time_limit is None else args.algorithm_time_limit
    )
    if not time_limit >= 0:
        raise InputError(
            f"must be at least 0 seconds, got {time_limit}", field="--algorithm-time-limit"
        )
    if args.replicas < 0:
        raise InputError(f"must be 0 or more, got {args.replicas}", field="--replicas")
    if args.jitter is not None and not args.replicas:
        raise InputError(
            "needs --replicas K (the jitter moves the replicas' submissions)", field="--jitter"
        )
    args.jitter = DEFAULT_JITTER if args.jitter is None else args.jitter
    if not 0 <= args.jitter < float("inf"):
        raise InputError(
            f"must be a finite number of seconds >= 0, got {args.jitter}", field="--jitter"
        )
    if args.algorithm is None and preset is None:
        raise InputError(
            "give --scheduler NAME or --algorithm FILE.py",
            source=args.config,
            field="--algorithm",
        )
    if args.out is not None:
        args.out = os.path.abspath(args.out)
    if isinstance(args.plots, str):  # `--plots DIR`: where the user is, not in a preset's folder
        args.plots = os.path.abspath(args.plots)
    if (
        preset is not None
        and args.algorithm not in (None, *POLICY_NAMES)
        and Path(args.algorithm).exists()
    ):
        # before the preset's folder becomes the working one
        args.algorithm = os.path.abspath(args.algorithm)
    return preset, time_limit


def _configuration(args, preset: Path | None):
    """The configuration, every output path (checked: nothing written yet) and the plots' folder
    (or None)."""
    from cosched.outputs import check_outputs
    from cosched.simulator.elastic.config import load_configuration

    configuration = load_configuration(PRESET_CONFIG if preset is not None else args.config)
    paths = _outputs(configuration, args.out)
    if "job_statistics" not in paths:
        raise InputError(
            "no output path: give job_statistics in the configuration or --out DIR",
            source=args.config,
            field="job_statistics",
        )
    plots = plots_target(args, paths["job_statistics"].parent / "plots") if args.plots else None
    check_outputs(
        ("--out", args.out, "folder"),
        ("--plots", plots, "folder"),
        *((None if args.out else key, path, "file") for key, path in paths.items()),
    )
    # absolute before an algorithm file runs: its os.chdir does not move the outputs
    paths = {key: Path(os.path.abspath(path)) for key, path in paths.items()}
    return configuration, paths, None if plots is None else Path(os.path.abspath(plots))


def _load(args, preset: Path | None, configuration, time_limit: float) -> tuple:
    """Load the algorithm, the platform and the jobs: (platform, jobs, algorithm, its name,
    the expressions)."""
    from cosched.simulator.elastic.expressions import Expressions
    from cosched.simulator.elastic.platform import load_elastisim_platform
    from cosched.simulator.elastic.workload import check_platform_fit, load_jobs

    algorithm, name = _algorithm_of(args, preset, time_limit)
    expressions = Expressions()
    platform = load_elastisim_platform(configuration.platform_file)
    _check_pfs_links(configuration, platform)
    jobs = load_jobs(configuration.jobs_file, expressions)
    check_platform_fit(jobs, platform, configuration.jobs_file)
    return platform, jobs, algorithm, name, expressions


def _algorithm_of(args, preset: Path | None, time_limit: float):
    """The algorithm the command runs and its name."""
    if args.algorithm is None:  # the preset's own algorithm file, named as the user can find it
        assert preset is not None  # checked: no --algorithm needs a preset
        return _algorithm(str(preset / "algorithm.py"), time_limit, f"{args.config}/algorithm.py")
    return _algorithm(args.algorithm, time_limit)


def _simulate(configuration, platform, jobs, algorithm, name: str, expressions):
    """Run the simulation (then the command's signal handlers are its own again, whatever an
    algorithm file did to them: `cosched.simulator.elastic.supervision.Watch.restore`)."""
    from cosched.simulator.elastic.runtime import simulate_project
    from cosched.simulator.elastic.supervision import current_watch

    sim = simulate_project(
        configuration, platform, jobs, algorithm, expressions=expressions, algorithm_name=name
    )
    watch = current_watch()
    if watch is not None:
        watch.restore()
    return sim


def _check_pfs_links(configuration, platform) -> None:
    """The links pfs_read_links / pfs_write_links name exist in an XML platform (ElastiSim stops
    on a missing one; cosched finds the PFS routes in the platform and uses them for nothing
    else)."""
    if platform.link_ids is None:
        return
    for key, names in configuration.pfs_links.items():
        missing = [name for name in names if name not in platform.link_ids]
        if missing:
            raise InputError(
                f"names the link {missing[0]!r}, which {configuration.platform_file} does not have",
                source=configuration.source,
                field=key,
            )


def _write(args, configuration, paths: dict, plots, sim, rows: list, summary: dict) -> list:
    """Every output file (all or nothing inside --out); the paths written."""
    from cosched.outputs import atomic_path, output_dir
    from cosched.simulator.elastic import results

    written = []
    interval = configuration.sensing_interval
    cpu = paths.get("cpu_utilization")
    with output_dir(args.out) if args.out is not None else contextlib.nullcontext():
        written.append(results.write_job_statistics(rows, paths["job_statistics"]))
        if "node_utilization" in paths:
            written.append(results.write_node_utilization(sim, paths["node_utilization"]))
        if "pfs_utilization" in paths:
            written.append(results.write_pfs_utilization(sim, paths["pfs_utilization"], interval))
        if cpu is not None:
            written.append(results.write_cpu_utilization(sim, cpu, interval))
        written.append(results.write_jobs(rows, paths["jobs"]))
        with atomic_path(paths["summary"]) as tmp:
            tmp.write_text(json.dumps(summary, indent=2) + "\n")
        written.append(paths["summary"])
        if plots is not None:
            from cosched.simulator.elastic.plots import write_plots

            written.extend(write_plots(sim, rows, plots))
    return written


def _print_text(summary: dict, out: TextIO) -> None:
    def seconds(value):
        return "-" if value is None else f"{value:.1f}"

    print(
        f"elastic: {summary['algorithm']} on {summary['nodes']} nodes: {summary['completed']} "
        f"completed, "
        f"{summary['killed']} killed, {summary['never_started']} never started",
        file=out,
    )
    print(f"makespan [s]      {summary['makespan']:.1f}", file=out)
    print(f"utilization       {summary['utilization']:.3f}", file=out)
    print(f"mean_wait [s]     {seconds(summary['mean_wait'])}", file=out)
    print(f"mean_turnaround [s] {seconds(summary['mean_turnaround'])}", file=out)
    print(f"reconfigurations  {summary['reconfigurations']}", file=out)
    print(
        f"invocations       {summary['invocations']} ({summary['dropped_invocations']} dropped)",
        file=out,
    )
    print(f"wall [s]          {summary['wall_seconds']:.2f}", file=out)
    for kind, stats in summary["by_type"].items():
        print(
            f"  {kind:<10} jobs {stats['jobs']:>4}  wait [s] {seconds(stats['mean_wait']):>10}  "
            f"turnaround [s] {seconds(stats['mean_turnaround']):>10}",
            file=out,
        )
    if "replicas" in summary:
        _print_spread(summary["replicas"], out)


def _print_spread(replicas: dict, out: TextIO) -> None:
    print(
        f"replicas          {replicas['replicas']} (submissions moved by up to "
        f"{replicas['jitter']:g} s, seed {replicas['seed']}): min / median / max",
        file=out,
    )
    for name, values in replicas["metrics"].items():
        digits = {"utilization": ".3f", "reconfigurations": "g", "invocations": "g"}
        print(
            f"  {name:<19} "
            + " / ".join(
                f"{values[key]:{digits.get(name, '.1f')}}" for key in ("min", "median", "max")
            ),
            file=out,
        )
    per_job = replicas["turnaround_spread_per_job"]
    if per_job["jobs"]:
        print(
            f"  turnaround spread per job [s]  median {per_job['median']:.3g}, max "
            f"{per_job['max']:.3g} (median {100 * per_job['median_relative']:.2g} %, max "
            f"{100 * per_job['max_relative']:.2g} % of the job's turnaround)",
            file=out,
        )


def _contained_command(args) -> int:
    """`_command` with its descendants contained: a process a user's algorithm file starts (in the
    background, even with setsid) is killed when the command ends
    (`cosched.containment.contain_descendants`). With an algorithm file, the run is a child
    process this one supervises (`cosched.simulator.elastic.supervision`): the file cannot switch
    off the time limit, Ctrl-C or SIGTERM, keep the command alive or write into its results."""
    from cosched.containment import contain_descendants

    with contain_descendants():
        if args.algorithm in POLICY_NAMES:
            return _command(args)
        from cosched.simulator.elastic.supervision import supervised

        return supervised(lambda out: _command(args, out))
