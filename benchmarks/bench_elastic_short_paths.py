"""What each short path of the ElastiSim runtime saves of the whole `cosched elastic` command.

A short path is a special case of the runtime's general computation (the same results, sooner for
some inputs). Each one was removed by a commit of its own whose subject starts with
"short path off:"; this script takes the commits from --before to --after that do (in history
order), exports the tree before the first and after each one (`git archive`), and runs the whole
command `cosched elastic example --out DIR --json --quiet` with every tree in fresh processes,
alternating, --repeat rounds. A step's saving is the CPU time its commit added (median after minus
median before), as a share of the whole command with every short path (the --before tree); a
short path earns its place at SHARE_TO_KEEP or more. Every tree must write the same files as the
--before tree, byte for byte (`wall_seconds` of the summary aside).

`--forced-fork` also times the --before tree with its forked CPU-series writer forced on (it forks
only while the load average leaves a core idle, so on a busy machine the plain run never forks).

The machine's 1-minute load average is printed before and after (the criterion is measured at load
2 or more).

    python benchmarks/bench_elastic_short_paths.py --before e57aa6c --repeat 7 --forced-fork
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
AREAS = ("theory", "strategies", "simulator", "measurement")  # installed as cosched.<area>
MARKER = "short path off:"
SHARE_TO_KEEP = 0.05  # of the whole command's CPU time: a short path saving less goes
# the command as `python -m cosched` runs it, with the forked writer of the CPU series forced on
FORCED_FORK = (
    "import sys; import cosched.simulator.elastic.results as results; "
    "results._fork_allowed = lambda: True; from cosched.cli import main; sys.exit(main())"
)


def export(revision: str, folder: Path) -> Path:
    """`revision`'s files in `folder`/tree and an import root `folder`/site whose `cosched` package
    is that tree's, its areas inside it as setup.py installs them (so no installed or editable
    cosched can answer for them); returns the import root."""
    tree, site = folder / "tree", folder / "site"
    tree.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "archive", revision], cwd=ROOT, check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    package = site / "cosched"
    package.mkdir(parents=True)
    for entry in (tree / "cosched").iterdir():
        (package / entry.name).symlink_to(entry)
    for area in AREAS:
        (package / area).symlink_to(tree / area)
    return site


def steps(before: str, after: str) -> list[tuple[str, str]]:
    """(commit, subject) of each short path's removal from `before` to `after`, oldest first."""
    log = subprocess.run(
        ["git", "log", "--reverse", "--format=%h%x09%s", f"{before}..{after}"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    found = [tuple(line.split("\t", 1)) for line in log.splitlines()]
    return [(commit, subject) for commit, subject in found if subject.startswith(MARKER)]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(tree: Path, out: Path, forced_fork: bool = False) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the process and any child it waited for) of one whole command
    with the cosched of `tree`, in a fresh process that keeps its bytecode as an installed package
    does."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(tree)
    start = (
        [sys.executable, "-c", FORCED_FORK] if forced_fork else [sys.executable, "-m", "cosched"]
    )
    subprocess.run(["rm", "-rf", str(out)], check=True)
    cpu, started = _children_cpu(), time.perf_counter()
    subprocess.run(
        [*start, "elastic", "example", "--out", str(out), "--json", "--quiet"],
        check=True,
        capture_output=True,
        env=env,
        cwd=tree,
    )
    return time.perf_counter() - started, _children_cpu() - cpu


def outputs(out: Path) -> dict[str, bytes]:
    """Every file the command wrote, by name; the summary without its `wall_seconds`."""
    files = {path.name: path.read_bytes() for path in sorted(out.iterdir())}
    summary = json.loads(files.pop("summary.json"))
    summary.pop("wall_seconds", None)
    files["summary.json"] = json.dumps(summary, sort_keys=True).encode()
    return files


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="the revision with every short path")
    parser.add_argument("--after", default="HEAD", help="the last revision to take steps from")
    parser.add_argument("--repeat", type=int, default=7, help="rounds (medians reported)")
    parser.add_argument(
        "--forced-fork", action="store_true", help="also the --before tree with the fork forced"
    )
    args = parser.parse_args()
    removals = steps(args.before, args.after)
    if not removals:
        print(f"no commit from {args.before} to {args.after} starts with {MARKER!r}")
        return 2
    load_before = os.getloadavg()
    cores = len(os.sched_getaffinity(0))
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        labels = [("every short path", args.before, False)]
        labels += [(subject[len(MARKER) :].strip(), commit, False) for commit, subject in removals]
        if args.forced_fork:
            labels.append(("the --before tree, CPU series by a forked child", args.before, True))
        trees = {
            revision: export(revision, folder / revision)
            for revision in dict.fromkeys(revision for _, revision, _ in labels)
        }
        reference = None
        for index, (label, revision, forced) in enumerate(labels):  # warm-up: bytecode, caches
            out = folder / f"out-{index}"
            run(trees[revision], out, forced)
            written = outputs(out)
            if reference is None:
                reference = written
            elif written != reference:
                changed = sorted(
                    name
                    for name in reference.keys() | written.keys()
                    if reference.get(name) != written.get(name)
                )
                print(f"{label} ({revision}) writes other outputs: {', '.join(changed)}")
                return 1
        times: list[list[tuple[float, float]]] = [[] for _ in labels]
        for round_ in range(args.repeat):
            order = range(len(labels)) if round_ % 2 == 0 else reversed(range(len(labels)))
            for index in order:
                _, revision, forced = labels[index]
                times[index].append(run(trees[revision], folder / f"out-{index}", forced))
    load_after = os.getloadavg()
    print(
        f"{cores} cores; load average (1, 5, 15 min) before "
        f"{', '.join(f'{value:.2f}' for value in load_before)}, after "
        f"{', '.join(f'{value:.2f}' for value in load_after)}; {args.repeat} rounds, medians; "
        "every tree wrote the --before tree's outputs"
    )
    cpu = [statistics.median(cpu for _, cpu in runs) for runs in times]
    wall = [statistics.median(wall for wall, _ in runs) for runs in times]
    whole = cpu[0]
    print(f"{'tree':<58} {'commit':>9} {'wall [s]':>9} {'CPU [s]':>8} {'saved':>7}  verdict")
    for index, (label, revision, forced) in enumerate(labels):
        saved = ""
        verdict = ""
        if index and not forced:
            share = (cpu[index] - cpu[index - 1]) / whole
            saved = f"{share:+.1%}"
            verdict = "keep" if share >= SHARE_TO_KEEP else "goes"
        elif forced:
            saved = f"{(cpu[0] - cpu[index]) / whole:+.1%}"
        print(
            f"{label[:58]:<58} {revision:>9} {wall[index]:9.3f} {cpu[index]:8.3f} {saved:>7}  {verdict}"
        )
    print(
        f"all removals together: {(cpu[len(removals)] - whole) / whole:+.1%} of the whole command's "
        "CPU time"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
