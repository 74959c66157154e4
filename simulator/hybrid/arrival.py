"""Arrival policies of 004 §III-B.2: how an arrived on-demand job short of idle and reserved nodes
makes room.

- PAA (`PreemptOnArrival`): preempt running rigid and malleable jobs by ascending overhead
  (malleable: its setup; rigid: the work since its last checkpoint plus its setup).
- SPAA (`ShrinkOnArrival`): shrink the running malleable jobs as evenly as possible if they can
  supply the missing nodes, else preempt as PAA does.

Malleable jobs get their two-minute warning first (`Hybrid.act`). A new arrival policy is a subclass
of `ArrivalPolicy` that implements `make_room`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cosched.simulator.hybrid.base import PREEMPTED, SHRUNK, ArrivalPolicy, allocations
from cosched.simulator.jobs import JobKind

if TYPE_CHECKING:
    from cosched.simulator.view import SchedulerView

__all__ = ["ArrivalPolicy", "PreemptOnArrival", "ShrinkOnArrival", "water_fill"]


def water_fill(caps: list[int], need: int) -> list[int]:
    """Nodes to take from each job, as evenly as possible within `caps`, summing to `need` (004
    §III-B, SPAA).

    [impl] Equal shares, the jobs with the smallest caps first; caps must sum to at least `need`.
    """
    amounts = [0] * len(caps)
    left = need
    order = sorted(range(len(caps)), key=caps.__getitem__)
    for rank, index in enumerate(order):
        share = -(-left // (len(caps) - rank))
        amounts[index] = taken = min(caps[index], share)
        left -= taken
    return amounts


class PreemptOnArrival(ArrivalPolicy):
    """PAA (004 §III-B.2)."""

    name = "paa"

    def make_room(self, engine: SchedulerView, od: int, need: int) -> bool:
        return self.preempt(engine, od, need)

    def preempt(self, engine: SchedulerView, od: int, need: int) -> bool:
        """Preempt running rigid and malleable jobs by ascending overhead until `need` nodes are
        free."""
        mechanism = self.mechanism
        kind, allocation, warned = mechanism.type, allocations(engine), mechanism.victim_of
        on_demand = JobKind.ON_DEMAND
        jobs = [job for job in engine.running if kind[job] is not on_demand and job not in warned]
        if sum(allocation[job].nodes.size for job in jobs) < need:
            return False
        jobs = mechanism.by_overhead(engine, jobs)
        for job in jobs:
            if need <= 0:
                break
            size = allocation[job].nodes.size
            mechanism.act(engine, od, job, 0)
            mechanism.lenders[od].append((job, min(size, need), PREEMPTED, size))
            need -= size
        return True


class ShrinkOnArrival(PreemptOnArrival):
    """SPAA (004 §III-B.2): shrink if the malleable jobs can supply the nodes, else preempt."""

    name = "spaa"

    def make_room(self, engine: SchedulerView, od: int, need: int) -> bool:
        return self.shrink(engine, od, need) or self.preempt(engine, od, need)

    def shrink(self, engine: SchedulerView, od: int, need: int) -> bool:
        """Shrink the running malleable jobs as evenly as possible if they can supply `need`
        nodes."""
        mechanism = self.mechanism
        kind, malleable, warned = mechanism.type, JobKind.MALLEABLE, mechanism.victim_of
        allocation = allocations(engine)
        jobs = [job for job in engine.running if kind[job] is malleable and job not in warned]
        sizes = [allocation[job].nodes.size for job in jobs]
        caps = [size - mechanism.n_min[job] for job, size in zip(jobs, sizes)]
        if sum(caps) < need:
            return False
        for job, size, amount in zip(jobs, sizes, water_fill(caps, need)):
            if amount:
                mechanism.act(engine, od, job, size - amount)
                mechanism.lenders[od].append((job, amount, SHRUNK, size))
        return True
