"""One hybrid run (a mechanism or the baseline on a hybrid workload) and its metrics (004 §IV-D).

The baseline (004 Table III) runs every job rigid at its trace size with the trace run time, no
setup and no checkpoints, on the site policy alone: on-demand jobs just queue. A mechanism runs the
job models of `cosched.simulator.hybrid.models` under `Hybrid`. Either may run with node failures
(004 §V-C, `cosched.simulator.hybrid.failures`). Both return the engine's `SimulationResult` whose
``jobs_frame()`` carries ``job_type, preemptions, shrinks, failures, lost_node_seconds,
instant_start``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from cosched.errors import InputError
from cosched.simulator.hybrid.failures import DOWN_HOURS, NodeFailures, check_failure_options
from cosched.simulator.hybrid.mechanisms import (
    MECHANISM_OPTIONS,
    Hybrid,
    check_site_policy,
    mechanism_class,
)
from cosched.simulator.hybrid.models import (
    CHECKPOINT_MTBF_HOURS,
    checkpoint_periods,
    engine_workload,
    job_models,
)
from cosched.simulator.hybrid.workload import TYPES, HybridWorkload
from cosched.simulator.jobs import JobKind

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from cosched.simulator.engine import Engine
    from cosched.simulator.platform import Platform
    from cosched.simulator.result import SimulationResult

__all__ = [
    "simulate_hybrid",
    "hybrid_engine",
    "hybrid_result",
    "hybrid_metrics",
    "HYBRID_KEYS",
    "HYBRID_COLUMNS_OUT",
]

HYBRID_KEYS = (
    "mechanism",
    "instant_start_ratio",
    "instant_start_ratio_strict",
    "turnaround_hours",
    "turnaround_hours_by_type",
    "preemption_ratio_rigid",
    "preemption_ratio_malleable",
    "utilization_useful",
    "lost_node_hours",
    "decision_ms_max",
    "failures",
    "failure_lost_node_hours",
)
HYBRID_COLUMNS_OUT = (
    "job_type",
    "preemptions",
    "shrinks",
    "failures",
    "lost_node_seconds",
    "instant_start",
)
SECONDS_PER_HOUR = 3600.0


def hybrid_engine(
    hybrid: HybridWorkload,
    platform: Platform,
    mechanism: str,
    *,
    scheduler: str = "easy",
    depth: int | None = None,
    checkpoint_mtbf: float = CHECKPOINT_MTBF_HOURS,
    checkpoint_factor: float = 1.0,
    periods: ArrayLike | None = None,
    failures: NodeFailures | None = None,
    progress: bool = False,
    log_events: bool = False,
    checkpoint_writes: str = "added",
    log_actions: bool = False,
    **mechanism_options: Any,
) -> Engine:
    """The engine of one run, not started: `mechanism` (a name of `MECHANISMS` or a plug-in,
    `mechanism_class`) around the queue scheduler `scheduler` (the site policy).
    ``engine.scheduler`` is the `Hybrid` wrapper, or the
    site policy alone for the baseline. periods: seconds of run between completed checkpoints per
    job (NaN: none) instead of Daly's interval for `checkpoint_mtbf` x `checkpoint_factor`.
    failures: node failures during the run. checkpoint_writes: ``added`` or ``inside`` the trace
    run time (`models.CHECKPOINT_WRITES`). mechanism_options: of `Hybrid` (rigid_overhead,
    warning, regrow); unknown ones are refused."""
    from cosched.simulator.engine import Engine
    from cosched.simulator.schedulers import make_scheduler

    wrapper_class = mechanism_class(mechanism)
    unknown = sorted(set(mechanism_options) - set(MECHANISM_OPTIONS))
    if unknown:
        raise InputError(
            f"unknown mechanism option {unknown[0]!r}; known: {', '.join(MECHANISM_OPTIONS)}",
            field=unknown[0],
        )
    inner = make_scheduler(scheduler, **({} if depth is None else {"depth": depth}))
    sources = () if failures is None else (failures,)
    if wrapper_class is None:
        if failures is not None:
            check_site_policy(inner)  # failures preempt and shrink: whole nodes, no private booking
        return Engine(
            hybrid.workload,
            platform,
            inner,
            sources=sources,
            progress=progress,
            log_events=log_events,
            log_actions=log_actions,
        )
    if periods is None:
        periods = checkpoint_periods(hybrid, checkpoint_mtbf, checkpoint_factor)
    periods = np.asarray(periods, dtype=np.float64)
    wrapper = wrapper_class(
        inner, hybrid, periods, log_reservations=log_events, **mechanism_options
    )
    return Engine(
        engine_workload(hybrid),
        platform,
        wrapper,
        allocator=wrapper.make_allocator(platform),
        job_models=job_models(hybrid, periods, checkpoint_writes),
        sources=sources,
        progress=progress,
        log_events=log_events,
        log_actions=log_actions,
    )


def simulate_hybrid(
    hybrid: HybridWorkload,
    platform: Platform,
    mechanism: str,
    *,
    mtbf: float | None = None,
    down_hours: float = DOWN_HOURS,
    failure_seed: int = 0,
    **options: Any,
) -> SimulationResult:
    """Run `mechanism` on `hybrid` (options of `hybrid_engine`); the result's jobs_frame() has the
    hybrid columns.

    mtbf: system MTBF in hours of node failures (004 §V-C), each node down `down_hours` on average;
    None: none.
    """
    if mtbf is not None:  # refuse an MTBF whose failures over the trace would be too many events
        w = hybrid.workload
        span = float(w.submit.max() - w.submit.min() + w.run.max()) if len(w) else 0.0
        check_failure_options(mtbf, down_hours, span)
    failures = None if mtbf is None else NodeFailures(mtbf, down_hours, failure_seed)
    engine = hybrid_engine(hybrid, platform, mechanism, failures=failures, **options)
    return hybrid_result(engine, engine.run(), hybrid, mechanism, failures)


def hybrid_result(
    engine: Engine,
    result: SimulationResult,
    hybrid: HybridWorkload,
    mechanism: str,
    failures: NodeFailures | None = None,
) -> SimulationResult:
    """`result` with the hybrid per-job columns and the decision times (in ``options``).

    ``preemptions`` counts the mechanism's preemptions; ``failures`` the failures that hit the job
    (shrunk or interrupted); ``lost_node_seconds`` the work lost to both.
    """
    wrapper = engine.scheduler
    jobs = len(hybrid)
    hit = np.zeros(jobs, dtype=np.int64) if failures is None else np.asarray(failures.failures)
    interrupted = (
        np.zeros(jobs, dtype=np.int64) if failures is None else np.asarray(failures.interruptions)
    )
    # 004 §IV-D: work redone (at the requested size) plus the setup time the interrupted runs spent;
    # a checkpoint write a preemption interrupted is not work (it is not redone as work)
    redone = np.asarray(engine.lost, dtype=np.float64)
    writes = getattr(wrapper, "interrupted_writes", ())
    for _, job, seconds in writes:
        redone[job] -= seconds
    lost = redone * hybrid.n_max + np.asarray(engine.lost_setup)
    instant = result.start == hybrid.workload.submit
    if isinstance(wrapper, Hybrid):
        result.workload = hybrid.workload  # trace run times and estimates in jobs.csv
        result.scheduler = wrapper.name
        shrinks, decisions = wrapper.shrinks, wrapper.decisions
        # 004 §IV-D: the instant-start ratio ignores the time to preempt or shrink (the two-minute
        # warning)
        instant[list(wrapper.instant)] = True
    else:
        shrinks, decisions = [0] * jobs, []
    od = hybrid.job_type == JobKind.ON_DEMAND
    lifecycle = dict(result.lifecycle or {})
    lifecycle.update(
        job_type=hybrid.job_type.astype(str).astype(object),
        preemptions=list(np.asarray(engine.preemptions) - interrupted),
        shrinks=list(shrinks),
        failures=list(hit),
        lost_node_seconds=lost,
        instant_start=od & instant,
    )
    result.lifecycle = lifecycle
    result.options.update(mechanism=mechanism, decision_seconds=decisions)
    if failures is not None:
        # the same definition for the failures' share: interrupted writes are not lost work
        hit_at = {(when, job) for when, _, job, how, _ in failures.hits if how == "preempt"}
        unwritten = sum(
            seconds * hybrid.n_max[job] for when, job, seconds in writes if (when, job) in hit_at
        )
        result.options.update(
            failures=sum(change > 0 for _, _, change in failures.down_log),
            failure_hits=len(failures.hits),
            failure_lost_node_seconds=float(np.sum(failures.lost_node_seconds)) - unwritten,
        )
    return result


def hybrid_metrics(result: SimulationResult, hybrid: HybridWorkload) -> dict[str, Any]:
    """The hybrid keys of summary.json (004 §IV-D); times in hours."""
    life = result.lifecycle
    assert life is not None  # `hybrid_result` set the hybrid columns
    kinds = hybrid.job_type
    submit = hybrid.workload.submit
    turnaround = (result.end - submit) / SECONDS_PER_HOUR
    od = kinds == JobKind.ON_DEMAND
    preempted = np.asarray(life["preemptions"]) > 0
    span = float(np.nanmax(result.end) - submit.min())
    # each job's trace node-seconds, done once
    useful = float(np.sum(hybrid.workload.run * hybrid.n_max))
    decisions = result.options.get("decision_seconds") or [0.0]

    def mean(values: np.ndarray, mask: np.ndarray) -> float | None:
        return float(values[mask].mean()) if mask.any() else None

    return {
        "mechanism": result.options["mechanism"],
        # 004 §IV-D: within the two-minute warning (the paper's reading)
        "instant_start_ratio": mean(np.asarray(life["instant_start"], dtype=np.float64), od),
        # strict: started at the arrival itself
        "instant_start_ratio_strict": mean((result.start == submit).astype(np.float64), od),
        "turnaround_hours": float(turnaround.mean()),
        "turnaround_hours_by_type": {kind.value: mean(turnaround, kinds == kind) for kind in TYPES},
        "preemption_ratio_rigid": mean(preempted.astype(np.float64), kinds == JobKind.RIGID),
        "preemption_ratio_malleable": mean(
            preempted.astype(np.float64), kinds == JobKind.MALLEABLE
        ),
        "utilization_useful": useful / (result.platform.nodes * span) if span > 0 else 0.0,
        "lost_node_hours": float(np.sum(life["lost_node_seconds"])) / SECONDS_PER_HOUR,
        "failures": result.options.get("failures", 0),
        "failure_hits": result.options.get("failure_hits", 0),
        "failure_lost_node_hours": result.options.get("failure_lost_node_seconds", 0.0)
        / SECONDS_PER_HOUR,
        "decision_ms_max": 1000.0 * max(decisions),
        "decision_ms_mean": 1000.0 * float(np.mean(decisions)),
        "shrinks": int(np.sum(life["shrinks"])),
        "preemptions": int(np.sum(life["preemptions"])),
    }
