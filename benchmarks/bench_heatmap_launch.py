"""What a heatmap run adds to the wall time it measures: one launch through `run_measurement` (task
containment, hostfile, reaper thread) against the same command started by a bare `subprocess.run`.

Both time a command that sleeps S seconds, side by side in one run, R times each (alternating), and
print the median measured time, its excess over S in milliseconds, and the ratio of the two
excesses. The excess is what a compact/co-located ratio of two short runs absorbs; a real
application runs for minutes.

    python benchmarks/bench_heatmap_launch.py [--repeats 20] [--seconds 0.2]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import time

from cosched.measurement.heatmap_launch import run_measurement


def _bare(seconds: float) -> float:
    started = time.monotonic()
    subprocess.run(["sleep", str(seconds)], check=True)
    return time.monotonic() - started


def _heatmap(seconds: float) -> float:
    role = {
        "app": "sleep",
        "command": ["sleep", str(seconds)],
        "values": {
            "np": 1,
            "nodes": 1,
            "ppn": 1,
            "hosts": "h0",
            "cpus": "0",
            "name": "sleep",
            "mode": "compact",
            "corunner": "",
            "run": "bench",
        },
        "cwd": None,
        "env": {},
        "timeout": None,
        "hosts": ["h0"],
    }
    result = run_measurement({"run": "bench", "roles": [role]})
    assert result["status"] == "ok", result
    return result["times"][0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=0.2)
    args = parser.parse_args()
    _heatmap(args.seconds)  # opens the containment once, as a session does
    bare, heatmap = [], []
    for _ in range(args.repeats):
        bare.append(_bare(args.seconds))
        heatmap.append(_heatmap(args.seconds))
    excess = {}
    for name, times in (("subprocess.run", bare), ("run_measurement", heatmap)):
        median = statistics.median(times)
        excess[name] = (median - args.seconds) * 1000
        print(
            f"{name:>16}: median {median:.4f} s, excess {excess[name]:.1f} ms over {args.seconds} s"
        )
    ratio = excess["run_measurement"] / excess["subprocess.run"]
    print(f"excess ratio run_measurement / subprocess.run: {ratio:.2f}")


if __name__ == "__main__":
    main()
