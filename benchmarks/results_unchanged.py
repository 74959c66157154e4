"""Check that a change of the simulator leaves every per-job result identical, value by value.

Runs a fixed set of simulations through the `cosched` command of one installation and writes each
run's jobs.csv into a folder; a second call compares two such folders. To compare with an earlier
version, run the same script with that version's command (e.g. from a git worktree installed in its
own venv):

    python benchmarks/results_unchanged.py write old/ --cosched old-venv/bin/cosched
    python benchmarks/results_unchanged.py write new/ --workloads old/workloads   # the same drawn
    jobs python benchmarks/results_unchanged.py compare old/ new/

Cases (every registered scheduler and hybrid mechanism; the script fails if the installation
registers one it does not cover):
- SDSC-SP2 (from ../shared/data/swf) under every classic scheduler (FCFS, EASY, Conservative, SJF,
  LJF);
- SDSC-SP2 with partitions (docs/examples/sdsc-sp2-partitions.json) under every classic scheduler,
  and on two node types (`TWO_TYPES`: each partition but the first holds both) under FCFS, EASY and
  Conservative, with those partitions and without;
- the co-scheduling grid: every co-scheduler (and EASY) on 1,000-job workloads drawn from the
  bundled
  synthetic heatmap (batch and Poisson arrivals, both placements) and, when present, the real ARIS
  NAS heatmap;
- elastic jobs: the first 5,000 SDSC-SP2 jobs, half of them malleable, under every elastic policy
  and
  EASY, Conservative; half of them moldable under EASY;
- hybrid runs: the first 5,000 SDSC-SP2 jobs typed on-demand / rigid / malleable under every
  on-demand
  mechanism around EASY, with node failures; their action logs (every node handed out) are compared
  too;
- `cosched elastic`: ElastiSim's bundled example project under every built-in policy (its
  job_statistics.csv is compared too).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
from data_paths import REPO, SHARED_DATA

SDSC_SP2 = SHARED_DATA / "swf" / "SDSC-SP2-1998-4.2-cln.swf.gz"
ARIS_NAS = REPO / "cosched" / "data" / "derived_pairs_aris_NAS.csv"
SYNTHETIC = REPO / "simulator" / "data" / "synthetic_npb_heatmap.csv"
PARTITIONS = REPO / "docs" / "examples" / "sdsc-sp2-partitions.json"
# SDSC-SP2's 128 nodes as two node types: 64 of one core, 64 of two
TWO_TYPES = {
    "name": "sdsc-sp2-two-types",
    "groups": [
        {"name": "thin", "nodes": 64, "sockets_per_node": 1, "cores_per_socket": 1},
        {"name": "fat", "nodes": 64, "sockets_per_node": 1, "cores_per_socket": 2},
    ],
}
CLASSIC = ("fcfs", "easy", "conservative", "sjf", "ljf")
COSCHEDULERS = (
    "easy-co",
    "sjf-co",
    "ljf-co",
    "laf-co",
    "popularity",
    "filler",
    "sjf-filler",
    "pop-filler",
    "matching",
)


ELASTIC = (
    "fcfs-rigid",
    "fcfs-malleable",
    "sjf-rigid",
    "sjf-malleable",
    "drf",
    "srtf",
    "fcfs-rigid-greedy",
    "sjf-rigid-greedy",
)
MECHANISMS = ("baseline", "n-paa", "n-spaa", "cua-paa", "cua-spaa", "cup-paa", "cup-spaa")
PART = ["--limit", "5000"]  # the elastic and hybrid cases: the first jobs of SDSC-SP2
ACTIONS = "actions.csv"  # a case's action log, next to its jobs.csv


def check_coverage() -> None:
    """Every scheduler and mechanism the installation registers is among the cases."""
    from cosched.simulator.hybrid.mechanisms import MECHANISMS as REGISTERED
    from cosched.simulator.schedulers import SCHEDULERS

    covered = set(CLASSIC) | set(COSCHEDULERS) | set(ELASTIC)
    missing = sorted(set(SCHEDULERS) - covered) + sorted(set(REGISTERED) - set(MECHANISMS))
    if missing:
        raise SystemExit(f"no case runs {', '.join(missing)}: add them to {__file__}")


def cases(workloads: Path, cosched: list[str], reuse: bool = False):
    """(name, simulate arguments) for every case; draws the co-scheduling workloads into `workloads`
    (or reuses them)."""
    if SDSC_SP2.exists():
        sdsc = ["--workload", str(SDSC_SP2), "--platform", "sdsc-sp2"]
        for scheduler in CLASSIC:
            yield (f"sdsc-sp2-{scheduler}", [*sdsc, "--scheduler", scheduler])
        partitioned = ["--workload", str(SDSC_SP2), "--partitions", str(PARTITIONS)]
        for scheduler in CLASSIC:
            yield (
                f"sdsc-sp2-partitions-{scheduler}",
                [*partitioned, "--platform", "sdsc-sp2", "--scheduler", scheduler],
            )
        two_types = workloads / "sdsc-sp2-two-types.json"
        two_types.write_text(json.dumps(TWO_TYPES))
        for scheduler in ("fcfs", "easy", "conservative"):
            yield (
                f"sdsc-sp2-two-types-partitions-{scheduler}",
                [*partitioned, "--platform", str(two_types), "--scheduler", scheduler],
            )
            yield (
                f"sdsc-sp2-two-types-{scheduler}",
                [
                    "--workload",
                    str(SDSC_SP2),
                    "--platform",
                    str(two_types),
                    "--scheduler",
                    scheduler,
                ],
            )
        elastic = [*sdsc, *PART, "--elastic-fraction", "0.5", "--seed", "3"]
        for scheduler in ELASTIC + ("easy", "conservative"):
            yield (f"sdsc-sp2-malleable-{scheduler}", [*elastic, "--scheduler", scheduler])
        yield (
            "sdsc-sp2-moldable-easy",
            [*elastic, "--elastic-kind", "moldable", "--scheduler", "easy"],
        )
        for mechanism in MECHANISMS:
            yield (
                f"sdsc-sp2-hybrid-{mechanism}",
                [*sdsc, *PART, "--hybrid", mechanism, "--mtbf", "300", "--seed", "5"],
            )
    else:
        print(f"skipped SDSC-SP2: {SDSC_SP2} not found", file=sys.stderr)
    heatmaps = {"synthetic": SYNTHETIC} | ({"aris-nas": ARIS_NAS} if ARIS_NAS.exists() else {})
    for label, heatmap in heatmaps.items():
        extra = ["--default-speedup", "1"] if label == "aris-nas" else []
        for arrivals in ("batch", "poisson"):
            workload = workloads / f"{label}-{arrivals}.csv"
            if reuse:
                yield from _co_cases(label, arrivals, workload, heatmap, extra)
                continue
            gaps = ["--interarrival", arrivals] + (
                ["--mean-interarrival", "30"] if arrivals == "poisson" else []
            )
            subprocess.run(
                [
                    *cosched,
                    "generate-workload",
                    "--heatmap",
                    str(heatmap),
                    "--jobs",
                    "1000",
                    *gaps,
                    "--seed",
                    "7",
                    "--out",
                    str(workload),
                ],
                check=True,
                stdout=subprocess.DEVNULL,
            )
            yield from _co_cases(label, arrivals, workload, heatmap, extra)


def _co_cases(label: str, arrivals: str, workload: Path, heatmap: Path, extra: list[str]):
    for scheduler in ("easy",) + COSCHEDULERS:
        for placement in ("idle", "shared"):
            yield (
                f"{label}-{arrivals}-{scheduler}-{placement}",
                [
                    "--workload",
                    str(workload),
                    "--platform",
                    "aris",
                    "--scheduler",
                    scheduler,
                    "--heatmap",
                    str(heatmap),
                    "--placement",
                    placement,
                    "--run-times",
                    *extra,
                ],
            )


def write(folder: Path, cosched: list[str], workloads: Path | None = None) -> None:
    """Run every case into `folder`; `workloads`: the drawn workloads of an earlier `write`, to
    simulate the same jobs."""
    check_coverage()
    folder.mkdir(parents=True, exist_ok=True)
    reuse = workloads is not None
    workloads = workloads or folder / "workloads"
    workloads.mkdir(exist_ok=True)
    for policy in ELASTIC:
        out = folder / f"elastic-example-{policy}"
        shutil.rmtree(out, ignore_errors=True)
        subprocess.run(
            [*cosched, "elastic", "example", "--scheduler", policy, "--out", str(out), "--quiet"]
            + ["--no-plots"],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        print(f"wrote {out / 'job_statistics.csv'}")
    for name, arguments in cases(workloads, cosched, reuse):
        out = folder / name
        shutil.rmtree(out, ignore_errors=True)
        actions = folder / f"{name}.{ACTIONS}"
        log = ["--log-actions", str(actions)] if "--hybrid" in arguments else []
        subprocess.run(
            [*cosched, "simulate", *arguments, "--out", str(out), "--quiet", *log],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        if log:
            shutil.move(actions, out / ACTIONS)
        print(f"wrote {out / 'jobs.csv'}")


def compare(before: Path, after: Path) -> int:
    names = sorted(
        str(p.relative_to(before))
        for pattern in ("*/jobs.csv", f"*/{ACTIONS}", "*/job_statistics.csv")
        for p in before.glob(pattern)
    )
    differing = []
    for name in names:
        old, new = pd.read_csv(before / name, keep_default_na=False), after / name
        if not new.exists():
            differing.append(f"{name}: missing in {after}")
            continue
        new = pd.read_csv(new, keep_default_na=False)
        try:
            pd.testing.assert_frame_equal(old, new[old.columns], check_exact=True)
        except (AssertionError, KeyError) as error:
            changed = _changed_rows(old, new)
            differing.append(f"{name}: {changed} rows differ; {str(error).splitlines()[0]}")
    for line in differing:
        print(line)
    print(f"{len(names) - len(differing)} of {len(names)} files identical")
    return 1 if differing or not names else 0


def _changed_rows(old: pd.DataFrame, new: pd.DataFrame) -> int | str:
    """How many rows (jobs) of two tables of one shape differ in some column."""
    if old.shape != new.shape or list(old.columns) != list(new.columns):
        return "?"
    return int((old.astype(str) != new.astype(str)).any(axis=1).sum())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    writer = commands.add_parser("write", help="run every case and write its jobs.csv into FOLDER")
    writer.add_argument("folder", type=Path)
    writer.add_argument(
        "--cosched", default="cosched", help="the cosched command to run (default: cosched)"
    )
    writer.add_argument(
        "--workloads",
        type=Path,
        help="simulate the workloads drawn by an earlier write (its "
        "workloads/ folder) instead of drawing them: compares the engines on the same jobs",
    )
    comparer = commands.add_parser(
        "compare", help="compare the jobs.csv files of two folders, value by value"
    )
    comparer.add_argument("before", type=Path)
    comparer.add_argument("after", type=Path)
    args = parser.parse_args()
    if args.command == "write":
        write(args.folder, args.cosched.split(), args.workloads)
        return 0
    return compare(args.before, args.after)


if __name__ == "__main__":
    sys.exit(main())
