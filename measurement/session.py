"""One `cosched measure` run: harness -> incremental raw tables -> instance, heatmap, plots and
report in a folder.

`samples.csv` and then `speeds.csv` grow after every combination (a combination counts as measured
once all its rows are in `speeds.csv`), so an interrupted or killed run keeps what it measured.
Reruns follow the rule of `cosched.rerun`: the folder's `config.json` records what determines a
measured row (tasks and their commands, warm-up, window, counter backend); a rerun with the same
values resumes, skipping the combinations already measured (the combination set itself may change:
more combinations are added, fewer are a subset); other values, or foreign files, are refused unless
`force`, which removes this command's files and starts over. The derived files (instance.json,
heatmap.csv, plots, report.json) are rewritten at the end of every run; one a run does not write
(plots with `plots=False` or after an interruption) is removed, never left stale.
"""

from __future__ import annotations

import io
import json
import os
import re
import signal
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from cosched.deprecation import module_aliases
from cosched.errors import InputError
from cosched.measurement.corun import (
    SPEED_COLUMNS,
    TaskSpec,
    combination_set,
    measure_combinations,
    result_samples,
    result_table,
)
from cosched.measurement.counters import CounterBackend
from cosched.measurement.matrix import measured_instance
from cosched.outputs import atomic_path
from cosched.processes import signals_deferred
from cosched.rerun import FORCE_HINT, claim_output, json_key
from cosched.theory.instance import save_instance
from cosched.theory.lattice import mask_of, popcount

__all__ = ["measure_to_directory", "MEASURE_OUTPUT_FILES", "run_key"]

CONFIG = "config.json"
# every run (the last two: where plots went before DIR/plots/)
DERIVED = (
    "instance.json",
    "heatmap.csv",
    "plots/heatmap.png",
    "plots/speed_by_size.png",  # rewritten or removed
    "heatmap.png",
    "speed_by_size.png",
)
MEASURE_OUTPUT_FILES = (
    "instance.json",
    "heatmap.csv",
    "samples.csv",
    "speeds.csv",
    "report.json",
    "plots",
    "heatmap.png",
    "speed_by_size.png",
    CONFIG,
)
# the name before 0.3.0 (cosched.measurement.execute_session had one of its own)
__getattr__ = module_aliases(__name__, {"OUTPUT_FILES": "MEASURE_OUTPUT_FILES"}, globals())
_KERNEL_LIFETIME = re.compile(r"(\s--seconds\s+)\S+")


def run_key(tasks: Sequence[TaskSpec], warmup: float, window: float, backend: str) -> dict:
    """What determines a measured row: the resume key stored as config.json.

    A bundled kernel's `--seconds` (its lifetime, sized from the number of combinations) is left
    out."""

    def command(text: str) -> str:
        return _KERNEL_LIFETIME.sub(r"\1*", text) if "cosched.measurement.kernels" in text else text

    return {
        "tasks": {task.name: command(task.command) for task in tasks},
        "warmup": float(warmup),
        "window": float(window),
        "backend": backend,
    }


def _append(frame, path: Path) -> None:
    frame.to_csv(path, mode="a", header=not path.exists() or path.stat().st_size == 0, index=False)


def _read_rows(path: Path):
    """A CSV the run appends to, without the cut-off last line a killed write leaves; (frame,
    was_cut)."""
    import pandas as pd

    if not path.exists():
        return None, False
    text = path.read_text()
    whole = text[: text.rfind("\n") + 1]
    if not whole.strip():
        return None, whole != text
    try:
        return pd.read_csv(io.StringIO(whole)), whole != text
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as error:
        raise InputError(f"cannot resume: {error}; {FORCE_HINT}", source=str(path)) from None


def _restore(out: Path, tasks: Sequence[TaskSpec]):
    """Speed rows of the combinations an earlier run measured completely, re-keyed to the current
    task order.

    A combination counts when every member has a finite speed; the rows (and samples) of others are
    dropped from the files, so the rerun measures them again and the files hold each combination
    once.
    """
    speeds_path, samples_path = out / "speeds.csv", out / "samples.csv"
    table, cut = _read_rows(speeds_path)
    if table is None:
        for path in (speeds_path, samples_path):
            path.unlink(missing_ok=True)
        return None
    missing = [column for column in SPEED_COLUMNS if column not in table.columns]
    if missing:
        raise InputError(
            f"cannot resume: missing column; {FORCE_HINT}",
            source=str(speeds_path),
            field=missing[0],
        )
    names = [task.name for task in tasks]
    table["task"] = table["task"].astype(str)
    unknown = sorted(set(table["task"]) - set(names))
    if unknown:
        raise InputError(
            f"cannot resume: tasks {unknown} are not in this run ({names})",
            source=str(speeds_path),
            field="task",
        )
    stored = table["combination"].to_numpy(dtype=np.int64)
    table["combination"] = [
        mask_of(names.index(name) for name in str(members).split("+"))
        for members in table["members"]
    ]
    # earlier numbering -> this run's
    renumber = dict(zip(stored.tolist(), table["combination"].tolist()))
    finite = np.isfinite(table["speed"].to_numpy(dtype=float))
    per = (
        table.assign(finite=finite)
        .groupby("combination")
        .agg(rows=("task", "nunique"), ok=("finite", "all"))
    )
    complete = per.index[
        (per["rows"].to_numpy() == popcount(per.index.to_numpy(dtype=np.int64)))
        & per["ok"].to_numpy()
    ]
    kept = table[table["combination"].isin(complete)].drop_duplicates(
        ["combination", "task"], keep="first"
    )
    renumbered = any(old != new for old, new in renumber.items())
    if cut or renumbered or len(kept) < len(table):
        with atomic_path(
            speeds_path
        ) as tmp:  # only the complete combinations, in this run's numbering
            kept.to_csv(tmp, index=False, columns=list(SPEED_COLUMNS))
    samples, samples_cut = _read_rows(samples_path)
    if samples is not None and "combination" in samples.columns:
        mapped = samples["combination"].map(renumber)
        inside = mapped.isin(complete).to_numpy()
        if samples_cut or renumbered or not inside.all():
            with atomic_path(samples_path) as tmp:
                samples[inside].assign(combination=mapped[inside].astype(np.int64)).to_csv(
                    tmp, index=False
                )
    return kept


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, timezone.utc).isoformat(timespec="seconds")


def measure_to_directory(
    tasks: Sequence[TaskSpec],
    out: str | os.PathLike,
    backend: CounterBackend,
    *,
    combinations: str = "pairs",
    warmup: float = 0.5,
    window: float = 2.0,
    seed: int | None = None,
    work: Sequence[float] | np.ndarray | None = None,
    project: bool = False,
    resume: bool = True,
    force: bool = False,
    fallback_reason: str | None = None,
    progress: bool = True,
    plots: bool = True,
    containment="auto",
    task_timeout: float | None = None,
    timeout: float | None = None,
) -> dict:
    """Measure `tasks` in the combinations named by `combinations`; returns the report also written
    to `out/report.json` (its `interrupted` / `interrupted_by` say whether Ctrl-C / SIGTERM cut the
    run short, or "timeout" when the run went past `timeout` seconds).

    A task that ends before its first window is measured (it fails at once, its command does not
    exist) raises `cosched.measurement.corun.TaskFailed`; the files this run created are removed
    again.

    Reruns: see the module docstring (`force` starts over; `resume` is accepted for old callers and
    ignored).
    """
    del resume  # the rerun rule decides: the same configuration always resumes
    out = Path(out)
    key = run_key(tasks, warmup, window, backend.name)
    resuming, masks, previous = _start(out, tasks, key, combinations, seed, force)
    raw = _RawTables(out, tasks, alone=int(np.sum(popcount(masks) == 1)))
    try:
        measurement = measure_combinations(
            tasks,
            masks,
            backend,
            warmup=warmup,
            window=window,
            fallback_reason=fallback_reason,
            on_result=raw.keep,
            progress=progress,
            containment=containment,
            task_timeout=task_timeout,
            timeout=timeout,
            fail_early=True,
        )
    except InputError:
        if not resuming:
            for path in (raw.speeds, raw.samples, out / CONFIG):
                path.unlink(missing_ok=True)
        raise
    raw.flush()  # an interruption before every task ran alone: keep what was measured
    interrupted_by = measurement.interrupted_by
    planned = len(masks) + (previous["combination"].nunique() if previous is not None else 0)
    report: dict[str, Any] = {
        "backend": measurement.backend,
        "backend_note": fallback_reason,
        "containment": measurement.containment,
        "containment_limits": measurement.containment_limits,
        "task_timeout_seconds": task_timeout,
        "timeout_seconds": timeout,
        "tasks": [status.as_dict() for status in measurement.status],
        "start": _iso(measurement.started),
        "end": _iso(measurement.finished),
        "interrupted": False,
        "interrupted_by": None,
        "combinations": combinations,
        "combinations_measured": 0,
        "combinations_planned": int(planned),
        "warmup_seconds": warmup,
        "window_seconds": window,
        "seed": seed,
        "files": {},
    }
    written: set[str] = set()
    try:
        table = _speed_table(measurement, previous)
        report.update(_measured_counts(table))
        # an interrupted run ends at once: the rerun draws the plots
        draw = plots and interrupted_by is None
        _write_derived(out, table, tasks, work, project, draw, measurement.backend, report, written)
    except KeyboardInterrupt as error:  # Ctrl-C / SIGTERM while writing the derived files: finish
        interrupted_by = (
            interrupted_by or signal.Signals(getattr(error, "signum", signal.SIGINT)).name
        )
    _write_report(out, report, written, interrupted_by)
    return report


def _start(out: Path, tasks: Sequence[TaskSpec], key: dict, combinations: str, seed, force: bool):
    """Claim `out` (the rerun rule) and prepare its raw tables: (whether it resumes, the masks
    still to measure, the speed rows kept from an earlier run or None)."""
    resuming = claim_output(
        out,
        command="measure",
        key_file=CONFIG,
        owned=MEASURE_OUTPUT_FILES,
        matches=json_key(key),
        force=force,
    )
    out.mkdir(parents=True, exist_ok=True)
    masks = combination_set(len(tasks), combinations, seed)
    previous = _restore(out, tasks) if resuming else None
    if previous is not None:
        masks = masks[~np.isin(masks, previous["combination"].unique())]
    else:
        for path in (out / "speeds.csv", out / "samples.csv"):
            path.unlink(missing_ok=True)
    if not resuming:
        with atomic_path(out / CONFIG) as tmp:
            tmp.write_text(json.dumps(key, indent=2))
    return resuming, masks, previous


class _RawTables:
    """samples.csv and speeds.csv, appended after every combination; the windows alone are held
    back until every task has run alone (a task that fails at once, TaskFailed, writes nothing)."""

    def __init__(self, out: Path, tasks: Sequence[TaskSpec], alone: int):
        self.speeds, self.samples = out / "speeds.csv", out / "samples.csv"
        self.tasks, self.alone = tasks, alone
        self.held: list = []

    def write(self, result) -> None:
        # samples first: a combination is measured once its speed rows are in speeds.csv
        _append(result_samples(result), self.samples)
        _append(result_table(result, self.tasks), self.speeds)

    def keep(self, result) -> None:
        """`on_result` of `measure_combinations` (which holds Ctrl-C / SIGTERM back meanwhile)."""
        self.held.append(result)
        if len(self.held) >= self.alone:
            self._write_held()

    def flush(self) -> None:
        """Write what is still held back (a run interrupted before every task ran alone)."""
        with signals_deferred():
            self._write_held()

    def _write_held(self) -> None:
        for kept in self.held:
            self.write(kept)
        self.held.clear()


def _measured_counts(table) -> dict:
    """`combinations_measured`: the combinations with a speed for every member; a member that ended
    during the window leaves its combination incomplete (`combinations_incomplete`, by members)."""
    finite = np.isfinite(table["speed"].to_numpy(dtype=float))
    complete = table.assign(finite=finite).groupby("combination")["finite"].all()
    incomplete = table[table["combination"].isin(complete.index[~complete])]["members"]
    counts: dict[str, Any] = {"combinations_measured": int(complete.sum())}
    if len(incomplete):
        counts["combinations_incomplete"] = sorted(set(map(str, incomplete)))
    return counts


def _speed_table(measurement, previous):
    """The speed rows of this run, after those an earlier run measured (`previous`)."""
    import pandas as pd

    table = measurement.speed_table()
    if previous is not None:
        table = pd.concat([previous[list(SPEED_COLUMNS)], table], ignore_index=True)
        table = table.drop_duplicates(["combination", "task"], keep="last")
    return table


def _write_derived(
    out: Path,
    table,
    tasks: Sequence[TaskSpec],
    work,
    project: bool,
    plots: bool,
    backend: str,
    report: dict,
    written: set[str],
) -> None:
    """Write instance.json, heatmap.csv and (with `plots`) the plots from the speed table; add
    each file to `written` once it is there and to the report's files (a table that gives no
    instance: the report's error)."""
    from cosched.theory.heatmap import heatmap_from_instance, plot_heatmap, write_heatmap

    try:
        matrix = measured_instance([task.name for task in tasks], table, work, project)
    except InputError as error:
        report["error"] = str(error)
        return
    report.update(matrix.report())
    save_instance(matrix.instance, out / "instance.json")
    procs = [
        max(1, int(table.loc[(table["size"] == 1) & (table["task"] == name), "threads"].max()))
        for name in matrix.instance.tasks
    ]
    heatmap = heatmap_from_instance(matrix.instance, procs=procs)
    write_heatmap(heatmap, out / "heatmap.csv")
    written.update({"instance.json", "heatmap.csv"})
    report["files"].update({"instance": "instance.json", "heatmap": "heatmap.csv"})
    if plots:
        from cosched.measurement.plots import plot_speed_by_size

        # plots by one rule: DIR/plots/ (docs/cli-conventions.md)
        (out / "plots").mkdir(exist_ok=True)
        plot_heatmap(heatmap, out / "plots" / "heatmap.png")
        plot_speed_by_size(matrix.instance, out / "plots" / "speed_by_size.png", backend)
        written.update({"plots/heatmap.png", "plots/speed_by_size.png"})
        report["files"].update(
            {"heatmap_plot": "plots/heatmap.png", "speed_by_size_plot": "plots/speed_by_size.png"}
        )


def _write_report(out: Path, report: dict, written: set[str], interrupted_by: str | None) -> None:
    """Remove the derived files this run did not write, then write report.json."""
    with signals_deferred():
        for name in DERIVED:  # a file this run did not write would describe other rows
            if name not in written:
                (out / name).unlink(missing_ok=True)
        if (out / "plots").is_dir() and not any((out / "plots").iterdir()):
            (out / "plots").rmdir()
        report["files"] = {
            label: name for label, name in report["files"].items() if name in written
        }
        report["files"].update(
            {"speeds": "speeds.csv", "samples": "samples.csv", "report": "report.json"}
        )
        report["interrupted"], report["interrupted_by"] = interrupted_by is not None, interrupted_by
        with atomic_path(out / "report.json") as tmp:
            tmp.write_text(json.dumps(report, indent=2, default=float))
