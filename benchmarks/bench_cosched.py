"""Co-scheduling speed: one 1000-job co-scheduled run on ARIS, and the thesis grid.

Side by side in one run: each co-scheduler against classic EASY on the same 1000-job workload
(ratio = co-scheduler time / EASY time; target: every co-scheduled run under 2 s), then the thesis
grid (every scheduler of experiment-sim) x 10 experiments x 1000 jobs on the bundled example heatmap
(target: under 5 minutes), in local worker processes. Timings are medians over --repeat runs; the
machine is shared, so compare ratios.

    python benchmarks/bench_cosched.py [--repeat 3] [--heatmap FILE] [--no-grid] [--workers 2]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
import warnings
from pathlib import Path

from cosched.data import HEATMAPS, data_path

# bundled: the measured ELiSE ARIS NAS heatmap (preset aris-nas)
ARIS_NAS = data_path(HEATMAPS["aris-nas"])
RUN_TARGET = 2.0  # seconds for one 1000-job co-scheduled run on ARIS
# schedulers with a target of their own (a maximum-weight matching per pass)
RUN_TARGETS = {"matching": 5.0}
GRID_TARGET = 300.0  # seconds for the thesis grid x 10 experiments x 1000 jobs


def median_time(function, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        clock = time.perf_counter()
        function()
        times.append(time.perf_counter() - clock)
    return statistics.median(times)


def single_runs(heatmap_path: Path, repeat: int) -> None:
    from cosched.simulator.generate import ApplicationSeed, generate_workload
    from cosched.simulator.platform import PRESETS
    from cosched.simulator.schedulers import COSCHEDULERS
    from cosched.simulator.simulation import simulate
    from cosched.theory.heatmap import read_heatmap

    warnings.simplefilter("ignore")
    heatmap = read_heatmap(heatmap_path, default=1.0)
    workload = generate_workload(ApplicationSeed.from_heatmap(heatmap), 1000, rng_seed=1)
    platform = PRESETS["aris"]
    easy = median_time(lambda: simulate(workload, platform, "easy", use_run_times=True), repeat)
    print(
        f"\n1000 jobs (batch), ARIS 420 x 20 cores, heatmap {heatmap_path.name} "
        f"({len(heatmap)} apps); median of {repeat}"
    )
    print("| scheduler | wall [s] | vs EASY (x) | target [s] | |")
    print("|---|---|---|---|---|")
    verdict = "ok" if easy < RUN_TARGET else "MISSED"
    print(f"| easy (classic) | {easy:.3f} | 1.0 | {RUN_TARGET:.0f} | {verdict} |")
    for name in COSCHEDULERS:
        wall = median_time(
            lambda name=name: simulate(
                workload, platform, name, heatmap=heatmap, use_run_times=True
            ),
            repeat,
        )
        target = RUN_TARGETS.get(name, RUN_TARGET)
        verdict = "ok" if wall < target else "MISSED"
        print(f"| {name} | {wall:.3f} | {wall / easy:.1f} | {target:.0f} | {verdict} |")


def grid(workers: int | None) -> None:
    from cosched.simulator.experiment import preset_spec, run_experiment

    spec = preset_spec("example")
    runs = spec.experiments * len(spec.schedulers)
    with tempfile.TemporaryDirectory() as out:
        clock = time.perf_counter()
        run_experiment(spec, out, workers=workers, progress=False, plots=False)
        wall = time.perf_counter() - clock
        clock = time.perf_counter()
        # resumes: tables + plots only
        run_experiment(spec, out, workers=workers, progress=False, plots=True)
        plots = time.perf_counter() - clock
    print(
        f"\nthesis grid: {len(spec.schedulers)} schedulers x {spec.experiments} experiments"
        f" x {spec.jobs} jobs = {runs} runs, {workers or 'all'} worker processes"
    )
    print("| part | wall [s] | target [s] | share of target |")
    print("|---|---|---|---|")
    print(f"| {runs} runs | {wall:.1f} | {GRID_TARGET:.0f} | {wall / GRID_TARGET:.2f} |")
    print(f"| tables + plots | {plots:.1f} | | |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--heatmap", type=Path, help="heatmap CSV (default: the bundled real ARIS NAS heatmap)"
    )
    parser.add_argument("--no-grid", action="store_true")
    parser.add_argument("--workers", type=int, default=None)
    args = parser.parse_args()
    from cosched.simulator.data import EXAMPLE_HEATMAP, example_path

    path = args.heatmap or ARIS_NAS
    single_runs(path, args.repeat)
    if path != example_path(EXAMPLE_HEATMAP):
        single_runs(example_path(EXAMPLE_HEATMAP), args.repeat)
    if not args.no_grid:
        grid(args.workers)


if __name__ == "__main__":
    main()
