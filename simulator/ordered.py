"""Jobs kept in the order of a time, in typed arrays: the engine's completions and its running jobs
by predicted end (``by_end``).

Both were Python lists of tuples, ``(end, job, version)`` in a heap and ``(predicted end, job)``
kept sorted with `bisect.insort`: a tuple built per change, compared item by item on every sift or
bisection, and stale completions left behind by every re-post. `TimeOrder` holds each job at most
once, as a C double and a job index in two arrays sorted together, with each job's own time in a
third, so a job is moved or removed at once by its index. Compiled (`cosched._compiled`), every
comparison and move is in C; the same source runs as plain Python over `array.array` buffers.

The order is the one tie rule of the engine: ascending time, equal times by job index (workload
order). Read as a sequence, a `TimeOrder` gives ``(time, job)`` pairs in that order, as the sorted
list of tuples did; the scheduler's view wraps it read-only (`cosched.simulator.view.read_only`).
"""

from __future__ import annotations

import math
import operator
from array import array
from collections.abc import Iterator
from typing import Any

try:  # Cython's pure-Python mode: the types below compile to C, and do nothing in plain Python
    import cython
except ModuleNotFoundError:
    from cosched import _pure_cython as cython

__all__ = ["TimeOrder"]

INF = math.inf


@cython.cclass
class TimeOrder:
    """Jobs (indices below `jobs`), each at most once, ascending by their time, equal times by job
    index. Its C fields are declared in ``ordered.pxd``."""

    def __init__(self, jobs: int) -> None:
        self._times = array("d", bytes(8 * jobs))  # by position
        self._jobs = array("q", bytes(8 * jobs))  # by position
        self._time_of = array("d", [math.nan]) * jobs  # by job: its time, NaN if absent
        self.size = 0

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, index: Any) -> Any:
        """The (time, job) pair at `index`, or a list of them for a slice."""
        if isinstance(index, slice):
            return [self._item(at) for at in range(*index.indices(self.size))]
        at = operator.index(index)
        if at < 0:
            at += self.size
        if not 0 <= at < self.size:
            raise IndexError("TimeOrder index out of range")
        return self._item(at)

    def __iter__(self) -> Iterator[tuple[float, int]]:
        return _Ascending(self)

    def __reversed__(self) -> Iterator[tuple[float, int]]:
        return reversed(self[:])

    def __contains__(self, pair: object) -> bool:
        return pair in self[:]

    def index(self, pair: object, *bounds: int) -> int:
        """The first position of `pair` (within ``start, stop``), as `list.index`."""
        return self[:].index(pair, *bounds)

    def count(self, pair: object) -> int:
        """How many pairs equal `pair` (0 or 1)."""
        return self[:].count(pair)

    def __eq__(self, other: object) -> bool:
        return self[:] == other

    def __repr__(self) -> str:
        return f"TimeOrder({self[:]!r})"

    @cython.cfunc
    @cython.locals(at=cython.Py_ssize_t)
    def _item(self, at: int) -> tuple[float, int]:
        return (self._times[at], self._jobs[at])

    @cython.ccall
    @cython.returns(cython.double)
    def earliest(self) -> float:
        """The first time, INF when empty."""
        return self._times[0] if self.size else INF

    @cython.ccall
    @cython.boundscheck(False)
    @cython.wraparound(False)
    @cython.locals(size=cython.Py_ssize_t, at=cython.Py_ssize_t)
    def add(self, job: int, time: float) -> None:
        """Insert `job` (absent) at `time`."""
        size = self.size
        at = self._position(time, job)
        self._times[at + 1 : size + 1] = self._times[at:size]
        self._jobs[at + 1 : size + 1] = self._jobs[at:size]
        self._times[at] = time
        self._jobs[at] = job
        self._time_of[job] = time
        self.size = size + 1

    @cython.ccall
    @cython.boundscheck(False)
    @cython.wraparound(False)
    @cython.locals(size=cython.Py_ssize_t, at=cython.Py_ssize_t)
    def remove(self, job: int) -> None:
        """Take `job` (present) out."""
        size = self.size
        at = self._position(self._time_of[job], job)
        self._times[at : size - 1] = self._times[at + 1 : size]
        self._jobs[at : size - 1] = self._jobs[at + 1 : size]
        self._time_of[job] = math.nan
        self.size = size - 1

    @cython.ccall
    def move(self, job: int, time: float) -> None:
        """Give `job` (present) a new time."""
        self.remove(job)
        self.add(job, time)

    @cython.ccall
    @cython.returns(cython.Py_ssize_t)
    @cython.locals(job=cython.Py_ssize_t)
    def pop(self) -> int:
        """Take out the first job (not empty) and return it."""
        job = self._jobs[0]
        self.remove(job)
        return job

    @cython.cfunc
    @cython.boundscheck(False)
    @cython.wraparound(False)
    @cython.returns(cython.Py_ssize_t)
    @cython.locals(low=cython.Py_ssize_t, high=cython.Py_ssize_t, middle=cython.Py_ssize_t)
    def _position(self, time: float, job: int) -> int:
        """The first position whose (time, job) is not below (`time`, `job`)."""
        low, high = 0, self.size
        while low < high:
            middle = (low + high) // 2
            if self._times[middle] < time or (
                self._times[middle] == time and self._jobs[middle] < job
            ):
                low = middle + 1
            else:
                high = middle
        return low


@cython.cclass
class _Ascending:
    """The iterator of a `TimeOrder`: its (time, job) pairs from the first, one at a time (a reader
    that stops early, as the shadow time does, builds no pair after its last)."""

    _order = cython.declare(TimeOrder)
    _at = cython.declare(cython.Py_ssize_t)

    def __init__(self, order: TimeOrder) -> None:
        self._order = order
        self._at = 0

    def __iter__(self) -> Iterator[tuple[float, int]]:
        return self

    def __next__(self) -> tuple[float, int]:
        if self._at >= self._order.size:
            raise StopIteration
        self._at += 1
        return self._order._item(self._at - 1)
