"""Time OPT (direct LP vs column generation, 002 §4.1), FCS and n = 20 NPZ loading side by side in
one run.

    python benchmarks/bench_opt.py [--n-min 8] [--n-max 20] [--direct-max 19] [--repeats 3] \
        [--seed 0]
    python benchmarks/bench_opt.py --scale-only [--scale 1e-11]

Prints a Markdown table; `direct/colgen` is the ratio of the median solver times measured in this
run. The direct LP is skipped above --direct-max (default 19; n = 19 already takes ~10 s, 170x
colgen). A second table checks scale invariance, OPT(c b) = c OPT(b): for random instances n = 4..10
(seeds 0..9) with the work vector scaled by c (default 1e-11), the worst relative makespan error and
the worst relative error in any task's work done, per backend; an instance whose scaled solve raises
counts as refused.
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
from cosched.theory.instance import Instance, load_instance, save_instance
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
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--n-min", type=int, default=8)
    parser.add_argument("--n-max", type=int, default=20)
    parser.add_argument(
        "--direct-max", type=int, default=19, help="largest n solved with the direct LP"
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--alpha", type=float, nargs=2, default=(0.75, 0.85))
    parser.add_argument(
        "--scale", type=float, default=1e-11, help="factor c of the scale-invariance check"
    )
    parser.add_argument("--scale-only", action="store_true", help="only the scale-invariance table")
    args = parser.parse_args(argv)
    if args.scale_only:
        print_scale_check(args.scale)
        return 0

    warm_up = random_instance(4, seed=0)
    # imports, caches
    (
        solve_opt(warm_up, "direct"),
        solve_opt(warm_up, "colgen"),
        execute(warm_up, FCS()),
    )
    rows = []
    for n in tqdm(range(args.n_min, args.n_max + 1), desc="n", file=sys.stderr):
        generate_s, instance = median_seconds(
            lambda n=n: random_instance(n, alpha=args.alpha, seed=args.seed), 1
        )
        colgen_s, colgen = median_seconds(
            lambda instance=instance: solve_opt(instance, "colgen"), args.repeats
        )
        direct_s, direct = None, None
        if n <= args.direct_max:
            direct_s, direct = median_seconds(
                lambda instance=instance: solve_opt(instance, "direct"),
                1 if n >= 17 else args.repeats,
            )
        fcs_s, fcs = median_seconds(
            lambda instance=instance: execute(instance, FCS()), args.repeats
        )
        with tempfile.TemporaryDirectory() as folder:
            path = save_instance(instance, Path(folder) / "instance.npz")
            load_s, _ = median_seconds(lambda path=path: load_instance(path), args.repeats)
        rows.append(
            {
                "n": n,
                "m": instance.m,
                "generate_s": generate_s,
                "direct_s": direct_s,
                "colgen_s": colgen_s,
                "rounds": colgen.iterations,
                "ratio": direct_s / colgen_s if direct_s else None,
                "rel_diff": abs(direct.makespan - colgen.makespan) / direct.makespan
                if direct
                else None,
                "fcs_s": fcs_s,
                "fcs_ratio": fcs.makespan / colgen.makespan,
                "load_s": load_s,
            }
        )

    print(
        "| n | combinations | generate (s) | OPT direct (s) | OPT colgen (s) | colgen "
        "rounds | direct/colgen "
        "| rel. diff | FCS (s) | FCS/OPT | load+validate NPZ (s) |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        print(
            f"| {row['n']} | {row['m']:,} | {row['generate_s']:.3f} | "
            f"{cell(row['direct_s'], '.3f')} | "
            f"{row['colgen_s']:.4f} | {row['rounds']} | {cell(row['ratio'], '.1f', 'x')} | "
            f"{cell(row['rel_diff'], '.1e')} | {row['fcs_s']:.4f} | "
            f"{row['fcs_ratio']:.4f} | {row['load_s']:.3f} |"
        )
    print()
    print_scale_check(args.scale)
    return 0


def scale_errors(factor: float, backend: str, sizes=range(4, 11), seeds=range(10)):
    """Worst |OPT(c b) / (c OPT(b)) - 1| and worst |A x - c b|_i / (c b_i) over the instances, and
    the refusals."""
    makespan_error, work_error, refused = 0.0, 0.0, 0
    for n in sizes:
        for seed in seeds:
            instance = random_instance(n, seed=seed)
            reference = solve_opt(instance, "direct", "highs").makespan
            scaled = Instance(
                instance.work * factor, instance.combinations, instance.speeds, instance.tasks
            )
            try:
                result = solve_opt(scaled, "direct", backend)
            except Exception:  # noqa: BLE001 -- a refusal is a measured outcome here, whatever its type
                refused += 1
                continue
            makespan_error = max(makespan_error, abs(result.makespan / (factor * reference) - 1))
            done = result.schedule.work_done(scaled)
            work_error = max(work_error, float((abs(done - scaled.work) / scaled.work).max()))
    return makespan_error, work_error, refused


def print_scale_check(factor: float) -> None:
    print(
        "| backend | work scaled by | instances | max makespan rel. error | max task "
        "work rel. error | refused |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    for backend in ("highs", "pulp"):
        makespan_error, work_error, refused = scale_errors(factor, backend)
        print(
            f"| {backend} | {factor:g} | 70 | {makespan_error:.2e} | {work_error:.2e} | {refused} |"
        )


if __name__ == "__main__":
    sys.exit(main())
