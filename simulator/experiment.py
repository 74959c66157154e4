"""Thesis-style experiments (003 ch. 6): schedulers x workload shuffles, resumable, local or on dask.

One experiment = one shuffle of the same N jobs drawn from an application seed (000 §4.3: "the exact same
applications, but their order was each time shuffled"); every scheduler runs every experiment. The grid runs
on `cosched.grid.run_grid`: one cell per (experiment, scheduler), one row each, appended to ``grid.csv`` (its
finished cells listed in ``grid.done``) as soon as the run ends, so an interrupted grid resumes where it stopped;
the runs of experiment 0 also keep their per-job start, end and speedup in ``jobs/e000_<scheduler>.csv``
(written before the row). At the end: ``runs.csv`` (one row per run, makespan speedup against the Conservative
run of the same experiment, 003 (2.1)), ``summary.csv`` and ``tables.md`` (mean values per scheduler, Tables
6.1/6.2) and the plots of ``experiment_plots``. Runs go to local worker processes by default, or to a
dask.distributed cluster (``dask="local"`` or a scheduler address ``tcp://host:port``). Reruns follow
`cosched.rerun`: the same spec resumes, another spec, foreign files or a folder of the older per-run format
(``runs/*.json``) are refused unless ``force``; Ctrl-C / SIGTERM cancel the pending runs at once (the local
workers die with the command) and keep the finished rows.
"""
from __future__ import annotations

import json
import os
import shutil
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from cosched.errors import InputError
from cosched.grid import CellResult, any_finished, run_grid
from cosched.outputs import atomic_path
from cosched.rerun import claim_output, digest, json_key
from cosched.simulator.metrics import METRIC_NAMES, job_speedups, makespan_speedup, thesis_metrics
from cosched.simulator.data import EXAMPLE_HEATMAP, data_path
from cosched.simulator.generate import ApplicationSeed, generate_workload
from cosched.theory.heatmap import Heatmap, MissingPairsWarning, read_heatmap
from cosched.simulator.platform import Platform, load_platform
from cosched.simulator.workload import Workload, make_workload

__all__ = [
    "ExperimentSpec", "PRESETS", "THESIS_SCHEDULERS", "BASELINE", "preset_spec", "experiment_workload", "run_one",
    "run_cell", "run_experiment", "finish", "summarize", "markdown_table", "heatmap_digest", "GRID_COLUMNS",
]

BASELINE = "conservative"  # 003 §2.3.1.1: makespan speedup against Conservative
THESIS_SCHEDULERS = ("sjf", "sjf-co", "sjf-filler", "filler", "pop-filler", "popularity", "easy", "easy-co",
                     "conservative", "fcfs", "ljf-co", "laf-co", "ljf")  # the rows of 003 Tables 6.1/6.2
PRESETS = {  # name -> (bundled heatmap file, platform preset, jobs, experiments)
    "example": (EXAMPLE_HEATMAP, "aris", 1000, 10),
    "example-small": (EXAMPLE_HEATMAP, "marconi", 200, 4),
}
SPEC, GRID, GRID_DONE = "spec.json", "grid.csv", "grid.done"
KEY = ("experiment", "scheduler")
GRID_COLUMNS = KEY + tuple(name for name in METRIC_NAMES if name != "makespan_speedup") + ("wall_seconds",)
# what --force removes; "runs" is the folder of per-run JSON files of older versions
OWNED = (SPEC, GRID, GRID_DONE, "runs", "runs.csv", "summary.csv", "tables.md", "jobs", "plots")


@dataclass(frozen=True, eq=False)
class ExperimentSpec:
    """Everything that defines a grid of runs (saved as spec.json to guard resumption)."""

    heatmap: Heatmap
    platform: Platform
    jobs: int
    experiments: int
    schedulers: tuple[str, ...]
    seed: int = 0
    spread_speedup: float | None = None
    interarrival: str = "batch"
    mean_interarrival: float = 60.0
    heatmap_source: str = ""
    use_run_times: bool = True

    def to_json(self) -> dict:
        return {"heatmap": self.heatmap_source, "applications": list(self.heatmap.applications),
                "platform": self.platform.to_dict(), "jobs": self.jobs, "experiments": self.experiments,
                "schedulers": list(self.schedulers), "seed": self.seed, "spread_speedup": self.spread_speedup,
                "interarrival": self.interarrival, "mean_interarrival": self.mean_interarrival,
                "use_run_times": self.use_run_times, "heatmap_digest": heatmap_digest(self.heatmap)}


def heatmap_digest(heatmap: Heatmap) -> str:
    """Content hash of a heatmap (names, processes, times, default): the file's path alone is no identity."""
    return digest(heatmap.applications, heatmap.procs, heatmap.compact_times, heatmap.co_times,
                  heatmap.spread_speedups(np.nan), heatmap.default)


def preset_spec(preset: str = "example", *, heatmap: str | os.PathLike | None = None, platform: str | None = None,
                jobs: int | None = None, experiments: int | None = None, schedulers=None, seed: int = 0,
                spread_speedup: float | None = None, interarrival: str = "batch",
                mean_interarrival: float = 60.0, default_speedup: float | None = None) -> ExperimentSpec:
    """A spec from a preset with overrides (a heatmap file, a platform preset or JSON file, sizes, schedulers)."""
    from cosched.simulator.schedulers import SCHEDULERS

    if preset not in PRESETS:
        raise InputError(f"unknown preset {preset!r}; known: {', '.join(PRESETS)}", field="preset")
    bundled, platform_name, preset_jobs, preset_experiments = PRESETS[preset]
    path = Path(heatmap) if heatmap is not None else data_path(bundled)
    loaded = read_heatmap(path, default=default_speedup)
    names = tuple(schedulers) if schedulers else THESIS_SCHEDULERS
    unknown = [name for name in names if name not in SCHEDULERS]
    if unknown:
        raise InputError(f"unknown scheduler(s) {unknown}; known: {', '.join(SCHEDULERS)}", field="schedulers")
    if BASELINE not in names:
        names = names + (BASELINE,)  # needed for the makespan speedup
    jobs = preset_jobs if jobs is None else jobs
    experiments = preset_experiments if experiments is None else experiments
    from cosched.inputs import MAX_JOBS, MAX_RUNS, check_number  # size arguments: the limits of every generator
    jobs = check_number(jobs, field="jobs", integer=True, minimum=1, limit=MAX_JOBS)
    experiments = check_number(experiments, field="experiments", integer=True, minimum=1, limit=MAX_RUNS)
    check_number(experiments * len(names), field="experiments", limit=MAX_RUNS)
    seed = check_number(seed, field="seed", integer=True, minimum=0)
    spec = ExperimentSpec(loaded, load_platform(platform or platform_name), jobs, experiments, names, seed,
                          spread_speedup, interarrival, mean_interarrival, str(path))
    too_big = int(loaded.procs.max())
    if too_big > spec.platform.total_cores:
        raise InputError(f"an application needs {too_big} cores, the platform has {spec.platform.total_cores}",
                         source=str(path), field="procs_A")
    return spec


def experiment_workload(spec: ExperimentSpec, experiment: int) -> Workload:
    """The spec's N jobs (drawn once from the seed) in the shuffled order of this experiment."""
    base = generate_workload(ApplicationSeed.from_heatmap(spec.heatmap), spec.jobs, interarrival=spec.interarrival,
                             mean=spec.mean_interarrival, rng_seed=spec.seed)
    order = np.random.default_rng([spec.seed, experiment]).permutation(spec.jobs)
    return make_workload(np.arange(spec.jobs), base.submit, base.run[order], base.cores[order],
                         base.estimate[order], base.app[order], source=f"experiment {experiment}")


def run_one(spec: ExperimentSpec, experiment: int, scheduler: str, keep_jobs: bool = False) -> dict:
    """Simulate one (experiment, scheduler); return its metrics row (and per-job times if asked)."""
    from cosched.simulator.engine import simulate

    workload = experiment_workload(spec, experiment)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingPairsWarning)  # reported once by run_experiment
        result = simulate(workload, spec.platform, scheduler, heatmap=spec.heatmap,
                              spread_speedup=spec.spread_speedup, use_run_times=spec.use_run_times)
    row = {"experiment": experiment, "scheduler": scheduler, **thesis_metrics(result),
           "wall_seconds": result.wall_seconds}
    if keep_jobs:
        row["jobs"] = {"start": result.start.tolist(), "end": result.end.tolist(),
                       "speedup": job_speedups(result).tolist(), "app": [str(a) for a in workload.app]}
    return row


def run_cell(spec: ExperimentSpec, experiment: int, scheduler: str) -> CellResult:
    """One grid cell: the row of `run_one` (without the makespan speedup, computed at the end) and, for
    experiment 0, the side file ``jobs/e000_<scheduler>.csv`` of per-job start, end, speedup and application."""
    import pandas as pd

    row = run_one(spec, experiment, scheduler, keep_jobs=experiment == 0)
    jobs = row.pop("jobs", None)
    row.pop("makespan_speedup", None)
    files = {} if jobs is None else {_jobs_file(experiment, scheduler): pd.DataFrame(jobs).to_csv(index=False)}
    return CellResult([row], files)


def _jobs_file(experiment: int, scheduler: str) -> str:
    return f"jobs/e{experiment:03d}_{scheduler}.csv"


def _check_spec(spec: ExperimentSpec, out: Path, force: bool = False) -> bool:
    """The rerun rule (`cosched.rerun`): True to resume a folder of the same spec; else write spec.json first."""
    document = spec.to_json()

    def legacy(stored: dict) -> dict:  # spec.json of older versions has no heatmap digest: trust the path
        return {**stored, "heatmap_digest": stored.get("heatmap_digest", document["heatmap_digest"])}

    if claim_output(out, command="experiment-sim", key_file=SPEC, owned=OWNED, matches=json_key(document, legacy),
                    force=force):
        if (out / "runs").is_dir() and not (out / GRID).exists():
            raise InputError("this folder holds experiment-sim runs in the older per-run format (runs/*.json); "
                             "add --force to start over, or choose another --out", source=str(out))
        return True
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise InputError(f"cannot create the output folder: {error.strerror}", source=str(out)) from None
    with atomic_path(out / SPEC) as tmp:
        tmp.write_text(json.dumps(document, indent=1))
    return False


def run_experiment(spec: ExperimentSpec, out: str | os.PathLike, *, workers: int | None = None,
                   dask=None, progress: bool = True, plots: bool = True, force: bool = False):
    """Run the missing (experiment, scheduler) pairs, then write runs.csv, summary.csv, tables.md, plots.

    workers: local processes (default: all cores; 1 runs in this process). dask: "local" for a LocalCluster,
    a scheduler address "tcp://host:port", or a `distributed.Client` (`cosched.grid.run_grid`).
    """
    from cosched.simulator.colocation import co_context

    out = Path(out)
    created = not out.exists()
    try:
        _check_spec(spec, out, force)
        co_context(experiment_workload(spec, 0), spec.heatmap, spec.spread_speedup)  # fail early, warn once
        cells = [(e, s) for e in range(spec.experiments) for s in spec.schedulers]
        grid = run_grid(run_cell, cells, path=out / GRID, columns=GRID_COLUMNS, key=KEY, shared=(spec,),
                        workers=workers, dask=dask, progress=progress, desc="experiment-sim", unit="run")
    except BaseException:
        if created and not any_finished(out / GRID):  # nothing to resume: leave no folder behind
            shutil.rmtree(out, ignore_errors=True)
        raise
    return finish(spec, out, plots=plots, grid=grid)


def summarize(runs):
    """Mean of each metric per scheduler (003 Tables 6.1/6.2), thesis row order first."""
    columns = [name for name in METRIC_NAMES if name != "makespan"]
    summary = runs.groupby("scheduler")[columns].mean()
    order = [s for s in THESIS_SCHEDULERS if s in summary.index] + \
        sorted(s for s in summary.index if s not in THESIS_SCHEDULERS)
    summary = summary.loc[order]
    summary["slowdown_counts"] *= 100  # percent, as in Table 6.1
    return summary.rename(columns={"slowdown_counts": "slowdown_counts_pct"})


def markdown_table(summary) -> str:
    """Tables 6.1 and 6.2 as Markdown."""
    part1 = [("mean slowdown", "mean_slowdown", "{:.1f}"), ("mean slowdown pp", "mean_slowdown_pp", "{:.3f}"),
             ("slowdown (%)", "slowdown_counts_pct", "{:.2f}"), ("utilization", "utilization", "{:.3f}")]
    part2 = [("mean job speedup", "mean_job_speedup", "{:.3f}"),
             ("weighted mean job speedup", "weighted_mean_job_speedup", "{:.3f}"),
             ("makespan speedup", "makespan_speedup", "{:.3f}")]
    lines = []
    for title, part in (("part 1", part1), ("part 2", part2)):
        lines.append(f"| scheduler ({title}) | " + " | ".join(label for label, _, _ in part) + " |")
        lines.append("|---" * (len(part) + 1) + "|")
        for scheduler, row in summary.iterrows():
            lines.append(f"| {scheduler} | " + " | ".join(fmt.format(row[key]) for _, key, fmt in part) + " |")
        lines.append("")
    return "\n".join(lines)


def finish(spec: ExperimentSpec, out: Path, plots: bool = True, grid=None):
    """From the grid's rows (read from grid.csv if not given): runs.csv / summary.csv / tables.md and the plots;
    returns the summary."""
    import pandas as pd

    from cosched.grid import read_rows

    out = Path(out)
    cells = [(e, s) for e in range(spec.experiments) for s in spec.schedulers]
    runs = read_rows(out / GRID, GRID_COLUMNS, KEY, cells) if grid is None else grid.copy()
    baseline = runs[runs["scheduler"] == BASELINE].set_index("experiment")["makespan"]
    runs.insert(runs.columns.get_loc("makespan") + 1, "makespan_speedup",
                makespan_speedup(runs["experiment"].map(baseline), runs["makespan"]))  # 003 (2.1)
    summary = summarize(runs)
    with atomic_path(out / "runs.csv") as tmp:
        runs.to_csv(tmp, index=False)
    with atomic_path(out / "summary.csv") as tmp:
        summary.to_csv(tmp)
    table = markdown_table(summary)
    with atomic_path(out / "tables.md") as tmp:
        tmp.write_text(table)
    jobs = {s: pd.read_csv(out / _jobs_file(0, s)) for s in spec.schedulers if (out / _jobs_file(0, s)).exists()}
    if plots:
        from cosched.simulator.experiment_plots import draw_all
        draw_all(runs, jobs, out / "plots")
    return summary
