"""Time of the makespan lower bound (`cosched.simulator.bounds`) against its targets, in one run.

Two cases: a 1,000-job thesis workload drawn from the ARIS NAS heatmap (bundled preset aris-nas,
ARIS 420 x 20 cores, default speedup 1.0 for unmeasured pairs), with all jobs at 0 (batch, one LP)
and with Poisson arrivals (one release date per job: the incremental dual bound); target under 2 s
each. And SDSC-SP2-1998 (54k jobs, no heatmap: the area and release-date bound) from
../shared/data/swf (or COSCHED_SWF_DIR); target under 5 s. The time is the bound alone (loading the
workload is reported beside it), the median of --repeat calls after one warm-up call (imports of
scipy and the LP solver).

    python benchmarks/bench_bound.py
    python benchmarks/bench_bound.py --repeat 5
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from data_paths import SHARED_DATA  # noqa: E402  (the script's folder is on sys.path)

DATA = (
    Path(os.environ["COSCHED_SWF_DIR"]) if "COSCHED_SWF_DIR" in os.environ else SHARED_DATA / "swf"
)
SDSC = DATA / "SDSC-SP2-1998-4.2-cln.swf.gz"
TARGETS = {"thesis": 2.0, "sdsc": 5.0}  # seconds


def timed(call, repeat: int):
    """(median seconds, last result) of `repeat` calls."""
    times, result = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        result = call()
        times.append(time.perf_counter() - started)
    return statistics.median(times), result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="calls per case (median; default 3)")
    args = parser.parse_args()

    from cosched.simulator.bounds import bound_for
    from cosched.simulator.compare import load_inputs
    from cosched.simulator.generate import ApplicationSeed, generate_workload
    from cosched.simulator.platform import load_platform
    from cosched.theory.heatmap import MissingPairsWarning, read_heatmap

    warnings.simplefilter("ignore", MissingPairsWarning)
    heatmap = read_heatmap("aris-nas", default=1.0)
    aris = load_platform("aris")
    seed = ApplicationSeed.from_heatmap(heatmap)
    rows = []
    for arrivals in ("batch", "poisson"):
        started = time.perf_counter()
        workload = generate_workload(seed, 1000, interarrival=arrivals, mean=60.0, rng_seed=0)
        load = time.perf_counter() - started
        bound_for(workload, aris, heatmap)  # warm-up: imports
        seconds, result = timed(lambda w=workload: bound_for(w, aris, heatmap), args.repeat)
        rows.append(
            (
                f"thesis 1,000 jobs, aris-nas, {arrivals}",
                len(workload),
                load,
                seconds,
                result,
                "thesis",
            )
        )
    if SDSC.exists():
        started = time.perf_counter()
        platform, workload = load_inputs(SDSC, "sdsc-sp2")
        load = time.perf_counter() - started
        seconds, result = timed(lambda: bound_for(workload, platform), args.repeat)
        rows.append(("SDSC-SP2-1998, no heatmap", len(workload), load, seconds, result, "sdsc"))
    else:
        print(f"(SDSC-SP2 skipped: {SDSC} not found)")

    print(
        "| workload | jobs | load [s] | bound [s] | LPs solved | target | ok | bound [h] "
        "| fluid LP [h] |"
    )
    print("|---|---:|---:|---:|---:|---:|---|---:|---:|")
    for name, jobs, load, seconds, result, target in rows:
        print(
            f"| {name} | {jobs} | {load:.3f} | {seconds:.3f} | {result.solves} | "
            f"{TARGETS[target]:.0f} s | "
            f"{'yes' if seconds < TARGETS[target] else 'NO'} | {result.bound / 3600:.2f} | "
            f"{result.fluid / 3600:.2f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
