"""Co-schedulers that reorder the queue by job size: EASY-Co, SJF-Co, LJF-Co, LAF-Co (003 §5.2.1-5.2.4).

A co-scheduler is a queue scheduler that asks for the co-location allocator and the heatmap speed model
(``cosched.simulator.colocation``): jobs are spread over twice the nodes with half-socket binding and
progress at the heatmap speedups of their neighbours. A subclass only sets ``priority``. All use EASY
backfilling.
"""
from __future__ import annotations

from cosched.simulator.colocation import CoLocationAllocator, co_context
from cosched.simulator.schedulers.base import QueueScheduler
from cosched.simulator.schedulers.co_ordering import laf_key, ljf_key, sjf_key

__all__ = ["CoScheduler", "EasyCo", "SJFCo", "LJFCo", "LAFCo"]


class CoScheduler(QueueScheduler):
    """EASY backfilling over a queue sorted by descending ``priority``, co-located on heatmap speeds.

    The remaining time of a waiting job is its estimate (its run time with ``use_run_times``, as the
    thesis assumes known run times, 003 §5.1.4).
    """

    name = "easy-co"
    backfill = "easy"
    co_located = True

    def make_allocator(self, platform, placement: str | None = None) -> CoLocationAllocator:
        return CoLocationAllocator(platform, placement or "idle")

    def make_speed_model(self, workload, heatmap=None, spread_speedup: float | None = None):
        return co_context(workload, heatmap, spread_speedup).speed_model()


class EasyCo(CoScheduler):
    """Arrival order, EASY backfilling, co-located (003 §5.2.1)."""

    name = "easy-co"


class SJFCo(CoScheduler):
    """Shortest remaining time first (003 appendix: -remaining_time)."""

    name = "sjf-co"

    def priority(self, engine, waiting):
        return sjf_key(self.estimate[waiting])


class LJFCo(CoScheduler):
    """Longest remaining time first (003 appendix: remaining_time)."""

    name = "ljf-co"

    def priority(self, engine, waiting):
        return ljf_key(self.estimate[waiting])


class LAFCo(CoScheduler):
    """Largest area first: processes x remaining time (003 appendix)."""

    name = "laf-co"

    def priority(self, engine, waiting):
        return laf_key(self.cores[waiting], self.estimate[waiting])
