"""Speed of elastic jobs from an ordinary trace: 50,000 SDSC-SP2 jobs marked malleable, the six
policies of 001 §6.3.

Loads SDSC-SP2-1998 (from ../shared/data/swf), keeps the first 50,000 jobs after cleaning, marks all
of them malleable in [0.5, 2] x their trace size (linear scaling, seed 0), and times each policy
(simulation only, after loading and marking) side by side with classic EASY on the same jobs without
job models (the engine's rigid fast path). Target: every policy under 30 s on a 2-core machine.

    python benchmarks/bench_elastic_traces.py
    python benchmarks/bench_elastic_traces.py --jobs 10000 --repeat 3 --scaling amdahl
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from data_paths import SHARED_DATA  # noqa: E402  (the script's folder is on sys.path)

from cosched.simulator.elastic.traces import ElasticMarking, elastic_models  # noqa: E402
from cosched.simulator.platform import PRESETS  # noqa: E402
from cosched.simulator.schedulers import ELASTIC  # noqa: E402
from cosched.simulator.simulation import simulate  # noqa: E402
from cosched.simulator.workload import read_swf  # noqa: E402

TRACE = SHARED_DATA / "swf" / "SDSC-SP2-1998-4.2-cln.swf.gz"
TARGET_SECONDS = 30.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=50_000)
    parser.add_argument(
        "--repeat", type=int, default=1, help="runs per policy (the median is shown)"
    )
    parser.add_argument("--scaling", choices=("linear", "amdahl"), default="linear")
    args = parser.parse_args()
    platform = PRESETS["sdsc-sp2"]
    clock = time.perf_counter()
    workload = read_swf(TRACE, max_cores=platform.total_cores).head(args.jobs)
    loading = time.perf_counter() - clock
    clock = time.perf_counter()
    models = elastic_models(
        workload, platform, ElasticMarking(1.0, "malleable", 0.5, 2.0, args.scaling)
    )
    marking = time.perf_counter() - clock
    print(
        f"SDSC-SP2: {len(workload)} jobs on {platform.nodes} nodes, all malleable in [0.5, 2] x "
        f"trace size, {args.scaling} scaling; load {loading:.2f} s, marking {marking:.3f} s"
    )
    runs = [("easy (rigid, no job models)", "easy", None)] + [
        (name, name, models) for name in ELASTIC
    ]
    baseline = None
    print("| policy | wall [s] | jobs/s | vs rigid EASY | resizes | makespan [d] | target 30 s |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for label, name, job_models in runs:
        walls, result = [], None
        for _ in range(args.repeat):
            result = simulate(workload, platform, name, job_models=job_models)
            walls.append(result.wall_seconds)
        wall = statistics.median(walls)
        baseline = baseline or wall
        resizes = sum(result.lifecycle["resizes"]) if result.lifecycle else 0
        verdict = "ok" if wall < TARGET_SECONDS else "MISSED"
        print(
            f"| {label} | {wall:.2f} | {len(workload) / wall:,.0f} | {wall / baseline:.1f} | "
            f"{resizes} | {result.makespan / 86400:.1f} | {verdict} |"
        )


if __name__ == "__main__":
    main()
