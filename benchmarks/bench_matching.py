"""Speed of the optimal-pairing co-scheduler `matching` beside EASY-Co and SJF-Co, in one run.

The workload is experiment 0 of the `thesis` preset of experiment-sim: 1,000 jobs drawn from the
bundled ARIS NAS heatmap, all submitted at once, on ARIS (420 nodes x 20 cores), with the preset's
co-location rules (missing pairs at the job's mean measured speedup, alone speedup = maximum
measured). Each scheduler runs --repeat times; the table gives the median wall time and CPU time of
the process (the machine is shared: the CPU time is what a run costs on an idle core), the
wall-time ratio to EASY-Co and the makespan. Then `matching` runs with several window sizes (the
profile behind its default): times, networkx matchings computed (the rest come from the cache of
window multisets) and makespan. Target: under 5 s per run.

    python benchmarks/bench_matching.py [--repeat 3] [--windows 1 8 16 24 32]
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

TARGET = 5.0  # seconds for one 1,000-job thesis run of `matching`
SCHEDULERS = ("easy-co", "sjf-co", "matching")


def timed_run(spec, workload, scheduler, repeat: int):
    """Median wall and CPU times over `repeat` runs and the last result.

    `scheduler` is a name or a factory."""
    from cosched.simulator.schedulers import make_scheduler
    from cosched.simulator.simulation import simulate

    walls, cpus, result = [], [], None
    for _ in range(repeat):
        built = (
            make_scheduler(scheduler, **spec.scheduler_options())
            if isinstance(scheduler, str)
            else scheduler()
        )
        clock, cpu = time.perf_counter(), time.process_time()
        result = simulate(
            workload,
            spec.platform,
            built,
            heatmap=spec.heatmap,
            alone_speedup=spec.alone_speedup,
            placement=spec.placement,
            use_run_times=spec.use_run_times,
        )
        walls.append(time.perf_counter() - clock)
        cpus.append(time.process_time() - cpu)
    return statistics.median(walls), statistics.median(cpus), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--windows", type=int, nargs="*", default=[1, 8, 16, 24, 32])
    args = parser.parse_args()

    import cosched.simulator.schedulers.matching as matching
    from cosched.simulator.experiment import experiment_workload, preset_spec
    from cosched.simulator.schedulers.matching import Matching

    warnings.simplefilter("ignore")
    spec = preset_spec("thesis", experiments=1)
    workload = experiment_workload(spec, 0)
    print(
        f"{spec.jobs} jobs (thesis preset, experiment 0), {spec.platform.name} "
        f"{spec.platform.nodes} x {spec.platform.cores_per_node} cores, heatmap aris-nas; "
        f"median of {args.repeat}"
    )
    print(
        "| scheduler | wall [s] | CPU [s] | wall vs easy-co (x) | makespan [s] "
        f"| CPU under {TARGET:.0f} s |"
    )
    print("|---|---|---|---|---|---|")
    easy = None
    for name in SCHEDULERS:
        wall, cpu, result = timed_run(spec, workload, name, args.repeat)
        easy = wall if easy is None else easy
        verdict = "ok" if cpu < TARGET else "MISSED"
        print(
            f"| {name} | {wall:.3f} | {cpu:.3f} | {wall / easy:.1f} "
            f"| {result.makespan:.0f} | {verdict} |"
        )

    computed = []
    original = matching.max_weight_pairs

    def counting(*args):
        computed[-1] += 1
        return original(*args)

    matching.max_weight_pairs = counting
    print("\nmatching by window size (waiting jobs matched per pass)")
    print("| window | wall [s] | CPU [s] | networkx matchings | makespan [s] |")
    print("|---|---|---|---|---|")
    for window in args.windows:
        computed.append(0)
        wall, cpu, result = timed_run(
            spec,
            workload,
            lambda window=window: Matching(window=window, missing_pair=spec.missing_pair),
            args.repeat,
        )
        print(
            f"| {window} | {wall:.3f} | {cpu:.3f} | {computed[-1] // args.repeat} "
            f"| {result.makespan:.0f} |"
        )
    matching.max_weight_pairs = original


if __name__ == "__main__":
    main()
