"""Elastic jobs from ordinary traces: mark a seeded fraction of a rigid SWF/CSV workload moldable or
malleable.

A trace records one size per job: its cores, so n = ceil(cores / cores per node) nodes, and its run
time at that size. A marked job keeps that work (seconds of its run on n nodes) and gets:

- node bounds [max(1, ceil(LO x n)), min(platform nodes, floor(HI x n))], with LO <= 1 <= HI so the
  trace size is always allowed (rigid policies run the job as recorded; the rounding keeps every
  size inside [LO x n, HI x n] where it can);
- a scaling model: ``linear`` (perfect strong scaling) or ``amdahl`` with a serial fraction f
  (speed(m) = 1 / (f + (1 - f) / m)); on m nodes the job progresses at speed(m) / speed(n) work
  seconds per second, so its run time on m nodes is run_time x speed(n) / speed(m) (001 §4.2.2 lets
  payloads depend on the node count; a trace has no payloads, so a scaling law stands in for them);
- optionally a reconfiguration cost in seconds without progress after every resize (001 §4.1, the
  reconfiguration phase).

Exactly round(F x N) jobs are marked, chosen by a seeded permutation, so the same seed marks the
same jobs. Unmarked jobs stay rigid. `elastic_models` returns the per-job models
`simulation.simulate(job_models=...)` takes.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from cosched.errors import InputError
from cosched.inputs import MAX_SECONDS, check_number
from cosched.simulator.jobs import RIGID, JobModel, amdahl, linear
from cosched.simulator.platform import Platform
from cosched.simulator.workload import Workload

__all__ = [
    "ElasticMarking",
    "ELASTIC_KINDS",
    "SCALINGS",
    "DEFAULT_RANGE",
    "DEFAULT_SERIAL_FRACTION",
    "parse_range",
    "marked_jobs",
    "node_bounds",
    "elastic_models",
]

ELASTIC_KINDS = ("moldable", "malleable")
SCALINGS = ("linear", "amdahl")
DEFAULT_RANGE = (0.5, 2.0)  # [half, twice] the trace size
DEFAULT_SERIAL_FRACTION = 0.05  # Amdahl's f when none is given: 95 % of the work parallel
BOUND_SLACK = (
    1e-9  # absolute, in nodes: LO x n and HI x n within this of a whole number round to it
)


@dataclass(frozen=True)
class ElasticMarking:
    """Which jobs of a trace become elastic and how: fraction, kind, size range, scaling, seed."""

    fraction: float = 0.0
    kind: str = "malleable"
    low: float = DEFAULT_RANGE[0]
    high: float = DEFAULT_RANGE[1]
    scaling: str = "linear"
    serial_fraction: float = DEFAULT_SERIAL_FRACTION
    reconfiguration: float = 0.0
    seed: int = 0

    def __post_init__(self):
        fraction = check_number(self.fraction, field="elastic_fraction", minimum=0, maximum=1)
        if self.kind not in ELASTIC_KINDS:
            raise InputError(
                f"unknown kind {self.kind!r}; choose from {', '.join(ELASTIC_KINDS)}",
                field="elastic_kind",
            )
        low = check_number(
            self.low, field="elastic_range", minimum=0, exclusive_minimum=True, maximum=1
        )
        high = check_number(self.high, field="elastic_range", minimum=1, limit=MAX_SECONDS)
        if self.scaling not in SCALINGS:
            raise InputError(
                f"unknown scaling {self.scaling!r}; choose from {', '.join(SCALINGS)}",
                field="scaling",
            )
        serial = check_number(self.serial_fraction, field="serial_fraction", minimum=0, maximum=1)
        reconfiguration = check_number(
            self.reconfiguration, field="reconfiguration_cost", minimum=0, limit=MAX_SECONDS
        )
        seed = check_number(self.seed, field="seed", integer=True, minimum=0)
        for name, value in (
            ("fraction", fraction),
            ("low", low),
            ("high", high),
            ("serial_fraction", serial),
            ("reconfiguration", reconfiguration),
            ("seed", seed),
        ):
            object.__setattr__(self, name, value)

    def to_dict(self) -> dict:
        return asdict(self)


def parse_range(text: str) -> tuple[float, float]:
    """'LO,HI' (multiples of the trace size) -> (LO, HI) with 0 < LO <= 1 <= HI; InputError
    otherwise."""
    parts = str(text).split(",")
    if len(parts) != 2:
        raise InputError(
            f"expected LO,HI (two multiples of the trace size), got {text!r}", field="elastic_range"
        )
    low = check_number(
        parts[0], field="elastic_range", minimum=0, exclusive_minimum=True, maximum=1
    )
    high = check_number(parts[1], field="elastic_range", minimum=1, limit=MAX_SECONDS)
    return low, high


def marked_jobs(count: int, fraction: float, seed: int) -> np.ndarray:
    """Boolean mask of the round(fraction x count) jobs a seeded permutation picks."""
    mask = np.zeros(count, dtype=bool)
    mask[np.random.default_rng(seed).permutation(count)[: round(fraction * count)]] = True
    return mask


def node_bounds(
    requested: np.ndarray, low: float, high: float, nodes: int
) -> tuple[np.ndarray, np.ndarray]:
    """[min, max] nodes from the trace sizes: ceil(LO n) and floor(HI n), clipped to [1, platform
    nodes]."""
    requested = np.asarray(requested, dtype=np.int64)
    # a tiny slack so 0.5 x 4 stays 2 (not 3) under float rounding
    smallest = np.maximum(np.ceil(low * requested - BOUND_SLACK), 1).astype(np.int64)
    largest = np.minimum(np.floor(high * requested + BOUND_SLACK), nodes).astype(np.int64)
    return smallest, largest


def elastic_models(
    workload: Workload, platform: Platform, marking: ElasticMarking
) -> list[JobModel]:
    """One model per job (workload order): the marked jobs elastic, the others `RIGID`."""
    jobs = len(workload)
    if int(workload.cores.max(initial=0)) > platform.total_cores:
        raise InputError(
            f"a job asks for {int(workload.cores.max())} cores, the platform has "
            f"{platform.total_cores}",
            field="cores",
        )
    requested = -(-workload.cores // platform.cores_per_node)
    smallest, largest = node_bounds(requested, marking.low, marking.high, platform.nodes)
    scaling = linear if marking.scaling == "linear" else amdahl(marking.serial_fraction)
    models: list[JobModel] = [RIGID] * jobs
    shared: dict[
        tuple[int, int], JobModel
    ] = {}  # one object per distinct bounds: 50,000 jobs, few shapes
    for job in np.flatnonzero(marked_jobs(jobs, marking.fraction, marking.seed)).tolist():
        bounds = (int(smallest[job]), int(largest[job]))
        model = shared.get(bounds)
        if model is None:
            model = shared[bounds] = JobModel(
                marking.kind, *bounds, scaling=scaling, reconfiguration=marking.reconfiguration
            )
        models[job] = model
    return models
