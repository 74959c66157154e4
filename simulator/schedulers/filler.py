"""Filler and the two-factor co-schedulers SJF-Filler and Pop-Filler (003 §5.2.6-5.2.7; 000
Algorithm 2).

Filler sorts by factor0 / factor1: how exactly a job fills the free cores, over its arrival index
(thesis version, see ``co_ordering``). The two-factor variants add factor0 and the job's position in
a copy of the queue sorted by remaining time (SJF-Filler) or popularity rank (Pop-Filler). All use
EASY backfilling on the co-location allocator. The job id of the formulas is the job's arrival
index.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from cosched.simulator.schedulers.co_ordering import (
    FillerOrder,
    filler_key,
    sjf_key,
    two_factor_key,
)
from cosched.simulator.schedulers.coscheduling import CoScheduler
from cosched.simulator.schedulers.popularity import Popularity

if TYPE_CHECKING:
    from cosched.simulator.view import SchedulerView

__all__ = ["Filler", "SJFFiller", "PopFiller"]


class Filler(CoScheduler):
    """factor0 / factor1 (003 appendix, Filler)."""

    name = "filler"
    priority_reads_time = False

    def priority(self, engine: SchedulerView, waiting: np.ndarray) -> np.ndarray:
        return filler_key(waiting, self.cores[waiting], engine.free_cores())

    def attach(self, engine: SchedulerView) -> None:
        super().attach(engine)
        own_key = type(self).priority is Filler.priority  # else a subclass's: the general sort
        self._ordering = FillerOrder(self.cores.tolist(), engine) if own_key else None


class SJFFiller(CoScheduler):
    """factor0 + position in the queue copy sorted by remaining time (003 appendix, SJF-Filler)."""

    name = "sjf-filler"
    priority_reads_time = False

    def priority(self, engine: SchedulerView, waiting: np.ndarray) -> np.ndarray:
        # 003 appendix: second_queue_reorder = remaining_time, sorted like the waiting queue
        # (descending)
        return two_factor_key(
            self.cores[waiting], engine.free_cores(), -sjf_key(self.estimate[waiting])
        )


class PopFiller(Popularity):
    """factor0 + position in the queue copy sorted by popularity rank (003 appendix, Pop-Filler).

    Unlike Popularity, every job is deployed spread (the thesis names compact deployment only for
    Popularity).
    """

    name = "pop-filler"
    hints_placements = False  # every job spread: its priority hints nothing

    def priority(self, engine: SchedulerView, waiting: np.ndarray) -> np.ndarray:
        return two_factor_key(self.cores[waiting], engine.free_cores(), self.ranks(engine, waiting))
