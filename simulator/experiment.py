"""Thesis-style experiments (003 ch. 6): schedulers x workload shuffles, resumable, local or on
dask.

One experiment = one shuffle of the same N jobs drawn from an application seed (000 §4.3: "the exact
same applications, but their order was each time shuffled"; ``workloads="shuffle"``) or a new draw
of N jobs (``"draw"``, as the thesis repeats its experiments, 003 ch. 6); every scheduler runs every
experiment. The choices the papers leave open (pairs missing from the heatmap, the speedup of a job
alone, placement, who holds the backfill reservation, Popularity's compact rule, where utilization
stops) are fields of the spec; the presets ``thesis`` and ``elise-table2`` set them to reproduce 003
Tables 6.1/6.2 (`cosched.simulator.thesis_tables`) and 000 Table 2
(`cosched.simulator.elise_table2`). The grid runs on `cosched.grid.run_grid`: one cell per
(experiment, scheduler), one row each, appended to ``grid.csv`` (its finished cells listed in
``grid.done``) as soon as the run ends, so an interrupted grid resumes where it stopped; the runs of
experiment 0 also keep their per-job start, end and speedup in ``jobs/e000_<scheduler>.csv``
(written before the row). At the end: ``runs.csv`` (one row per run, makespan speedup against the
Conservative run of the same experiment, 003 (2.1)), ``summary.csv`` and ``tables.md`` (mean values
per scheduler, Tables 6.1/6.2, with their spread over the experiments: std, min, max),
``thesis.md``/``thesis.csv`` for the thesis preset, and the plots of ``experiment_plots``. Runs go
to local worker processes by default, or to a dask.distributed cluster (``dask="local"`` or a
scheduler address ``tcp://host:port``). Reruns follow `cosched.rerun`: the same spec resumes,
another spec, foreign files or a folder of the older per-run format (``runs/*.json``) are refused
unless ``force``; Ctrl-C / SIGTERM cancel the pending runs at once (the local workers die with the
command) and keep the finished rows.
"""

from __future__ import annotations

import contextlib
import os
import warnings
import weakref
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from cosched.deprecation import UNSET, module_aliases, renamed_keyword, warn_old_form
from cosched.errors import InputError
from cosched.grid import CellResult, run_experiment
from cosched.grid import (
    ExperimentSpec as _ExperimentSpec,
)  # the old name of CoschedExperiment stays free
from cosched.names import resolve_name
from cosched.outputs import atomic_path
from cosched.registry import plugin
from cosched.rerun import digest, json_key
from cosched.simulator.data import EXAMPLE_HEATMAP, example_path
from cosched.simulator.generate import ApplicationSeed, generate_workload
from cosched.simulator.metrics import (
    METRIC_NAMES,
    UTILIZATION_SPANS,
    job_speedups,
    makespan_speedup,
    thesis_metrics,
)
from cosched.simulator.platform import Platform, load_platform
from cosched.simulator.workload import Workload, make_workload
from cosched.theory.heatmap import Heatmap, MissingPairsWarning, read_heatmap

__all__ = [
    "CoschedExperiment",
    "Preset",
    "COSCHED_PRESETS",
    "THESIS_SCHEDULERS",
    "BASELINE",
    "WORKLOAD_MODES",
    "preset_spec",
    "run_one",
    "run_experiment",
    "heatmap_digest",
    "SPREAD_STATISTICS",
    "experiment_bounds",
]

BASELINE = "conservative"  # 003 §2.3.1.1: makespan speedup against Conservative
# schedulers whose runs cost several times any other's: their cells start first
COSTLIEST = ("matching",)
THESIS_SCHEDULERS = (
    "sjf",
    "sjf-co",
    "sjf-filler",
    "filler",
    "pop-filler",
    "popularity",
    "easy",
    "easy-co",
    "conservative",
    "fcfs",
    "ljf-co",
    "laf-co",
    "ljf",  # the rows of 003 Tables 6.1/6.2
    "matching",
)  # and the optimal-pairing co-scheduler
WORKLOAD_MODES = (
    "shuffle",
    "draw",
)  # one draw shuffled per experiment (000 §4.3), or a new draw each (003 ch. 6)
SPREAD_STATISTICS = (
    "std",
    "min",
    "max",
)  # spread of each metric over the experiments, in summary.csv


@dataclass(frozen=True)
class Preset:
    """A named experiment: heatmap (bundled example file, or a `cosched.data` preset), platform,
    sizes, and the co-scheduling options it fixes (fields of `CoschedExperiment`; the command line
    may override each)."""

    heatmap: str
    platform: str
    jobs: int
    experiments: int
    options: tuple = ()  # (field, value) pairs of CoschedExperiment
    default_speedup: float | None = None
    reference: str = ""  # the paper table the results are compared with: "thesis" or "elise-table2"
    schedulers: tuple = ()  # default schedulers; () = THESIS_SCHEDULERS


COSCHED_PRESETS = {
    "example": Preset(EXAMPLE_HEATMAP, "aris", 1000, 10),
    "example-small": Preset(EXAMPLE_HEATMAP, "marconi", 200, 4),
    # 003 ch. 6: ARIS NAS heatmap, ARIS 420 x 20 cores, 10 x 1,000 jobs, batch; ELiSE's rules where
    # 003 is silent
    "thesis": Preset(
        "aris-nas",
        "aris",
        1000,
        10,
        default_speedup=1.0,
        reference="thesis",
        options=(
            ("workloads", "draw"),
            ("missing_pair", "mean"),
            ("alone_speedup", "max"),
            ("reserve", "oldest"),
        ),
    ),
    # 000 Table 2: Marconi Fig. 2 heatmap, 100 x 48 cores, 500 jobs, 4 shuffles
    # (elise_table2.run_elise_table2); ELiSE's co-scheduler pairs a job with a running one first:
    # half-full nodes first
    "elise-table2": Preset(
        "marconi-fig2",
        "marconi",
        500,
        4,
        reference="elise-table2",
        schedulers=("easy", "easy-co"),
        options=(("alone_speedup", "max"), ("placement", "shared")),
    ),
}
SPEC, GRID, GRID_DONE = "spec.json", "grid.csv", "grid.done"
KEY = ("experiment", "scheduler")
GRID_COLUMNS = (
    KEY + tuple(name for name in METRIC_NAMES if name != "makespan_speedup") + ("wall_seconds",)
)
# what --force removes; "runs" is the folder of per-run JSON files of older versions
OWNED = (
    SPEC,
    GRID,
    GRID_DONE,
    "runs",
    "runs.csv",
    "summary.csv",
    "tables.md",
    "thesis.md",
    "thesis.csv",
    "jobs",
    "plots",
)


@dataclass(frozen=True, eq=False)
class CoschedExperiment(_ExperimentSpec):
    """Everything that defines a grid of runs (saved as spec.json to guard resumption).

    The spec of `cosched experiment-sim` (`cosched.grid.ExperimentSpec`): build it with
    `preset_spec`, run it with `run_experiment`.
    """

    command = "experiment-sim"
    spec_file, grid_file = SPEC, GRID
    key, columns, owned = KEY, GRID_COLUMNS, OWNED

    heatmap: Heatmap
    platform: Platform
    jobs: int
    experiments: int
    schedulers: tuple[str, ...]
    seed: int = 0
    alone_speedup: float | str | None = None  # colocation.alone_speedup_value
    interarrival: str = "batch"
    mean_interarrival: float = 60.0
    heatmap_source: str = ""
    use_run_times: bool = True
    workloads: str = "shuffle"  # WORKLOAD_MODES
    missing_pair: str = "default"  # colocation.MISSING_PAIRS
    placement: str = "idle"  # colocation.PLACEMENTS
    reserve: str = "head"  # schedulers.coscheduling.RESERVATIONS
    compact_below: int = 3  # Popularity: rank below which a job is deployed compact (003 §5.2.5)
    utilization: str = "last-end"  # metrics.UTILIZATION_SPANS
    reference: str = ""  # paper table to compare with ("thesis", "elise-table2"), "" for none

    def to_json(self) -> dict:
        return {
            "heatmap": self.heatmap_source,
            "applications": list(self.heatmap.applications),
            "platform": self.platform.to_dict(),
            "jobs": self.jobs,
            "experiments": self.experiments,
            "schedulers": list(self.schedulers),
            "seed": self.seed,
            "spread_speedup": self.alone_speedup,
            "interarrival": self.interarrival,
            "mean_interarrival": self.mean_interarrival,
            "use_run_times": self.use_run_times,
            "heatmap_digest": heatmap_digest(self.heatmap),
            "heatmap_default": self.heatmap.default,
            **{name: getattr(self, name) for name in CO_OPTIONS},
            "reference": self.reference,
        }

    @classmethod
    def from_json(cls, document: dict) -> CoschedExperiment:
        """The spec of a spec.json: the heatmap and platform are read again (the heatmap must still
        have the stored digest). A document written before 0.3.0 lacks ``heatmap_default``: its
        heatmap is read without a default speedup."""
        from cosched.simulator.platform import Platform

        stored = {**CO_OPTIONS, "reference": "", "heatmap_default": None, **document}
        source = stored["heatmap"]
        heatmap = read_heatmap(source, default=stored["heatmap_default"])
        if heatmap_digest(heatmap) != stored["heatmap_digest"]:
            raise InputError(
                "the heatmap changed since this spec was written (its digest differs)",
                source=str(source),
                field="heatmap_digest",
            )
        return cls(
            heatmap,
            Platform(**stored["platform"]),
            stored["jobs"],
            stored["experiments"],
            tuple(stored["schedulers"]),
            stored["seed"],
            stored["spread_speedup"],
            stored["interarrival"],
            stored["mean_interarrival"],
            source,
            stored["use_run_times"],
            **{name: stored[name] for name in CO_OPTIONS},
            reference=stored["reference"],
        )

    def scheduler_options(self) -> dict:
        """The co-schedulers' options of this spec (classic schedulers ignore them)."""
        return {
            "missing_pair": self.missing_pair,
            "reserve": self.reserve,
            "compact_below": self.compact_below,
        }

    def cells(self) -> list[tuple[int, str]]:
        """(experiment, scheduler) of every run."""
        return [(e, s) for e in range(self.experiments) for s in self.schedulers]

    def run_cell(self, experiment: int, scheduler: str) -> CellResult:
        return run_cell(self, experiment, scheduler)

    def matches(self, document: dict):
        return json_key(document, _legacy(document))

    def dispatch_order(self, cells: list[tuple]) -> list[tuple]:
        """The costliest cells first (longest processing time first): the matching co-scheduler's
        (half of the thesis preset's time, about ten times another co-scheduler's run), then the
        other co-schedulers', then the classic ones, so the last cells started are the shortest and
        the workers finish together; cell order within each group."""
        from cosched.simulator.schedulers import COSCHEDULERS

        def cost_rank(cell: tuple) -> int:
            scheduler = cell[1]
            return 0 if scheduler in COSTLIEST else 1 if scheduler in COSCHEDULERS else 2

        return sorted(cells, key=cost_rank)

    def prepare(self, out: Path, resumed: bool) -> None:
        """Refuse a folder of the older per-run format; check the co-location inputs once (warn
        once)."""
        from cosched.simulator.colocation import co_context

        if resumed and (out / "runs").is_dir() and not (out / GRID).exists():
            raise InputError(
                "this folder holds experiment-sim runs in the older per-run format (runs/*.json); "
                "add --force to start over, or choose another --out",
                source=str(out),
            )
        co_context(
            experiment_workload(self, 0), self.heatmap, self.alone_speedup, self.missing_pair
        )  # fail early, warn once

    def meanwhile(self) -> None:
        """The lower bounds of every experiment (`experiment_bounds`, `finish` writes them into
        runs.csv), computed while the cells run: with the LP solver's import, most of what the
        command did after its last run. An error is left to `finish`, which computes them again and
        reports it where it always did, after every run is kept."""
        with contextlib.suppress(Exception):
            _BOUNDS[self] = experiment_bounds(self)

    def finish(self, out: Path, grid, *, plots: bool = True, workers: int = 1):
        """runs.csv, summary.csv, tables.md (and the thesis comparison, the plots, drawn by up to
        `workers` processes); returns the summary."""
        return finish(self, out, plots=plots, grid=grid, workers=workers)


# each spec's bounds, once `CoschedExperiment.meanwhile` computed them
_BOUNDS: weakref.WeakKeyDictionary[CoschedExperiment, dict[int, float]] = (
    weakref.WeakKeyDictionary()
)

# spec fields that are co-scheduling options, with their value in folders written before they
# existed
CO_OPTIONS = {
    "workloads": "shuffle",
    "missing_pair": "default",
    "placement": "idle",
    "reserve": "head",
    "compact_below": 1,
    "utilization": "last-end",
}


def heatmap_digest(heatmap: Heatmap) -> str:
    """Content hash of a heatmap (names, processes, times, default): the file's path alone is no
    identity."""
    return digest(
        heatmap.applications,
        heatmap.procs,
        heatmap.compact_times,
        heatmap.co_times,
        heatmap.spread_speedups(np.nan),
        heatmap.default,
    )


def preset_spec(
    preset: str = "example",
    *,
    heatmap: str | os.PathLike | None = None,
    platform: str | None = None,
    jobs: int | None = None,
    experiments: int | None = None,
    schedulers=None,
    seed: int = 0,
    alone_speedup: float | str | None = None,
    interarrival: str = "batch",
    mean_interarrival: float = 60.0,
    default_speedup: float | None = None,
    spread_speedup: float | str | None = UNSET,
    **options,
) -> CoschedExperiment:
    """A spec from a preset with overrides (a heatmap file, a platform preset or JSON file, sizes,
    schedulers).

    alone_speedup: the speedup of a job alone on spread nodes (`cosched.simulator.colocation`; the
    deprecated keyword ``spread_speedup`` still works until 0.4.0).
    options: the co-scheduling fields of `CoschedExperiment` (workloads, missing_pair, placement,
    reserve, compact_below, utilization); None, like every other override, keeps the preset's value.
    """
    from cosched.data import HEATMAPS
    from cosched.simulator.colocation import MISSING_PAIRS, PLACEMENTS, alone_speedup_value
    from cosched.simulator.schedulers import SCHEDULERS
    from cosched.simulator.schedulers.coscheduling import RESERVATIONS

    alone_speedup = renamed_keyword(
        alone_speedup, spread_speedup, old="spread_speedup", new="alone_speedup"
    )
    preset = resolve_name(preset, COSCHED_PRESETS, "preset", field="preset")
    chosen = COSCHED_PRESETS[preset]
    unknown_options = sorted(set(options) - set(CO_OPTIONS))
    if unknown_options:
        raise TypeError(f"unknown option(s) {unknown_options}")
    fixed = dict(chosen.options)
    settings = {
        name: fixed.get(name, CoschedExperiment.__dataclass_fields__[name].default)
        for name in CO_OPTIONS
    }
    settings.update({name: value for name, value in options.items() if value is not None})
    for name, known in (
        ("workloads", WORKLOAD_MODES),
        ("missing_pair", MISSING_PAIRS),
        ("placement", PLACEMENTS),
        ("reserve", RESERVATIONS),
        ("utilization", UTILIZATION_SPANS),
    ):
        if settings[name] not in known:
            raise InputError(
                f"unknown {name} {settings[name]!r}; choose from {', '.join(known)}", field=name
            )
    alone_speedup = alone_speedup_value(
        fixed.get("alone_speedup") if alone_speedup is None else alone_speedup
    )
    if heatmap is not None:
        path = heatmap
    else:
        path = chosen.heatmap if chosen.heatmap in HEATMAPS else example_path(chosen.heatmap)
    loaded = read_heatmap(
        path, default=chosen.default_speedup if default_speedup is None else default_speedup
    )
    names = tuple(schedulers) if schedulers else (chosen.schedulers or THESIS_SCHEDULERS)
    unknown = [
        name for name in names if name not in SCHEDULERS and plugin(name, "scheduler") is None
    ]
    if unknown:
        raise InputError(
            f"unknown scheduler(s) {unknown}; known: {', '.join(SCHEDULERS)}", field="schedulers"
        )
    if BASELINE not in names:
        names = names + (BASELINE,)  # needed for the makespan speedup
    jobs = chosen.jobs if jobs is None else jobs
    experiments = chosen.experiments if experiments is None else experiments
    from cosched.inputs import (
        MAX_JOBS,
        MAX_RUNS,
        check_number,
    )  # size arguments: the limits of every generator

    jobs = check_number(jobs, field="jobs", integer=True, minimum=1, limit=MAX_JOBS)
    experiments = check_number(
        experiments, field="experiments", integer=True, minimum=1, limit=MAX_RUNS
    )
    check_number(experiments * len(names), field="experiments", limit=MAX_RUNS)
    seed = check_number(seed, field="seed", integer=True, minimum=0)
    settings["compact_below"] = check_number(
        settings["compact_below"], field="compact_below", integer=True, minimum=0
    )
    spec = CoschedExperiment(
        loaded,
        load_platform(platform or chosen.platform),
        jobs,
        experiments,
        names,
        seed,
        alone_speedup,
        interarrival,
        mean_interarrival,
        str(path),
        reference=chosen.reference,
        **settings,
    )
    too_big = int(loaded.procs.max())
    if too_big > spec.platform.total_cores:
        raise InputError(
            f"an application needs {too_big} cores, the platform has {spec.platform.total_cores}",
            source=str(path),
            field="procs_A",
        )
    return spec


def experiment_workload(spec: CoschedExperiment, experiment: int) -> Workload:
    """This experiment's N jobs: the spec's one draw from the seed in a shuffled order, or a draw of
    its own."""
    seed = ApplicationSeed.from_heatmap(spec.heatmap)
    if spec.workloads == "draw":  # 003 ch. 6: each experiment a new random workload
        own = int(np.random.SeedSequence([spec.seed, experiment]).generate_state(1)[0])
        drawn = generate_workload(
            seed,
            spec.jobs,
            interarrival=spec.interarrival,
            mean=spec.mean_interarrival,
            rng_seed=own,
        )
        return make_workload(
            np.arange(spec.jobs),
            drawn.submit,
            drawn.run,
            drawn.cores,
            drawn.estimate,
            drawn.app,
            source=f"experiment {experiment}",
        )
    base = generate_workload(
        seed,
        spec.jobs,
        interarrival=spec.interarrival,
        mean=spec.mean_interarrival,
        rng_seed=spec.seed,
    )
    order = np.random.default_rng([spec.seed, experiment]).permutation(spec.jobs)
    assert base.app is not None  # a generated workload names every job's application
    return make_workload(
        np.arange(spec.jobs),
        base.submit,
        base.run[order],
        base.cores[order],
        base.estimate[order],
        base.app[order],
        source=f"experiment {experiment}",
    )


def run_one(
    spec: CoschedExperiment, experiment: int, scheduler: str, keep_jobs: bool = False
) -> dict:
    """Simulate one (experiment, scheduler); return its metrics row (and per-job times if asked)."""
    from cosched.simulator.simulation import simulate

    workload = experiment_workload(spec, experiment)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingPairsWarning)  # reported once by run_experiment
        result = simulate(
            workload,
            spec.platform,
            scheduler,
            heatmap=spec.heatmap,
            alone_speedup=spec.alone_speedup,
            placement=spec.placement,
            scheduler_options=spec.scheduler_options(),
            use_run_times=spec.use_run_times,
        )
    row = {
        "experiment": experiment,
        "scheduler": scheduler,
        **thesis_metrics(result, utilization_until=spec.utilization),
        "wall_seconds": result.wall_seconds,
    }
    if keep_jobs:
        assert workload.app is not None  # a generated workload names every job's application
        row["jobs"] = {
            "start": result.start.tolist(),
            "end": result.end.tolist(),
            "speedup": job_speedups(result).tolist(),
            "app": [str(a) for a in workload.app],
        }
    return row


def run_cell(spec: CoschedExperiment, experiment: int, scheduler: str) -> CellResult:
    """One grid cell: the row of `run_one` (without the makespan speedup, computed at the end) and,
    for experiment 0, the side file ``jobs/e000_<scheduler>.csv`` of per-job start, end, speedup and
    application."""
    import pandas as pd

    row = run_one(spec, experiment, scheduler, keep_jobs=experiment == 0)
    jobs = row.pop("jobs", None)
    row.pop("makespan_speedup", None)
    files = (
        {}
        if jobs is None
        else {_jobs_file(experiment, scheduler): pd.DataFrame(jobs).to_csv(index=False)}
    )
    return CellResult([row], files)


def _jobs_file(experiment: int, scheduler: str) -> str:
    return f"jobs/e{experiment:03d}_{scheduler}.csv"


def _legacy(document: dict):
    """Normalise a spec.json of an older version: no heatmap digest (trust the path), no
    co-scheduling options (they ran with the values of CO_OPTIONS), no reference."""

    def normalise(stored: dict) -> dict:
        if any(name not in stored for name in (*CO_OPTIONS, "reference", "heatmap_digest")):
            warn_old_form(
                "resuming a folder of experiment-sim before 0.2.0 (its spec.json lacks fields)",
                "start over with --force",
            )
        return {
            **CO_OPTIONS,
            "reference": "",
            "heatmap_default": document["heatmap_default"],
            **stored,
            "heatmap_digest": stored.get("heatmap_digest", document["heatmap_digest"]),
        }

    return normalise


__getattr__ = module_aliases(
    __name__,
    {
        "ExperimentSpec": "CoschedExperiment",
        "PRESETS": "COSCHED_PRESETS",
        "WORKLOADS": "WORKLOAD_MODES",
    },
    globals(),
)  # the names before 0.3.0


def summarize(runs):
    """Mean of each metric per scheduler (003 Tables 6.1/6.2), thesis row order first, then the
    spread of each metric over the experiments: columns ``<metric>_std`` (sample std, 0 for one
    experiment), ``_min``, ``_max``."""
    columns = [name for name in METRIC_NAMES if name != "makespan"] + [
        name for name in ("makespan_over_bound",) if name in runs
    ]
    percent = runs.assign(slowdown_counts=runs["slowdown_counts"] * 100)  # percent, as in Table 6.1
    grouped = percent.groupby("scheduler")[columns]
    summary = grouped.mean()
    spread = {statistic: getattr(grouped, statistic)() for statistic in SPREAD_STATISTICS}
    spread["std"] = spread["std"].fillna(0.0)
    for column in columns:
        for statistic in SPREAD_STATISTICS:
            summary[f"{column}_{statistic}"] = spread[statistic][column]
    order = [s for s in THESIS_SCHEDULERS if s in summary.index] + sorted(
        s for s in summary.index if s not in THESIS_SCHEDULERS
    )
    summary = summary.loc[order]
    return summary.rename(
        columns=lambda name: name.replace("slowdown_counts", "slowdown_counts_pct")
    )


def markdown_table(summary) -> str:
    """Tables 6.1 and 6.2 as Markdown, each cell mean ± std over the experiments."""
    part1 = [
        ("mean slowdown", "mean_slowdown", "{:.1f}"),
        ("mean slowdown pp", "mean_slowdown_pp", "{:.3f}"),
        ("slowdown (%)", "slowdown_counts_pct", "{:.2f}"),
        ("utilization", "utilization", "{:.3f}"),
    ]
    part2 = [
        ("mean job speedup", "mean_job_speedup", "{:.3f}"),
        ("weighted mean job speedup", "weighted_mean_job_speedup", "{:.3f}"),
        ("makespan speedup", "makespan_speedup", "{:.3f}"),
    ]
    part2 += (
        [("makespan / bound", "makespan_over_bound", "{:.3f}")]
        if "makespan_over_bound" in summary
        else []
    )
    lines = []
    for title, part in (("part 1", part1), ("part 2", part2)):
        lines.append(f"| scheduler ({title}) | " + " | ".join(label for label, _, _ in part) + " |")
        lines.append("|---" * (len(part) + 1) + "|")
        for scheduler, row in summary.iterrows():
            lines.append(
                f"| {scheduler} | "
                + " | ".join(_cell(row, key, fmt) for _, key, fmt in part)
                + " |"
            )
        lines.append("")
    return "\n".join(lines)


def _cell(row, key: str, fmt: str) -> str:
    """Mean ± std over the experiments (the mean alone where the summary has no spread)."""
    text = fmt.format(row[key])
    std = row.get(f"{key}_std")
    return text if std is None else f"{text} ± {fmt.format(std)}"


def experiment_bounds(spec: CoschedExperiment) -> dict[int, float]:
    """Per experiment, the lower bound on the makespan of any (co-)schedule of its workload under
    the spec's co-location model (`cosched.simulator.bounds`): the same number for every scheduler's
    run."""
    from cosched.simulator.bounds import bound_for

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingPairsWarning)  # reported once by run_experiment
        return {
            e: bound_for(
                experiment_workload(spec, e),
                spec.platform,
                spec.heatmap,
                scheduler_options=spec.scheduler_options(),
                alone_speedup=spec.alone_speedup,
            ).bound
            for e in range(spec.experiments)
        }


def finish(spec: CoschedExperiment, out: Path, plots: bool = True, grid=None, workers: int = 1):
    """From the grid's rows (read from grid.csv if not given): runs.csv / summary.csv / tables.md
    and the plots (drawn by up to `workers` processes); returns the summary."""
    import pandas as pd

    from cosched.grid import read_rows

    out = Path(out)
    cells = [(e, s) for e in range(spec.experiments) for s in spec.schedulers]
    runs = read_rows(out / GRID, GRID_COLUMNS, KEY, cells) if grid is None else grid.copy()
    baseline = runs[runs["scheduler"] == BASELINE].set_index("experiment")["makespan"]
    runs.insert(
        runs.columns.get_loc("makespan") + 1,
        "makespan_speedup",
        makespan_speedup(runs["experiment"].map(baseline), runs["makespan"]),
    )  # 003 (2.1)
    computed = _BOUNDS.pop(spec, None)
    bounds = runs["experiment"].map(experiment_bounds(spec) if computed is None else computed)
    runs.insert(runs.columns.get_loc("makespan_speedup") + 1, "bound", bounds)
    runs.insert(runs.columns.get_loc("bound") + 1, "makespan_over_bound", runs["makespan"] / bounds)
    summary = summarize(runs)
    with atomic_path(out / "runs.csv") as tmp:
        runs.to_csv(tmp, index=False)
    with atomic_path(out / "summary.csv") as tmp:
        summary.to_csv(tmp)
    table = markdown_table(summary)
    with atomic_path(out / "tables.md") as tmp:
        tmp.write_text(table)
    if spec.reference == "thesis":
        from cosched.simulator.thesis_tables import write_thesis_comparison

        write_thesis_comparison(summary, out)
    if plots:
        from cosched.simulator.experiment_plots import draw_all

        jobs = {
            s: pd.read_csv(out / _jobs_file(0, s))
            for s in spec.schedulers
            if (out / _jobs_file(0, s)).exists()
        }
        draw_all(runs, jobs, out / "plots", workers=workers)
    return summary
