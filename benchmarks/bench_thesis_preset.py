"""The whole `experiment-sim --preset thesis --workers 2` against an earlier version, side by side
in one run, and whether both wrote the same results.

Each round runs the command once per version, alternately (A B A B ...), so both see the same load.
For each run: the wall time and the CPU time of the command and its worker processes (what the runs
cost on idle cores; the machine may be shared, so the wall time can be several times larger). Then
one experiment of the preset, every scheduler in turn, in one process per version: the CPU seconds
of each simulation. Last, the output folders of the two versions' first runs are compared file by
file: identical except the measured `wall_seconds` column and the order in which the workers
finished cells (grid.csv and grid.done are compared sorted). Target: the whole command under 10 s.

    python benchmarks/bench_thesis_preset.py --before-python OLD_VENV/bin/python [--repeat 2]

Without --before-python only this installation runs (and nothing is compared).
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

TARGET = 10.0  # seconds of the whole command with 2 workers
MEASURED = "wall_seconds"  # the only column that may differ between two runs of one version

# one experiment of the thesis preset, every scheduler in turn: prints {scheduler: CPU seconds}
PROBE = """
import json, time, warnings
from cosched.simulator.experiment import experiment_workload, preset_spec
from cosched.simulator.schedulers import make_scheduler
from cosched.simulator.simulation import simulate
warnings.simplefilter("ignore")
spec = preset_spec("thesis", experiments=1)
workload = experiment_workload(spec, 0)
seconds = {}
for name in spec.schedulers:
    scheduler = make_scheduler(name, **spec.scheduler_options())
    clock = time.process_time()
    simulate(workload, spec.platform, scheduler, heatmap=spec.heatmap,
             alone_speedup=spec.alone_speedup, placement=spec.placement,
             use_run_times=spec.use_run_times)
    seconds[name] = time.process_time() - clock
print(json.dumps(seconds))
"""


def whole_command(cosched: str, out: Path) -> tuple[float, float]:
    """Wall and CPU seconds (the command and its workers) of one run writing into `out`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    clock = time.perf_counter()
    subprocess.run(
        [cosched, "experiment-sim", "--preset", "thesis", "--workers", "2"]
        + ["--out", str(out), "--quiet"],
        check=True,
        capture_output=True,
        cwd=tempfile.gettempdir(),  # not a checkout: its files must not shadow the installation
    )
    wall = time.perf_counter() - clock
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def per_scheduler(python: str) -> dict[str, float]:
    done = subprocess.run(
        [python, "-c", PROBE],
        check=True,
        capture_output=True,
        text=True,
        cwd=tempfile.gettempdir(),
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def differences(before: Path, after: Path) -> list[str]:
    """The files of two output folders whose results differ (measured times and cell order
    aside)."""
    names = sorted(
        str(path.relative_to(folder))
        for folder in (before, after)
        for path in folder.rglob("*")
        if path.is_file()
    )
    differ = []
    for name in dict.fromkeys(names):
        one, two = before / name, after / name
        if not (one.exists() and two.exists()):
            differ.append(name)
        elif name.endswith(".csv") and name.startswith(("grid", "runs")):
            frames = [pd.read_csv(path).drop(columns=[MEASURED]) for path in (one, two)]
            if name.startswith("grid"):  # appended in the order the workers finished
                frames = [frame.sort_values(["experiment", "scheduler"]) for frame in frames]
            if not frames[0].reset_index(drop=True).equals(frames[1].reset_index(drop=True)):
                differ.append(name)
        elif name.startswith("grid.done"):
            if sorted(one.read_text().splitlines()) != sorted(two.read_text().splitlines()):
                differ.append(name)
        elif not filecmp.cmp(one, two, shallow=False):
            differ.append(name)
    return differ


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before-python", help="Python of the earlier installation")
    parser.add_argument("--repeat", type=int, default=2, help="rounds (median)")
    args = parser.parse_args(argv)
    versions = {"this": sys.executable}
    if args.before_python:
        versions = {"before": args.before_python, **versions}
    commands = {name: str(Path(python).parent / "cosched") for name, python in versions.items()}
    print(f"load average at start: {' '.join(f'{v:.1f}' for v in os.getloadavg())}")
    work = Path(tempfile.mkdtemp(prefix="bench_thesis_"))
    try:
        walls: dict[str, list[float]] = {name: [] for name in versions}
        cpus: dict[str, list[float]] = {name: [] for name in versions}
        for round_ in range(args.repeat):
            for name, command in commands.items():
                wall, cpu = whole_command(command, work / f"{name}{round_}")
                walls[name].append(wall)
                cpus[name].append(cpu)
        print(f"\ncosched experiment-sim --preset thesis --workers 2; median of {args.repeat}")
        print("| version | wall [s] | CPU, command and workers [s] | target [s] | |")
        print("|---|---:|---:|---:|---|")
        for name in versions:
            wall, cpu = statistics.median(walls[name]), statistics.median(cpus[name])
            verdict = "met" if wall < TARGET else "missed"
            print(f"| {name} | {wall:.1f} | {cpu:.1f} | {TARGET:.0f} | {verdict} |")
        seconds = {name: per_scheduler(python) for name, python in versions.items()}
        print("\nOne experiment (1,000 jobs), CPU seconds of each simulation")
        print("| scheduler | " + " | ".join(versions) + " |")
        print("|---|" + "---:|" * len(versions))
        for scheduler in seconds["this"]:
            row = " | ".join(f"{seconds[name].get(scheduler, 0.0):.3f}" for name in versions)
            print(f"| {scheduler} | {row} |")
        totals = " | ".join(f"{sum(seconds[name].values()):.3f}" for name in versions)
        print(f"| total | {totals} |")
        if args.before_python:
            differ = differences(work / "before0", work / "this0")
            print(
                "\noutput folders: "
                + ("identical results" if not differ else f"DIFFER in {', '.join(differ)}")
            )
            print(f"load average at end: {' '.join(f'{v:.1f}' for v in os.getloadavg())}")
            return 1 if differ else 0
        print(f"load average at end: {' '.join(f'{v:.1f}' for v in os.getloadavg())}")
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
