"""The three classic passes: in-order (FCFS), EASY and Conservative backfilling
(thesis §5.1.1-5.1.3).

EASY (aggressive): the first job that does not fit (the head) gets a reservation at the shadow time,
the earliest predicted end of running jobs that frees enough units for it; a later job (up to
`depth`) may start now if it fits and ends by the shadow time or uses only the extra units left at
the shadow time. Conservative: every job in the first `depth` of the queue holds a reservation in a
profile of free units over time; when a running job ends before its predicted end, reservations are
compressed in queue order (each job re-placed at its earliest slot, never later than before), so no
job is delayed.

Cost of Conservative (traces of 10^5-10^6 jobs): every early end re-checks the whole window, and
queues of identical jobs (job arrays) shift all together, one slot per early end. So a check costs a
few list look-ups in the common cases (a job too long to fit whole before its reservation can only
slide into the run of free segments that reaches it), consecutive identical checks are answered
once, and the shift of a queue of identical jobs changes the profile once per pass (`Profile.move`).
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable, Iterable, Sequence
from itertools import islice
from typing import TYPE_CHECKING, Protocol, TypeVar

try:  # Cython's pure-Python mode: the types below compile to C, and do nothing in plain Python
    import cython
except ModuleNotFoundError:
    from cosched import _pure_cython as cython

if TYPE_CHECKING:
    from cosched.simulator.allocators import Allocation, Eligibility
    from cosched.simulator.view import SchedulerView

__all__ = [
    "fcfs_pass",
    "first_fit",
    "shadow_time",
    "SHADOW_EXTRA",
    "easy_backfill",
    "easy_pass",
    "Profile",
    "ConservativeBackfill",
]

INF = math.inf
NEVER_FITS = 2**62  # the units of a job that cannot start now: above any free count
T_co = TypeVar("T_co", covariant=True)


class PerJob(Protocol[T_co]):
    """What `job` reads from a per-job table: a list, a tuple, an array or a computed lookup."""

    def __getitem__(self, job: int, /) -> T_co: ...


def fcfs_pass(engine: SchedulerView, order: list[int]) -> bool:
    """Start jobs in `order` until one does not fit (003 §5.1.1); True if all of them started."""
    start = engine.start
    return all(start(job) for job in order)


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


@cython.locals(
    need=cython.Py_ssize_t,
    free=cython.Py_ssize_t,
    available=cython.Py_ssize_t,
    found=cython.double,
    predicted=cython.double,
)
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
    for predicted, job in by_end:
        if predicted > found:
            break
        available += held[job]
        if found == INF and available >= need:
            if extra == "first":
                return predicted, available - need
            found = predicted
    return (found, available - need) if found < INF else (INF, 0)


@cython.locals(
    free=cython.Py_ssize_t,
    extra=cython.Py_ssize_t,
    size=cython.Py_ssize_t,
    now=cython.double,
    shadow=cython.double,
    length=cython.double,
    short=cython.bint,
)
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
    for job in candidates:
        size = units[job]
        if size > free:
            continue
        length = duration[job]  # a C double: the test below allocates no float
        short = now + length <= shadow
        if not short and size > extra:
            continue
        left = start(job)
        if left is None:
            continue
        free = left
        if not short:
            extra -= size
        if free == 0:
            return


def easy_pass(
    engine: SchedulerView,
    order: list[int],
    reservations: dict | None = None,
    *,
    extra: str = "first",
    durations: PerJob[float] | None = None,
) -> None:
    """Backfill `order[1:]` behind the blocked head `order[0]` without delaying it (003 §5.1.2).

    `extra`: which jobs ending at the shadow time give extra units (`shadow_time`); `durations`:
    what a waiting job is predicted to run if started now (None: `engine.queued_duration`)."""
    free_units = engine.free_units
    free = free_units()
    if free == 0 and reservations is None:
        return
    head, table, held = order[0], engine.units_table, engine.held
    units: PerJob[int] = table if table is not None else _AllocatorUnits(engine.units)
    if engine.eligible is None:
        shadow, spare = shadow_time(units[head], free, engine.by_end, held, extra)
    else:  # node types: the head's reservation on one pool, backfilling counted on that pool
        shadow, spare, pool = pool_shadow_time(engine, head, extra)
        units = _UnitsInPool(engine.eligible, pool)
    if reservations is not None and head not in reservations:
        reservations[head] = shadow
    if free == 0:
        return
    start = engine.start

    def started(job: int) -> int | None:
        return free_units() if start(job) else None

    # with job models a start pays a setup and the estimate counts checkpoint writes: the test uses
    # the end the engine will predict for the job once started (else a backfilled job could delay
    # the head); `queued_duration` is the estimates themselves without job models
    easy_backfill(
        islice(order, 1, None),
        units,
        engine.queued_duration if durations is None else durations,
        free,
        engine.now,
        shadow,
        spare,
        started,
    )


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


class Profile:
    """Free units over time as a step function: free[k] units on [times[k], times[k+1]), last one
    forever.

    Invariants: the lists are canonical (no two neighbours hold the same value), so they depend only
    on the function, not on the order of the additions that built it; and free units never drop
    below zero, since units are only taken on windows that `earliest`/`earlier` found free. Both
    make the shortcuts below exact.

    `move` is lazy: the last move stays pending as (units, start, begin, stop, end), i.e. -units on
    [start, begin) and +units on [stop, end) still to add, and a move that takes over where it left
    off (same units, its new window is the pending one's old window) merges into it: compressing a
    queue of identical jobs shifts each one into the slot its predecessor left, and the lists change
    once instead of twice per job. `earlier` answers around a pending move without applying it;
    every other method applies it first (`settle`). Read `times`/`free` only after `settle()`.

    Most checks of a pass find no room: they skip the saturated segments from now on to the first
    one with enough units free. That first segment per number of units is kept (`first_free`) until
    the lists change, so checks of jobs of the same size between two changes skip them once.
    """

    __slots__ = ("times", "free", "pending", "first_free")

    def __init__(self, total: int, now: float):
        self.times = [now]
        self.free = [total]
        self.pending: tuple[int, float, float, float, float] | None = None
        # units -> index of the first segment with that many units free, in the lists as they are
        self.first_free: dict[int, int] = {}

    def first_with(self, units: int) -> int:
        """Index of the first segment (of the lists, pending move aside) with `units` free, or
        len(free) if none."""
        index = self.first_free.get(units)
        if index is None:
            free = self.free
            index, size = 0, len(free)
            while index < size and free[index] < units:
                index += 1
            self.first_free[units] = index
        return index

    def settle(self) -> None:
        """Apply the pending move to the lists."""
        pending = self.pending
        if pending is not None:
            self.pending = None
            units, start, begin, stop, end = pending
            self.add(start, begin, -units)
            self.add(stop, end, units)

    def advance(self, now: float) -> None:
        """Forget the past before `now`."""
        if self.pending is not None:
            self.settle()
        times = self.times
        index = bisect.bisect_right(times, now) - 1
        if index > 0:
            del times[:index]
            del self.free[:index]
            self.first_free.clear()
        times[0] = now

    def add(self, begin: float, end: float, delta: int) -> None:
        """Add `delta` free units on [begin, end) (negative to reserve)."""
        if self.pending is not None:
            self.settle()
        times, free = self.times, self.free
        if begin < times[0]:
            begin = times[0]
        if begin >= end:
            return
        self.first_free.clear()
        first = bisect.bisect_left(times, begin)
        if first == len(times) or times[first] != begin:
            times.insert(first, begin)
            free.insert(first, free[first - 1])
        if end < INF:
            last = bisect.bisect_left(times, end, first)
            if last == len(times) or times[last] != end:
                times.insert(last, end)
                free.insert(last, free[last - 1])
        else:
            last = len(times)
        if last - first == 1:
            free[first] += delta
        else:
            free[first:last] = [value + delta for value in free[first:last]]
        if last < len(times) and free[last] == free[last - 1]:
            del times[last], free[last]
        if first > 0 and free[first] == free[first - 1]:
            del times[first], free[first]

    def move(self, begin: float, end: float, start: float, stop: float, units: int) -> None:
        """Move a reservation of `units` from [begin, end) to [start, stop), start < begin,
        stop <= end."""
        pending = self.pending
        if pending is not None:
            if pending[0] == units and pending[2] == start and pending[4] == stop:
                self.pending = (units, pending[1], begin, pending[3], end)
                return
            self.settle()
        self.pending = (units, start, begin, stop, end)

    def earliest(self, duration: float, units: int) -> float:
        """The earliest start from now with `units` free during `duration` (a new reservation,
        003 §5.1.3)."""
        if self.pending is not None:
            self.settle()
        times, free = self.times, self.free
        size, k = len(times), self.first_with(units)
        while True:
            while free[k] < units:
                k += 1
            begin = times[k]
            end = begin + duration
            m = k + 1
            while m < size and times[m] < end:
                if free[m] < units:
                    break
                m += 1
                if (
                    m - k == 16
                ):  # a long window: check the rest at once (else go on to where it fails)
                    rest = bisect.bisect_left(times, end, m)
                    if rest - m > 16 and min(free[m:rest]) >= units:
                        return begin
            else:
                return begin
            k = m + 1

    def earlier(self, duration: float, units: int, begin: float, end: float) -> float | None:
        """The earliest start before `begin` for a job holding `units` on [begin, end), or None.

        This is where Conservative compression asks whether a reserved job can move up (003 §5.1.3).
        A start t before `begin` works if `units` are free on [t, min(t + duration, begin)): past
        `begin` the job's own units are there, and free units never drop below zero. So the answer
        is the first window that fits whole before `begin` (only possible if
        now + duration < begin), else the start of the run of segments with `units` free that
        reaches `begin`, if there is one: no scan from now for long jobs.
        """
        if end < begin + duration:  # its own units do not cover its window: no shortcut
            return self._earlier_scan(duration, units, begin, end)
        times, free, pending = self.times, self.free, self.pending
        taken, low, high = 0, 0.0, 0.0
        if pending is not None:
            taken, low, high = self._pending_before(begin, pending)
        before = bisect.bisect_left(times, begin)  # segments 0..before-1 start before `begin`
        if times[0] + duration < begin:  # a whole window may fit before `begin`
            # only starts t with t + duration < begin (slack for rounding)
            last = bisect.bisect_right(
                times, begin - duration + 1e-9 * (abs(begin) + duration + 1.0), 0, before
            )
            k = self.first_with(units)
            while k < last:
                if free[k] < units:
                    k += 1
                    continue
                start = times[k]
                stop = start + duration
                if stop >= begin:
                    break
                m = k + 1
                while m < before and times[m] < stop:
                    if free[m] < units:
                        break
                    m += 1
                else:  # a whole window; if it overlaps the pending move, apply that first
                    overlaps = taken and start < high and stop > low
                    return self._settled_earlier(duration, units, begin, end) if overlaps else start
                k = m + 1
        k = before - 1  # else the start of the run of free segments that reaches `begin`, if any
        if k < 0 or free[k] < units:
            return None
        if taken and begin > low:  # the run may cross [low, high), where `taken` fewer are free
            return self._run_start(k, begin, units, taken, low, high)
        while k > 0 and free[k - 1] >= units:
            k -= 1
        return times[k]

    def _pending_before(
        self, begin: float, pending: tuple[int, float, float, float, float]
    ) -> tuple[int, float, float]:
        """(taken, low, high) for `earlier`: before `begin` the profile is the lists less `taken`
        units on [low, high). The pending move is applied first if the units it gives back lie
        before `begin`; (0, 0.0, 0.0) when nothing is pending before `begin`."""
        if begin > pending[1]:
            if pending[3] < begin:  # units the pending move gives back lie before `begin`: apply it
                self.settle()
            else:
                return pending[0], pending[1], pending[2]
        return 0, 0.0, 0.0

    def _settled_earlier(
        self, duration: float, units: int, begin: float, end: float
    ) -> float | None:
        """`earlier` after the pending move is applied to the lists."""
        self.settle()
        return self.earlier(duration, units, begin, end)

    def _earlier_scan(self, duration: float, units: int, begin: float, end: float) -> float | None:
        """`earlier` by a scan of every start from now, counting the job's own units on [begin,
        end)."""
        self.settle()
        times, free = self.times, self.free
        size, k = len(times), 0
        while True:
            while k < size and times[k] < begin and free[k] < units:
                k += 1
            if k == size or times[k] >= begin:
                return None
            start = times[k]
            stop = start + duration
            m = k + 1
            while m < size and times[m] < stop:
                if free[m] + (units if begin <= times[m] < end else 0) < units:
                    break
                m += 1
            else:
                return start
            k = m + 1

    def _run_start(
        self, k: int, begin: float, units: int, taken: int, low: float, high: float
    ) -> float | None:
        """Start of the run reaching `begin` (the point before it is in segment k) of a profile that
        is the lists less `taken` units on [low, high), low < begin: walked leftwards above, in and
        below it."""
        times, free = self.times, self.free
        point = begin
        if begin > high:  # above [low, high): as listed (free[k] >= units already)
            while times[k] > high:
                if free[k - 1] < units:
                    return times[k]
                k -= 1
            point = high
            if times[k] == high:
                k -= 1
        if free[k] - taken < units:  # the piece just before `point` is in [low, high)
            return point if point < begin else None
        while times[k] > low:
            if free[k - 1] - taken < units:
                return times[k]
            k -= 1
        if times[k] == low:
            if k == 0:
                return low
            k -= 1
        if free[k] < units:  # below [low, high): as listed
            return low
        while k > 0 and free[k - 1] >= units:
            k -= 1
        return times[k]


class ConservativeBackfill:
    """Reservations for the first `depth` waiting jobs in a free-unit profile, compressed on early
    ends.

    The rule is thesis 003 §5.1.3: each job in the window holds the earliest slot it had when it was
    placed or last moved; when capacity appears (a job ends before its predicted end, or a
    reservation leaves the window) every reservation, in queue order, moves to its earliest slot if
    that is earlier; a job whose reservation starts now is started. The engine wakes the scheduler
    at every new start.
    """

    def __init__(self, engine: SchedulerView, depth: int, first_reservations: dict | None = None):
        self.engine = engine
        self.depth = max(depth, 1)
        self.profile = Profile(engine.total_units, engine.now)
        # waiting job -> (start, end, units, duration) reserved; the tuple is also the key of a
        # check that cannot succeed in an unchanged profile
        self.slot: dict[int, tuple[float, float, int, float]] = {}
        self.booked: dict[
            int, tuple[float, int]
        ] = {}  # running job -> (predicted end, units) in the profile
        self.first = first_reservations
        self.dirty = False  # capacity appeared before some reservations: compress them
        self.pending = True  # jobs without a reservation may be in the window
        self.next_begin = INF  # no reservation starts before this

    def arrived(self) -> None:
        self.pending = True

    def finished(self, job: int) -> None:
        end, units = self.booked.pop(job)
        if end > self.engine.now:
            self.profile.add(self.engine.now, end, units)
            self.dirty = True

    @property
    def idle(self) -> bool:
        """A pass now would change nothing: no capacity appeared, no job needs a reservation and
        none is due (the caller may skip building the window)."""
        return not self.dirty and not self.pending and self.engine.now < self.next_begin

    def schedule(self, order: list[int]) -> int:
        """Place/compress reservations, start the jobs due now; returns how many started.

        A pass where nothing can move or be due (no capacity appeared, now before every reservation)
        only places the jobs that have no reservation yet; `next_begin` is then a lower bound, which
        is enough: a pass it does not skip finds nothing due and recomputes it."""
        if self.idle:
            return 0
        engine, profile, slot = self.engine, self.profile, self.slot
        now = engine.now
        profile.advance(now)
        window = order[: self.depth]
        kept = len(slot.keys() & window) if slot else 0
        stale = slot.keys() - window if kept != len(slot) else ()
        for job in stale:  # reserved jobs that left the window give their units back
            begin, end, units, _ = slot.pop(job)
            profile.add(begin, end, units)
        if self.dirty or stale or now >= self.next_begin:
            due, next_begin = self._compress(window, now, self.dirty or bool(stale))
        # nothing reserved can move or is due: only place the jobs that have no reservation yet
        elif kept != len(window):
            due, next_begin = self._place(
                [job for job in window if job not in slot], now, self.next_begin
            )
        else:
            due, next_begin = [], self.next_begin
        self.dirty = self.pending = False
        started = 0
        for job in due:
            begin, end, units, _ = slot.pop(job)
            if engine.start(job):
                self.booked[job] = (engine.predicted_end[job], units)
                started += 1
            else:
                profile.add(begin, end, units)
                self.pending = True
        self.next_begin = next_begin
        return started

    def _place(self, jobs: list[int], now: float, next_begin: float) -> tuple[list[int], float]:
        """Reserve the earliest slot for each of `jobs` in order; returns the jobs due now and the
        earliest later reservation start."""
        engine, profile, slot, first = self.engine, self.profile, self.slot, self.first
        estimate, units_of, table = engine.estimate, engine.units, engine.units_table
        due = []
        for job in jobs:
            units = table[job] if table is not None else units_of(job)
            duration = estimate[job]
            begin = profile.earliest(duration, units)
            end = begin + duration
            profile.add(begin, end, -units)
            slot[job] = (begin, end, units, duration)
            if first is not None and job not in first:
                first[job] = begin
            if begin <= now:
                due.append(job)
                continue
            if begin < next_begin:
                next_begin = begin
            engine.request_wakeup(begin)
        return due, next_begin

    def _compress(self, window: list[int], now: float, dirty: bool) -> tuple[list[int], float]:
        """The full pass over the window in queue order (thesis 003 §5.1.3): a reserved job moves to
        its earliest slot if that is earlier (only when capacity appeared, `dirty`), a job without a
        reservation gets its earliest slot. Returns the jobs due now and the earliest later start.
        """
        engine, profile, slot, first = self.engine, self.profile, self.slot, self.first
        estimate, units_of, table = engine.estimate, engine.units, engine.units_table
        earlier, request_wakeup, reserved_of = profile.earlier, engine.request_wakeup, slot.get
        due, next_begin = [], INF
        # reservations that cannot move in the profile as it is now: identical jobs queued together
        # share their answer until the profile changes
        stuck: set[tuple[float, float, int, float]] = set()
        for job in window:
            reserved = reserved_of(job)
            if reserved is not None:
                begin = reserved[0]
                if begin <= now:
                    due.append(job)
                    continue
                if not dirty or reserved in stuck:
                    if begin < next_begin:
                        next_begin = begin
                    continue
                old_begin, old_end, units, duration = reserved
                moved = earlier(duration, units, old_begin, old_end)
                if moved is None:
                    stuck.add(reserved)
                    if old_begin < next_begin:
                        next_begin = old_begin
                    continue
                begin, end = moved, moved + duration
                profile.move(old_begin, old_end, begin, end, units)
            else:
                units = table[job] if table is not None else units_of(job)
                duration = estimate[job]
                begin = profile.earliest(duration, units)
                end = begin + duration
                profile.add(begin, end, -units)
            if stuck:
                stuck.clear()
            slot[job] = (begin, end, units, duration)
            if first is not None and job not in first:
                first[job] = begin
            if begin <= now:
                due.append(job)
                continue
            if begin < next_begin:
                next_begin = begin
            request_wakeup(begin)
        return due, next_begin
