"""Rigid against malleable policies on a real trace (001 §6.3, Figs. 5 and 6): the six policies,
resumable.

The trace's jobs are marked elastic by `cosched.simulator.elastic.traces` (replicate r marks with
seed ``seed + r``, so ``cosched simulate --seed S+r`` with the same marking flags reproduces it) and
every policy of `cosched.simulator.schedulers.elastic` runs on the same jobs; rigid policies run the
marked jobs at their trace sizes. Optionally the arrivals are compressed (``arrival_scale`` < 1
multiplies the gaps since the first submission) to load the machine, as the paper's 400-job workload
did its 192 nodes.

The grid runs on `cosched.grid.run_grid`: one cell per (replicate, policy), one row each, appended
to ``grid.csv`` (``grid.done`` lists the finished cells) as each run ends, so an interrupted run
resumes; the runs of replicate 0 keep their per-job times in ``jobs/r000_<policy>.csv``. At the end:
``runs.csv`` (rows with the makespan reduction against the rigid counterpart and against rigid
FCFS), ``summary.csv`` and ``table.md`` (means over replicates) and ``plots/`` (wait and turnaround
box plots per policy, makespans). Reruns follow `cosched.rerun`: the same spec resumes, another is
refused unless ``force``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from cosched.deprecation import module_aliases
from cosched.errors import InputError
from cosched.grid import CellResult, ExperimentSpec, read_rows, run_experiment
from cosched.inputs import MAX_RUNS, check_number
from cosched.names import resolve_name
from cosched.outputs import atomic_path, pyplot, save_figure
from cosched.rerun import digest
from cosched.simulator.elastic.traces import ElasticMarking, elastic_models
from cosched.simulator.platform import Platform
from cosched.simulator.schedulers import ELASTIC
from cosched.simulator.schedulers.elastic import RIGID_COUNTERPART
from cosched.simulator.workload import Workload

__all__ = [
    "ElasticExperiment",
    "ELASTIC_PRESETS",
    "experiment_spec",
    "run_policy",
    "run_experiment",
    "PAPER_REDUCTION",
]

ELASTIC_PRESETS = {"kth-sp2": ("kth-sp2", "kth-sp2")}  # name -> (bundled workload, platform preset)
PAPER_REDUCTION = {
    "fcfs-malleable": 21.0,
    "sjf-malleable": 18.0,
}  # 001 §6.3: makespan cut in % against rigid
BASELINE = "fcfs-rigid"  # 001 Fig. 5: the worst policy, the reference of every reduction
SPEC, GRID = "spec.json", "grid.csv"
KEY = ("replicate", "policy")
METRICS = (
    "makespan",
    "mean_wait",
    "median_wait",
    "mean_turnaround",
    "median_turnaround",
    "utilization",
    "resizes",
)
GRID_COLUMNS = KEY + METRICS + ("wall_seconds",)
OWNED = (
    SPEC,
    GRID,
    "grid.done",
    "runs.csv",
    "summary.csv",
    "table.md",
    "jobs",
    "plots",
    "replicas",
    "spread.csv",
)
SPREAD_COLUMNS = ("replicate", "policy", "metric", "unjittered", "min", "median", "max")
JOB_SPREAD = "job_turnaround_spread"  # spread.csv's row of the per-job turnaround spreads


@dataclass(frozen=True, eq=False)
class ElasticExperiment(ExperimentSpec):
    """Everything that defines the grid (saved as spec.json to guard resumption).

    The spec of `cosched experiment-elastic` (`cosched.grid.ExperimentSpec`): build it with
    `experiment_spec`, run it with `run_experiment`.
    """

    command = "experiment-elastic"
    spec_file, grid_file = SPEC, GRID
    key, columns, owned = KEY, GRID_COLUMNS, OWNED

    workload: Workload
    platform: Platform
    marking: ElasticMarking
    policies: tuple[str, ...] = ELASTIC
    replicates: int = 1
    arrival_scale: float = 1.0
    use_run_times: bool = False
    shrink: bool = True
    workload_source: str = ""
    replicas: int = 0  # jittered runs per cell (0: none)
    jitter: float = 0.0  # s: the largest move of a submission in those runs

    def to_json(self) -> dict:
        w = self.workload
        jittered = {"replicas": self.replicas, "jitter": self.jitter} if self.replicas else {}
        return {
            "workload": self.workload_source,
            "jobs": len(w),
            "platform": self.platform.to_dict(),
            "marking": self.marking.to_dict(),
            "policies": list(self.policies),
            "replicates": self.replicates,
            "arrival_scale": self.arrival_scale,
            "use_run_times": self.use_run_times,
            "shrink": self.shrink,
            "workload_digest": digest(w.submit, w.run, w.cores, w.estimate),
            **jittered,
        }

    @classmethod
    def from_json(cls, document: dict) -> ElasticExperiment:
        """The spec of a spec.json: the workload is read again (it must still have the stored
        digest)."""
        from cosched.simulator.compare import load_inputs
        from cosched.simulator.elastic.traces import ElasticMarking

        platform, workload = load_inputs(
            document["workload"], Platform(**document["platform"]), limit=document["jobs"]
        )
        spec = cls(
            workload,
            platform,
            ElasticMarking(**document["marking"]),
            tuple(document["policies"]),
            document["replicates"],
            document["arrival_scale"],
            document["use_run_times"],
            document["shrink"],
            document["workload"],
            document.get("replicas", 0),
            document.get("jitter", 0.0),
        )
        if spec.to_json()["workload_digest"] != document["workload_digest"]:
            raise InputError(
                "the workload changed since this spec was written (its digest differs)",
                source=document["workload"],
                field="workload_digest",
            )
        return spec

    def cells(self) -> list[tuple[int, str]]:
        """(replicate, policy) of every run."""
        return [(r, p) for r in range(self.replicates) for p in self.policies]

    def run_cell(self, replicate: int, policy: str) -> CellResult:
        return run_cell(self, replicate, policy)

    def finish(self, out: Path, grid, *, plots: bool = True, workers: int = 1):
        """runs.csv, summary.csv, table.md and the plots (in this process); returns the summary."""
        return finish(self, out, plots=plots, grid=grid)


__getattr__ = module_aliases(
    __name__, {"PRESETS": "ELASTIC_PRESETS"}, globals()
)  # the name before 0.3.0


def experiment_spec(
    preset: str | None = "kth-sp2",
    *,
    workload=None,
    platform=None,
    jobs: int | None = None,
    marking: ElasticMarking | None = None,
    policies=None,
    replicates: int = 1,
    arrival_scale: float = 1.0,
    use_run_times: bool = False,
    shrink: bool = True,
    replicas: int = 0,
    jitter: float = 0.0,
) -> ElasticExperiment:
    """A spec from a preset (its bundled trace and platform) or a workload and platform, with
    overrides."""
    from cosched.simulator.compare import load_inputs

    if preset is not None:
        preset = resolve_name(preset, ELASTIC_PRESETS, "preset", field="preset")
    default_workload, default_platform = (
        ELASTIC_PRESETS[preset] if preset is not None else (None, None)
    )
    workload, platform = workload or default_workload, platform or default_platform
    if workload is None or platform is None:
        raise InputError("give a preset, or both a workload and a platform", field="workload")
    names = tuple(dict.fromkeys(policies)) if policies else ELASTIC
    unknown = [name for name in names if name not in ELASTIC]
    if unknown:
        raise InputError(
            f"unknown policies {unknown}; known: {', '.join(ELASTIC)}", field="policies"
        )
    replicates = check_number(
        replicates, field="replicates", integer=True, minimum=1, limit=MAX_RUNS
    )
    check_number(replicates * len(names), field="replicates", limit=MAX_RUNS)
    arrival_scale = check_number(
        arrival_scale, field="arrival_scale", minimum=0, exclusive_minimum=True, maximum=1e6
    )
    replicas = check_number(replicas, field="replicas", integer=True, minimum=0, limit=MAX_RUNS)
    check_number((replicas + 1) * replicates * len(names), field="replicas", limit=MAX_RUNS)
    jitter = check_number(jitter, field="jitter", minimum=0, maximum=1e12)
    loaded_platform, loaded = load_inputs(workload, platform, limit=jobs)
    return ElasticExperiment(
        loaded,
        loaded_platform,
        marking or ElasticMarking(fraction=1.0),
        names,
        replicates,
        arrival_scale,
        use_run_times,
        shrink,
        str(workload),
        replicas,
        jitter,
    )


def experiment_workload(spec: ElasticExperiment) -> Workload:
    """The spec's jobs with the gaps since the first submission multiplied by `arrival_scale`."""
    w = spec.workload
    if spec.arrival_scale == 1.0:
        return w
    first = w.submit[0]
    return replace(w, submit=first + (w.submit - first) * spec.arrival_scale)


def run_policy(
    spec: ElasticExperiment,
    replicate: int,
    policy: str,
    log_events: bool = False,
    jitter_rng: np.random.Generator | None = None,
):
    """One simulation: the marking of `replicate`, the policy; returns the `SimulationResult`.
    `jitter_rng`: move every submission by an independent uniform draw in [-jitter, jitter] (never
    before 0); the jobs keep their marking, and the result's jobs follow the new submission
    order (`result.workload.job_id` names them)."""
    from cosched.simulator.schedulers import make_scheduler
    from cosched.simulator.simulation import simulate

    workload = experiment_workload(spec)
    models = elastic_models(
        workload, spec.platform, replace(spec.marking, seed=spec.marking.seed + replicate)
    )
    if jitter_rng is not None:
        workload, models = _jittered(workload, models, spec.jitter, jitter_rng)
    return simulate(
        workload,
        spec.platform,
        make_scheduler(policy, shrink=spec.shrink),
        job_models=models,
        use_run_times=spec.use_run_times,
        log_events=log_events,
    )


def _jittered(workload: Workload, models: list, jitter: float, rng: np.random.Generator):
    """`workload` with jittered submissions, sorted again, and the per-job `models` in its order."""
    submit = np.maximum(workload.submit + rng.uniform(-jitter, jitter, len(workload)), 0.0)
    order = np.argsort(submit, kind="stable")
    moved = replace(workload, submit=submit).take(order)
    return moved, [models[index] for index in order]


def _replica_spread(spec: ElasticExperiment, replicate: int, policy: str, result) -> str:
    """``replicas/r<replicate>_<policy>.csv``: the metrics of `spec.replicas` jittered runs (a row
    each, then the per-job turnaround spread over them as median and max)."""
    import pandas as pd

    rows, turnarounds = [], []
    for replica in range(spec.replicas):
        rng = np.random.default_rng([spec.marking.seed, replicate, replica])
        jittered = run_policy(spec, replicate, policy, log_events=True, jitter_rng=rng)
        rows.append({"replica": replica, **_metrics(jittered)})
        w = jittered.workload
        by_job = dict(zip(w.job_id.tolist(), (jittered.end - w.submit).tolist()))
        turnarounds.append([by_job[job] for job in result.workload.job_id.tolist()])
    widths = np.ptp(np.asarray(turnarounds), axis=0)
    frame = pd.DataFrame(rows, columns=["replica", *METRICS])
    frame[JOB_SPREAD + "_median"] = float(np.median(widths))
    frame[JOB_SPREAD + "_max"] = float(widths.max())
    return frame.to_csv(index=False)


def _metrics(result) -> dict:
    """Makespan (first submission to last end, 001 Fig. 6), wait and turnaround (001 Fig. 5), node
    use."""
    submit = result.workload.submit
    wait, turnaround = result.start - submit, result.end - submit
    makespan = result.makespan
    node_seconds = _node_seconds(result)
    return {
        "makespan": makespan,
        "mean_wait": float(wait.mean()),
        "median_wait": float(np.median(wait)),
        "mean_turnaround": float(turnaround.mean()),
        "median_turnaround": float(np.median(turnaround)),
        "utilization": node_seconds / (result.platform.nodes * makespan) if makespan > 0 else 0.0,
        "resizes": int(np.sum(result.lifecycle["resizes"])) if result.lifecycle else 0,
    }


def _node_seconds(result) -> float:
    """Node-seconds held, summed over every job's allocations (sizes change at resizes: from the
    event log)."""
    held: dict[int, int] = {}
    since: dict[int, float] = {}
    total = 0.0
    for time, event, job, nodes in result.log:
        if event in ("start", "resize", "finish", "kill", "preempt"):
            total += held.get(job, 0) * (time - since.get(job, time))
            held[job], since[job] = (nodes if event in ("start", "resize") else 0), time
    return total


def run_cell(spec: ElasticExperiment, replicate: int, policy: str) -> CellResult:
    """One grid cell: the metrics row; for replicate 0 also ``jobs/r000_<policy>.csv`` (per-job
    times, sizes)."""
    result = run_policy(spec, replicate, policy, log_events=True)
    row = {
        "replicate": replicate,
        "policy": policy,
        **_metrics(result),
        "wall_seconds": result.wall_seconds,
    }
    files = {}
    if replicate == 0:
        frame = result.jobs_frame()
        columns = [
            c
            for c in (
                "job_id",
                "submit_time",
                "start_time",
                "end_time",
                "wait_time",
                "cores",
                "node_count",
                "resizes",
            )
            if c in frame
        ]
        frame = frame[columns].assign(turnaround_time=frame["end_time"] - frame["submit_time"])
        files[_jobs_file(replicate, policy)] = frame.to_csv(index=False)
    if spec.replicas:
        files[_replicas_file(replicate, policy)] = _replica_spread(spec, replicate, policy, result)
    return CellResult([row], files)


def _replicas_file(replicate: int, policy: str) -> str:
    return f"replicas/r{replicate:03d}_{policy}.csv"


def spread_frame(spec: ElasticExperiment, out: Path, runs):
    """spread.csv: per (replicate, policy) and metric, the unjittered run's value and the min,
    median and max over the jittered replicas; the row `job_turnaround_spread` gives the median
    and max over the jobs of each job's turnaround spread (max - min over the replicas)."""
    import pandas as pd

    unjittered = runs.set_index(["replicate", "policy"])
    rows = []
    for replicate, policy in [(r, p) for r in range(spec.replicates) for p in spec.policies]:
        frame = pd.read_csv(out / _replicas_file(replicate, policy))
        for metric in METRICS:
            values = frame[metric]
            rows.append(
                (
                    replicate,
                    policy,
                    metric,
                    unjittered.loc[(replicate, policy), metric],
                    values.min(),
                    values.median(),
                    values.max(),
                )
            )
        median, largest = frame[JOB_SPREAD + "_median"].iloc[0], frame[JOB_SPREAD + "_max"].iloc[0]
        rows.append((replicate, policy, JOB_SPREAD, np.nan, np.nan, median, largest))
    return pd.DataFrame(rows, columns=list(SPREAD_COLUMNS))


def _jobs_file(replicate: int, policy: str) -> str:
    return f"jobs/r{replicate:03d}_{policy}.csv"


def _reductions(runs):
    """Makespan reduction in % (100 x (1 - makespan / reference)) against the rigid counterpart and
    rigid FCFS."""
    makespan = runs.set_index(["replicate", "policy"])["makespan"]

    def against(reference_of):
        values = []
        for replicate, policy in zip(runs["replicate"], runs["policy"]):
            reference = reference_of(policy)
            key = (replicate, reference)
            values.append(
                100.0 * (1.0 - makespan[(replicate, policy)] / makespan[key])
                if reference is not None and key in makespan.index
                else np.nan
            )
        return values

    runs = runs.copy()
    runs["reduction_vs_rigid_pct"] = against(RIGID_COUNTERPART.get)
    runs["reduction_vs_fcfs_rigid_pct"] = against(lambda policy: BASELINE)
    return runs


def summarize(runs):
    """Means over replicates per policy, in the order of `ELASTIC`."""
    columns = [c for c in runs.columns if c not in KEY and c != "wall_seconds"]
    summary = runs.groupby("policy")[columns].mean()
    return summary.loc[[p for p in ELASTIC if p in summary.index]]


def markdown_table(summary) -> str:
    """The table of the docs: makespan in days, wait and turnaround in hours, reductions in %."""
    header = (
        "| policy | makespan [d] | mean wait [h] | median wait [h] | mean turnaround [h] | "
        "median turnaround [h] | utilization | resizes | makespan cut vs rigid [%] | "
        "vs rigid FCFS [%] |"
    )
    lines = [header, "|---" * 10 + "|"]

    def percent(value):
        return "–" if value != value else f"{value:+.1f}"

    for policy, row in summary.iterrows():
        lines.append(
            f"| {policy} | {row['makespan'] / 86400:.2f} | {row['mean_wait'] / 3600:.2f} | "
            f"{row['median_wait'] / 3600:.2f} | {row['mean_turnaround'] / 3600:.2f} | "
            f"{row['median_turnaround'] / 3600:.2f} | {row['utilization']:.3f} | "
            f"{row['resizes']:.0f} | {percent(row['reduction_vs_rigid_pct'])} | "
            f"{percent(row['reduction_vs_fcfs_rigid_pct'])} |"
        )
    return "\n".join(lines) + "\n"


def finish(spec: ElasticExperiment, out: str | os.PathLike, plots: bool = True, grid=None):
    """From the grid's rows: runs.csv, summary.csv, table.md and the plots; returns the summary."""
    import pandas as pd

    out = Path(out)
    cells = [(r, p) for r in range(spec.replicates) for p in spec.policies]
    runs = _reductions(read_rows(out / GRID, GRID_COLUMNS, KEY, cells) if grid is None else grid)
    summary = summarize(runs)
    with atomic_path(out / "runs.csv") as tmp:
        runs.to_csv(tmp, index=False)
    with atomic_path(out / "summary.csv") as tmp:
        summary.to_csv(tmp)
    with atomic_path(out / "table.md") as tmp:
        tmp.write_text(markdown_table(summary))
    if spec.replicas:
        with atomic_path(out / "spread.csv") as tmp:
            spread_frame(spec, out, runs).to_csv(tmp, index=False)
    if plots:
        jobs = {
            p: pd.read_csv(out / _jobs_file(0, p))
            for p in spec.policies
            if (out / _jobs_file(0, p)).exists()
        }
        draw_plots(jobs, summary, out / "plots")
    return summary


def draw_plots(jobs: dict, summary, folder: Path) -> list[Path]:
    """Wait and turnaround box plots per policy (001 Fig. 5), and the makespans (001 Fig. 6's
    comparison)."""
    plt = pyplot()
    written = []
    figure, axes = plt.subplots(1, 2, figsize=(11, 4.5))
    names = list(jobs)
    for axis, column, title in zip(
        axes, ("wait_time", "turnaround_time"), ("wait time", "turnaround time")
    ):
        axis.boxplot(
            [jobs[name][column] / 3600 for name in names],
            showfliers=True,
            flierprops={"markersize": 2},
        )
        axis.set_xticks(range(1, len(names) + 1), names, rotation=30, ha="right")
        axis.set_yscale(
            "symlog", linthresh=1
        )  # many waits are 0: linear below 1 h, logarithmic above
        axis.set_ylim(bottom=0)
        axis.set_ylabel(f"{title} [h]")
        axis.set_title(title)
    figure.tight_layout()
    written.append(save_figure(figure, folder / "wait_turnaround.png"))
    figure, axis = plt.subplots(figsize=(6.5, 4))
    axis.bar(
        summary.index,
        summary["makespan"] / 86400,
        color=["tab:gray" if "rigid" in p else "tab:blue" for p in summary.index],
    )
    axis.set_ylabel("makespan [d]")
    axis.tick_params(axis="x", rotation=30)
    figure.tight_layout()
    written.append(save_figure(figure, folder / "makespan.png"))
    return written
