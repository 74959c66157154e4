"""EASY (aggressive) and Conservative backfilling over the arrival order (003 §5.1.2, §5.1.3)."""

from __future__ import annotations

from cosched.simulator.schedulers.base import QueueScheduler

__all__ = ["EASY", "Conservative"]


class EASY(QueueScheduler):
    """FCFS order; only the head holds a reservation; later jobs backfill without delaying it.

    Variants (options): `shadow_extra` ("first": the units of the running jobs up to the one whose
    end lets the head fit; "all": of every job ending at the shadow time) and `queued_durations`
    ("estimate", or "run": waiting jobs predicted to last their run time). `compat.COMPAT` names
    the combinations that reproduce other simulators."""

    name = "easy"
    backfill = "easy"
    OPTIONS = QueueScheduler.OPTIONS + ("shadow_extra", "queued_durations")


class Conservative(QueueScheduler):
    """FCFS order; every waiting job (within depth) holds a reservation and none is delayed."""

    name = "conservative"
    backfill = "conservative"
