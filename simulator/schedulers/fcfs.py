"""First Come First Serve: arrival order, no backfilling (003 §5.1.1)."""

from __future__ import annotations

from cosched.simulator.schedulers.base import QueueScheduler

__all__ = ["FCFS"]


class FCFS(QueueScheduler):
    """Start jobs in arrival order; the first job that does not fit blocks the queue."""

    name = "fcfs"
    backfill = "none"
