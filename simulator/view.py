"""What a scheduler, a mechanism, an event source or a speed model sees of a simulation: a frozen,
typed view of the engine's state and the engine's checked actions.

The engine builds one `SchedulerView` per run and passes it to every hook (``attach``,
``schedule``, ``on_arrival``, ``on_finish``, ``on_preempt``, ``on_revoke``), to event sources and
their timed callbacks (``at``), and to the speed model. Nothing reaches the engine object or its
allocator, but the deprecated members of the old interface (`_ENGINE_ONLY`, with a warning).

Why one object for reading and acting: the hooks keep their one argument (``schedule(engine)``
plug-ins written before the view run unchanged), and every action is the engine's own bound method,
so acting costs no extra call; the actions are still a closed list (`ACTIONS`), checked by the
engine (a wrong one raises `ActionError` naming the job).

Read-only, at list speed:

- attributes cannot be assigned (``AttributeError``);
- the running jobs and reservations are `types.MappingProxyType` over the engine's dicts, so item
  assignment raises ``TypeError``; iterating them walks the dicts themselves (``waiting``: below);
- per-job data fixed for the run (``submit``, ``run_time``, ``cores``, ``estimate``, ``work``,
  ``models``) are tuples;
- per-job state the engine updates as it runs (``state``, ``predicted_end``, ``held``,
  ``allocation``, ``by_end``, ``units_table``, ...) is a `ReadOnlyColumn` over
  the engine's own list (an ``array('d')`` for the times: ``first_start``, ``started``, ``end``,
  ``remaining``, ``updated``, ``predicted_end``): it reads, iterates, slices and searches as the
  list does and sees every change, and item assignment or deletion raises ``TypeError``. The engine
  keeps writing its plain lists and arrays, so its writes cost nothing; a read goes through no
  Python code: compiled, the column is an extension type; in plain Python, each column's class
  takes the list's own bound C methods as its reading methods (docs/benchmarks.md, "A read-only
  view at list speed", gives the measurements);
- ``queue`` (the waiting jobs in queue order) and ``waiting_units`` (their units, ascending) are a
  `SortedColumn`, read as such a column (indexed and sliced as a list), which the engine changes
  without shifting the whole queue at each start; ``waiting`` is the same queue as a read-only
  mapping (`WaitingJobs`), so the engine keeps its waiting jobs once.

Lists are indexed by job (workload order). Times are seconds; work is in seconds of the job's
compact run at its requested size (checkpoint writes included).
"""

from __future__ import annotations

import warnings
from array import array
from collections.abc import (
    Callable,
    ItemsView,
    Iterator,
    KeysView,
    Mapping,
    Sequence,
    ValuesView,
)
from dataclasses import dataclass
from functools import partial
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol, cast

try:  # Cython's pure-Python mode: the column type below compiles to C, and is a plain class here
    import cython

    if not cython.compiled:  # plain Python: the light stand-in, not Cython's slower shadow
        raise ModuleNotFoundError
except ModuleNotFoundError:
    from cosched import _pure_cython as cython

if cython.compiled:  # `remove_sorted` moves a list's references with C's memmove
    from cython.cimports.cpython.ref import Py_DECREF, Py_INCREF
    from cython.cimports.cpython.sequence import PySequence_Fast_ITEMS
    from cython.cimports.libc.string import memmove

import numpy as np

from cosched.simulator.allocators import _Units
from cosched.simulator.bisection import EndOrder, int_position
from cosched.simulator.jobs import STATES

if TYPE_CHECKING:
    from cosched.simulator.allocators import Allocation, Eligibility
    from cosched.simulator.jobs import JobModel
    from cosched.simulator.platform import Platform
    from cosched.simulator.workload import Workload

__all__ = [
    "SchedulerView",
    "ReadOnlyColumn",
    "SortedColumn",
    "WaitingJobs",
    "read_only",
    "column_items",
    "insert_sorted",
    "remove_sorted",
    "Clock",
    "engine_clock",
    "Starter",
    "SchedulingPass",
    "scheduler_hook",
    "scheduling_pass_of",
    "VIEW_MEMBERS",
    "ACTIONS",
]

ACTIONS = (
    "start",
    "resize",
    "preempt",
    "kill",
    "reserve",
    "release",
    "revoke",
    "hint",
    "request_wakeup",
    "at",
    "note",
    "set_speed",
)
"""The actions: every change a scheduler, mechanism, event source or speed model may make."""


class _Start(Protocol):
    def __call__(
        self, job: int, nodes: Any = None, placement: str | None = None, reason: str = ""
    ) -> bool: ...


class _Resize(Protocol):
    def __call__(self, job: int, nodes: int, release: Any = None, reason: str = "") -> bool: ...


class _JobAction(Protocol):
    def __call__(self, job: int, reason: str = "") -> None: ...


class _Reserve(Protocol):
    def __call__(self, nodes: Any, reason: str = "") -> Any: ...


class _Release(Protocol):
    def __call__(self, reservation: Any, reason: str = "") -> None: ...


class _Revoke(Protocol):
    def __call__(self, node: int, reason: str = "") -> Any: ...


class _Note(Protocol):
    def __call__(self, action: str, job: int, reason: str = "") -> None: ...


class _Occupants(Protocol):
    def __call__(self, nodes: np.ndarray | None = None) -> np.ndarray: ...


class _IdleNodes(Protocol):
    def __call__(self, limit: int | None = None) -> np.ndarray: ...


@cython.cclass
class ReadOnlyColumn:
    """One column of per-job state the engine updates (a list it owns, or an ``array('d')`` of
    times), read-only: reads, iteration, slices (copies), ``len``, ``in``, ``index`` and ``count``
    as on the list, live;
    item assignment and deletion raise ``TypeError``. Built by `read_only`.

    Compiled, its two fields are C fields declared in ``view.pxd``, invisible to Python: the
    compiled built-in passes (which cimport that file) read the list itself, plug-ins only through
    these methods."""

    def __init__(self, items: list | array | EndOrder, name: str) -> None:
        self._items = items
        self._name = name

    def __getitem__(self, index: Any) -> Any:
        return self._items[index]

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[Any]:
        return iter(self._items)

    def __reversed__(self) -> Iterator[Any]:
        return reversed(self._items)

    def __contains__(self, value: object) -> bool:
        return value in self._items

    def index(self, value: object, *bounds: int) -> int:
        """The first position of `value` (within ``start, stop``), as `list.index`."""
        return self._items.index(value, *bounds)

    def count(self, value: object) -> int:
        """How many items equal `value`."""
        return self._items.count(value)

    def __eq__(self, other: object) -> bool:
        # the column itself: equal, NaNs included (an array compares new floats item by item)
        return self._items is other or self._items == other  # another column: the reflected one

    def __repr__(self) -> str:
        return f"ReadOnlyColumn({self._name}, {self._items!r})"

    def __setitem__(self, index: Any, value: object) -> None:
        _refuse(self._name, index)

    def __delitem__(self, index: Any) -> None:
        _refuse(self._name, index)


def _refuse(name: str, index: Any) -> None:
    raise TypeError(
        f"the scheduler's view is read-only (cannot change {name}[{index!r}]); change the state "
        f"through its actions: {', '.join(ACTIONS)}"
    )


# a value moved into or out of the gap costs about as much as this many moved by a list's own
# insertion or deletion (a slice copied and assigned, against one memmove)
GAP_MOVE_COST = cython.declare(cython.Py_ssize_t, 8)
# stale places a column keeps in its gap at least: dropping the gap costs a slice deletion, so a
# short queue whose head starts at each arrival drops it once per this many starts, not at each
GAP_KEPT = cython.declare(cython.Py_ssize_t, 32)


@cython.cclass
class SortedColumn:
    """An ascending column the engine keeps (the waiting jobs, `queue`; their units,
    `waiting_units`), read-only as a `ReadOnlyColumn`: reads, slices (lists), ``len``, ``in``,
    ``index`` and ``count`` as on a list, live; iteration walks the column as it was when it began;
    item assignment and deletion raise ``TypeError``. Only the engine changes it (`insert_sorted`,
    `remove_sorted`).

    The values are ``_items[_head:]``, after a gap: a value enters or leaves by moving the values on
    its shorter side one place, into or out of the gap, not always the thousands above it as a
    list's insertion or deletion does (a pass starts jobs among the first of a long queue).
    Compiled, the fields are C fields (view.pxd) that the compiled passes read and plug-ins cannot
    see.

    A `counted` column (of small integers, many equal: `waiting_units`) keeps a count per value
    instead (`_counts`, `_size`): an edit changes one count where a sorted list is searched and
    shifted; its ``_items`` is ``[the smallest value]`` (0 when empty), which the compiled passes
    read as a column's head, and the reads expand the counts."""

    def __init__(self, name: str, counted: bool = False) -> None:
        self._items: list = [0] if counted else []
        self._head = 0  # the gap: _items[:_head] are stale
        self._name = name
        self._counts: list[int] | None = [] if counted else None
        self._size = 0

    def _values(self) -> list[Any]:
        """The values, ascending (a new list)."""
        counts = self._counts
        if counts is None:
            return self._items[self._head :]
        return [value for value, count in enumerate(counts) for _ in range(count)]

    @cython.locals(items=list, head=cython.Py_ssize_t, position=cython.Py_ssize_t)
    def __getitem__(self, index: Any) -> Any:
        if self._counts is not None:
            return self._values()[index]
        items, head = self._items, self._head
        if isinstance(index, slice):
            if index.step is None:
                start, stop, _ = index.indices(len(items) - head)
                return items[head + start : head + stop]
            return items[head:][index]
        position = index  # (compiled: a C integer, the item read with no Python arithmetic)
        if position < 0:
            position += len(items) - head
            if position < 0:
                raise IndexError(f"{self._name} index out of range")
        return items[head + position]

    def __len__(self) -> int:
        return len(self._items) - self._head if self._counts is None else self._size

    def __iter__(self) -> Iterator[Any]:
        return iter(self._values())

    def __reversed__(self) -> Iterator[Any]:
        return reversed(self._values())

    def __contains__(self, value: object) -> bool:
        return value in self._values()

    def index(self, value: object, *bounds: int) -> int:
        """The first position of `value` (within ``start, stop``), as `list.index`."""
        return self._values().index(value, *bounds)

    def count(self, value: object) -> int:
        """How many items equal `value`."""
        return self._values().count(value)

    def __eq__(self, other: object) -> bool:
        return self._values() == other  # another column answers the reflected one

    def __repr__(self) -> str:
        return f"SortedColumn({self._name}, {self._values()!r})"

    def __setitem__(self, index: Any, value: object) -> None:
        _refuse(self._name, index)

    def __delitem__(self, index: Any) -> None:
        _refuse(self._name, index)


@cython.cfunc
@cython.inline
@cython.locals(items=list, value=cython.Py_ssize_t, head=cython.Py_ssize_t, end=cython.Py_ssize_t)
@cython.locals(near=cython.Py_ssize_t)
@cython.returns(cython.Py_ssize_t)
def _equals_from(items: list[int], value: int, head: int, end: int) -> int:
    """Where the run of `value`'s equals ending at `end` (exclusive) begins in ``items[head:end]``:
    `end` itself, with no search, when ``items[end - 1]`` is not `value`."""
    near = items[end - 1]  # (compiled: read as a C integer)
    return end if near != value else int_position(items, value, head, end, False)


@cython.cfunc
@cython.inline
@cython.boundscheck(False)  # the counts reach past every value held (extended first)
@cython.wraparound(False)
@cython.locals(column=SortedColumn, value=cython.Py_ssize_t, step=cython.Py_ssize_t, counts=list)
@cython.locals(items=list, smallest=cython.Py_ssize_t, count=cython.Py_ssize_t)
def _count(column: SortedColumn, counts: list[int], value: int, step: int) -> None:
    """One `value` enters (`step` 1) or leaves (-1) a counted column (its `counts`); its smallest
    follows."""
    items = column._items
    if value >= len(counts):  # a value above all before (the first, or a hint's new units)
        counts.extend([0] * (value + 1 - len(counts)))
    count = counts[value]  # (compiled: read as a C integer, added in C)
    count += step
    counts[value] = count
    column._size += step
    smallest = items[0]  # (compiled: read as a C integer)
    if step > 0:
        if value < smallest or column._size == 1:
            items[0] = value
    elif value == smallest and not count:  # the last of the smallest left
        if column._size:
            count = 0
            while not count:  # up to the next value held: there is one above
                smallest += 1
                count = counts[smallest]
        else:
            smallest = 0
        items[0] = smallest


@cython.ccall
@cython.locals(
    column=SortedColumn,
    value=cython.Py_ssize_t,
    counts=list,
    items=list,
    head=cython.Py_ssize_t,
    size=cython.Py_ssize_t,
    near=cython.Py_ssize_t,
    first=cython.Py_ssize_t,
    after=cython.Py_ssize_t,
)
def insert_sorted(column: SortedColumn, value: int) -> None:
    """The engine's: `value` enters `column` at its place (after its equals, or before them into
    the gap when moving the values below costs less: `GAP_MOVE_COST`), as `bisect.insort` does."""
    counts = column._counts
    if counts is not None:
        _count(column, counts, value, 1)
        return
    items, head, size = column._items, column._head, len(column._items)
    near = items[size - 1] if size > head else value  # (compiled: each read as a C integer)
    if near <= value:  # an arrival: the highest job index
        items.append(value)
        return
    near = items[head]
    if head and value <= near:  # the lowest: into the gap, nothing moves
        items[head - 1] = value
        column._head = head - 1
        return
    after = int_position(items, value, head, size, True)
    if head:
        first = _equals_from(items, value, head, after)
        if (first - head) * GAP_MOVE_COST < size - after:  # those below move into the gap
            items[head - 1 : first - 1] = items[head:first]
            items[first - 1] = value
            column._head = head - 1
            return
    items.insert(after, value)


@cython.ccall
@cython.boundscheck(False)  # every position read or written lies between the head and the value
@cython.wraparound(False)
@cython.locals(
    column=SortedColumn,
    value=cython.Py_ssize_t,
    counts=list,
    items=list,
    head=cython.Py_ssize_t,
    size=cython.Py_ssize_t,
    near=cython.Py_ssize_t,
    first=cython.Py_ssize_t,
    last=cython.Py_ssize_t,
)
def remove_sorted(column: SortedColumn, value: int) -> None:
    """The engine's: one `value` (in `column`) leaves it, the values on its cheaper side moving
    one place (`GAP_MOVE_COST`; those below it into the gap: a start near the head of the queue
    moves a few jobs, not the queue)."""
    counts = column._counts
    if counts is not None:
        _count(column, counts, value, -1)
        return
    items, head, size = column._items, column._head, len(column._items)
    near = items[head]  # (compiled: each value read as a C integer)
    if near != value:  # else the lowest leaves: nothing moves (a start at the queue's head)
        last = int_position(items, value, head, size, True) - 1
        first = _equals_from(items, value, head, last)
        if (first - head) * GAP_MOVE_COST >= size - 1 - last:
            items.pop(last)  # (compiled: one memmove, where del assigns a slice)
            return
        if cython.compiled:  # the references below move as they are: one memmove, no count
            Py_DECREF(items[first])  # the leaving value's reference, its place written over
            memmove(
                PySequence_Fast_ITEMS(items) + head + 1,
                PySequence_Fast_ITEMS(items) + head,
                (first - head) * cython.sizeof(cython.p_void),
            )
            Py_INCREF(items[head])  # now at `head` and `head + 1`: the gap's place holds its own
        else:
            items[head + 1 : first + 1] = items[head:first]
    head += 1
    if 2 * head > size and head >= GAP_KEPT:  # the gap outgrew the values: drop it
        del items[:head]
        head = 0
    column._head = head


@cython.cclass
class WaitingJobs:
    """The engine's queue (a `SortedColumn` of job indices) as a read-only mapping job -> None in
    queue order: ``in`` (a binary search), ``len``, iteration (over the queue as it was when it
    began), ``[job]``, ``get``, ``keys``, ``values`` and ``items``; item assignment and deletion
    raise ``TypeError``."""

    _queue = cython.declare(SortedColumn)

    def __init__(self, queue: SortedColumn) -> None:
        self._queue = queue

    @cython.locals(queue=SortedColumn, items=list, value=cython.Py_ssize_t, at=cython.Py_ssize_t)
    def __contains__(self, job: object) -> bool:
        if not isinstance(job, (int, np.integer)):
            return False
        queue, value = self._queue, int(job)
        items = queue._items
        at = int_position(items, value, queue._head, len(items), False)
        return at < len(items) and items[at] == value

    def __getitem__(self, job: int) -> None:
        if job not in self:
            raise KeyError(job)

    def get(self, job: int, default: object = None) -> object:
        """None if `job` waits, else `default`."""
        return None if job in self else default

    def __len__(self) -> int:
        return len(self._queue)

    def __iter__(self) -> Iterator[int]:
        return iter(self._queue)

    def keys(self) -> KeysView[int]:
        """The waiting jobs, in queue order."""
        return KeysView(self)

    def values(self) -> ValuesView[None]:
        """None per waiting job."""
        return ValuesView(self)

    def items(self) -> ItemsView[int, None]:
        """(job, None) per waiting job, in queue order."""
        return ItemsView(self)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Mapping) and dict(self.items()) == dict(other.items())

    def __repr__(self) -> str:
        return f"WaitingJobs({list(self)!r})"

    def __setitem__(self, job: int, value: object) -> None:
        _refuse("waiting", job)

    def __delitem__(self, job: int) -> None:
        _refuse("waiting", job)


@cython.cclass
class Clock:
    """The simulated time and the count of changes (`SchedulerView.now`, ``changes``) as C fields
    (view.pxd): the engine's loop state extends it, so a compiled pass reads them at C level
    (`engine_clock`) where the view's properties cost Python calls."""

    now: float
    changes: int
    requeues: int  # jobs that entered the queue again (preempted, or hinted new units)

    @cython.ccall
    def start(self, job: int, nodes: Any = None, placement: Any = None, reason: str = "") -> bool:
        """The engine's `start` (`SchedulerView.start`), which a compiled pass calls in C: the
        engine's loop state overrides it (declared here, as this module cannot import the engine);
        a clock without an engine has no job to start and refuses."""
        raise TypeError(
            f"{type(self).__name__} has no engine: only the engine's loop state starts jobs"
        )


def _engine_behind(view: Any) -> Any:
    """The engine whose own view `view` is, else None (a view of one partition, a test's view)."""
    return view._engine if isinstance(view, SchedulerView) else None


def _inherits(allocator: Any, base: type, method: str) -> bool:
    """True if `allocator` is a `base` whose `method` is `base`'s own, not a subclass's override
    (read from the class's namespace, as Python sees it): then a pass may read `base`'s fields in C
    instead of calling the method."""
    return isinstance(allocator, base) and getattr(type(allocator), method) is vars(base)[method]


def engine_clock(view: Any) -> Clock | None:
    """The engine's `Clock` behind `view` when it is the engine's own view, else None (a view of
    one partition sets its own ``now``)."""
    engine = _engine_behind(view)
    return engine if isinstance(engine, Clock) else None


@cython.cclass
class Starter:
    """What a pass calls at each start, one per pass and view: `start_chosen` (``view.start(job)``)
    and `units_free` (``view.free_units()``), C methods when compiled; on the engine's view with
    a built-in allocator (`allocators._Units`), the free units are its count read in C; on the
    engine's own view, a start is the engine's `Clock.start` called in C (an override in Python is
    called through it)."""

    def __init__(self, view: Any) -> None:
        self._start, self._free_units = view.start, view.free_units
        self._clock = engine_clock(view) if cython.compiled else None  # plain: `_start` as fast
        allocator = getattr(_engine_behind(view), "allocator", None)
        # a built-in allocator's count, read as its `free_units` does (unless a subclass overrides
        # that)
        self._units = allocator if _inherits(allocator, _Units, "free_units") else None

    def start_chosen(self, job: int) -> bool:
        """Start `job` on the allocator's choice (``view.start(job)``); False if it does not fit."""
        clock = self._clock
        return clock.start(job) if clock is not None else self._start(job)

    def units_free(self) -> int:
        """The allocator units free now."""
        if self._units is not None:  # (compiled: a field read, no reference taken)
            return self._units._free
        return self._units_asked()

    def _units_asked(self) -> int:
        """``view.free_units()``, called through Python (apart: `units_free` stays a C read)."""
        return self._free_units()


@cython.cclass
class SchedulingPass:
    """What the engine calls once per pass and at each arrival (`scheduling_pass_of`): a
    scheduler's ``schedule`` and ``on_arrival`` methods, called through Python; a compiled
    scheduler's pass subclasses it and the compiled engine calls its `schedule` and `arrived` at C
    level."""

    def __init__(self, schedule: Callable[[SchedulerView], None]) -> None:
        self._schedule = schedule
        self.hear(None)  # `hears_arrivals`: False until the scheduler's hook listens

    @cython.ccall
    def schedule(self, view: SchedulerView) -> None:
        """One scheduling pass over `view`."""
        self._schedule(view)

    @cython.ccall
    def hear(self, on_arrival: Callable[[SchedulerView, int], None] | None) -> None:
        """Call `on_arrival` (the scheduler's hook; None: it does nothing in this run) at each
        arrival."""
        self._on_arrival, self.hears_arrivals = on_arrival, on_arrival is not None

    @cython.ccall
    def arrived(self, view: SchedulerView, job: int) -> None:
        """`job` joined the queue, before this timestamp's pass (called where `hears_arrivals`)."""
        on_arrival = self._on_arrival
        assert on_arrival is not None
        on_arrival(view, job)


def scheduler_hook(scheduler: Any, name: str) -> Callable | None:
    """The scheduler's hook `name`, or None when it does nothing in this run (`Scheduler.listens`,
    asked once after `attach`): the loop then makes no call per job."""
    listens = getattr(scheduler, "listens", None)
    if listens is not None and not listens(name):
        return None
    return getattr(scheduler, name, None)


def scheduling_pass_of(scheduler: Any, view: SchedulerView) -> SchedulingPass:
    """The run's pass of `scheduler` over `view`, asked once after ``attach``: the scheduler's own
    `SchedulingPass` if it hands one over (``pass_over(view)``), else its ``schedule`` method; it
    hears arrivals if the scheduler's ``on_arrival`` listens."""
    pass_over = getattr(scheduler, "pass_over", None)
    own = pass_over(view) if pass_over is not None else None
    run = own if own is not None else SchedulingPass(scheduler.schedule)
    run.hear(scheduler_hook(scheduler, "on_arrival"))
    return run


Sequence.register(ReadOnlyColumn)
Sequence.register(SortedColumn)
Mapping.register(WaitingJobs)

# the reading methods a plain-Python column takes from its list (`read_only`)
_LIST_READS = (
    "__getitem__",
    "__len__",
    "__iter__",
    "__reversed__",
    "__contains__",
    "index",
    "count",
)


def read_only(items: list | array | EndOrder, name: str) -> Sequence[Any]:
    """A `ReadOnlyColumn` over `items` (the engine's list, array or `EndOrder` `name`)."""
    if cython.compiled:
        return cast("Sequence[Any]", ReadOnlyColumn(items, name))
    # plain Python: a class of this column's own whose reading methods are the list's bound C
    # methods (not descriptors: called as they are), so a read runs no Python frame (an array has
    # no ``__reversed__``: the column's own)
    reads = {method: getattr(items, method) for method in _LIST_READS if hasattr(items, method)}
    return type("ReadOnlyColumn", (ReadOnlyColumn,), reads)(items, name)


@cython.locals(typed=ReadOnlyColumn)
def column_items(column: Any) -> Any:
    """The engine's own list (or array) under a `ReadOnlyColumn` of the view, else `column`: a
    compiled pass that only reads a column reads it there, without a call per item (view.pxd)."""
    if isinstance(column, ReadOnlyColumn):
        typed = column
        return typed._items
    return column


# (view attribute, engine attribute or None for the same name): the engine's state, as it is
_LIVE = (
    "queue",
    "state",
    "first_start",
    "started",
    "end",
    "allocation",
    "held",
    "speed",
    "rate",
    "remaining",
    "updated",
    "version",
    "checkpoints",
    "lost",
    "lost_setup",
    "preemptions",
    "predicted_end",
    "by_end",
    "placement",
    "units_table",
    "waiting_units",
    "platform",
    "workload",
    "speed_model",
    "scheduler",
)
_FIXED = ("submit", "run_time", "cores", "estimate", "work")
_MAPPINGS = ("running", "reservations")
_ACCESSORS = (
    "work_done",
    "checkpointed_work",
    "predicted_duration",
    "model",
    "requested_nodes",
    "node_occupants",
    "occupant",
    "is_reserved",
    "reservation_of",
    "is_idle",
    "idle_nodes",
    "free_nodes",
    "neighbours",
)


class SchedulerView:
    """The engine's state, read-only, and its actions (see the module docstring)."""

    _engine: Any  # the engine; hooks never see it
    # --- state ------------------------------------------------------------------------------------
    waiting: Mapping[int, None]  # job -> None, queue order (workload order; a preempted job back)
    running: Mapping[int, None]  # job -> None, start order
    reservations: Mapping[int, Any]  # reservation key (below -1) -> Reservation
    queue: Sequence[int]  # the waiting jobs in queue order (ascending job index), as a column
    state: Sequence[int]  # per job: an index into STATES (cosched.simulator.jobs.JobState)
    submit: Sequence[float]
    run_time: Sequence[float]
    cores: Sequence[int]
    estimate: Sequence[float]
    work: Sequence[float]
    first_start: Sequence[float]
    started: Sequence[float]  # when the current (or last) run began
    end: Sequence[float]
    allocation: Sequence[Allocation | None]  # per job: (nodes, cores) while it holds nodes
    held: Sequence[int]  # allocator units per running job
    speed: Sequence[float]
    rate: Sequence[float]
    remaining: Sequence[float]  # work left at `updated`
    updated: Sequence[float]  # when `remaining` was last brought up to date
    version: Sequence[int]  # bumped whenever a job's completion is re-posted or cancelled
    checkpoints: Sequence[int]  # periodic checkpoints kept, an exact count
    lost: Sequence[float]
    lost_setup: Sequence[float]
    preemptions: Sequence[int]
    predicted_end: Sequence[float]
    queued_duration: Sequence[float]  # per waiting job: predicted run time if started now
    by_end: Sequence[tuple[float, int]]  # running jobs as sorted (predicted_end, job)
    placement: Sequence[str | None]
    models: Sequence[JobModel] | None  # None when every job is plain rigid
    units_table: Sequence[int] | None  # units per job (hints change them), if static
    waiting_units: Sequence[int] | None  # units of the waiting jobs, ascending (with units_table)
    total_units: int
    use_run_times: bool  # the estimates are the true run times
    platform: Platform
    workload: Workload
    speed_model: Any
    scheduler: Any
    STATES: Sequence[str]

    # --- accessors --------------------------------------------------------------------------------
    work_done: Callable[[int], float]
    checkpointed_work: Callable[[int], float]
    predicted_duration: Callable[[int], float]
    model: Callable[[int], JobModel]
    requested_nodes: Callable[[int], int]
    node_occupants: _Occupants
    occupant: Callable[[int], int]
    is_reserved: Callable[[int], bool]
    reservation_of: Callable[[int], Any]
    is_idle: Callable[[np.ndarray], np.ndarray]
    idle_nodes: _IdleNodes
    free_nodes: Callable[[], int]
    free_units: Callable[[], int]  # allocator units free now
    units: Callable[[int], int]  # allocator units `job` would take now
    free_cores: Callable[[], int]  # cores free now (co-location allocators)
    neighbours: Callable[[int], list[int]]  # jobs sharing a node with `job`
    partitions: PartitionsView | None  # None: the run has no partitions
    eligible: Eligibility | None  # pools of nodes per job (node types); None: all units alike

    # --- actions (checked by the engine: a wrong one raises ActionError) --------------------------
    start: _Start
    resize: _Resize
    preempt: _JobAction
    kill: _JobAction
    reserve: _Reserve
    release: _Release
    revoke: _Revoke
    hint: Callable[[int, str | None], None]
    request_wakeup: Callable[[float], None]
    at: Callable[[float, Callable[[SchedulerView], None]], None]
    note: _Note
    set_speed: Callable[[int, float], None]

    __slots__ = (
        "_engine",
        *_LIVE,
        *_FIXED,
        *_MAPPINGS,
        *_ACCESSORS,
        *ACTIONS,
        "waiting",
        "queued_duration",
        "models",
        "total_units",
        "use_run_times",
        "partitions",
        "eligible",
        "STATES",
        "free_units",
        "units",
        "free_cores",
    )

    def __init__(self, engine: Any) -> None:
        """Built by the engine once, after its state exists."""
        put = partial(object.__setattr__, self)
        put("_engine", engine)
        for name in _LIVE:
            value = getattr(engine, name)
            columned = isinstance(value, (list, array, EndOrder))
            put(name, read_only(value, name) if columned else value)
        for name in _FIXED:  # without job models `work` is `run_time`: one tuple for both
            column = getattr(engine, name)
            shared = name == "work" and column is engine.run_time
            put(name, self.run_time if shared else tuple(column))
        for name in _MAPPINGS:
            put(name, MappingProxyType(getattr(engine, name)))
        put("waiting", engine.waiting)
        for name in (*_ACCESSORS, *ACTIONS):
            put(name, getattr(engine, name))
        fixed_duration = engine.queued_duration is engine.estimate  # no job models: the estimates
        put(
            "queued_duration",
            self.estimate
            if fixed_duration
            else read_only(engine.queued_duration, "queued_duration"),
        )
        put("models", None if engine.models is None else tuple(engine.models))
        allocator = engine.allocator
        put("total_units", allocator.total_units)
        put("use_run_times", engine.use_run_times)
        put("free_units", allocator.free_units)
        put("units", partial(allocator.units, engine))
        put("free_cores", getattr(allocator, "free_cores", _no_free_cores))
        put("STATES", STATES)
        put("partitions", _partitions(allocator))
        put("eligible", getattr(allocator, "eligibility", None))

    @property
    def now(self) -> float:
        """The current simulated time (seconds)."""
        return self._engine.now

    @property
    def changes(self) -> int:
        """A count of the changes a scheduling pass can see, arrivals excepted (starts, ends,
        rates, reservations, hints, timed events, wake-ups): equal counts, equal state."""
        return self._engine.changes

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(
            f"the scheduler's view is read-only (cannot set {name!r}); change the state through "
            f"its actions: {', '.join(ACTIONS)}"
        )

    __delattr__ = __setattr__  # type: ignore[assignment]


@dataclass(frozen=True)
class PartitionsView:
    """The run's partitions as schedulers see them (`cosched.simulator.partitions`): each job's
    partition, each partition's nodes and job factor, its free allocator units now, and a count of
    the starts and ends on its nodes (equal counts, equal state of its nodes). Each partition is
    split into pools, one per node type it holds (`pools_in`, in node type order); a job runs on
    the nodes of one pool."""

    partition_of: Sequence[int]
    node_sets: Sequence[Sequence[int]]
    priority_job_factors: Sequence[float]
    free_units_in: Callable[[int], int]
    changes_in: Sequence[int]
    free_in: Sequence[int]  # per partition: its idle nodes now (the allocator's live list)
    pools_in: Sequence[Sequence[int]]  # per partition: its pools


def _partitions(allocator: Any) -> PartitionsView | None:
    if getattr(allocator, "partition_of", None) is None:
        return None
    return PartitionsView(
        tuple(allocator.partition_of),
        tuple(allocator.node_sets),
        tuple(allocator.priority_job_factors),
        allocator.free_units_in,
        read_only(allocator.changes_in, "partitions.changes_in"),
        read_only(allocator.free_in_partitions, "partitions.free_in"),
        tuple(tuple(pools) for pools in allocator.pools_in),
    )


def _no_free_cores() -> int:
    raise TypeError("this run's allocator does not count free cores (a co-location allocator does)")


VIEW_MEMBERS = frozenset(
    name
    for name in (*SchedulerView.__annotations__, *vars(SchedulerView))
    if not name.startswith("_")
)
"""Every name a built-in scheduler, mechanism, event source or speed model may use on the view."""

# Engine members outside the view that schedulers written when hooks received the engine may read.
# Plain properties, not `__getattr__`: a class with `__getattr__` loses CPython's fast attribute
# reads (about 5x slower per read), which the scheduling passes make many times per event.
_ENGINE_ONLY = (
    "allocator",
    "resizes",
    "pending_resize",
    "estimate_work",
    "log",
    "actions",
)


def _engine_only(name: str) -> property:
    def read(view: SchedulerView) -> object:
        warnings.warn(
            f"a scheduler read engine.{name}, which is not part of the scheduler's view "
            f"(cosched.simulator.view.SchedulerView); hooks receive the view, not the engine "
            f"(this fallback is removed in 0.4.0)",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(view._engine, name)

    return property(read, doc=f"Deprecated: the engine's {name} (not part of the view).")


for _name in _ENGINE_ONLY:
    setattr(SchedulerView, _name, _engine_only(_name))
