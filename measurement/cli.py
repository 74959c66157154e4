"""`cosched measure` (co-run harness -> instance, heatmap, plots) and `cosched measure-validate`
(Table 2)."""

from __future__ import annotations

import argparse
import json
import signal
import sys
from collections.abc import Sequence
from pathlib import Path

from cosched.cli_options import (
    LazyChoices,
    add_alias,
    add_json,
    add_out,
    add_plots,
    add_quiet,
    add_seed,
    announce,
    notice,
    plots_folder,
    plots_target,
)
from cosched.errors import InputError
from cosched.measurement.counters import BACKEND_NAMES
from cosched.measurement.flags import count, seconds
from cosched.names import resolve_name

__all__ = ["register"]

KERNEL_SECONDS_MARGIN = 60.0  # extra lifetime of bundled kernels beyond the planned measuring time
BACKEND_CHOICES = BACKEND_NAMES  # the names `cosched.measurement.counters.open_backend` takes


def register(subparsers) -> None:
    measure = subparsers.add_parser(
        "measure",
        help="measure the speed matrix of tasks by co-running them (SIGSTOP/SIGCONT)",
        description="Start every task once, form combinations by preemption, measure each task's "
        "speed "
        "(formula (30) of 002 §6) and write DIR/instance.json, heatmap.csv, samples.csv, "
        "speeds.csv, "
        "report.json and plots.",
    )
    measure.add_argument(
        "--task",
        action="append",
        default=[],
        metavar="NAME=COMMAND",
        help="a task: name and shell command (repeatable); it must run for the whole measurement",
    )
    measure.add_argument(
        "--kernels",
        metavar="K1,K2,...",
        help="add bundled kernels as tasks (compute, memory, cache; a name may repeat)",
    )
    measure.add_argument(
        "--threads", type=count("MAX_THREADS"), default=1, help="threads of each bundled kernel"
    )
    measure.add_argument(
        "--combinations",
        default="pairs",
        help="pairs | all | upto:K | sample:N | chains:N[:K] (default pairs)",
    )
    measure.add_argument(
        "--window", type=seconds(), default=2.0, help="measuring window [s] (default 2)"
    )
    measure.add_argument(
        "--warmup",
        type=seconds(),
        default=0.5,
        help="discarded warm-up after continuing a combination [s] (default 0.5)",
    )
    measure.add_argument(
        "--backend",
        choices=BACKEND_CHOICES,
        default="auto",
        help="counters: auto (perf if hardware counters work, else cputime, reported), perf, "
        "cputime",
    )
    add_containment_arguments(measure)
    measure.add_argument(
        "--task-work",
        dest="work",
        action="append",
        default=[],
        metavar="NAME=B",
        help="work b of a task in the instance (time alone; default 1); repeatable",
    )
    add_alias(measure, "--work", dest="work", action="append", metavar="NAME=B")
    measure.add_argument(
        "--project-monotone",
        action="store_true",
        help="project the matrix onto monotone speeds (cap by sub-combinations)",
    )
    add_alias(measure, "--monotone", dest="project_monotone", action="store_true")
    # old spelling: reruns resume
    measure.add_argument("--resume", action="store_true", help=argparse.SUPPRESS)
    measure.add_argument(
        "--force",
        action="store_true",
        help="start over in DIR, removing the files an earlier measure wrote there (by default a "
        "rerun with the same tasks, window, warm-up and backend resumes; others are refused)",
    )
    add_seed(measure, "seed of sample:N and chains:N")
    add_plots(measure, "heatmap.png and speed_by_size.png")
    add_out(
        measure,
        "folder",
        "instance.json, heatmap.csv, samples.csv, speeds.csv, report.json, plots",
        required=True,
        writes=LazyChoices("cosched.measurement.session", "MEASURE_OUTPUT_FILES"),
    )
    add_json(measure, "the report")
    add_quiet(measure)
    measure.set_defaults(func=_measure)

    validate = subparsers.add_parser(
        "measure-validate",
        help="Table 2 of 002: speed ratio vs completion-time ratio of the bundled kernels",
        description="Run each bundled kernel to completion alone and next to random co-runners; "
        "fit speed ratio = slope x time ratio + intercept per kernel (002 §7, Table 2, Fig. 4).",
    )
    validate.add_argument("--kernels", default="compute,memory,cache", help="kernels to measure")
    validate.add_argument(
        "--runs", type=count("MAX_MEASURED_RUNS"), default=6, help="co-runs per kernel (default 6)"
    )
    validate.add_argument(
        "--max-corunners", type=count("MAX_THREADS"), default=3, help="co-runners per run, 1..N"
    )
    validate.add_argument(
        "--max-threads", type=count("MAX_THREADS"), default=2, help="threads per task, 1..N"
    )
    validate.add_argument(
        "--seconds",
        type=seconds(),
        default=1.5,
        help="work of each kernel, as seconds alone (default 1.5)",
    )
    validate.add_argument(
        "--repeats",
        type=count("MAX_MEASURED_RUNS"),
        default=2,
        help="runs alone per kernel and threads",
    )
    validate.add_argument(
        "--backend",
        choices=BACKEND_CHOICES,
        default="auto",
        help="counters: %(choices)s (default auto)",
    )
    add_seed(validate, "seed of the co-runner draws")
    add_out(
        validate,
        "folder",
        "runs.csv, table.csv, report.json; with --plots: plots/validation.png",
        writes=("runs.csv", "table.csv", "report.json", "plots"),
    )
    add_plots(validate, "validation.png", where=True)
    add_json(validate, "the table")
    add_quiet(validate)
    validate.set_defaults(func=_validate)

    speeds = subparsers.add_parser(
        "measure-speeds",
        help="speeds (formula (30)) from recorded counter samples (CSV, JSON or Parquet)",
        description="Replay cumulative per-thread readings (columns time, task, tid, cputime "
        "[, pid, instructions, cycles, time_enabled, time_running]) and print each task's speed "
        "per sampling interval (002 §6, formula (30)) and its mean.",
    )
    speeds.add_argument("samples", metavar="FILE")
    add_out(speeds, "file", "the per-interval table as CSV", metavar="CSV")
    add_json(speeds, "the per-task summary")
    add_quiet(speeds)
    speeds.set_defaults(func=_speeds)


def add_containment_arguments(parser) -> None:
    """--containment, --task-timeout and --timeout of `measure` and `execute`."""
    from cosched.containment import CONTAINMENT_KINDS

    parser.add_argument(
        "--containment",
        choices=CONTAINMENT_KINDS,
        default="auto",
        help="how each task's processes are held together: auto (the strongest that works "
        "here, reported), cgroup2, cgroup1, pgroup (no cgroups: a subreaper shepherd)",
    )
    parser.add_argument(
        "--task-timeout",
        type=seconds(),
        metavar="SECONDS",
        help="kill a task once it has run (been continued) this long; reported as timed-out",
    )
    parser.add_argument(
        "--timeout",
        type=seconds(),
        metavar="SECONDS",
        help="stop the whole run after this long, like Ctrl-C: partial report, exit code 124",
    )


TIMEOUT_EXIT_CODE = 124  # a run stopped by --timeout (as timeout(1))


def _backend(name: str):
    """(backend, why hardware counters are not used or None); the reason goes to report.json, see
    `_fallback`."""
    from cosched.measurement.counters import open_backend

    return open_backend(name)


def _fallback(args, reason: str | None, where: str) -> None:
    """After a run (an error stays one line): one short line when `--backend auto` fell back to
    cputime."""
    if args.backend == "auto" and reason is not None:
        notice(
            args,
            "note: no hardware counters, measured with the cputime backend (no IPC "
            f"factor); {where}",
        )


def _kernel_names(text: str) -> list[str]:
    from cosched.measurement.kernels import KERNELS

    names = [name.strip() for name in text.split(",") if name.strip()]
    if not names:
        raise InputError(f"no kernel given; known: {', '.join(sorted(KERNELS))}", field="--kernels")
    return [resolve_name(name, sorted(KERNELS), "kernel", field="--kernels") for name in names]


def _measure(args) -> int:
    from cosched.inputs import MAX_SECONDS, check_number
    from cosched.measurement.corun import TaskSpec, combination_set, parse_task
    from cosched.measurement.limits import check_seed
    from cosched.measurement.session import measure_to_directory
    from cosched.measurement.validation import kernel_command
    from cosched.outputs import check_outputs, output_dir

    plots = plots_target(args, plots_folder(args.out), fixed=True)
    check_outputs(("--out", args.out, "folder"))
    check_seed(args.seed)
    tasks = [parse_task(text) for text in args.task]
    if args.kernels:
        kernels = _kernel_names(args.kernels)
        planned = (
            len(combination_set(len(tasks) + len(kernels), args.combinations, args.seed))
            * (args.warmup + args.window)
            + KERNEL_SECONDS_MARGIN
        )
        counts: dict[str, int] = {}
        for name in kernels:
            counts[name] = counts.get(name, 0) + 1
            label = name if kernels.count(name) == 1 else f"{name}{counts[name]}"
            tasks.append(
                TaskSpec(label, kernel_command(name, args.threads, seconds=round(planned)))
            )
    if not tasks:
        raise InputError("give at least one --task NAME=COMMAND or --kernels", field="--task")
    names = [task.name for task in tasks]
    work = [1.0] * len(tasks)
    for text in args.work:
        name, _, value = text.partition("=")
        try:
            index, amount = names.index(name.strip()), float(value)
        except ValueError:
            raise InputError(
                f"expected NAME=B with a known task name and a number, got {text!r}",
                field="--task-work",
            ) from None
        # work b is the task's time alone (002 §2): a duration like any other
        work[index] = check_number(
            amount, field="--task-work", minimum=0, exclusive_minimum=True, limit=MAX_SECONDS
        )
    # reject a bad spec before starting anything
    combination_set(len(tasks), args.combinations, args.seed)
    backend, reason = _backend(args.backend)
    try:
        with output_dir(args.out) as out:
            report = measure_to_directory(
                tasks,
                out,
                backend,
                combinations=args.combinations,
                warmup=args.warmup,
                window=args.window,
                seed=args.seed,
                work=work,
                project=args.project_monotone,
                force=args.force,
                fallback_reason=reason,
                plots=plots is not None,
                progress=not args.quiet,
                containment=args.containment,
                task_timeout=args.task_timeout,
                timeout=args.timeout,
            )
    finally:
        backend.close()
    _fallback(args, reason, "the reason is in report.json")
    announce(args, *(Path(args.out) / name for name in sorted(set(report["files"].values()))))
    if args.json:
        print(json.dumps(report, indent=2, default=float))
    else:
        _print_summary(report, args.out)
    explain_exit(args.command, report)
    return _exit_code(report)


def explain_exit(command: str, report: dict, problems: Sequence[str] = ()) -> None:
    """Why a measurement's exit code is not 0, on stderr (under --quiet and --json too): the
    report's error, the interruption, and `problems` (e.g. tasks that crashed)."""
    lines = []
    if "error" in report:
        lines.append(f"error: {report['error']}")
    if report["interrupted"] and report.get("interrupted_by") != "timeout":
        lines.append(f"interrupted ({report.get('interrupted_by') or 'SIGINT'})")
    elif report["interrupted"] and "error" not in report:
        lines.append("stopped by --timeout")
    lines.extend(problems)
    for line in lines:
        print(f"cosched {command}: {line}", file=sys.stderr)


def _exit_code(report: dict) -> int:
    """130 Ctrl-C, 143 SIGTERM, 124 --timeout, 1 an error in the report, else 0."""
    if report["interrupted"]:
        if report.get("interrupted_by") == "timeout":
            return TIMEOUT_EXIT_CODE
        return 128 + signal.Signals[report.get("interrupted_by") or "SIGINT"]
    return 1 if "error" in report else 0


def _print_summary(report: dict, out: str) -> None:
    from cosched.measurement.counters import BACKEND_CPUTIME

    print(
        f"backend: {report['backend']}"
        + (
            " (no hardware counters: IPC factor dropped)"
            if report["backend"] == BACKEND_CPUTIME
            else ""
        )
    )
    for task in report["tasks"]:
        note = f" ({task['message']})" if task["message"] else ""
        note += "".join(f"\n    | {line}" for line in task.get("stderr", "").splitlines())
        print(
            f"  {task['name']:<16} {task['status']:<10} {task['combinations_measured']} "
            f"combinations{note}"
        )
    print(f"containment: {report['containment']}")
    print(
        f"combinations measured: {report['combinations_measured']} of "
        f"{report['combinations_planned']}"
        + (
            " (stopped by --timeout)"
            if report["interrupted_by"] == "timeout"
            else " (interrupted)"
            if report["interrupted"]
            else ""
        )
    )
    if report.get("combinations_incomplete"):
        print(
            "  incomplete (a member ended during the window): "
            + ", ".join(report["combinations_incomplete"])
        )
    for name, reason in (report.get("dropped_tasks") or {}).items():
        print(f"  dropped {name}: {reason}")
    if "error" in report:
        print("no instance written (the error is on stderr)")
        return
    print(
        f"speeds clipped to 1: {report['speeds_clipped_to_1']}, monotonicity violations: "
        f"{len(report['monotonicity_violations'])}"
        + (" (projected)" if report["monotone_projection"] else "")
    )
    print(f"outputs in {out}: " + ", ".join(sorted(set(report["files"].values()))))


def _validate(args) -> int:
    from cosched.measurement.limits import check_seed
    from cosched.measurement.validation import fit_table, run_validation
    from cosched.outputs import atomic_path, check_outputs, output_dir

    check_seed(args.seed)

    plots = plots_target(args, plots_folder(args.out))
    check_outputs(("--out", args.out, "folder"), ("--plots", plots, "folder"))
    kernels = _kernel_names(args.kernels)
    backend, reason = _backend(args.backend)
    try:
        runs = run_validation(
            backend,
            kernels,
            runs=args.runs,
            max_corunners=args.max_corunners,
            max_threads=args.max_threads,
            seconds=args.seconds,
            repeats=args.repeats,
            seed=args.seed,
            progress=not args.quiet,
        )
    finally:
        backend.close()
    table = fit_table(runs)
    written = []
    if args.out:
        with output_dir(args.out) as out:
            for name, frame in (("runs.csv", runs), ("table.csv", table)):
                with atomic_path(out / name) as tmp:
                    frame.to_csv(tmp, index=False)
                written.append(out / name)
            with atomic_path(out / "report.json") as tmp:
                tmp.write_text(
                    json.dumps(
                        {
                            "backend": backend.name,
                            "backend_note": reason,
                            "table": table.to_dict(orient="records"),
                        },
                        indent=2,
                    )
                )
            written.append(out / "report.json")
    if plots is not None:
        from cosched.measurement.plots import plot_validation

        written.append(plot_validation(runs, table, plots / "validation.png", backend.name))
    _fallback(
        args,
        reason,
        "the reason is in report.json" if args.out else "--backend cputime skips the probe",
    )
    announce(args, *written)
    if args.json:
        print(
            json.dumps(
                {"backend": backend.name, "table": table.to_dict(orient="records")}, indent=2
            )
        )
        return 0
    print(f"Table 2 method (002 §7), backend: {backend.name}")
    print(f"{'kernel':<10} {'runs':>4}  {'model (speed ratio vs time ratio)':<34} {'R²':>7}")
    for row in table.itertuples(index=False):
        print(
            f"{row.kernel:<10} {row.runs:>4}  {row.slope:.3f} x "
            f"{row.intercept:+.3f}{'':<19} {row.r2:>7.4f}"
        )
    return 0


def _speeds(args) -> int:
    from cosched.measurement.counters import BACKEND_CPUTIME, BACKEND_IPC_CPUTIME, load_samples
    from cosched.measurement.probe import interval_speeds
    from cosched.outputs import atomic_path, check_outputs

    check_outputs(("--out", args.out, "file"))
    samples = load_samples(args.samples)
    backend = BACKEND_IPC_CPUTIME if samples["instructions"].notna().any() else BACKEND_CPUTIME
    table = interval_speeds(samples)
    keys = ["combination", "task"] if "combination" in table.columns else ["task"]
    summary = (
        table.groupby(keys, sort=True)["speed"].agg(["mean", "min", "max", "count"]).reset_index()
    )
    if args.out:
        with atomic_path(args.out) as tmp:
            table.to_csv(tmp, index=False)
        announce(args, args.out)
    if args.json:
        print(
            json.dumps({"backend": backend, "tasks": summary.to_dict(orient="records")}, indent=2)
        )
        return 0
    print(f"backend: {backend} (replayed from {args.samples})")
    print(
        summary.rename(columns={"count": "intervals"}).to_string(index=False, float_format="%.4f")
    )
    return 0
