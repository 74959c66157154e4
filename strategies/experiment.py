"""The numerical experiments of 002 §8: competitive ratios of FCS, UCB, PI and EI over a grid of instances.

One grid cell is one random instance (α range, instance number): it is generated, solved by OPT and run
with FCS and every (acquisition, k) search strategy, giving one tidy row per run. The grid runs on
`cosched.grid.run_grid`: cells run in local worker processes (default) or on a dask.distributed cluster;
finished cells are appended to `results.csv` at once and listed in `results.done`, so a killed run resumes
where it stopped. At the end `results.parquet` and `summary.csv` are written whole.
"""
from __future__ import annotations

import dataclasses
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from cosched.errors import InputError
from cosched.grid import any_finished, read_rows, run_grid
from cosched.outputs import atomic_path
from cosched.rerun import claim_output

__all__ = ["ExperimentConfig", "PRESETS", "ACQUISITIONS", "PAPER_ALPHA_RANGES", "PAPER_KS", "COLUMNS", "run_cell",
           "run_experiment", "summarize", "load_results", "cell_seed"]

# 002 §8: 0.1-wide ranges from [0.05, 0.15] to [0.85, 0.95]; the paper's extra [0.75, 0.85] (closest to the
# measured speeds) is already one of them, so the grid has 9 distinct ranges
PAPER_ALPHA_RANGES = tuple((round(lo, 2), round(lo + 0.1, 2)) for lo in np.arange(0.05, 0.86, 0.1))
PAPER_KS = (0.6, 0.7, 0.8, 0.9, 0.99)  # 002 §8, Fig. 6
ACQUISITIONS = ("ucb", "pi", "ei")
COLUMNS = ["alpha_index", "alpha_lo", "alpha_hi", "instance", "seed", "n", "strategy", "k", "quantum", "bounds",
           "incumbent", "noise_sigma", "makespan", "opt", "ratio", "steps"]
KEY = ("alpha_index", "instance")  # one grid cell
RESULTS, DONE, PARQUET, SUMMARY, CONFIG = "results.csv", "results.done", "results.parquet", "summary.csv", "config.json"
OWNED = (CONFIG, RESULTS, DONE, PARQUET, SUMMARY, "fig6.png", "fig7.png")  # what --force removes (CLI: the figures)


@dataclass(frozen=True)
class ExperimentConfig:
    """Everything that defines a grid; stored as config.json beside the results so a resume cannot mix grids."""

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

    def __post_init__(self):
        if not 2 <= self.n <= 16:
            raise InputError(f"n must be in 2..16 for the search strategies, got {self.n}", field="n")
        if self.instances < 1:
            raise InputError(f"at least one instance per α range, got {self.instances}", field="instances")
        if not self.alpha_ranges or any(not 0 <= lo <= hi <= 1 for lo, hi in self.alpha_ranges):
            raise InputError("α ranges must satisfy 0 <= lo <= hi <= 1", field="alpha")
        unknown = set(self.acquisitions) - set(ACQUISITIONS)
        if unknown:
            raise InputError(f"unknown acquisitions {sorted(unknown)}; choose from {ACQUISITIONS}", field="strategies")
        if any(not 0.5 < k < 1 for k in self.ks):
            raise InputError(f"every k must lie in (0.5, 1), got {list(self.ks)}", field="k")
        if not self.quantum > 0:
            raise InputError(f"the measurement quantum must be positive, got {self.quantum}", field="quantum")
        if not self.noise_sigma >= 0:
            raise InputError(f"the relative noise σ must be non-negative, got {self.noise_sigma}", field="noise-sigma")
        object.__setattr__(self, "alpha_ranges", tuple(tuple(float(a) for a in r) for r in self.alpha_ranges))
        object.__setattr__(self, "acquisitions", tuple(self.acquisitions))
        object.__setattr__(self, "ks", tuple(float(k) for k in self.ks))

    @property
    def cells(self) -> list[tuple[int, int]]:
        return [(a, i) for a in range(len(self.alpha_ranges)) for i in range(self.instances)]

    @property
    def rows_per_cell(self) -> int:
        return 2 + len(self.acquisitions) * len(self.ks)  # OPT, FCS, one per search strategy and k

    def to_json(self) -> dict:
        return json.loads(json.dumps(dataclasses.asdict(self)))

    @classmethod
    def from_json(cls, document: dict) -> "ExperimentConfig":
        return cls(**{key: tuple(map(tuple, value)) if key == "alpha_ranges" else
                      tuple(value) if isinstance(value, list) else value for key, value in document.items()})


PRESETS = {
    "paper": ExperimentConfig(),
    "small": ExperimentConfig(n=6, instances=4, ks=(0.6, 0.9, 0.99)),
}


def cell_seed(seed: int, alpha_index: int, instance: int) -> int:
    """Independent, reproducible instance seed for one grid cell."""
    return int(np.random.SeedSequence([seed, alpha_index, instance]).generate_state(1)[0])


def run_cell(config: ExperimentConfig, alpha_index: int, instance_number: int) -> list[dict]:
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
    opt = solve_opt(instance, method="colgen").makespan  # same optimum as the direct LP; scales to n = 16
    base = {"alpha_index": alpha_index, "alpha_lo": lo, "alpha_hi": hi, "instance": instance_number, "seed": seed,
            "n": config.n, "k": np.nan, "quantum": np.nan, "bounds": "", "incumbent": "", "noise_sigma": 0.0,
            "opt": opt}
    rows = [dict(base, strategy="opt", makespan=opt, ratio=1.0, steps=0)]
    fcs = execute(instance, FCS(tie_break="first"))
    rows.append(dict(base, strategy="fcs", makespan=fcs.makespan, ratio=competitive_ratio(fcs.makespan, opt),
                     steps=len(fcs.durations)))
    measure = NoiseModel(config.noise_sigma, config.noise_model) if config.noise_sigma > 0 else None
    for name in config.acquisitions:
        for k in config.ks:
            strategy = make_strategy(name, k=k, quantum=config.quantum, bounds=config.bounds,
                                     noise=config.noise_sigma, remeasure=config.remeasure, incumbent=config.incumbent)
            schedule = execute(instance, strategy, seed=seed, measure=measure)
            rows.append(dict(base, strategy=name, k=k, quantum=config.quantum, bounds=config.bounds,
                             incumbent=config.incumbent, noise_sigma=config.noise_sigma, makespan=schedule.makespan,
                             ratio=competitive_ratio(schedule.makespan, opt), steps=len(schedule.durations)))
    return rows


def load_results(out: str | os.PathLike):
    """The rows of the finished cells already in `out/results.csv` (cells cut off by a kill are left out)."""
    return read_rows(Path(out) / RESULTS, COLUMNS, KEY)


def run_experiment(config: ExperimentConfig, out: str | os.PathLike, *, workers: int | None = None,
                   dask=None, progress: bool = True, force: bool = False):
    """Run every grid cell not yet in `out`, appending each finished cell to results.csv; return all rows.

    workers: local processes (default: all cores; 1 runs in this process). dask: "local" for a LocalCluster,
    a scheduler address "tcp://host:port", or a `distributed.Client`. The rerun rule of `cosched.rerun`:
    a folder of the same grid resumes, another grid or foreign files are refused unless `force` (start over).
    Ctrl-C / SIGTERM cancel the pending cells at once and keep the finished ones.
    """
    out = Path(out)
    created = not out.exists()
    try:
        _check_config(config, out, force)
        frame = run_grid(run_cell, config.cells, path=out / RESULTS, columns=COLUMNS, key=KEY, shared=(config,),
                         workers=workers, dask=dask, progress=progress, desc="experiment", unit="instance")
    except BaseException:
        if created and not any_finished(out / RESULTS):  # nothing to resume: leave no folder behind
            shutil.rmtree(out, ignore_errors=True)
        raise
    frame = frame.sort_values(["alpha_index", "instance", "strategy", "k"], ignore_index=True)
    with atomic_path(out / PARQUET) as tmp:  # sorted: the same file whatever order the cells finished in
        frame.to_parquet(tmp, index=False)
    with atomic_path(out / SUMMARY) as tmp:
        summarize(frame).to_csv(tmp, index=False)
    return frame


def summarize(frame):
    """Mean, max and std of the ratio per α range, strategy and k (the numbers behind Figs. 6 and 7)."""
    keys = ["alpha_index", "alpha_lo", "alpha_hi", "strategy", "k"]
    grouped = frame.groupby(keys, dropna=False)["ratio"]
    return grouped.agg(mean_ratio="mean", max_ratio="max", std_ratio="std", instances="count").reset_index()


def _check_config(config: ExperimentConfig, out: Path, force: bool = False) -> None:
    """Create `out` with config.json, or check that the one there describes the same grid (`cosched.rerun`)."""
    def same_grid(path: Path) -> bool:
        try:
            return ExperimentConfig.from_json(json.loads(path.read_text())) == config
        except (json.JSONDecodeError, TypeError, InputError) as error:
            raise InputError(f"unreadable experiment configuration ({error}); add --force to start over",
                             source=str(path)) from None

    if claim_output(out, command="experiment", key_file=CONFIG, owned=OWNED, matches=same_grid, force=force):
        return
    out.mkdir(parents=True, exist_ok=True)
    with atomic_path(out / CONFIG) as tmp:
        tmp.write_text(json.dumps(config.to_json(), indent=2))
