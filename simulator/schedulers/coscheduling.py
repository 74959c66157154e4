"""Co-schedulers that reorder the queue by job size: EASY-Co, SJF-Co, LJF-Co, LAF-Co
(003 §5.2.1-5.2.4).

A co-scheduler is a queue scheduler that asks for the co-location allocator and the heatmap speed
model (``cosched.simulator.colocation``): jobs are spread over twice the nodes with half-socket
binding and progress at the heatmap speedups of their neighbours. A subclass only sets ``priority``.
All use EASY backfilling; the reservation goes to the first job of the sorted queue that does not
fit (``reserve="head"``) or, as in ELiSE, to the oldest waiting job, with the backfill candidates in
arrival order (``"oldest"``). The size keys of SJF-Co, LJF-Co and LAF-Co never change, so the
waiting jobs are kept in their order as they arrive (``QueueScheduler.fixed_priority``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from cosched.errors import InputError
from cosched.simulator.colocation import MISSING_PAIRS, CoLocationAllocator, co_context
from cosched.simulator.schedulers.backfilling import (
    easy_pass,
    queue_heads,
    queue_slice,
    start_in_order,
)
from cosched.simulator.schedulers.base import DEFAULT_DEPTH, QueueScheduler, _is_base_hook
from cosched.simulator.schedulers.co_ordering import laf_key, ljf_key, sjf_key

if TYPE_CHECKING:
    from cosched.simulator.platform import Platform
    from cosched.simulator.view import SchedulerView
    from cosched.simulator.workload import Workload

__all__ = ["CoScheduler", "EasyCo", "SJFCo", "LJFCo", "LAFCo", "RESERVATIONS"]

RESERVATIONS = (
    "head",
    "oldest",
)  # who holds the EASY reservation: the sorted head, or the oldest job (ELiSE)


class CoScheduler(QueueScheduler):
    """EASY backfilling over a queue sorted by descending ``priority``, co-located on heatmap
    speeds.

    The remaining time of a waiting job is its estimate (its run time with ``use_run_times``, as the
    thesis assumes known run times, 003 §5.1.4).
    """

    name = "easy-co"
    backfill = "easy"
    co_located = True
    OPTIONS: tuple[str, ...] = QueueScheduler.OPTIONS + ("missing_pair", "reserve")

    def __init__(
        self,
        backfill: str | None = None,
        depth: int = DEFAULT_DEPTH,
        record_reservations: bool = False,
        missing_pair: str = "default",
        reserve: str = "head",
    ) -> None:
        super().__init__(backfill, depth, record_reservations)
        if missing_pair not in MISSING_PAIRS:
            raise InputError(
                f"unknown missing-pair rule {missing_pair!r}; choose from {MISSING_PAIRS}",
                field="missing_pair",
            )
        if reserve not in RESERVATIONS:
            raise InputError(
                f"unknown reservation rule {reserve!r}; choose from {RESERVATIONS}", field="reserve"
            )
        self.missing_pair, self.reserve = missing_pair, reserve
        # ELiSE's pass set on the object where it differs: the others keep the base's compiled pass
        oldest = reserve == "oldest" and self.backfill == "easy" and self.priority is not None
        if oldest and _is_base_hook(self, "scheduling_pass"):
            self.scheduling_pass = self._pass_reserving_for_the_oldest  # type: ignore[method-assign]

    def make_allocator(
        self, platform: Platform, placement: str | None = None
    ) -> CoLocationAllocator:
        return CoLocationAllocator(platform, placement or "idle")

    def make_speed_model(
        self, workload: Workload, heatmap: Any = None, spread_speedup: float | str | None = None
    ) -> Any:
        return co_context(workload, heatmap, spread_speedup, self.missing_pair).speed_model()

    def _pass_reserving_for_the_oldest(self, engine: SchedulerView) -> None:
        """The pass with ``reserve="oldest"``, EASY backfilling and a priority: sorted in-order
        pass, then the EASY pass in arrival order."""
        queue = engine.queue
        # 000 Algorithm 2: one sorted copy of the queue per pass
        start_in_order(engine, self.order(engine))
        # the oldest waiting jobs that fit start, then the oldest one left holds the reservation
        if start_in_order(engine, queue_heads(queue)) is not None and self.depth:
            easy_pass(engine, queue_slice(queue, 0, self.depth + 1), self.reservations)


class EasyCo(CoScheduler):
    """Arrival order, EASY backfilling, co-located (003 §5.2.1)."""

    name = "easy-co"


class SJFCo(CoScheduler):
    """Shortest remaining time first (003 appendix: -remaining_time)."""

    name = "sjf-co"
    priority_reads_time = False
    fixed_priority = True

    def priority(self, engine: SchedulerView, waiting: np.ndarray) -> np.ndarray:
        return sjf_key(self.estimate[waiting])


class LJFCo(CoScheduler):
    """Longest remaining time first (003 appendix: remaining_time)."""

    name = "ljf-co"
    priority_reads_time = False
    fixed_priority = True

    def priority(self, engine: SchedulerView, waiting: np.ndarray) -> np.ndarray:
        return ljf_key(self.estimate[waiting])


class LAFCo(CoScheduler):
    """Largest area first: processes x remaining time (003 appendix)."""

    name = "laf-co"
    priority_reads_time = False
    fixed_priority = True

    def priority(self, engine: SchedulerView, waiting: np.ndarray) -> np.ndarray:
        return laf_key(self.cores[waiting], self.estimate[waiting])
