"""The six policies of the ElastiSim paper (001 §6.3), written against the elastisim-python interface.

Each is a callable `schedule(jobs, nodes, system)` like a user's algorithm file; the simulation hands it a
run-time estimator (`bind`), the flow model's contention-free time of a job's remaining phases on n nodes, where
the paper uses its performance models (SJF: "the backward-pass model"; SRTF: progress-aware remaining time).

Choices the paper leaves open (001 §7), settled here and documented in docs/elastisim.md:

- backfilling: every policy walks its queue in order and starts each job that fits now (greedy first fit, the
  literal reading of "without preventing delays of jobs that arrived earlier"); no reservations;
- rigid policies run every job at one fixed size: `num_nodes`, or `num_nodes_max` for the other types; they
  never reconfigure and ignore evolving requests;
- malleable policies start a job on min(free nodes, num_nodes_max) if that reaches num_nodes_min (rigid jobs
  at num_nodes), then grow running malleable and adaptive jobs into the free nodes up to num_nodes_max in the
  policy's order; no policy shrinks a running job to admit another; evolving requests are granted as far as
  free nodes allow (shrinks always);
- DRF's dominant share is the share of nodes a job holds (nodes are the only resource of the model): pending
  jobs start at num_nodes_min, smallest request first; free nodes then go one at a time to the running
  elastic job with the lowest share;
- SJF orders by the estimate at the size the job would start with (its minimum for elastic jobs), running
  jobs by their remaining estimate at their current size; SRTF orders both by the remaining estimate from
  `completed_phases` (updated at scheduling points, as ElastiSim reports it).
"""
from __future__ import annotations

from cosched.simulator.elastic.compat import InvocationType, JobState, JobType, NodeState

__all__ = ["ALGORITHMS", "make_algorithm", "Policy"]

_GROWABLE = (JobType.MALLEABLE, JobType.ADAPTIVE)
_EVOLVING = (JobType.EVOLVING, JobType.ADAPTIVE)


class Policy:
    """A queue order (FCFS, SJF, SRTF, DRF) and a sizing rule (rigid or malleable)."""

    def __init__(self, order: str, malleable: bool):
        self.order, self.malleable = order, malleable
        self.estimate = None
        self._estimates: dict[int, tuple[float, int]] = {}  # keys of pending jobs
        self._seen = 0  # jobs already taken into `_pending` (the job list only grows, in submission order)
        self._pending: list = []

    def bind(self, estimate) -> None:
        """Receive the simulation's estimator `estimate(job_id, nodes, completed_phases) -> seconds`."""
        self.estimate = estimate

    def _minimum(self, job) -> int:
        """The size a pending job starts with at the least (rigid policies: its one fixed size)."""
        if job.type == JobType.RIGID:
            return job.num_nodes
        return job.num_nodes_min if self.malleable or self.order == "drf" else job.num_nodes_max

    def _key(self, job):
        if self.order in ("fcfs", "drf"):
            return job.identifier
        if job.state == JobState.PENDING:  # constant while pending: computed once
            key = self._estimates.get(job.identifier)
            if key is None:
                key = self._estimates[job.identifier] = (self.estimate(job.identifier, self._minimum(job), 0),
                                                         job.identifier)
            return key
        nodes = len(job.assigned_nodes)
        progress = job.completed_phases if self.order == "srtf" else 0
        return self.estimate(job.identifier, nodes, progress), job.identifier

    def __call__(self, jobs, nodes, system) -> None:
        free = [node for node in nodes if node.state == NodeState.FREE]
        if system["invocation_type"] == InvocationType.INVOKE_EVOLVING_REQUEST and self.malleable:
            self._evolve(system["job"], system["evolving_request"], free)
        self._pending.extend(jobs[self._seen:])
        self._seen = len(jobs)
        self._pending = pending = [job for job in self._pending if job.state == JobState.PENDING]
        if not free:  # nothing can start or grow
            return
        if self.order == "drf":
            pending.sort(key=lambda job: (self._minimum(job), job.identifier))
        elif self.order != "fcfs":
            pending.sort(key=self._key)
        for job in pending:
            if job.type == JobType.RIGID or not self.malleable or self.order == "drf":
                size = self._minimum(job)
            else:
                size = min(len(free), job.num_nodes_max)
                if size < job.num_nodes_min:
                    continue
            if size <= len(free):
                job.assign(free[:size])
                del free[:size]
        if self.malleable and free:
            self._grow(jobs, free)

    def _evolve(self, job, request: int, free: list) -> None:
        if job.state != JobState.RUNNING:
            return
        current = len(job.assigned_nodes)
        if request < current:
            job.remove(job.assigned_nodes[request:])
        elif request > current and free:
            grow = min(request - current, len(free))
            job.assign(free[:grow])
            del free[:grow]

    def _grow(self, jobs, free: list) -> None:
        running = [job for job in jobs if job.state == JobState.RUNNING and job.type in _GROWABLE
                   and len(job.assigned_nodes) < job.num_nodes_max]
        if self.order == "drf":  # progressive filling: one node at a time to the lowest share
            while free and running:
                job = min(running, key=lambda job: (len(job.assigned_nodes), job.identifier))
                job.assign(free.pop(0))
                if len(job.assigned_nodes) >= job.num_nodes_max:
                    running.remove(job)
            return
        if self.order != "fcfs":
            running.sort(key=self._key)
        for job in running:
            grow = min(len(free), job.num_nodes_max - len(job.assigned_nodes))
            if grow > 0:
                job.assign(free[:grow])
                del free[:grow]


ALGORITHMS = {
    "fcfs-rigid": ("fcfs", False), "fcfs-malleable": ("fcfs", True),
    "sjf-rigid": ("sjf", False), "sjf-malleable": ("sjf", True),
    "drf": ("drf", True), "srtf": ("srtf", True),
}


def make_algorithm(name: str) -> Policy:
    """A fresh built-in policy by name (see ALGORITHMS)."""
    order, malleable = ALGORITHMS[name]
    return Policy(order, malleable)
