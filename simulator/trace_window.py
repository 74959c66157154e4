"""A time window on a trace: the jobs simulated and the jobs measured.

Rule ``submitted-in-window`` (`WINDOW_RULE`): with ``--from A --to B`` a job counts in the metrics
if and only if its submit time t is in [A, B). Jobs submitted in [A - warm-up, A) and
[B, B + cool-down) are simulated too, so that the measured jobs meet a loaded machine at the start
and keep it loaded at the end, but every metric (waits, slowdowns, makespan, utilization) is
computed over the measured jobs alone. Other jobs of the trace are not simulated.

Times are seconds on the trace's clock (SWF submit times: seconds from the log's start), or dates
``YYYY-MM-DD[THH:MM[:SS]]`` read in the trace's time zone (SWF header ``TimeZoneString``, UTC when
absent) and placed on that clock by the header's ``UnixStartTime``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from datetime import datetime, timezone

import numpy as np

from cosched.errors import InputError

__all__ = ["TraceWindow", "WINDOW_RULE", "trace_time", "measured_result"]

WINDOW_RULE = "submitted-in-window"


@dataclass(frozen=True)
class TraceWindow:
    """The measured window [start, stop) and the simulated margins before and after it."""

    start: float = -math.inf
    stop: float = math.inf
    warmup: float = 0.0
    cooldown: float = 0.0

    def __post_init__(self):
        if not self.start < self.stop:
            raise InputError(
                f"the window is empty: --from {self.start:g} is not before --to {self.stop:g}",
                field="--to",
            )
        for name, value in (("--warmup", self.warmup), ("--cooldown", self.cooldown)):
            if not value >= 0 or math.isinf(value):
                raise InputError(
                    f"must be a non-negative number of seconds, got {value}", field=name
                )

    def simulated(self, submit: np.ndarray) -> np.ndarray:
        """Mask of the jobs simulated: submitted in [start - warmup, stop + cooldown)."""
        return (submit >= self.start - self.warmup) & (submit < self.stop + self.cooldown)

    def measured(self, submit: np.ndarray) -> np.ndarray:
        """Mask of the jobs measured: submitted in [start, stop) (`WINDOW_RULE`)."""
        return (submit >= self.start) & (submit < self.stop)

    def cut(self, workload):
        """The simulated jobs of `workload`; InputError when the window measures none."""
        if not self.measured(workload.submit).any():
            raise InputError(
                "no job is submitted in the window [--from, --to)", source=workload.source or None
            )
        kept = workload.take(np.flatnonzero(self.simulated(workload.submit)))
        return replace(kept, cleaning={**workload.cleaning, "jobs": len(kept)})

    def to_dict(self, workload) -> dict:
        """The window, its rule and its job counts, for summary.json."""
        return {
            "from": None if math.isinf(self.start) else self.start,
            "to": None if math.isinf(self.stop) else self.stop,
            "warmup": self.warmup,
            "cooldown": self.cooldown,
            "rule": WINDOW_RULE,
            "simulated_jobs": len(workload),
            "measured_jobs": int(self.measured(workload.submit).sum()),
        }


def trace_time(text: str, header: dict, flag: str) -> float:
    """Seconds on the trace's clock from `text`: a number of seconds, or a date (module
    docstring)."""
    try:
        value = float(text)
    except ValueError:
        pass
    else:
        if not math.isfinite(value):
            raise InputError(f"not a finite time: {text!r}", field=flag)
        return value
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise InputError(
            f"neither seconds nor a date YYYY-MM-DD[THH:MM[:SS]]: {text!r}", field=flag
        ) from None
    origin = header.get("UnixStartTime")
    if origin is None:
        raise InputError(
            f"a date needs the trace's UnixStartTime (SWF header); give seconds instead: {text!r}",
            field=flag,
        )
    try:
        origin = float(origin)
    except ValueError:
        raise InputError(f"UnixStartTime is no number: {origin!r}", field=flag) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=_zone(header.get("TimeZoneString"), flag))
    return moment.timestamp() - origin


def _zone(name: str | None, flag: str):
    """The trace's time zone (UTC when the header names none)."""
    if not name:
        return timezone.utc
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise InputError(
            f"unknown time zone {name!r} in the trace's TimeZoneString; give seconds instead",
            field=flag,
        ) from None


def measured_result(result, window: TraceWindow | None):
    """The run restricted to its measured jobs (`WINDOW_RULE`): every metric is computed on it."""
    if window is None:
        return result
    keep = np.flatnonzero(window.measured(result.workload.submit))
    return replace(
        result,
        workload=result.workload.take(keep),
        start=result.start[keep],
        end=result.end[keep],
        nodes=[result.nodes[i] for i in keep.tolist()],
        lifecycle=None,
    )
