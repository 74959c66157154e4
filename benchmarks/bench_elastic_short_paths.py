"""What each short path of the ElastiSim runtime saves of the whole `cosched elastic` command.

A short path is a special case of the runtime's general computation (the same results, sooner for
some inputs). Each one was removed by a commit of its own whose subject starts with
"short path off:"; this script takes the commits from --before to --after that do (in history
order), exports the tree before and after each one (`git archive`), and runs the whole command
`cosched elastic example --out DIR --json --quiet` with every tree in fresh processes, alternating,
--repeat rounds. A short path's saving is the time its removal added (median after its commit
minus median before it), wall and CPU, as a share of the whole command with every short path (the
--before tree); it earns its place at SHARE_TO_KEEP or more of the CPU time (the work it saves: on a
loaded machine wall time is mostly waiting for a core). Every tree must write the same files as
the --before tree, byte for byte (`wall_seconds` of the summary aside). A removal that is kept is
reverted by a commit whose subject starts with "short path kept:".

`--measure instructions` counts the instructions each tree executes instead (valgrind's
cachegrind, every process of the command, PYTHONHASHSEED fixed): one run per tree, the same count
at any load, so a step's saving does not move between runs; `--jobs` runs that many trees at once.
The default, `--measure cpu`, also prints a 95 % confidence interval of each step's CPU cost: the
mean of its per-round paired differences (the step's two trees run next to each other in every
round) with Student's t.

`--forced-fork` also times the --before tree with its forked CPU-series writer forced on (it forks
only while the load average leaves a core idle, so on a busy machine the plain run never forks).

The machine's 1-minute load average is printed before and after (the criterion is measured at load
2 or more).

    python benchmarks/bench_elastic_short_paths.py --before e57aa6c --repeat 7 --forced-fork
    python benchmarks/bench_elastic_short_paths.py --before e57aa6c --measure instructions --jobs 2
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from scipy import stats

ROOT = Path(__file__).resolve().parents[1]
AREAS = ("theory", "strategies", "simulator", "measurement")  # installed as cosched.<area>
MARKER = "short path off:"
SHARE_TO_KEEP = (
    0.05  # of the whole command's CPU time (or instructions): a short path saving less goes
)
CONFIDENCE = 0.95  # of a step's CPU-cost interval
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


def _git(*args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout.strip()


def steps(before: str, after: str) -> list[tuple[str, str, str]]:
    """(parent, commit, what it removed) of each short path's removal from `before` to `after`,
    oldest first (full hashes)."""
    log = _git("log", "--reverse", "--format=%H %P%x09%s", f"{before}..{after}")
    found = []
    for line in log.splitlines():
        hashes, subject = line.split("\t", 1)
        commit, parent = hashes.split()[:2]
        if subject.startswith(MARKER):
            found.append((parent, commit, subject[len(MARKER) :].strip()))
    return found


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


def instructions(tree: Path, out: Path) -> int:
    """Instructions one whole command with the cosched of `tree` executes, every process it forks
    included (cachegrind's count, the same at any load; hash seeds fixed so that runs repeat)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(PYTHONPATH=str(tree), PYTHONHASHSEED="0")
    counts = out.with_name(out.name + ".cachegrind")
    subprocess.run(["rm", "-rf", str(out), str(counts)], check=True)
    counts.mkdir()
    subprocess.run(
        [
            "valgrind",
            "--tool=cachegrind",
            "--cache-sim=no",
            f"--cachegrind-out-file={counts}/%p",
            sys.executable,
            "-m",
            "cosched",
            *["elastic", "example", "--out", str(out), "--json", "--quiet"],
        ],
        check=True,
        capture_output=True,
        env=env,
        cwd=tree,
    )
    total = 0
    for process in counts.iterdir():
        summary = [line for line in process.read_text().splitlines() if line.startswith("summary:")]
        total += int(summary[0].split()[1])
    return total


def interval(differences: list[float]) -> tuple[float, float]:
    """Mean of paired differences and the half-width of its CONFIDENCE interval (Student's t)."""
    mean = statistics.fmean(differences)
    if len(differences) < 2:
        return mean, float("inf")
    spread = statistics.stdev(differences) / len(differences) ** 0.5
    return mean, spread * float(stats.t.ppf(0.5 + CONFIDENCE / 2, len(differences) - 1))


def outputs(out: Path) -> dict[str, bytes]:
    """Every file the command wrote, by name; the summary without its `wall_seconds`."""
    files = {path.name: path.read_bytes() for path in sorted(out.iterdir())}
    summary = json.loads(files.pop("summary.json"))
    summary.pop("wall_seconds", None)
    files["summary.json"] = json.dumps(summary, sort_keys=True).encode()
    return files


def count_instructions(
    trees: dict[str, Path], folder: Path, reference: dict[str, bytes], jobs: int, saved: Path | None
) -> dict[str, int]:
    """Each tree's instruction count, `jobs` trees at once; every tree must write `reference`.
    Counts are kept in the JSON file `saved` as they come (a revision found there is not run
    again: a long measurement can be resumed)."""
    counts: dict[str, int] = json.loads(saved.read_text()) if saved and saved.exists() else {}
    writing = threading.Lock()

    def one(revision: str) -> None:
        out = folder / f"out-{revision}"
        count = instructions(trees[revision], out)
        changed = [name for name, data in outputs(out).items() if reference.get(name) != data]
        if changed:
            raise SystemExit(f"{revision[:9]} writes other outputs: {', '.join(changed)}")
        with writing:
            counts[revision] = count
            if saved:
                saved.write_text(json.dumps(counts, indent=1))

    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        list(pool.map(one, [revision for revision in trees if revision not in counts]))
    return counts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="the revision with every short path")
    parser.add_argument("--after", default="HEAD", help="the last revision to take steps from")
    parser.add_argument("--repeat", type=int, default=7, help="rounds (medians reported)")
    parser.add_argument(
        "--measure",
        choices=("cpu", "instructions"),
        default="cpu",
        help="CPU and wall time over --repeat rounds, or instructions (one valgrind run per tree)",
    )
    parser.add_argument(
        "--jobs", type=int, default=1, help="trees counted at once with --measure instructions"
    )
    parser.add_argument(
        "--counts",
        type=Path,
        help="JSON file keeping each revision's instruction count (resume a long measurement)",
    )
    parser.add_argument(
        "--forced-fork", action="store_true", help="also the --before tree with the fork forced"
    )
    parser.add_argument(
        "--together",
        action="store_true",
        help="only --before against --after: every removal at once (more rounds in the same time)",
    )
    args = parser.parse_args()
    before, after = _git("rev-parse", args.before), _git("rev-parse", args.after)
    removals = [] if args.together else steps(before, after)
    if not removals and not args.together:
        print(f"no commit from {args.before} to {args.after} starts with {MARKER!r}")
        return 2
    # (revision, forced fork): every tree the steps need, each timed once per round
    variants = list(
        dict.fromkeys(
            [(before, False)]
            + [(revision, False) for parent, commit, _ in removals for revision in (parent, commit)]
            + [(after, False)]
            + ([(before, True)] if args.forced_fork and args.measure == "cpu" else [])
        )
    )
    load_before, cores = os.getloadavg(), len(os.sched_getaffinity(0))
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        revisions = dict.fromkeys(revision for revision, _ in variants)
        trees = {revision: export(revision, folder / revision) for revision in revisions}
        out = folder / "out"
        run(trees[before], out)  # warm-up: bytecode written, files cached
        reference = outputs(out)
        for revision, forced in variants:  # also each tree's bytecode, before it is counted
            run(trees[revision], out, forced)
            changed = [name for name, data in outputs(out).items() if reference.get(name) != data]
            if changed:
                print(f"{revision[:9]} writes other outputs: {', '.join(changed)}")
                return 1
        if args.measure == "instructions":
            counts = count_instructions(trees, folder, reference, args.jobs, args.counts)
            report_instructions(args, before, after, removals, counts, load_before, cores)
            return 0
        times: dict[tuple[str, bool], list[tuple[float, float]]] = {key: [] for key in variants}
        for round_ in range(args.repeat):  # alternating: every tree sees the same moments
            for key in variants if round_ % 2 == 0 else reversed(variants):
                times[key].append(run(trees[key[0]], out, key[1]))
    load_after = os.getloadavg()
    wall = {key: statistics.median(wall for wall, _ in runs) for key, runs in times.items()}
    cpu = {key: statistics.median(cpu for _, cpu in runs) for key, runs in times.items()}
    least = {key: min(cpu for _, cpu in runs) for key, runs in times.items()}
    whole_wall, whole_cpu = wall[before, False], cpu[before, False]
    print(
        f"{cores} cores; load average (1, 5, 15 min) {', '.join(f'{v:.2f}' for v in load_before)} "
        f"before, {', '.join(f'{v:.2f}' for v in load_after)} after; medians of {args.repeat} "
        f"rounds; every tree wrote the same outputs"
    )
    print(
        f"the whole command with every short path ({before[:9]}): {whole_wall:.3f} s wall, "
        f"{whole_cpu:.3f} s CPU; a short path's saving is its removal's cost as a share of that"
    )
    print(
        f"{'short path':<66} {'commit':>9} {'wall':>7} {'CPU':>7} "
        f"{f'CPU, mean ± {CONFIDENCE:.0%}':>18}  verdict"
    )
    for parent, commit, what in removals:
        saved_wall = (wall[commit, False] - wall[parent, False]) / whole_wall
        saved_cpu = (cpu[commit, False] - cpu[parent, False]) / whole_cpu
        paired = [
            (after_[1] - before_[1]) / whole_cpu
            for before_, after_ in zip(times[parent, False], times[commit, False])
        ]
        mean, half = interval(paired)
        verdict = "keep" if saved_cpu >= SHARE_TO_KEEP else "goes"
        print(
            f"{what[:66]:<66} {commit[:9]:>9} {saved_wall:+7.1%} {saved_cpu:+7.1%} "
            f"{f'{mean:+.1%} ± {half:.1%}':>18}  {verdict}"
        )
    if args.forced_fork:
        saved_wall = (whole_wall - wall[before, True]) / whole_wall
        saved_cpu = (whole_cpu - cpu[before, True]) / whole_cpu
        label = "the --before tree's forked CPU-series writer, forced on"
        print(f"{label:<66} {before[:9]:>9} {saved_wall:+7.1%} {saved_cpu:+7.1%}")
    paired = [
        (after_[1] - before_[1]) / whole_cpu
        for before_, after_ in zip(times[before, False], times[after, False])
    ]
    mean, half = interval(paired)
    print(
        f"{args.after} ({after[:9]}) against {args.before}: {wall[after, False]:.3f} s wall "
        f"({(wall[after, False] - whole_wall) / whole_wall:+.1%}), {cpu[after, False]:.3f} s CPU "
        f"({(cpu[after, False] - whole_cpu) / whole_cpu:+.1%}; paired mean {mean:+.1%} ± "
        f"{half:.1%}); least CPU of a round {least[after, False]:.3f} s against "
        f"{least[before, False]:.3f} s "
        f"({(least[after, False] - least[before, False]) / least[before, False]:+.1%})"
    )
    return 0


def report_instructions(
    args: argparse.Namespace,
    before: str,
    after: str,
    removals: list[tuple[str, str, str]],
    counts: dict[str, int],
    load: tuple[float, float, float],
    cores: int,
) -> None:
    """The steps' instruction costs as shares of the --before tree's whole command."""
    whole = counts[before]
    print(
        f"{cores} cores; load average (1, 5, 15 min) {', '.join(f'{v:.2f}' for v in load)} "
        f"before (instruction counts do not depend on it); every tree wrote the same outputs"
    )
    print(
        f"the whole command with every short path ({before[:9]}): {whole:,} instructions; "
        f"a short path's saving is its removal's cost as a share of that"
    )
    print(f"{'short path':<66} {'commit':>9} {'instructions':>13}  verdict")
    for parent, commit, what in removals:
        saved = (counts[commit] - counts[parent]) / whole
        verdict = "keep" if saved >= SHARE_TO_KEEP else "goes"
        print(f"{what[:66]:<66} {commit[:9]:>9} {saved:+13.2%}  {verdict}")
    print(
        f"{args.after} ({after[:9]}) against {args.before}: {counts[after]:,} instructions "
        f"({(counts[after] - whole) / whole:+.2%})"
    )


if __name__ == "__main__":
    sys.exit(main())
