"""cosched's ``--compat cqsim`` against CQSim itself: every job's start, on whole archive traces.

Runs CQSim unmodified (a checkout of github.com/SPEAR-UIC/CQSim: its ``src`` folder, Python 3) with
its EASY backfilling (``cqsim.py -b 1 -R -1``: the whole trace) on each trace, in a scratch copy,
then simulates the same trace with cosched's EASY under ``compat="cqsim"`` and compares each job's
wait (start - submit; CQSim shifts its clock to the first submit). Also runs the ablations (each
setting of the variant back to cosched's own, and cosched's default EASY) and prints how many jobs
start at another time under each. CQSim takes minutes per trace (KTH-SP2 about 3, SDSC-SP2 about
10 on one core); ``--rst`` reuses a result file CQSim wrote earlier.

    python benchmarks/cqsim_compat.py --cqsim /path/to/CQSim/src
    python benchmarks/cqsim_compat.py --rst kth-sp2=KTH.rst --rst sdsc-sp2=SDSC.rst
"""

from __future__ import annotations

import argparse
import gzip
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from data_paths import SHARED_DATA  # noqa: E402  (the script's folder is on sys.path)

DATA = (
    Path(os.environ["COSCHED_SWF_DIR"]) if "COSCHED_SWF_DIR" in os.environ else SHARED_DATA / "swf"
)
TRACES = {  # name -> (file, processors: the header's MaxProcs)
    "kth-sp2": ("KTH-SP2-1996-2.1-cln.swf.gz", 100),
    "sdsc-sp2": ("SDSC-SP2-1998-4.2-cln.swf.gz", 128),
}
# (label, scheduler options, engine options): the variant, each setting back to cosched's own, and
# cosched's default EASY
VARIANTS = (
    ("compat cqsim", {}, {}),
    ("  shadow_extra first", {"shadow_extra": "first"}, {}),
    ("  queued_durations estimate", {"queued_durations": "estimate"}, {}),
    ("  one pass per timestamp", {}, {"pass_per_event": False}),
    ("  depth 100", {"depth": 100}, {}),
)


def run_cqsim(source: Path, trace: Path, scratch: Path) -> Path:
    """Run CQSim's EASY on `trace` in a copy of its `source` folder; the path of its .rst."""
    shutil.copytree(source, scratch / "src")
    inputs = scratch / "data" / "InputFiles"
    inputs.mkdir(parents=True)
    name = trace.name.removesuffix(".gz")
    with gzip.open(trace, "rb") as packed, open(inputs / name, "wb") as plain:
        shutil.copyfileobj(packed, plain)
    subprocess.run(
        [sys.executable, "cqsim.py", "-j", name, "-n", name, "-b", "1", "-R", "-1"],
        cwd=scratch / "src",
        check=True,
        stdout=subprocess.DEVNULL,
    )
    (result,) = (scratch / "data" / "Results").glob("*.rst")
    return result


def read_rst(path: Path) -> dict[int, float]:
    """Job id -> wait from CQSim's result file (id;proc;proc;request;run;wait;submit;start;end)."""
    waits = {}
    for line in path.read_text().splitlines():
        fields = line.split(";")
        waits[int(fields[0])] = float(fields[5])
    return waits


def mismatches(trace: Path, processors: int, waits: dict[int, float]) -> list[tuple[str, int]]:
    """(label, jobs whose wait differs from CQSim's) per variant, and for cosched's default."""
    from cosched.simulator.compat import COMPAT
    from cosched.simulator.platform import Platform
    from cosched.simulator.simulation import simulate
    from cosched.simulator.workload import read_swf

    compat = COMPAT["cqsim"]
    workload = read_swf(trace, cleaning=compat.cleaning)
    platform = Platform(nodes=processors)
    rows = []
    for label, scheduler, engine in VARIANTS:
        options = {"depth": compat.depth(len(workload)), **compat.scheduler_options, **scheduler}
        result = simulate(
            workload,
            platform,
            "easy",
            scheduler_options=options,
            **{**compat.engine_options, **engine},
        )
        rows.append((label, _differ(workload, result, waits)))
    default = simulate(read_swf(trace), platform, "easy")
    rows.append(("cosched's default EASY", _differ(default.workload, default, waits)))
    return rows


def _differ(workload, result, waits: dict[int, float]) -> int:
    own = dict(zip(workload.job_id.tolist(), (result.start - workload.submit).tolist()))
    return sum(1 for job, wait in waits.items() if job not in own or own[job] != wait) + sum(
        1 for job in own if job not in waits
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cqsim", type=Path, help="CQSim's src folder (to run it)")
    parser.add_argument(
        "--rst", action="append", default=[], help="NAME=FILE: CQSim's result of trace NAME"
    )
    parser.add_argument("--trace", action="append", choices=tuple(TRACES), help="default: all")
    args = parser.parse_args()
    given = dict(item.split("=", 1) for item in args.rst)
    for name in args.trace or TRACES:
        file, processors = TRACES[name]
        trace = DATA / file
        if name in given:
            rst = Path(given[name])
        elif args.cqsim is None:
            parser.error(f"give --cqsim (to run CQSim) or --rst {name}=FILE")
        else:
            scratch = Path(tempfile.mkdtemp(prefix="cqsim-"))
            rst = run_cqsim(args.cqsim, trace, scratch)
        waits = read_rst(rst)
        print(f"{name}: {len(waits)} jobs in CQSim's schedule; jobs starting at another time:")
        for label, count in mismatches(trace, processors, waits):
            print(f"  {label:<30} {count}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
