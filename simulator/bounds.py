"""A lower bound on the makespan of any schedule of a workload: the fluid configuration LP and
release dates.

The cluster is cut into *units*, the smallest share of a node the simulator ever gives a job: half a
node when the cores per node are even (the co-location allocator of 000 §3.5 binds jobs to half
sockets), else a whole node. A job needs ceil(cores / unit cores) units (both halves of
ceil(cores / cores per node) nodes when it is too big to spread), for its compact run time p_j at
speed 1.

The fluid configuration LP is the combination model of 002 §3 applied to the cluster: one task per
application a with work b_a = sum over its jobs of units_j p_j / (units of the cluster), and one
combination per way a node can be used, with the speed at which it does each application's work (in
cluster time):

- the application alone: max(1 (compact), S(a, a) (two of its jobs sharing nodes), best_a / 2 (one
  spread job next to an idle half)), where best_a = max(spread speedup of a, max_b S(a, b)) is the
  fastest a spread job of a can progress (000 §3.5, formula (4.1): the minimum over its neighbours);
- each pair {a, b}: S(a, b) / 2 for a and S(b, a) / 2 for b (two spread jobs on the halves of the
  nodes).

Solving min sum x s.t. A x = b, x >= 0 with `cosched.theory.opt.solve_opt` gives the time the whole
cluster needs (002 §4.1, LP (3)); any schedule of the simulator is a feasible point, so no schedule
is shorter (the proof is in the docs, "How far from optimal"). Jobs submitted at or after a release
date r need r + LP(those jobs); job j alone needs r_j + p_j / (its best speed). The bound is the
largest of these, minus the first submission (the makespan of 000 §4.1).

The LP's matrix does not depend on the work, so every dual solution y with y^T A <= 1 bounds every
release date at once, LP(b(r)) >= y^T b(r) (weak duality): the LP is solved exactly on a grid of
release dates, then at the dates whose dual bound is largest, and all dates are bounded by one
matrix product with the duals found. Speeds come from the speed model the co-schedulers run with
(`colocation_speed_model`), so the bound follows its options (heatmap, default speedup of unmeasured
pairs, spread speedup).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from cosched.deprecation import warn_renamed
from cosched.errors import InputError
from cosched.simulator.platform import Platform
from cosched.simulator.workload import Workload
from cosched.theory.lattice import MAX_TASKS

__all__ = [
    "BoundResult",
    "makespan_bound",
    "colocation_speed_model",
    "bound_for",
    "GRID_DATES",
    "REFINE_DATES",
    "REFINE_ROUNDS",
]

GRID_DATES = (
    16  # release dates whose LP is solved first, evenly spread over the distinct submit times
)
REFINE_DATES = 4  # then, per round, the unsolved dates with the largest dual bound are solved too
REFINE_ROUNDS = (
    4  # rounds of refinement at most (none is needed once the largest bound is at a solved date)
)


@dataclass(frozen=True, eq=False)
class BoundResult:
    """A lower bound on the makespan (seconds from the first submission) and the terms it is the
    largest of."""

    bound: float  # max(release, job)
    fluid: float  # LP of the whole workload: the cluster's time at the best mix of configurations
    # max over release dates r of r + LP(jobs submitted at or after r), from the first submit
    release: float
    job: float  # max over jobs of r_j + p_j / best speed of j, from the first submit
    release_date: float  # the r of `release`, from the first submit
    critical_job: object  # job id of `job`
    applications: tuple[str, ...]  # the LP's tasks
    work: np.ndarray  # b_a of the whole workload [s of the whole cluster]
    best_speeds: np.ndarray  # per application: the fastest any of its jobs ever progresses
    co_located: bool  # speeds from a co-location speed model (False: every job at speed 1)
    unit_cores: int  # cores of a unit: half a node with co-location, else a node
    solves: int  # LPs solved
    seconds: float

    def to_json(self) -> dict:
        return {
            "bound": self.bound,
            "fluid": self.fluid,
            "release": self.release,
            "job": self.job,
            "release_date": self.release_date,
            "critical_job": _plain(self.critical_job),
            "co_located": self.co_located,
            "unit_cores": self.unit_cores,
            "solves": self.solves,
            "seconds": self.seconds,
            "applications": [
                {"name": name, "work": float(work), "best_speed": float(speed)}
                for name, work, speed in zip(self.applications, self.work, self.best_speeds)
            ],
        }


def _plain(value):
    return value.item() if hasattr(value, "item") else value


def colocation_speed_model(
    workload: Workload, heatmap=None, *, scheduler_options: dict | None = None, **speed_options
):
    """The speed model every co-scheduler runs this workload with (what `simulate` asks a
    co-scheduler for).

    scheduler_options and speed_options: the co-schedulers' options (missing_pair, ...: those
    `CoScheduler.OPTIONS` lists) and what `simulate` passes to `make_speed_model`
    (spread_speedup, ...); others do not set speeds.
    """
    import inspect

    from cosched.simulator.schedulers.coscheduling import CoScheduler

    options = {**(scheduler_options or {}), **speed_options}
    make = CoScheduler(
        **{k: v for k, v in options.items() if k in CoScheduler.OPTIONS}
    ).make_speed_model
    accepted = inspect.signature(make).parameters
    return make(
        workload,
        heatmap=heatmap,
        **{k: v for k, v in options.items() if k in accepted and k != "heatmap"},
    )


def bound_for(
    workload: Workload,
    platform: Platform,
    heatmap=None,
    *,
    scheduler_options: dict | None = None,
    results=(),
    **speed_options,
) -> BoundResult:
    """The bound of every schedule `simulate` runs with these options: the co-scheduling bound with
    a heatmap or a speed option, else the classic area and release-date bound.

    results: runs of this workload; the speed model of the first co-scheduled one is used as is (it
    is what the co-schedulers ran with). A co-scheduling bound is also below every classic run
    (speed 1 is one of its configurations), so one number serves a whole table of runs.
    """
    if "spread_speedup" in speed_options:
        warn_renamed("the keyword spread_speedup=", "alone_speedup=")
    if (
        "alone_speedup" in speed_options
    ):  # the CLI's word; make_speed_model's keyword is spread_speedup
        speed_options["spread_speedup"] = speed_options.pop("alone_speedup")
    model = next((r.speed_model for r in results if r.speed_model is not None), None)
    if model is None and (
        heatmap is not None or any(v is not None for v in speed_options.values())
    ):
        model = colocation_speed_model(
            workload, heatmap, scheduler_options=scheduler_options, **speed_options
        )
    return makespan_bound(workload, platform, speed_model=model)


def makespan_bound(workload: Workload, platform: Platform, *, speed_model=None) -> BoundResult:
    """A lower bound on the makespan of every schedule of `workload` on `platform` (rigid jobs).

    speed_model: the co-location model of the run (`speedups`, `app`, `spread` of
    `cosched.simulator.colocation.HeatmapSpeedModel`); None: every job runs at speed 1 (no heatmap).
    With an odd number of cores per node no job can share a node (the co-location allocator refuses
    it): speed 1 too.
    """
    started = time.perf_counter()
    if not len(workload):
        raise InputError("the workload has no jobs", source=workload.source or None)
    cpn = platform.cores_per_node
    halves = cpn % 2 == 0
    unit = cpn // 2 if halves else cpn
    cores = np.asarray(workload.cores, dtype=np.int64)
    units = -(-cores // unit)
    spreadable = halves & (units <= platform.nodes)  # else compact on whole nodes (colocation.py)
    units = np.where(spreadable | ~halves, units, 2 * -(-cores // cpn))
    total_units = platform.nodes * (2 if halves else 1)
    run = np.asarray(workload.run, dtype=np.float64)

    if speed_model is not None and not all(
        hasattr(speed_model, a) for a in ("speedups", "app", "spread")
    ):
        raise InputError(
            "the bound needs the heatmap co-location speed model, "
            f"not {type(speed_model).__name__}",
            field="speed_model",
        )
    co_located = speed_model is not None and halves
    if co_located:
        labels, app = np.unique(np.asarray(speed_model.app, dtype=np.int64), return_inverse=True)
        speedups = np.asarray(speed_model.speedups, dtype=np.float64)[np.ix_(labels, labels)]
        spread = np.asarray(speed_model.spread, dtype=np.float64)[labels]
        names = _names(workload, app, labels.size)
    else:
        app = np.zeros(len(workload), dtype=np.int64)
        speedups, spread, names = np.ones((1, 1)), np.ones(1), ("*",)
    k = len(names)
    if k > MAX_TASKS:
        raise InputError(
            f"{k} applications exceed the {MAX_TASKS} tasks the LP's bitmasks hold", field="app"
        )
    best = np.maximum(
        1.0, np.maximum(spread, speedups.max(axis=1))
    )  # 000 §3.5, (4.1): a job's fastest speed
    speeds = _configurations(speedups, spread, best)[1]

    # release dates: distinct submit times; suffix work b(r) of the jobs submitted at or after r
    submit = np.asarray(workload.submit, dtype=np.float64)
    dates, date_of = np.unique(submit, return_inverse=True)
    suffix = np.zeros((dates.size, k))
    np.add.at(suffix, (date_of, app), run * units / total_units)
    suffix = suffix[::-1].cumsum(axis=0)[::-1]

    duals, solved = [], set()
    for date in np.unique(
        np.linspace(0, dates.size - 1, min(dates.size, GRID_DATES)).round().astype(np.int64)
    ):
        duals.append(_dual(speedups, spread, best, speeds, suffix[date]))
        solved.add(int(date))
    for _ in range(REFINE_ROUNDS):
        values = dates + np.maximum(suffix @ np.column_stack(duals), 0.0).max(axis=1)
        order = [
            int(d)
            for d in np.argsort(-values, kind="stable")[: REFINE_DATES + len(solved)]
            if d not in solved
        ]
        if int(np.argmax(values)) in solved or not order:
            break
        for date in order[:REFINE_DATES]:
            duals.append(_dual(speedups, spread, best, speeds, suffix[date]))
            solved.add(date)
    lp = np.maximum(suffix @ np.column_stack(duals), 0.0).max(
        axis=1
    )  # LP(b(r)) >= y^T b(r), 002 §4.1
    critical_date = int(np.argmax(dates + lp))

    job_speed = np.where(spreadable, best[app], 1.0)
    finish = submit + run / job_speed  # no job ends before r_j + p_j / its best speed
    critical_job = int(np.argmax(finish))
    first = float(dates[0])
    release = float(dates[critical_date] + lp[critical_date]) - first
    job = float(finish[critical_job]) - first
    return BoundResult(
        max(release, job),
        float(lp[0]),
        release,
        job,
        float(dates[critical_date]) - first,
        _plain(workload.job_id[critical_job]),
        names,
        suffix[0].copy(),
        best,
        co_located,
        unit,
        len(solved),
        time.perf_counter() - started,
    )


def _names(workload: Workload, app: np.ndarray, k: int) -> tuple[str, ...]:
    """Each LP task's application name (the workload's app column), unique."""
    if workload.app is None:
        return tuple(f"app{i}" for i in range(k))
    first = np.zeros(k, dtype=np.int64)
    first[app[::-1]] = np.arange(app.size)[::-1]
    names = [str(workload.app[j]) for j in first]
    return tuple(names) if len(set(names)) == k else tuple(f"{n}#{i}" for i, n in enumerate(names))


def _configurations(speedups: np.ndarray, spread: np.ndarray, best: np.ndarray):
    """Bitmasks and speed matrix of the node configurations (the LP's combinations, 002 §3), in
    cluster time.

    The application alone is at least as fast for it as any pair it is in (best_a / 2 >= S(a,
    b) / 2), so A x = b and A x >= b have the same optimum.
    """
    k = spread.size
    alone = np.maximum(
        np.maximum(1.0, np.diag(speedups)), best / 2
    )  # compact; a pair of its jobs; next to idle
    first, second = np.triu_indices(k, 1)
    masks = np.concatenate(
        [
            np.int64(1) << np.arange(k, dtype=np.int64),
            (np.int64(1) << first) | (np.int64(1) << second),
        ]
    )
    speeds = np.zeros((k, masks.size))
    speeds[np.arange(k), np.arange(k)] = alone
    pairs = np.arange(k, masks.size)
    speeds[first, pairs] = speedups[first, second] / 2  # half the nodes each (000 §3.5)
    speeds[second, pairs] = speedups[second, first] / 2
    return masks, speeds


def _dual(
    speedups: np.ndarray, spread: np.ndarray, best: np.ndarray, speeds: np.ndarray, work: np.ndarray
) -> np.ndarray:
    """A dual solution y of the LP with work `work` (zeros allowed), scaled so y^T A <= 1 holds
    exactly."""
    from cosched.theory.instance import Instance
    from cosched.theory.opt import solve_opt

    present = np.flatnonzero(work > 0)
    y = np.zeros(work.size)
    if (
        present.size
    ):  # the LP of the applications with work: their configurations only (b_a > 0 in 002 §3)
        inner = np.ix_(present, present)
        instance = Instance(
            work[present], *_configurations(speedups[inner], spread[present], best[present])
        )
        y[present] = solve_opt(instance).duals  # 002 §4.1: duals of LP (3), y^T b = C_max
    excess = float((y @ speeds).max())
    return y / excess if excess > 1.0 else y  # weak duality needs y^T a_j <= 1 for every column
