"""Job models: how a job's progress depends on its node count, what it pays to (re)start, what it
keeps.

The engine measures a job's work in seconds of its compact run at the requested size (the trace's
run time). A `JobModel` says how that work progresses on other node counts and across interruptions:

- ``kind``: rigid (fixed size), moldable (size chosen at start within [min_nodes, max_nodes]) or
  malleable
  (resizable while it runs, within the same bounds) — the job classes of 001 §4 and 004 §III-A.
- ``scaling``: speed on n nodes relative to one node (``linear``, ``amdahl(f)``, or any callable);
  the
  job's progress rate on n nodes is scaling(n) / scaling(requested nodes).
- ``setup``: seconds without progress paid at every start and restart (004 §III-A, t_setup).
- ``checkpoint``: what survives a preemption: nothing (``NO_CHECKPOINT``), the work up to the last
  of
  periodic checkpoints (``periodic(interval, cost)``: the cost in seconds is added after every
  interval of work, so it lengthens the run; 004 §III-A, frequency t_f), or everything
  (``ON_WARNING``: the job checkpoints when warned, 004 §III-A two-minute warning).
- ``reconfiguration``: seconds without progress after each resize (001 §6, reconfiguration penalty).
- ``scheduling_point``: work between the job's scheduling points; a resize asked for between two
  points
  waits for the next one (001 §4, §5). None: resizes apply at once.

Rigid jobs with no extras (``RIGID``) behave exactly like the engine without job models.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum, IntEnum

from cosched.errors import InputError

__all__ = [
    "JobModel",
    "per_job_models",
    "Checkpoint",
    "RIGID",
    "NO_CHECKPOINT",
    "ON_WARNING",
    "periodic",
    "linear",
    "amdahl",
    "KINDS",
    "rigid",
    "moldable",
    "malleable",
    "JobKind",
    "JobState",
    "STATES",
]


class JobKind(str, Enum):
    """A job's kind, one definition for the engine, the hybrid workloads (004 §III-A), ElastiSim's
    job classes (001 §4) and the CLI; each member equals its spelling in files and on the command
    line."""

    ON_DEMAND = "on-demand"
    RIGID = "rigid"
    MOLDABLE = "moldable"
    MALLEABLE = "malleable"

    def __str__(self) -> str:
        return self.value

    __hash__ = str.__hash__  # a member and its spelling are the same dict key


class JobState(IntEnum):
    """A job's lifecycle state in the engine (000 §3.3, Fig. 4); ``STATES`` spells them in
    outputs."""

    FUTURE = 0
    WAITING = 1
    RUNNING = 2
    FINISHED = 3
    KILLED = 4


STATES = tuple(state.name.lower() for state in JobState)
KINDS = (JobKind.RIGID, JobKind.MOLDABLE, JobKind.MALLEABLE)  # the kinds a JobModel can have


def linear(nodes: float) -> float:
    """Perfect strong scaling: n nodes are n times as fast as one."""
    return float(nodes)


def amdahl(serial_fraction: float) -> Callable[[float], float]:
    """Amdahl's law with serial fraction f: speed(n) = 1 / (f + (1 - f) / n)."""
    if not 0 <= serial_fraction <= 1:
        raise InputError(
            f"the serial fraction must be in [0, 1], got {serial_fraction}", field="serial_fraction"
        )

    def speed(nodes: float) -> float:
        return 1.0 / (serial_fraction + (1.0 - serial_fraction) / nodes)

    speed.__name__ = f"amdahl({serial_fraction:g})"
    return speed


@dataclass(frozen=True)
class Checkpoint:
    """What a preempted job keeps: `interval` seconds of work between checkpoints, each costing
    `cost` seconds.

    interval None with on_warning False: nothing is kept; on_warning True: everything is kept.
    """

    interval: float | None = None
    cost: float = 0.0
    on_warning: bool = False

    def __post_init__(self):
        if self.interval is not None and not (math.isfinite(self.interval) and self.interval > 0):
            raise InputError(
                f"checkpoint interval must be positive and finite, got {self.interval}",
                field="checkpoint",
            )
        if not (math.isfinite(self.cost) and self.cost >= 0):
            raise InputError(
                f"checkpoint cost must be >= 0 and finite, got {self.cost}", field="checkpoint"
            )

    def total_work(self, work: float) -> float:
        """Work plus the checkpoints written during it (none after the last complete interval)."""
        if self.interval is None or self.cost == 0:
            return work
        return work + self.cost * max(math.ceil(work / self.interval) - 1, 0)

    @property
    def period(self) -> float | None:
        """Work (checkpoint time included) between two completed checkpoints; None without periodic
        ones."""
        return None if self.interval is None else self.interval + self.cost

    def count(self, done: float) -> int:
        """Periodic checkpoints completed within `done` seconds of work (checkpoint time
        included)."""
        if self.interval is None:
            return 0
        return max(math.floor(done / (self.interval + self.cost)), 0)

    def work_of(self, count: int) -> float:
        """The work (checkpoint time included) up to the end of checkpoint number `count`."""
        return 0.0 if self.interval is None else count * (self.interval + self.cost)

    def kept(self, done: float) -> float:
        """Of `done` (checkpoint time included), what survives a preemption.

        The engine keeps the number of completed checkpoints as an integer per job (`count`,
        `work_of`), so a work total rebuilt in floating point just below a checkpoint never loses
        it.
        """
        if self.on_warning:
            return done
        return self.work_of(self.count(done))


NO_CHECKPOINT = Checkpoint()
ON_WARNING = Checkpoint(on_warning=True)


def periodic(interval: float, cost: float = 0.0) -> Checkpoint:
    """A checkpoint every `interval` seconds of work, each taking `cost` seconds."""
    return Checkpoint(interval, cost)


@dataclass(frozen=True)
class JobModel:
    """How one job runs: its kind, size bounds, scaling, setup, checkpoints and reconfiguration."""

    kind: str = "rigid"
    min_nodes: int | None = None
    max_nodes: int | None = None
    scaling: Callable[[float], float] = linear
    setup: float = 0.0
    checkpoint: Checkpoint = NO_CHECKPOINT
    reconfiguration: float = 0.0
    scheduling_point: float | None = None

    def __post_init__(self):
        if self.kind not in KINDS:
            raise InputError(
                f"unknown job kind {self.kind!r}; choose from {', '.join(KINDS)}", field="kind"
            )
        for name in ("setup", "reconfiguration"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0):
                raise InputError(f"{name} must be >= 0 and finite, got {value}", field=name)
        if self.scheduling_point is not None and not self.scheduling_point > 0:
            raise InputError(
                f"scheduling_point must be positive, got {self.scheduling_point}",
                field="scheduling_point",
            )
        low, high = self.min_nodes, self.max_nodes
        if (low is not None and low < 1) or (low is not None and high is not None and high < low):
            raise InputError(
                f"node bounds must satisfy 1 <= min_nodes <= max_nodes, got [{low}, {high}]",
                field="min_nodes",
            )

    @property
    def is_rigid(self) -> bool:
        """Plain rigid: no scaling, setup, checkpoint or reconfiguration (the engine then keeps no
        per-job models)."""
        return self.kind == "rigid" and self.setup == 0 and self.checkpoint == NO_CHECKPOINT

    def bounds(self, requested: int) -> tuple[int, int]:
        """[min, max] node count; a bound left open is the requested size."""
        if self.kind == "rigid":
            return requested, requested
        return (self.min_nodes or requested), (self.max_nodes or requested)

    def rate(self, nodes: int, requested: int) -> float:
        """Progress in work seconds per second on `nodes` nodes (1 on the requested size)."""
        if nodes == requested:
            return 1.0
        return self.scaling(nodes) / self.scaling(requested)


RIGID = JobModel()


def rigid(**options) -> JobModel:
    return JobModel("rigid", **options)


def moldable(min_nodes: int, max_nodes: int, **options) -> JobModel:
    return JobModel("moldable", min_nodes, max_nodes, **options)


def malleable(min_nodes: int, max_nodes: int, **options) -> JobModel:
    return JobModel("malleable", min_nodes, max_nodes, **options)


def per_job_models(models, jobs: int) -> list[JobModel] | None:
    """One model per job, or None when every job is plain rigid (no per-job model arithmetic)."""
    if models is None:
        return None
    if isinstance(models, JobModel):
        models = [models] * jobs
    models = list(models)
    if len(models) != jobs:
        raise InputError(f"{len(models)} job models for {jobs} jobs", field="job_models")
    return None if all(model.is_rigid for model in models) else models
