"""`cosched execute`: run an online strategy (FCS, UCB, PI, EI) on live processes and measure its
real ratio."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING

from cosched.cli_options import (
    LazyChoices,
    add_alias,
    add_out,
    add_plots,
    add_quiet,
    announce,
    plots_folder,
    plots_target,
)
from cosched.errors import InputError
from cosched.measurement.cli import (
    KERNEL_SECONDS_MARGIN,
    _exit_code,
    add_containment_arguments,
    explain_exit,
)
from cosched.measurement.counters import BACKEND_NAMES
from cosched.measurement.flags import count, seconds

if TYPE_CHECKING:  # imported on use: the CLI imports this module at start
    from cosched.measurement.corun import TaskSpec

__all__ = ["register", "DEFAULT_QUANTUM_SECONDS"]

DEFAULT_QUANTUM_SECONDS = 1.0  # a search strategy's measurement quantum τ on a real node


def register(subparsers) -> None:
    from cosched.strategies.cli import add_strategy_arguments

    parser = subparsers.add_parser(
        "execute",
        help="run an online strategy on live processes of this node and measure its real ratio",
        description="Start every task once and keep it runnable; the strategy picks a combination, "
        "which alone "
        "runs (SIGCONT, the rest SIGSTOPped) for one quantum or until a task exits; the measured "
        "speeds (formula (30) of 002 §6) go back to the strategy, until every task has finished. "
        "With --reference the tasks are measured first (times alone, speed matrix) and the real "
        "makespan is compared with OPT and the simulated makespan. Writes DIR/report.json and "
        "schedule.csv (with --plots, also plots/execution.png).",
    )
    parser.add_argument(
        "--task",
        action="append",
        default=[],
        metavar="NAME=COMMAND",
        help="a task: name and shell command doing a fixed amount of work (repeatable)",
    )
    parser.add_argument(
        "--kernels",
        metavar="K1,K2,...",
        help="add bundled kernels as tasks (compute, memory, cache; a name may repeat); needs "
        "--kernel-work",
    )
    parser.add_argument(
        "--kernel-work",
        dest="work",
        type=count("MAX_KERNEL_WORK"),
        metavar="N",
        help="work units of every bundled kernel",
    )
    add_alias(parser, "--work", dest="work", type=count("MAX_KERNEL_WORK"), metavar="N")
    parser.add_argument(
        "--threads", type=count("MAX_THREADS"), default=1, help="threads of each bundled kernel"
    )
    add_strategy_arguments(parser)
    parser.set_defaults(quantum=DEFAULT_QUANTUM_SECONDS)
    parser.add_argument(
        "--backend",
        choices=BACKEND_NAMES,
        default="auto",
        help="counters: auto (perf if hardware counters work, else cputime, reported), perf, "
        "cputime",
    )
    add_containment_arguments(parser)
    parser.add_argument(
        "--allowed-combinations",
        dest="combinations",
        default="all",
        metavar="SPEC",
        help="combinations the strategy may form and the reference measures: all | pairs | "
        "upto:K (default all)",
    )
    add_alias(parser, "--combinations", dest="combinations")
    parser.add_argument(
        "--reference",
        action="store_true",
        help="first measure each task's time alone and the speed matrix; report OPT, the simulated "
        "makespan of the strategy and the real ratio",
    )
    parser.add_argument(
        "--speeds",
        metavar="INSTANCE",
        help="speed matrix for FCS: instance.json written by `cosched measure` for the same tasks "
        "(without it and --reference, FCS first runs each combination for one window)",
    )
    parser.add_argument(
        "--reference-window",
        dest="window",
        type=seconds(),
        default=1.0,
        metavar="SECONDS",
        help="measuring window of the reference and of premeasured combinations [s] (default 1)",
    )
    add_alias(parser, "--window", dest="window", type=seconds())
    parser.add_argument(
        "--reference-warmup",
        dest="warmup",
        type=seconds(),
        default=0.3,
        metavar="SECONDS",
        help="discarded warm-up of the reference's windows [s] (default 0.3)",
    )
    add_alias(parser, "--warmup", dest="warmup", type=seconds())
    parser.add_argument(
        "--force",
        action="store_true",
        help="start over in DIR (by default a rerun with the same tasks, combinations, window, "
        "warm-up and backend reuses the reference measured there)",
    )
    add_plots(parser, "execution.png (real schedule beside the simulated one and OPT's)")
    add_out(
        parser,
        "folder",
        "report.json, schedule.csv, alone.csv, reference/; with --plots: plots/execution.png",
        required=True,
        writes=LazyChoices("cosched.measurement.execute_session", "EXECUTE_OUTPUT_FILES"),
    )
    add_quiet(parser)
    parser.set_defaults(func=_execute)


def _tasks(args: argparse.Namespace) -> tuple[list[TaskSpec], list[TaskSpec]]:
    """The tasks of the run (kernels sized by --kernel-work) and their long-running twins for the
    reference matrix (kernels sized by time)."""
    from cosched.measurement.cli import _kernel_names
    from cosched.measurement.corun import TaskSpec, parse_task
    from cosched.measurement.validation import kernel_command

    tasks = [parse_task(text) for text in args.task]
    long_running = list(tasks)
    if args.kernels:
        if args.work is None:
            raise InputError(
                "bundled kernels need --kernel-work N (work units each, the same in every run)",
                field="--kernel-work",
            )
        kernels = _kernel_names(args.kernels)
        planned = len(_combinations(len(tasks) + len(kernels), args.combinations)) * (
            args.warmup + args.window
        )
        counts: dict[str, int] = {}
        for name in kernels:
            counts[name] = counts.get(name, 0) + 1
            label = name if kernels.count(name) == 1 else f"{name}{counts[name]}"
            tasks.append(TaskSpec(label, kernel_command(name, args.threads, work=args.work)))
            long_running.append(
                TaskSpec(
                    label,
                    kernel_command(
                        name, args.threads, seconds=round(planned + KERNEL_SECONDS_MARGIN)
                    ),
                )
            )
    if not tasks:
        raise InputError("give at least one --task NAME=COMMAND or --kernels", field="--task")
    names = [task.name for task in tasks]
    if len(set(names)) != len(names):
        raise InputError(f"task names must be unique, got {names}", field="--task")
    _combinations(len(tasks), args.combinations)  # reject a bad spec before starting anything
    return tasks, long_running


def _combinations(count: int, spec: str):
    """`corun.combination_set`, its errors naming execute's flag."""
    from cosched.measurement.corun import combination_set

    try:
        return combination_set(count, spec)
    except InputError as error:
        raise InputError(error.message, field="--allowed-combinations") from None


def _check_strategy_numbers(args) -> None:
    """The seed, and the strategy options that are wall-clock seconds or a noise level here, in
    their ranges (the strategy checks the others)."""
    from cosched.inputs import check_number
    from cosched.measurement.limits import (
        MAX_NOISE_SIGMA,
        MAX_WAIT_SECONDS,
        MIN_WAIT_SECONDS,
        check_seed,
    )

    check_seed(args.seed)

    if args.quantum is not None:
        check_number(
            args.quantum, field="--quantum", minimum=MIN_WAIT_SECONDS.value, limit=MAX_WAIT_SECONDS
        )
    check_number(args.noise_sigma, field="--noise-sigma", minimum=0, limit=MAX_NOISE_SIGMA)


def _speeds_file(path: str, names: list[str]):
    """The instance of `--speeds` (tasks named as in this run) and the speeds alone in its
    report.json, if any."""
    from cosched.measurement.matrix import compress_masks
    from cosched.theory.instance import Instance, load_instance

    instance = load_instance(path, monotone=False)
    if sorted(instance.tasks) != sorted(names):
        raise InputError(
            f"its tasks {list(instance.tasks)} are not this run's tasks {names}",
            source=path,
            field="tasks",
        )
    if list(instance.tasks) != names:
        order = [instance.tasks.index(name) for name in names]
        masks = compress_masks(instance.combinations, order)
        instance = Instance(instance.work[order], masks, instance.speeds[order], tuple(names))
    report = Path(path).with_name("report.json")
    ideal = None
    if report.exists():
        try:
            ideal = json.loads(report.read_text()).get("ideal_speeds")
        except (OSError, ValueError):
            ideal = None
    if not isinstance(ideal, dict) or sorted(ideal) != sorted(names):
        ideal = None
    return instance, ideal


def _strategy_options(args) -> dict:
    """The strategy options given on the command line (those `add_strategy_arguments` defines), for
    the report."""
    from cosched.strategies.cli import add_strategy_arguments

    probe = argparse.ArgumentParser(add_help=False)
    add_strategy_arguments(probe)
    skip = {"strategy", "seed", "json"}
    return {
        action.dest: getattr(args, action.dest)
        for action in probe._actions
        if action.dest not in skip and getattr(args, action.dest, None) is not None
    }


def _execute(args) -> int:
    from cosched.measurement.counters import open_backend
    from cosched.measurement.execute_session import ExecutionPlan, execute_to_directory
    from cosched.outputs import check_outputs, output_dir
    from cosched.strategies.cli import noise_from_args, strategy_from_args, strategy_name

    plots = plots_target(args, plots_folder(args.out), fixed=True)
    check_outputs(("--out", args.out, "folder"))
    if args.speeds and args.reference:
        raise InputError(
            "--reference measures the speed matrix itself; give --speeds or --reference, not both",
            field="--speeds",
        )
    tasks, long_running = _tasks(args)
    _check_strategy_numbers(args)
    strategy_from_args(args)  # a bad option fails here, before any process starts
    speeds, ideal = (
        _speeds_file(args.speeds, [t.name for t in tasks]) if args.speeds else (None, None)
    )
    plan = ExecutionPlan(
        tasks,
        strategy_name(args),
        combinations=args.combinations,
        reference=args.reference,
        measure_tasks=long_running,
        speeds=speeds,
        ideal_speeds=ideal,
        window=args.window,
        warmup=args.warmup,
        factory=lambda: strategy_from_args(args),
        simulated_noise=noise_from_args(args),
        options=_strategy_options(args),
        containment=args.containment,
        task_timeout=args.task_timeout,
        timeout=args.timeout,
    )
    backend, reason = open_backend(args.backend)
    try:
        with output_dir(args.out) as out:
            report = execute_to_directory(
                plan,
                out,
                backend,
                seed=args.seed,
                force=args.force,
                fallback_reason=reason,
                progress=not args.quiet,
                plots=plots is not None,
            )
    finally:
        backend.close()
    # after the run: a refused --out stays one line
    if reason is not None and args.backend == "auto":
        import warnings

        warnings.warn(
            f"no hardware counters, using the cputime backend (no IPC factor: cache and memory "
            f"contention is not seen); {reason.split(';')[0]}",
            stacklevel=1,
        )
    announce(args, *(Path(args.out) / name for name in sorted(set(report["files"].values()))))
    if args.json:
        print(json.dumps(report, indent=2, default=float))
    else:
        _print_summary(report)
    crashed = [
        f"task {task['name']} {task['status']}"
        + (f": {task['message']}" if task["message"] else "")
        for task in report.get("tasks", [])
        if task["status"] in ("crashed", "timed-out")
    ]
    explain_exit(args.command, report, crashed)
    if report["interrupted"]:
        return _exit_code(report)  # 130 Ctrl-C, 143 SIGTERM, 124 --timeout
    return 1 if "error" in report or crashed else 0


def _print_summary(report: dict) -> None:
    print(
        f"strategy: {report['strategy']}, backend: {report['backend']}, containment: "
        f"{report.get('containment')}"
        + (
            " (no hardware counters: cache and memory contention not seen)"
            if report["contention_note"]
            else ""
        )
    )
    for task in report.get("tasks", []):
        note = f" ({task['message']})" if task["message"] else ""
        note += "".join(f"\n    | {line}" for line in task.get("stderr", "").splitlines())
        exit_time = (
            "no exit" if task["exit_time"] is None else f"exit at {task['exit_time']:8.3f} s"
        )
        print(
            f"  {task['name']:<16} {task['status']:<10} {exit_time:<18} "
            f"{task['combinations_measured']} steps{note}"
        )
    real, reference = report.get("real"), report.get("reference") or {}
    if real:
        makespan = (
            "not reached (interrupted)" if real["makespan"] is None else f"{real['makespan']:.3f} s"
        )
        print(
            f"real makespan: {makespan}; {real['steps']} steps, switching overhead "
            f"{real['overhead_seconds']:.3f} s"
            + (
                f" ({100 * real['overhead_fraction']:.2f} %)"
                if real["overhead_fraction"] is not None
                else ""
            )
        )
    if reference.get("combinations_incomplete"):
        print(
            f"reference matrix: {reference['combinations_measured']} of "
            f"{reference['combinations_planned']} combinations measured; incomplete (a member "
            f"ended during the window): {', '.join(reference['combinations_incomplete'])}"
        )
    if "opt_makespan" in reference:
        print(
            f"OPT: {reference['opt_makespan']:.3f} s, simulated {report['strategy']}: "
            f"{reference['simulated_makespan']:.3f} s (ratio {reference['simulated_ratio']:.3f}), "
            f"Theorem 1 bound: {reference['theorem1_bound']:.3f}"
        )
    if real and "ratio" in real:
        print(
            f"real ratio: {real['ratio']:.3f} ± {real['ratio_uncertainty']:.3f}; "
            f"real vs simulated: "
            f"{100 * real['vs_simulated']:+.1f} %"
        )
        if "ratio_note" in real:
            print(f"  {real['ratio_note']}")
