"""EASY (aggressive) and Conservative backfilling over the arrival order (003 §5.1.2, §5.1.3)."""

from __future__ import annotations

from cosched.simulator.schedulers.base import QueueScheduler

__all__ = ["EASY", "Conservative"]


class EASY(QueueScheduler):
    """FCFS order; only the head holds a reservation; later jobs backfill without delaying it."""

    name = "easy"
    backfill = "easy"


class Conservative(QueueScheduler):
    """FCFS order; every waiting job (within depth) holds a reservation and none is delayed."""

    name = "conservative"
    backfill = "conservative"
