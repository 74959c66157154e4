"""Popularity co-scheduler (003 §5.2.5): friendliest jobs first, the unfriendly ones deployed compact.

A job's rank counts the other waiting jobs it pairs with at an average heatmap speedup above the
threshold; the queue is sorted by rank / len(queue), descending. A job with rank 0 (no good partner left
in the queue, as happens to the last, least friendly jobs) is deployed compact instead of spread.
"""
from __future__ import annotations

import numpy as np

from cosched.simulator.colocation import COMPACT
from cosched.simulator.schedulers.base import DEFAULT_DEPTH
from cosched.simulator.schedulers.co_ordering import POPULARITY_THRESHOLD, popularity_key, popularity_ranks
from cosched.simulator.schedulers.coscheduling import CoScheduler

__all__ = ["Popularity"]


class Popularity(CoScheduler):
    """Queue by popularity rank (003 appendix); rank-0 jobs go compact (hybrid allocation)."""

    name = "popularity"
    OPTIONS = CoScheduler.OPTIONS + ("threshold",)

    def __init__(self, backfill=None, depth=DEFAULT_DEPTH, record_reservations=False,
                 threshold=POPULARITY_THRESHOLD):
        super().__init__(backfill, depth, record_reservations)
        self.threshold = threshold

    def ranks(self, engine, waiting: np.ndarray) -> np.ndarray:
        model = engine.speed_model
        return popularity_ranks(model.app[waiting], model.speedups, self.threshold)

    def priority(self, engine, waiting):
        ranks = self.ranks(engine, waiting)
        for job, rank in zip(waiting.tolist(), ranks.tolist()):
            engine.hint(job, COMPACT if rank == 0 else None)
        return popularity_key(ranks, waiting.size)
