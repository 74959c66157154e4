"""Partitions and the multifactor priority against plain EASY on SDSC-SP2, side by side in one run.

Times the simulation alone (CPU seconds of `simulate`, so other load on a shared machine inflates it
little), in rounds that alternate the cases (plain, partitioned, ...), and prints each case's median
over the rounds divided by plain EASY's median. Cases:

- plain: EASY, no partitions, arrival order;
- one-partition: EASY with one partition over all 128 nodes (the per-partition pass's own cost);
- partitions: EASY with docs/examples/sdsc-sp2-partitions.json (16 + 112 nodes, limits);
- memory+partitions: the same with the trace read by ``--swf-memory requested`` on the sdsc-sp2
  platform given memory per node (SDSC-SP2 records no memory, so every job asks for none: this
  measures what the memory path costs when it changes no schedule);
- multifactor: EASY ordered by the multifactor priority (weights slurm-example);
- partitions+multifactor: both.

Target (issue: "SDSC-SP2 under EASY with memory and partitions runs within 1.5x of plain EASY"):
the partitions and memory+partitions ratios <= 1.5.

    python benchmarks/bench_partitions.py [--rounds 3] [--cases partitions,memory+partitions]

``--cases`` runs only the cases named (plain EASY always runs: every ratio is to it).
"""

from __future__ import annotations

import argparse
import statistics
import time
from dataclasses import replace

from data_paths import REPO, SHARED_DATA

from cosched.simulator.compare import load_inputs
from cosched.simulator.partitions import Partition, Partitions, load_partitions
from cosched.simulator.simulation import simulate

SDSC_SP2 = SHARED_DATA / "swf" / "SDSC-SP2-1998-4.2-cln.swf.gz"
EXAMPLE = REPO / "docs" / "examples" / "sdsc-sp2-partitions.json"
TARGET = 1.5


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--cases", help="comma-separated case names to run besides plain (default: every case)"
    )
    args = parser.parse_args()
    platform, workload = load_inputs(SDSC_SP2, "sdsc-sp2")
    cpn = platform.cores_per_node
    example = load_partitions(EXAMPLE, platform).assign(workload, cpn)
    whole = Partitions(
        (Partition("all", tuple(range(platform.nodes)), platform.nodes),), "queue", "all"
    ).assign(workload, cpn)
    with_memory = replace(platform, memory_per_node=256.0)  # MiB per node (one-processor nodes)
    _, memory_workload = load_inputs(SDSC_SP2, "sdsc-sp2", swf_memory="requested")
    memory = load_partitions(EXAMPLE, with_memory).assign(
        memory_workload, cpn, platform=with_memory
    )
    multifactor = {"priority": "multifactor", "priority_weights": "slurm-example"}
    cases = {
        "plain": lambda: simulate(workload, platform, "easy"),
        "one-partition": lambda: simulate(workload, platform, "easy", partitions=whole),
        "partitions": lambda: simulate(example.workload, platform, "easy", partitions=example),
        "memory+partitions": lambda: simulate(
            memory.workload, with_memory, "easy", partitions=memory
        ),
        "multifactor": lambda: simulate(workload, platform, "easy", scheduler_options=multifactor),
        "partitions+multifactor": lambda: simulate(
            example.workload, platform, "easy", partitions=example, scheduler_options=multifactor
        ),
    }
    if args.cases is not None:
        chosen = {"plain", *args.cases.split(",")}
        unknown = sorted(chosen - set(cases))
        if unknown:
            parser.error(f"unknown case {unknown[0]!r}; known: {', '.join(cases)}")
        cases = {name: run for name, run in cases.items() if name in chosen}
    seconds: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(args.rounds):
        for name, run in cases.items():
            start = time.process_time()
            run()
            seconds[name].append(time.process_time() - start)
    plain = statistics.median(seconds["plain"])
    print(f"SDSC-SP2, EASY, {len(workload)} jobs, {args.rounds} rounds (CPU seconds, median)")
    for name, values in seconds.items():
        median = statistics.median(values)
        print(f"  {name:<24} {median:7.2f} s   ratio to plain {median / plain:5.2f}")
    for name in ("partitions", "memory+partitions"):
        if name not in seconds:
            continue
        ratio = statistics.median(seconds[name]) / plain
        verdict = "met" if ratio <= TARGET else "NOT met"
        print(f"{name} / plain = {ratio:.2f} (target <= {TARGET}): {verdict}")


if __name__ == "__main__":
    main()
