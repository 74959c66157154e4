"""Speed of `cosched elastic` on ElastiSim's 500-job example project (128 nodes, all five job
types).

Copies the example project (../shared/data/elastisim/example-project) to a temporary folder and,
from its root as ElastiSim users run it, times side by side in one run: loading the inputs, the
simulation alone (`wall_seconds`: event loop and algorithm calls; and the CPU time of the process
meanwhile, which a shared machine inflates less) for the elastisim-python FCFS test fixture and the
six built-in policies (median of --repeat runs each), and the whole command (`cosched elastic ...
--out DIR`: start-up, loading, simulation, writing every CSV) once per algorithm. Target: the
simulation under 2 s (ElastiSim built against SimGrid takes about 16 s for this project on the same
machine, a figure from its issue, not measured here; benchmarks/bench_elastic_cli.py measures it).

    python benchmarks/bench_elastic.py
    python benchmarks/bench_elastic.py --repeat 5 --algorithms fcfs-file,fcfs-malleable
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from data_paths import SHARED_DATA  # noqa: E402  (the script's folder is on sys.path)

from cosched.simulator.elastic.algorithms import ALGORITHMS, make_algorithm  # noqa: E402
from cosched.simulator.elastic.compat import load_algorithm  # noqa: E402
from cosched.simulator.elastic.config import load_configuration  # noqa: E402
from cosched.simulator.elastic.expressions import Expressions  # noqa: E402
from cosched.simulator.elastic.platform import load_elastisim_platform  # noqa: E402
from cosched.simulator.elastic.runtime import simulate_project  # noqa: E402
from cosched.simulator.elastic.workload import load_jobs  # noqa: E402

PROJECT = SHARED_DATA / "elastisim" / "example-project"
FCFS_FILE = ROOT / "simulator" / "elastic" / "presets" / "example" / "algorithm.py"
TARGET_SECONDS = 2.0
CONFIG = "data/input/configuration.json"


def _algorithm(name: str):
    return load_algorithm(FCFS_FILE) if name == "fcfs-file" else make_algorithm(name)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--repeat", type=int, default=3, help="runs per algorithm (median reported)"
    )
    parser.add_argument(
        "--algorithms",
        default=",".join(["fcfs-file", *ALGORITHMS]),
        help="comma list: fcfs-file (the elastisim-python test fixture) and built-in names",
    )
    args = parser.parse_args()
    if not PROJECT.is_dir():
        print(f"missing {PROJECT}", file=sys.stderr)
        return 1
    names = [name for name in args.algorithms.split(",") if name]
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / "example-project"
        shutil.copytree(PROJECT, root)
        os.chdir(root)
        print(
            f"{'algorithm':<16} {'load [s]':>9} {'simulate [s]':>13} {'cpu [s]':>8} "
            f"{'command [s]':>12} {'invocations':>12} {'makespan [s]':>13} {'target':>7}"
        )
        for name in names:
            loads, sims, cpus = [], [], []
            for _ in range(args.repeat):
                started = time.perf_counter()
                configuration = load_configuration(CONFIG)
                expressions = Expressions()
                platform = load_elastisim_platform(configuration.platform_file)
                jobs = load_jobs(configuration.jobs_file, expressions)
                loads.append(time.perf_counter() - started)
                cpu = time.process_time()
                sim = simulate_project(
                    configuration,
                    platform,
                    jobs,
                    _algorithm(name),
                    expressions=expressions,
                    algorithm_name=name,
                )
                cpus.append(time.process_time() - cpu)
                sims.append(sim.wall_seconds)
            algorithm = str(FCFS_FILE) if name == "fcfs-file" else name
            started = time.perf_counter()
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "cosched",
                    "elastic",
                    CONFIG,
                    "--algorithm",
                    algorithm,
                    "--out",
                    str(Path(folder) / f"out-{name}"),
                    "--quiet",
                    "--json",
                ],
                check=True,
                stdout=subprocess.DEVNULL,
            )
            command = time.perf_counter() - started
            makespan = max(run.end for run in sim.runs) - min(
                run.spec.submit_time for run in sim.runs
            )
            simulate_seconds = statistics.median(sims)
            print(
                f"{name:<16} {statistics.median(loads):>9.3f} {simulate_seconds:>13.3f} "
                f"{statistics.median(cpus):>8.3f} {command:>12.2f} "
                f"{sim.invocations:>12} {makespan:>13.0f} "
                f"{'ok' if simulate_seconds < TARGET_SECONDS else 'MISSED':>7}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
