"""One `cosched execute` run: optional reference (time alone, measured matrix, OPT, simulated
makespan), the real run of a strategy on live processes, and report.json, schedule.csv and the Fig.
1-style plot in a folder.

The reference answers "how good is the real schedule": each task's work b_i is its measured time
alone to finish (rescaled to the matrix's speed alone when the node's load moved in between), the
matrix comes from `cosched measure` (`measure_to_directory`, into DIR/reference), OPT is the LP of
002 §4.1 on that instance and the simulated makespan is the same strategy run by the simulated loop
on it (002 §5, `cosched.strategies.schedule.execute`). Reruns follow `cosched.rerun`: config.json
records what determines the reference (tasks, combinations, warm-up, window, backend); a rerun with
the same values reuses the reference already measured (times alone in alone.csv, the matrix in
reference/) and runs the strategy again, so the strategy and its options may change between reruns.
"""

from __future__ import annotations

import csv
import json
import os
import signal
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from cosched.containment import open_containment
from cosched.deprecation import module_aliases
from cosched.measurement.corun import ALONE_ATTEMPTS, RunTimeout, TaskSpec, combination_set
from cosched.measurement.counters import BACKEND_CPUTIME, CounterBackend
from cosched.measurement.execute import (
    STEP_COLUMNS,
    ExecutionHarness,
    Step,
    normalised_speeds,
    premeasure,
    run_online,
    step_rows,
    steps_table,
)
from cosched.measurement.probe import MIN_ALONE_SPEED
from cosched.outputs import atomic_path
from cosched.processes import signals_deferred, termination_signals
from cosched.rerun import claim_output, json_key
from cosched.strategies.schedule import OnlineStrategy, StrategyError
from cosched.theory.instance import Instance
from cosched.theory.lattice import tasks_of

__all__ = [
    "ExecutionPlan",
    "execute_to_directory",
    "EXECUTE_OUTPUT_FILES",
    "CONTENTION_NOTE",
    "instance_from_steps",
]

CONFIG = "config.json"
EXECUTE_OUTPUT_FILES = (
    "report.json",
    "schedule.csv",
    "alone.csv",
    "reference",
    "plots",
    "execution.png",
    CONFIG,
)
# the name before 0.3.0 (cosched.measurement.session had one of its own)
__getattr__ = module_aliases(__name__, {"OUTPUT_FILES": "EXECUTE_OUTPUT_FILES"}, globals())
CONTENTION_NOTE = (
    "the cputime backend measures each task's share of CPU time only (formula (30) without the IPC "
    "factor): contention for caches and memory bandwidth is not seen, so co-run speeds of memory- "
    "or cache-bound tasks are overestimated and their simulated makespans are too optimistic"
)


@dataclass
class ExecutionPlan:
    """What to run: the tasks (fixed work), their long-running twins for the reference matrix, the
    strategy."""

    tasks: list[TaskSpec]
    strategy: str
    options: dict = field(default_factory=dict)
    combinations: str = "all"
    reference: bool = False
    measure_tasks: list[TaskSpec] | None = None  # default: the tasks themselves
    speeds: Instance | None = None  # --speeds: a measured instance (normalised), for FCS
    ideal_speeds: dict[str, float] | None = None  # absolute speeds alone that normalised `speeds`
    window: float = 1.0
    warmup: float = 0.3
    # builds the strategy (default: registry name + options)
    factory: Callable[[], OnlineStrategy] | None = None
    # the simulated run's `measure` (noise model), None: exact speeds
    simulated_noise: Callable | None = None
    containment: str = "auto"  # cosched.containment backend of every task started
    task_timeout: float | None = None  # seconds a task may run (be continued) before it is killed
    timeout: float | None = None  # seconds the whole run may take (reference included)


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, timezone.utc).isoformat(timespec="seconds")


def instance_from_steps(
    names: Sequence[str],
    steps: Sequence[Step],
    masks: Sequence[int] | np.ndarray,
    ideal: np.ndarray,
) -> Instance:
    """The instance of the premeasured windows: a_ij = measured / speed alone (002 §3), 0 where not
    measured."""
    ordered = np.asarray(sorted(int(m) for m in masks), dtype=np.int64)
    speeds = np.zeros((len(names), ordered.size))
    for step in steps:
        j = int(np.searchsorted(ordered, step.combination))
        if j < ordered.size and ordered[j] == step.combination:
            speeds[:, j] = normalised_speeds(step, names, ideal)
    return Instance(np.ones(len(names)), ordered, speeds, tuple(names))


def _strategy(plan: ExecutionPlan) -> OnlineStrategy:
    """A fresh strategy: one for the real run, one for the simulated run on the reference."""
    from cosched.strategies.registry import make_strategy

    return (
        plan.factory() if plan.factory is not None else make_strategy(plan.strategy, **plan.options)
    )


def _time_alone(
    tasks: Sequence[TaskSpec],
    backend: CounterBackend,
    path: Path,
    window: float,
    progress: bool,
    limits: dict,
) -> dict:
    """Time each task runs alone from its first continue to its exit (stopped for a moment every
    `window` to be read), and its mean speed over that run (formula (30)); rows kept in alone.csv (a
    rerun times again only the tasks without a completed row)."""
    from cosched.progress import progress_bar

    rows = {}
    if path.exists():
        with open(path, newline="") as handle:
            rows = {
                row["task"]: row for row in csv.DictReader(handle) if row["status"] == "completed"
            }
    for task in progress_bar(
        [t for t in tasks if t.name not in rows],
        desc="time alone",
        unit="task",
        disable=not progress,
    ):
        with ExecutionHarness([task], backend, **limits) as harness:
            steps = []
            # read every window: the speed of a step with all threads alive is exact
            while harness.unfinished:
                steps.append(harness.run(1, window))
        status = harness.status[0]
        seconds = float(sum(step.duration for step in steps))
        speeds = np.array([step.speeds.get(task.name, np.nan) for step in steps])
        durations = np.array([step.duration for step in steps])
        known = np.isfinite(speeds)
        speed = (
            float(np.sum(speeds[known] * durations[known]) / np.sum(durations[known]))
            if known.any()
            else np.nan
        )
        row = {
            "task": task.name,
            "seconds": seconds,
            "speed": speed,
            "status": status.status,
            "returncode": status.returncode,
        }
        with signals_deferred():
            new = not path.exists()
            with open(path, "a", newline="") as handle:
                writer = csv.DictWriter(handle, fieldnames=list(row))
                if new:
                    writer.writeheader()
                writer.writerow(row)
        rows[task.name] = row
    return rows


def _reference(
    plan: ExecutionPlan, out: Path, backend: CounterBackend, seed, fallback, progress, limits: dict
) -> dict:
    """Times alone, the measured matrix, OPT and the simulated schedule; {"error": ...} when it
    cannot be built."""
    from cosched.measurement.session import measure_to_directory
    from cosched.strategies.schedule import execute
    from cosched.theory.bounds import fcs_bound
    from cosched.theory.instance import load_instance, save_instance
    from cosched.theory.opt import solve_opt

    alone = _time_alone(plan.tasks, backend, out / "alone.csv", plan.window, progress, limits)
    failed = {name: row for name, row in alone.items() if row["status"] != "completed"}
    if failed:
        return {
            "error": "the reference needs every task to complete alone; failed: "
            + ", ".join(
                f"{name} ({row['status']}, exit code {row['returncode']})"
                for name, row in failed.items()
            ),
            "time_alone": {name: float(row["seconds"]) for name, row in alone.items()},
        }
    names = [task.name for task in plan.tasks]
    seconds = np.array([float(alone[name]["seconds"]) for name in names])
    measured = measure_to_directory(
        plan.measure_tasks or plan.tasks,
        out / "reference",
        backend,
        combinations=plan.combinations,
        warmup=plan.warmup,
        window=plan.window,
        seed=seed,
        work=seconds,
        fallback_reason=fallback,
        progress=progress,
        plots=False,
        containment=limits["containment"],
        task_timeout=plan.task_timeout,
        timeout=_remaining(limits["deadline"]),
    )
    reference: dict[str, Any] = {
        "time_alone": dict(zip(names, seconds.tolist())),
        "measure_report": "reference/report.json",
        "combinations": plan.combinations,
        "combinations_measured": measured["combinations_measured"],
        "combinations_planned": measured["combinations_planned"],
    }
    if measured.get("combinations_incomplete"):  # a task ended during a window: no matrix entry
        reference["combinations_incomplete"] = measured["combinations_incomplete"]
    if measured["interrupted"]:
        raise _Stop(measured["interrupted_by"], reference)
    if "error" in measured or measured.get("dropped_tasks"):
        reference["error"] = (
            measured.get("error") or f"tasks dropped from the matrix: {measured['dropped_tasks']}"
        )
        return reference
    ideal = np.array([measured["ideal_speeds"][name] for name in names])
    during = np.array([float(alone[name].get("speed") or "nan") for name in names])
    # b_i in seconds alone at the matrix's speed alone (002 §3): the time alone, rescaled when the
    # node gave the task another speed while it was timed than while the matrix was measured (a
    # shared node's load moves)
    work = np.where(np.isfinite(during) & (during > 0), seconds * during / ideal, seconds)
    instance = load_instance(out / "reference" / "instance.json", monotone=False)
    instance = Instance(work, instance.combinations, instance.speeds, instance.tasks)
    save_instance(instance, out / "reference" / "instance.json")
    opt = solve_opt(instance)
    simulated = execute(instance, _strategy(plan), seed=seed, measure=plan.simulated_noise)
    reference.update(
        {
            "instance": "reference/instance.json",
            "ideal_speeds": measured["ideal_speeds"],
            "speed_during_time_alone": {name: _finite(v) for name, v in zip(names, during)},
            "work": dict(zip(names, work.tolist())),
            "monotonicity_violations": len(measured["monotonicity_violations"]),
            "opt_makespan": opt.makespan,
            "opt_schedule": opt.to_json()["schedule"],
            "simulated_makespan": simulated.makespan,
            "simulated_schedule": simulated.to_json()["schedule"],
            "simulated_ratio": simulated.makespan / opt.makespan,
            "theorem1_bound": fcs_bound(instance),  # 002 §4.3, Theorem 1: FCS <= (2 - 1/a*) OPT
        }
    )
    reference["_objects"] = (instance, opt.schedule, simulated, measured["ideal_speeds"])
    return reference


def _remaining(deadline: float | None) -> float | None:
    """Seconds left before `deadline` (time.monotonic()), at least a moment; None without a
    deadline."""
    return None if deadline is None else max(deadline - time.monotonic(), 1e-3)


class _Stop(KeyboardInterrupt):
    """Ctrl-C / SIGTERM seen inside `measure_to_directory`, which keeps what it measured and
    returns."""

    def __init__(self, signal_name: str, reference: dict):
        super().__init__(signal_name)
        self.signal_name, self.reference = signal_name, reference


def execute_to_directory(
    plan: ExecutionPlan,
    out: str | os.PathLike,
    backend: CounterBackend,
    *,
    seed: int | None = None,
    force: bool = False,
    fallback_reason: str | None = None,
    progress: bool = True,
    plots: bool = True,
) -> dict:
    """Run `plan` and write out/report.json (returned), schedule.csv and the plot; see the module
    docstring.

    Ctrl-C / SIGTERM kill every task and still write report.json from what ran (`interrupted_by`); a
    strategy that fails stops the run with `error` in the report; a task that crashes is reported
    and the others go on.
    """
    out = Path(out)
    key = {
        "tasks": {task.name: task.command for task in plan.tasks},
        "reference_tasks": {task.name: task.command for task in plan.measure_tasks or plan.tasks},
        "combinations": plan.combinations,
        "warmup": plan.warmup,
        "window": plan.window,
        "backend": backend.name,
    }
    resuming = claim_output(
        out,
        command="execute",
        key_file=CONFIG,
        owned=EXECUTE_OUTPUT_FILES,
        matches=json_key(key),
        force=force,
    )
    out.mkdir(parents=True, exist_ok=True)
    if not resuming:
        with atomic_path(out / CONFIG) as tmp:
            tmp.write_text(json.dumps(key, indent=2))
    for name in ("schedule.csv", "plots/execution.png", "execution.png", "report.json"):
        (out / name).unlink(missing_ok=True)
    names = [task.name for task in plan.tasks]
    report: dict[str, Any] = {
        "strategy": plan.strategy,
        "options": {k: v for k, v in plan.options.items() if v is not None},
        "backend": backend.name,
        "backend_note": fallback_reason,
        "contention_note": CONTENTION_NOTE if backend.name == BACKEND_CPUTIME else None,
        "combinations": plan.combinations,
        "seed": seed,
        "start": _iso(time.time()),
        "interrupted": False,
        "interrupted_by": None,
    }
    objects = None
    interrupted_by = None
    steps: list[Step] = []
    harness = None
    ideal = None
    containment = None
    deadline = None if plan.timeout is None else time.monotonic() + plan.timeout
    try:
        with termination_signals():  # SIGTERM / SIGHUP end the run like Ctrl-C, wherever it is
            containment = open_containment(plan.containment)
            report.update(
                {
                    "containment": containment.name,
                    "containment_limits": containment.limits,
                    "task_timeout_seconds": plan.task_timeout,
                    "timeout_seconds": plan.timeout,
                }
            )
            limits: dict[str, Any] = {
                "containment": containment,
                "task_timeout": plan.task_timeout,
                "deadline": deadline,
                "timeout": plan.timeout,
            }
            if plan.reference:
                reference = _reference(plan, out, backend, seed, fallback_reason, progress, limits)
                objects = reference.pop("_objects", None)
                report["reference"] = reference
            if "error" in report.get("reference", {}):
                report["error"] = f"no reference: {report['reference']['error']}"
            else:
                harness = ExecutionHarness(plan.tasks, backend, **limits)
                ideal, phases = _real_run(
                    plan, harness, objects, seed, out / "schedule.csv", steps, progress
                )
                report["speeds_from"] = phases
    except _Stop as stop:
        interrupted_by = stop.signal_name
        report["reference"] = stop.reference
    except KeyboardInterrupt as error:
        interrupted_by = signal.Signals(getattr(error, "signum", signal.SIGINT)).name
    except RunTimeout as error:
        interrupted_by = "timeout"
        report["error"] = str(error)
    except StrategyError as error:
        report["error"] = str(error)
    finally:
        if containment is not None:
            with signals_deferred():
                containment.close()
    report["end"] = _iso(time.time())
    with signals_deferred():
        report["interrupted"], report["interrupted_by"] = interrupted_by is not None, interrupted_by
        if harness is not None:
            report["tasks"] = [
                dict(status.as_dict(), exit_time=_finite(t))
                for status, t in zip(harness.status, harness.exit_time)
            ]
            report["real"] = _real_summary(steps, harness, report.get("reference"))
            report["real"]["schedule"] = _schedule_entries(steps, names)
        draw = plots and interrupted_by is None and bool(steps)
        report["files"] = _output_files(out, plan, steps, ideal, objects, backend.name, draw)
        with atomic_path(out / "report.json") as tmp:
            tmp.write_text(json.dumps(report, indent=2, default=_json_default))
    return report


def _schedule_entries(steps: list[Step], names: list[str]) -> list[dict]:
    """The real run's steps as report.json lists them (task names, speeds null where not
    measured)."""
    return [
        {
            "combination": [names[i] for i in tasks_of(s.combination)],
            "phase": s.phase,
            "start": s.start,
            "end": s.end,
            "speeds": {name: _finite(v) for name, v in s.speeds.items()},
            "finished": [names[i] for i in tasks_of(s.finished)],
        }
        for s in steps
    ]


def _output_files(
    out: Path,
    plan: ExecutionPlan,
    steps: list[Step],
    ideal,
    objects,
    backend: str,
    plot: bool,
) -> dict[str, str]:
    """Draw the execution plot if `plot`; the files of the folder, as report.json names them."""
    names = [task.name for task in plan.tasks]
    files = {"report": "report.json", "config": CONFIG}
    if (out / "schedule.csv").exists():
        files["schedule"] = "schedule.csv"
    if plan.reference and (out / "alone.csv").exists():
        files.update({"alone": "alone.csv", "reference": "reference/"})
    if plot:
        from cosched.measurement.execute_plots import plot_execution

        table = steps_table(steps, names, ideal)
        # plots by one rule: DIR/plots/ (docs/cli-conventions.md)
        (out / "plots").mkdir(exist_ok=True)
        plot_execution(
            table,
            names,
            out / "plots" / "execution.png",
            backend,
            None if objects is None else {"simulated": objects[2], "OPT": objects[1]},
            None if objects is None else objects[0],
        )
        files["plot"] = "plots/execution.png"
    return files


def _finite(value: float) -> float | None:
    """JSON has no NaN: a value not measured is null."""
    return float(value) if np.isfinite(value) else None


def _json_default(value):
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating,)):
        return float(value)
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def _real_run(
    plan: ExecutionPlan,
    harness: ExecutionHarness,
    objects,
    seed,
    schedule_path: Path,
    all_steps: list[Step],
    progress: bool,
):
    """Start the tasks, premeasure what the strategy needs and is not given, run the strategy,
    appending every step to `all_steps` (kept on an interruption); returns the speeds alone and
    where the strategy's speeds came from."""
    from cosched.progress import progress_bar
    from cosched.strategies.search import SearchStrategy

    names = [task.name for task in plan.tasks]
    strategy = _strategy(plan)
    masks = combination_set(len(names), plan.combinations)
    ideal: np.ndarray | None
    if objects is not None:
        known, source = objects[0], "reference"
        ideal = np.array([float(objects[3][name]) for name in names])
    elif plan.speeds is not None:
        known, source = plan.speeds, "speeds file"
        ideal = (
            None
            if plan.ideal_speeds is None
            else np.array([plan.ideal_speeds[name] for name in names])
        )
    else:
        known, source, ideal = None, None, None
    # FCS and users' strategies read A
    needs_speeds = not isinstance(strategy, SearchStrategy) and known is None
    ideal_known = ideal is not None and np.isfinite(ideal).all()
    to_premeasure = (
        masks
        if needs_speeds
        else (1 << np.arange(len(names), dtype=np.int64))
        if not ideal_known
        else masks[:0]
    )
    normalise = [ideal]
    with (
        open(schedule_path, "w", newline="") as handle,
        progress_bar(
            total=len(names), desc=f"executing ({plan.strategy})", unit="task", disable=not progress
        ) as bar,
    ):
        writer = csv.DictWriter(handle, fieldnames=list(STEP_COLUMNS))
        writer.writeheader()

        def keep(step: Step) -> None:
            all_steps.append(step)
            # whole rows only; plain csv, so writing costs microseconds between steps
            with signals_deferred():
                writer.writerows(step_rows(len(all_steps) - 1, step, names, normalise[0]))
                handle.flush()
            bar.update(bin(step.finished).count("1"))

        with harness:
            premeasured = premeasure(harness, to_premeasure, plan.window, on_step=keep)
            if not ideal_known:
                ideal = _ideal_from(harness, premeasured, names, plan.window, keep)
                normalise[0] = ideal
            assert ideal is not None  # known, or measured alone just above
            if needs_speeds:
                known, source = (
                    instance_from_steps(names, premeasured, masks, ideal),
                    "premeasured windows",
                )
            elif known is None:  # search strategies read the combinations only
                known = Instance(
                    np.ones(len(names)),
                    masks,
                    np.full((len(names), len(masks)), np.nan),
                    tuple(names),
                )
                source = "none (search strategy: the combinations only)"
            run_online(harness, strategy, known, ideal, seed=seed, on_step=keep)
    phases = {"strategy_instance": source, "premeasured": [int(m) for m in to_premeasure]}
    return ideal, phases


def _ideal_from(
    harness: ExecutionHarness,
    premeasured: list[Step],
    names: Sequence[str],
    window: float,
    keep: Callable[[Step], None],
) -> np.ndarray:
    """Speeds alone from the premeasured windows alone. A speed below `MIN_ALONE_SPEED` of a task
    still running is measured again (up to `ALONE_ATTEMPTS` windows); one that stays there is an
    error (`StrategyError`), never a divisor. A task whose window alone ended with its exit needs no
    scale (1)."""
    ideal = np.ones(len(names))
    for step in list(premeasured):
        if bin(step.combination).count("1") != 1:
            continue
        i = step.combination.bit_length() - 1
        value, attempts = next(iter(step.speeds.values())), 1
        while (
            harness.status_names[i] == "waiting"
            and not value >= MIN_ALONE_SPEED
            and attempts < ALONE_ATTEMPTS
        ):
            again = harness.run(step.combination, window, phase="premeasure")
            keep(again)
            # the later window replaces the earlier in the premeasured instance
            premeasured.append(again)
            value, attempts = next(iter(again.speeds.values())), attempts + 1
        if harness.status_names[i] == "waiting" and not value >= MIN_ALONE_SPEED:
            raise StrategyError(
                f"task {names[i]!r} reads speed {value:.3g} alone in {attempts} windows of "
                f"{window:g} s (below {MIN_ALONE_SPEED}): it hardly computes while measured "
                "(waiting for input, I/O or a process outside it), so its speeds cannot be "
                "normalised; give --speeds or --reference, or a task that computes"
            )
        usable = np.isfinite(value) and value >= MIN_ALONE_SPEED
        if harness.status_names[i] == "waiting" or usable:
            ideal[i] = value
    return ideal


RATIO_NOTE_NOISE = (
    "a real ratio below 1 does not beat OPT: OPT is computed from measured speeds and one "
    "measured time alone per task, and the real makespan is within their uncertainty of it "
    "(measurement noise)"
)
RATIO_NOTE_MODEL = (
    "a real ratio below 1 by more than its uncertainty: the reference is off, not the schedule "
    "better than OPT. Likely causes: contention outside the model (the node's other load changed "
    "between the reference and the run, or co-run speeds measured lower than the tasks reached), "
    "or the reference's own error (each task's time alone is a single run)"
)


def _ratio_uncertainty(reference: dict) -> float:
    """Relative uncertainty of OPT's makespan from the reference: the RMS relative disagreement
    between the two measurements of each task's speed alone (while timed alone, and in the matrix's
    window). OPT is linear in the work b_i (002 §4.1), which is the time alone rescaled by that
    ratio."""
    during = reference.get("speed_during_time_alone") or {}
    ideal = reference.get("ideal_speeds") or {}
    ratios = [
        during[name] / ideal[name] - 1.0
        for name in ideal
        if during.get(name) is not None and ideal[name] and np.isfinite(during[name])
    ]
    return float(np.sqrt(np.mean(np.square(ratios)))) if ratios else 0.0


def _real_summary(steps: Sequence[Step], harness: ExecutionHarness, reference: dict | None) -> dict:
    """Real makespan (first continue to last exit), time the tasks ran, switching overhead, real
    ratio."""
    running = float(sum(step.duration for step in steps))
    done = all(name in ("completed", "crashed", "timed-out") for name in harness.status_names)
    elapsed = max((s.end for s in steps), default=0.0)
    makespan = float(np.nanmax(harness.exit_time)) if done and steps else None
    span = makespan if makespan is not None else elapsed
    summary: dict[str, Any] = {
        "makespan": makespan,
        "elapsed": span,
        "running_seconds": running,
        "overhead_seconds": span - running,
        "overhead_fraction": (span - running) / span if span > 0 else None,
        "steps": len(steps),
        "premeasure_seconds": float(sum(s.duration for s in steps if s.phase == "premeasure")),
        "completed": sum(name == "completed" for name in harness.status_names),
        "crashed": sum(name == "crashed" for name in harness.status_names),
        "timed_out": sum(name == "timed-out" for name in harness.status_names),
    }
    if reference is not None and makespan is not None and "opt_makespan" in reference:
        # 002 §4.3, (4): real C_max / OPT
        ratio = summary["ratio"] = makespan / reference["opt_makespan"]
        summary["ratio_uncertainty"] = ratio * _ratio_uncertainty(reference)
        if ratio < 1:
            summary["ratio_note"] = (
                RATIO_NOTE_NOISE if ratio + summary["ratio_uncertainty"] >= 1 else RATIO_NOTE_MODEL
            )
        summary["vs_simulated"] = makespan / reference["simulated_makespan"] - 1.0
    return summary
