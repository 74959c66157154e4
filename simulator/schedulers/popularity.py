"""Popularity co-scheduler (003 §5.2.5): friendliest jobs first, the unfriendly ones deployed compact.

A job's rank counts the other waiting jobs it pairs with at an average heatmap speedup above the
threshold; the queue is sorted by rank / len(queue), descending. A job with rank 0 (no good partner left
in the queue, as happens to the last, least friendly jobs) is deployed compact instead of spread.
"""
from __future__ import annotations

import numpy as np

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

    def co_key(self, engine, waiting):
        ranks = self.ranks(engine, waiting)
        compact = engine.allocator.compact
        compact.difference_update(waiting.tolist())
        compact.update(waiting[ranks == 0].tolist())
        return popularity_key(ranks, waiting.size)
