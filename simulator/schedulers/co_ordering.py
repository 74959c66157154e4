"""Waiting-queue ordering keys of the co-schedulers (003 appendix; 000 §3.6, Algorithm 2).

Each key is a vectorised form of the appendix's ``waiting_queue_reorder(job)`` over the whole queue.
As in ELiSE, the queue is sorted by *descending* key and the sort is stable, so ties keep the
queue's order: ``queue_order(key)``. The waiting queue is always in workload order (a preempted job
goes back to its submit position), so the one tie rule is the job index, lowest first. Inputs are
arrays over the waiting jobs in queue order.

Filler: the thesis version (003 appendix) is implemented. The ELiSE paper (000 Algorithm 2) writes
factor0 = 1 - diff / free for diff >= 0 and factor1 = (id + 1) / maxId; the thesis splits diff = 0
into its own branch (factor0 = 1, the same value 1 - 0 / free) and divides by the waiting-queue
length instead of maxId. Both denominators are one positive constant per sorting pass, so the two
versions give the same order; the key values differ by that constant factor.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeVar

import numpy as np

try:  # Cython's pure-Python mode: the types below compile to C, and do nothing in plain Python
    import cython

    if not cython.compiled:  # plain Python: the light stand-in, not Cython's slower shadow
        raise ModuleNotFoundError
except ModuleNotFoundError:
    from cosched import _pure_cython as cython
if cython.compiled:  # C's memmove, for `_make_room`; a list made at its size, for `_picked`
    from cython.cimports.cpython.list import PyList_GET_ITEM, PyList_New, PyList_SET_ITEM
    from cython.cimports.cpython.ref import Py_INCREF
    from cython.cimports.libc.string import memmove

from cosched.simulator.colocation import _HalfNodes
from cosched.simulator.view import SortedColumn, _engine_behind, _inherits

KeyT = TypeVar("KeyT", np.ndarray, float)  # a key over the waiting jobs, or one job's

__all__ = [
    "queue_order",
    "sjf_key",
    "ljf_key",
    "laf_key",
    "popularity_ranks",
    "popularity_key",
    "filler_fill",
    "filler_factor1",
    "filler_factor0",
    "filler_key",
    "filler_order",
    "FillerOrder",
    "two_factor_key",
    "POPULARITY_THRESHOLD",
]

POPULARITY_THRESHOLD = (
    1.0  # average pairwise speedup above which two waiting jobs count as a good pair
)


def queue_order(key: np.ndarray) -> np.ndarray:
    """Positions of the queue sorted by descending key, ties in queue order (a stable reverse
    sort)."""
    return (-np.asarray(key, dtype=np.float64)).argsort(kind="stable")  # the method: no wrapper


def sjf_key(remaining: KeyT) -> KeyT:
    """The one Shortest Job First key (largest first): every SJF order of the package uses it, over
    an array of waiting jobs or one job's float, with ties by job index (the queue's order)."""
    return -remaining  # 003 appendix, SJF/SJF-Co: -remaining_time


def ljf_key(remaining: KeyT) -> KeyT:
    """The one Longest Job First key (largest first), ties by job index as `sjf_key`."""
    return +remaining  # 003 appendix, LJF/LJF-Co: remaining_time


def laf_key(cores: np.ndarray, remaining: np.ndarray) -> np.ndarray:
    return (
        np.asarray(cores, dtype=np.float64) * remaining
    )  # 003 appendix, LAF-Co: processes x remaining time


def popularity_ranks(
    apps: np.ndarray,
    speedups: np.ndarray,
    threshold: float = POPULARITY_THRESHOLD,
    known: np.ndarray | None = None,
) -> np.ndarray:
    """Rank of each waiting job: how many other waiting jobs it pairs with at average
    speedup > threshold.

    003 §5.2.5: for every pair of waiting jobs whose average pairwise speedup exceeds the threshold,
    both ranks grow by one. ``apps`` are heatmap indices of the waiting jobs, ``speedups`` the full
    matrix; ``known`` (same shape) marks the measured pairs, the only ones counted (as ELiSE skips
    unmeasured pairs).
    """
    apps = np.asarray(apps, dtype=np.int64)
    good = (
        speedups + speedups.T
    ) / 2 > threshold  # 003 §5.2.5: average of the two directed speedups
    if known is not None:
        good &= known
    present = np.bincount(apps, minlength=speedups.shape[0])
    per_app = (
        good.astype(np.int64) @ present
    )  # good partners of each application among all waiting jobs
    return per_app[apps] - good[apps, apps]  # not the job itself


def popularity_key(ranks: np.ndarray, queue_length: int) -> np.ndarray:
    return (
        np.asarray(ranks, dtype=np.float64) / queue_length
    )  # 003 appendix, Popularity: rank / len(queue)


def filler_fill(cores: KeyT, free_cores: int) -> KeyT:
    """factor0 of jobs that fit `free_cores` > 0 (an array over jobs, or one job's cores)."""
    return 1 - (free_cores - cores) / free_cores  # 003 appendix, Filler (1 when diff == 0)


def filler_factor1(job_ids: KeyT, queue_length: int) -> KeyT:
    """factor1 of jobs (an array over job ids, or one job id)."""
    return (job_ids + 1) / queue_length  # 003 appendix, Filler factor1


def filler_factor0(cores: np.ndarray, free_cores: int) -> np.ndarray:
    """How well each job fills the free cores: 1 - diff / free if it fits, -1 if not, 1 when nothing
    is free."""
    cores = np.asarray(cores, dtype=np.float64)
    if free_cores <= 0:
        return np.ones(cores.size)  # 003 appendix, Filler: sys_free_cores == 0 -> factor0 = 1
    factor0 = filler_fill(cores, free_cores)
    factor0[cores > free_cores] = -1.0  # 003 appendix, Filler: diff < 0 -> -1
    return factor0


def filler_key(
    job_ids: np.ndarray, cores: np.ndarray, free_cores: int, queue_length: int | None = None
) -> np.ndarray:
    """factor0 / factor1 with factor1 = (job_id + 1) / len(waiting_queue) (003 appendix, Filler).

    `queue_length`: the waiting queue's length when the arrays hold only some of its jobs."""
    length = len(job_ids) if queue_length is None else queue_length
    factor1 = filler_factor1(np.asarray(job_ids, dtype=np.float64), length)
    return filler_factor0(cores, free_cores) / factor1


@cython.cclass  # final (co_ordering.pxd): Filler calls its order directly, not through a table
class FillerOrder:
    """`filler_order` over the jobs' `cores` (a sequence by job id), kept for a run: the cores, and
    the keys and queue places of the jobs that fit, are C arrays it keeps (compiled; ``array``s in
    plain Python), no Python float or list insertion per job. Made for a run's `view`, `order_of`
    reads its queue column, and the co-location allocator's free cores, in C."""

    def __init__(self, cores: Sequence[int], view: Any = None) -> None:
        if isinstance(cores, Mapping):  # an array of its keys would be wrong, silently
            raise TypeError("FillerOrder takes the cores as a sequence indexed by job id")
        self._cores = array("q", cores)
        self._keys = array("d", [0.0]) * 16  # the keys of the jobs placed so far, descending
        self._places = array("q", [0]) * 16  # their places in the queue's list, then the others'
        self._view = view
        allocator = getattr(_engine_behind(view), "allocator", None)
        # the co-location allocator's count, read as its `free_cores` does (unless a subclass
        # overrides that)
        column = view.queue if _inherits(allocator, _HalfNodes, "free_cores") else None
        self._halves = allocator if isinstance(column, SortedColumn) else None
        self._queue = column if self._halves is not None else None

    @cython.locals(halves=_HalfNodes)
    def order_of(self, view: Any) -> list[int]:
        """`order` of the queue and free cores of `view`."""
        halves = self._halves
        if halves is None or view is not self._view:
            return self.order(view.queue, view.free_cores())
        return self.order(self._queue, halves._free_cores)

    @cython.boundscheck(False)  # job ids within the cores, positions within the lists and buffers
    @cython.wraparound(False)
    @cython.initializedcheck(False)
    @cython.cdivision(True)  # no division by zero: free > 0, length > 0, job + 1.0 > 0
    @cython.locals(
        column=SortedColumn,
        items=list,
        cores=cython.longlong[::1],
        keys=cython.double[::1],
        places=cython.longlong[::1],
        first=cython.Py_ssize_t,
        stop=cython.Py_ssize_t,
        length=cython.Py_ssize_t,
        count=cython.Py_ssize_t,
        last=cython.Py_ssize_t,
        at=cython.Py_ssize_t,
        job=cython.Py_ssize_t,
        need=cython.Py_ssize_t,
        free=cython.double,
        key=cython.double,
        low=cython.Py_ssize_t,
        high=cython.Py_ssize_t,
        middle=cython.Py_ssize_t,
    )
    def order(self, queue: Iterable[int], free_cores: int) -> list[int]:
        """`filler_order(queue, cores, free_cores)`: each job that fits goes into the ones placed
        so far after the last with a key at least its own (at the end, most often; else after a
        binary search of the keys and one move of the keys and places behind it), which is the
        stable descending sort; the others fill the places from their end. The engine's queue
        column is read in place."""
        if isinstance(queue, SortedColumn):
            column = queue
            items, first = column._items, column._head
        else:
            items, first = list(queue), 0
        if free_cores <= 0:
            return items[first:]  # 003 appendix, Filler: sys_free_cores == 0 -> factor0 = 1
        stop = len(items)
        length = stop - first
        if len(self._keys) < length:
            self._keys = array("d", [0.0]) * (2 * length)
            self._places = array("q", [0]) * (2 * length)
        cores, keys, places, free = self._cores, self._keys, self._places, free_cores
        count, last = 0, length  # the jobs that fit so far; the first place of the others
        for at in range(first, stop):
            job = items[at]
            need = cores[job]
            if need > free_cores:  # 003 appendix, Filler: key -length / (job_id + 1), diff < 0
                last -= 1
                places[last] = at
                continue
            # 003 appendix, Filler: factor0 / factor1, in the operations of `filler_key` (C doubles)
            key = (1 - (free - need) / free) / ((job + 1.0) / length)
            low = count
            if count and keys[count - 1] < key:
                low, high = 0, count - 1
                while low < high:
                    middle = (low + high) >> 1
                    if keys[middle] < key:
                        high = middle
                    else:
                        low = middle + 1
                self._make_room(keys, places, low, count)
            keys[low], places[low] = key, at
            count += 1
        return self._picked(items, places, length)

    @cython.boundscheck(False)
    @cython.wraparound(False)
    @cython.initializedcheck(False)
    @cython.locals(
        keys=cython.double[::1],
        places=cython.longlong[::1],
        at=cython.Py_ssize_t,
        count=cython.Py_ssize_t,
        place=cython.Py_ssize_t,
    )
    def _make_room(self, keys: Any, places: Any, at: int, count: int) -> None:
        """Move the keys and places at `at`..`count`-1 one place up. Compiled, an element loop
        over a few (cheaper than a call), else C's memmove (an element loop is not turned into
        one); in plain Python, the arrays' slice copy."""
        if not cython.compiled:
            keys[at + 1 : count + 1] = keys[at:count]
            places[at + 1 : count + 1] = places[at:count]
            return
        if count - at <= 8:
            for place in range(count, at, -1):
                keys[place] = keys[place - 1]
                places[place] = places[place - 1]
            return
        memmove(
            cython.address(keys[at + 1]),
            cython.address(keys[at]),
            (count - at) * cython.sizeof(cython.double),
        )
        memmove(
            cython.address(places[at + 1]),
            cython.address(places[at]),
            (count - at) * cython.sizeof(cython.longlong),
        )

    @cython.boundscheck(False)
    @cython.wraparound(False)
    @cython.initializedcheck(False)
    @cython.locals(
        items=list, places=cython.longlong[::1], length=cython.Py_ssize_t, at=cython.Py_ssize_t
    )
    def _picked(self, items: list, places: Any, length: int) -> list:
        """The items at the first `length` places, a new list (compiled: made at its size and
        filled, with no item set through the generic setter)."""
        if not cython.compiled:
            return [items[place] for place in places[:length]]
        picked = PyList_New(length)
        for at in range(length):  # a borrowed item, given one more reference, which `picked` takes
            Py_INCREF(cython.cast(object, PyList_GET_ITEM(items, places[at])))
            PyList_SET_ITEM(picked, at, cython.cast(object, PyList_GET_ITEM(items, places[at])))
        return picked


def filler_order(
    queue: Iterable[int], cores: Sequence[int] | Mapping[int, int], free_cores: int
) -> list[int]:
    """The waiting jobs `queue` (job ids, ascending: the queue's order) sorted by descending
    `filler_key`, ties in queue order, with the key computed for the jobs that fit only
    (`FillerOrder`, which a run keeps).

    A job that fits has factor0 >= 0, one that does not -1 (003 appendix, Filler), so every job
    that fits comes first, in the order of its key; the key of the others is -len(queue) / (job_id
    + 1), so they follow by descending job id. With nothing free every factor0 is 1 and the key
    falls as the job id grows: the queue's order. A pass thus sorts the few jobs that fit the free
    cores, not the whole queue. `cores[job]` is a job's cores (a sequence, or a mapping of the
    queue's jobs).

    The few keys are computed by the same operations in the same order as `filler_key`'s float64
    arrays (so equal bit for bit). `queue` is read once (the engine's live queue may be passed)."""
    if isinstance(cores, Mapping):  # the queue's jobs' cores by job id, as `FillerOrder` keeps them
        queue = list(queue)
        table = [0] * (max(queue, default=-1) + 1)
        for job in queue:
            table[job] = cores[job]
        return FillerOrder(table).order(queue, free_cores)
    return FillerOrder(cores).order(queue, free_cores)


def two_factor_key(cores: np.ndarray, free_cores: int, second_key: np.ndarray) -> np.ndarray:
    """factor0 + position in the copied queue sorted by `second_key` / len(queue) (003 §5.2.7,
    appendix).

    The copy is sorted like the waiting queue (descending, stable): for SJF-Filler the second key is
    the remaining time, so the shortest job sits last and gets the largest factor1. For Pop-Filler
    it is the rank, so (as the appendix code is written) the least popular job gets the largest
    factor1.
    """
    n = len(second_key)
    position = np.empty(n, dtype=np.float64)
    position[queue_order(second_key)] = np.arange(n)  # 003 appendix, get_index(job) in second_queue
    return (
        filler_factor0(cores, free_cores) + position / n
    )  # 003 appendix, SJF-/Pop-Filler: factor0 + factor1
