"""Conservative backfilling (thesis 003 §5.1.3): every job in the first `depth` of the queue holds a
reservation in a profile of free units over time; when a running job ends before its predicted end,
reservations are compressed in queue order (each job re-placed at its earliest slot, never later
than before), so no job is delayed.

Cost (traces of 10^5-10^6 jobs): every early end re-checks the whole window, and queues of identical
jobs (job arrays) shift all together, one slot per early end. So a check costs a few look-ups in the
common cases (a job too long to fit whole before its reservation can only slide into the run of free
segments that reaches it), consecutive identical checks are answered once, and the shift of a queue
of identical jobs changes the profile once per pass (`Profile.move`).

The module compiles with Cython from this source (`cosched._compiled`): `Profile` is then an
extension type whose methods call each other in C, and the typed locals below (times as doubles,
units and indices as C integers, read from the lists one value at a time) keep the scans in C.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Mapping
from typing import TYPE_CHECKING

try:  # Cython's pure-Python mode: the types below compile to C, and do nothing in plain Python
    import cython

    if not cython.compiled:  # plain Python: the light stand-in, not Cython's slower shadow
        raise ModuleNotFoundError
except ModuleNotFoundError:
    from cosched import _pure_cython as cython
if cython.compiled:  # C's memmove, for `Profile._shift`
    from cython.cimports.libc.string import memmove

if TYPE_CHECKING:
    from collections.abc import Callable, Container, Iterator, Sequence, Sized
    from typing import Protocol

    from cosched.simulator.view import SchedulerView

    class Reserving(Protocol):
        """What the pass loop drives: `ConservativeBackfill`, or one profile per node type."""

        @property
        def slot(self) -> Sized: ...

        def schedule(self, order: list[int]) -> int: ...


__all__ = ["Profile", "ConservativeBackfill", "Reservations", "conservative_pass"]

# C constants when compiled (read without a look-up of the module's globals)
INF = cython.declare(cython.double, math.inf)
# a whole window before a reservation ends strictly before it: slack for rounding, relative to the
# times involved
WINDOW_SLACK = cython.declare(cython.double, 1e-9)
# what the profile's C-level searches return for "no such start" (None in Python): no start is -inf
NO_START = cython.declare(cython.double, -math.inf)
# segments a new profile has room for; the buffers double when full
FIRST_CAPACITY = 64


@cython.ccall
@cython.boundscheck(False)
@cython.wraparound(False)
@cython.cdivision(True)  # indices are never negative: C division, no check of the sign
@cython.locals(
    times=cython.double[::1],
    when=cython.double,
    low=cython.Py_ssize_t,
    high=cython.Py_ssize_t,
    after=cython.bint,
    middle=cython.Py_ssize_t,
)
@cython.returns(cython.Py_ssize_t)
def _first_index(times: Sequence[float], when: float, low: int, high: int, after: bool) -> int:
    """The first index in times[low:high] whose time is > `when` if `after` (`bisect_right`), else
    >= `when` (`bisect_left`); high if there is none."""
    while low < high:
        middle = (low + high) // 2
        if times[middle] < when or (after and times[middle] == when):
            low = middle + 1
        else:
            high = middle
    return low


@cython.cfunc
@cython.boundscheck(False)
@cython.wraparound(False)
@cython.locals(
    free=cython.longlong[::1], units=cython.longlong, low=cython.Py_ssize_t, high=cython.Py_ssize_t
)
@cython.returns(cython.bint)
def _at_least(free: Sequence[int], units: int, low: int, high: int) -> bool:
    """Every count in free[low:high] is >= `units`."""
    while low < high:
        if free[low] < units:
            return False
        low += 1
    return True


@cython.final  # its methods are called directly, not through a table
@cython.cclass
@cython.boundscheck(False)  # every index below is within the buffers and not negative
@cython.wraparound(False)
@cython.initializedcheck(False)  # __init__ sets every buffer
class Profile:
    """Free units over time as a step function: free[k] units on [times[k], times[k+1]), last one
    forever.

    The segments live in two typed buffers (`array.array`, read through typed memoryviews when
    compiled) of which the first `size` entries are the profile and the rest room to grow (doubled
    when full): an edit shifts raw memory in place and boxes no number. `times` and `free` show
    them as lists.

    Invariants: the segments are canonical (no two neighbours hold the same value), so they depend
    only on the function, not on the order of the additions that built it; and free units never drop
    below zero, since units are only taken on windows that `earliest`/`earlier` found free. Both
    make the shortcuts below exact.

    `move` is lazy: the last move stays pending as (units, start, begin, stop, end), i.e. -units on
    [start, begin) and +units on [stop, end) still to add, and a move that takes over where it left
    off (same units, its new window is the pending one's old window) merges into it: compressing a
    queue of identical jobs shifts each one into the slot its predecessor left, and the buffers
    change once instead of twice per job. The move is kept in typed fields (`moving`, `move_*`;
    `pending` shows it as a tuple). `earlier` answers around a pending move without applying it;
    every other method applies it first (`settle`). Read `times`/`free` only after `settle()`.

    Most checks of a pass find no room: they skip the saturated segments from now on to the first
    one with enough units free. That first segment per number of units is kept (`first_free`,
    indexed by units, valid while its `first_version` is `version`) until the segments change, so
    checks of jobs of the same size between two changes skip them once; a change only counts up
    `version`.
    """

    # segment k (k < size): `at[k]` its start, `count[k]` its free units
    at = cython.declare(cython.double[::1])
    count = cython.declare(cython.longlong[::1])
    size = cython.declare(cython.Py_ssize_t, visibility="public")
    # the pending move, if `moving`: -move_units on [move_start, move_begin), +move_units on
    # [move_stop, move_end)
    moving = cython.declare(cython.bint, visibility="public")
    move_units = cython.declare(cython.Py_ssize_t, visibility="public")
    move_start = cython.declare(cython.double, visibility="public")
    move_begin = cython.declare(cython.double, visibility="public")
    move_stop = cython.declare(cython.double, visibility="public")
    move_end = cython.declare(cython.double, visibility="public")
    # per number of units (0..total): the first segment with that many units free, as the segments
    # were at `first_version` (counts up on every change of the segments)
    total = cython.declare(cython.Py_ssize_t, visibility="public")
    first_free = cython.declare(cython.longlong[::1])
    first_version = cython.declare(cython.longlong[::1])
    version = cython.declare(cython.Py_ssize_t, visibility="public")

    def __init__(self, total: int, now: float):
        self.at = array("d", [now]) * FIRST_CAPACITY
        self.count = array("q", [total]) * FIRST_CAPACITY
        self.size = 1
        self.moving = False
        self.move_units = 0
        self.move_start = self.move_begin = self.move_stop = self.move_end = 0.0
        self.total = total
        self.first_free = array("q", [0]) * (total + 1)
        self.first_version = array("q", [-1]) * (total + 1)
        self.version = 0

    @property
    def times(self) -> list[float]:
        """The start of each segment, in time order."""
        at = self.at
        return [at[k] for k in range(self.size)]

    @property
    def free(self) -> list[int]:
        """The free units of each segment."""
        count = self.count
        return [count[k] for k in range(self.size)]

    @property
    def pending(self) -> tuple[int, float, float, float, float] | None:
        """The pending move as (units, start, begin, stop, end), or None."""
        if not self.moving:
            return None
        return (self.move_units, self.move_start, self.move_begin, self.move_stop, self.move_end)

    @cython.cfunc
    @cython.locals(
        source=cython.Py_ssize_t,
        target=cython.Py_ssize_t,
        length=cython.Py_ssize_t,
        at=cython.double[::1],
        count=cython.longlong[::1],
    )
    def _shift(self, source: int, target: int, length: int) -> None:
        """Copy `length` segments from index `source` to index `target` (the ranges may overlap).
        Compiled, C's memmove on each buffer: Cython's copy of overlapping slices goes through a
        temporary buffer (one allocation per edit), and an element loop is not turned into one."""
        at, count = self.at, self.count
        if not cython.compiled:  # plain Python: the arrays' own slice copy
            at[target : target + length] = at[source : source + length]
            count[target : target + length] = count[source : source + length]
            return
        if length > 0:
            memmove(
                cython.address(at[target]),
                cython.address(at[source]),
                length * cython.sizeof(cython.double),
            )
            memmove(
                cython.address(count[target]),
                cython.address(count[source]),
                length * cython.sizeof(cython.longlong),
            )

    @cython.cfunc
    @cython.locals(
        inner=cython.Py_ssize_t,
        stop=cython.Py_ssize_t,
        inside=cython.Py_ssize_t,
        outer=cython.Py_ssize_t,
        after=cython.Py_ssize_t,
    )
    def _respace(self, inner: int, stop: int, inside: int, outer: int, after: int) -> None:
        """Shift segments inner..stop-1 by `inside` and outer..size-1 by `after` (both >= 0 or both
        <= 0, |inside| <= |after| unless `after` is 0), in the order that overwrites none still to
        move."""
        if after > 0:  # rightwards: the last ones first
            self._shift(outer, outer + after, self.size - outer)
        if inside != 0:
            self._shift(inner, inner + inside, stop - inner)
        if after < 0:  # leftwards: those inside first
            self._shift(outer, outer + after, self.size - outer)

    @cython.cfunc
    @cython.locals(size=cython.Py_ssize_t, at=cython.double[::1], count=cython.longlong[::1])
    def _grow(self) -> None:
        """Twice the room, the segments copied."""
        size = self.size
        at = array("d", [0.0]) * (2 * size)
        count = array("q", [0]) * (2 * size)
        at[:size] = self.at[:size]
        count[:size] = self.count[:size]
        self.at, self.count = at, count

    @cython.ccall
    @cython.locals(
        units=cython.Py_ssize_t,
        count=cython.longlong[::1],
        index=cython.Py_ssize_t,
        size=cython.Py_ssize_t,
        known=cython.bint,
    )
    @cython.returns(cython.Py_ssize_t)
    def first_with(self, units: int) -> int:
        """Index of the first segment (pending move aside) with `units` free, or `size` if none."""
        known = 0 <= units <= self.total
        if known and self.first_version[units] == self.version:
            return self.first_free[units]
        count = self.count
        index, size = 0, self.size
        while index < size and count[index] < units:
            index += 1
        if known:
            self.first_free[units] = index
            self.first_version[units] = self.version
        return index

    @cython.ccall
    def settle(self) -> None:
        """Apply the pending move to the segments."""
        if self.moving:
            self.moving = False
            self.add(self.move_start, self.move_begin, -self.move_units)
            self.add(self.move_stop, self.move_end, self.move_units)

    @cython.ccall
    @cython.locals(
        now=cython.double,
        index=cython.Py_ssize_t,
        size=cython.Py_ssize_t,
        at=cython.double[::1],
        count=cython.longlong[::1],
    )
    def advance(self, now: float) -> None:
        """Forget the past before `now`."""
        if self.moving:
            self.settle()
        size = self.size
        index = _first_index(self.at, now, 0, size, after=True) - 1
        if index > 0:
            self._shift(index, 0, size - index)
            self.size = size - index
            self.version += 1
        self.at[0] = now

    @cython.ccall
    @cython.locals(
        begin=cython.double,
        end=cython.double,
        delta=cython.Py_ssize_t,
        at=cython.double[::1],
        count=cython.longlong[::1],
        size=cython.Py_ssize_t,
        first=cython.Py_ssize_t,
        last=cython.Py_ssize_t,
        k=cython.Py_ssize_t,
        split_first=cython.Py_ssize_t,
        split_last=cython.Py_ssize_t,
        merge_first=cython.Py_ssize_t,
        merge_last=cython.Py_ssize_t,
        inside=cython.Py_ssize_t,
        after=cython.Py_ssize_t,
        left=cython.longlong,
        right=cython.longlong,
    )
    def add(self, begin: float, end: float, delta: int) -> None:
        """Add `delta` free units on [begin, end) (negative to reserve).

        One edit in place: a boundary at `begin` or `end` is inserted if new, and dropped if the
        segments on its two sides become equal (the canonical form; never one just inserted, whose
        sides differ by `delta`), so the segments after `end` shift once, by the net count, and
        those inside once."""
        if self.moving:
            self.settle()
        if begin < self.at[0]:
            begin = self.at[0]
        if begin >= end or delta == 0:
            return
        self.version += 1
        size = self.size
        if size + 2 > len(self.at):
            self._grow()
        at, count = self.at, self.count
        # old segments first..last-1 lie inside [begin, end); a split one keeps its units outside
        first = _first_index(at, begin, 0, size, after=False)
        split_first = 1 if first == size or at[first] != begin else 0
        if end < INF:
            last = _first_index(at, end, first, size, after=False)
            split_last = 1 if last == size or at[last] != end else 0
        else:
            last, split_last = size, 0
        merge_first = merge_last = 0
        if not split_first and first > 0 and count[first - 1] == count[first] + delta:
            merge_first = 1
        if not split_last and last < size and count[last - 1] + delta == count[last]:
            merge_last = 1
        left = count[first - 1] if split_first else 0  # the units of the segment `begin` splits
        right = count[last - 1] if split_last else 0  # and of the one `end` splits
        inside = split_first - merge_first  # how far the segments inside move
        after = inside + split_last - merge_last  # and those after `end`
        self._respace(first + merge_first, last, inside, last + merge_last, after)
        for k in range(first + split_first, last + inside):
            count[k] += delta
        if split_first:
            at[first] = begin
            count[first] = left + delta
        if split_last:
            at[last + inside] = end
            count[last + inside] = right
        self.size = size + after

    @cython.ccall
    @cython.locals(
        begin=cython.double,
        end=cython.double,
        start=cython.double,
        stop=cython.double,
        units=cython.Py_ssize_t,
    )
    def move(self, begin: float, end: float, start: float, stop: float, units: int) -> None:
        """Move a reservation of `units` from [begin, end) to [start, stop), start < begin,
        stop <= end."""
        if self.moving:
            if self.move_units == units and self.move_begin == start and self.move_end == stop:
                self.move_begin, self.move_end = begin, end
                return
            self.settle()
        self.moving = True
        self.move_units = units
        self.move_start, self.move_begin, self.move_stop, self.move_end = start, begin, stop, end

    @cython.ccall
    @cython.locals(duration=cython.double, units=cython.Py_ssize_t, size=cython.Py_ssize_t)
    @cython.returns(cython.double)
    def earliest(self, duration: float, units: int) -> float:
        """The earliest start from now with `units` free during `duration` (a new reservation,
        003 §5.1.3)."""
        if self.moving:
            self.settle()
        size = self.size
        # the last segment, free for ever, holds every job: never NO_START
        return self._first_window(duration, units, self.first_with(units), size, size, INF)

    @cython.cfunc
    @cython.locals(
        duration=cython.double,
        units=cython.Py_ssize_t,
        k=cython.Py_ssize_t,
        last=cython.Py_ssize_t,
        limit=cython.Py_ssize_t,
        before=cython.double,
        at=cython.double[::1],
        count=cython.longlong[::1],
        m=cython.Py_ssize_t,
        rest=cython.Py_ssize_t,
        start=cython.double,
        stop=cython.double,
    )
    @cython.returns(cython.double)
    def _first_window(
        self, duration: float, units: int, k: int, last: int, limit: int, before: float
    ) -> float:
        """The first start t of the segments (pending move aside) at a segment in [k, last) with
        `units` free on [t, t + duration) and, unless `before` is INF, t + duration < `before`; or
        NO_START. Segments from `limit` on are not checked: the window reaches them only if it
        fits. Shared by `earliest` (no bound) and `_whole_window` (a window ending before a
        start)."""
        at, count = self.at, self.count
        while k < last:
            if count[k] < units:
                k += 1
                continue
            start = at[k]
            stop = start + duration
            if before < INF and stop >= before:
                return NO_START
            m = k + 1
            while m < limit:
                if at[m] >= stop:
                    return start
                if count[m] < units:
                    break
                m += 1
                # a long window: check the rest at once (else go on to where it fails)
                if m - k == 16:
                    rest = _first_index(at, stop, m, limit, after=False)
                    if rest - m > 16 and _at_least(count, units, m, rest):
                        return start
            else:
                return start
            k = m + 1
        return NO_START

    def earlier(self, duration: float, units: int, begin: float, end: float) -> float | None:
        """The earliest start before `begin` for a job holding `units` on [begin, end), or None.

        This is where Conservative compression asks whether a reserved job can move up (003 §5.1.3);
        `earlier_start` answers it with NO_START for None."""
        found = self.earlier_start(duration, units, begin, end)
        return None if found == NO_START else found

    @cython.ccall
    @cython.locals(
        duration=cython.double,
        units=cython.Py_ssize_t,
        begin=cython.double,
        end=cython.double,
        now=cython.double,
        found=cython.double,
        taken=cython.Py_ssize_t,
        low=cython.double,
        high=cython.double,
        before=cython.Py_ssize_t,
        first=cython.Py_ssize_t,
        k=cython.Py_ssize_t,
    )
    @cython.returns(cython.double)
    def earlier_start(self, duration: float, units: int, begin: float, end: float) -> float:
        """`earlier` as a C double: the earliest start before `begin`, or NO_START.

        A start t before `begin` works if `units` are free on [t, min(t + duration, begin)): past
        `begin` the job's own units are there, and free units never drop below zero. So the answer
        is the first window that fits whole before `begin` (only possible if
        now + duration < begin), else the start of the run of segments with `units` free that
        reaches `begin`, if there is one: no scan from now for long jobs.
        """
        if end < begin + duration:  # its own units do not cover its window: no shortcut
            return self._earlier_scan(duration, units, begin, end)
        # before `begin` the profile is the segments less `taken` units on [low, high): the pending
        # move, unless the units it gives back lie before `begin` (then it is applied)
        taken, low, high = 0, 0.0, 0.0
        if self.moving and begin > self.move_start:
            if self.move_stop < begin:
                self.settle()
            else:
                taken, low, high = self.move_units, self.move_start, self.move_begin
        # no segment before `begin` with `units` free (fewer still less the pending move): none
        first = self.first_with(units)
        if first == self.size or self.at[first] >= begin:
            return NO_START
        before = _first_index(self.at, begin, first, self.size, after=False)  # 0..before-1: earlier
        now = self.at[0]
        if now + duration < begin:  # a whole window may fit before `begin`
            found = self._whole_window(duration, units, begin, before)
            if found != NO_START:
                # a window that overlaps the pending move: apply it first
                if taken and found < high and found + duration > low:
                    self.settle()
                    return self.earlier_start(duration, units, begin, end)
                return found
        k = before - 1  # else the start of the run of free segments that reaches `begin`, if any
        if k < 0 or self.count[k] < units:
            return NO_START
        if taken and begin > low:  # the run may cross [low, high), where `taken` fewer are free
            return self._run_start(k, begin, units, taken, low, high)
        return self._run_through(k, units)

    @cython.cfunc
    @cython.locals(k=cython.Py_ssize_t, units=cython.Py_ssize_t, count=cython.longlong[::1])
    @cython.returns(cython.double)
    def _run_through(self, k: int, units: int) -> float:
        """Start of the run of segments with `units` free (as listed) that ends in segment k."""
        count = self.count
        while k > 0 and count[k - 1] >= units:
            k -= 1
        return self.at[k]

    @cython.cfunc
    @cython.locals(
        duration=cython.double,
        units=cython.Py_ssize_t,
        begin=cython.double,
        before=cython.Py_ssize_t,
        last=cython.Py_ssize_t,
    )
    @cython.returns(cython.double)
    def _whole_window(self, duration: float, units: int, begin: float, before: int) -> float:
        """The first start t of the segments (pending move aside) with `units` free on [t, t +
        duration) and t + duration < `begin`, or NO_START; segments before..: at or after
        `begin`."""
        # only starts t with t + duration < begin (slack for rounding)
        last = _first_index(
            self.at,
            begin - duration + WINDOW_SLACK * (abs(begin) + duration + 1.0),
            0,
            before,
            after=True,
        )
        return self._first_window(duration, units, self.first_with(units), last, before, begin)

    @cython.cfunc
    @cython.locals(
        duration=cython.double,
        units=cython.Py_ssize_t,
        begin=cython.double,
        end=cython.double,
        at=cython.double[::1],
        count=cython.longlong[::1],
        size=cython.Py_ssize_t,
        k=cython.Py_ssize_t,
        m=cython.Py_ssize_t,
        available=cython.Py_ssize_t,
        start=cython.double,
        stop=cython.double,
        point=cython.double,
    )
    @cython.returns(cython.double)
    def _earlier_scan(self, duration: float, units: int, begin: float, end: float) -> float:
        """`earlier_start` by a scan of every start from now, counting the job's own units on
        [begin, end)."""
        self.settle()
        at, count = self.at, self.count
        size, k = self.size, 0
        while True:
            while k < size and at[k] < begin and count[k] < units:
                k += 1
            if k == size:
                return NO_START
            start = at[k]
            if start >= begin:
                return NO_START
            stop = start + duration
            m = k + 1
            while m < size:
                point = at[m]
                if point >= stop:
                    return start
                available = count[m]
                if begin <= point < end:
                    available += units
                if available < units:
                    break
                m += 1
            else:
                return start
            k = m + 1

    @cython.cfunc
    @cython.locals(
        k=cython.Py_ssize_t,
        begin=cython.double,
        units=cython.Py_ssize_t,
        taken=cython.Py_ssize_t,
        low=cython.double,
        high=cython.double,
        at=cython.double[::1],
        count=cython.longlong[::1],
        point=cython.double,
        time=cython.double,
    )
    @cython.returns(cython.double)
    def _run_start(
        self,
        k: int,
        begin: float,
        units: int,
        taken: int,
        low: float,
        high: float,
    ) -> float:
        """Start of the run reaching `begin` (the point before it is in segment k) of a profile that
        is the segments less `taken` units on [low, high), low < begin: walked leftwards above, in
        and below it; NO_START if there is none."""
        at, count = self.at, self.count
        point = begin
        if begin > high:  # above [low, high): as listed (count[k] >= units already)
            time = at[k]
            while time > high:
                if count[k - 1] < units:
                    return time
                k -= 1
                time = at[k]
            point = high
            if time == high:
                k -= 1
        if count[k] - taken < units:  # the piece just before `point` is in [low, high)
            return point if point < begin else NO_START
        time = at[k]
        while time > low:
            if count[k - 1] - taken < units:
                return time
            k -= 1
            time = at[k]
        if time == low:
            if k == 0:
                return low
            k -= 1
        if count[k] < units:  # below [low, high): as listed
            return low
        return self._run_through(k, units)


class Reservations(Mapping):
    """The reservations of a `ConservativeBackfill` as a read-only mapping, waiting job -> (start,
    end, units, duration): what callers outside the pass read (its own steps read the typed
    arrays)."""

    __slots__ = ("backfill",)

    def __init__(self, backfill: ConservativeBackfill):
        self.backfill = backfill

    def __getitem__(self, job: int) -> tuple[float, float, int, float]:
        found = self.backfill.reservation(job)
        if found is None:
            raise KeyError(job)
        return found

    def __iter__(self) -> Iterator[int]:
        return iter(self.backfill.holders)

    def __len__(self) -> int:
        return len(self.backfill.holders)

    def __contains__(self, job: object) -> bool:
        return job in self.backfill.holders


@cython.cclass
@cython.boundscheck(False)  # job indices are within the arrays (`_holds` checks) and not negative
@cython.wraparound(False)
@cython.initializedcheck(False)  # __init__ sets every array
class ConservativeBackfill:
    """Reservations for the first `depth` waiting jobs in a free-unit profile, compressed on early
    ends.

    The rule is thesis 003 §5.1.3: each job in the window holds the earliest slot it had when it was
    placed or last moved; when capacity appears (a job ends before its predicted end, or a
    reservation leaves the window) every reservation, in queue order, moves to its earliest slot if
    that is earlier; a job whose reservation starts now is started. Each pass asks the engine for
    one wake-up, at the earliest reservation start (`next_begin`), not one per reservation: every
    other start is at or after it, and the pass there asks for the next one.

    The reservations are typed arrays indexed by job (`held_*`, valid while `holds[job]`), so a
    pass reads and moves them without a dictionary or a tuple; `slot` shows them as a mapping.
    Compiled, it is an extension type: its fields are read in C and its steps are C calls, the
    small ones (`final`: a subclass may override `schedule`, not them) direct and inlined.
    """

    engine = cython.declare(object, visibility="public")
    depth = cython.declare(cython.Py_ssize_t, visibility="public")
    profile = cython.declare(object, visibility="public")
    # per job: 1 while it holds a reservation of held_units on [held_begin, held_end), for
    # held_duration (room for every job of the run, doubled if a larger index comes)
    holds = cython.declare(cython.longlong[::1])
    held_begin = cython.declare(cython.double[::1])
    held_end = cython.declare(cython.double[::1])
    held_duration = cython.declare(cython.double[::1])
    held_units = cython.declare(cython.longlong[::1])
    holders = cython.declare(set, visibility="public")  # the jobs holding a reservation
    booked = cython.declare(dict, visibility="public")  # running job -> (predicted end, units)
    first = cython.declare(object, visibility="public")  # job -> first reservation, or None
    dirty = cython.declare(cython.bint, visibility="public")  # capacity appeared: compress
    pending = cython.declare(cython.bint, visibility="public")  # jobs without a reservation
    next_begin = cython.declare(cython.double, visibility="public")  # no reservation before this

    def __init__(self, engine: SchedulerView, depth: int, first_reservations: dict | None = None):
        self.engine = engine
        self.depth = max(depth, 1)
        self.profile = Profile(engine.total_units, engine.now)
        self._room_for(max(len(engine.estimate), 1), 0)
        self.holders = set()
        self.booked = {}
        self.first = first_reservations
        self.dirty = False
        self.pending = True
        self.next_begin = INF

    @property
    def slot(self) -> Reservations:
        """The reservations, waiting job -> (start, end, units, duration)."""
        return Reservations(self)

    @cython.ccall
    @cython.locals(job=cython.Py_ssize_t)
    def reservation(self, job: int) -> tuple[float, float, int, float] | None:
        """(start, end, units, duration) of the reservation `job` holds, or None."""
        if job < 0 or job >= len(self.holds) or not self.holds[job]:
            return None
        return (
            self.held_begin[job],
            self.held_end[job],
            self.held_units[job],
            self.held_duration[job],
        )

    @cython.final
    @cython.cfunc
    @cython.locals(
        jobs=cython.Py_ssize_t,
        kept=cython.Py_ssize_t,
        holds=cython.longlong[::1],
        begin=cython.double[::1],
        end=cython.double[::1],
        duration=cython.double[::1],
        units=cython.longlong[::1],
    )
    def _room_for(self, jobs: int, kept: int) -> None:
        """Arrays for job indices below `jobs`, the first `kept` entries copied from the arrays
        before."""
        holds, units = array("q", [0]) * jobs, array("q", [0]) * jobs
        begin, end, duration = (
            array("d", [0.0]) * jobs,
            array("d", [0.0]) * jobs,
            array("d", [0.0]) * jobs,
        )
        if kept:
            holds[:kept] = self.holds[:kept]
            begin[:kept] = self.held_begin[:kept]
            end[:kept] = self.held_end[:kept]
            duration[:kept] = self.held_duration[:kept]
            units[:kept] = self.held_units[:kept]
        self.holds, self.held_begin, self.held_end = holds, begin, end
        self.held_duration, self.held_units = duration, units

    @cython.final
    @cython.cfunc
    @cython.locals(
        job=cython.Py_ssize_t,
        begin=cython.double,
        end=cython.double,
        units=cython.Py_ssize_t,
        duration=cython.double,
    )
    def _hold(self, job: int, begin: float, end: float, units: int, duration: float) -> None:
        """Record a new reservation of `job` (it holds none)."""
        if job >= len(self.holds):
            self._room_for(2 * job + 1, len(self.holds))
        self.holds[job] = 1
        self.held_begin[job], self.held_end[job] = begin, end
        self.held_units[job], self.held_duration[job] = units, duration
        self.holders.add(job)

    @cython.final
    @cython.cfunc
    @cython.locals(job=cython.Py_ssize_t)
    def _release(self, job: int) -> None:
        """`job` holds its reservation no more (its fields stay readable until the next hold)."""
        self.holds[job] = 0
        self.holders.discard(job)

    def arrived(self) -> None:
        self.pending = True

    def finished(self, job: int) -> None:
        end, units = self.booked.pop(job)
        if end > self.engine.now:
            self.profile.add(self.engine.now, end, units)
            self.dirty = True

    def retire(self, running: Container[int]) -> None:
        """`finished` for every booked job that is no longer `running`."""
        for job in [job for job in self.booked if job not in running]:
            self.finished(job)

    @property
    def idle(self) -> bool:
        """A pass now would change nothing: no capacity appeared, no job needs a reservation and
        none is due (the caller may skip building the window)."""
        return self._idle_at(self.engine.now)

    @cython.final
    @cython.cfunc
    @cython.locals(now=cython.double)
    @cython.returns(cython.bint)
    def _idle_at(self, now: float) -> bool:
        return not self.dirty and not self.pending and now < self.next_begin

    @cython.locals(
        window=list,
        kept=cython.Py_ssize_t,
        now=cython.double,
        profile=Profile,
        next_begin=cython.double,
        started=cython.Py_ssize_t,
        job=cython.Py_ssize_t,
    )
    def schedule(self, order: list[int]) -> int:
        """Place/compress reservations in the first `depth` jobs of `order`, start the jobs due now;
        returns how many started.

        A pass where nothing can move or be due (no capacity appeared, now before every reservation)
        only places the jobs of the window that have no reservation yet (arrived, or slid into the
        window when jobs ahead of them started), and does nothing if there are none; `next_begin` is
        then a lower bound, which is enough: a pass it does not skip finds nothing due and
        recomputes it."""
        window = order if len(order) <= self.depth else order[: self.depth]
        kept = self._reserved_in(window) if self.holders else 0
        if kept != len(window):  # jobs without a reservation in the window: arrived or slid in
            self.pending = True
        engine = self.engine
        now = engine.now
        if self._idle_at(now):
            return 0
        profile = self.profile
        profile.advance(now)
        stale = self.holders.difference(window) if kept != len(self.holders) else ()
        for job in stale:  # reserved jobs that left the window give their units back
            self._release(job)
            profile.add(self.held_begin[job], self.held_end[job], self.held_units[job])
        if self.dirty or stale or now >= self.next_begin:
            due, next_begin = self._compress(window, now, self.dirty or bool(stale))
        # nothing reserved can move or is due: only place the jobs that have no reservation yet
        elif kept != len(window):
            due, next_begin = self._place(self._unreserved(window), now, self.next_begin)
        else:
            due, next_begin = [], self.next_begin
        self.dirty = self.pending = False
        started = 0
        for job in due:
            self._release(job)
            if engine.start(job):
                self.booked[job] = (engine.predicted_end[job], self.held_units[job])
                started += 1
            else:
                profile.add(self.held_begin[job], self.held_end[job], self.held_units[job])
                self.pending = True
        self.next_begin = next_begin
        if next_begin < INF:  # the pass there starts what is due and asks for the next one
            engine.request_wakeup(next_begin)
        return started

    @cython.final
    @cython.cfunc
    @cython.locals(job=cython.Py_ssize_t)
    @cython.returns(cython.bint)
    def _holds(self, job: int) -> bool:
        """`job` holds a reservation."""
        return job < len(self.holds) and self.holds[job] != 0

    @cython.ccall
    @cython.locals(
        window=list,
        kept=cython.Py_ssize_t,
        job=cython.Py_ssize_t,
        holds=cython.longlong[::1],
        jobs=cython.Py_ssize_t,
    )
    @cython.returns(cython.Py_ssize_t)
    def _reserved_in(self, window: list[int]) -> int:
        """How many jobs of `window` hold a reservation (`_holds` with the array read once: every
        pass asks it of the whole window)."""
        holds, kept = self.holds, 0
        jobs = len(holds)
        for job in window:
            if job < jobs and holds[job] != 0:
                kept += 1
        return kept

    @cython.ccall
    @cython.locals(
        window=list, job=cython.Py_ssize_t, holds=cython.longlong[::1], jobs=cython.Py_ssize_t
    )
    def _unreserved(self, window: list[int]) -> list[int]:
        """The jobs of `window` that hold no reservation, in order."""
        holds = self.holds
        jobs = len(holds)
        return [job for job in window if job >= jobs or holds[job] == 0]

    @cython.ccall
    @cython.locals(
        units=cython.Py_ssize_t,
        duration=cython.double,
        begin=cython.double,
        end=cython.double,
        profile=Profile,
        now=cython.double,
        next_begin=cython.double,
        job=cython.Py_ssize_t,
    )
    def _place(self, jobs: list[int], now: float, next_begin: float) -> tuple[list[int], float]:
        """Reserve the earliest slot for each of `jobs` in order; returns the jobs due now and the
        earliest later reservation start."""
        engine, profile, first = self.engine, self.profile, self.first
        estimate, units_of, table = engine.estimate, engine.units, engine.units_table
        due = []
        for job in jobs:
            units = table[job] if table is not None else units_of(job)
            duration = estimate[job]
            begin = profile.earliest(duration, units)
            end = begin + duration
            profile.add(begin, end, -units)
            self._hold(job, begin, end, units, duration)
            if first is not None and job not in first:
                first[job] = begin
            if begin <= now:
                due.append(job)
                continue
            if begin < next_begin:
                next_begin = begin
        return due, next_begin

    @cython.ccall
    @cython.locals(
        profile=Profile,
        window=list,
        due=list,
        stuck=cython.bint,
        stuck_begin=cython.double,
        stuck_end=cython.double,
        stuck_units=cython.Py_ssize_t,
        stuck_duration=cython.double,
        now=cython.double,
        next_begin=cython.double,
        begin=cython.double,
        end=cython.double,
        old_begin=cython.double,
        old_end=cython.double,
        duration=cython.double,
        units=cython.Py_ssize_t,
        dirty=cython.bint,
        moved=cython.double,
        job=cython.Py_ssize_t,
    )
    def _compress(self, window: list[int], now: float, dirty: bool) -> tuple[list[int], float]:
        """The full pass over the window in queue order (thesis 003 §5.1.3): a reserved job moves to
        its earliest slot if that is earlier (only when capacity appeared, `dirty`), a job without a
        reservation gets its earliest slot. Returns the jobs due now and the earliest later start.
        """
        engine, profile, first = self.engine, self.profile, self.first
        estimate, units_of, table = engine.estimate, engine.units, engine.units_table
        due, next_begin = [], INF
        # the last reservation that cannot move in the profile as it is now (if `stuck`): identical
        # jobs queued together share its answer until the profile changes
        stuck = False
        stuck_begin = stuck_end = stuck_duration = 0.0
        stuck_units = 0
        for job in window:
            if self._holds(job):
                old_begin, old_end = self.held_begin[job], self.held_end[job]
                units, duration = self.held_units[job], self.held_duration[job]
                if old_begin <= now:
                    due.append(job)
                    continue
                if not dirty or (
                    stuck
                    and old_begin == stuck_begin
                    and old_end == stuck_end
                    and units == stuck_units
                    and duration == stuck_duration
                ):
                    if old_begin < next_begin:
                        next_begin = old_begin
                    continue
                moved = profile.earlier_start(duration, units, old_begin, old_end)
                if moved == NO_START:
                    stuck = True
                    stuck_begin, stuck_end = old_begin, old_end
                    stuck_units, stuck_duration = units, duration
                    if old_begin < next_begin:
                        next_begin = old_begin
                    continue
                begin = moved
                end = begin + duration
                profile.move(old_begin, old_end, begin, end, units)
                # its first reservation is already recorded
                self.held_begin[job], self.held_end[job] = begin, end
            else:
                units = table[job] if table is not None else units_of(job)
                duration = estimate[job]
                begin = profile.earliest(duration, units)
                end = begin + duration
                profile.add(begin, end, -units)
                self._hold(job, begin, end, units, duration)
                if first is not None and job not in first:
                    first[job] = begin
            stuck = False
            if begin <= now:
                due.append(job)
                continue
            if begin < next_begin:
                next_begin = begin
        return due, next_begin


def conservative_pass(
    backfill: Reserving, next_window: Callable[[], list[int]], waiting: Sized
) -> None:
    """Reserve and start the waiting jobs in queue order until a round starts nothing (003 §5.1.3).

    `next_window()` gives the waiting jobs in queue order (at least the first `depth`). Each start
    slides the window: the jobs entering it without a reservation are placed by the next round
    (`schedule` finds them), and once every waiting job holds a reservation no round can start more.
    `waiting` only needs to be at least as long as the queue."""
    while waiting:
        if not backfill.schedule(next_window()) or len(waiting) <= len(backfill.slot):
            return
