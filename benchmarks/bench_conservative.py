"""Conservative backfilling speed on real traces, optionally against an earlier version in one run.

Times `cosched simulate --scheduler conservative` on SDSC-SP2-1998 (preset sdsc-sp2),
CEA-Curie-2011 (curie) and RICC-2010 (ricc), from ../shared/data/swf (or COSCHED_SWF_DIR), and
prints the median simulation time (`wall_seconds` of the summary: the event loop only, loading
excluded) over --repeat runs and jobs/s, and the median CPU time of the whole command (user + system
of the child process, loading included: on a shared machine it moves less than the wall time). With
--before, each run of this installation alternates with a run of the earlier one (so both see the
same machine load; the machine is shared, compare the ratios more than absolute times), the table
gets before/after columns and their ratios (simulation time and CPU time), and
--check-results compares the two jobs.csv value by value.

    python benchmarks/bench_conservative.py              # this installation, 3 runs each
    python benchmarks/bench_conservative.py --traces sdsc-sp2,ricc --repeat 5
    python benchmarks/bench_conservative.py --limit ricc=30000,curie=50000 \\
        --before "env PYTHONPATH=/tmp/old python3 -m cosched" --check-results
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from data_paths import SHARED_DATA  # noqa: E402  (the script's folder is on sys.path)

DATA = (
    Path(os.environ["COSCHED_SWF_DIR"]) if "COSCHED_SWF_DIR" in os.environ else SHARED_DATA / "swf"
)
TRACES = {  # name -> (file under DATA, platform preset)
    "sdsc-sp2": ("SDSC-SP2-1998-4.2-cln.swf.gz", "sdsc-sp2"),
    "curie": ("CEA-Curie-2011-2.1-cln.swf.gz", "curie"),
    "ricc": ("RICC-2010-2.swf.gz", "ricc"),
}
THIS = [sys.executable, "-m", "cosched"]


def run(
    command: list[str], trace: str, limit: int | None, extra: list[str], out: Path | None
) -> dict:
    """One `simulate` run; returns its JSON summary."""
    name, preset = TRACES[trace]
    args = (
        command
        + [
            "simulate",
            "--workload",
            str(DATA / name),
            "--platform",
            preset,
            "--scheduler",
            "conservative",
            "--quiet",
            "--json",
        ]
        + extra
    )
    if limit:
        args += ["--limit", str(limit)]
    if out is not None:
        args += ["--out", str(out)]
    # from a neutral folder: run from the checkout, `-m cosched` would import the checkout's own
    # files
    before = _children_cpu()
    done = subprocess.run(args, capture_output=True, text=True, cwd=tempfile.gettempdir())
    if done.returncode:
        raise SystemExit(f"failed ({done.returncode}): {shlex.join(args)}\n{done.stderr[-2000:]}")
    summary = json.loads(done.stdout)
    summary["cpu_seconds"] = _children_cpu() - before
    return summary


def _children_cpu() -> float:
    """User + system CPU seconds of the finished child processes so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def same_jobs(first: Path, second: Path) -> bool:
    """The two jobs.csv are identical value by value."""
    import pandas as pd
    from pandas.testing import assert_frame_equal

    try:
        assert_frame_equal(
            pd.read_csv(first / "jobs.csv"), pd.read_csv(second / "jobs.csv"), check_exact=True
        )
    except AssertionError:
        return False
    return True


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--traces", default=",".join(TRACES), help=f"comma-separated, of {', '.join(TRACES)}"
    )
    parser.add_argument(
        "--repeat", type=int, default=3, help="runs per trace and version (median reported)"
    )
    parser.add_argument(
        "--limit", default="", help="first jobs per trace, e.g. ricc=30000,curie=50000"
    )
    parser.add_argument(
        "--before",
        help="command of the earlier cosched to compare with, e.g. "
        "'env PYTHONPATH=/tmp/old python3 -m cosched'",
    )
    parser.add_argument(
        "--check-results",
        action="store_true",
        help="with --before: also check that both versions give the same jobs.csv",
    )
    parser.add_argument(
        "--options", default="", help="extra simulate options, e.g. '--depth 5 --run-times'"
    )
    args = parser.parse_args(argv)
    args.traces = [t for t in args.traces.split(",") if t]
    unknown = [t for t in args.traces if t not in TRACES]
    if unknown:
        parser.error(f"unknown traces {unknown}; known: {', '.join(TRACES)}")
    return args


def measure(
    trace: str, versions: dict, args: argparse.Namespace, limit: int | None, extra: list[str]
) -> tuple:
    """--repeat alternating runs of each version on one trace: (trace, jobs, medians, identical)."""
    times = {version: [] for version in versions}
    cpu = {version: [] for version in versions}
    jobs, identical = 0, None
    with tempfile.TemporaryDirectory() as folder:
        for index in range(args.repeat):
            for version, command in versions.items():  # alternate: both see the same load
                out = Path(folder) / version if args.check_results and index == 0 else None
                summary = run(command, trace, limit, extra, out)
                times[version].append(summary["wall_seconds"])
                cpu[version].append(summary["cpu_seconds"])
                jobs = summary["jobs"]
                print(
                    f"  {trace} {version} run {index + 1}: {summary['wall_seconds']:.2f} s, "
                    f"CPU {summary['cpu_seconds']:.2f} s",
                    file=sys.stderr,
                )
        if args.check_results and args.before:
            identical = same_jobs(Path(folder) / "before", Path(folder) / "after")
    medians = {version: statistics.median(values) for version, values in times.items()}
    cpu_medians = {version: statistics.median(values) for version, values in cpu.items()}
    return trace, jobs, medians, cpu_medians, identical


def print_table(rows: list, versions: dict, args: argparse.Namespace, extra: list[str]) -> None:
    header = f"{'trace':<10} {'jobs':>8}"
    for version in versions:
        header += f" {version + ' s':>10} {version + ' jobs/s':>13} {version + ' CPU s':>12}"
    if args.before:
        header += f" {'speedup':>8} {'CPU ratio':>9}" + ("  jobs.csv" if args.check_results else "")
    print(
        f"Conservative backfilling, median of {args.repeat} runs (simulation time)"
        + (f", options {args.options}" if extra else "")
    )
    print(header)
    for trace, jobs, medians, cpu, identical in rows:
        line = f"{trace:<10} {jobs:>8}"
        for version in versions:
            line += f" {medians[version]:>10.2f} {jobs / medians[version]:>13,.0f}"
            line += f" {cpu[version]:>12.2f}"
        if args.before:
            line += f" {medians['before'] / medians['after']:>7.1f}x"
            line += f" {cpu['before'] / cpu['after']:>8.1f}x"
            if identical is not None:
                line += "  identical" if identical else "  DIFFERENT"
        print(line)


def main(argv=None) -> int:
    args = parse_args(argv)
    limits = {
        key: int(value)
        for key, value in (item.split("=") for item in args.limit.split(",") if item)
    }
    versions = {"after": THIS}
    if args.before:
        versions = {"before": shlex.split(args.before), "after": THIS}
    extra = shlex.split(args.options)

    rows = []
    for trace in args.traces:
        if not (DATA / TRACES[trace][0]).exists():
            print(f"{trace}: {DATA / TRACES[trace][0]} not found, skipped", file=sys.stderr)
            continue
        rows.append(measure(trace, versions, args, limits.get(trace), extra))
    print_table(rows, versions, args, extra)
    return 1 if any(identical is False for *_, identical in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
