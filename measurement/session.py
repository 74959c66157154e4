"""One `cosched measure` run: harness -> incremental raw tables -> instance, heatmap, plots and report in a folder.

`speeds.csv` and `samples.csv` grow after every combination, so an interrupted run keeps what it measured and
`resume=True` skips the combinations already in `speeds.csv`; the derived files (instance.json, heatmap.csv,
report.json, plots) are rewritten whole at the end of every run, also an interrupted one.
"""
from __future__ import annotations

import json
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Sequence

import numpy as np

from cosched.errors import InputError
from cosched.outputs import atomic_path
from cosched.measurement.corun import (SPEED_COLUMNS, TaskSpec, combination_set, measure_combinations, result_samples,
                               result_table)
from cosched.measurement.counters import CounterBackend
from cosched.measurement.matrix import measured_instance
from cosched.theory.instance import save_instance
from cosched.theory.lattice import mask_of

__all__ = ["measure_to_directory", "OUTPUT_FILES"]

OUTPUT_FILES = ("instance.json", "heatmap.csv", "samples.csv", "speeds.csv", "report.json", "heatmap.png",
                "speed_by_size.png")


def _append(frame, path: Path) -> None:
    frame.to_csv(path, mode="a", header=not path.exists() or path.stat().st_size == 0, index=False)


def _previous(path: Path, tasks: Sequence[TaskSpec]):
    """Speed rows of an earlier run, re-keyed to the current task order; rows of unknown tasks are an error."""
    import pandas as pd

    try:
        table = pd.read_csv(path)
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as error:
        raise InputError(f"cannot resume: {error}", source=str(path)) from None
    missing = [column for column in SPEED_COLUMNS if column not in table.columns]
    if missing:
        raise InputError("cannot resume: missing column", source=str(path), field=missing[0])
    names = [task.name for task in tasks]
    unknown = sorted(set(table["task"].astype(str)) - set(names))
    if unknown:
        raise InputError(f"cannot resume: tasks {unknown} are not in this run ({names})", source=str(path),
                         field="task")
    table["task"] = table["task"].astype(str)
    table["combination"] = [mask_of(names.index(name) for name in str(members).split("+"))
                            for members in table["members"]]
    return table


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, timezone.utc).isoformat(timespec="seconds")


def measure_to_directory(tasks: Sequence[TaskSpec], out: str | os.PathLike, backend: CounterBackend, *,
                         combinations: str = "pairs", warmup: float = 0.5, window: float = 2.0,
                         seed: int | None = None, work: Sequence[float] | None = None, project: bool = False,
                         resume: bool = False, fallback_reason: str | None = None,
                         progress: bool = True, plots: bool = True) -> dict:
    """Measure `tasks` in the combinations named by `combinations`; returns the report also written to
    `out/report.json` (its `interrupted` says whether Ctrl-C / SIGTERM cut the run short)."""
    import pandas as pd

    from cosched.theory.heatmap import heatmap_from_instance, plot_heatmap, write_heatmap

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    speeds_path, samples_path = out / "speeds.csv", out / "samples.csv"
    names = [task.name for task in tasks]
    masks = combination_set(len(tasks), combinations, seed)
    previous = None
    if resume and speeds_path.exists():
        previous = _previous(speeds_path, tasks)
        done = previous.groupby("combination")["speed"].apply(lambda s: bool(np.isfinite(s).all()))
        masks = masks[~np.isin(masks, done.index[done.to_numpy()].to_numpy(dtype=np.int64))]
    elif not resume:
        for path in (speeds_path, samples_path):
            path.unlink(missing_ok=True)

    def keep(result):
        _append(result_table(result, tasks), speeds_path)
        _append(result_samples(result), samples_path)

    measurement = measure_combinations(tasks, masks, backend, warmup=warmup, window=window,
                                       fallback_reason=fallback_reason, on_result=keep, progress=progress)
    table = measurement.speed_table()
    if previous is not None:
        table = pd.concat([previous[list(SPEED_COLUMNS)], table], ignore_index=True)
        table = table.drop_duplicates(["combination", "task"], keep="last")
    report = {
        "backend": measurement.backend,
        "backend_note": fallback_reason,
        "tasks": [status.as_dict() for status in measurement.status],
        "start": _iso(measurement.started),
        "end": _iso(measurement.finished),
        "interrupted": measurement.interrupted,
        "combinations": combinations,
        "combinations_measured": int(table["combination"].nunique()),
        "combinations_planned": int(len(masks) + (previous["combination"].nunique() if previous is not None
                                                    else 0)),
        "warmup_seconds": warmup,
        "window_seconds": window,
        "seed": seed,
        "files": {},
    }
    try:
        matrix = measured_instance(names, table, work, project)
    except InputError as error:
        report["error"] = str(error)
        matrix = None
    if matrix is not None:
        report.update(matrix.report())
        save_instance(matrix.instance, out / "instance.json")
        procs = [max(1, int(table.loc[(table["size"] == 1) & (table["task"] == name), "threads"].max()))
                 for name in matrix.instance.tasks]
        heatmap = heatmap_from_instance(matrix.instance, procs=procs)
        write_heatmap(heatmap, out / "heatmap.csv")
        report["files"].update({"instance": "instance.json", "heatmap": "heatmap.csv"})
        if plots:
            from cosched.measurement.plots import plot_speed_by_size

            plot_heatmap(heatmap, out / "heatmap.png")
            plot_speed_by_size(matrix.instance, out / "speed_by_size.png", measurement.backend)
            report["files"].update({"heatmap_plot": "heatmap.png", "speed_by_size_plot": "speed_by_size.png"})
    report["files"].update({"speeds": "speeds.csv", "samples": "samples.csv", "report": "report.json"})
    with atomic_path(out / "report.json") as tmp:
        tmp.write_text(json.dumps(report, indent=2, default=float))
    return report
