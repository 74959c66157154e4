"""The trace options of `simulate` and `compare`: other simulators' EASY (``--compat``), the SWF
cleaning and status choices, walltime kills, a time window, and the schedule written as SWF."""

from __future__ import annotations

import math

from cosched.cli_options import mark_output
from cosched.errors import InputError
from cosched.simulator.compat import COMPAT, Compat, compat_settings
from cosched.simulator.workload import SWF_CLEANINGS, SWF_STATUS

__all__ = ["add_trace_options", "add_swf_out", "load_trace", "measured_runs", "trace_summary"]


def add_trace_options(parser) -> None:
    """--compat, --cleaning, --status, --kill-at-walltime, --from/--to, --warmup/--cooldown."""
    parser.add_argument(
        "--compat",
        choices=tuple(COMPAT),
        help="reproduce another simulator's EASY job for job: cqsim (CQSim's EASY: a pass after "
        "every event, waiting jobs predicted by their run time, every job ending at the shadow "
        "time gives extra units, the whole queue, CQSim's trace cleaning; with --scheduler easy)",
    )
    parser.add_argument(
        "--cleaning",
        choices=SWF_CLEANINGS,
        help="SWF cleaning rules: cosched (default), keep-estimates (an estimate below the run "
        "time is kept; the default with --kill-at-walltime) or cqsim (CQSim's; the default with "
        "--compat cqsim)",
    )
    parser.add_argument(
        "--status",
        help=f"keep only the SWF records of these statuses (field 11), comma-separated: "
        f"{', '.join(SWF_STATUS)} (default: every record)",
    )
    parser.add_argument(
        "--kill-at-walltime",
        action="store_true",
        help="kill a job when it has run its requested time (as Slurm and ElastiSim do); the kills "
        "are counted in summary.json (killed_at_walltime) and marked in jobs.csv (state killed)",
    )
    parser.add_argument(
        "--from",
        dest="window_from",
        metavar="TIME",
        help="measure only the jobs submitted from TIME on: seconds on the trace's clock or a date "
        "YYYY-MM-DD[THH:MM[:SS]] in the trace's time zone",
    )
    parser.add_argument(
        "--to",
        dest="window_to",
        metavar="TIME",
        help="measure only the jobs submitted before TIME (as --from)",
    )
    parser.add_argument(
        "--warmup",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="with --from: also simulate, unmeasured, the jobs submitted this long before it "
        "(default 0)",
    )
    parser.add_argument(
        "--cooldown",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="with --to: also simulate, unmeasured, the jobs submitted this long after it "
        "(default 0)",
    )


def add_swf_out(parser) -> None:
    """--swf-out FILE: the simulated schedule as SWF."""
    action = parser.add_argument(
        "--swf-out",
        metavar="FILE",
        help="also write the simulated schedule as SWF (18 fields; .gz: gzipped), which "
        "--workload reads back",
    )
    mark_output(action, "file")


def _status(args) -> tuple[str, ...] | None:
    if args.status is None:
        return None
    names = tuple(name.strip() for name in args.status.split(",") if name.strip())
    unknown = [name for name in names if name not in SWF_STATUS]
    if unknown or not names:
        raise InputError(
            f"unknown status {unknown[0] if unknown else args.status!r}; known: "
            f"{', '.join(SWF_STATUS)}",
            field="--status",
        )
    return names


def _cleaning(args, compat: Compat | None) -> str:
    if args.cleaning is not None:
        return args.cleaning
    if compat is not None:
        return compat.cleaning
    return "keep-estimates" if args.kill_at_walltime else "cosched"


def load_trace(args, schedulers):
    """(platform, workload, window, compat) of a command line: the workload read with the cleaning
    and status choices, cut to the window, then to --limit."""
    from cosched.simulator.compare import load_inputs

    compat = compat_settings(args.compat, schedulers)
    if compat is not None and args.run_times:
        raise InputError(
            f"--compat {compat.name} predicts running jobs by their estimate, as {compat.name} "
            "does: leave out --run-times",
            field="--run-times",
        )
    if args.warmup and args.window_from is None:
        raise InputError("--warmup needs --from", field="--warmup")
    if args.cooldown and args.window_to is None:
        raise InputError("--cooldown needs --to", field="--cooldown")
    platform, workload = load_inputs(
        args.workload,
        args.platform,
        cleaning=_cleaning(args, compat),
        status=_status(args),
        swf_memory=args.swf_memory,
    )
    window = None
    if args.window_from is not None or args.window_to is not None:
        from cosched.simulator.trace_window import TraceWindow, trace_time

        header = workload.header
        window = TraceWindow(
            -math.inf
            if args.window_from is None
            else trace_time(args.window_from, header, "--from"),
            math.inf if args.window_to is None else trace_time(args.window_to, header, "--to"),
            args.warmup,
            args.cooldown,
        )
        workload = window.cut(workload)
    if args.limit is not None and args.limit < len(workload):
        workload = workload.head(args.limit)
    return platform, workload, window, compat


def measured_runs(window, *runs):
    """The runs (None stays None) restricted to the window's measured jobs, the ones every metric
    counts (`cosched.simulator.trace_window.measured_result`); without a window, the runs
    themselves (and the window module is not imported)."""
    if window is None:
        return runs
    from cosched.simulator.trace_window import measured_result

    return tuple(None if run is None else measured_result(run, window) for run in runs)


def trace_summary(args, result, workload, window, compat) -> dict:
    """The summary.json entries of the trace options that were given."""
    summary: dict = {}
    if compat is not None:
        summary["compat"] = compat.name
    if args.kill_at_walltime:
        summary["killed_at_walltime"] = int(result.options.get("killed_at_walltime", 0))
    if window is not None:
        summary["window"] = window.to_dict(workload)
    return summary
