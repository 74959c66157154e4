"""The six scheduling policies of ElastiSim's study (001 §6.3): one definition of their rules, for
both front ends.

The rules live here as plain functions over job numbers: `rigid_starts` (the rigid policies),
`admit` and `malleable_targets` (the malleable ones). `cosched simulate --scheduler NAME` runs them
on the engine (the classes below) and `cosched elastic --algorithm NAME` on ElastiSim projects
(`cosched.simulator.elastic.algorithms`, which applies them through the elastisim-python
interface). The paper describes each policy in one sentence; the choices it leaves open are settled
here:

- **fcfs-rigid**: arrival order, every job at its requested size (a trace's size; an ElastiSim job's
  `num_nodes`, or `num_nodes_max` for the other types), EASY backfilling: a later job starts only if
  it does not delay the head job's reservation. The paper's "backfill jobs without preventing delays
  of jobs that have arrived earlier" is read as "without causing delays" (EASY), the usual meaning.
- **sjf-rigid**: shortest estimate first (at the requested size: the user's estimate, or the run
  time with ``use_run_times``; on ElastiSim projects the flow model's contention-free estimate),
  requested sizes, EASY backfilling behind the first job that does not fit.
- **fcfs-rigid-greedy**, **sjf-rigid-greedy**: the other reading of that sentence, kept under its
  own names: the same order and sizes, and every job that fits starts, with no reservation (greedy
  first fit: a wide job can wait for ever behind narrow ones).
- **fcfs-malleable**, **sjf-malleable**, **srtf**, **drf** (`ElasticPolicy`): at every scheduling
  pass a target size is computed for every running and admitted job, then applied (shrinks first,
  then starts, then expansions), so the nodes are never over-committed:

  1. *floors*: a running malleable job may be shrunk to its minimum (``shrink=True``, the default;
     with ``shrink=False`` it keeps its size); rigid and moldable running jobs keep theirs;
  2. *admission*: waiting jobs in the policy's order start at their minimum size (rigid jobs: their
     trace size) while that fits beside the floors; the first that does not fit stops admission (no
     backfilling: the nodes it leaves go to expansions instead, the malleable counterpart of
     backfilling);
  3. *expansion*: the nodes left over go to the running malleable jobs and the admitted moldable and
     malleable jobs, up to their maximum, in the policy's order (the first in order is filled to its
     maximum before the next gets any). A moldable job's size is fixed when it starts; a malleable
     job is resized at once.

The orders, lowest key first, ties by arrival: fcfs-malleable by arrival; sjf-malleable by the
estimate at the requested size (001: "uses the same estimation to expand jobs"); srtf by the
estimated remaining work, the estimate less the work done, in seconds at the requested size (001:
"progress-aware", from the job's progress); no job is ever preempted, a job with more remaining work
is shrunk instead. drf: with nodes as the only resource a job's dominant share is its share of the
nodes, so DRF is max-min fairness over node counts: jobs are admitted at their minimum in arrival
order (their share is zero) — 001: "initially assigns the minimum number of resources" — and the
leftover nodes raise the smallest jobs first (water-filling within [min, max]; the last nodes one
each in arrival order).

On ElastiSim projects a resize of a running malleable or adaptive job takes effect at its next
scheduling point (ElastiSim's protocol), so the nodes a shrink frees are there for a waiting job
only from then on; evolving jobs are resized only by their own requests, which malleable policies
grant as far as free nodes allow.

Targets depend only on the set of jobs and their keys, so resizes happen at arrivals and completions
(and for srtf when two jobs' remaining work swap order). Resizes apply at once, so jobs whose model
has scheduling points (`JobModel.scheduling_point`, where a resize waits) are treated as rigid by
these policies.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Iterator
from itertools import islice
from typing import TYPE_CHECKING, cast

import numpy as np

from cosched.deprecation import warn_renamed
from cosched.simulator.jobs import JobKind
from cosched.simulator.schedulers.backfilling import (
    PerJob,
    easy_backfill,
    first_fit,
    shadow_time,
    start_in_order,
)
from cosched.simulator.schedulers.base import DEFAULT_DEPTH, Scheduler
from cosched.simulator.schedulers.co_ordering import queue_order, sjf_key
from cosched.simulator.schedulers.easy import EASY
from cosched.simulator.schedulers.ordering import SJF

if TYPE_CHECKING:
    from cosched.simulator.view import SchedulerView

__all__ = [
    "FCFSRigid",
    "SJFRigid",
    "FCFSRigidGreedy",
    "SJFRigidGreedy",
    "ElasticPolicy",
    "FCFSMalleable",
    "SJFMalleable",
    "SRTF",
    "DRF",
    "water_level",
    "RIGID_COUNTERPART",
    "POLICIES",
    "rigid_starts",
    "admit",
    "malleable_targets",
]

RIGID_COUNTERPART = {"fcfs-malleable": "fcfs-rigid", "sjf-malleable": "sjf-rigid"}
# the integer kind codes this module had before JobKind: old name -> its JobKind now
_DEPRECATED_KINDS = {
    "RIGID": JobKind.RIGID,
    "MOLDABLE": JobKind.MOLDABLE,
    "MALLEABLE": JobKind.MALLEABLE,
}


def __getattr__(name: str) -> object:
    """The old kind codes, still importable for one release (they are `JobKind` members now)."""
    if name in _DEPRECATED_KINDS:
        warn_renamed(f"{__name__}.{name}", f"cosched.simulator.jobs.JobKind.{name}")
        return _DEPRECATED_KINDS[name]
    if name == "KIND_CODES":
        warn_renamed(f"{__name__}.KIND_CODES", "cosched.simulator.jobs.JobKind(spelling)")
        return {str(kind): kind for kind in _DEPRECATED_KINDS.values()}
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# each policy's rules: (queue order, sizing) -- "rigid" with EASY backfilling, "greedy" first fit,
# "malleable"
POLICIES = {
    "fcfs-rigid": ("fcfs", "rigid"),
    "sjf-rigid": ("sjf", "rigid"),
    "fcfs-rigid-greedy": ("fcfs", "greedy"),
    "sjf-rigid-greedy": ("sjf", "greedy"),
    "fcfs-malleable": ("fcfs", "malleable"),
    "sjf-malleable": ("sjf", "malleable"),
    "srtf": ("srtf", "malleable"),
    "drf": ("drf", "malleable"),
}


_NO_RUN_TIMES: tuple[float, ...] = ()

# --- the rules -----------------------------------------------------------------------------------


class _NodeCount:
    """A count of free nodes as the one in-order step (`start_in_order`) and the one EASY pass
    (`easy_backfill`) see a view: a rigid or malleable policy's pass decides over this count, so
    it reaches those steps through this adapter instead of a copy of them. A job takes
    `units_table[job]` nodes; a start always succeeds when the job fits (the callers test that) and
    is recorded in `started`, with the nodes' predicted release (`now + runtime[job]`) in
    `releases` when those are kept (None: no backfilling reads them)."""

    __slots__ = ("units_table", "free", "started", "releases", "runtime", "now")

    def __init__(
        self,
        units: PerJob[int],
        free: int,
        releases: list[tuple[float, int, int]] | None = None,
        runtime: PerJob[float] = _NO_RUN_TIMES,
        now: float = 0.0,
    ):
        self.units_table, self.free = units, free
        self.started: list[int] = []
        self.releases, self.runtime, self.now = releases, runtime, now

    def free_units(self) -> int:
        return self.free

    def start(self, job: int) -> bool:
        size = self.units_table[job]
        self.started.append(job)
        self.free -= size
        if self.releases is not None:
            self.releases.append((self.now + self.runtime[job], job, size))
        return True

    def backfill(self, job: int) -> int:
        """`start(job)` as `easy_backfill` calls it: the nodes free afterwards."""
        self.start(job)
        return self.free


def rigid_starts(
    order: Iterable[int],
    size: PerJob[int],
    runtime: PerJob[float] | None,
    free: int,
    releases: Iterable[tuple[float, int, int]],
    now: float,
    *,
    backfill: bool = True,
    depth: int = DEFAULT_DEPTH,
) -> list[int]:
    """The waiting jobs a rigid policy starts now, in `order` (the policy's queue order).

    Jobs start in order while they fit in the `free` nodes (each on `size[job]`): the one in-order
    step, `start_in_order` (003 §5.1.1). With `backfill` the first that does not fit holds a
    reservation and the next `depth` jobs are backfilled behind it by the one EASY pass
    (`shadow_time`, `easy_backfill`, 003 §5.1.2), over `releases`: (predicted end, job, nodes) of
    the running jobs, the ones started here added, in the one tie order (predicted end, then job).
    Without `backfill` (greedy first fit) every job that fits starts, in order."""
    kept = list(releases) if backfill else None
    nodes = _NodeCount(size, free, kept, _NO_RUN_TIMES if runtime is None else runtime, now)
    order = iter(order)
    head = start_in_order(cast("SchedulerView", nodes), order)
    started = nodes.started
    if head is None or nodes.free == 0:
        return started
    if not backfill:
        return started + first_fit(order, size, nodes.free)
    assert nodes.releases is not None and runtime is not None
    ends = sorted(nodes.releases)
    held = {job: count for _, job, count in ends}
    shadow, extra = shadow_time(size[head], nodes.free, [(end, job) for end, job, _ in ends], held)
    easy_backfill(
        islice(order, depth), size, runtime, nodes.free, now, shadow, extra, nodes.backfill
    )
    return started


def admit(queue: Iterable[int], spare: int, low: PerJob[int]) -> list[int]:
    """Waiting jobs (in the policy's order) admitted at their minimum `low[job]` while it fits in
    `spare`: the one in-order step (`start_in_order`) over a count of nodes."""
    nodes = _NodeCount(low, spare)
    start_in_order(cast("SchedulerView", nodes), queue)
    return nodes.started


def malleable_targets(
    running: list[int],
    sizes: list[int],
    floors: list[int],
    admitted: list[int],
    spare: int,
    low: PerJob[int],
    high: PerJob[int],
    kind: PerJob[JobKind],
    keys: Callable[[list[int], list[int]], list[float]],
    *,
    fair: bool = False,
) -> dict[int, int]:
    """Target sizes of the running and the admitted jobs: running jobs keep their size, admitted
    ones start at their minimum, and the `spare` nodes left after admission (floors of running
    jobs, minima of admitted ones) go to the running malleable jobs and the admitted non-rigid ones
    up to `high`: lowest `keys(running_jobs, admitted_jobs)` first, ties by job number, or max-min
    fair (`fair`, DRF's water-filling)."""
    targets = dict(zip(running, sizes))
    targets.update((job, low[job]) for job in admitted)
    grow = [index for index, job in enumerate(running) if kind[job] is JobKind.MALLEABLE]
    jobs = [running[index] for index in grow] + [
        job for job in admitted if kind[job] is not JobKind.RIGID
    ]
    if jobs:
        base = [floors[index] for index in grow] + [low[job] for job in jobs[len(grow) :]]
        top = [high[job] for job in jobs]
        share = _fair_share if fair else _in_order
        targets.update(
            zip(jobs, share(jobs, keys(jobs[: len(grow)], jobs[len(grow) :]), base, top, spare))
        )
    return targets


def _in_order(
    jobs: list[int], keys: list[float], base: list[int], top: list[int], spare: int
) -> list[int]:
    sizes = list(base)
    for index in sorted(range(len(jobs)), key=lambda i: (keys[i], jobs[i])):
        give = min(top[index] - base[index], spare)
        sizes[index] += give
        spare -= give
        if not spare:
            break
    return sizes


def _fair_share(
    jobs: list[int], keys: list[float], base: list[int], top: list[int], spare: int
) -> list[int]:
    level = water_level(base, top, sum(base) + spare)  # 001 §6.3 DRF: max-min fair node shares
    sizes = [min(max(level, low), high) for low, high in zip(base, top)]
    left = sum(base) + spare - sum(sizes)
    for index in sorted(
        range(len(jobs)), key=jobs.__getitem__
    ):  # the last nodes one each, by arrival
        if not left:
            break
        if sizes[index] == level < top[index]:
            sizes[index] += 1
            left -= 1
    return sizes


class FCFSRigid(EASY):
    """Arrival order at trace sizes, EASY backfilling (001 §6.3, rigid FCFS)."""

    name = "fcfs-rigid"


class SJFRigid(SJF):
    """Shortest estimate first at trace sizes, EASY backfilling (001 §6.3, rigid SJF)."""

    name = "sjf-rigid"


class FCFSRigidGreedy(Scheduler):
    """Arrival order at trace sizes, every job that fits starts (greedy first fit, `rigid_starts`
    without
    backfilling): the literal reading of 001 §6.3's rigid FCFS."""

    name = "fcfs-rigid-greedy"
    OPTIONS = ()

    def attach(self, engine: SchedulerView) -> None:
        self.size = _UnitsOf(engine)

    def order(self, engine: SchedulerView) -> list[int]:
        return list(engine.waiting)

    def schedule(self, engine: SchedulerView) -> None:
        if not engine.waiting:
            return
        free = engine.free_units()
        if free == 0:
            return
        for job in rigid_starts(
            self.order(engine), self.size, None, free, (), engine.now, backfill=False
        ):
            engine.start(job)


class SJFRigidGreedy(FCFSRigidGreedy):
    """Shortest estimate first at trace sizes, greedy first fit (see `FCFSRigidGreedy`)."""

    name = "sjf-rigid-greedy"

    def order(self, engine: SchedulerView) -> list[int]:
        waiting = np.fromiter(engine.waiting, np.int64, len(engine.waiting))
        estimate = np.asarray(engine.estimate, dtype=np.float64)
        return waiting.take(queue_order(sjf_key(estimate[waiting]))).tolist()


class _UnitsOf:
    """size[job]: the allocator units a job takes (its nodes, on the whole-node allocator)."""

    def __init__(self, engine: SchedulerView):
        self.engine = engine

    def __getitem__(self, job: int) -> int:
        engine = self.engine
        table = engine.units_table
        return int(table[job]) if table is not None else engine.units(job)


class ElasticPolicy(Scheduler):
    """Admit at minimum size (shrinking malleable jobs), then fill leftover nodes in the policy's
    order.

    Subclasses give the order: `waiting_key` (a job's key when it enters the queue) and
    `running_keys`; the keys are static unless `static_keys` is False (then every pass recomputes
    the targets).
    """

    name = "elastic"
    OPTIONS = ("shrink",)
    static_keys = True  # targets change only when jobs arrive, start or end

    def __init__(self, shrink: bool = True):
        self.shrink = shrink

    def attach(self, engine: SchedulerView) -> None:
        jobs = len(engine.cores)
        requested = [engine.requested_nodes(job) for job in range(jobs)]
        if engine.models is None:
            self.low, self.high = requested, list(requested)
            self.kind: list[JobKind] = [JobKind.RIGID] * jobs
        else:
            bounds = [model.bounds(size) for model, size in zip(engine.models, requested)]
            self.low = [low for low, _ in bounds]
            self.high = [high for _, high in bounds]
            self.kind = [
                JobKind.RIGID
                if low == high or model.scheduling_point is not None
                else JobKind(model.kind)
                for model, (low, high) in zip(engine.models, bounds)
            ]
        self.queue: list[tuple[float, int]] = []  # waiting jobs as sorted (key, job)

    def waiting_key(self, engine: SchedulerView, job: int) -> float:
        """Admission key of a waiting job, lowest first (ties by arrival): arrival order."""
        return job

    def running_keys(self, engine: SchedulerView, jobs: list[int]) -> list[float]:
        """Expansion keys of running jobs, lowest first, on the scale of `waiting_key`."""
        return [float(job) for job in jobs]

    def on_arrival(self, engine: SchedulerView, job: int) -> None:
        bisect.insort(self.queue, (self.waiting_key(engine, job), job))

    def on_preempt(self, engine: SchedulerView, job: int) -> None:
        bisect.insort(self.queue, (self.waiting_key(engine, job), job))

    fair = False  # DRF: max-min fair expansion instead of the policy's order

    def schedule(self, engine: SchedulerView) -> None:
        queue, waiting, held, low, high, kind = (
            self.queue,
            engine.waiting,
            engine.held,
            self.low,
            self.high,
            self.kind,
        )
        free = engine.free_units()
        if free == 0 and not waiting:
            return
        running = list(engine.running)
        sizes = [held[job] for job in running]
        floors = (
            [
                low[job] if kind[job] is JobKind.MALLEABLE else size
                for job, size in zip(running, sizes)
            ]
            if self.shrink
            else sizes
        )
        spare = free + sum(sizes) - sum(floors)
        position = 0

        def candidates() -> Iterator[
            int
        ]:  # the queue in order, dropping jobs started or killed by someone else
            nonlocal position
            while position < len(queue):
                job = queue[position][1]
                if job not in waiting:
                    del queue[position]
                    continue
                yield job
                position += 1

        admitted = admit(candidates(), spare, low)
        position = len(admitted)
        del queue[:position]
        if not admitted and free == 0 and self.static_keys:
            return  # same jobs, same keys as when the last pass set these sizes
        spare -= sum(low[job] for job in admitted)
        targets = malleable_targets(
            running,
            sizes,
            floors,
            admitted,
            spare,
            low,
            high,
            kind,
            lambda grown, new: (
                self.running_keys(engine, grown) + [self.waiting_key(engine, job) for job in new]
            ),
            fair=self.fair,
        )
        resize, start = engine.resize, engine.start
        for job, size in zip(running, sizes):  # shrinks first: they free the nodes the others take
            if targets[job] < size:
                resize(job, targets[job])
        for job in admitted:
            if not start(
                job, targets[job]
            ):  # only if another actor holds nodes the targets counted on
                bisect.insort(queue, (self.waiting_key(engine, job), job))
        for job, size in zip(running, sizes):
            if targets[job] > size:
                resize(job, targets[job])


class FCFSMalleable(ElasticPolicy):
    """Arrival order for admission and expansion (001 §6.3, malleable FCFS)."""

    name = "fcfs-malleable"


class SJFMalleable(ElasticPolicy):
    """Shortest estimate first for admission and expansion (001 §6.3, malleable SJF)."""

    name = "sjf-malleable"

    def waiting_key(self, engine: SchedulerView, job: int) -> float:
        return -sjf_key(engine.estimate[job])  # lowest first: the SJF order, ties by job index

    def running_keys(self, engine: SchedulerView, jobs: list[int]) -> list[float]:
        estimate = engine.estimate
        return [-sjf_key(estimate[job]) for job in jobs]


class SRTF(ElasticPolicy):
    """Shortest estimated remaining work first for admission and expansion (001 §6.3, SRTF)."""

    name = "srtf"
    static_keys = False  # remaining work shrinks as jobs run

    def waiting_key(self, engine: SchedulerView, job: int) -> float:
        return max(engine.estimate[job] - engine.work_done(job), 0.0)

    def running_keys(self, engine: SchedulerView, jobs: list[int]) -> list[float]:
        # 001 §6.3 (SRTF): the estimate less the work done (the view's, progress since the last
        # update included)
        estimate, work_done = engine.estimate, engine.work_done
        return [max(estimate[job] - work_done(job), 0.0) for job in jobs]


class DRF(ElasticPolicy):
    """Admission at minimum in arrival order; leftover nodes by max-min fairness over node shares
    (001 §6.3)."""

    name = "drf"
    fair = True


def water_level(base: list[int], top: list[int], total: int) -> int:
    """The highest whole level L with sum(clip(L, base_i, top_i)) <= total (max-min fair share), by
    one sweep.

    The sum rises with slope #{i: base_i <= L < top_i} between the sorted bounds.
    """
    events = sorted([(low, 1) for low in base] + [(high, -1) for high in top])
    level, filled, slope = events[0][0], sum(base), 0
    for point, step in events:
        if point > level:
            rise = slope * (point - level)
            if filled + rise > total:
                return level + (total - filled) // slope
            filled += rise
            level = point
        slope += step
    return level
