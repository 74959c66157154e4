"""Cost of one counter reading round of the co-run harness (it runs on the measured node, so it
perturbs it).

Starts K stopped tasks (bundled kernel, T worker processes each), then times, side by side in one
run, one batched `read({task: pgid, ...})` (one /proc scan) against K separate single-task reads,
for the procfs cputime backend and for the perf backend with software events (hardware events need a
PMU). Prints median milliseconds, the ratio separate / batched, and the share of a 2 s window the
two reads of a combination take.

    python benchmarks/measure_overhead.py [--repeats 30]
"""

from __future__ import annotations

import argparse
import signal
import statistics
import sys
import time

from cosched.measurement.corun import TaskSpec, signal_group, start_task, terminate_tasks
from cosched.measurement.counters import (
    PERF_COUNT_SW_TASK_CLOCK,
    PERF_TYPE_SOFTWARE,
    PerfCounters,
    ProcfsCounters,
)
from cosched.measurement.validation import kernel_command

WINDOW_SECONDS = 2.0
PERF_COUNT_SW_CPU_CLOCK = 0


def _median_ms(function, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        function()
        times.append(time.perf_counter() - started)
    return 1e3 * statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args()
    software = [
        (PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK),
        (PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK),
    ]
    print(
        f"{'backend':<18} {'tasks':>5} {'procs':>5} {'batched ms':>10} "
        f"{'separate ms':>11} {'ratio':>6} "
        f"{'% of window':>11}"
    )
    for tasks, threads in ((2, 1), (4, 4), (8, 2)):
        processes = [
            start_task(TaskSpec(f"k{i}", kernel_command("compute", threads, seconds=120)))
            for i in range(tasks)
        ]
        try:
            time.sleep(1.5)  # interpreters started and workers forked
            for process in processes:
                signal_group(process, signal.SIGSTOP)
            groups = {f"k{i}": p.pid for i, p in enumerate(processes)}
            for name, backend in (
                ("cputime (procfs)", ProcfsCounters()),
                ("perf (sw events)", PerfCounters(events=software)),
            ):
                backend.read(groups)  # open the counters once, as the harness does on first sight
                batched = _median_ms(
                    lambda backend=backend, groups=groups: backend.read(groups), args.repeats
                )
                separate = _median_ms(
                    lambda backend=backend, groups=groups: [
                        backend.read({k: v}) for k, v in groups.items()
                    ],
                    args.repeats,
                )
                backend.close()
                print(
                    f"{name:<18} {tasks:>5} {tasks * threads:>5} {batched:>10.2f} "
                    f"{separate:>11.2f} "
                    f"{separate / batched:>6.2f} {100 * 2 * batched / 1e3 / WINDOW_SECONDS:>10.2f}%"
                )
        finally:
            terminate_tasks(processes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
