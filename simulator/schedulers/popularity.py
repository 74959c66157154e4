"""Popularity co-scheduler (003 §5.2.5): friendliest jobs first, the unfriendly ones deployed
compact.

A job's rank counts the other waiting jobs it pairs with at an average heatmap speedup above the
threshold (measured pairs only); the queue is sorted by rank / len(queue), descending. A job whose
rank falls below 3 (no longer enough good partners left in the queue, as happens to the last, least
friendly jobs) is deployed compact instead of spread: the Greek summary of 003 §5.2.5 says
co-location stops "once the rank values fall below 3", as the author's implementation does
(``compact_below``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from cosched.errors import InputError
from cosched.simulator.colocation import COMPACT
from cosched.simulator.schedulers.base import DEFAULT_DEPTH
from cosched.simulator.schedulers.co_ordering import (
    POPULARITY_THRESHOLD,
    popularity_key,
    popularity_ranks,
)
from cosched.simulator.schedulers.coscheduling import CoScheduler

if TYPE_CHECKING:
    from cosched.simulator.view import SchedulerView

__all__ = ["Popularity", "COMPACT_BELOW"]

COMPACT_BELOW = 3  # 003 §5.2.5 (Greek text): no co-location once the rank falls below 3


class Popularity(CoScheduler):
    """Queue by popularity rank (003 appendix); jobs of rank below `compact_below` go compact
    (hybrid)."""

    name = "popularity"
    hints_placements = True
    priority_reads_time = False
    OPTIONS: tuple[str, ...] = CoScheduler.OPTIONS + ("threshold", "compact_below")

    def __init__(
        self,
        backfill: str | None = None,
        depth: int = DEFAULT_DEPTH,
        record_reservations: bool = False,
        missing_pair: str = "default",
        reserve: str = "head",
        threshold: float = POPULARITY_THRESHOLD,
        compact_below: int = COMPACT_BELOW,
    ) -> None:
        super().__init__(backfill, depth, record_reservations, missing_pair, reserve)
        if compact_below < 0:
            raise InputError(
                f"compact_below must be >= 0, got {compact_below}", field="compact_below"
            )
        self.threshold = threshold
        self.compact_below = compact_below

    def ranks(self, engine: SchedulerView, waiting: np.ndarray) -> np.ndarray:
        model = engine.speed_model
        return popularity_ranks(
            model.app[waiting], model.speedups, self.threshold, getattr(model, "known", None)
        )

    def priority(self, engine: SchedulerView, waiting: np.ndarray) -> np.ndarray:
        ranks = self.ranks(engine, waiting)
        placement = engine.placement
        compact = (ranks < self.compact_below).tolist()
        for job, hinted in zip(waiting.tolist(), compact):
            wanted = COMPACT if hinted else None
            if placement[job] != wanted:  # most jobs keep their hint from pass to pass
                engine.hint(job, wanted)
        return popularity_key(ranks, waiting.size)
