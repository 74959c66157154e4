"""Time the search strategies and the 002 §8 experiment grid; compare the bound updates side by side
in one run.

    python benchmarks/bench_experiment.py [--instances 4] [--n 10] [--workers 2] [--repeats 7] \
        [--seed 0]

Part 1 (bound update, n = --n): one new measurement updated incrementally (O(n 2^n), the strategies'
path), by the full lattice transform (O(n^2 2^n)) and by a plain Python loop over (combination,
task) pairs; medians and ratios. Part 2 (grid): a scaled-down paper grid (--instances per α range,
all 9 α ranges, 3 acquisitions x 5 k, FCS, OPT) in one process and in --workers processes; seconds
per instance and the full paper grid (50 instances per α range) extrapolated from each. CPU load is
printed, since the machine may be shared.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import tempfile
import time

import numpy as np

from cosched.strategies.experiment import STRATEGY_PRESETS, run_experiment
from cosched.strategies.interpolation import Bounds
from cosched.theory.generators import random_instance
from cosched.theory.lattice import popcount


def median_seconds(function, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        function()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def python_loop_update(bounds: Bounds, mask: int, speeds: np.ndarray) -> None:
    """The same paper-rule update as `Bounds.add`, written as a Python loop over combinations and
    tasks."""
    size = int(popcount(mask))
    for j in range(1, 1 << bounds.n):
        for i in range(bounds.n):
            if not (mask >> i & 1) or bounds.measured[j]:
                continue
            if j & mask == mask and (size, -speeds[i]) > (
                bounds.upper_size[j, i],
                -bounds.upper[j, i],
            ):
                bounds.upper_size[j, i], bounds.upper[j, i] = size, speeds[i]
            if (
                j & ~mask == 0
                and j >> i & 1
                and (size, -speeds[i]) < (bounds.lower_size[j, i], -bounds.lower[j, i])
            ):
                bounds.lower_size[j, i], bounds.lower[j, i] = size, speeds[i]
    bounds.measured[mask] = True


def bench_bounds(n: int, repeats: int, seed: int) -> None:
    instance = random_instance(n, alpha=(0.45, 0.55), seed=seed)
    rng = np.random.default_rng(seed)
    masks = rng.choice(
        instance.combinations[popcount(instance.combinations) > 1], size=20, replace=False
    )

    def prepared():
        bounds = Bounds(n)
        for mask in masks[:-1]:
            bounds.add(int(mask), instance.column(int(mask)))
        return bounds

    last = int(masks[-1])
    column = instance.column(last)
    states = [prepared() for _ in range(3 * repeats)]
    incremental = median_seconds(lambda: states.pop().add(last, column), repeats)

    def transform():
        bounds = states.pop()
        bounds.measured[last] = True
        bounds.values[last] = column
        bounds.recompute()

    full = median_seconds(transform, repeats)
    loop = median_seconds(lambda: python_loop_update(states.pop(), last, column), repeats)
    print(
        f"\n## Bound update after one measurement (n = {n}, {1 << n} lattice entries, "
        f"median of {repeats})\n"
    )
    print("| method | seconds | / incremental |")
    print("|---|---:|---:|")
    for name, seconds in (
        ("incremental (Bounds.add)", incremental),
        ("lattice transform (recompute)", full),
        ("Python loop over pairs", loop),
    ):
        print(f"| {name} | {seconds:.6f} | {seconds / incremental:.1f}x |")


def bench_grid(instances: int, n: int, workers: int, seed: int) -> None:
    config = dataclasses.replace(STRATEGY_PRESETS["paper"], instances=instances, n=n, seed=seed)
    full_cells = len(config.alpha_ranges) * STRATEGY_PRESETS["paper"].instances
    print(
        f"\n## Scaled-down paper grid: {len(config.cells())} instances (n = {n}), "
        f"{config.rows_per_cell} runs each; "
        f"load average before: {os.getloadavg()[0]:.2f}\n"
    )
    print("| workers | seconds | s / instance | runs | extrapolated paper grid (s) |")
    print("|---:|---:|---:|---:|---:|")
    for count in sorted({1, workers}):
        with tempfile.TemporaryDirectory() as out:
            started = time.perf_counter()
            frame = run_experiment(config, out, workers=count, progress=False)
            seconds = time.perf_counter() - started
        per_cell = seconds / len(config.cells())
        print(
            f"| {count} | {seconds:.1f} | {per_cell:.3f} | {len(frame)} | "
            f"{per_cell * full_cells:.0f} |"
        )
    print(f"\nload average after: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument(
        "--instances", type=int, default=4, help="instances per α range in the timed grid"
    )
    parser.add_argument("--n", type=int, default=10)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument(
        "--repeats", type=int, default=7, help="repeats of the bound-update timings (median)"
    )
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    bench_bounds(args.n, args.repeats, args.seed)
    bench_grid(args.instances, args.n, args.workers, args.seed)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
