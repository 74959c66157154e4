"""`cosched execute` on this node: real vs simulated makespan, real ratio, switching overhead and
wall time.

Runs, side by side and repeated (the machine may be shared, so the spread is printed too):
1. three equal compute kernels with --reference, for FCS and PI (the real ratio and the gap to the
   simulated makespan of the same strategy on the measured instance; wall time of the whole
   command);
2. PI re-measuring every 1 s quantum (--remeasure: a stop/continue/read every second), for the
   switching overhead;
3. FCS on memory- and cache-bound kernels with --reference (the gap the cputime backend cannot see).

    nice -n 10 python benchmarks/execute_real_node.py [--work N] [--repeats R] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def run(out: Path, kernels: str, work: int, strategy: str, *extra: str) -> dict:
    """One `cosched execute` run; its report.json plus the wall time of the whole command and the
    load before."""
    load = os.getloadavg()[0]
    started = time.monotonic()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "cosched",
            "execute",
            "--kernels",
            kernels,
            "--kernel-work",
            str(work),
            "--strategy",
            strategy,
            "--force",
            "--quiet",
            "--out",
            str(out),
            *extra,
        ],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    report = json.loads((out / "report.json").read_text())
    report["wall_seconds"], report["load_before"] = time.monotonic() - started, load
    return report


def row(label: str, report: dict) -> str:
    real, reference = report["real"], report.get("reference") or {}
    cells = [label, f"{report['load_before']:5.2f}", f"{report['wall_seconds']:6.1f}"]
    if "opt_makespan" in reference:
        alone = np.mean(list(reference["work"].values()))
        cells += [
            f"{alone:6.2f}",
            f"{reference['opt_makespan']:6.2f}",
            f"{reference['simulated_makespan']:6.2f}",
            f"{real['makespan']:6.2f}",
            f"{100 * real['vs_simulated']:+6.1f}",
            f"{real['ratio']:5.3f}",
        ]
    else:
        cells += ["", "", "", f"{real['makespan']:6.2f}", "", ""]
    cells += [f"{real['steps']:4d}", f"{100 * real['overhead_fraction']:5.2f}"]
    return " | ".join(cells)


def main() -> int:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument(
        "--work", type=int, default=1000, help="work units per compute kernel (default 1000)"
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", help="keep the run folders here (default: a temporary folder)")
    args = parser.parse_args()
    root = Path(args.out or tempfile.mkdtemp(prefix="execute-bench-"))
    print(
        "run | load | wall s | b (mean) s | OPT s | sim s | real s | real vs sim % | "
        "ratio | steps | overhead %"
    )
    gaps: dict[str, list[float]] = {}
    for k in range(args.repeats):
        for strategy in ("fcs", "pi"):
            report = run(
                root / f"{strategy}{k}",
                "compute,compute,compute",
                args.work,
                strategy,
                "--reference",
            )
            gaps.setdefault(strategy, []).append(report["real"]["vs_simulated"])
            print(row(f"{strategy} #{k}", report), flush=True)
        report = run(
            root / f"overhead{k}",
            "compute,compute,compute",
            args.work,
            "pi",
            "--quantum",
            "1",
            "--remeasure",
        )
        gaps.setdefault("overhead", []).append(report["real"]["overhead_fraction"])
        print(row(f"pi τ=1 s remeasure #{k}", report), flush=True)
    for kernels in ("memory,memory,memory", "cache,cache,cache"):
        report = run(
            root / kernels.split(",")[0],
            kernels,
            args.work // 10 if "memory" in kernels else args.work // 2,
            "fcs",
            "--reference",
        )
        print(row(f"fcs {kernels}", report), flush=True)
    for name, values in gaps.items():
        values = 100 * np.asarray(values)
        print(
            f"{name}: {'overhead' if name == 'overhead' else 'real vs simulated'} % min "
            f"{values.min():+.1f}, "
            f"median {np.median(values):+.1f}, max {values.max():+.1f}"
        )
    print(f"run folders: {root}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
