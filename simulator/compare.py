"""Several schedulers on one workload and platform, side by side: `compare(...) -> DataFrame`
(`cosched compare`).

Every scheduler (and the baseline) runs on the same jobs; each row holds the metrics of
`cosched.simulator.metrics.summarize`, the makespan speedup against the baseline (003 (2.1),
computed by `cosched.simulator.metrics.makespan_speedup`) and the columns that identify the
comparison. With `out`, the rows go to ``compare.csv`` as each scheduler finishes and a rerun
resumes by the rerun rule of `cosched.rerun` (`claim_rows`): rows of the same comparison are reused,
rows of another one are refused unless `force`.

The identity covers every option that changes a result: the workload (its jobs after cleaning and
`limit`), the platform, `depth`, `use_run_times`, `bounded_threshold`, `limit`, the heatmap's
contents, `spread_speedup`, `default_speedup` and `placement`; the columns ``workload, platform,
depth, run_times, limit, bounded_threshold, heatmap`` name them and ``inputs`` is a digest of the
contents. The scheduler list and the baseline may change between reruns (new schedulers are added to
the file). With partitions or a priority, the columns ``partitions``, ``priority`` and ``policy`` (a
digest of every job's partition and of the weights) join the identity.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from cosched.deprecation import UNSET, renamed_keyword, warn_old_form
from cosched.errors import InputError
from cosched.simulator.metrics import BOUNDED_SLOWDOWN_THRESHOLD, makespan_speedup
from cosched.simulator.schedulers.base import DEFAULT_DEPTH

if TYPE_CHECKING:  # imported on use
    import pandas as pd

    from cosched.simulator.partitions import Assignment
    from cosched.simulator.platform import Platform
    from cosched.simulator.result import SimulationResult
    from cosched.simulator.trace_window import TraceWindow
    from cosched.simulator.workload import Workload
    from cosched.theory.heatmap import Heatmap

__all__ = [
    "compare",
    "compare_path",
    "load_inputs",
    "checked_scheduler",
    "preflight",
    "COMPARE_CSV",
    "IDENTITY",
    "CO_METRICS",
]

COMPARE_CSV = "compare.csv"
IDENTITY = (
    "workload",
    "platform",
    "depth",
    "run_times",
    "limit",
    "bounded_threshold",
    "heatmap",
    "inputs",
)
CO_METRICS = (
    "mean_job_speedup",
    "weighted_mean_job_speedup",
    "slowdown_counts",
)  # co-scheduled runs only
TEXT_COLUMNS = (
    "scheduler",
    "platform",
    "baseline",
    "workload",
    "heatmap",
    "inputs",
)  # "" is a value, not a gap


def compare_path(out: str | os.PathLike | None, *, warn: bool = True) -> Path | None:
    """Where `compare` writes for `out`: a folder gets ``compare.csv``; a path ending in ``.csv``
    that is no folder names the file itself (the older form, deprecated: a warning unless `warn` is
    false); None writes nothing."""
    if out is None:
        return None
    out = Path(out)
    if out.suffix.lower() == ".csv" and not out.is_dir():
        if warn:
            warn_old_form(
                f"--out {out.name} (a CSV file)",
                f"give a folder: compare writes {COMPARE_CSV} inside it",
            )
        return out
    return out / COMPARE_CSV


def checked_scheduler(name: str, depth: int = DEFAULT_DEPTH, options: dict | None = None):
    """The scheduler `name` with backfill `depth` and keyword `options` (a ``depth`` among them,
    a compat variant's, wins); an unknown name or a bad option is an InputError naming it."""
    from cosched.simulator.schedulers import make_scheduler

    options = dict(options or {})
    try:
        return make_scheduler(name, depth=options.pop("depth", depth), **options)
    except InputError as error:  # an unknown name, or an option out of range: name that option
        raise InputError(
            error.message, source=error.source, field=error.field or "scheduler", line=error.line
        ) from None


def preflight(
    names: Sequence[str],
    platform: Platform,
    *,
    depth: int = DEFAULT_DEPTH,
    placement: str | None = None,
    scheduler_options: dict | None = None,
) -> None:
    """Refuse early, never half-way: build every scheduler and its allocator on `platform` before
    the first simulation, so a combination that cannot run (a co-scheduler's half-socket binding on
    nodes of an odd number of cores, a bad option) is one InputError naming the scheduler and the
    platform, and nothing ran."""
    from cosched.simulator.schedulers import make_scheduler

    for name in dict.fromkeys(names):
        scheduler = checked_scheduler(name, depth)
        try:
            if scheduler_options and scheduler.co_located:
                scheduler = make_scheduler(name, depth=depth, **scheduler_options)
            scheduler.make_allocator(platform, placement=placement)
        except InputError as error:
            raise InputError(
                f"scheduler {name!r} cannot run on platform {platform.name!r}: {error.message}",
                field="--scheduler",
            ) from None


def load_inputs(
    workload: Workload | str | os.PathLike,
    platform: Platform | str | os.PathLike,
    *,
    limit: int | None = None,
    cleaning: str = "cosched",
    status: tuple[str, ...] | None = None,
    swf_memory: str | None = None,
) -> tuple[Platform, Workload]:
    """(platform, workload) from names or paths (or the objects themselves), the workload cut to
    `limit` jobs; `cleaning` and `status` are the SWF choices of `workload.read_swf`, `swf_memory`
    chooses an SWF trace's memory field ("requested" or "used")."""
    from cosched.simulator.platform import Platform, load_platform
    from cosched.simulator.workload import Workload, load_workload

    if limit is not None and limit < 1:
        raise InputError(f"must be positive, got {limit}", field="limit")
    platform = platform if isinstance(platform, Platform) else load_platform(platform)
    source = workload.source if isinstance(workload, Workload) else str(workload)
    if not isinstance(workload, Workload):
        workload = load_workload(
            os.fspath(workload),
            max_cores=platform.max_job_cores,
            cleaning=cleaning,
            status=status,
            swf_memory=swf_memory,
        )
    if limit is not None and limit < len(workload):
        workload = workload.head(limit)
    if not len(workload):
        raise InputError("no jobs left after cleaning", source=source or None)
    return platform, workload


def _heatmap(heatmap, default_speedup: float | None):
    from cosched.theory.heatmap import Heatmap, read_heatmap

    if heatmap is None:
        if default_speedup is not None:
            raise InputError("--default-speedup needs --heatmap", field="default_speedup")
        return None
    if isinstance(heatmap, Heatmap):
        return heatmap if default_speedup is None else heatmap.with_default(default_speedup)
    return read_heatmap(heatmap, default=default_speedup)


def _identity(
    workload_name: str,
    platform,
    workload,
    heatmap_name: str,
    heatmap,
    *,
    depth: int,
    use_run_times: bool,
    limit: int | None,
    bounded_threshold: float,
    spread_speedup,
    default_speedup,
    placement: str,
) -> dict:
    """The identity columns of a comparison's rows: the options by name, and a digest of every
    input's contents."""
    from cosched.rerun import digest
    from cosched.simulator.experiment import heatmap_digest

    inputs = digest(
        workload.job_id,
        workload.submit,
        workload.run,
        workload.cores,
        workload.estimate,
        workload.app,
        *(
            ()
            if workload.memory is None and workload.gpus is None
            else (workload.memory, workload.gpus)
        ),
        platform.to_dict(),
        heatmap_digest(heatmap) if heatmap is not None else None,
        spread_speedup,
        default_speedup,
        placement,
    )
    return {
        "workload": workload_name,
        "platform": platform.name,
        "depth": depth,
        "run_times": bool(use_run_times),
        "limit": limit or 0,
        "bounded_threshold": bounded_threshold,
        "heatmap": heatmap_name,
        "inputs": "sha256:" + inputs,
    }


def _trace_identity(settings, kill_at_walltime: bool, window, workload) -> dict:
    """The identity columns of the trace options, only those given (earlier rows stay valid)."""
    identity: dict = {}
    if settings is not None:
        identity["compat"] = settings.name
    if kill_at_walltime:
        identity["kill_at_walltime"] = True
    if window is not None:
        shown = window.to_dict(workload)
        identity["window"] = f"[{shown['from']}, {shown['to']}) warmup {window.warmup:g} " + (
            f"cooldown {window.cooldown:g}"
        )
    return identity


def _policy_identity(partitions: Assignment | None, scheduler_options: dict | None) -> dict:
    """The identity columns of --partitions and --priority, only those given (earlier rows stay
    valid): the partition file and priority by name, a digest of every job's partition and of the
    weights."""
    from cosched.rerun import digest

    identity: dict = {}
    if partitions is not None:
        identity["partitions"] = partitions.partitions.source
    if scheduler_options:
        identity["priority"] = scheduler_options.get("priority", "")
    if identity:
        identity["policy"] = "sha256:" + digest(
            None if partitions is None else partitions.partitions,
            None if partitions is None else partitions.partition_of,
            sorted((scheduler_options or {}).items()),
        )
    return identity


def _accepted(workload, partitions: Assignment | None, limit: int | None):
    """The jobs to compare: those the `partitions` accepted (cut to `limit` before the assignment,
    so each keeps its partition), else `workload`."""
    if partitions is None:
        return workload
    if limit is not None and limit < len(partitions.workload):
        raise InputError(
            "cut the workload to its first jobs before assigning them to partitions",
            field="limit",
        )
    return partitions.workload


def _typed(row: dict) -> dict:
    """A row read back from compare.csv with its empty cells as None (they are None when
    computed)."""
    return {
        key: None if value == "" and key not in TEXT_COLUMNS else value
        for key, value in row.items()
    }


def _columns(rows: Sequence[dict]) -> list[str]:
    """The columns of compare.csv: every key of the rows, in the order they first appear (the
    metrics of `summarize`, makespan_days, the identity; the co-scheduling metrics where the first
    co-scheduler's row has them)."""
    return list(dict.fromkeys(key for row in rows for key in row))


def _write(path: Path, rows: list[dict]) -> None:
    import pandas as pd

    from cosched.outputs import atomic_path

    with atomic_path(path) as temporary:
        pd.DataFrame(rows, columns=_columns(rows)).to_csv(temporary, index=False)


def _checked_options(
    names: list[str],
    depth: int,
    bounded_threshold: float,
    alone_speedup: float | None,
    placement: str | None,
) -> str:
    """Check `compare`'s options before anything runs; the placement, defaulted."""
    from cosched.simulator.colocation import PLACEMENTS

    if not names:
        raise InputError("no scheduler given", field="scheduler")
    if depth < 0:
        raise InputError(f"must be non-negative, got {depth}", field="depth")
    if not bounded_threshold > 0:
        raise InputError(f"must be positive, got {bounded_threshold}", field="bounded_threshold")
    if alone_speedup is not None and not alone_speedup > 0:
        raise InputError(
            f"the speedup alone must be positive, got {alone_speedup}", field="alone_speedup"
        )
    placement = placement or PLACEMENTS[0]
    if placement not in PLACEMENTS:
        raise InputError(
            f"unknown placement {placement!r}; choose from {', '.join(PLACEMENTS)}",
            field="placement",
        )
    return placement


def compare(
    workload: Workload | str | os.PathLike,
    platform: Platform | str | os.PathLike,
    schedulers: Sequence[str],
    *,
    baseline: str = "conservative",
    heatmap: Heatmap | str | os.PathLike | None = None,
    alone_speedup: float | None = None,
    default_speedup: float | None = None,
    placement: str | None = None,
    depth: int = DEFAULT_DEPTH,
    use_run_times: bool = False,
    bounded_threshold: float = BOUNDED_SLOWDOWN_THRESHOLD,
    limit: int | None = None,
    out: str | os.PathLike | None = None,
    force: bool = False,
    progress: bool = False,
    spread_speedup: float | None = UNSET,
    compat: str | None = None,
    kill_at_walltime: bool = False,
    window: TraceWindow | None = None,
    swf_memory: str | None = None,
    partitions: Assignment | None = None,
    scheduler_options: dict | None = None,
) -> pd.DataFrame:
    """Run `schedulers` and `baseline` on the same workload and platform; one row of metrics per
    scheduler.

    Args:
        workload: a `Workload`, a bundled trace name or an SWF / CSV file.
        platform: a `Platform`, a preset name or a JSON file.
        schedulers: scheduler names (`cosched.simulator.schedulers.SCHEDULERS`), in the order of
            the rows.
        baseline: the scheduler whose makespan is the reference of ``makespan_speedup`` (also run
            if not listed).
        heatmap: a `Heatmap`, a heatmap CSV or a bundled heatmap name, for the co-schedulers.
        alone_speedup: speedup of a job alone on spread nodes (default: the heatmap's
            per-application value; ``spread_speedup`` is its deprecated spelling, removed in 0.4.0).
        default_speedup: speedup of pairs measured in neither direction (needs `heatmap`).
        placement: co-location policy, ``"idle"`` (default) or ``"shared"``.
        depth: backfill depth.
        use_run_times: backfill with the true run times instead of the user estimates.
        bounded_threshold: bounded slowdown threshold [s].
        limit: simulate only the first `limit` jobs (after cleaning).
        out: a folder (rows go to ``out/compare.csv``) or a ``.csv`` file, written after each
            scheduler and resumed by a rerun of the same comparison; None writes nothing.
        force: start over in `out`, replacing rows of another comparison instead of refusing them.
        progress: show the simulator's progress bars.
        compat: run other simulators' EASY (`cosched.simulator.compat.COMPAT`; the workload is read
            with its cleaning unless given as a `Workload`).
        kill_at_walltime: kill each job when it has run its estimate.
        window: a `cosched.simulator.trace_window.TraceWindow`: metrics over its measured jobs
            only (the workload is expected cut to it already, as `TraceWindow.cut` does).
        swf_memory: an SWF trace's memory field, "requested" or "used" (read from a file only).
        partitions: a `cosched.simulator.partitions.Assignment` of the workload's jobs: every
            scheduler (queue schedulers only) runs each job on its partition's nodes, one queue
            per partition; the accepted jobs, `partitions.workload`, are simulated.
        scheduler_options: keyword options of every scheduler, e.g. ``{"priority":
            "multifactor", "priority_weights": ...}`` (`QueueScheduler`).

    Returns:
        A DataFrame with one row per scheduler of `schedulers`: the metrics of ``summarize``
        (seconds), the co-scheduling metrics when a co-scheduler ran, ``makespan_days``,
        ``baseline``, ``makespan_speedup``, ``bound`` (the lower bound of
        `cosched.simulator.bounds` on any schedule of the workload), ``makespan_over_bound`` and
        the identity columns. ``frame.attrs`` holds ``jobs``, ``platform``, ``cores``,
        ``baseline`` and ``path``.

    Raises:
        InputError: a bad option or input, or `out` holding rows of another comparison (without
            `force`).
    """
    import pandas as pd

    from cosched.rerun import claim_rows
    from cosched.simulator.bounds import bound_for
    from cosched.simulator.metrics import summarize
    from cosched.simulator.simulation import simulate

    names = list(dict.fromkeys(schedulers))
    spread_speedup = renamed_keyword(
        alone_speedup, spread_speedup, old="spread_speedup", new="alone_speedup"
    )
    from cosched.simulator.compat import compat_settings, run_options
    from cosched.simulator.trace_window import measured_result

    placement = _checked_options(names, depth, bounded_threshold, spread_speedup, placement)
    runs = list(dict.fromkeys(names + [baseline]))
    settings = compat_settings(compat, runs)
    for name in runs:
        checked_scheduler(name, depth)
    workload = _accepted(workload, partitions, limit)
    path = compare_path(out)
    heatmap_name = (
        ""
        if heatmap is None
        else str(heatmap)
        if isinstance(heatmap, (str, os.PathLike))
        else "<Heatmap>"
    )
    heatmap = _heatmap(heatmap, default_speedup)
    workload_name = (
        str(workload)
        if isinstance(workload, (str, os.PathLike))
        else getattr(workload, "source", "")
    )
    platform, workload = load_inputs(
        workload,
        platform,
        limit=limit,
        cleaning=settings.cleaning if settings else "cosched",
        swf_memory=swf_memory,
    )
    preflight(runs, platform, depth=depth, placement=placement)
    identity = _identity(
        workload_name,
        platform,
        workload,
        heatmap_name,
        heatmap,
        depth=depth,
        use_run_times=use_run_times,
        limit=limit,
        bounded_threshold=bounded_threshold,
        spread_speedup=spread_speedup,
        default_speedup=default_speedup,
        placement=placement,
    )
    identity.update(_trace_identity(settings, kill_at_walltime, window, workload))
    identity.update(_policy_identity(partitions, scheduler_options))
    variant, engine_options = run_options(settings, len(workload), kill_at_walltime)
    folder = path.parent if path is not None and out is not None and path != Path(out) else None
    done = {
        name: _typed(row)
        for name, row in claim_rows(
            path, identity, command="compare", key="scheduler", force=force, folder=folder
        ).items()
    }
    # the first co-scheduled run: its speed model is the bound's (cosched.simulator.bounds)
    co_runs: list[SimulationResult] = []
    for name in runs:
        if name in done:
            continue
        scheduler = checked_scheduler(name, depth, {**(scheduler_options or {}), **variant})
        result = simulate(
            workload,
            platform,
            scheduler,
            heatmap=heatmap,
            alone_speedup=spread_speedup,
            placement=placement,
            use_run_times=use_run_times,
            progress=progress,
            partitions=partitions,
            **engine_options,
        )
        summary = summarize(measured_result(result, window), None, bounded_threshold)
        if kill_at_walltime:
            summary["killed_at_walltime"] = result.options["killed_at_walltime"]
        if partitions is not None:
            summary["rejected_partition_limits"] = partitions.rejected
        if result.speed_model is not None and not co_runs:
            co_runs.append(result)
        done[name] = {**summary, "makespan_days": summary["simulated_days"], **identity}
        if path is not None:
            _write(path, list(done.values()))
    reference = done[baseline]["makespan"]
    bound = bound_for(
        workload, platform, heatmap, alone_speedup=spread_speedup, results=co_runs
    ).bound
    for row in done.values():
        row["baseline"] = baseline
        row["makespan_speedup"] = makespan_speedup(reference, row["makespan"])  # 003 (2.1)
        row["bound"] = bound  # of any (co-)schedule of the workload: one number for every row
        row["makespan_over_bound"] = row["makespan"] / bound if bound > 0 else None
    if path is not None:
        _write(path, list(done.values()))
    rows = [done[name] for name in names]
    frame = pd.DataFrame(rows, columns=_columns(rows))
    empty = [name for name in CO_METRICS if name in frame and frame[name].isna().all()]
    frame = frame.drop(columns=empty)
    frame.attrs.update(
        jobs=len(workload),
        platform=platform.name,
        cores=platform.total_cores,
        baseline=baseline,
        path=None if path is None else str(path),
    )
    return frame
