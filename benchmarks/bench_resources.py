"""EASY with memory (and with node types) against plain EASY on SDSC-SP2, side by side in one run.

SDSC-SP2 records no memory (fields 7 and 10 are -1), so each job gets a memory per core drawn once
from a seeded distribution (`--memory`: by default 70% of the jobs none, 10% each 64, 128 or 256 MiB
per core; at most 128 for jobs of more than 64 cores, which could not run otherwise). The 128
processors are 64 nodes of 2 cores and 256 MiB: a job above 128 MiB per core fits one process per
node, so memory makes it twice as wide, and the queue longer (the mean wait is printed: the runs
schedule differently, and a longer queue costs every EASY pass more). The runs, timed alternately
(`wall_seconds` of the simulation, workload and platform built beforehand):

- plain: the trace on the 64 x 2-core nodes, no memory (the cores-only path of the allocator);
- memory: the same nodes with 256 MiB each, the jobs with their memory;
- node types: the same 128 cores as two node types, 32 nodes of 256 MiB and 32 of 512 MiB, jobs
  capped at the larger type's 64 cores (a job runs on one type), with their memory.

Prints the medians and the median ratio to the plain run of the same round:

    python benchmarks/bench_resources.py [--repeat 5] [--jobs N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from dataclasses import replace

import numpy as np
from data_paths import SHARED_DATA

from cosched.simulator.platform import NodeGroup, Platform
from cosched.simulator.simulation import simulate
from cosched.simulator.workload import load_workload

TRACE = SHARED_DATA / "swf" / "SDSC-SP2-1998-4.2-cln.swf.gz"
MEMORY_CHOICES = "0,0,0,0,0,0,0,64,128,256"  # MiB per core, drawn with equal chances
SEED = 2026


def cases(jobs: int | None, choices: str = MEMORY_CHOICES) -> dict[str, tuple]:
    """(workload, platform) of each run."""
    plain = Platform(64, 1, 2, "sdsc-sp2 as 64 x 2 cores")
    workload = load_workload(TRACE, max_cores=plain.total_cores)
    if jobs is not None:
        workload = workload.head(jobs)
    values = np.array([float(value) for value in choices.split(",")])
    memory = np.random.default_rng(SEED).choice(values, len(workload))
    # a job wider than half the nodes must fit two processes per node: at most 128 MiB per core
    memory = np.where(workload.cores > plain.nodes, np.minimum(memory, 128.0), memory)
    with_memory = replace(workload, memory=memory)
    types = Platform.of_groups(
        [
            NodeGroup(32, 1, 2, 256.0, name="small"),
            NodeGroup(32, 1, 2, 512.0, name="large"),
        ],
        "two node types",
    )
    capped = replace(with_memory, cores=np.minimum(with_memory.cores, types.max_job_cores))
    return {
        "plain": (workload, plain),
        "memory": (with_memory, replace(plain, memory_per_node=256.0, name="memory")),
        "node types": (capped, types),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--jobs", type=int, help="the first N jobs only")
    parser.add_argument("--scheduler", default="easy")
    parser.add_argument(
        "--memory",
        default=MEMORY_CHOICES,
        help=f"MiB per core to draw from, comma-separated (default {MEMORY_CHOICES})",
    )
    args = parser.parse_args()
    runs = cases(args.jobs, args.memory)
    seconds: dict[str, list[float]] = {name: [] for name in runs}
    waits: dict[str, float] = {}
    for _ in range(args.repeat):
        for name, (workload, platform) in runs.items():
            result = simulate(workload, platform, args.scheduler)
            seconds[name].append(result.wall_seconds)
            waits[name] = float(np.mean(result.start - workload.submit))
    jobs = len(runs["plain"][0])
    print(
        f"SDSC-SP2 ({jobs} jobs) under {args.scheduler}, median of {args.repeat} alternating runs;"
        " ratio = run / plain run of the same round"
    )
    print(f"memory per core drawn from {args.memory} MiB")
    print(f"{'run':<14}{'seconds':>10}{'ratio':>8}{'mean wait [s]':>16}")
    for name, times in seconds.items():
        ratio = statistics.median(t / p for t, p in zip(times, seconds["plain"]))
        print(f"{name:<14}{statistics.median(times):>10.3f}{ratio:>8.2f}{waits[name]:>16.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
