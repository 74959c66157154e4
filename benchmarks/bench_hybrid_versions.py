"""The hybrid mechanisms against an earlier version of cosched, side by side in one run.

For each configuration, alternately for the earlier installation and for this one (old new old
new ...), one run of the whole CEA-Curie trace (typing seed 0, W5) in a fresh process: CPU seconds
of the run and the slowest decision (CPU time of the deciding thread, 004 §III-B's "< 10 ms"). With
--cli each run is the full command line with an action log (`cosched simulate --hybrid M
--log-actions FILE --out DIR`): CPU of the whole command and the decision maximum of its
summary.json. Prints the medians of each side and the ratio new / old; the machine may be shared,
the load average is printed.

    python benchmarks/bench_hybrid_versions.py --before-python OLD_VENV/bin/python [--repeat 1]
        [--mechanisms n-spaa,cup-paa] [--limit JOBS] [--cli]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from data_paths import SHARED_DATA

from cosched.simulator.hybrid.mechanisms import MECHANISMS

PROBE = """
import json, sys, time
from cosched.simulator.compare import load_inputs
from cosched.simulator.hybrid.run import hybrid_metrics, simulate_hybrid
from cosched.simulator.hybrid.workload import build_hybrid, trace_projects
path, preset, mechanism, limit = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
platform, workload = load_inputs(path, preset)
projects = trace_projects(path, workload.job_id, "group")
if limit:
    workload, projects = workload.head(limit), projects[:limit]
hybrid = build_hybrid(workload, platform.cores_per_node, projects, seed=0)
cpu = time.process_time()
result = simulate_hybrid(hybrid, platform, mechanism)
cpu = time.process_time() - cpu
print(json.dumps([cpu, hybrid_metrics(result, hybrid)["decision_ms_max"]]))
"""


def probe(python: str, path: Path, preset: str, mechanism: str, limit: int) -> tuple[float, float]:
    """(CPU seconds of the run, slowest decision in ms) in a fresh process of `python`."""
    out = subprocess.run(
        [python, "-c", PROBE, str(path), preset, mechanism, str(limit)],
        capture_output=True,
        text=True,
        check=True,
    )
    cpu, decision = json.loads(out.stdout.strip().splitlines()[-1])
    return cpu, decision


def command_line(
    python: str, path: Path, preset: str, mechanism: str, limit: int
) -> tuple[float, float]:
    """(CPU seconds of `cosched simulate --hybrid M --log-actions`, its slowest decision in ms)."""
    cosched = str(Path(python).parent / "cosched")
    with tempfile.TemporaryDirectory() as folder:
        out, log = Path(folder) / "run", Path(folder) / "actions.csv"
        command = [cosched, "simulate", "--workload", str(path), "--platform", preset]
        command += ["--hybrid", mechanism, "--seed", "0", "--quiet", "--out", str(out)]
        command += ["--log-actions", str(log)] + (["--limit", str(limit)] if limit else [])
        before = os.times()
        subprocess.run(command, check=True, capture_output=True)
        after = os.times()
        cpu = (after.children_user - before.children_user) + (
            after.children_system - before.children_system
        )
        return cpu, json.loads((out / "summary.json").read_text())["decision_ms_max"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before-python", required=True, help="Python of the earlier version")
    parser.add_argument("--trace", default="CEA-Curie-2011-2.1-cln.swf.gz")
    parser.add_argument("--platform", default="curie")
    parser.add_argument("--mechanisms", default=",".join(MECHANISMS[1:]))
    parser.add_argument("--limit", type=int, default=0, help="first jobs only (0: all)")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--cli", action="store_true", help="time the full command line")
    args = parser.parse_args()
    path = SHARED_DATA / "swf" / args.trace
    run = command_line if args.cli else probe
    one, five, _ = os.getloadavg()
    print(f"load average {one:.2f} (1 min), {five:.2f} (5 min) on {os.cpu_count()} cores")
    what = "command line with --log-actions" if args.cli else "run"
    print(
        f"| configuration | old CPU [s] | new CPU [s] | new / old | old decision max [ms] | "
        f"new decision max [ms] | ({what}, median of {args.repeat}) |"
    )
    print("|---|---|---|---|---|---|---|")
    for mechanism in args.mechanisms.split(","):
        old, new = [], []
        for _ in range(args.repeat):
            old.append(run(args.before_python, path, args.platform, mechanism, args.limit))
            new.append(run(sys.executable, path, args.platform, mechanism, args.limit))
        old_cpu, new_cpu = (statistics.median(c for c, _ in side) for side in (old, new))
        old_ms, new_ms = (statistics.median(d for _, d in side) for side in (old, new))
        print(
            f"| {mechanism} | {old_cpu:.1f} | {new_cpu:.1f} | {new_cpu / old_cpu:.2f} | "
            f"{old_ms:.1f} | {new_ms:.1f} | |",
            flush=True,
        )
    one, five, _ = os.getloadavg()
    print(f"load average {one:.2f} (1 min), {five:.2f} (5 min) on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
