"""Cost of the thesis preset's co-scheduling options against the defaults, side by side in one run.

One 1,000-job workload drawn from the ARIS NAS heatmap (batch), ARIS 420 x 20 cores; each
co-scheduler runs with the default options (missing pairs at speedup 1.0, alone at 1.0, reservation
for the sorted head) and with the thesis preset's (`--missing-pair mean --alone-speedup max
--reserve oldest`), alternating, median of `--repeat`. Prints a Markdown table with the ratio thesis
/ default.

    python benchmarks/bench_fidelity.py --repeat 3
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings


def median_time(run, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        clock = time.perf_counter()
        run()
        times.append(time.perf_counter() - clock)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    from cosched.simulator.generate import ApplicationSeed, generate_workload
    from cosched.simulator.platform import PRESETS
    from cosched.simulator.schedulers import make_scheduler
    from cosched.simulator.simulation import simulate
    from cosched.simulator.thesis_tables import THESIS_COSCHEDULERS
    from cosched.theory.heatmap import read_heatmap

    warnings.simplefilter("ignore")
    heatmap = read_heatmap("aris-nas", default=1.0)
    workload = generate_workload(ApplicationSeed.from_heatmap(heatmap), 1000, rng_seed=1)
    platform = PRESETS["aris"]
    variants = {
        "default": ({}, None),
        "thesis": ({"missing_pair": "mean", "reserve": "oldest"}, "max"),
    }
    print(f"1000 jobs (batch), ARIS 420 x 20 cores, aris-nas; median of {args.repeat}")
    print("| scheduler | default [s] | thesis options [s] | thesis / default |")
    print("|---|---:|---:|---:|")
    for name in THESIS_COSCHEDULERS:
        wall = {}
        for variant, (options, alone) in variants.items():
            wall[variant] = median_time(
                lambda name=name, options=options, alone=alone: simulate(
                    workload,
                    platform,
                    make_scheduler(name, **options),
                    heatmap=heatmap,
                    alone_speedup=alone,
                    use_run_times=True,
                ),
                args.repeat,
            )
        print(
            f"| {name} | {wall['default']:.3f} | {wall['thesis']:.3f} | "
            f"{wall['thesis'] / wall['default']:.2f} |"
        )


if __name__ == "__main__":
    main()
