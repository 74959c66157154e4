"""The policies of ElastiSim's study (001 §6.3) as elastisim-python algorithms, on the rules
`cosched
simulate` uses.

Each is a callable `schedule(jobs, nodes, system)` like a user's algorithm file. The rules are not
written here: `cosched.simulator.schedulers.elastic` holds them once (`rigid_starts`, `admit`,
`malleable_targets`; its docstring documents every choice the paper leaves open), and this module
only translates between them and the elastisim-python interface:

- a job's requested size is `num_nodes` (rigid) or `num_nodes_max` (the other types); its bounds are
  [`num_nodes_min`, `num_nodes_max`]; malleable and adaptive jobs are resizable, moldable ones sized
  at start, rigid and evolving ones fixed (an evolving job changes size only by its own requests);
- run-time estimates come from the simulation (`bind`): the flow model's contention-free time of a
  job's remaining phases on n nodes, where the paper uses its performance models; a running job's
  predicted end is its start plus that estimate (or now, once passed);
- decisions become `assign` / `remove` calls: nodes are taken lowest id first, a shrink gives up the
  job's last assigned nodes. A resize of a running job takes effect at its next scheduling point
  (ElastiSim's protocol), so a waiting job admitted on nodes a shrink will free starts at a later
  invocation;
- evolving requests are granted by the malleable policies as far as free nodes allow (shrinks
  always) and ignored by the rigid ones.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from cosched.simulator.elastic.compat import InvocationType, Job, JobState, JobType, NodeState
from cosched.simulator.jobs import JobKind
from cosched.simulator.schedulers.co_ordering import queue_order, sjf_key
from cosched.simulator.schedulers.elastic import (
    POLICIES,
    admit,
    malleable_targets,
    rigid_starts,
)

__all__ = ["ALGORITHMS", "make_algorithm", "Policy"]

# how the policies treat each ElastiSim job type: adaptive jobs as malleable, evolving ones as rigid
_KIND = {
    JobType.RIGID: JobKind.RIGID,
    JobType.MOLDABLE: JobKind.MOLDABLE,
    JobType.MALLEABLE: JobKind.MALLEABLE,
    JobType.ADAPTIVE: JobKind.MALLEABLE,
    JobType.EVOLVING: JobKind.RIGID,
}
_ACTIVE = (JobState.RUNNING, JobState.PENDING_RECONFIGURATION, JobState.IN_RECONFIGURATION)


class _Lookup:
    """A mapping job id -> value computed on first use (sizes, bounds and estimates of the jobs in
    view)."""

    __slots__ = ("function", "cache")

    def __init__(self, function):
        self.function, self.cache = function, {}

    def __getitem__(self, identifier: int):
        value = self.cache.get(identifier)
        if value is None:
            value = self.cache[identifier] = self.function(identifier)
        return value


def _unbound(job: int, nodes: int, completed_phases: int) -> float:
    raise RuntimeError("a policy estimates run times only once bound to a simulation (bind)")


class Policy:
    """One policy of `cosched.simulator.schedulers.elastic.POLICIES` over the elastisim-python
    interface."""

    def __init__(self, name: str, shrink: bool = True):
        self.name = name
        self.order, self.sizing = POLICIES[name]
        self.shrink = shrink
        self.estimate: Callable[[int, int, int], float] = _unbound
        self._views: dict[int, Job] = {}
        self._pending: list = []
        self._running: list = []
        self._seen = 0
        self.requested = _Lookup(lambda job: self._bound(job, "num_nodes_max"))
        self.low = _Lookup(lambda job: self._bound(job, "num_nodes_min"))
        self.high = self.requested
        self.kind = _Lookup(lambda job: _KIND[self._views[job].type])
        self.runtime = _Lookup(
            lambda job: self.estimate(job, self.requested[job], 0)
        )  # at the requested size

    def bind(self, estimate) -> None:
        """Receive the simulation's estimator `estimate(job_id, nodes, completed_phases) ->
        seconds`."""
        self.estimate = estimate

    def _bound(self, identifier: int, key: str) -> int:
        view = self._views[identifier]
        return view.num_nodes if view.type == JobType.RIGID else getattr(view, key)

    def _remaining(self, identifier: int) -> float:
        """What the shortest-first orders compare: the estimate at the requested size, or for srtf
        a started job's estimate of its remaining phases."""
        view = self._views[identifier]
        if self.order == "srtf" and view.state != JobState.PENDING:
            return self.estimate(identifier, self.requested[identifier], view.completed_phases)
        return self.runtime[identifier]

    def _key(self, identifier: int) -> float:
        """The policy's order as `malleable_targets` takes it, lowest first, ties by id (the
        engine's policies' keys): arrival, or the one SJF key (`co_ordering.sjf_key`) negated."""
        if self.order in ("fcfs", "drf"):
            return identifier
        return -sjf_key(self._remaining(identifier))

    def __call__(self, jobs, nodes, system) -> None:
        free = [node for node in nodes if node.state == NodeState.FREE]
        for view in jobs[self._seen :]:  # the job list only grows, in submission order
            self._views[view.identifier] = view
            self._pending.append(view)
        self._seen = len(jobs)
        if (
            system["invocation_type"] == InvocationType.INVOKE_EVOLVING_REQUEST
            and self.sizing == "malleable"
        ):
            self._evolve(system["job"], system["evolving_request"], free)
        self._pending = [view for view in self._pending if view.state == JobState.PENDING]
        self._running = [view for view in self._running if view.state in _ACTIVE]
        queue = [view.identifier for view in self._pending]  # by id: submission order
        if self.order not in ("fcfs", "drf"):  # the engine's SJF order: ties by job index
            remaining = np.fromiter(map(self._remaining, queue), np.float64, len(queue))
            queue = [queue[position] for position in queue_order(sjf_key(remaining))]
        if self.sizing == "malleable":
            self._malleable(queue, free)
        elif free and queue:
            self._rigid(queue, free, system["time"])

    def _start(self, identifier: int, size: int, free: list) -> None:
        view = self._views[identifier]
        view.assign(free[:size])
        del free[:size]
        self._running.append(view)

    def _rigid(self, queue: list, free: list, now: float) -> None:
        releases = [
            (
                max(
                    view.start_time + self.estimate(view.identifier, len(view.assigned_nodes), 0),
                    now,
                ),
                view.identifier,
                len(view.assigned_nodes),
            )
            for view in self._running
        ]
        for job in rigid_starts(
            queue,
            self.requested,
            self.runtime,
            len(free),
            releases,
            now,
            backfill=self.sizing == "rigid",
        ):
            self._start(job, self.requested[job], free)

    def _malleable(self, queue: list, free: list) -> None:
        low, high, kind = self.low, self.high, self.kind
        running = [view.identifier for view in self._running]
        sizes = [len(view.assigned_nodes) for view in self._running]
        floors = (
            [
                low[job] if kind[job] is JobKind.MALLEABLE else size
                for job, size in zip(running, sizes)
            ]
            if self.shrink
            else sizes
        )
        spare = len(free) + sum(sizes) - sum(floors)
        admitted = admit(queue, spare, low)
        if not admitted and not free:
            return
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
            lambda grown, new: [self._key(job) for job in (*grown, *new)],
            fair=self.order == "drf",
        )
        for view, size in zip(
            list(self._running), sizes
        ):  # shrinks: effective at the job's scheduling point
            if targets[view.identifier] < size:
                view.remove(view.assigned_nodes[targets[view.identifier] :])
        for job in admitted:
            if targets[job] <= len(
                free
            ):  # else: nodes a shrink frees later; a later call starts it
                self._start(job, targets[job], free)
        for view, size in zip(list(self._running), sizes):
            grow = min(targets[view.identifier] - size, len(free))
            if grow > 0:
                view.assign(free[:grow])
                del free[:grow]

    def _evolve(self, view, request: int, free: list) -> None:
        if view.state != JobState.RUNNING:
            return
        current = len(view.assigned_nodes)
        if request < current:
            view.remove(view.assigned_nodes[request:])
        elif request > current and free:
            grow = min(request - current, len(free))
            view.assign(free[:grow])
            del free[:grow]


ALGORITHMS = tuple(
    POLICIES
)  # fcfs-rigid, sjf-rigid, their -greedy readings, and the four malleable policies


def make_algorithm(name: str) -> Policy:
    """A fresh built-in policy by name (see ALGORITHMS)."""
    return Policy(name)
