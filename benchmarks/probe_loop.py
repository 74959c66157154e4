"""One simulation in this process, for a profiler: the benchmarks' cases as one command.

    python benchmarks/probe_loop.py SCHEDULER CASE [--limit N] [--json]

CASE:
- sdsc, curie, kth, ricc: the Parallel Workloads Archive trace on its platform preset;
- sdsc-co: SDSC-SP2 on 64 nodes of 2 cores with the bundled ``aris-nas`` heatmap, each job given an
  application of the heatmap drawn uniformly (seed 1), as ``bench_co_versions.py`` runs it;
- partitions, memory+partitions: SDSC-SP2 with docs/examples/sdsc-sp2-partitions.json, the second
  with memory per node and ``--swf-memory requested``, as ``bench_partitions.py`` runs them.

``--limit N`` keeps the first N jobs (drawn after the applications, so a prefix of the whole run).
Prints the simulation's CPU seconds (or ``{"wall": ..., "cpu": ...}`` with ``--json``). Instruction
counts of the event loop alone, compiled::

    valgrind --tool=callgrind \\
      --toggle-collect='__pyx_pw_7cosched_9simulator_6engine_6Engine_*_loop' \\
      python benchmarks/probe_loop.py easy sdsc
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import time
import warnings

# as `cosched simulate` sets it before numpy's import (cosched.cli.SERIAL_BLAS_COMMANDS): else
# numpy's idle OpenBLAS worker spins for about 0.1 s of CPU during the simulation, counted in it
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from data_paths import REPO, SHARED_DATA  # noqa: E402

from cosched.simulator.platform import PRESETS, Platform
from cosched.simulator.simulation import simulate
from cosched.simulator.workload import load_workload

SWF = SHARED_DATA / "swf"
SDSC_SP2 = "SDSC-SP2-1998-4.2-cln.swf.gz"
TRACES = {
    "sdsc": (SDSC_SP2, "sdsc-sp2"),
    "curie": ("CEA-Curie-2011-2.1-cln.swf.gz", "curie"),
    "kth": ("KTH-SP2-1996-2.1-cln.swf.gz", "kth-sp2"),
    "ricc": ("RICC-2010-2.swf.gz", "ricc"),
}
CASES = (*TRACES, "sdsc-co", "partitions", "memory+partitions")
PARTITIONS = REPO / "docs" / "examples" / "sdsc-sp2-partitions.json"
MEMORY_PER_NODE = 256.0  # GB, so that the memory path runs (SDSC-SP2 records no memory)


def inputs(scheduler: str, case: str) -> tuple:
    """The workload, platform and keyword arguments of `simulate` for `case`."""
    if case in TRACES:
        name, preset = TRACES[case]
        platform = PRESETS[preset]
        return load_workload(SWF / name, max_cores=platform.total_cores), platform, {}
    if case == "sdsc-co":
        from cosched.theory.heatmap import read_heatmap

        platform = Platform(64, 2, 1, name="sdsc-sp2-pairs")
        workload = load_workload(SWF / SDSC_SP2, max_cores=platform.total_cores)
        heatmap = read_heatmap("aris-nas", default=1.0)
        draw = np.random.default_rng(1).integers(0, len(heatmap), len(workload))
        apps = np.array(heatmap.applications, dtype=object)[draw]
        workload = dataclasses.replace(workload, app=apps)
        return workload, platform, {} if scheduler == "easy" else {"heatmap": heatmap}
    from cosched.simulator.partitions import load_partitions

    platform = PRESETS["sdsc-sp2"]
    memory = case == "memory+partitions"
    if memory:
        platform = dataclasses.replace(platform, memory_per_node=MEMORY_PER_NODE)
    workload = load_workload(
        SWF / SDSC_SP2,
        max_cores=platform.total_cores,
        **({"swf_memory": "requested"} if memory else {}),
    )
    parts = load_partitions(PARTITIONS, platform).assign(
        workload, platform.cores_per_node, platform=platform
    )
    return parts.workload, platform, {"partitions": parts}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scheduler", help="a scheduler name, e.g. easy, conservative, easy-co")
    parser.add_argument("case", choices=CASES)
    parser.add_argument("--limit", type=int, default=0, help="the first N jobs only (0: all)")
    parser.add_argument("--json", action="store_true", help="print wall and CPU seconds as JSON")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    workload, platform, options = inputs(args.scheduler, args.case)
    if args.limit:
        workload = workload.head(args.limit)
    clock = time.process_time()
    result = simulate(workload, platform, args.scheduler, **options)
    cpu = time.process_time() - clock
    if args.json:
        print(json.dumps({"wall": result.wall_seconds, "cpu": cpu}))
    else:
        print(f"{args.scheduler} {args.case}: cpu {cpu:.3f} s, jobs {len(workload)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
