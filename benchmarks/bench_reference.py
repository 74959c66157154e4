"""cosched's EASY simulation against a compiled C++ reference with the same rules, side by side.

Compiles `benchmarks/reference/easy.cpp` with g++ (or $CXX), then, on SDSC-SP2 and CEA-Curie
(../shared/data/swf, see data_paths.py):

1. checks that the reference and cosched give every job the identical start time (exact floats),
   in each mode of cosched that is installed: "compiled" (the hot modules built by `pip install .`)
   and "pure" (the same install with COSCHED_PURE_PYTHON=1; an editable install has this mode only);
2. times the simulation alone (after loading the trace), alternating reference / compiled / pure,
   each cosched run in a fresh process with one OpenBLAS thread (as the `cosched` command runs): CPU
   seconds (not inflated by other load on a shared machine) and wall seconds, medians of --repeat;
   prints cosched / reference (target <= 3 on both traces);
3. times the whole `cosched simulate` command on SDSC-SP2 (a fresh process, trace cache and
   bytecode warm, PYTHONDONTWRITEBYTECODE unset as on a user's machine; jobs.csv and summary.json
   written) in each mode, CPU and wall seconds (target < 0.4 s).

    python benchmarks/bench_reference.py [--repeat 3] [--traces sdsc-sp2,curie] [--no-command]

The reference is a yardstick for this script only; the package never uses it. cosched runs are
started from a temporary folder, so they import the installed package, not this checkout's source.
Exit status 1 if a start time differs.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from data_paths import REPO, SHARED_DATA

from cosched.simulator.platform import PRESETS
from cosched.simulator.workload import read_swf

SOURCE = REPO / "benchmarks" / "reference" / "easy.cpp"
TRACES = {
    "sdsc-sp2": ("SDSC-SP2-1998-4.2-cln.swf.gz", "sdsc-sp2"),
    "curie": ("CEA-Curie-2011-2.1-cln.swf.gz", "curie"),
}
DEPTH = 100  # the engine's default EASY depth (schedulers.base.DEFAULT_DEPTH)
RATIO_TARGET = 3.0  # cosched / reference, simulation alone
COMMAND_TARGET = 0.4  # seconds, the whole `cosched simulate` command on SDSC-SP2
PROBE = """
import json, sys, time
import numpy as np
from cosched._compiled import compiled_modules
from cosched.simulator.simulation import simulate
from cosched.simulator.platform import PRESETS
from cosched.simulator.workload import read_swf
trace, preset, starts = sys.argv[1:4]
platform = PRESETS[preset]
workload = read_swf(trace, max_cores=platform.total_cores)
used, clock = time.process_time(), time.perf_counter()
result = simulate(workload, platform, "easy")
cpu, wall = time.process_time() - used, time.perf_counter() - clock
if starts:
    np.save(starts, result.start)
print(json.dumps({"cpu": cpu, "wall": wall, "compiled": all(compiled_modules().values())}))
"""


def compile_reference(folder: Path) -> Path:
    """The reference built with optimisation into `folder`."""
    compiler = os.environ.get("CXX", "g++")
    binary = folder / "easy"
    subprocess.run([compiler, "-O2", "-std=c++17", "-o", str(binary), str(SOURCE)], check=True)
    return binary


def write_input(workload, platform, path: Path) -> None:
    """The reference's input: the platform, then the cleaned jobs in workload order (exact
    floats)."""
    with open(path, "w") as handle:
        handle.write(f"{platform.nodes} {platform.cores_per_node} {len(workload)} {DEPTH}\n")
        for row in zip(
            workload.submit.tolist(),
            workload.run.tolist(),
            workload.estimate.tolist(),
            workload.cores.tolist(),
        ):
            handle.write("{!r} {!r} {!r} {}\n".format(*row))


def run_reference(binary: Path, jobs: Path, starts: Path | None = None) -> dict:
    with open(jobs) as handle:
        done = subprocess.run(
            [str(binary), *([str(starts)] if starts else [])],
            stdin=handle,
            capture_output=True,
            text=True,
            check=True,
        )
    timing = json.loads(done.stdout)
    return {"cpu": timing["cpu_seconds"], "wall": timing["seconds"]}


def modes() -> dict[str, dict]:
    """The installed modes of cosched: environments for the probe processes."""
    base = {k: v for k, v in os.environ.items() if k != "COSCHED_PURE_PYTHON"}
    # as `cosched simulate` sets it before numpy's import (cosched.cli.SERIAL_BLAS_COMMANDS):
    # else numpy's idle OpenBLAS worker spins for about 0.1 s of CPU after the probe imports numpy,
    # during the simulation, and counts in its CPU seconds
    base["OPENBLAS_NUM_THREADS"] = "1"
    found = {"pure": {**base, "COSCHED_PURE_PYTHON": "1"}}
    probe = subprocess.run(
        [sys.executable, "-c", "from cosched._compiled import compiled_modules as c; "
         "print(all(c().values()))"],
        capture_output=True, text=True, check=True, cwd=tempfile.gettempdir(), env=base,
    )  # fmt: skip
    if probe.stdout.strip() == "True":
        found = {"compiled": base, **found}
    return found


def run_cosched(trace: Path, preset: str, environment: dict, starts: Path | None = None) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(trace), preset, str(starts or "")],
        capture_output=True,
        text=True,
        check=True,
        cwd=tempfile.gettempdir(),
        env=environment,
    )
    return json.loads(done.stdout)


def check_starts(reference: Path, cosched: Path) -> int:
    """How many jobs start at another time in the two runs (exact comparison)."""
    expected = np.loadtxt(reference, dtype=np.float64, ndmin=1)
    found = np.load(cosched)
    if expected.shape != found.shape:
        return max(expected.size, found.size)
    return int(np.count_nonzero(expected != found))


def bench_trace(name: str, binary: Path, folder: Path, environments: dict, repeat: int) -> bool:
    file, preset = TRACES[name]
    trace = SHARED_DATA / "swf" / file
    platform = PRESETS[preset]
    workload = read_swf(trace, max_cores=platform.total_cores)
    jobs = folder / f"{name}.jobs"
    write_input(workload, platform, jobs)
    print(f"{name}: {len(workload)} jobs, {platform.nodes} nodes x {platform.cores_per_node} cores")
    run_reference(binary, jobs, folder / f"{name}.ref")
    identical = True
    for mode, environment in environments.items():
        run_cosched(trace, preset, environment, folder / f"{name}.{mode}.npy")
        differ = check_starts(folder / f"{name}.ref", folder / f"{name}.{mode}.npy")
        identical &= differ == 0
        verdict = "identical" if differ == 0 else f"{differ} jobs DIFFER"
        print(f"  start times, {mode} cosched vs reference: {verdict}")
    times: dict[str, list[dict]] = {"reference": [], **{mode: [] for mode in environments}}
    for _ in range(repeat):  # alternating
        times["reference"].append(run_reference(binary, jobs))
        for mode, environment in environments.items():
            times[mode].append(run_cosched(trace, preset, environment))
    median = {
        who: {kind: statistics.median(run[kind] for run in runs) for kind in ("cpu", "wall")}
        for who, runs in times.items()
    }
    reference = median["reference"]
    print(f"  {'':<10} {'CPU s':>9} {'wall s':>9} {'CPU ratio':>10} {'wall ratio':>11}")
    for who, seconds in median.items():
        cpu_ratio = seconds["cpu"] / reference["cpu"]
        wall_ratio = seconds["wall"] / reference["wall"]
        target = (
            ""
            if who == "reference"
            else f"  target <= {RATIO_TARGET:g}: "
            + ("met" if cpu_ratio <= RATIO_TARGET else "missed")
        )
        print(
            f"  {who:<10} {seconds['cpu']:9.3f} {seconds['wall']:9.3f} "
            f"{cpu_ratio:10.1f} {wall_ratio:11.1f}{target}"
        )
    return identical


def bench_command(environments: dict, repeat: int, folder: Path) -> None:
    file, preset = TRACES["sdsc-sp2"]
    command = [sys.executable, "-m", "cosched", "simulate", "--workload",
               str(SHARED_DATA / "swf" / file), "--platform", preset, "--scheduler", "easy",
               "--quiet", "--out", str(folder / "out")]  # fmt: skip
    environments = {  # bytecode written and read, as a user's Python does
        mode: {k: v for k, v in environment.items() if k != "PYTHONDONTWRITEBYTECODE"}
        for mode, environment in environments.items()
    }
    times: dict[str, list[float]] = {mode: [] for mode in environments}
    cpu: dict[str, list[float]] = {mode: [] for mode in environments}
    for environment in environments.values():  # warm: bytecode and the parsed-trace cache
        subprocess.run(command, check=True, capture_output=True, cwd=folder, env=environment)
    for _ in range(repeat):
        for mode, environment in environments.items():
            used, clock = _children_cpu(), time.perf_counter()
            subprocess.run(command, check=True, capture_output=True, cwd=folder, env=environment)
            times[mode].append(time.perf_counter() - clock)
            cpu[mode].append(_children_cpu() - used)
    print("whole `cosched simulate --scheduler easy` on SDSC-SP2 (medians):")
    for mode in environments:
        wall, used = statistics.median(times[mode]), statistics.median(cpu[mode])
        verdict = "met" if used < COMMAND_TARGET else "missed"
        print(
            f"  {mode:<10} {used:6.3f} s CPU {wall:6.3f} s wall  "
            f"target < {COMMAND_TARGET:g} s (CPU): {verdict}"
        )


def _children_cpu() -> float:
    """CPU seconds of the finished child processes so far (not inflated by other load)."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="timed runs of each (median)")
    parser.add_argument(
        "--traces", default="sdsc-sp2,curie", help="comma-separated: " + ",".join(TRACES)
    )
    parser.add_argument("--no-command", action="store_true", help="skip the whole-command timing")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="cosched-reference-"))
    try:
        binary = compile_reference(folder)
        environments = modes()
        print(f"cosched modes: {', '.join(environments)}; load average {os.getloadavg()[0]:.1f}")
        identical = all(  # every trace is run, even after a difference
            [
                bench_trace(name, binary, folder, environments, args.repeat)
                for name in args.traces.split(",")
            ]
        )
        if not args.no_command:
            bench_command(environments, args.repeat, folder)
        print(f"load average at the end {os.getloadavg()[0]:.1f}")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return 0 if identical else 1


if __name__ == "__main__":
    sys.exit(main())
