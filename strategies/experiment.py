"""The numerical experiments of 002 §8: competitive ratios of FCS, UCB, PI and EI over a grid of
instances.

One grid cell is one random instance (α range, instance number): it is generated, solved by OPT and
run with FCS and every (acquisition, k, reading) search strategy, giving one tidy row per run. A
*reading* is one answer to the three questions 002 §5 leaves open (lower anchor, search tie-break,
EI clipping); a grid with several readings also writes `spread.csv`, how far the mean ratio moves
between them. The grid runs on `cosched.grid.run_grid`: cells run in local worker processes
(default) or on a dask.distributed cluster; finished cells are appended to `results.csv` at once and
listed in `results.done`, so a killed run resumes where it stopped. At the end `results.parquet` and
`summary.csv` are written whole.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from cosched.deprecation import module_aliases
from cosched.errors import InputError
from cosched.grid import ExperimentSpec, read_rows, run_experiment
from cosched.outputs import atomic_path

__all__ = [
    "StrategyExperiment",
    "STRATEGY_PRESETS",
    "ACQUISITIONS",
    "PAPER_ALPHA_RANGES",
    "PAPER_KS",
    "RESULT_COLUMNS",
    "READING",
    "run_experiment",
    "spread",
    "default_reading",
    "load_results",
    "cell_seed",
]

# Our grid, not the paper's: 002 §8 names only the ranges [0.45, 0.55] and [0.75, 0.85] and k = 0.99
# (Fig. 7).
# We cover α with the 0.1-wide ranges [0.05, 0.15] ... [0.85, 0.95], which contain both (9 ranges).
PAPER_ALPHA_RANGES = tuple((round(lo, 2), round(lo + 0.1, 2)) for lo in np.arange(0.05, 0.86, 0.1))
# our k grid around the paper's k = 0.99 (002 §8 names no other k)
PAPER_KS = (0.6, 0.7, 0.8, 0.9, 0.99)
ACQUISITIONS = ("ucb", "pi", "ei")
# the choices 002 §5 leaves open, one per column
READING = ("lower_anchor", "search_tie_break", "ei_unclipped")
RESULT_COLUMNS = [
    "alpha_index",
    "alpha_lo",
    "alpha_hi",
    "instance",
    "seed",
    "n",
    "strategy",
    "k",
    "quantum",
    "bounds",
    "incumbent",
    "noise_sigma",
    "makespan",
    "opt",
    "ratio",
    "steps",
    *READING,
    "explored",
    "exploration_time",
]
KEY = ("alpha_index", "instance")  # one grid cell
RESULTS, DONE, PARQUET, SUMMARY, CONFIG = (
    "results.csv",
    "results.done",
    "results.parquet",
    "summary.csv",
    "config.json",
)
SPREAD = "spread.csv"
# what --force removes
OWNED = (CONFIG, RESULTS, DONE, PARQUET, SUMMARY, SPREAD, "fig6.png", "fig7.png")


@dataclass(frozen=True)
class StrategyExperiment(ExperimentSpec):
    """Everything that defines a grid; stored as config.json beside the results so a resume cannot
    mix grids.

    The spec of `cosched experiment` (`cosched.grid.ExperimentSpec`): run it with `run_experiment`.
    """

    command = "experiment"
    spec_file, grid_file = CONFIG, RESULTS
    key, columns, owned, unit = KEY, tuple(RESULT_COLUMNS), OWNED, "instance"

    n: int = 10
    instances: int = 50
    alpha_ranges: tuple = PAPER_ALPHA_RANGES
    acquisitions: tuple = ACQUISITIONS
    ks: tuple = PAPER_KS
    quantum: float = 10.0
    bounds: str = "paper"
    incumbent: str = "estimate"
    noise_sigma: float = 0.0
    noise_model: str = "lognormal"
    remeasure: bool = False
    seed: int = 0
    lower_anchors: tuple = ("n+1",)
    search_tie_breaks: tuple = ("first",)
    ei_unclipped: tuple = (False,)

    def __post_init__(self):
        if not 2 <= self.n <= 16:
            raise InputError(
                f"n must be in 2..16 for the search strategies, got {self.n}", field="n"
            )
        if self.instances < 1:
            raise InputError(
                f"at least one instance per α range, got {self.instances}", field="instances"
            )
        if not self.alpha_ranges or any(not 0 <= lo <= hi <= 1 for lo, hi in self.alpha_ranges):
            raise InputError("α ranges must satisfy 0 <= lo <= hi <= 1", field="alpha")
        unknown = set(self.acquisitions) - set(ACQUISITIONS)
        if unknown:
            raise InputError(
                f"unknown acquisitions {sorted(unknown)}; choose from {ACQUISITIONS}",
                field="strategies",
            )
        if any(not 0.5 < k < 1 for k in self.ks):
            raise InputError(f"every k must lie in (0.5, 1), got {list(self.ks)}", field="k")
        if not self.quantum > 0:
            raise InputError(
                f"the measurement quantum must be positive, got {self.quantum}", field="quantum"
            )
        if not self.noise_sigma >= 0:
            raise InputError(
                f"the relative noise σ must be non-negative, got {self.noise_sigma}",
                field="noise-sigma",
            )
        from cosched.strategies.interpolation import LOWER_ANCHORS, SEARCH_TIE_BREAKS

        for values, known, field in (
            (self.lower_anchors, LOWER_ANCHORS, "lower-anchor"),
            (self.search_tie_breaks, SEARCH_TIE_BREAKS, "search-tie-break"),
            (self.ei_unclipped, (False, True), "ei-unclipped"),
        ):
            if not values or len(set(values)) != len(values) or not set(values) <= set(known):
                raise InputError(
                    f"{list(values)} is not a list of distinct values from {list(known)}",
                    field=field,
                )
        object.__setattr__(self, "lower_anchors", tuple(self.lower_anchors))
        object.__setattr__(self, "search_tie_breaks", tuple(self.search_tie_breaks))
        object.__setattr__(self, "ei_unclipped", tuple(bool(value) for value in self.ei_unclipped))
        object.__setattr__(
            self, "alpha_ranges", tuple(tuple(float(a) for a in r) for r in self.alpha_ranges)
        )
        object.__setattr__(self, "acquisitions", tuple(self.acquisitions))
        object.__setattr__(self, "ks", tuple(float(k) for k in self.ks))

    def cells(self) -> list[tuple[int, int]]:
        """(α range index, instance number) of every instance of the grid."""
        return [(a, i) for a in range(len(self.alpha_ranges)) for i in range(self.instances)]

    @property
    def rows_per_cell(self) -> int:  # OPT, FCS, one per search strategy, k and reading
        return 2 + len(self.ks) * sum(len(self.readings(name)) for name in self.acquisitions)

    def readings(self, acquisition: str) -> list[dict]:
        """The readings an acquisition runs under: EI clipping applies to EI only (the others record
        False)."""
        clipping = self.ei_unclipped if acquisition == "ei" else (False,)
        return [
            dict(zip(READING, values))
            for values in itertools.product(self.lower_anchors, self.search_tie_breaks, clipping)
        ]

    def to_json(self) -> dict:
        return json.loads(json.dumps(dataclasses.asdict(self)))

    @classmethod
    def from_json(cls, document: dict) -> StrategyExperiment:
        fields: dict[str, Any] = {
            key: tuple(map(tuple, value))
            if key == "alpha_ranges"
            else tuple(value)
            if isinstance(value, list)
            else value
            for key, value in document.items()
        }
        return cls(**fields)

    def run_cell(self, alpha_index: int, instance_number: int) -> list[dict]:
        return run_cell(self, alpha_index, instance_number)

    def finish(self, out: Path, grid, *, plots: bool = True, workers: int = 1):
        """results.parquet, summary.csv and (several readings) spread.csv; returns the sorted rows.
        The figures are drawn by the command (`cosched.strategies.plots`), not here: `plots` and
        `workers` are not used."""
        return finish(self, out, grid)

    def matches(self, document: dict):
        return _same_grid(self)


STRATEGY_PRESETS = {
    "paper": StrategyExperiment(),
    "small": StrategyExperiment(n=6, instances=4, ks=(0.6, 0.9, 0.99)),
}


__getattr__ = module_aliases(  # the names before 0.3.0
    __name__,
    {
        "ExperimentConfig": "StrategyExperiment",
        "PRESETS": "STRATEGY_PRESETS",
        "COLUMNS": "RESULT_COLUMNS",
    },
    globals(),
)


def cell_seed(seed: int, alpha_index: int, instance: int) -> int:
    """Independent, reproducible instance seed for one grid cell."""
    return int(np.random.SeedSequence([seed, alpha_index, instance]).generate_state(1)[0])


def run_cell(config: StrategyExperiment, alpha_index: int, instance_number: int) -> list[dict]:
    """Generate one instance, solve OPT, run FCS and every search strategy: one row per run."""
    from cosched.strategies.fcs import FCS
    from cosched.strategies.noise import NoiseModel
    from cosched.strategies.registry import make_strategy
    from cosched.strategies.schedule import execute
    from cosched.theory.bounds import competitive_ratio
    from cosched.theory.generators import random_instance
    from cosched.theory.opt import solve_opt

    lo, hi = config.alpha_ranges[alpha_index]
    seed = cell_seed(config.seed, alpha_index, instance_number)
    instance = random_instance(config.n, alpha=(lo, hi), seed=seed)  # 002 §8 generator
    # same optimum as the direct LP; scales to n = 16
    opt = solve_opt(instance, method="colgen").makespan
    # OPT and FCS know A: they explore nothing
    base = {
        "alpha_index": alpha_index,
        "alpha_lo": lo,
        "alpha_hi": hi,
        "instance": instance_number,
        "seed": seed,
        "n": config.n,
        "k": np.nan,
        "quantum": np.nan,
        "bounds": "",
        "incumbent": "",
        "noise_sigma": 0.0,
        "opt": opt,
        "lower_anchor": "",
        "search_tie_break": "",
        "ei_unclipped": "",
        "explored": 0,
        "exploration_time": 0.0,
    }
    rows = [dict(base, strategy="opt", makespan=opt, ratio=1.0, steps=0)]
    fcs = execute(instance, FCS(tie_break="first"))
    rows.append(
        dict(
            base,
            strategy="fcs",
            makespan=fcs.makespan,
            ratio=competitive_ratio(fcs.makespan, opt),
            steps=len(fcs.durations),
        )
    )
    measure = NoiseModel(config.noise_sigma, config.noise_model) if config.noise_sigma > 0 else None
    for name in config.acquisitions:
        for k in config.ks:
            for reading in config.readings(name):
                strategy: Any = make_strategy(  # a SearchStrategy: explored, exploration_time
                    name,
                    k=k,
                    quantum=config.quantum,
                    bounds=config.bounds,
                    noise=config.noise_sigma,
                    remeasure=config.remeasure,
                    incumbent=config.incumbent,
                    **reading,
                )
                schedule = execute(instance, strategy, seed=seed, measure=measure)
                rows.append(
                    dict(
                        base,
                        strategy=name,
                        k=k,
                        quantum=config.quantum,
                        bounds=config.bounds,
                        incumbent=config.incumbent,
                        noise_sigma=config.noise_sigma,
                        makespan=schedule.makespan,
                        ratio=competitive_ratio(schedule.makespan, opt),
                        steps=len(schedule.durations),
                        **reading,
                        explored=strategy.explored,
                        exploration_time=strategy.exploration_time,
                    )
                )
    return rows


def load_results(out: str | os.PathLike):
    """The rows of the finished cells already in `out/results.csv` (cells cut off by a kill are left
    out)."""
    return read_rows(Path(out) / RESULTS, RESULT_COLUMNS, KEY)


def finish(config: StrategyExperiment, out: str | os.PathLike, grid):
    """From the grid's rows: results.parquet, summary.csv and (several readings) spread.csv; the
    sorted rows."""
    out = Path(out)
    frame = grid.sort_values(
        ["alpha_index", "instance", "strategy", "k", *READING], ignore_index=True
    )
    # True / False / empty (OPT, FCS) as text
    frame["ei_unclipped"] = frame["ei_unclipped"].astype("string")
    # sorted: the same file whatever order the cells finished in
    with atomic_path(out / PARQUET) as tmp:
        frame.to_parquet(tmp, index=False)
    with atomic_path(out / SUMMARY) as tmp:
        summarize(frame).to_csv(tmp, index=False)
    if max(len(config.readings(name)) for name in config.acquisitions) > 1:
        with atomic_path(out / SPREAD) as tmp:
            spread(frame).to_csv(tmp, index=False)
    return frame


def summarize(frame):
    """Mean, max and std of the ratio per α range, strategy, k and reading (the numbers behind Figs.
    6 and 7), with the mean number of combinations explored and the mean time spent exploring
    them."""
    keys = ["alpha_index", "alpha_lo", "alpha_hi", "strategy", "k", *READING]
    grouped = frame.groupby(keys, dropna=False)
    summary = grouped["ratio"].agg(
        mean_ratio="mean", max_ratio="max", std_ratio="std", instances="count"
    )
    summary["mean_explored"] = grouped["explored"].mean()
    summary["mean_exploration_time"] = grouped["exploration_time"].mean()
    summary = summary.reset_index()
    # the columns of earlier versions first, in their order
    first = [
        "alpha_index",
        "alpha_lo",
        "alpha_hi",
        "strategy",
        "k",
        "mean_ratio",
        "max_ratio",
        "std_ratio",
        "instances",
    ]
    return summary[first + [column for column in summary.columns if column not in first]]


def spread(frame):
    """How far the mean ratio moves between readings: per α range, search strategy and k, the lowest
    and the highest mean ratio over the readings, their difference and the readings reaching
    them."""
    search = frame[frame["strategy"].isin(ACQUISITIONS)]
    means = (
        search.groupby(
            ["alpha_index", "alpha_lo", "alpha_hi", "strategy", "k", *READING], dropna=False
        )["ratio"]
        .mean()
        .reset_index()
    )
    means["reading"] = [
        f"anchor={a} ties={t} ei_unclipped={u}"
        for a, t, u in means[list(READING)].itertuples(index=False)
    ]
    keys = ["alpha_index", "alpha_lo", "alpha_hi", "strategy", "k"]
    grouped = means.groupby(keys, dropna=False)
    low, high = means.loc[grouped["ratio"].idxmin()], means.loc[grouped["ratio"].idxmax()]
    table = low[keys].reset_index(drop=True)
    table["readings"] = grouped["ratio"].count().to_numpy()
    table["min_mean_ratio"], table["max_mean_ratio"] = (
        low["ratio"].to_numpy(),
        high["ratio"].to_numpy(),
    )
    table["spread"] = table["max_mean_ratio"] - table["min_mean_ratio"]
    table["min_reading"], table["max_reading"] = (
        low["reading"].to_numpy(),
        high["reading"].to_numpy(),
    )
    return table


def default_reading(frame, config: StrategyExperiment):
    """The rows of OPT, FCS and the search strategies under the config's first reading (what the
    figures show)."""
    first = {
        "lower_anchor": config.lower_anchors[0],
        "search_tie_break": config.search_tie_breaks[0],
    }
    keep = ~frame["strategy"].isin(ACQUISITIONS)
    search = frame["strategy"].isin(ACQUISITIONS)
    for column, value in first.items():
        search &= frame[column] == value
    clipped = frame["ei_unclipped"].astype(str) == str(config.ei_unclipped[0])
    search &= (frame["strategy"] != "ei") | clipped
    return frame[keep | search]


def _same_grid(config: StrategyExperiment):
    """Whether a stored config.json describes the same grid as `config` (`cosched.rerun`)."""

    def matches(path: Path) -> bool:
        try:
            return StrategyExperiment.from_json(json.loads(path.read_text())) == config
        except (json.JSONDecodeError, TypeError, InputError) as error:
            raise InputError(
                f"unreadable experiment configuration ({error}); add --force to start over",
                source=str(path),
            ) from None

    return matches
