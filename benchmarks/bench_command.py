"""The whole `cosched simulate` command on SDSC-SP2 under EASY: this checkout against an earlier
one, side by side, and where this checkout's CPU seconds go.

    python benchmarks/bench_command.py --before OLD_CHECKOUT [--repeat 9]
    python benchmarks/bench_command.py                      # this checkout only
    python benchmarks/bench_command.py --before OLD_TREE --after NEW_TREE   # compiled installs

OLD_CHECKOUT is a source tree of cosched (for example `git worktree add /tmp/old main`, or
`git archive COMMIT | tar -x -C /tmp/old`): its modules run as plain Python. To time the compiled
modules, give installed trees instead (`pip install --no-deps --target OLD_TREE OLD_CHECKOUT`, the
same for NEW_TREE): --after replaces this checkout's source. Both sides run as `python -S -m
cosched simulate ...` with PYTHONPATH naming the checkout (or tree) and this Python's
site-packages, so neither goes through an installed or editable cosched; bytecode is read and
written (PYTHONDONTWRITEBYTECODE unset, the cache in a temporary folder) and the parsed-trace cache
is warm, as for a user's second run. The runs alternate; each side's median CPU seconds (user +
system of the finished process: not inflated by other load the way wall seconds are) is printed
with its wall seconds. Then the two sides' jobs.csv are compared byte for byte and their
summary.json key by key (the wall time and the two rates derived from it aside); exit status 1 if
they differ.

The breakdown (this checkout, in one process, CPU seconds, medians): Python's start (`python -S -c
pass`) and numpy's import in fresh processes, then reading the trace from its cache, the
simulation, the summary and the text of jobs.csv.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

from data_paths import REPO, SHARED_DATA

TRACE = SHARED_DATA / "swf" / "SDSC-SP2-1998-4.2-cln.swf.gz"
PLATFORM = "sdsc-sp2"
TARGET = 0.4  # CPU seconds of the whole command (docs/benchmarks.md headline)
TIMED_KEYS = ("wall_seconds", "jobs_per_second", "simulated_days_per_hour")
BREAKDOWN = """
import json, statistics, sys, time
from cosched.simulator.jobs_csv import jobs_csv_text
from cosched.simulator.metrics import summarize
from cosched.simulator.platform import PRESETS
from cosched.simulator.simulation import simulate
from cosched.simulator.workload import read_swf
trace, preset, repeat = sys.argv[1], sys.argv[2], int(sys.argv[3])
platform = PRESETS[preset]
steps = {"read the trace (cache warm)": [], "simulate": [], "summary": [], "jobs.csv text": []}
for _ in range(repeat):
    clock = time.process_time()
    workload = read_swf(trace, max_cores=platform.total_cores)
    steps["read the trace (cache warm)"].append(time.process_time() - clock)
    clock = time.process_time()
    result = simulate(workload, platform, "easy")
    steps["simulate"].append(time.process_time() - clock)
    clock = time.process_time()
    summarize(result)
    steps["summary"].append(time.process_time() - clock)
    clock = time.process_time()
    jobs_csv_text(result)
    steps["jobs.csv text"].append(time.process_time() - clock)
print(json.dumps({step: statistics.median(seconds) for step, seconds in steps.items()}))
"""


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _environment(checkout: Path, bytecode: Path) -> dict:
    environment = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    environment["PYTHONPATH"] = os.pathsep.join([str(checkout), sysconfig.get_paths()["purelib"]])
    environment["PYTHONPYCACHEPREFIX"] = str(bytecode)
    environment["OPENBLAS_NUM_THREADS"] = "1"  # as the command sets it before numpy's import
    return environment


def _timed(command: list[str], environment: dict, folder: Path) -> tuple[float, float]:
    used, clock = _children_cpu(), time.perf_counter()
    subprocess.run(command, check=True, capture_output=True, env=environment, cwd=folder)
    return _children_cpu() - used, time.perf_counter() - clock


def _same_outputs(first: Path, second: Path) -> bool:
    if (first / "jobs.csv").read_bytes() != (second / "jobs.csv").read_bytes():
        print("jobs.csv DIFFERS")
        return False
    summaries = [json.loads((folder / "summary.json").read_text()) for folder in (first, second)]
    for summary in summaries:
        for key in TIMED_KEYS:
            summary.pop(key, None)
    if summaries[0] != summaries[1]:
        print("summary.json DIFFERS")
        return False
    print("jobs.csv identical byte for byte; summary.json identical (wall time aside)")
    return True


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, help="an earlier cosched checkout to compare with")
    parser.add_argument(
        "--after",
        type=Path,
        help="an installed tree (pip --target) to time instead of this checkout",
    )
    parser.add_argument("--repeat", type=int, default=9, help="timed runs of each (median)")
    args = parser.parse_args()
    this = args.after.resolve() if args.after else REPO
    sides = {"this checkout": this, **({"before": args.before.resolve()} if args.before else {})}
    with tempfile.TemporaryDirectory(prefix="cosched-command-") as name:
        folder = Path(name)
        runs = {}
        for side, checkout in sides.items():
            out = folder / side.replace(" ", "-")
            command = [sys.executable, "-S", "-m", "cosched", "simulate", "--workload",
                       str(TRACE), "--platform", PLATFORM, "--scheduler", "easy", "--quiet",
                       "--out", str(out)]  # fmt: skip
            runs[side] = (command, _environment(checkout, folder / "bytecode" / out.name), out)
        probes = {
            "python -S -c pass": [sys.executable, "-S", "-c", "pass"],
            "python -S -c 'import numpy'": [sys.executable, "-S", "-c", "import numpy"],
        }
        environment = runs["this checkout"][1]
        for command, side_environment, _ in runs.values():  # warm: bytecode and the trace cache
            subprocess.run(command, check=True, capture_output=True, env=side_environment)
        cpu: dict[str, list[float]] = {key: [] for key in [*runs, *probes]}
        wall: dict[str, list[float]] = {key: [] for key in cpu}
        for _ in range(args.repeat):  # alternating
            for side, (command, side_environment, _) in runs.items():
                used, clock = _timed(command, side_environment, folder)
                cpu[side].append(used)
                wall[side].append(clock)
            for probe, command in probes.items():
                used, clock = _timed(command, environment, folder)
                cpu[probe].append(used)
                wall[probe].append(clock)
        print(f"load average {os.getloadavg()[0]:.1f}; medians of {args.repeat}, alternating")
        print("| whole `cosched simulate`, SDSC-SP2, EASY | CPU [s] | wall [s] |\n|---|---:|---:|")
        for key in cpu:
            used = statistics.median(cpu[key])
            verdict = f" (target < {TARGET:g} s: {'met' if used < TARGET else 'missed'})"
            label = key + (verdict if key in runs else "")
            print(f"| {label} | {used:.3f} | {statistics.median(wall[key]):.3f} |")
        done = subprocess.run(
            [sys.executable, "-S", "-c", BREAKDOWN, str(TRACE), PLATFORM, str(args.repeat)],
            check=True, capture_output=True, text=True, env=environment,
        )  # fmt: skip
        print("\n| this checkout, in one process | CPU [s] |\n|---|---:|")
        for step, seconds in json.loads(done.stdout).items():
            print(f"| {step} | {seconds:.3f} |")
        same = True
        if args.before:
            print()
            same = _same_outputs(runs["this checkout"][2], runs["before"][2])
        print(f"load average at the end {os.getloadavg()[0]:.1f}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
