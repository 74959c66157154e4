"""What a scheduler is: a queue-ordering key + a backfilling policy + a depth (thesis ch. 5, 000 §3.6).

Interface (what the engine calls; see `cosched.simulator.engine` for the state a scheduler reads):

- ``attach(engine)``: once, before the first event.
- ``on_arrival(engine, job)`` / ``on_finish(engine, job)``: optional hooks at each arrival / completion.
- ``schedule(engine)``: once per event timestamp, after completions and arrivals; starts jobs with
  ``engine.start_job(job)`` (the allocator picks the nodes) and may ``engine.request_wakeup(time)``.

``QueueScheduler`` is the classic family: ``order(engine)`` gives the waiting jobs in priority order
(arrival order by default; override ``key`` for SJF, LJF, the co-schedulers' ordering functions) and
``backfill`` picks the policy: "none" (start in order, stop at the first job that does not fit), "easy"
(only the head holds a reservation) or "conservative" (every job within ``depth`` holds one and none is
delayed). Backfilling reasons in allocator units over predicted end times (``engine.predicted_end``: the
user estimate by default, the run time with ``use_run_times``, rescaled by the job's current speed).
A co-scheduler is a subclass that sets ``key`` and is run with its own allocator.
"""
from __future__ import annotations

import heapq
from itertools import islice

from cosched.simulator.schedulers.backfilling import ConservativeBackfill, easy_pass, fcfs_pass

__all__ = ["Scheduler", "QueueScheduler", "BACKFILL_POLICIES", "DEFAULT_DEPTH"]

DEFAULT_DEPTH = 100  # jobs examined behind the head per pass, as Slurm's default (003 §2.2.2)
BACKFILL_POLICIES = ("none", "easy", "conservative")
IN_ORDER_CHUNK = 32  # waiting jobs fetched at a time while starting in order


class Scheduler:
    """Base class: override `schedule`; the hooks default to doing nothing."""

    name = "scheduler"

    def attach(self, engine) -> None:
        """Called once before the first event."""

    def on_arrival(self, engine, job: int) -> None:
        """Called at each arrival, before the scheduling pass."""

    def on_finish(self, engine, job: int) -> None:
        """Called at each completion, before the scheduling pass."""

    def schedule(self, engine) -> None:
        """Start the jobs that should start now (default: in arrival order, no backfilling)."""
        while engine.waiting and fcfs_pass(engine, list(islice(engine.waiting, IN_ORDER_CHUNK))):
            pass


class QueueScheduler(Scheduler):
    """Waiting queue sorted by `key` (None = arrival order), then the `backfill` policy up to `depth` jobs."""

    name = "queue"
    backfill = "easy"
    key = None  # function(engine, job) -> sort key, smallest first; None keeps arrival order

    OPTIONS = ("backfill", "depth", "record_reservations")

    def __init__(self, backfill: str | None = None, depth: int = DEFAULT_DEPTH, record_reservations: bool = False):
        if backfill is not None:
            if backfill not in BACKFILL_POLICIES:
                raise ValueError(f"unknown backfill policy {backfill!r}; known: {', '.join(BACKFILL_POLICIES)}")
            self.backfill = backfill
        if depth < 0:
            raise ValueError(f"backfill depth must be >= 0, got {depth}")
        self.depth = depth
        self.reservations: dict[int, float] | None = {} if record_reservations else None
        self._conservative = None

    def attach(self, engine) -> None:
        self._conservative = ConservativeBackfill(engine, self.depth, self.reservations) \
            if self.backfill == "conservative" else None

    def on_arrival(self, engine, job: int) -> None:
        if self._conservative is not None:
            self._conservative.arrived()

    def on_finish(self, engine, job: int) -> None:
        if self._conservative is not None:
            self._conservative.finished(job)

    def order(self, engine, limit: int) -> list[int]:
        """The first `limit` waiting jobs in priority order (stable: ties keep arrival order)."""
        if self.key is None:
            return list(islice(engine.waiting, limit))
        key = self.key
        return heapq.nsmallest(limit, engine.waiting, key=lambda job: key(engine, job))

    def schedule(self, engine) -> None:
        waiting = engine.waiting
        conservative = self._conservative
        if conservative is not None:
            while waiting and conservative.schedule(self.order(engine, self.depth)) and \
                    len(waiting) >= self.depth:
                conservative.arrived()
            return
        while waiting and fcfs_pass(engine, self.order(engine, IN_ORDER_CHUNK)):
            pass
        if waiting and self.backfill == "easy" and self.depth:
            easy_pass(engine, self.order(engine, self.depth + 1), self.reservations)
