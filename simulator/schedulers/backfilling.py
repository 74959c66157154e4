"""The three classic passes: in-order (FCFS), EASY and Conservative backfilling
(thesis §5.1.1-5.1.3).

In order: every queue scheduler starts its queue, in its order, until a job does not fit
(`start_in_order`, written once); that job is the head the backfilling policy works behind.

EASY (aggressive): the first job that does not fit (the head) gets a reservation at the shadow time,
the earliest predicted end of running jobs that frees enough units for it; a later job (up to
`depth`) may start now if it fits and ends by the shadow time or uses only the extra units left at
the shadow time. Conservative: every job in the first `depth` of the queue holds a reservation in a
profile of free units over time; when a running job ends before its predicted end, reservations are
compressed in queue order (each job re-placed at its earliest slot, never later than before), so no
job is delayed. Conservative lives in `conservative` (its profile is compiled on its own); its names
are re-exported here.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

try:  # Cython's pure-Python mode: the types below compile to C, and do nothing in plain Python
    import cython

    if not cython.compiled:  # plain Python: the light stand-in, not Cython's slower shadow
        raise ModuleNotFoundError
except ModuleNotFoundError:
    from cosched import _pure_cython as cython

from cosched.deprecation import warn_renamed
from cosched.simulator.bisection import EndOrder, int_position
from cosched.simulator.schedulers.conservative import ConservativeBackfill, Profile
from cosched.simulator.view import (
    Clock,
    ReadOnlyColumn,
    SortedColumn,
    Starter,
    column_items,
    engine_clock,
)

if TYPE_CHECKING:
    from cosched.simulator.allocators import Allocation, Eligibility
    from cosched.simulator.view import SchedulerView

__all__ = [
    "start_in_order",
    "start_each",
    "queue_heads",
    "queue_slice",
    "first_fit",
    "shadow_time",
    "SHADOW_EXTRA",
    "easy_backfill",
    "easy_pass",
    "EasyBackfill",
    "Profile",
    "ConservativeBackfill",
]

INF = cython.declare(cython.double, math.inf)
NEVER_FITS = 2**62  # the units of a job that cannot start now: above any free count
# EASY's pass skips the jobs its last test rejected while that test still holds
# (`EasyBackfill._untested`): compiled, the memo costs less than the scan it saves; in plain Python
# more (SDSC-SP2 EASY 0.61 s against 0.58 s), so it is off there, and the tests turn it on to check
# that it decides as the scan does
REMEMBERS_REJECTED = cython.compiled
T_co = TypeVar("T_co", covariant=True)


class PerJob(Protocol[T_co]):
    """What `job` reads from a per-job table: a list, a tuple, an array or a computed lookup."""

    def __getitem__(self, job: int, /) -> T_co: ...


@cython.cclass
class _QueueHeads:
    """The iterator of `queue_heads`: a class, not a generator, as a pass stops reading it at the
    blocked head and closing a generator costs more than a start (compiled). A subclass reads
    another order's head (`head`), which `start_each` reads in C too (base.py's kept order)."""

    # (backfilling.pxd) _live; _queue: `_live` if it is the engine queue (read in C), or None

    def __init__(self, live: Collection[int]) -> None:
        self._live = live
        self._queue = live if isinstance(live, SortedColumn) else None

    def __iter__(self) -> Iterator[int]:
        return self

    def __next__(self) -> int:
        job = self.head()
        if job is None:
            raise StopIteration
        return job

    @cython.locals(queue=SortedColumn)
    def head(self) -> int | None:
        """The live queue's head, None if it is empty (`__next__`, which `start_each` calls in C
        when compiled)."""
        queue = self._queue
        if queue is not None:
            return queue._items[queue._head] if queue._head < len(queue._items) else None
        return next(iter(self._live)) if self._live else None


def start_in_order(engine: SchedulerView, jobs: Iterable[int]) -> int | None:
    """Start `jobs` in their order until one does not fit (003 §5.1.1) and return that job, the
    blocked head (None if every job started): the one in-order step of every queue scheduler.

    The order is the caller's (the queue sorted by descending priority, equal priorities by job
    index, lowest first; a partition's own queue); a job fits when its units (`engine.units_table`)
    are within `engine.free_units()` and `engine.start(job)` succeeds. `jobs` is read lazily, up to
    and including the head, so the candidates behind the head are the rest of the same iterator."""
    return start_each(jobs, Starter(engine), engine.units_table)


@cython.ccall
@cython.locals(
    starter=Starter,
    heads=_QueueHeads,
    free=cython.Py_ssize_t,
    size=cython.Py_ssize_t,
    index=cython.Py_ssize_t,
)
def start_each(jobs: Iterable[int], starter: Starter, table: PerJob[int] | None) -> int | None:
    """`start_in_order` over a view's `Starter` and ``units_table`` read once: a pass object that
    keeps them for its run calls it at C level, and it starts jobs on the engine's view in C
    (compiled)."""
    free = starter.units_free()
    # the live queue's head (`queue_heads`) is read at C level (compiled), other jobs iterated
    heads = jobs if isinstance(jobs, _QueueHeads) else None
    others = iter(jobs) if heads is None else None
    while True:
        job = heads.head() if heads is not None else next(others, None)  # type: ignore[arg-type]
        if job is None:
            return None
        if table is not None:
            index = job  # (compiled: the table read at a C index, compared as a C integer)
            size = table[index]
            if size > free:
                return job
        if not starter.start_chosen(job):
            return job
        free = starter.units_free()


def fcfs_pass(engine: SchedulerView, order: list[int]) -> bool:
    """Deprecated: `start_in_order`. Start jobs in `order` until one does not fit; True if all of
    them started."""
    warn_renamed("fcfs_pass(engine, order)", "start_in_order(engine, order) is None")
    return start_in_order(engine, order) is None


def queue_heads(waiting: Collection[int]) -> Iterator[int]:
    """The head of the live queue `waiting` (``engine.queue``, or ``engine.waiting``), again after
    each start removes it: the queue in its own order (job index) for `start_in_order`, which a
    plain iterator over a queue that changes could not give."""
    return _QueueHeads(waiting)


@cython.ccall
@cython.locals(typed=SortedColumn, start=cython.Py_ssize_t, stop=cython.Py_ssize_t)
def queue_slice(queue: Sequence[int], start: int, stop: int) -> list[int]:
    """``queue[start:stop]`` as a new list (0 <= start <= stop): compiled, the engine's queue
    column is read in C, with no slice object (the window of every pass)."""
    if isinstance(queue, SortedColumn):
        typed = queue
        return typed._items[typed._head + start : typed._head + stop]
    return list(queue[start:stop])


@cython.locals(free=cython.Py_ssize_t, size=cython.Py_ssize_t)
def first_fit(order: Iterable[int], units: PerJob[int], free: int) -> list[int]:
    """Every job of `order` that fits in the `free` units left by the ones before it (greedy first
    fit, no reservation); `units[job]` is what a job takes."""
    started = []
    for job in order:
        size = units[job]
        if size <= free:
            started.append(job)
            free -= size
            if free == 0:
                break
    return started


SHADOW_EXTRA = ("first", "all")


@cython.ccall
@cython.locals(
    need=cython.Py_ssize_t,
    free=cython.Py_ssize_t,
    available=cython.Py_ssize_t,
    found=cython.double,
    predicted=cython.double,
    job=cython.Py_ssize_t,
    gives=cython.Py_ssize_t,
    order=EndOrder,
    item=cython.Py_ssize_t,  # compiled: a position in `order`
)
@cython.returns(tuple[cython.double, cython.Py_ssize_t])
def shadow_time(
    need: int,
    free: int,
    by_end: Iterable[tuple[float, int]],
    held: PerJob[int],
    extra: str = "first",
) -> tuple[float, int]:
    """(shadow time, extra units) of a blocked head needing `need` units (003 §5.1.2): the earliest
    predicted end of running jobs at which enough units are free, and the units left over then.

    `by_end` are the running jobs as (predicted end, job) in the one tie order: ascending predicted
    end, equal ends by job index (workload order, as `engine.by_end` keeps them); `held[job]` is
    the units a running job gives back. Which units count as extra when several jobs end at the
    shadow time (`extra`, one of `SHADOW_EXTRA`): "first" walks the ends in that tie order and
    stops at the job whose units make the head fit (the others ending then are not counted);
    "all" counts every job ending at the shadow time, as CQSim's free-unit profile does."""
    available = free
    found = INF
    order = by_end if isinstance(by_end, EndOrder) else EndOrder(by_end)  # the engine's, or a copy
    # compiled: each pair read in C at its position; plain Python: the pairs iterated, as a list's
    for item in range(len(order)) if cython.compiled else order.pairs:
        predicted, job = order.pair_at(item) if cython.compiled else item  # type: ignore[misc]
        if predicted > found:
            break
        gives = held[job]  # a C integer: the sum allocates no int
        available += gives
        if found == INF and available >= need:
            if extra == "first":
                return predicted, available - need
            found = predicted
    if found < INF:
        return found, available - need
    return INF, 0


@cython.ccall
@cython.locals(free=cython.Py_ssize_t, extra=cython.Py_ssize_t, now=cython.double)
@cython.locals(shadow=cython.double)
def easy_backfill(
    candidates: Iterable[int],
    units: PerJob[int],
    duration: PerJob[float],
    free: int,
    now: float,
    shadow: float,
    extra: int,
    start: Callable[[int], int | None],
) -> None:
    """EASY backfilling behind a blocked head (003 §5.1.2): each candidate, in order, that fits in
    the `free` units starts if it ends by the `shadow` time (`now + duration[job]`) or takes only
    `extra` units (those the head does not need at the shadow time).

    `start(job)` starts a job and returns the units free afterwards, or None if it did not start;
    this is the only EASY pass: the engine's schedulers and the ElastiSim policies both call it."""
    jobs = _listed(candidates)
    _backfill(
        jobs, None, 0, len(jobs), units, duration, None, None, free, now, shadow, extra, start
    )


@cython.cfunc
def _listed(candidates: Iterable[int]) -> list[int]:
    """`candidates` as a list (the EASY loop walks a list in C): itself if it is one."""
    return candidates if isinstance(candidates, list) else list(candidates)


@cython.boundscheck(False)  # the candidates are jobs: indices within the tables
@cython.wraparound(False)
@cython.locals(
    items=list,
    offset=cython.Py_ssize_t,
    moved=cython.Py_ssize_t,
    position=cython.Py_ssize_t,
    size=cython.Py_ssize_t,
    length=cython.double,
    short=cython.bint,
    job=cython.Py_ssize_t,
    left=cython.Py_ssize_t,
    tried=cython.Py_ssize_t,
)
@cython.returns(cython.Py_ssize_t)
@cython.exceptval(-1, check=False)
def _backfill(
    candidates: list[int] | None,
    queue: SortedColumn | None,
    first: int,
    stop: int,
    units: PerJob[int],
    duration: PerJob[float],
    estimates: Any,
    sizes: Any,
    free: int,
    now: float,
    shadow: float,
    extra: int,
    start: Callable[[int], int | None],
) -> int:
    """`easy_backfill` over ``candidates[first:stop]``, or (`candidates` None) over the jobs at
    `first` to `stop` of the engine's `queue`, read in place, reading a job's units from `sizes`
    and its estimate from `estimates` (the engine's typed tables, read in C when compiled) when
    they are given, else from `units` and `duration`.
    Returns the first position whose job EASY's test let it try to start (`stop` if none): the
    jobs before it were rejected by the test on the `free`, `extra` and `shadow` given."""
    tried = stop
    if queue is None:
        items, offset = candidates, 0
    else:
        items, offset = queue._items, queue._head
    moved = 0  # the started jobs, which left `queue`: those behind them moved up one place each
    for position in range(first, stop):
        job = items[offset + position]  # type: ignore[index]  # (compiled: a C index, no reference)
        if sizes is None:  # noqa: SIM108  (compiled: a ternary would box the typed read)
            size = units[job]
        else:
            size = sizes[job]
        if size > free:
            continue
        if estimates is None:  # noqa: SIM108  (compiled: a ternary would box the typed read)
            length = duration[job]  # a C double: the test below allocates no float
        else:
            length = estimates[job]
        short = now + length <= shadow
        if not short and size > extra:
            continue
        tried = min(tried, position)
        # the EASY pass's own starter is called at C level (compiled), any other through Python
        candidate = items[offset + position]  # type: ignore[index]  # the job's own int starts
        if isinstance(start, EasyBackfill):
            left = cython.cast(EasyBackfill, start).started(candidate)
        else:
            units_left = start(candidate)
            left = -1 if units_left is None else units_left
        if left < 0:
            continue
        if queue is not None:
            moved += 1
            offset = queue._head - moved
        free = left
        if not short:
            extra -= size
        if free == 0:
            return tried
    return tried


def easy_pass(
    engine: SchedulerView,
    order: list[int],
    reservations: dict | None = None,
    extra: str = "first",
    durations: PerJob[float] | None = None,
) -> None:
    """Backfill `order[1:]` behind the blocked head `order[0]` without delaying it (003 §5.1.2).

    `extra`: which jobs ending at the shadow time give extra units (`shadow_time`); `durations`:
    what a waiting job is predicted to run if started now (None: `engine.queued_duration`). A
    scheduler that makes a pass per event builds one `EasyBackfill` per run instead."""
    EasyBackfill(engine, reservations, extra, durations).run(order[0], order[1:])


@cython.cclass
class EasyBackfill:
    """`easy_pass` for one run of one view: what a pass reads of the view that stays the same
    object during the run (its actions, the units and durations tables, the held units) is read
    once here rather than once per pass, and the object itself is the `start` that
    `easy_backfill` calls (no closure per pass)."""

    # its fields are C fields declared in backfilling.pxd (the view it reads and acts through,
    # and what it reads of it once)

    def __init__(
        self,
        engine: SchedulerView,
        reservations: dict | None = None,
        extra: str = "first",
        durations: PerJob[float] | None = None,
    ) -> None:
        self.view, self._reservations, self._extra = engine, reservations, extra
        # `now` and the change count read at C level: the engine's clock, behind its own view or a
        # partition's (its `clock`: the same shadow time and rejected jobs on an unchanged engine)
        clock = engine_clock(engine)
        if clock is None:
            clock = getattr(engine, "clock", None)
        self._clock = clock if isinstance(clock, Clock) else None
        self._starter = Starter(engine)  # starts in C on the engine's view
        table = engine.units_table
        self._units = column_items(table) if table is not None else _AllocatorUnits(engine.units)
        self._held = column_items(engine.held)
        # fixed for the view's life: its node types, and the running jobs by end when they are the
        # engine's live column (a partition's view computes them at each read)
        self._eligible = engine.eligible
        by_end = engine.by_end
        self._by_end = column_items(by_end) if isinstance(by_end, ReadOnlyColumn) else None
        # with job models a start pays a setup and the estimate counts checkpoint writes: the test
        # uses the end the engine will predict for the job once started (else a backfilled job
        # could delay the head); `queued_duration` is the estimates themselves without job models
        self._durations = column_items(engine.queued_duration if durations is None else durations)
        # the engine's units table as a typed array (`hint` keeps it with `units_table`): read in C
        # (not with node types: the units counted are those of one pool, `_UnitsInPool`)
        counts = getattr(engine if self._clock is None else self._clock, "unit_counts", None)
        typed = counts is not None and table is not None and self._eligible is None
        self._sizes = counts if typed else None
        # the engine's `queued_duration` as a typed array (`preempt` keeps it with the column)
        estimates = getattr(self._clock, "typed_durations", None) if durations is None else None
        self._estimates = estimates
        # the last shadow time (`_behind`) and the change count, head and free units it is of
        self._shadow, self._spare = INF, 0
        self._shadow_changes = self._shadow_head = self._shadow_free = -1
        # the queue's jobs `_rejected_from` to `_rejected_to` (by index) that EASY's test rejected
        # on `_rejected_free` units free, `_rejected_extra` extra and the shadow time
        # `_rejected_shadow`, with `_rejected_requeues` jobs queued again so far (`_untested`):
        # on the engine's queue, units and estimates, which change only when a job is queued again
        self._remembers = (
            REMEMBERS_REJECTED and typed and self._clock is not None and durations is None
        )
        self._rejected_from = self._rejected_to = -1
        self._rejected_free = self._rejected_extra = self._rejected_requeues = 0
        self._rejected_shadow = INF

    @cython.ccall
    def run(self, head: int, candidates: list[int]) -> None:
        """Backfill `candidates` (in their order) behind the blocked `head` (`easy_pass`)."""
        self._behind(head, candidates, None, 0, 0)

    @cython.cfunc
    @cython.locals(queue=SortedColumn, first=cython.Py_ssize_t, stop=cython.Py_ssize_t)
    def run_queue(self, queue: SortedColumn, first: int, stop: int) -> None:
        """`run` behind the head of the engine's `queue` over its jobs at `first` to `stop` (as
        ``queue[first:stop]``), read in place: no copy of the window."""
        self._behind(queue._items[queue._head], None, queue, first, stop)

    @cython.cfunc
    @cython.locals(
        queue=SortedColumn,
        first=cython.Py_ssize_t,
        stop=cython.Py_ssize_t,
        free=cython.Py_ssize_t,
        now=cython.double,
        shadow=cython.double,
        spare=cython.Py_ssize_t,
        index=cython.Py_ssize_t,
        changes=cython.Py_ssize_t,
        need=cython.Py_ssize_t,
        untested=cython.Py_ssize_t,
        tried=cython.Py_ssize_t,
        remembers=cython.bint,
        column=SortedColumn,
        items=list,
        gap=cython.Py_ssize_t,
    )
    def _behind(
        self, head: int, candidates: Any, queue: SortedColumn | None, first: int, stop: int
    ) -> None:
        """`run` over `candidates`, or (None) over the jobs at `first` to `stop` of `queue`."""
        engine, reservations = self.view, self._reservations
        free = self._starter.units_free()
        if free == 0 and reservations is None:
            return
        units = self._units
        if self._eligible is None:
            index = head  # (compiled: the table read at a C index)
            # the same head on an unchanged engine (its change count) has the same shadow time
            changes = self._clock.changes if self._clock is not None else -1
            if (
                changes < 0
                or changes != self._shadow_changes
                or index != self._shadow_head
                or free != self._shadow_free
            ):
                by_end = self._by_end if self._by_end is not None else engine.by_end
                if self._sizes is None:  # noqa: SIM108  (compiled: a ternary would box the typed read)
                    need = units[index]
                else:
                    need = self._sizes[index]
                self._shadow, self._spare = shadow_time(need, free, by_end, self._held, self._extra)
                self._shadow_changes, self._shadow_head, self._shadow_free = changes, index, free
            shadow, spare = self._shadow, self._spare
        else:  # node types: the head's reservation on one pool, backfilling counted on that pool
            shadow, spare, pool = pool_shadow_time(engine, head, self._extra)
            units = _UnitsInPool(self._eligible, pool)
        if reservations is not None and head not in reservations:
            reservations[head] = shadow
        if free == 0:
            return
        now = self._clock.now if self._clock is not None else engine.now
        jobs = None
        if queue is None:
            jobs = _listed(candidates)
            stop = len(jobs)
        else:
            stop = min(stop, len(queue._items) - queue._head)
        remembers = queue is not None and self._remembers
        untested = self._untested(queue, first, stop, free, spare, shadow) if remembers else first
        # (the typed table passed as a field: a local copy of a memoryview costs its counting)
        tried = _backfill(
            jobs,
            queue,
            untested,
            stop,
            units,
            self._durations,
            self._estimates,
            self._sizes,
            free,
            now,
            shadow,
            spare,
            self,
        )
        if remembers and tried > first:  # the jobs before the first one tried were rejected
            column = cython.cast(SortedColumn, queue)
            items, gap = column._items, column._head
            self._rejected_from, self._rejected_to = items[gap + first], items[gap + tried - 1]
            self._rejected_free, self._rejected_extra, self._rejected_shadow = free, spare, shadow
            self._rejected_requeues = cython.cast(Clock, self._clock).requeues

    @cython.cfunc
    @cython.locals(
        queue=SortedColumn,
        first=cython.Py_ssize_t,
        stop=cython.Py_ssize_t,
        free=cython.Py_ssize_t,
        extra=cython.Py_ssize_t,
        shadow=cython.double,
        job=cython.Py_ssize_t,
        head=cython.Py_ssize_t,
    )
    @cython.returns(cython.Py_ssize_t)
    @cython.exceptval(-1, check=True)
    def _untested(
        self, queue: SortedColumn, first: int, stop: int, free: int, extra: int, shadow: float
    ) -> int:
        """The first position from `first` on (before `stop`) whose job an earlier pass did not
        reject: EASY's test (003 §5.1.2) rejects again a job it rejected on as many free or extra
        units or more and as late a shadow time or later (the clock never goes back), its units
        and estimate unchanged; the started jobs left the queue, the arrivals joined its end."""
        if first >= stop or cython.cast(Clock, self._clock).requeues != self._rejected_requeues:
            return first
        if free > self._rejected_free or extra > self._rejected_extra:
            return first
        job = queue._items[queue._head + first]
        if shadow > self._rejected_shadow or not self._rejected_from <= job <= self._rejected_to:
            return first
        head = queue._head
        return int_position(queue._items, self._rejected_to, head + first, head + stop, True) - head

    def __call__(self, job: int) -> int | None:
        """Start `job` (as `easy_backfill` asks): the units free afterwards, None if it did not
        start."""
        left = self.started(job)
        return left if left >= 0 else None

    @cython.cfunc
    @cython.returns(cython.Py_ssize_t)
    @cython.exceptval(-1, check=True)
    def started(self, job: int) -> int:
        """`__call__`, which `easy_backfill` calls at C level when compiled (no Python call): -1
        if `job` did not start."""
        starter = self._starter
        return starter.units_free() if starter.start_chosen(job) else -1


def pool_shadow_time(engine: SchedulerView, head: int, extra: str) -> tuple[float, int, int]:
    """(shadow time, extra units, pool) of a blocked head that may run on several pools of nodes
    (`engine.eligible`: node types, within a partition): on each pool, the shadow time of 003
    §5.1.2 from that pool's idle nodes and the nodes its running jobs give back; the earliest wins
    (ties: the allocator's order)."""
    eligible, allocation = engine.eligible, engine.allocation
    assert eligible is not None
    pool_of, held = eligible.pool_of_node, _NodesHeld(allocation)
    running = [(item, pool_of(allocation[item[1]].node_ids[0])) for item in engine.by_end]  # type: ignore[union-attr]
    best: tuple[float, int, int] = (INF, 0, -1)
    for pool, need in eligible.pools_of(head):
        ends = (item for item, where in running if where == pool)
        shadow, spare = shadow_time(need, eligible.free_in(pool), ends, held, extra)
        if shadow < best[0] or best[2] < 0:
            best = (shadow, spare, pool)
    return best


class _NodesHeld:
    """held[job]: the nodes a running job holds (on one pool)."""

    __slots__ = ("allocation",)

    def __init__(self, allocation: Sequence[Allocation | None]):
        self.allocation = allocation

    def __getitem__(self, job: int) -> int:
        return self.allocation[job].size  # type: ignore[union-attr]  # a running job's


class _UnitsInPool:
    """units[job]: the nodes of `pool` that `job` would take if started now; 0 if the allocator
    would place it on another pool, more than any free count if it does not fit now. EASY's test
    (003 §5.1.2) on these units delays the head's reservation on `pool` by no job."""

    __slots__ = ("eligible", "pool")

    def __init__(self, eligible: Eligibility, pool: int):
        self.eligible, self.pool = eligible, pool

    def __getitem__(self, job: int) -> int:
        found = self.eligible.pool_now(job)
        if found is None:
            return NEVER_FITS
        return found[1] if found[0] == self.pool else 0


class _AllocatorUnits:
    """units[job]: the allocator units a job takes now (when they are not a static table)."""

    __slots__ = ("units",)

    def __init__(self, units: Callable[[int], int]):
        self.units = units

    def __getitem__(self, job: int) -> int:
        return self.units(job)
