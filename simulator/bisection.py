"""The simulator's one binary search over its ascending lists: the sorted columns' job indices
and units (`cosched.simulator.view`) and the compact allocator's idle nodes; the heap of the
engine's completion events, (end, job index, version) triples (`Completions`); and the running
jobs' (predicted end, job index) pairs the engine keeps in `by_end` (`EndOrder`); and the jobs
whose speeds follow a change, read in ascending order (`TouchedJobs`).

Compiled, `_search` is a C loop that reads the items as C integers: no Python call and no Python
comparison per step. In plain Python, `int_position` hands the same question to the `bisect`
module's C functions instead, which give the same positions (the tests check `_search` against
them), because a binary search written in Python is slower than the C one there. The same holds
for the heap and the pairs: compiled, `Completions._push` and `_pop` are `heapq`'s algorithm on
typed buffers, and `EndOrder` searches and shifts its typed buffers; in plain Python, they call
`heapq`'s and `bisect`'s own functions on lists of tuples.
"""

from __future__ import annotations

import math
from array import array
from bisect import bisect_left, bisect_right, insort
from collections.abc import Iterable, Iterator
from heapq import heappop, heappush

try:  # Cython's pure-Python mode: C types when compiled (bisection.pxd), plain Python here
    import cython

    if not cython.compiled:  # plain Python: the light stand-in, not Cython's slower shadow
        raise ModuleNotFoundError
except ModuleNotFoundError:
    from cosched import _pure_cython as cython

__all__ = ["int_position", "TouchedJobs", "Completions", "EndOrder"]


def int_position(items: list, value: int, low: int, high: int, right: bool) -> int:
    """Where `value` goes in the ascending integers ``items[low:high]``: before its equals, as
    ``bisect_left``, or after them (`right`), as ``bisect_right``."""
    if not cython.compiled:
        return (bisect_right if right else bisect_left)(items, value, low, high)
    return _search(items, value, low, high, right)


@cython.cclass  # final (bisection.pxd): its methods are called directly, not through a table
@cython.wraparound(False)
@cython.initializedcheck(False)  # __init__ sets the buffers
class TouchedJobs:
    """The engine's jobs whose speeds follow a start, resize, stop or end since its last speed
    update, each recorded once: job indices (>= 0, below the run's job count) in a typed buffer,
    the first `count` of `jobs` in the order they came, and a mark per job, both cleared as
    `ascending_in_state` reads them. The same code in plain Python (on an ``array`` and a
    ``bytearray``); compiled, recording and reading a job are C reads and writes, no Python int."""

    def __init__(self, jobs: int) -> None:
        self.jobs = array("q", [0]) * jobs
        self._marked = bytearray(jobs)  # per job: recorded since the last read
        self.count = 0

    @cython.locals(job=cython.Py_ssize_t)
    def add(self, job: int) -> None:
        """Record `job` (once: again before the next read does nothing)."""
        if not self._marked[job]:
            self._marked[job] = 1
            self.jobs[self.count] = job
            self.count += 1

    @cython.boundscheck(False)  # the recorded jobs index `states` and the buffers
    @cython.locals(states=list, wanted=cython.Py_ssize_t, count=cython.Py_ssize_t)
    @cython.locals(read=cython.Py_ssize_t, job=cython.Py_ssize_t, position=cython.Py_ssize_t)
    def ascending_in_state(self, states: list[int], wanted: int) -> int:
        """Write the recorded jobs whose state is `wanted` to the start of `jobs`, ascending, and
        return their count; nothing stays recorded. An insertion sort in place (a few jobs per
        update): the `count` kept never pass the job being read."""
        count = 0
        for read in range(self.count):
            job = self.jobs[read]
            self._marked[job] = 0
            if cython.cast(cython.Py_ssize_t, states[job]) != wanted:
                continue
            position = count
            while position and self.jobs[position - 1] > job:  # the larger ones move up one place
                self.jobs[position] = self.jobs[position - 1]
                position -= 1
            self.jobs[position] = job
            count += 1
        self.count = 0
        return count

    @cython.locals(count=cython.Py_ssize_t, at=cython.Py_ssize_t)
    def first(self, count: int) -> list[int]:
        """The first `count` jobs of the buffer, as a list."""
        return [self.jobs[at] for at in range(count)]


@cython.boundscheck(False)  # its callers give 0 <= low <= high <= len(items)
@cython.wraparound(False)
@cython.locals(middle=cython.Py_ssize_t, other=cython.Py_ssize_t)
def _search(items: list, value: int, low: int, high: int, right: bool) -> int:
    """The first position in ``items[low:high]`` whose integer is above `value` (`right`) or not
    below it. The bounds must be within `items` (compiled, they are not checked)."""
    while low < high:
        middle = (low + high) >> 1
        other = items[middle]
        if other < value or (right and other == value):
            low = middle + 1
        else:
            high = middle
    return low


FIRST_CAPACITY = 64  # events the completion heap holds before its buffers first double
INF = cython.declare(cython.double, math.inf)


@cython.cclass  # final (bisection.pxd): its methods are called directly, not through a table
@cython.boundscheck(False)  # every index below is within the buffers and not negative
@cython.wraparound(False)
@cython.initializedcheck(False)  # __init__ sets every buffer
class Completions:
    """The heap of the engine's completion events, (end, job index, version) triples taken off in
    ascending order (end, then job, then version) as ``heapq`` takes them.

    Compiled, the triples live in three typed buffers (`array.array`, read through typed
    memoryviews; doubled when full) of which the first `size` entries are the heap, kept by `_push`
    and `_pop`, ``heapq``'s algorithm comparing C numbers: an event is no tuple and its end no
    boxed float. In plain Python, `push` and `pop_due` hand (end, job, version) tuples to
    ``heapq``'s own C functions over a list instead (`_push` and `_pop` in Python are slower)."""

    def __init__(self) -> None:
        self.ends = array("d", [0.0]) * FIRST_CAPACITY
        self.jobs = array("q", [0]) * FIRST_CAPACITY
        self.versions = array("q", [0]) * FIRST_CAPACITY
        self.size = 0
        self._events: list[tuple[float, int, int]] = []  # plain Python's heap

    def __len__(self) -> int:
        return self.size if cython.compiled else len(self._events)

    def earliest(self) -> float:
        """The earliest end of an event in the heap (stale ones included); INF if it is empty."""
        if not cython.compiled:
            return self._events[0][0] if self._events else INF
        return self.ends[0] if self.size else INF

    def push(self, end: float, job: int, version: int) -> None:
        """The event (`end`, `job`, `version`) joins the heap, as ``heapq.heappush``."""
        if not cython.compiled:
            heappush(self._events, (end, job, version))
            return
        self._push(end, job, version)

    @cython.locals(latest=cython.Py_ssize_t, job=cython.Py_ssize_t, version=cython.Py_ssize_t)
    def pop_due(self, now: float, current: list) -> int:
        """The job of the earliest event ending by `now` whose version is the job's `current` one,
        taken off the heap with the stale events before it; -1 if none is due."""
        while self.earliest() <= now:
            if cython.compiled:
                job, version = self.jobs[0], self.versions[0]
                self._pop()
            else:
                _, job, version = heappop(self._events)
            latest = current[job]
            if version == latest:
                return job
        return -1

    def _push(self, end: float, job: int, version: int) -> None:
        """``heapq.heappush`` on the buffers (its `_siftdown` from the end)."""
        if self.size == len(self.ends):
            self._grow()
        self.size += 1
        self._sift_down(0, self.size - 1, end, job, version)

    @cython.locals(size=cython.Py_ssize_t, position=cython.Py_ssize_t, child=cython.Py_ssize_t)
    def _pop(self) -> None:
        """``heapq.heappop`` on the buffers, the root dropped: the last event takes the root's
        place, goes down the smaller children to a leaf, then back up to its place. (The buffers
        are read as fields: a local memoryview would cost a reference count per call.)"""
        size = self.size - 1
        self.size = size
        position, child = 0, 1
        while child < size:
            if child + 1 < size and not self._earlier(child, child + 1):
                child += 1
            self._move(child, position)
            position = child
            child = 2 * position + 1
        if size:
            self._sift_down(0, position, self.ends[size], self.jobs[size], self.versions[size])

    @cython.locals(parent=cython.Py_ssize_t)
    def _sift_down(self, start: int, position: int, end: float, job: int, version: int) -> None:
        """``heapq._siftdown``: the event (`end`, `job`, `version`) climbs from `position` while
        it comes before its parent."""
        while position > start:
            parent = (position - 1) >> 1
            if not _before(
                end, job, version, self.ends[parent], self.jobs[parent], self.versions[parent]
            ):
                break
            self._move(parent, position)
            position = parent
        self.ends[position], self.jobs[position], self.versions[position] = end, job, version

    def _earlier(self, first: int, second: int) -> bool:
        """The event at `first` comes before the one at `second`."""
        return _before(
            self.ends[first],
            self.jobs[first],
            self.versions[first],
            self.ends[second],
            self.jobs[second],
            self.versions[second],
        )

    def _move(self, source: int, target: int) -> None:
        """The event at `source` is copied to `target`."""
        self.ends[target] = self.ends[source]
        self.jobs[target] = self.jobs[source]
        self.versions[target] = self.versions[source]

    @cython.locals(
        size=cython.Py_ssize_t,
        ends=cython.double[::1],
        jobs=cython.longlong[::1],
        versions=cython.longlong[::1],
    )
    def _grow(self) -> None:
        """Twice the room, the events copied."""
        size = self.size
        ends = array("d", [0.0]) * (2 * size)
        jobs = array("q", [0]) * (2 * size)
        versions = array("q", [0]) * (2 * size)
        ends[:size], jobs[:size] = self.ends[:size], self.jobs[:size]
        versions[:size] = self.versions[:size]
        self.ends, self.jobs, self.versions = ends, jobs, versions


@cython.cfunc
@cython.inline
@cython.locals(at=cython.double, job=cython.longlong, version=cython.longlong)
@cython.locals(other=cython.double, other_job=cython.longlong, other_version=cython.longlong)
@cython.returns(cython.bint)
def _before(at: float, job: int, version: int, other: float, other_job: int, other_version: int):
    """(`at`, `job`, `version`) < (`other`, `other_job`, `other_version`): the first field that
    differs decides."""
    if at != other:
        return at < other
    if job != other_job:
        return job < other_job
    return version < other_version


@cython.cclass  # final (bisection.pxd): its methods are called directly, not through a table
@cython.boundscheck(False)  # every index below is within the buffers and not negative
@cython.wraparound(False)
@cython.initializedcheck(False)  # __init__ sets the buffer
class EndOrder:
    """The running jobs as (predicted end, job index) pairs, ascending by end, then job index (the
    one tie rule): the engine's `by_end`. It reads as a sequence of those pairs (``len``,
    iteration, indices and slices); only the engine changes it (`add`, `remove`, `move`).

    Compiled, the pairs live in two typed buffers (`array.array`, read through typed memoryviews;
    doubled when full) of which the first `size` entries are the pairs: a start or an end searches
    and shifts C numbers, and makes no tuple nor boxed float. In plain Python, the pairs are tuples
    in a list kept by ``bisect``'s C functions (the same order)."""

    def __init__(self, pairs: Iterable[tuple[float, int]] = ()) -> None:
        self.ends = array("d", [0.0]) * FIRST_CAPACITY
        self.jobs = array("q", [0]) * FIRST_CAPACITY
        self.size = 0
        self.pairs: list[tuple[float, int]] = []  # plain Python: the pairs (compiled: empty)
        for predicted, job in pairs:
            self.add(predicted, job)

    def __len__(self) -> int:
        return self.size if cython.compiled else len(self.pairs)

    @cython.locals(position=cython.Py_ssize_t)
    def pair_at(self, position: int) -> tuple[float, int]:
        """The (predicted end, job) pair at `position` (0 <= `position` < ``len``; compiled, a C
        pair, not checked: Python reads a pair by index, which is)."""
        if not cython.compiled:
            return self.pairs[position]
        return self.ends[position], self.jobs[position]

    @cython.locals(size=cython.Py_ssize_t, position=cython.Py_ssize_t)
    def add(self, predicted: float, job: int) -> None:
        """The running `job`, predicted to end at `predicted`, takes its place."""
        if not cython.compiled:
            insort(self.pairs, (predicted, job))
            return
        size = self.size
        if size == len(self.ends):
            self._grow(size)
        position = self._position(predicted, job)
        self._move(position, position + 1, size - position)
        self.ends[position], self.jobs[position] = predicted, job
        self.size = size + 1

    @cython.locals(size=cython.Py_ssize_t, position=cython.Py_ssize_t)
    def remove(self, predicted: float, job: int) -> None:
        """`job`, whose predicted end is `predicted`, leaves."""
        if not cython.compiled:
            del self.pairs[bisect_left(self.pairs, (predicted, job))]
            return
        size, position = self.size - 1, self._position(predicted, job)
        self._move(position + 1, position, size - position)
        self.size = size

    @cython.locals(old=cython.Py_ssize_t, new=cython.Py_ssize_t)
    def move(self, job: int, before: float, after: float) -> None:
        """`job`'s predicted end changes from `before` to `after` (compiled: only the pairs between
        its two places shift, by one)."""
        if not cython.compiled:
            self.remove(before, job)
            self.add(after, job)
            return
        old, new = self._position(before, job), self._position(after, job)
        if new > old:  # later: the pairs up to its new place move down, into its old one
            new -= 1
            self._move(old + 1, old, new - old)
        else:
            self._move(new, new + 1, old - new)
        self.ends[new], self.jobs[new] = after, job

    def _move(self, source: int, target: int, count: int) -> None:
        """The `count` pairs from `source` on move to `target` on (compiled: C's memmove, one block
        per buffer; a double and a long long take 8 bytes each)."""
        memmove(cython.address(self.ends[target]), cython.address(self.ends[source]), 8 * count)  # type: ignore[name-defined]  # noqa: F821
        memmove(cython.address(self.jobs[target]), cython.address(self.jobs[source]), 8 * count)  # type: ignore[name-defined]  # noqa: F821

    @cython.locals(low=cython.Py_ssize_t, high=cython.Py_ssize_t, middle=cython.Py_ssize_t)
    @cython.locals(at=cython.double)
    def _position(self, predicted: float, job: int) -> int:
        """Where (`predicted`, `job`) is or goes in the buffers, as ``bisect_left`` (compiled)."""
        low, high = 0, self.size
        while low < high:
            middle = (low + high) >> 1
            at = self.ends[middle]
            if at < predicted or (at == predicted and self.jobs[middle] < job):
                low = middle + 1
            else:
                high = middle
        return low

    @cython.locals(size=cython.Py_ssize_t, ends=cython.double[::1], jobs=cython.longlong[::1])
    def _grow(self, size: int) -> None:
        """Twice the room, the `size` pairs copied."""
        ends, jobs = array("d", [0.0]) * (2 * size), array("q", [0]) * (2 * size)
        ends[:size], jobs[:size] = self.ends[:size], self.jobs[:size]
        self.ends, self.jobs = ends, jobs

    @cython.locals(position=cython.Py_ssize_t)
    def _listed(self) -> list[tuple[float, int]]:
        """The pairs as a list of tuples (plain Python: the list itself)."""
        if not cython.compiled:
            return self.pairs
        return [(self.ends[position], self.jobs[position]) for position in range(self.size)]

    def __iter__(self) -> Iterator[tuple[float, int]]:
        return iter(self._listed() if cython.compiled else self.pairs)

    def __reversed__(self) -> Iterator[tuple[float, int]]:
        return reversed(self._listed())

    @cython.locals(position=cython.Py_ssize_t)
    def __getitem__(self, index):
        """A pair by position (no list made), or a list of pairs by slice."""
        if not isinstance(index, int):
            return self._listed()[index]
        position = index + len(self) if index < 0 else index
        if not 0 <= position < len(self):
            raise IndexError(f"position {index} of {len(self)} running jobs")
        return self.pair_at(position)

    def __contains__(self, pair: object) -> bool:
        return pair in self._listed()

    def index(self, pair: object, *bounds: int) -> int:
        """The position of `pair`, as `list.index`."""
        return self._listed().index(pair, *bounds)

    def count(self, pair: object) -> int:
        """How many times `pair` is there (0 or 1)."""
        return self._listed().count(pair)

    def __eq__(self, other: object) -> bool:
        return self._listed() == (other._listed() if isinstance(other, EndOrder) else other)

    def __repr__(self) -> str:
        return f"EndOrder({self._listed()!r})"
