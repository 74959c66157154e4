"""Size-ordered queues with EASY backfilling: Shortest and Longest Job First (003 §5.1.4, §5.1.5).

The key is the job's estimate (the run time with ``use_run_times``, as the thesis assumes known run
times). A job's estimate never changes, so both declare a fixed priority: the waiting jobs are kept
in its order as they arrive (`QueueScheduler.fixed_priority`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from cosched.simulator.schedulers.base import QueueScheduler
from cosched.simulator.schedulers.co_ordering import ljf_key, sjf_key

if TYPE_CHECKING:
    from cosched.simulator.view import SchedulerView

__all__ = ["SJF", "LJF"]


class SJF(QueueScheduler):
    """Shortest estimate first, EASY backfilling."""

    name = "sjf"
    backfill = "easy"
    priority_reads_time = False
    fixed_priority = True

    def priority(self, engine: SchedulerView, waiting: np.ndarray) -> np.ndarray:
        return sjf_key(self.estimate[waiting])


class LJF(QueueScheduler):
    """Longest estimate first, EASY backfilling."""

    name = "ljf"
    backfill = "easy"
    priority_reads_time = False
    fixed_priority = True

    def priority(self, engine: SchedulerView, waiting: np.ndarray) -> np.ndarray:
        return ljf_key(self.estimate[waiting])
