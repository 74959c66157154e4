"""Time OPT (direct LP vs column generation, 002 §4.1), FCS and n = 20 NPZ loading side by side in one run.

    python benchmarks/bench_opt.py [--n-min 8] [--n-max 20] [--direct-max 19] [--repeats 3] [--seed 0]

Prints a Markdown table; `direct/colgen` is the ratio of the median solver times measured in this run.
The direct LP is skipped above --direct-max (default 19; n = 19 already takes ~10 s, 170x colgen).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from tqdm import tqdm

from cosched.strategies.fcs import FCS
from cosched.strategies.schedule import execute
from cosched.theory.generators import random_instance
from cosched.theory.instance import load_instance, save_instance
from cosched.theory.opt import solve_opt


def median_seconds(function, repeats: int):
    """Median wall time of `repeats` calls and the last result."""
    times, result = [], None
    for _ in range(repeats):
        started = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - started)
    return statistics.median(times), result


def cell(value, spec: str, unit: str = "") -> str:
    return "skipped" if value is None else f"{value:{spec}}{unit}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-min", type=int, default=8)
    parser.add_argument("--n-max", type=int, default=20)
    parser.add_argument("--direct-max", type=int, default=19, help="largest n solved with the direct LP")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--alpha", type=float, nargs=2, default=(0.75, 0.85))
    args = parser.parse_args(argv)

    warm_up = random_instance(4, seed=0)
    solve_opt(warm_up, "direct"), solve_opt(warm_up, "colgen"), execute(warm_up, FCS())  # imports, caches
    rows = []
    for n in tqdm(range(args.n_min, args.n_max + 1), desc="n", file=sys.stderr):
        generate_s, instance = median_seconds(lambda: random_instance(n, alpha=args.alpha, seed=args.seed), 1)
        colgen_s, colgen = median_seconds(lambda: solve_opt(instance, "colgen"), args.repeats)
        direct_s, direct = None, None
        if n <= args.direct_max:
            direct_s, direct = median_seconds(lambda: solve_opt(instance, "direct"), 1 if n >= 17 else args.repeats)
        fcs_s, fcs = median_seconds(lambda: execute(instance, FCS()), args.repeats)
        with tempfile.TemporaryDirectory() as folder:
            path = save_instance(instance, Path(folder) / "instance.npz")
            load_s, _ = median_seconds(lambda: load_instance(path), args.repeats)
        rows.append({
            "n": n, "m": instance.m, "generate_s": generate_s, "direct_s": direct_s, "colgen_s": colgen_s,
            "rounds": colgen.iterations, "ratio": direct_s / colgen_s if direct_s else None,
            "rel_diff": abs(direct.makespan - colgen.makespan) / direct.makespan if direct else None,
            "fcs_s": fcs_s, "fcs_ratio": fcs.makespan / colgen.makespan, "load_s": load_s,
        })

    print("| n | combinations | generate (s) | OPT direct (s) | OPT colgen (s) | colgen rounds | direct/colgen "
          "| rel. diff | FCS (s) | FCS/OPT | load+validate NPZ (s) |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        print(f"| {row['n']} | {row['m']:,} | {row['generate_s']:.3f} | {cell(row['direct_s'], '.3f')} | "
              f"{row['colgen_s']:.4f} | {row['rounds']} | {cell(row['ratio'], '.1f', 'x')} | "
              f"{cell(row['rel_diff'], '.1e')} | {row['fcs_s']:.4f} | {row['fcs_ratio']:.4f} | {row['load_s']:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
