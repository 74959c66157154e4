"""Small hand-built hybrid workloads for the tests: jobs given as dicts, no trace, no random
draws."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np

from cosched.simulator.action_log import write_actions
from cosched.simulator.engine import Engine
from cosched.simulator.hybrid.mechanisms import mechanism_class
from cosched.simulator.hybrid.models import engine_workload, job_models
from cosched.simulator.hybrid.workload import NOTICE_KINDS, HybridWorkload
from cosched.simulator.platform import Platform
from cosched.simulator.schedulers import make_scheduler
from cosched.simulator.workload import make_workload


def hybrid(jobs: list[dict]) -> HybridWorkload:
    """Jobs as dicts: submit, run, nodes, type ('rigid' default), estimate, setup, n_min, notice
    kind, notice_time, t_est (on-demand jobs arrive at `submit`)."""
    jobs = sorted(jobs, key=lambda job: job["submit"])
    workload = make_workload(
        list(range(len(jobs))),
        [j["submit"] for j in jobs],
        [j["run"] for j in jobs],
        [j["nodes"] for j in jobs],
        [j.get("estimate", j["run"]) for j in jobs],
    )
    kind = np.array([j.get("type", "rigid") for j in jobs], dtype=object)  # JobKind spellings
    notice = np.array(
        [
            NOTICE_KINDS.index(j.get("notice", "no-notice")) if j.get("type") == "on-demand" else -1
            for j in jobs
        ],
        dtype=np.int8,
    )
    return HybridWorkload(
        workload,
        kind,
        notice,
        np.array([j.get("notice_time", math.nan) for j in jobs], dtype=np.float64),
        np.array(
            [
                j.get("t_est", j["submit"]) if j.get("type") == "on-demand" else math.nan
                for j in jobs
            ]
        ),
        np.array([j.get("n_min", j["nodes"]) for j in jobs], dtype=np.int64),
        np.array([j["nodes"] for j in jobs], dtype=np.int64),
        np.array([j.get("setup", 0.0) for j in jobs], dtype=np.float64),
    )


def run(
    jobs: list[dict] | HybridWorkload,
    nodes: int,
    mechanism: str,
    periods=None,
    scheduler: str = "easy",
    failures=None,
    wrapper_class=None,
    writes: str = "inside",
    log_actions: bool = False,
    **options,
):
    """(engine after the run, its result, the Hybrid wrapper); periods: seconds between
    checkpoints per job; failures: a `NodeFailures` source; scheduler: a name or a scheduler
    object; writes: checkpoint writes ``inside`` the run time or ``added``; log_actions: keep the
    engine's action log; wrapper_class: a subclass of `Hybrid` put before the mechanism's class
    (a check of its own); options: of `Hybrid`."""
    workload = jobs if isinstance(jobs, HybridWorkload) else hybrid(jobs)
    periods = (
        np.full(len(workload), math.nan)
        if periods is None
        else np.asarray(periods, dtype=np.float64)
    )
    inner = make_scheduler(scheduler) if isinstance(scheduler, str) else scheduler
    mechanism_type = mechanism_class(mechanism)
    if wrapper_class is not None:
        mechanism_type = type(wrapper_class.__name__, (wrapper_class, mechanism_type), {})
    wrapper = mechanism_type(inner, workload, periods, log_reservations=True, **options)
    engine = Engine(
        engine_workload(workload),
        Platform(nodes),
        wrapper,
        allocator=wrapper.make_allocator(Platform(nodes)),
        job_models=job_models(workload, periods, writes),
        sources=() if failures is None else (failures,),
        log_events=True,
        log_actions=log_actions,
    )
    return engine, engine.run(), wrapper


def action_rows(engine, result, workload: HybridWorkload, folder) -> list[dict]:
    """The run's action log as `csv.DictReader` reads the CLI's file (written to `folder`)."""
    path = Path(folder) / "actions.csv"
    write_actions(result.actions, workload.workload.job_id, path)
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))
