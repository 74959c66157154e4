"""Time the hybrid mechanisms (Fan et al.) on the whole CEA-Curie trace and the hybrid grid.

    python benchmarks/bench_hybrid.py [--trace CEA-Curie-2011-2.1-cln.swf.gz] [--platform curie]
                                      [--grid-jobs 50000] [--typings 10] [--workers 2]
                                      [--skip-trace] [--skip-grid] [--keep DIR] [--cli]

Part 1: one typing (seed 0, W5) of the whole trace; the baseline and the six mechanisms one after
the other in this process: wall and CPU seconds of each run, CPU relative to the baseline, jobs per
second, instant-start ratio and the slowest decision (CPU time of the deciding thread), against the
targets: under 20 s of CPU per mechanism and every decision under 10 ms.
With --cli, part 1 also runs each configuration as the full command line with an action log
(`cosched simulate --hybrid M --log-actions FILE --out DIR`, in this process): CPU seconds of the
whole command (reading and typing the trace, the run, writing jobs.csv, summary.json and the log),
the action log's rows and the slowest decision that summary.json reports.
Part 2: the full `experiment-hybrid` grid (7 configurations x --typings) on the first --grid-jobs
jobs with --workers local processes: wall seconds, and the engine seconds the runs report (its table
and plots stay in --keep DIR if given). The machine may be shared: the load average is printed
before and after.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from data_paths import SHARED_DATA  # noqa: E402

from cosched.simulator.compare import load_inputs  # noqa: E402
from cosched.simulator.hybrid.experiment import HybridExperiment, run_experiment  # noqa: E402
from cosched.simulator.hybrid.mechanisms import MECHANISMS  # noqa: E402
from cosched.simulator.hybrid.run import hybrid_metrics, simulate_hybrid  # noqa: E402
from cosched.simulator.hybrid.workload import build_hybrid, trace_projects  # noqa: E402

CPU_TARGET = 20.0  # seconds of CPU per mechanism on the whole Curie trace
# the slowest decision (thread CPU time), as the paper reports (004 §III-B)
DECISION_TARGET_MS = 10.0


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.2f} (1 min), {five:.2f} (5 min) on {os.cpu_count()} cores"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trace", default="CEA-Curie-2011-2.1-cln.swf.gz")
    parser.add_argument("--platform", default="curie")
    parser.add_argument("--grid-jobs", type=int, default=50_000)
    parser.add_argument("--typings", type=int, default=10)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--skip-trace", action="store_true", help="skip part 1")
    parser.add_argument("--skip-grid", action="store_true", help="skip part 2")
    parser.add_argument(
        "--keep", help="folder for the grid's outputs (default: a temporary folder)"
    )
    parser.add_argument(
        "--cli", action="store_true", help="part 1 also as full CLI runs with --log-actions"
    )
    args = parser.parse_args()
    path = SHARED_DATA / "swf" / args.trace
    print(load())
    started = time.perf_counter()
    platform, workload = load_inputs(path, args.platform)
    projects = trace_projects(path, workload.job_id, "group")
    hybrid = build_hybrid(workload, platform.cores_per_node, projects, seed=0)
    print(
        f"{args.trace}: {len(workload)} jobs on {platform.nodes} nodes, read and typed in "
        f"{time.perf_counter() - started:.1f} s"
    )
    print(
        "| configuration | wall [s] | CPU [s] | CPU / baseline | jobs/s | instant start | "
        f"decision max [ms] | targets (CPU < {CPU_TARGET:g} s, "
        f"decision < {DECISION_TARGET_MS:g} ms) |"
    )
    print("|---|---|---|---|---|---|---|---|")
    baseline_cpu = None
    for mechanism in () if args.skip_trace else MECHANISMS:
        wall, cpu = time.perf_counter(), time.process_time()
        result = simulate_hybrid(hybrid, platform, mechanism)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        metrics = hybrid_metrics(result, hybrid)
        baseline_cpu = cpu if baseline_cpu is None else baseline_cpu
        decision = metrics["decision_ms_max"]
        met = (
            "-"
            if mechanism == "baseline"
            else ("ok" if cpu < CPU_TARGET and decision < DECISION_TARGET_MS else "missed")
        )
        print(
            f"| {mechanism} | {wall:.1f} | {cpu:.1f} | {cpu / baseline_cpu:.2f} | "
            f"{len(hybrid) / wall:,.0f} | {metrics['instant_start_ratio']:.4f} | "
            f"{decision:.1f} | {met} |",
            flush=True,
        )
    print(load())
    if args.cli and not args.skip_trace:
        cli_runs(path, args.platform)
    if args.skip_grid:
        return
    grid_workload = workload.head(args.grid_jobs)
    spec = HybridExperiment(
        grid_workload,
        projects[: args.grid_jobs],
        platform,
        args.typings,
        MECHANISMS,
        source=f"{args.trace} (first {args.grid_jobs})",
    )
    with tempfile.TemporaryDirectory() as folder:
        out = Path(args.keep) if args.keep else Path(folder) / "grid"
        wall = time.perf_counter()
        run_experiment(spec, out, workers=args.workers, progress=False, plots=bool(args.keep))
        wall = time.perf_counter() - wall
        import pandas as pd

        runs = pd.read_csv(out / "runs.csv")
    print(
        f"experiment-hybrid grid: {len(runs)} runs (7 configurations x {args.typings} typings) of "
        f"{len(grid_workload)} jobs with {args.workers} workers: {wall:.0f} s wall "
        f"({wall / 60:.1f} min); the runs' own engine time sums to "
        f"{runs['wall_seconds'].sum():.0f} s"
    )
    print(load())


def cli_runs(path: Path, platform: str) -> None:
    """Each configuration as `cosched simulate --hybrid M --log-actions FILE`: CPU of the whole
    command and the slowest decision of its summary.json."""
    import json

    from cosched.cli import main as cli

    print(
        "| command line, --log-actions | CPU [s] | action rows | decision max [ms] | "
        f"decision < {DECISION_TARGET_MS:g} ms |"
    )
    print("|---|---|---|---|---|")
    for mechanism in MECHANISMS:
        with tempfile.TemporaryDirectory() as folder:
            out, log = Path(folder) / "run", Path(folder) / "actions.csv"
            cpu = time.process_time()
            code = cli(
                [
                    "simulate",
                    "--workload",
                    str(path),
                    "--platform",
                    platform,
                    "--hybrid",
                    mechanism,
                    "--seed",
                    "0",
                    "--quiet",
                    "--out",
                    str(out),
                    "--log-actions",
                    str(log),
                ]
            )
            cpu = time.process_time() - cpu
            if code != 0:
                raise SystemExit(f"cosched simulate --hybrid {mechanism} exited with {code}")
            decision = json.loads((out / "summary.json").read_text())["decision_ms_max"]
            with open(log) as handle:
                rows = sum(1 for _ in handle) - 1
        met = (
            "-" if mechanism == "baseline" else "ok" if decision < DECISION_TARGET_MS else "missed"
        )
        print(f"| {mechanism} | {cpu:.1f} | {rows:,} | {decision:.1f} | {met} |", flush=True)
    print(load())


if __name__ == "__main__":
    main()
