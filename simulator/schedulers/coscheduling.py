"""Co-schedulers that reorder the queue by job size: EASY-Co, SJF-Co, LJF-Co, LAF-Co (003 §5.2.1-5.2.4).

All run with EASY backfilling on the co-location allocator (``cosched.simulator.colocation``): jobs are spread
over twice the nodes with half-socket binding. A subclass only sets ``co_key``: a vectorised key over the
waiting jobs, sorted descending and stable as in ELiSE (``co_ordering.queue_order``).
"""
from __future__ import annotations

from itertools import islice

import numpy as np

from cosched.errors import InputError
from cosched.simulator.schedulers.backfilling import easy_pass
from cosched.simulator.schedulers.base import QueueScheduler
from cosched.simulator.schedulers.co_ordering import laf_key, ljf_key, queue_order, sjf_key

__all__ = ["CoScheduler", "EasyCo", "SJFCo", "LJFCo", "LAFCo"]


class CoScheduler(QueueScheduler):
    """EASY backfilling over a queue sorted by the descending ``co_key``; arrival order if it is None.

    The remaining time of a waiting job is its estimate (its run time with ``use_run_times``, as the
    thesis assumes known run times, 003 §5.1.4).
    """

    name = "easy-co"
    backfill = "easy"
    co_scheduling = True
    co_key = None  # function(self, engine, waiting job indices) -> key array, largest first

    def attach(self, engine) -> None:
        if not hasattr(engine.allocator, "half"):
            raise InputError(f"{self.name} needs the co-location allocator: run it through "
                             "cosched.simulator.colocation.simulate_co (CLI: simulate --scheduler with --heatmap)",
                             field="scheduler")
        super().attach(engine)
        self.cores = np.asarray(engine.cores, dtype=np.int64)
        self.estimate = np.asarray(engine.estimate, dtype=np.float64)

    def order(self, engine, limit: int | None = None) -> list[int]:
        """The waiting queue sorted once by the key (000 Algorithm 2: a sorted copy of the queue)."""
        if self.co_key is None:
            return list(islice(engine.waiting, limit))
        waiting = np.fromiter(engine.waiting, np.int64, len(engine.waiting))
        return waiting[queue_order(self.co_key(engine, waiting))[:limit]].tolist()

    def schedule(self, engine) -> None:
        """Deploy in key order until a job does not fit, then EASY-backfill behind it (000 Algorithm 2)."""
        if self._conservative is not None:
            super().schedule(engine)
            return
        if not engine.waiting:
            return
        order = self.order(engine)
        start_job, index = engine.start_job, 0
        while index < len(order) and start_job(order[index]):
            index += 1
        if index < len(order) and self.backfill == "easy" and self.depth:
            easy_pass(engine, order[index:index + self.depth + 1], self.reservations)


class EasyCo(CoScheduler):
    """Arrival order, EASY backfilling, co-located (003 §5.2.1)."""

    name = "easy-co"


class SJFCo(CoScheduler):
    """Shortest remaining time first (003 appendix: -remaining_time)."""

    name = "sjf-co"

    def co_key(self, engine, waiting):
        return sjf_key(self.estimate[waiting])


class LJFCo(CoScheduler):
    """Longest remaining time first (003 appendix: remaining_time)."""

    name = "ljf-co"

    def co_key(self, engine, waiting):
        return ljf_key(self.estimate[waiting])


class LAFCo(CoScheduler):
    """Largest area first: processes x remaining time (003 appendix)."""

    name = "laf-co"

    def co_key(self, engine, waiting):
        return laf_key(self.cores[waiting], self.estimate[waiting])
