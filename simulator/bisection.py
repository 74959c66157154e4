"""The simulator's one binary search over its ascending lists: the sorted columns' job indices
and units (`cosched.simulator.view`), the compact allocator's idle nodes, and the running jobs'
(predicted end, job index) pairs the engine keeps in `by_end`; and the heap of the engine's
completion events, (end, job index, version) triples.

Compiled, `_search` is a C loop that reads the items as C integers and doubles: no Python call and
no Python comparison per step. In plain Python, the two entry points hand the same question to the
`bisect` module's C functions instead, which give the same positions (the tests check `_search`
against them), because a binary search written in Python is slower than the C one there. The
same holds for the heap: compiled, `_push` and `_pop` are `heapq`'s algorithm comparing the events'
fields as C numbers; in plain Python, `push_event` and `pop_due` call `heapq`'s own functions.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from heapq import heappop, heappush

try:  # Cython's pure-Python mode: C types when compiled (bisection.pxd), plain Python here
    import cython
except ModuleNotFoundError:
    from cosched import _pure_cython as cython

__all__ = ["int_position", "end_position", "push_event", "pop_due"]


def int_position(items: list, value: int, low: int, high: int, right: bool) -> int:
    """Where `value` goes in the ascending integers ``items[low:high]``: before its equals, as
    ``bisect_left``, or after them (`right`), as ``bisect_right``."""
    if not cython.compiled:
        return (bisect_right if right else bisect_left)(items, value, low, high)
    return _search(items, False, 0.0, value, low, high, right)


def end_position(by_end: list, predicted: float, job: int) -> int:
    """Where the pair (`predicted`, `job`) is or goes in `by_end`, ascending by predicted end, then
    job index (the one tie rule), as ``bisect_left``."""
    if not cython.compiled:
        return bisect_left(by_end, (predicted, job))
    return _search(by_end, True, predicted, job, 0, len(by_end), False)


@cython.locals(middle=cython.Py_ssize_t, pair=tuple, at=cython.double, other=cython.Py_ssize_t)
def _search(
    items: list, pairs: bool, end: float, value: int, low: int, high: int, right: bool
) -> int:
    """The first position in ``items[low:high]`` whose item is above `value` (`right`) or not
    below it: items are integers, or (`pairs`) (float, integer) pairs ordered by `end`, then
    `value`."""
    while low < high:
        middle = (low + high) >> 1
        if pairs:
            pair = items[middle]
            at = pair[0]
            if at != end:
                if at < end:
                    low = middle + 1
                else:
                    high = middle
                continue
            other = pair[1]
        else:
            other = items[middle]
        if other < value or (right and other == value):
            low = middle + 1
        else:
            high = middle
    return low


def push_event(heap: list, event: tuple) -> None:
    """`event` (end, job, version) joins the heap of completions, as ``heapq.heappush``."""
    if not cython.compiled:
        return heappush(heap, event)
    _push(heap, event)


@cython.locals(first=cython.double)
def pop_due(heap: list, now: float) -> tuple | None:
    """The earliest event (end, then job, then version) if it ends by `now`, taken off the heap
    as by ``heapq.heappop``; else None."""
    if not heap:
        return None
    first = heap[0][0]
    if not first <= now:
        return None
    return _pop(heap) if cython.compiled else heappop(heap)


def _push(heap: list, event: tuple) -> None:
    """``heapq.heappush`` (its `_siftdown` from the end)."""
    heap.append(event)
    _sift_down(heap, 0, len(heap) - 1)


@cython.locals(last=tuple, first=tuple)
def _pop(heap: list) -> tuple:
    """``heapq.heappop``: the last event moves to the root and sifts up to a leaf, then down."""
    last = heap.pop()
    if not heap:
        return last
    first = heap[0]
    heap[0] = last
    _sift_up(heap, 0)
    return first


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.locals(start=cython.Py_ssize_t, position=cython.Py_ssize_t, parent=cython.Py_ssize_t)
@cython.locals(event=tuple, above=tuple)
def _sift_down(heap: list, start: int, position: int) -> None:
    """``heapq._siftdown``: the event at `position` climbs while it comes before its parent."""
    event = heap[position]
    while position > start:
        parent = (position - 1) >> 1
        above = heap[parent]
        if not _before(event, above):
            break
        heap[position] = above
        position = parent
    heap[position] = event


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.locals(position=cython.Py_ssize_t, start=cython.Py_ssize_t, size=cython.Py_ssize_t)
@cython.locals(child=cython.Py_ssize_t, event=tuple)
def _sift_up(heap: list, position: int) -> None:
    """``heapq._siftup``: the event at `position` goes down the smaller children to a leaf, then
    back up to its place."""
    size, start, event = len(heap), position, heap[position]
    child = 2 * position + 1
    while child < size:
        if child + 1 < size and not _before(heap[child], heap[child + 1]):
            child += 1
        heap[position] = heap[child]
        position = child
        child = 2 * position + 1
    heap[position] = event
    _sift_down(heap, start, position)


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.locals(at=cython.double, other=cython.double, job=cython.Py_ssize_t)
@cython.locals(other_job=cython.Py_ssize_t, version=cython.Py_ssize_t)
def _before(event: tuple, other_event: tuple) -> bool:
    """``event < other_event`` on (end, job, version) triples: the first field that differs
    decides."""
    at, other = event[0], other_event[0]
    if at != other:
        return at < other
    job, other_job = event[1], other_event[1]
    if job != other_job:
        return job < other_job
    version = event[2]
    return version < other_event[2]
