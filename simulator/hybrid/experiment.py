"""The hybrid experiment grid (004 §V): the seven configurations x N seeded typings of one trace,
resumable.

004 averages 10 random typings of each trace (Fig. 6 caption). One cell = (sweep, value, typing,
mechanism): the main grid is sweep ``main`` (value ``w5`` or the chosen notice mix); the notice-mix
sweep (004 Figs. 6-7, Table II) runs W1-W5; the checkpoint sweep (004 Fig. 8) scales Daly's interval
by 25-200 % for an MTBF of 5 h and 50 h (value ``MTBF:FACTOR``). With ``mtbf`` set, every run
injects node failures (004 §V-C) at that MTBF, and each checkpoint-sweep point at its own MTBF, so
the sweep compares 5 h with 50 h as Fig. 8 does. Cells run on `cosched.grid.run_grid` (local
processes or Dask) into ``grid.csv``; at the end ``runs.csv``, ``summary.csv`` (mean and standard
deviation per configuration), ``table.md`` (004 Table III style, mean ± std) and the plots of
`cosched.simulator.hybrid.plots`.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from cosched.deprecation import module_aliases, warn_renamed
from cosched.errors import InputError
from cosched.grid import ExperimentSpec, run_experiment
from cosched.outputs import atomic_path
from cosched.rerun import digest
from cosched.simulator.hybrid.failures import DOWN_HOURS
from cosched.simulator.hybrid.mechanisms import MECHANISMS, REGROW, RIGID_OVERHEADS, WARNING
from cosched.simulator.hybrid.models import CHECKPOINT_MTBF_HOURS, CHECKPOINT_WRITES
from cosched.simulator.hybrid.run import hybrid_metrics, simulate_hybrid
from cosched.simulator.hybrid.workload import (
    DEFAULT_FRACTIONS,
    MALLEABLE_SETUP,
    MIN_FRACTION,
    NOTICE_MIXES,
    RIGID_SETUP,
    build_hybrid,
    notice_mix,
)

if TYPE_CHECKING:
    import pandas as pd

    from cosched.simulator.platform import Platform
    from cosched.simulator.workload import Workload

__all__ = [
    "HybridExperiment",
    "run_experiment",
    "summarize_runs",
    "METRICS",
    "SWEEPS",
    "CHECKPOINT_FACTORS",
    "CHECKPOINT_MTBFS",
    "MECHANISM_DEFAULTS",
]

SWEEPS = ("notice", "checkpoint")
CHECKPOINT_FACTORS = (0.25, 0.5, 1.0, 2.0)  # 004 Fig. 8: interval relative to Daly's optimum
CHECKPOINT_MTBFS = (5.0, 50.0)  # 004 §V-C: hours
METRICS = (
    "instant_start_ratio",
    "turnaround_hours",
    "turnaround_on_demand",
    "turnaround_rigid",
    "turnaround_malleable",
    "preemption_ratio_rigid",
    "preemption_ratio_malleable",
    "utilization_useful",
    "lost_node_hours",
    "decision_ms_max",
    "failures",
    "failure_lost_node_hours",
    "instant_start_ratio_strict",
)
KEY = ("sweep", "value", "typing", "mechanism")
GRID_COLUMNS = KEY + METRICS + ("wall_seconds",)
SPEC, GRID = "spec.json", "grid.csv"
# the readings of the paper's definitions every run uses (docs/hybrid.md), as `simulate --hybrid`
# has them; the defaults are the paper's. spec.json names one only when it differs from its
# default, so the spec of a grid written before they were options reads back the same.
MECHANISM_DEFAULTS = {
    "warning": WARNING,
    "rigid_overhead": RIGID_OVERHEADS[0],
    "regrow": REGROW[0],
    "checkpoint_writes": CHECKPOINT_WRITES[0],
}
OWNED = (SPEC, GRID, "grid.done", "runs.csv", "summary.csv", "table.md", "plots")


@dataclass(frozen=True, eq=False)
class HybridExperiment(ExperimentSpec):
    """Everything that defines a hybrid grid: the trace (cleaned jobs and projects), platform and
    options.

    The spec of `cosched experiment-hybrid` (`cosched.grid.ExperimentSpec`): run it with
    `run_experiment`.
    """

    command = "experiment-hybrid"
    spec_file, grid_file = SPEC, GRID
    key, columns, owned = KEY, GRID_COLUMNS, OWNED

    workload: Workload
    projects: np.ndarray
    platform: Platform
    typings: int = 10
    mechanisms: tuple[str, ...] = MECHANISMS
    sweeps: tuple[str, ...] = ()
    sweep_typings: int | None = None
    seed: int = 0
    scheduler: str = "easy"
    fractions: tuple[float, float, float] = DEFAULT_FRACTIONS
    notice: str = "w5"
    rigid_setup: tuple[float, float] = RIGID_SETUP
    malleable_setup: tuple[float, float] = MALLEABLE_SETUP
    min_fraction: float = MIN_FRACTION
    checkpoint_mtbf: float = CHECKPOINT_MTBF_HOURS
    source: str = ""
    mtbf: float | None = None  # node failures: system MTBF in hours; None: no failures
    down_hours: float = DOWN_HOURS
    warning: float = WARNING  # seconds between a malleable job's warning and its shrink or stop
    rigid_overhead: str = RIGID_OVERHEADS[0]  # a rigid job's preemption cost without checkpoints
    regrow: str = REGROW[0]  # how far a shrunk job grows back when its on-demand job ends
    checkpoint_writes: str = CHECKPOINT_WRITES[0]  # on top of the trace run time or inside it

    def __post_init__(self) -> None:
        """InputError for an unknown reading, before any cell runs (the baseline's runs never read
        them, so a typing of only the baseline would not notice)."""
        if not (math.isfinite(self.warning) and self.warning >= 0):
            raise InputError(
                f"the preemption warning must be >= 0 seconds, got {self.warning}", field="warning"
            )
        for field, value, known in (
            ("rigid_overhead", self.rigid_overhead, RIGID_OVERHEADS),
            ("regrow", self.regrow, REGROW),
            ("checkpoint_writes", self.checkpoint_writes, CHECKPOINT_WRITES),
        ):
            if value not in known:
                raise InputError(
                    f"unknown {field} {value!r}; known: {', '.join(known)}", field=field
                )

    def mechanism_options(self) -> dict:
        """The keywords of `simulate_hybrid` that choose the readings (warning, rigid_overhead,
        regrow, checkpoint_writes)."""
        return {name: getattr(self, name) for name in MECHANISM_DEFAULTS}

    def to_json(self) -> dict:
        w = self.workload
        return {
            "workload": self.source,
            "jobs": len(w),
            "platform": self.platform.to_dict(),
            "typings": self.typings,
            "mechanisms": list(self.mechanisms),
            "sweeps": list(self.sweeps),
            "sweep_typings": self.sweep_typings,
            "seed": self.seed,
            "scheduler": self.scheduler,
            "fractions": list(self.fractions),
            "notice": self.notice,
            "rigid_setup": list(self.rigid_setup),
            "malleable_setup": list(self.malleable_setup),
            "min_fraction": self.min_fraction,
            "checkpoint_mtbf": self.checkpoint_mtbf,
            **({} if self.mtbf is None else {"mtbf": self.mtbf, "down_hours": self.down_hours}),
            **{
                name: value
                for name, value in self.mechanism_options().items()
                if value != MECHANISM_DEFAULTS[name]
            },
            "inputs": digest(w.job_id, w.submit, w.run, w.cores, w.estimate, self.projects),
        }

    @classmethod
    def from_json(cls, document: dict) -> HybridExperiment:
        """The spec of a spec.json: the trace is read again and must still have the stored digest
        (which of the `--type-by` groupings made the projects is not stored: the one matching the
        digest is taken)."""
        from cosched.simulator.compare import load_inputs
        from cosched.simulator.hybrid.workload import TYPE_BY, trace_projects
        from cosched.simulator.platform import Platform

        platform, workload = load_inputs(
            document["workload"], Platform(**document["platform"]), limit=document["jobs"]
        )
        settings = dict(
            typings=document["typings"],
            mechanisms=tuple(document["mechanisms"]),
            sweeps=tuple(document["sweeps"]),
            sweep_typings=document["sweep_typings"],
            seed=document["seed"],
            scheduler=document["scheduler"],
            fractions=tuple(document["fractions"]),
            notice=document["notice"],
            rigid_setup=tuple(document["rigid_setup"]),
            malleable_setup=tuple(document["malleable_setup"]),
            min_fraction=document["min_fraction"],
            checkpoint_mtbf=document["checkpoint_mtbf"],
            source=document["workload"],
            mtbf=document.get("mtbf"),
            down_hours=document.get("down_hours", DOWN_HOURS),
            **{name: document.get(name, value) for name, value in MECHANISM_DEFAULTS.items()},
        )
        for by in TYPE_BY:
            try:
                projects = trace_projects(
                    workload.source or document["workload"], workload.job_id, by
                )
            except InputError:  # this grouping needs ids the trace does not have
                continue
            spec = cls(workload, projects, platform, **settings)
            if spec.to_json()["inputs"] == document["inputs"]:
                return spec
        raise InputError(
            "the trace changed since this spec was written (its digest differs)",
            source=document["workload"],
            field="inputs",
        )

    def cells(self) -> list[tuple]:
        return cells(self)

    def run_cell(self, sweep: str, value: str, typing: int, mechanism: str) -> list[dict]:
        return run_cell(self, sweep, value, typing, mechanism)

    def finish(
        self, out: Path, grid: pd.DataFrame, *, plots: bool = True, workers: int = 1
    ) -> pd.DataFrame:
        """runs.csv, summary.csv, table.md and the plots (in this process); returns the summary."""
        return finish(self, out, grid, plots=plots)


# the name before 0.3.0
__getattr__ = module_aliases(__name__, {"HybridSpec": "HybridExperiment"}, globals())


def cells(spec: HybridExperiment) -> list[tuple]:
    """Every (sweep, value, typing, mechanism) of the grid: the main grid first, then the sweeps."""
    grid = [("main", spec.notice, t, m) for t in range(spec.typings) for m in spec.mechanisms]
    typings = range(spec.sweep_typings or spec.typings)
    mechanisms = [m for m in spec.mechanisms if m != "baseline"]
    if "notice" in spec.sweeps:
        grid += [
            ("notice", w, t, m) for w in NOTICE_MIXES for t in typings for m in spec.mechanisms
        ]
    if "checkpoint" in spec.sweeps:
        grid += [
            ("checkpoint", f"{mtbf:g}:{factor:g}", t, m)
            for mtbf in CHECKPOINT_MTBFS
            for factor in CHECKPOINT_FACTORS
            for t in typings
            for m in mechanisms
        ]
    return grid


def run_cell(
    spec: HybridExperiment, sweep: str, value: str, typing: int, mechanism: str
) -> list[dict]:
    """One run: type the trace with seed (seed, typing), simulate, return its metrics row."""
    mix, mtbf, factor, failures = spec.notice, spec.checkpoint_mtbf, 1.0, spec.mtbf
    if sweep == "notice":
        mix = value
    elif sweep == "checkpoint":
        mtbf, factor = (float(part) for part in value.split(":"))
        failures = None if failures is None else mtbf
    seed = int(np.random.SeedSequence([spec.seed, typing]).generate_state(1)[0])
    hybrid = build_hybrid(
        spec.workload,
        spec.platform.cores_per_node,
        spec.projects,
        seed=seed,
        fractions=spec.fractions,
        mix=notice_mix(mix),
        rigid_setup=spec.rigid_setup,
        malleable_setup=spec.malleable_setup,
        min_fraction=spec.min_fraction,
    )
    result = simulate_hybrid(
        hybrid,
        spec.platform,
        mechanism,
        scheduler=spec.scheduler,
        checkpoint_mtbf=mtbf,
        checkpoint_factor=factor,
        mtbf=failures,
        down_hours=spec.down_hours,
        failure_seed=seed,
        **spec.mechanism_options(),
    )
    metrics = hybrid_metrics(result, hybrid)
    by_type = metrics.pop("turnaround_hours_by_type")
    row = {name: metrics.get(name) for name in METRICS}
    row.update(
        turnaround_on_demand=by_type["on-demand"],
        turnaround_rigid=by_type["rigid"],
        turnaround_malleable=by_type["malleable"],
        wall_seconds=result.wall_seconds,
    )
    return [row]


def run_hybrid_experiment(
    spec: HybridExperiment, out: str | os.PathLike, **options: Any
) -> pd.DataFrame:
    """Deprecated spelling of `run_experiment` (removed in 0.4.0)."""
    warn_renamed("run_hybrid_experiment", "cosched.simulator.hybrid.experiment.run_experiment")
    return run_experiment(spec, out, **options)


def finish(
    spec: HybridExperiment, out: Path, runs: pd.DataFrame, *, plots: bool = True
) -> pd.DataFrame:
    """From the grid's rows: runs.csv, summary.csv, table.md and the plots; returns the summary."""
    summary = summarize_runs(runs)
    with atomic_path(out / "runs.csv") as tmp:
        runs.to_csv(tmp, index=False)
    with atomic_path(out / "summary.csv") as tmp:
        summary.to_csv(tmp)
    with atomic_path(out / "table.md") as tmp:
        tmp.write_text(markdown_table(summary, spec))
    if plots:
        from cosched.simulator.hybrid.plots import experiment_plots

        experiment_plots(runs, summary, out / "plots")
    return summary


def summarize_runs(runs: pd.DataFrame) -> pd.DataFrame:
    """Mean and standard deviation of each metric per (sweep, value, mechanism) over the typings."""
    runs = runs.copy()
    runs["value"] = runs["value"].astype(str)
    grouped = runs.groupby(["sweep", "value", "mechanism"], sort=False)[list(METRICS)]
    summary = grouped.mean().join(grouped.std(ddof=0), rsuffix="_std")
    return summary.join(grouped.size().rename("typings"))


TABLE = (
    ("instant start", "instant_start_ratio", 100, "{:.1f} %"),
    ("at the arrival", "instant_start_ratio_strict", 100, "{:.1f} %"),
    ("turnaround [h]", "turnaround_hours", 1, "{:.2f}"),
    ("on-demand [h]", "turnaround_on_demand", 1, "{:.2f}"),
    ("rigid [h]", "turnaround_rigid", 1, "{:.2f}"),
    ("malleable [h]", "turnaround_malleable", 1, "{:.2f}"),
    ("preempted rigid", "preemption_ratio_rigid", 100, "{:.2f} %"),
    ("preempted malleable", "preemption_ratio_malleable", 100, "{:.2f} %"),
    ("utilisation", "utilization_useful", 100, "{:.2f} %"),
    ("lost [node-h]", "lost_node_hours", 1, "{:.0f}"),
    ("decision max [ms]", "decision_ms_max", 1, "{:.2f}"),
)
FAILURE_TABLE = (
    ("node failures", "failures", 1, "{:.1f}"),
    ("lost to failures [node-h]", "failure_lost_node_hours", 1, "{:.0f}"),
)


def markdown_table(summary: pd.DataFrame, spec: HybridExperiment | None = None) -> str:
    """004 Table III style, one row per configuration of the main grid, mean ± standard deviation
    over the typings."""
    main = summary.xs("main", level="sweep")
    table = TABLE + FAILURE_TABLE if main["failures"].fillna(0).max() > 0 else TABLE
    lines = [
        "| mechanism | " + " | ".join(label for label, *_ in table) + " |",
        "|---" * (len(table) + 1) + "|",
    ]
    for (_, mechanism), row in main.iterrows():
        cells_text = []
        for _, key, scale, fmt in table:
            mean, spread = row[key], row[f"{key}_std"]
            if np.isnan(mean):
                cells_text.append("-")
                continue
            number = fmt.format(mean * scale)
            unit = " %" if number.endswith(" %") else ""
            deviation = fmt.format(spread * scale).removesuffix(" %")
            cells_text.append(f"{number.removesuffix(' %')} ± {deviation}{unit}")
        lines.append(f"| {mechanism} | " + " | ".join(cells_text) + " |")
    if spec is not None:
        lines.append("")
        lines.append(
            f"{len(spec.workload)} jobs of {spec.source or 'the trace'} on "
            f"{spec.platform.nodes} nodes, "
            f"{spec.typings} typings (seed {spec.seed}), notice mix {spec.notice}, site policy "
            f"{spec.scheduler}"
            + (
                ""
                if spec.mtbf is None
                else f", node failures every {spec.mtbf:g} h (down "
                f"{spec.down_hours:g} h on average)"
            )
            + _readings(spec)
            + "; mean ± standard deviation over the typings."
        )
    return "\n".join(lines) + "\n"


def _readings(spec: HybridExperiment) -> str:
    """The readings of the paper's definitions that differ from the defaults, for the caption."""
    changed = [
        f"preemption warning {value:g} s"
        if name == "warning"
        else f"{name.replace('_', ' ')} {value}"
        for name, value in spec.mechanism_options().items()
        if value != MECHANISM_DEFAULTS[name]
    ]
    return f", {', '.join(changed)}" if changed else ""
