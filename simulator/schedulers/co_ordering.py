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

from collections.abc import Iterable, Sequence
from typing import TypeVar

import numpy as np

try:  # Cython's pure-Python mode: the types below compile to C, and do nothing in plain Python
    import cython

    if not cython.compiled:  # plain Python: the light stand-in, not Cython's slower shadow
        raise ModuleNotFoundError
except ModuleNotFoundError:
    from cosched import _pure_cython as cython

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


@cython.ccall
def filler_fill(cores: KeyT, free_cores: int) -> KeyT:
    """factor0 of jobs that fit `free_cores` > 0 (an array over jobs, or one job's cores)."""
    return 1 - (free_cores - cores) / free_cores  # 003 appendix, Filler (1 when diff == 0)


@cython.ccall
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


@cython.locals(
    free_cores=cython.Py_ssize_t,
    job=cython.Py_ssize_t,
    need=cython.Py_ssize_t,
    at=cython.Py_ssize_t,
    free=object,
    length=object,
    fitting=list,
    beyond=list,
    negated=list,
)
def filler_order(queue: Iterable[int], cores: Sequence[int], free_cores: int) -> list[int]:
    """The waiting jobs `queue` (job ids, ascending: the queue's order) sorted by descending
    `filler_key`, ties in queue order, with the key computed for the jobs that fit only.

    A job that fits has factor0 >= 0, one that does not -1 (003 appendix, Filler), so every job
    that fits comes first, in the order of its key; the key of the others is -len(queue) / (job_id
    + 1), so they follow by descending job id. With nothing free every factor0 is 1 and the key
    falls as the job id grows: the queue's order. A pass thus sorts the few jobs that fit the free
    cores, not the whole queue. `cores[job]` is a job's cores.

    The few keys are Python floats, computed by the same operations in the same order as
    `filler_key`'s float64 arrays (so equal bit for bit), and sorted stably: no array per pass.
    `queue` is read once (the engine's live queue may be passed); compiled, the ids are listed as
    they come (no integer made per job)."""
    if free_cores <= 0:
        return list(queue)  # 003 appendix, Filler: sys_free_cores == 0 -> factor0 = 1
    fitting, beyond = [], []
    for item in queue:
        job = item
        need = cores[job]
        if need <= free_cores:
            fitting.append(item)
        else:
            beyond.append(item)
    if len(fitting) > 1:
        free, length = free_cores, len(fitting) + len(beyond)  # made once for the key functions
        negated = []
        for item in fitting:
            job = item
            need = cores[job]
            negated.append(-(filler_fill(float(need), free) / filler_factor1(float(job), length)))
        fitting = [fitting[at] for at in sorted(range(len(fitting)), key=negated.__getitem__)]
    beyond.reverse()
    return fitting + beyond


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
