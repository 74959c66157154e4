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

The phases (each side, medians): the same command run again with a clock at the seams of its steps
(`PHASES`: Python's start, the imports, parsing the command line, reading the trace, the engine's
columns, the event loop, the result's node arrays, the summary, writing the files, the exit), CPU
seconds and page faults of each (a page fault costs system time: the first touch of new memory).
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
# One `cosched simulate` run (the command's own `main`) with a clock at the seams of its steps: the
# named functions are wrapped where they are looked up at run time (module attributes), so every
# step runs as in the plain command. Printed: per phase, CPU seconds (user + system) and page
# faults since the previous seam.
PHASES = """
import resource, sys, time
def _now():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return time.process_time(), usage.ru_minflt
seams = [("Python's start", _now())]
def seam(phase):
    seams.append((phase, _now()))
import atexit, json
import cosched.cli
import cosched.simulator.cli as command
import cosched.simulator.compare, cosched.simulator.trace_window, cosched.outputs
import cosched.simulator.engine as engine, cosched.simulator.jobs_csv as jobs_csv
import cosched.simulator.metrics, cosched.simulator.simulation as simulation
seam("imports (numpy, the CLI, the command's modules)")
def wrap(module, name, before, after=None):
    original = getattr(module, name, None)  # an earlier checkout may lack it
    if original is None:
        return
    def timed(*args, **kwargs):
        seam(before)
        value = original(*args, **kwargs)
        if after:
            seam(after)
        return value
    setattr(module, name, timed)
wrap(command, "_load", "parse the command line, check the outputs", "read the trace (parse cache)")
wrap(simulation, "Engine", "checks, the scheduler and its allocator", "the engine's columns")
wrap(engine, "node_arrays", "the event loop")
wrap(engine, "SimulationResult", "the result's node arrays", "the result's node arrays")
for name in ("jobs_csv_blocks", "jobs_csv_text"):
    wrap(jobs_csv, name, "the summary")
def report():
    seam("write jobs.csv and summary.json")
    phases, previous = {}, (0.0, 0)
    for phase, now in seams:
        cpu, faults = phases.get(phase, (0.0, 0))
        phases[phase] = (cpu + now[0] - previous[0], faults + now[1] - previous[1])
        previous = now
    sys.stderr.write("PHASES " + json.dumps(phases) + "\\n")
atexit.register(report)
sys.argv = ["cosched", *sys.argv[1:]]
sys.exit(cosched.cli.main())
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


def _phases(command: list[str], environment: dict, folder: Path, out: Path) -> dict:
    """CPU seconds and page faults of each phase of one run of `command` (`PHASES`); "exit": the
    process's CPU after its last seam (the interpreter's end, the kernel freeing its memory)."""
    phased = [*command[:2], "-c", PHASES, *command[4:-1], str(out) + "-phases"]
    used = _children_cpu()
    done = subprocess.run(
        phased, check=True, capture_output=True, text=True, env=environment, cwd=folder
    )
    total = _children_cpu() - used
    line = next(line for line in done.stderr.splitlines() if line.startswith("PHASES "))
    phases = json.loads(line.removeprefix("PHASES "))
    phases["exit"] = (total - sum(cpu for cpu, _ in phases.values()), 0)
    phases["whole command"] = (total, sum(faults for _, faults in phases.values()))
    return phases


def _phase_medians(runs: list[dict]) -> dict[str, tuple[float, float]]:
    return {
        phase: tuple(statistics.median(run.get(phase, (0.0, 0))[i] for run in runs) for i in (0, 1))
        for phase in runs[0]
    }


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
        phases: dict[str, list[dict]] = {side: [] for side in runs}
        wall: dict[str, list[float]] = {key: [] for key in cpu}
        for _ in range(args.repeat):  # alternating
            for side, (command, side_environment, _) in runs.items():
                used, clock = _timed(command, side_environment, folder)
                cpu[side].append(used)
                wall[side].append(clock)
            for side, (command, side_environment, out) in runs.items():
                phases[side].append(_phases(command, side_environment, folder, out))
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
        print(
            f"\n| phases, medians of {args.repeat} (fresh processes) | "
            + " | ".join(f"{side}: CPU [s] | faults" for side in runs)
            + " |"
        )
        print("|---|" + "---:|---:|" * len(runs))
        table = {side: _phase_medians(phases[side]) for side in runs}
        for phase in table["this checkout"]:
            cells = [table[side].get(phase, (0.0, 0)) for side in runs]
            shown = " | ".join(f"{seconds:.3f} | {faults:,.0f}" for seconds, faults in cells)
            print(f"| {phase} | {shown} |")
        same = True
        if args.before:
            print()
            same = _same_outputs(runs["this checkout"][2], runs["before"][2])
        print(f"load average at the end {os.getloadavg()[0]:.1f}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
