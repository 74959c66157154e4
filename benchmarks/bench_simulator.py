"""Simulator speed on whole real traces, against ELiSE's Table 4 and AccaSim 1.1.3 measured in the
same run.

Runs SDSC-SP2-1998, CEA-Curie-2011 and RICC-2010 (from ../shared/data/swf) under FCFS, EASY and
Conservative and prints wall time (simulation only, after loading), jobs per second and simulated
days per hour (the measure of ELiSE's Table 4: 116.87 FCFS / 117.77 EASY on SDSC-SP2). Then times
the whole `cosched simulate` command on SDSC-SP2 (imports included), and AccaSim on the same
prepared SDSC-SP2 trace (cleaned jobs written back as SWF) in a separate venv
`benchmarks/.venv-accasim` (created on first use with `pip install accasim==1.1.3`; never a project
dependency). Note: AccaSim's "EASY" does not protect the head job's reservation, so compare wall
times only.

    python benchmarks/bench_simulator.py                 # all traces, AccaSim included
    python benchmarks/bench_simulator.py --traces sdsc-sp2 --no-accasim --repeat 3
    python benchmarks/bench_simulator.py --skip ""      # also RICC under Conservative (minutes)
    python benchmarks/bench_simulator.py --start-only --repeat 5   # the fast-start table alone

The fast-start table (SDSC-SP2 under EASY, side by side in one run, medians of --repeat,
alternating): the simulation alone (in process, after loading), the
whole `cosched simulate --out` command (a fresh process: imports, reading the SWF, simulating,
writing jobs.csv and summary.json; with the parsed-trace cache warm, and off), the same command
through the simulator's own parser only, and `cosched --help`; with the targets whole / simulation
<= 1.3, --help <= 0.3 s. (EASY is written once, in the engine's schedulers: the table has no
second copy of it as a reference loop; `bench_one_loop.py` compares the engine with an earlier
version instead.) Wall seconds and CPU seconds (the latter
not inflated by other load on a shared machine).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from data_paths import SHARED_DATA  # noqa: E402  (the script's folder is on sys.path)

from cosched.simulator.metrics import SECONDS_PER_DAY  # noqa: E402
from cosched.simulator.platform import PRESETS  # noqa: E402
from cosched.simulator.simulation import simulate  # noqa: E402
from cosched.simulator.workload import read_swf  # noqa: E402

DATA = (
    Path(os.environ["COSCHED_SWF_DIR"]) if "COSCHED_SWF_DIR" in os.environ else SHARED_DATA / "swf"
)
TRACES = {
    "sdsc-sp2": ("SDSC-SP2-1998-4.2-cln.swf.gz", "sdsc-sp2"),
    "curie": ("CEA-Curie-2011-2.1-cln.swf.gz", "curie"),
    "ricc": ("RICC-2010-2.swf.gz", "ricc"),
}
ELISE_TABLE4 = {("sdsc-sp2", "fcfs"): 116.87, ("sdsc-sp2", "easy"): 117.77}  # 000 §4.4, Table 4
ACCASIM_VENV = ROOT / "benchmarks" / ".venv-accasim"
ACCASIM_VERSION = "1.1.3"

ACCASIM_RUNNER = r"""
import collections, collections.abc, json, sys, time
for _name in ("Mapping", "MutableMapping", "Sequence", "Iterable", "Callable"):
    # AccaSim 1.1.3 predates Python 3.10
    setattr(collections, _name, getattr(collections.abc, _name))
from accasim.base.simulator_class import Simulator
from accasim.base.scheduler_class import EASYBackfilling, FirstInFirstOut
from accasim.base.allocator_class import FirstFit
workload, config, results, policy = sys.argv[1:5]
dispatcher = (EASYBackfilling if policy == "easy" else FirstInFirstOut)(FirstFit())
clock = time.perf_counter()
simulator = Simulator(workload, config, dispatcher, RESULTS_FOLDER_PATH=results,
                      scheduling_output=False, pprint_output=False, benchmark_output=False,
                      statistics_output=False, show_statistics=False, LOG_LEVEL="ERROR")
simulator.start_simulation()
print(json.dumps({"seconds": time.perf_counter() - clock}))
"""


def _median_run(workload, platform, scheduler, repeat):
    runs = [simulate(workload, platform, scheduler) for _ in range(repeat)]
    return runs[0], statistics.median(r.wall_seconds for r in runs)


def bench_traces(names, schedulers, repeat, skip=()):
    rows = []
    for name in names:
        file, preset = TRACES[name]
        platform = PRESETS[preset]
        clock = time.perf_counter()
        workload = read_swf(DATA / file, max_cores=platform.total_cores)
        load = time.perf_counter() - clock
        print(
            f"{name}: {len(workload)} jobs of {workload.cleaning['records']} records, "
            f"{platform.nodes} nodes x {platform.cores_per_node} cores, loaded in {load:.2f} s",
            flush=True,
        )
        for scheduler in schedulers:
            if f"{name}:{scheduler}" in skip:
                print(f"  {scheduler:<13} skipped (--skip)", flush=True)
                continue
            result, seconds = _median_run(workload, platform, scheduler, repeat)
            days = result.makespan / SECONDS_PER_DAY
            rows.append(
                {
                    "trace": name,
                    "scheduler": scheduler,
                    "jobs": len(workload),
                    "seconds": seconds,
                    "jobs_per_second": len(workload) / seconds,
                    "days_per_hour": days / (seconds / 3600),
                    "elise_days_per_hour": ELISE_TABLE4.get((name, scheduler)),
                }
            )
            print(f"  {scheduler:<13} {seconds:8.2f} s", flush=True)
    return rows


def bench_command(repeat):
    file, preset = TRACES["sdsc-sp2"]
    command = [
        sys.executable,
        "-m",
        "cosched.cli",
        "simulate",
        "--workload",
        str(DATA / file),
        "--platform",
        preset,
        "--scheduler",
        "easy",
        "--quiet",
    ]
    times = []
    with tempfile.TemporaryDirectory() as folder:
        for _ in range(repeat):
            clock = time.perf_counter()
            subprocess.run(command + ["--out", folder], check=True, capture_output=True, cwd=ROOT)
            times.append(time.perf_counter() - clock)
    return statistics.median(times)


ENTRY_POINT = (  # `cosched simulate` with only the parser of the simulator's commands, no top level
    "import argparse, sys\n"
    "from cosched.simulator import cli\n"
    "parser = argparse.ArgumentParser(prog='cosched')\n"
    "cli.register(parser.add_subparsers(dest='command'))\n"
    "args = parser.parse_args(sys.argv[1:])\n"
    "sys.exit(args.func(args))\n"
)


def _command_environment(cache: bool) -> dict:
    """The environment of the timed commands: Python may keep its bytecode (as an installed package
    does; an unset PYTHONDONTWRITEBYTECODE), and the trace cache on or off (COSCHED_NO_CACHE)."""
    environment = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    environment["COSCHED_NO_CACHE"] = "0" if cache else "1"
    return environment


def bench_start(repeat: int) -> None:
    """The fast-start table: simulation, whole command and --help, side by side, alternating.

    The commands run once before the timing (Python's bytecode and the parsed-trace cache are then
    warm, as for a user's second run); "trace cache off" reads and parses the SWF file every
    time."""
    file, preset = TRACES["sdsc-sp2"]
    platform = PRESETS[preset]
    workload = read_swf(DATA / file, max_cores=platform.total_cores)
    arguments = [
        "simulate",
        "--workload",
        str(DATA / file),
        "--platform",
        preset,
        "--scheduler",
        "easy",
        "--quiet",
    ]
    commands = {
        "command": ([sys.executable, "-m", "cosched", *arguments], True),
        "uncached": ([sys.executable, "-m", "cosched", *arguments], False),
        "entry": ([sys.executable, "-c", ENTRY_POINT, *arguments], True),
        "help": ([sys.executable, "-m", "cosched", "--help"], True),
    }
    import resource

    def children_cpu() -> float:
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        return usage.ru_utime + usage.ru_stime

    keys = ("simulation", *commands)
    times: dict[str, list[float]] = {key: [] for key in keys}
    cpu: dict[str, list[float]] = {key: [] for key in keys}
    with tempfile.TemporaryDirectory() as folder:
        out = ["--out", folder]

        def run(command: list[str], cache: bool) -> None:
            run_out = out if "simulate" in command else []
            subprocess.run(
                command + run_out,
                check=True,
                capture_output=True,
                cwd=ROOT,
                env=_command_environment(cache),
            )

        for command, cache in commands.values():  # warm-up: bytecode and trace cache
            run(command, cache)
        for _ in range(repeat):
            clock, used = time.perf_counter(), time.process_time()
            simulate(workload, platform, "easy")
            times["simulation"].append(time.perf_counter() - clock)
            cpu["simulation"].append(time.process_time() - used)
            for key, (command, cache) in commands.items():
                clock, used = time.perf_counter(), children_cpu()
                run(command, cache)
                times[key].append(time.perf_counter() - clock)
                cpu[key].append(children_cpu() - used)
    for label, table in (("wall seconds", times), ("CPU seconds, user + system", cpu)):
        median = {key: statistics.median(values) for key, values in table.items()}
        simulation = median["simulation"]
        print(
            f"\nfast start, SDSC-SP2 ({len(workload)} jobs) under EASY, medians of {repeat} "
            f"({label}):"
        )
        print("| measure | seconds | ratio | target |")
        print("|---|---:|---:|---:|")
        print(f"| simulation alone (in process) | {simulation:.3f} | | |")
        print(
            f"| whole `cosched simulate --out` | {median['command']:.3f} | "
            f"whole / simulation = {median['command'] / simulation:.2f} | <= 1.3 |"
        )
        print(
            f"| the same, trace cache off | {median['uncached']:.3f} | "
            f"whole / simulation = {median['uncached'] / simulation:.2f} | |"
        )
        print(
            f"| the same from the simulator's entry point (its own parser only) | "
            f"{median['entry']:.3f} | entry / simulation = {median['entry'] / simulation:.2f} | |"
        )
        print(f"| `cosched --help` | {median['help']:.3f} | | <= 0.3 s |")


def _accasim_python() -> Path | None:
    python = ACCASIM_VENV / "bin" / "python"
    if not python.exists():
        print(f"creating {ACCASIM_VENV} with accasim=={ACCASIM_VERSION} ...", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(ACCASIM_VENV)], check=True)
    probe = subprocess.run([str(python), "-c", "import accasim"], capture_output=True)
    if probe.returncode:
        install = subprocess.run(
            [str(python), "-m", "pip", "install", "-q", f"accasim=={ACCASIM_VERSION}"],
            capture_output=True,
            text=True,
        )
        if install.returncode:
            print(
                f"AccaSim could not be installed here: {install.stderr.strip().splitlines()[-1:]}"
            )
            return None
    return python


def _write_prepared_swf(workload, path: Path) -> None:
    """The cleaned jobs as SWF lines (1 memory unit per processor: AccaSim rejects missing
    memory)."""
    with open(path, "w") as handle:
        for job, submit, run, cores, estimate in zip(
            workload.job_id.tolist(),
            workload.submit.tolist(),
            workload.run.tolist(),
            workload.cores.tolist(),
            workload.estimate.tolist(),
        ):
            handle.write(
                f"{job} {int(submit)} -1 {int(run)} {cores} -1 0 {cores} {int(estimate)} "
                f"1 1 1 1 1 1 -1 -1 -1\n"
            )


def bench_accasim(schedulers):
    python = _accasim_python()
    if python is None:
        return []
    file, preset = TRACES["sdsc-sp2"]
    platform = PRESETS[preset]
    workload = read_swf(DATA / file, max_cores=platform.total_cores)
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        trace, config = folder / "sdsc-sp2-prepared.swf", folder / "system.json"
        _write_prepared_swf(workload, trace)
        config.write_text(
            json.dumps(
                {
                    "groups": {
                        "node": {"core": platform.cores_per_node, "mem": platform.cores_per_node}
                    },
                    "resources": {"node": platform.nodes},
                    "equivalence": {"processor": {"core": 1}},
                    "start_time": 0,
                }
            )
        )
        runner = folder / "run_accasim.py"
        runner.write_text(ACCASIM_RUNNER)
        for scheduler in schedulers:
            ours = simulate(workload, platform, scheduler).wall_seconds
            done = subprocess.run(
                [
                    str(python),
                    str(runner),
                    str(trace),
                    str(config),
                    str(folder / "results"),
                    scheduler,
                ],
                capture_output=True,
                text=True,
                cwd=folder,
            )
            if done.returncode:
                print(
                    f"AccaSim failed to run ({scheduler}): {done.stderr.strip().splitlines()[-1:]}"
                )
                continue
            theirs = json.loads(done.stdout.strip().splitlines()[-1])["seconds"]
            rows.append(
                {"scheduler": scheduler, "cosched": ours, "accasim": theirs, "ratio": theirs / ours}
            )
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--traces", default="sdsc-sp2,curie,ricc")
    parser.add_argument("--schedulers", default="fcfs,easy,conservative")
    parser.add_argument(
        "--repeat", type=int, default=1, help="runs per measurement (median reported)"
    )
    parser.add_argument("--no-accasim", action="store_true")
    parser.add_argument("--start-only", action="store_true", help="only the fast-start table")
    parser.add_argument(
        "--skip",
        default="ricc:conservative",
        help="trace:scheduler pairs not to run (default ricc:conservative: its free-node profile "
        "over a saturated 1024-node queue takes minutes)",
    )
    args = parser.parse_args(argv)
    if args.start_only:
        bench_start(max(args.repeat, 1))
        return 0
    rows = bench_traces(
        args.traces.split(","),
        args.schedulers.split(","),
        args.repeat,
        set(filter(None, args.skip.split(","))),
    )
    print(
        "\n| trace | scheduler | jobs | wall [s] | jobs/s | simulated days/hour | ELiSE Table 4 |"
    )
    print("|---|---|---:|---:|---:|---:|---:|")
    for r in rows:
        elise = f"{r['elise_days_per_hour']:.2f}" if r["elise_days_per_hour"] else "-"
        print(
            f"| {r['trace']} | {r['scheduler']} | {r['jobs']} | {r['seconds']:.2f} "
            f"| {r['jobs_per_second']:,.0f} | {r['days_per_hour']:,.0f} | {elise} |"
        )
    if "sdsc-sp2" in args.traces.split(","):
        print(
            "\nwhole `cosched simulate` command, SDSC-SP2, EASY (imports, load, simulate, write "
            f"jobs.csv): {bench_command(max(args.repeat, 1)):.2f} s (median)"
        )
    if "sdsc-sp2" in args.traces.split(","):
        bench_start(max(args.repeat, 1))
    if not args.no_accasim:
        accasim = bench_accasim([s for s in args.schedulers.split(",") if s in ("fcfs", "easy")])
        if accasim:
            print("\nSDSC-SP2, same prepared trace, same run (simulation time only):")
            print("| scheduler | cosched [s] | AccaSim 1.1.3 [s] | AccaSim / cosched |")
            print("|---|---:|---:|---:|")
            for r in accasim:
                print(
                    f"| {r['scheduler']} | {r['cosched']:.2f} | {r['accasim']:.1f} "
                    f"| {r['ratio']:.0f}x |"
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
