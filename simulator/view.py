"""What a scheduler, a mechanism or an event source may use of the engine: a typed, read-only view
plus the engine's checked actions.

The engine (`cosched.simulator.engine.Engine`) satisfies `SchedulerView`; schedulers receive the
engine itself, so nothing is copied, but they must read only what is listed here and change the
state only through the actions. Two tests keep it so: every attribute a
built-in scheduler, mechanism or failure source reads on the engine is in this list
(tests/simulator/test_scheduler_view.py), and no module besides the engine and the allocators reads
the allocators' arrays or the engine's private members (tests/package/test_layering.py).

Lists are indexed by job (workload order) and must not be modified. Times are seconds; work is in
seconds of the job's compact run at its requested size (checkpoint writes included).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Protocol, runtime_checkable

import numpy as np

__all__ = ["SchedulerView", "VIEW_MEMBERS"]


@runtime_checkable
class SchedulerView(Protocol):
    """The engine as a scheduler sees it (state documented in `cosched.simulator.engine`)."""

    # --- state (read-only)
    # ----------------------------------------------------------------------------
    now: float
    waiting: OrderedDict  # job -> None, queue order
    running: dict  # job -> None, start order
    state: list  # per job: an index into engine.STATES
    submit: list
    run_time: list
    cores: list
    estimate: list
    first_start: list
    started: list  # when the current (or last) run began
    end: list
    allocation: list  # per job: an Allocation (nodes, cores) or None
    held: list  # allocator units per running job
    speed: list
    rate: list
    work: list
    remaining: list  # work left at `updated`
    updated: (
        list  # when `remaining` was last brought up to date (after a setup: when progress resumes)
    )
    version: list  # bumped whenever a job's completion is re-posted or cancelled
    checkpoints: list  # periodic checkpoints kept, an exact count
    lost: list
    lost_setup: list
    preemptions: list
    predicted_end: list
    queued_duration: list  # per waiting job: predicted run time if started now
    by_end: list  # running jobs as sorted (predicted_end, job)
    placement: list
    models: list | None
    units_table: list | None
    waiting_units: list | None  # units of the waiting jobs, ascending (with units_table only)
    reservations: dict
    changes: int  # changes a pass can see, arrivals excepted (starts, ends, rates, events, ...)
    platform: object
    workload: object
    scheduler: object

    # --- accessors
    # --------------------------------------------------------------------------------------
    def work_done(self, job: int) -> float: ...
    def checkpointed_work(self, job: int) -> float: ...
    def predicted_duration(self, job: int) -> float: ...
    def model(self, job: int): ...
    def requested_nodes(self, job: int) -> int: ...
    def node_occupants(self, nodes: np.ndarray | None = None) -> np.ndarray: ...
    def neighbours(self, job: int) -> list[int]: ...
    def occupant(self, node: int) -> int: ...
    def is_reserved(self, node: int) -> bool: ...
    def reservation_of(self, node: int): ...
    def is_idle(self, nodes: np.ndarray) -> np.ndarray: ...
    def idle_nodes(self, limit: int | None = None) -> np.ndarray: ...
    def free_nodes(self) -> int: ...

    # --- actions (checked: a wrong one raises ActionError)
    # ---------------------------------------------
    def start(
        self, job: int, nodes=None, placement: str | None = None, reason: str = ""
    ) -> bool: ...
    def resize(self, job: int, nodes: int, release=None, reason: str = "") -> bool: ...
    def preempt(self, job: int, reason: str = "") -> None: ...
    def kill(self, job: int, reason: str = "") -> None: ...
    def reserve(self, nodes, reason: str = ""): ...
    def release(self, reservation, reason: str = "") -> None: ...
    def revoke(self, node: int, reason: str = ""): ...
    def hint(self, job: int, placement: str | None) -> None: ...
    def request_wakeup(self, when: float) -> None: ...
    def at(self, when: float, callback: Callable) -> None: ...
    def note(self, action: str, job: int, reason: str = "") -> None: ...


# the names a built-in scheduler, mechanism or event source may use on the engine; `allocator` is
# there for its documented interface (free_units, units, find, total_units), never its node arrays
VIEW_MEMBERS = frozenset(
    name
    for klass in SchedulerView.__mro__
    if klass is not object
    for name in (*getattr(klass, "__annotations__", {}), *vars(klass))
    if not name.startswith("_")
) | {"allocator", "speed_model", "set_speed", "STATES"}
