"""The simulator engine against an earlier version of cosched, side by side in one run.

Times, alternately for this installation and for the earlier one (A B A B ...): the simulation alone
(`SimulationResult.wall_seconds`, SDSC-SP2 under EASY and Conservative by default) and the whole
`cosched simulate` command. Prints the medians and the ratio new / old of each pair.

    python benchmarks/bench_engine_versions.py --before-python OLD_VENV/bin/python [--repeat 5]

The earlier version is any installation of cosched (one import package `cosched.*`, or the earlier
top-level packages `simulator.*`) reachable from that Python; its `cosched` command is taken from
the same folder.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from data_paths import SHARED_DATA

PROBE = """
import json, sys
try:
    try:
        from cosched.simulator.simulation import simulate
    except ImportError:  # before simulate left the engine's module
        from cosched.simulator.engine import simulate
    from cosched.simulator.platform import PRESETS
    from cosched.simulator.workload import load_workload
except ImportError:  # earlier layout: top-level packages
    from simulator.engine import simulate
    from simulator.platform import PRESETS
    from simulator.workload import load_workload
trace, preset, scheduler = sys.argv[1:4]
platform = PRESETS[preset]
workload = load_workload(trace, max_cores=platform.total_cores)
print(json.dumps(simulate(workload, platform, scheduler).wall_seconds))
"""


def simulation_seconds(python: str, trace: Path, preset: str, scheduler: str) -> float:
    done = subprocess.run(
        [python, "-c", PROBE, str(trace), preset, scheduler],
        check=True,
        capture_output=True,
        text=True,
        cwd=tempfile.gettempdir(),
    )
    return float(json.loads(done.stdout.strip().splitlines()[-1]))


def command_seconds(
    cosched: str, trace: Path, preset: str, scheduler: str, extra: list[str]
) -> float:
    with tempfile.TemporaryDirectory() as folder:
        clock = time.perf_counter()
        subprocess.run(
            [
                cosched,
                "simulate",
                "--workload",
                str(trace),
                "--platform",
                preset,
                "--scheduler",
                scheduler,
                "--out",
                str(Path(folder) / "run"),
                "--quiet",
                *extra,
            ],
            check=True,
            capture_output=True,
            cwd=folder,
        )
        return time.perf_counter() - clock


def paired(measure, new: str, old: str, repeat: int) -> tuple[float, float, float]:
    """Medians of new and old, and the median of the pairwise ratios new / old."""
    news, olds = [], []
    for _ in range(repeat):
        news.append(measure(new))
        olds.append(measure(old))
    return (
        statistics.median(news),
        statistics.median(olds),
        statistics.median(n / o for n, o in zip(news, olds)),
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before-python", required=True, help="Python of the earlier installation")
    parser.add_argument(
        "--trace", default="SDSC-SP2-1998-4.2-cln.swf.gz", help="SWF file under ../shared/data/swf"
    )
    parser.add_argument("--platform", default="sdsc-sp2")
    parser.add_argument("--schedulers", default="easy,conservative")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    trace = SHARED_DATA / "swf" / args.trace
    old_cosched = str(Path(args.before_python).parent / "cosched")
    new_cosched = str(Path(sys.executable).parent / "cosched")
    print(
        f"{args.trace} on {args.platform}, median of {args.repeat} alternating runs; "
        "ratio = new / old"
    )
    print(f"{'what':<36}{'new [s]':>10}{'old [s]':>10}{'ratio':>8}")
    for scheduler in args.schedulers.split(","):
        new, old, ratio = paired(
            lambda python, scheduler=scheduler: simulation_seconds(
                python, trace, args.platform, scheduler
            ),
            sys.executable,
            args.before_python,
            args.repeat,
        )
        print(f"{'simulation, ' + scheduler:<36}{new:>10.3f}{old:>10.3f}{ratio:>8.2f}")
    # the earlier version wrote no plots by default
    for label, extra in (
        ("", []),
        (" --no-plots", ["--no-plots"]),
    ):
        new, old, ratio = paired(
            lambda cosched, extra=extra: command_seconds(
                cosched, trace, args.platform, "easy", extra if cosched == new_cosched else []
            ),
            new_cosched,
            old_cosched,
            args.repeat,
        )
        print(f"{'whole cosched simulate, easy' + label:<36}{new:>10.3f}{old:>10.3f}{ratio:>8.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
