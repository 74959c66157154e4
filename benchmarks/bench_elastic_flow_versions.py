"""The `cosched elastic` simulation against an earlier git revision of its flow model, side by side.

Runs the bundled example project (`cosched elastic example`) in one process, alternately with this
checkout's `simulator/elastic/{flow,runtime}.py` and with those two files as they were at REV (the
rest of cosched is shared), and prints the median CPU seconds of the simulation of each and their
ratio. It also checks that both give every job the same end time.

    python benchmarks/bench_elastic_flow_versions.py --before REV [--repeat 10]
"""

from __future__ import annotations

import argparse
import importlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OLD_FLOW, OLD_RUNTIME = "bench_old_elastic_flow", "bench_old_elastic_runtime"


def earlier_modules(revision: str, folder: Path):
    """The flow and runtime modules of `revision`, importable under their own names."""

    def show(path: str) -> str:
        return subprocess.run(
            ["git", "show", f"{revision}:{path}"],
            cwd=ROOT,
            check=True,
            capture_output=True,
            text=True,
        ).stdout

    (folder / f"{OLD_FLOW}.py").write_text(show("simulator/elastic/flow.py"))
    runtime = show("simulator/elastic/runtime.py").replace(
        "from cosched.simulator.elastic.flow import", f"from {OLD_FLOW} import"
    )
    (folder / f"{OLD_RUNTIME}.py").write_text(runtime)
    sys.path.insert(0, str(folder))
    return importlib.import_module(OLD_RUNTIME)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="git revision to compare with")
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()

    from cosched.simulator.elastic import cli
    from cosched.simulator.elastic import runtime as current
    from cosched.simulator.elastic.compat import load_algorithm
    from cosched.simulator.elastic.config import load_configuration
    from cosched.simulator.elastic.expressions import Expressions
    from cosched.simulator.elastic.platform import load_elastisim_platform
    from cosched.simulator.elastic.workload import load_jobs

    with tempfile.TemporaryDirectory() as folder:
        earlier = earlier_modules(args.before, Path(folder))
        project = cli.PRESET_ROOT / "example"
        os.chdir(project)
        configuration = load_configuration(cli.PRESET_CONFIG)
        platform = load_elastisim_platform(configuration.platform_file)
        seconds: dict[str, list[float]] = {"this checkout": [], args.before: []}
        ends: dict[str, list[float]] = {}
        for _ in range(args.repeat):
            for label, module in (("this checkout", current), (args.before, earlier)):
                expressions = Expressions()
                jobs = load_jobs(configuration.jobs_file, expressions)
                algorithm = load_algorithm(str(project / "algorithm.py"))
                start = time.process_time()
                simulation = module.simulate_project(
                    configuration, platform, jobs, algorithm, expressions=expressions
                )
                seconds[label].append(time.process_time() - start)
                ends[label] = [run.end for run in simulation.runs]
    same = ends["this checkout"] == ends[args.before]
    for label, values in seconds.items():
        print(f"{label}: median {statistics.median(values):.4f} s CPU over {len(values)} runs")
    ratio = statistics.median(seconds["this checkout"]) / statistics.median(seconds[args.before])
    print(f"ratio this checkout / {args.before}: {ratio:.3f}; every job's end identical: {same}")


if __name__ == "__main__":
    main()
