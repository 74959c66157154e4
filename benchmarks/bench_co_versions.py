"""Co-schedulers, Conservative backfilling and the thesis preset against an earlier version, side by
side in one run.

Three cases, each run alternately by this installation and by the earlier one (A B A B ...), so both
see the same load (the machine may be shared: compare the ratios more than the times):

- SDSC-SP2 co-scheduled: plain EASY, `easy-co` and `filler` on SDSC-SP2-1998 (../shared/data/swf)
  with the bundled `aris-nas` heatmap. The trace has no application column and one core per node, so
  each job gets an application of the heatmap drawn uniformly (seed 1), and the platform is the
  trace's 128 processors as 64 nodes of 2 cores (half-socket binding needs an even core count).
  Simulation time (`wall_seconds`) and CPU time of the simulation; target: each co-scheduler at most
  3x plain EASY's time of the same version.
- RICC-2010 under Conservative backfilling: the simulation time of `cosched simulate --scheduler
  conservative` (target: under 10 s).
- The whole `cosched experiment-sim --preset thesis --workers 2` command (target: under 10 s).

    python benchmarks/bench_co_versions.py --before-python OLD_VENV/bin/python [--repeat 3]
    python benchmarks/bench_co_versions.py --cases sdsc-co --limit 15000   # a quicker look

Without --before-python only this installation runs. The earlier version's `cosched` command is
taken from the folder of its Python.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from data_paths import SHARED_DATA

SWF = SHARED_DATA / "swf"
RICC = SWF / "RICC-2010-2.swf.gz"
CO_SCHEDULERS = ("easy", "easy-co", "filler")
CO_RATIO_TARGET = 3.0  # co-scheduler time / plain EASY time, same version
RICC_TARGET = 10.0  # seconds of simulation
THESIS_TARGET = 10.0  # seconds of the whole command with 2 workers
CASES = ("sdsc-co", "ricc", "thesis")

PROBE = Path(__file__).with_name("probe_loop.py")  # one run in a fresh process


def probe(python: str, scheduler: str, limit: int) -> dict:
    done = subprocess.run(
        [python, str(PROBE), scheduler, "sdsc-co", "--limit", str(limit), "--json"],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def ricc_seconds(cosched: str) -> float:
    done = subprocess.run(
        [cosched, "simulate", "--workload", str(RICC), "--platform", "ricc"]
        + ["--scheduler", "conservative", "--quiet", "--json"],
        check=True,
        capture_output=True,
        text=True,
        cwd=tempfile.gettempdir(),
    )
    return float(json.loads(done.stdout)["wall_seconds"])


def thesis_seconds(cosched: str) -> float:
    with tempfile.TemporaryDirectory() as folder:
        clock = time.perf_counter()
        subprocess.run(
            [cosched, "experiment-sim", "--preset", "thesis", "--workers", "2"]
            + ["--out", str(Path(folder) / "thesis"), "--quiet"],
            check=True,
            capture_output=True,
            cwd=tempfile.gettempdir(),
        )
        return time.perf_counter() - clock


def alternate(versions: dict, measure, repeat: int) -> dict:
    """`repeat` rounds of `measure(version)` for each version in turn; the medians per version."""
    values: dict[str, list] = {name: [] for name in versions}
    for _ in range(repeat):
        for name, where in versions.items():
            values[name].append(measure(where))
    return {name: statistics.median(found) for name, found in values.items()}


def sdsc_co(versions: dict, repeat: int, limit: int) -> None:
    pythons = {name: where[0] for name, where in versions.items()}
    wall: dict = {name: {} for name in versions}
    cpu: dict = {name: {} for name in versions}
    for _ in range(repeat):
        for scheduler in CO_SCHEDULERS:
            for name, python in pythons.items():
                found = probe(python, scheduler, limit)
                wall[name].setdefault(scheduler, []).append(found["wall"])
                cpu[name].setdefault(scheduler, []).append(found["cpu"])
    jobs = f"first {limit:,} jobs" if limit else "all jobs"
    print(
        f"\nSDSC-SP2 ({jobs}), 64 nodes x 2 cores, aris-nas applications drawn uniformly "
        f"(seed 1); median of {repeat}; ratio = scheduler / plain EASY of the same version"
    )
    print(
        "| version | scheduler | simulation [s] | CPU [s] | ratio (wall) | ratio (CPU) | target |"
    )
    print("|---|---|---:|---:|---:|---:|---|")
    for name in versions:
        easy_wall = statistics.median(wall[name]["easy"])
        easy_cpu = statistics.median(cpu[name]["easy"])
        for scheduler in CO_SCHEDULERS:
            w, c = statistics.median(wall[name][scheduler]), statistics.median(cpu[name][scheduler])
            ratio, cpu_ratio = w / easy_wall, c / easy_cpu
            verdict = (
                "" if scheduler == "easy" else ("met" if ratio <= CO_RATIO_TARGET else "missed")
            )
            print(
                f"| {name} | {scheduler} | {w:.2f} | {c:.2f} | {ratio:.1f} | {cpu_ratio:.1f} | "
                f"{verdict} |"
            )


def report(title: str, medians: dict, target: float) -> None:
    print(f"\n{title}")
    print("| version | seconds | target [s] | |")
    print("|---|---:|---:|---|")
    for name, seconds in medians.items():
        verdict = "met" if seconds < target else "missed"
        print(f"| {name} | {seconds:.1f} | {target:.0f} | {verdict} |")
    if len(medians) == 2:
        before, after = medians.values()
        print(f"\nearlier / this version: {before / after:.2f}x")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before-python", help="Python of the earlier installation")
    parser.add_argument("--repeat", type=int, default=3, help="rounds per case (median)")
    parser.add_argument(
        "--cases", default=",".join(CASES), help=f"comma-separated, of {', '.join(CASES)}"
    )
    parser.add_argument(
        "--limit", type=int, default=0, help="sdsc-co: only the first N jobs (0: all)"
    )
    args = parser.parse_args(argv)
    cases = [case for case in args.cases.split(",") if case]
    unknown = sorted(set(cases) - set(CASES))
    if unknown:
        parser.error(f"unknown cases {unknown}; known: {', '.join(CASES)}")
    this = (sys.executable, str(Path(sys.executable).with_name("cosched")))
    versions = {"this": this}
    if args.before_python:
        before = (args.before_python, str(Path(args.before_python).with_name("cosched")))
        versions = {"before": before, "this": this}
    load = os.getloadavg()
    print(f"load average at start: {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    if "sdsc-co" in cases:
        sdsc_co(versions, args.repeat, args.limit)
    if "ricc" in cases:
        medians = alternate(versions, lambda where: ricc_seconds(where[1]), args.repeat)
        report("RICC-2010, Conservative backfilling (simulation time)", medians, RICC_TARGET)
    if "thesis" in cases:
        medians = alternate(versions, lambda where: thesis_seconds(where[1]), args.repeat)
        report(
            "cosched experiment-sim --preset thesis --workers 2 (whole command)",
            medians,
            THESIS_TARGET,
        )
    load = os.getloadavg()
    print(f"\nload average at end: {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
