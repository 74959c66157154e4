"""Job models of the three types on the engine (004 §III-A): setups, Daly-optimal checkpoints,
linear speed-up.

- rigid: fixed size; setup at every (re)start; a checkpoint every tau_opt of work at Daly's optimum
  for the MTBF M, costing delta = 600 s below 1,000 nodes, else 1,200 s; none if tau_opt is not
  shorter than the work. A preempted job keeps its work up to its last completed checkpoint.
- malleable: any size in [n_min, n_max], linear speed-up (t_single / n + setup); checkpoints on the
  two-minute warning, so a preemption loses nothing but the setup paid again; resizes are free.
- on-demand: plain rigid (never preempted: the mechanisms never choose them).

[impl] The trace run time holds the setup, so the engine's work is ``run - setup``. Checkpoint
writes (``CHECKPOINT_WRITES``): ``added`` (default, 004 §III-A: a checkpoint costs delta seconds of
the job's time) adds delta after every tau of that work (``periodic(tau, delta)``), so a
checkpointing rigid job runs longer than in the trace; ``inside`` counts them inside the trace run
time, so an uninterrupted job runs exactly as in the trace (``periodic(tau + delta)``, no extra
time). Either way a checkpoint completes every ``tau + delta`` seconds of run.
"""

from __future__ import annotations

import copy
import math
from dataclasses import replace

import numpy as np

from cosched.errors import InputError
from cosched.simulator.hybrid.workload import HybridWorkload
from cosched.simulator.jobs import ON_WARNING, JobKind, JobModel, malleable, periodic, rigid
from cosched.simulator.jobs import RIGID as PLAIN
from cosched.simulator.workload import Workload

__all__ = [
    "CHECKPOINT_WRITES",
    "daly_interval",
    "checkpoint_cost",
    "checkpoint_periods",
    "job_models",
    "engine_workload",
    "CHECKPOINT_MTBF_HOURS",
    "SMALL_CHECKPOINT",
    "LARGE_CHECKPOINT",
    "LARGE_JOB_NODES",
]

SMALL_CHECKPOINT, LARGE_CHECKPOINT = 600.0, 1200.0  # 004 §IV-B, seconds
LARGE_JOB_NODES = 1000  # 004 §IV-B: "if job size is less than 1K nodes"
CHECKPOINT_WRITES = ("added", "inside")  # checkpoint writes on top of the trace run time, or in it
# [impl] Daly's M without failures: the rare-failure end of 004 §V-C's 5-50 h
CHECKPOINT_MTBF_HOURS = 50.0


def daly_interval(cost: float, mtbf: float) -> float:
    """Daly's higher-order optimum checkpoint interval (004 §IV-B, ref. [38]), in seconds."""
    if cost >= 2 * mtbf:
        return mtbf
    ratio = cost / (2 * mtbf)
    # 004 §IV-B, Daly [38]
    return math.sqrt(2 * cost * mtbf) * (1 + math.sqrt(ratio) / 3 + ratio / 9) - cost


def checkpoint_cost(nodes: np.ndarray) -> np.ndarray:
    """delta per job: 600 s below 1,000 nodes, else 1,200 s (004 §IV-B)."""
    return np.where(nodes < LARGE_JOB_NODES, SMALL_CHECKPOINT, LARGE_CHECKPOINT)


def checkpoint_periods(
    hybrid: HybridWorkload, mtbf_hours: float = CHECKPOINT_MTBF_HOURS, factor: float = 1.0
) -> np.ndarray:
    """Seconds of run between two completed checkpoints (tau + delta) per job; NaN: the job does not
    checkpoint.

    factor scales Daly's interval (004 Fig. 8: 50 % = twice as often).
    """
    if not (math.isfinite(mtbf_hours) and mtbf_hours > 0):
        raise InputError(f"the MTBF must be positive, got {mtbf_hours}", field="checkpoint_mtbf")
    if not (math.isfinite(factor) and factor > 0):
        raise InputError(
            f"the checkpoint interval factor must be positive, got {factor}",
            field="checkpoint_factor",
        )
    cost = checkpoint_cost(hybrid.n_max)
    tau = factor * np.array(
        [daly_interval(c, mtbf_hours * 3600.0) for c in (SMALL_CHECKPOINT, LARGE_CHECKPOINT)]
    )
    tau = np.where(cost == SMALL_CHECKPOINT, tau[0], tau[1])
    work = hybrid.workload.run - hybrid.setup
    # 004 §IV-B: none if the interval exceeds the runtime
    checkpoints = (hybrid.job_type == JobKind.RIGID) & (tau < work)
    return np.where(checkpoints, tau + cost, np.nan)


def job_models(
    hybrid: HybridWorkload, periods: np.ndarray, writes: str = "inside"
) -> list[JobModel]:
    """One engine model per job (004 §III-A); `periods` from `checkpoint_periods` (tau + delta per
    job).

    writes: ``added`` (a write of delta seconds after every tau of work) or ``inside`` (no extra
    time; the default here, for periods given by hand); `hybrid_engine` defaults to ``added``.
    """
    if writes not in CHECKPOINT_WRITES:
        raise InputError(
            f"unknown checkpoint writes {writes!r}; known: {', '.join(CHECKPOINT_WRITES)}",
            field="checkpoint_writes",
        )
    costs = checkpoint_cost(hybrid.n_max).tolist() if writes == "added" else [0.0] * len(hybrid)
    cache: dict[tuple, JobModel] = {}
    models = []
    on_demand = JobKind.ON_DEMAND  # bound once: read for every job
    for kind, setup, low, high, period, cost in zip(
        hybrid.job_type.tolist(),
        hybrid.setup.tolist(),
        hybrid.n_min.tolist(),
        hybrid.n_max.tolist(),
        periods.tolist(),
        costs,
    ):
        # NaN never equals itself: no period is None in the key
        key = (kind, low, high, None if math.isnan(period) else period, cost)
        model = cache.get(key)
        if model is not None and kind is not on_demand and model.setup != setup:
            if not (math.isfinite(setup) and setup >= 0):
                raise InputError(f"setup must be >= 0 and finite, got {setup}", field="setup")
            # the template's other fields are checked: only the setup differs
            model = copy.copy(model)
            object.__setattr__(model, "setup", setup)
        if model is None:
            if kind is JobKind.MALLEABLE:
                model = malleable(low, high, setup=setup, checkpoint=ON_WARNING)
            elif kind is JobKind.RIGID:
                if not math.isnan(period) and period <= cost:
                    raise InputError(
                        f"a checkpoint period of {period:g} s leaves no work between writes of "
                        f"{cost:g} s",
                        field="checkpoint_factor",
                    )
                checkpoint = (
                    {} if math.isnan(period) else {"checkpoint": periodic(period - cost, cost)}
                )
                model = rigid(setup=setup, **checkpoint)
            else:
                model = PLAIN
            cache[key] = model
        models.append(model)
    return models


def engine_workload(hybrid: HybridWorkload) -> Workload:
    """The workload the engine runs: work = run - setup (the setup is time without progress)."""
    w = hybrid.workload
    return replace(
        w, run=w.run - hybrid.setup, estimate=np.maximum(w.estimate, w.run) - hybrid.setup
    )
