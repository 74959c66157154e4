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

The machine's 1-minute load average at the start is printed (it is shared: times vary with it).

Beside it, the same on a small project: the example's first --small-jobs submissions (150 by
default; the fixed cost of the command weighs most there), built in a scratch folder.

Targets: the whole command under 1 s on a quiet machine; cosched at least 15x faster than ElastiSim
on the example, at least 10x on the small project.

    python benchmarks/bench_elastic_cli.py
    python benchmarks/bench_elastic_cli.py --repeat 5 --no-elastisim
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
SPEEDUP_TARGET = 15.0
SMALL_SPEEDUP_TARGET = 10.0


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def small_project(folder: Path, jobs: int) -> Path:
    """A copy of the example project with only its first `jobs` submissions (file order kept)."""
    project = folder / f"small-{jobs}"
    shutil.copytree(PRESET, project)
    path = project / "data" / "input" / "jobs.json"
    document = json.loads(path.read_text())
    first = sorted(
        range(len(document["jobs"])),
        key=lambda index: (document["jobs"][index]["submit_time"], index),
    )[:jobs]
    document["jobs"] = [document["jobs"][index] for index in sorted(first)]
    path.write_text(json.dumps(document, indent=1))
    return project


def run_cosched(
    out: Path, project: Path | None = None, python: str = sys.executable
) -> tuple[float, float, dict]:
    """(wall seconds, CPU seconds of the command and any child it waited for, summary) of one whole
    command in a fresh process, which may keep its bytecode as an installed package does
    (PYTHONDONTWRITEBYTECODE unset);
    `project`: run that project from its folder instead of the `example` preset; `python`: the
    interpreter (and so the cosched installation) that runs it."""
    shutil.rmtree(out, ignore_errors=True)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    start = [python, "-m", "cosched"]
    inputs = (
        ["example"]
        if project is None
        else ["data/input/configuration.json", "--algorithm", "algorithm.py"]
    )
    cpu, started = _children_cpu(), time.perf_counter()
    result = subprocess.run(
        [*start, "elastic", *inputs, "--out", str(out), "--json", "--quiet"],
        check=True,
        capture_output=True,
        text=True,
        env=env,
        cwd=project,
    )
    return time.perf_counter() - started, _children_cpu() - cpu, json.loads(result.stdout)


def run_elastisim(folder: Path, source: Path = PRESET) -> tuple[float, float, float] | None:
    """(wall seconds, CPU seconds of simulator + algorithm, makespan) of the real ElastiSim on a
    copy of the project `source`, or None if not built."""
    script = PEER / "run_elastisim.sh"
    binary = PEER_BUILD / "src" / "elastisim" / "build" / "elastisim"
    if not script.is_file() or not binary.is_file():
        return None
    project = folder / f"project-{source.name}"
    shutil.copytree(source, project)
    run = folder / f"elastisim-run-{source.name}"
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
        "--small-jobs",
        type=int,
        default=150,
        help="jobs of the small project (the example's first submissions); 0: skip it",
    )
    parser.add_argument(
        "--against",
        metavar="PYTHON",
        help="also time both projects run by this interpreter (another cosched installation, "
        "e.g. an earlier commit's), alternating, and print the ratios",
    )
    args = parser.parse_args()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        small = small_project(folder, args.small_jobs) if args.small_jobs else None
        run_cosched(folder / "cosched-out")  # warm-up: bytecode written, files cached
        runs, small_runs, other, other_small = [], [], [], []
        for _ in range(args.repeat):  # alternating: all see the same moments of a shared machine
            runs.append(run_cosched(folder / "cosched-out"))
            if small is not None:
                small_runs.append(run_cosched(folder / "small-out", project=small))
            if args.against:
                other.append(run_cosched(folder / "cosched-out", python=args.against))
                if small is not None:
                    other_small.append(
                        run_cosched(folder / "small-out", project=small, python=args.against)
                    )
        wall = statistics.median(run[0] for run in runs)
        cpu = statistics.median(run[1] for run in runs)
        simulation = statistics.median(run[2]["wall_seconds"] for run in runs)
        summary = runs[0][2]
        peer = None if args.no_elastisim else run_elastisim(folder)
        small_peer = None if args.no_elastisim or small is None else run_elastisim(folder, small)
    print(
        f"example project: {summary['nodes']} nodes, {summary['completed']} jobs completed, "
        f"{summary['invocations']} algorithm calls, makespan {summary['makespan']:.1f} s (cosched)"
    )
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1
    print(f"load average {load:.2f} on {cores} cores at the start")
    print(f"{'':<34} {'wall [s]':>9} {'cpu [s]':>9}")
    verdict = "ok" if wall < COMMAND_TARGET_SECONDS else "MISSED"
    print(
        f"{'cosched elastic (whole command)':<34} {wall:>9.3f} {cpu:>9.3f}   "
        f"target < {COMMAND_TARGET_SECONDS:g} s: {verdict}"
    )
    print(f"{'  of which the simulation':<34} {simulation:>9.3f}")
    print(f"{'  everything else':<34} {wall - simulation:>9.3f}")
    if small_runs:
        small_wall = statistics.median(run[0] for run in small_runs)
        small_cpu = statistics.median(run[1] for run in small_runs)
        print(
            f"{f'small project ({args.small_jobs} jobs), whole':<34} {small_wall:>9.3f} "
            f"{small_cpu:>9.3f}"
        )
        print(
            f"{'  of which the simulation':<34} "
            f"{statistics.median(run[2]['wall_seconds'] for run in small_runs):>9.3f}"
        )
    for name, these, those in (
        ("example", runs, other),
        ("small project", small_runs, other_small),
    ):
        if those:
            ratios = [
                statistics.median(run[column] for run in these)
                / statistics.median(run[column] for run in those)
                for column in (0, 1)
            ]
            print(
                f"{name}, this / --against (medians of {len(those)} alternating runs): "
                f"wall {ratios[0]:.3f}, CPU {ratios[1]:.3f}"
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
    if small_runs and small_peer is not None:
        small_speedup, small_cpu_speedup = small_peer[0] / small_wall, small_peer[1] / small_cpu
        print(
            f"{'ElastiSim, small project':<34} {small_peer[0]:>9.3f} {small_peer[1]:>9.3f}   "
            f"makespan {small_peer[2]:.1f} s"
        )
        print(
            f"speedup on the small project: wall {small_speedup:.1f}x, CPU "
            f"{small_cpu_speedup:.1f}x target >= {SMALL_SPEEDUP_TARGET:g}x: "
            f"{'ok' if small_speedup >= SMALL_SPEEDUP_TARGET else 'MISSED'}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
