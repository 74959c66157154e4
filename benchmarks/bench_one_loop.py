"""One event loop for every scheduler, against an earlier version, side by side in one run.

Times the simulation alone (CPU seconds of `simulate`, not inflated by other load on a shared
machine), alternately for this checkout and for an earlier one (A B A B ...), each run in a fresh
subprocess:

- EASY on SDSC-SP2 (target: this version's time / the earlier one's <= 1);
- EASY and the smallest-area-first recipe of docs/CONTRIBUTING.md (docs/examples/
  smallest_area_first.py, loaded as a plug-in) on KTH-SP2 (target: recipe / EASY <= 1.5, in this
  version); the earlier version runs its own recipe (as it was written for it), if it has one.

    git worktree add /tmp/main main
    python benchmarks/bench_one_loop.py --baseline /tmp/main [--repeat 5]

The earlier checkout is imported from its source folders (no installation): a temporary folder
maps them into one `cosched` package as the installed layout does.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from data_paths import REPO, SHARED_DATA

AREAS = ("theory", "strategies", "simulator", "measurement")
RECIPE = REPO / "docs" / "examples" / "smallest_area_first.py"
PROBE = """
import importlib.util, json, sys, time
try:
    from cosched.simulator.simulation import simulate
except ImportError:  # an earlier version: simulate lived in the engine's module
    from cosched.simulator.engine import simulate
from cosched.simulator.platform import PRESETS
from cosched.simulator.workload import load_workload
trace, preset, scheduler = sys.argv[1:4]
if scheduler.endswith(".py"):
    spec = importlib.util.spec_from_file_location("recipe", scheduler)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    scheduler = module.SmallestAreaFirst()
platform = PRESETS[preset]
workload = load_workload(trace, max_cores=platform.total_cores)
used = time.process_time()
simulate(workload, platform, scheduler)
print(json.dumps(time.process_time() - used))
"""


def package_folder(checkout: Path, into: Path) -> Path:
    """`into`, holding `cosched/` of `checkout` with its areas mapped inside (as installed)."""
    package = into / "cosched"
    shutil.copytree(checkout / "cosched", package)
    for area in AREAS:
        (package / area).symlink_to(checkout / area)
    return into


def seconds(path: Path | None, trace: str, preset: str, scheduler: str) -> float:
    """One simulation's CPU seconds, in a subprocess importing cosched from `path` (None: this
    installation)."""
    # as `cosched simulate` sets it (cosched.cli.SERIAL_BLAS_COMMANDS): numpy's idle OpenBLAS worker
    # would spin for about 0.1 s of CPU during the simulation and count in its CPU seconds
    environment = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
    if path is not None:
        environment["PYTHONPATH"] = str(path)
    done = subprocess.run(
        [sys.executable, "-c", PROBE, trace, preset, scheduler],
        check=True,
        capture_output=True,
        text=True,
        cwd=tempfile.gettempdir(),
        env=environment,
    )
    return float(json.loads(done.stdout.strip().splitlines()[-1]))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, help="a checkout of the earlier version")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    sdsc = str(SHARED_DATA / "swf" / "SDSC-SP2-1998-4.2-cln.swf.gz")
    with tempfile.TemporaryDirectory() as folder:
        earlier = package_folder(args.baseline.resolve(), Path(folder)) if args.baseline else None
        earlier_recipe = RECIPE
        if args.baseline and (args.baseline / RECIPE.relative_to(REPO)).exists():
            earlier_recipe = args.baseline.resolve() / RECIPE.relative_to(REPO)
        pairs = {
            "EASY, SDSC-SP2": [(None, sdsc, "sdsc-sp2", "easy")]
            + ([(earlier, sdsc, "sdsc-sp2", "easy")] if earlier else []),
            "KTH-SP2": [
                (None, "kth-sp2", "kth-sp2", "easy"),
                (None, "kth-sp2", "kth-sp2", str(RECIPE)),
            ],
            "KTH-SP2, earlier": [
                (earlier, "kth-sp2", "kth-sp2", "easy"),
                (earlier, "kth-sp2", "kth-sp2", str(earlier_recipe)),
            ]
            if earlier
            else [],
        }
        times: dict[tuple, list[float]] = {run: [] for runs in pairs.values() for run in runs}
        for _ in range(args.repeat):
            for run in times:
                times[run].append(seconds(*run))
    median = {run: statistics.median(values) for run, values in times.items()}
    print(f"medians of {args.repeat} runs, alternating (simulation alone, CPU seconds):")
    print("| case | this version | other | ratio | target |")
    print("|---|---:|---:|---:|---:|")
    easy, *old = pairs["EASY, SDSC-SP2"]
    if old:
        ratio = median[easy] / median[old[0]]
        print(
            f"| EASY on SDSC-SP2, this version / earlier | {median[easy]:.3f} | "
            f"{median[old[0]]:.3f} | {ratio:.2f} | <= 1 |"
        )
    kth_easy, recipe = pairs["KTH-SP2"]
    ratio = median[recipe] / median[kth_easy]
    print(
        f"| smallest area first / EASY on KTH-SP2 | {median[recipe]:.3f} | "
        f"{median[kth_easy]:.3f} | {ratio:.2f} | <= 1.5 |"
    )
    if earlier:
        old_easy, old_recipe = pairs["KTH-SP2, earlier"]
        print(
            f"| the same in the earlier version | {median[old_recipe]:.3f} | "
            f"{median[old_easy]:.3f} | {median[old_recipe] / median[old_easy]:.2f} | |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
