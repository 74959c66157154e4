"""The whole `cosched elastic` command on ElastiSim's example project, beside its simulation and the
real ElastiSim.

Side by side in one run, on the bundled `example` preset (ElastiSim's 500-job example project on 128
nodes with cosched's FCFS algorithm file, `algorithm.py`, which runs unchanged in ElastiSim too):

- the whole command `cosched elastic example --out DIR --json` as a user runs it (a fresh process:
  start-up, parser, imports, loading, simulation, every CSV of the configuration): wall time and the
  CPU time of the process (less inflated than wall time on a shared machine); median of --repeat
  runs;
- the simulation alone inside that command (`wall_seconds` of its summary: event loop and algorithm
  calls);
- the real ElastiSim (C++ on SimGrid + elastisim-python over ZeroMQ) on a copy of the same project
  and the same algorithm file, when it is built (../shared/peers/elastisim: build.sh,
  run_elastisim.sh), run once.

On Linux the command writes the CPU series in a forked child while it writes the other files, when
the 1-minute load average leaves a core idle (`cosched.simulator.elastic.results.written_aside`);
the load average is printed, and `--sequential` also times the command with every file written in
one process, alternating with the default runs.

`--against PYTHON` also times the same command run by another interpreter (an environment with
another version of cosched installed, e.g. an earlier commit in a second worktree), alternating with
this one, and prints the ratio; `--project DIR` times an ElastiSim project folder
(`data/input/configuration.json` and `algorithm.py`, e.g. a micro project of
tests/simulator/elastic/data/micro) instead of the preset.

Targets: the whole command under 1 s on a quiet machine; cosched at least 15x faster than ElastiSim.

    python benchmarks/bench_elastic_cli.py
    python benchmarks/bench_elastic_cli.py --repeat 5 --no-elastisim
    python benchmarks/bench_elastic_cli.py --repeat 5 --no-elastisim --sequential
    python benchmarks/bench_elastic_cli.py --repeat 9 --no-elastisim --against ../old/bin/python
"""

from __future__ import annotations

import argparse
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

ROOT = Path(__file__).resolve().parents[1]
PRESET = ROOT / "simulator" / "elastic" / "presets" / "example"
PEER = ROOT.parent / "shared" / "peers" / "elastisim"
PEER_BUILD = Path(os.environ.get("PEER", Path.home() / ".cache" / "elastisim_peer"))
COMMAND_TARGET_SECONDS = 1.0
IDLE_CORE_LOAD = 0.5  # cosched.simulator.elastic.results.IDLE_CORE_LOAD (not imported: no numpy)
SPEEDUP_TARGET = 15.0


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


# the command as `python -m cosched` runs it, with the forked writer switched off
SEQUENTIAL = (
    "import sys; import cosched.simulator.elastic.results as results; "
    "results.FORK_WRITES = False; from cosched.cli import main; sys.exit(main())"
)


def run_cosched(
    out: Path, sequential: bool = False, python: str = sys.executable, project: Path | None = None
) -> tuple[float, float, dict]:
    """(wall seconds, CPU seconds of the command and any child it waited for, summary) of one whole
    command in a fresh process, which may keep its bytecode as an installed package does
    (PYTHONDONTWRITEBYTECODE unset); `sequential`: every file written in the one process; `python`:
    the interpreter (and so the cosched) that runs it; `project`: an ElastiSim project folder run
    with its algorithm.py instead of the example preset."""
    shutil.rmtree(out, ignore_errors=True)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    start = [python, "-m", "cosched"]
    if sequential:  # numpy is imported before the command can limit OpenBLAS to one thread
        start = [python, "-c", SEQUENTIAL]
        env.setdefault("OPENBLAS_NUM_THREADS", "1")
    scenario = ["example"]
    if project is not None:
        scenario = ["data/input/configuration.json", "--algorithm", "algorithm.py"]
    cpu, started = _children_cpu(), time.perf_counter()
    result = subprocess.run(
        [*start, "elastic", *scenario, "--out", str(out), "--json", "--quiet"],
        check=True,
        capture_output=True,
        text=True,
        env=env,
        cwd=project,
    )
    return time.perf_counter() - started, _children_cpu() - cpu, json.loads(result.stdout)


def run_elastisim(folder: Path) -> tuple[float, float, float] | None:
    """(wall seconds, CPU seconds of simulator + algorithm, makespan) of the real ElastiSim, or
    None if not built."""
    script = PEER / "run_elastisim.sh"
    binary = PEER_BUILD / "src" / "elastisim" / "build" / "elastisim"
    if not script.is_file() or not binary.is_file():
        return None
    project = folder / "project"
    shutil.copytree(PRESET, project)
    run = folder / "elastisim-run"
    subprocess.run(
        ["bash", str(script), str(project), str(run)], check=True, capture_output=True, text=True
    )
    info = dict(item.split("=", 1) for item in (run / "run_info.txt").read_text().split())
    ends = []
    with open(run / "data" / "output" / "job_statistics.csv") as handle:
        next(handle)
        for line in handle:
            fields = line.strip().split(",")
            ends.append((float(fields[2]), float(fields[4])))
    makespan = max(end for _, end in ends) - min(submit for submit, _ in ends)
    cpu = float(info["simulator_cpu_s"]) + float(info["scheduler_cpu_s"])  # both processes
    return float(info["wall_seconds"]), cpu, makespan


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0].replace("\n", " "))
    parser.add_argument(
        "--repeat", type=int, default=3, help="whole-command runs (median reported)"
    )
    parser.add_argument(
        "--no-elastisim", action="store_true", help="skip the real ElastiSim even when built"
    )
    parser.add_argument(
        "--sequential",
        action="store_true",
        help="also time the command with every file written in one process (no forked writer)",
    )
    parser.add_argument(
        "--against",
        metavar="PYTHON",
        help="also time the command run by this interpreter (another cosched), alternating",
    )
    parser.add_argument(
        "--project",
        type=Path,
        metavar="DIR",
        help="an ElastiSim project folder with algorithm.py instead of the example preset",
    )
    args = parser.parse_args()
    project = None if args.project is None else args.project.resolve()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        out = folder / "cosched-out"
        run_cosched(out, project=project)  # warm-up: bytecode written, files cached
        if args.against:
            run_cosched(out, python=args.against, project=project)
        runs, alone, other = [], [], []
        for _ in range(args.repeat):  # alternating: both see the same moments of a shared machine
            runs.append(run_cosched(out, project=project))
            if args.sequential:
                alone.append(run_cosched(out, sequential=True, project=project))
            if args.against:
                other.append(run_cosched(out, python=args.against, project=project))
        wall = statistics.median(run[0] for run in runs)
        cpu = statistics.median(run[1] for run in runs)
        simulation = statistics.median(run[2]["wall_seconds"] for run in runs)
        summary = runs[0][2]
        peer = None if args.no_elastisim else run_elastisim(folder)
    print(
        f"{'example' if project is None else project.name} project: {summary['nodes']} nodes, "
        f"{summary['completed']} jobs completed, {summary['invocations']} algorithm calls, "
        f"makespan {summary['makespan']:.1f} s (cosched)"
    )
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1
    print(
        f"load average {load:.2f} on {cores} cores at the start: the CPU series is written by a "
        f"forked child while it is below {cores - IDLE_CORE_LOAD:g}"
    )
    print(f"{'':<34} {'wall [s]':>9} {'cpu [s]':>9}")
    verdict = "ok" if wall < COMMAND_TARGET_SECONDS else "MISSED"
    print(
        f"{'cosched elastic (whole command)':<34} {wall:>9.3f} {cpu:>9.3f}   "
        f"target < {COMMAND_TARGET_SECONDS:g} s: {verdict}"
    )
    print(f"{'  of which the simulation':<34} {simulation:>9.3f}")
    print(f"{'  everything else':<34} {wall - simulation:>9.3f}")
    if alone:
        print(
            f"{'  every file in one process':<34} "
            f"{statistics.median(run[0] for run in alone):>9.3f} "
            f"{statistics.median(run[1] for run in alone):>9.3f}"
        )
    if other:
        other_wall = statistics.median(run[0] for run in other)
        other_cpu = statistics.median(run[1] for run in other)
        print(f"{'the same with --against':<34} {other_wall:>9.3f} {other_cpu:>9.3f}")
        print(
            f"ratio this / --against: wall {wall / other_wall:.3f}, CPU {cpu / other_cpu:.3f} "
            f"(medians of {args.repeat} alternating runs)"
        )
    if peer is None:
        print("ElastiSim: not built here (../shared/peers/elastisim/build.sh), or skipped")
        return 0
    peer_wall, peer_cpu, peer_makespan = peer
    speedup, cpu_speedup = peer_wall / wall, peer_cpu / cpu
    print(
        f"{'ElastiSim (simulator + algorithm)':<34} {peer_wall:>9.3f} {peer_cpu:>9.3f}   "
        f"makespan {peer_makespan:.1f} s"
    )
    print(
        f"speedup, ElastiSim / cosched whole command: wall {speedup:.1f}x, CPU {cpu_speedup:.1f}x "
        f"target >= {SPEEDUP_TARGET:g}x: {'ok' if speedup >= SPEEDUP_TARGET else 'MISSED'}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
