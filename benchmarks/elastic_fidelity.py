"""How closely `cosched elastic` follows the real ElastiSim on its 500-job example project, and how
large the rounding noise of the run itself is.

Runs the example project (../shared/data/elastisim/example-project) with the elastisim-python FCFS
test fixture, compares the per-job times with ElastiSim's own output for the same run
(tests/simulator/elastic/data/example_elastisim/job_statistics.csv, printed to 17 digits), and
prints: the mean per-job turnaround error and the makespan error; when the largest start/end
difference first exceeds 1e-7 .. 1 s; and, as the noise floor, how much cosched's own result moves
when the first job's submission time is shifted by 1e-12, 1e-9 and 1e-6 s.

python benchmarks/elastic_fidelity.py"""

from __future__ import annotations

import csv
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from data_paths import SHARED_DATA  # noqa: E402  (the script's folder is on sys.path)

from cosched.simulator.elastic.cli import PRESET_ROOT  # noqa: E402
from cosched.simulator.elastic.compat import load_algorithm  # noqa: E402
from cosched.simulator.elastic.config import load_configuration  # noqa: E402
from cosched.simulator.elastic.expressions import Expressions  # noqa: E402
from cosched.simulator.elastic.platform import load_elastisim_platform  # noqa: E402
from cosched.simulator.elastic.runtime import simulate_project  # noqa: E402
from cosched.simulator.elastic.workload import load_jobs  # noqa: E402

PROJECT = SHARED_DATA / "elastisim" / "example-project"
DATA = ROOT / "tests" / "simulator" / "elastic" / "data"
DRIFT_THRESHOLDS = (1e-7, 1e-5, 1e-3, 1e-1, 1.0)  # s
SHIFTS = (1e-12, 1e-9, 1e-6)  # s added to the first job's submission time


def run(root: Path, shift: float = 0.0) -> dict:
    """{job id: (submit, start, end)} of one cosched run from the project's root."""
    jobs_file = root / "data" / "input" / "jobs.json"
    original = jobs_file.read_text()
    try:
        if shift:
            document = json.loads(original)
            document["jobs"][0]["submit_time"] += shift
            jobs_file.write_text(json.dumps(document))
        configuration = load_configuration("data/input/configuration.json")
        expressions = Expressions()
        sim = simulate_project(
            configuration,
            load_elastisim_platform(configuration.platform_file),
            load_jobs(configuration.jobs_file, expressions),
            load_algorithm(PRESET_ROOT / "example" / "algorithm.py"),
            expressions=expressions,
        )
    finally:
        jobs_file.write_text(original)
    return {run.spec.identifier: (run.spec.submit_time, run.start, run.end) for run in sim.runs}


def errors(reference: dict, other: dict) -> tuple[float, float]:
    """Mean relative per-job turnaround difference and relative makespan difference."""
    turnaround = [
        abs((other[job][2] - other[job][0]) - (end - submit)) / (end - submit)
        for job, (submit, _, end) in reference.items()
    ]

    def makespan(times):
        return max(end for _, _, end in times.values()) - min(
            submit for submit, _, _ in times.values()
        )

    return sum(turnaround) / len(turnaround), abs(makespan(other) - makespan(reference)) / makespan(
        reference
    )


def main() -> int:
    if not PROJECT.is_dir():
        print(f"missing {PROJECT}", file=sys.stderr)
        return 1
    with open(DATA / "example_elastisim" / "job_statistics.csv", newline="") as handle:
        elastisim = {
            int(row["ID"]): (
                float(row["Submit Time"]),
                float(row["Start Time"]),
                float(row["End Time"]),
            )
            for row in csv.DictReader(handle)
        }
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / "example-project"
        shutil.copytree(PROJECT, root)
        os.chdir(root)
        cosched = run(root)
        turnaround, makespan = errors(elastisim, cosched)
        print(
            f"cosched vs ElastiSim: mean turnaround error {100 * turnaround:.2f} %, makespan error "
            f"{100 * makespan:.2f} %"
        )
        events = sorted(
            (value, job, index)
            for job, times in elastisim.items()
            for index, value in enumerate(times[1:], start=1)
        )
        for threshold in DRIFT_THRESHOLDS:
            first = next(
                (
                    (value, job)
                    for value, job, index in events
                    if abs(cosched[job][index] - value) > threshold
                ),
                None,
            )
            where = "never" if first is None else f"at t = {first[0]:,.0f} s (job {first[1]})"
            print(f"  difference first above {threshold:g} s: {where}")
        for shift in SHIFTS:
            turnaround, makespan = errors(cosched, run(root, shift))
            print(
                f"cosched vs itself with job 0 submitted {shift:g} s later: mean turnaround "
                f"{100 * turnaround:.2f} %, makespan {100 * makespan:.2f} %"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
