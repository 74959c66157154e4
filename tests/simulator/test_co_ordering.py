"""Each co-scheduler's queue order matches the appendix formula of 003 on hand-made queues."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cosched.simulator.schedulers.co_ordering import (
    FillerOrder,
    filler_factor0,
    filler_key,
    filler_order,
    laf_key,
    ljf_key,
    popularity_key,
    popularity_ranks,
    queue_order,
    sjf_key,
    two_factor_key,
)


def appendix_sort(jobs, reorder):
    """The ELiSE way: Python's stable sort of the job list by descending
    waiting_queue_reorder(job)."""
    return [job["pos"] for job in sorted(jobs, key=reorder, reverse=True)]


def appendix_factor0(job, free):
    if free > 0:
        diff = free - job["cores"]
        if diff > 0:
            return 1 - diff / free
        if diff == 0:
            return 1
        return -1
    return 1


QUEUE = [  # pos = queue position; job ids follow arrival
    dict(pos=0, id=3, cores=64, remaining=100.0),
    dict(pos=1, id=4, cores=16, remaining=300.0),
    dict(pos=2, id=7, cores=40, remaining=50.0),
    dict(pos=3, id=8, cores=8, remaining=300.0),
    dict(pos=4, id=9, cores=40, remaining=10.0),
]
cores = np.array([j["cores"] for j in QUEUE])
remaining = np.array([j["remaining"] for j in QUEUE])
ids = np.array([j["id"] for j in QUEUE])


def test_sjf_ljf_laf_orders_match_appendix():
    assert (
        list(queue_order(sjf_key(remaining)))
        == appendix_sort(QUEUE, lambda j: -j["remaining"])
        == [4, 2, 0, 1, 3]
    )
    assert (
        list(queue_order(ljf_key(remaining)))
        == appendix_sort(QUEUE, lambda j: j["remaining"])
        == [1, 3, 0, 2, 4]
    )
    area = appendix_sort(QUEUE, lambda j: j["cores"] * j["remaining"])
    assert list(queue_order(laf_key(cores, remaining))) == area == [0, 1, 3, 2, 4]


def test_filler_prefers_the_job_that_fills_the_gap_then_arrival():
    free = (
        40  # jobs 7 and 9 fill it exactly (factor0 = 1): the earlier id wins; 64 cores does not fit
    )
    expected = appendix_sort(
        QUEUE, lambda j: appendix_factor0(j, free) / ((j["id"] + 1) / len(QUEUE))
    )
    assert list(queue_order(filler_key(ids, cores, free))) == expected == [2, 4, 1, 3, 0]
    assert list(filler_factor0(cores, free)) == [-1, 1 - 24 / 40, 1, 1 - 32 / 40, 1]
    assert list(queue_order(filler_key(ids, cores, 0))) == [
        0,
        1,
        2,
        3,
        4,
    ]  # nothing free: arrival order


def test_sjf_filler_adds_position_in_the_remaining_time_queue():
    free = 40
    second = sorted(QUEUE, key=lambda j: j["remaining"], reverse=True)
    index = {j["pos"]: second.index(j) for j in second}
    expected = appendix_sort(
        QUEUE, lambda j: appendix_factor0(j, free) + index[j["pos"]] / len(QUEUE)
    )
    assert list(queue_order(two_factor_key(cores, free, remaining))) == expected == [4, 2, 1, 3, 0]


def test_popularity_ranks_count_good_partners_in_the_queue():
    speedups = np.array([[1.2, 1.1, 0.7], [1.0, 0.8, 0.9], [0.9, 1.3, 1.0]])
    apps = np.array(
        [0, 0, 1, 2]
    )  # averages: (0,0) 1.2, (0,1) 1.05, (0,2) 0.8, (1,2) 1.1, (1,1) 0.8
    ranks = popularity_ranks(apps, speedups, threshold=1.0)
    brute = [
        sum(
            (speedups[apps[i], apps[j]] + speedups[apps[j], apps[i]]) / 2 > 1.0
            for j in range(len(apps))
            if j != i
        )
        for i in range(len(apps))
    ]
    assert list(ranks) == brute == [2, 2, 3, 1]
    queue = [dict(pos=i, rank=r) for i, r in enumerate(ranks)]
    assert (
        list(queue_order(popularity_key(ranks, 4)))
        == appendix_sort(queue, lambda j: j["rank"] / 4)
        == [2, 0, 1, 3]
    )
    pop_filler = appendix_sort(
        [dict(pos=i, cores=c, rank=r) for i, (c, r) in enumerate(zip([10, 20, 20, 5], ranks))],
        lambda j: (
            appendix_factor0(j, 20)
            + sorted(range(4), key=lambda p: ranks[p], reverse=True).index(j["pos"]) / 4
        ),
    )
    assert list(queue_order(two_factor_key(np.array([10, 20, 20, 5]), 20, ranks))) == pop_filler


@given(
    st.lists(
        st.tuples(st.integers(1, 64), st.floats(1, 1e4), st.integers(0, 10**6)),
        min_size=1,
        max_size=30,
        unique_by=lambda t: t[2],
    ),
    st.integers(0, 128),
)
def test_vectorised_keys_sort_exactly_like_the_appendix_code(jobs, free):
    queue = [dict(pos=i, cores=c, remaining=r, id=k) for i, (c, r, k) in enumerate(jobs)]
    c = np.array([j["cores"] for j in queue])
    r = np.array([j["remaining"] for j in queue])
    k = np.array([j["id"] for j in queue])
    n = len(queue)
    assert list(queue_order(sjf_key(r))) == appendix_sort(queue, lambda j: -j["remaining"])
    assert list(queue_order(laf_key(c, r))) == appendix_sort(
        queue, lambda j: float(j["cores"] * j["remaining"])
    )
    assert list(queue_order(filler_key(k, c, free))) == appendix_sort(
        queue, lambda j: appendix_factor0(j, free) / ((j["id"] + 1) / n)
    )
    second = [j["pos"] for j in sorted(queue, key=lambda j: j["remaining"], reverse=True)]
    assert list(queue_order(two_factor_key(c, free, r))) == appendix_sort(
        queue, lambda j: appendix_factor0(j, free) + second.index(j["pos"]) / n
    )


@given(
    st.lists(st.sampled_from([1.0, 2.0, 5.0, 60.0]), min_size=1, max_size=30),
    st.data(),
)
def test_every_sjf_and_ljf_order_is_the_one_key_with_ties_by_job_index(estimates, data):
    """SJF and LJF of the engine, the co-schedulers and the ElastiSim built-in policies order a
    queue with many equal estimates alike: by `sjf_key` / `ljf_key`, equal keys by job index."""
    from collections import OrderedDict
    from types import SimpleNamespace

    from cosched.simulator.schedulers.coscheduling import LJFCo, SJFCo
    from cosched.simulator.schedulers.elastic import SJFMalleable, SJFRigid, SJFRigidGreedy
    from cosched.simulator.schedulers.ordering import LJF, SJF

    jobs = len(estimates)
    present = sorted(data.draw(st.sets(st.integers(0, jobs - 1), min_size=1)))
    view = SimpleNamespace(
        waiting=OrderedDict.fromkeys(present),  # the queue: workload order
        cores=[1] * jobs,
        estimate=estimates,
        workload=SimpleNamespace(cores=np.ones(jobs, np.int64), estimate=np.array(estimates)),
        use_run_times=False,
        units_table=[1] * jobs,
        models=None,
        requested_nodes=lambda job: 1,
        partitions=None,
    )
    shortest = sorted(present, key=lambda job: (estimates[job], job))
    longest = sorted(present, key=lambda job: (-estimates[job], job))
    for scheduler in (SJF(), SJFRigid(), SJFCo()):
        scheduler.attach(view)
        assert scheduler.order(view) == shortest, scheduler.name
    for scheduler in (LJF(), LJFCo()):
        scheduler.attach(view)
        assert scheduler.order(view) == longest, scheduler.name
    greedy = SJFRigidGreedy()
    greedy.attach(view)
    assert greedy.order(view) == shortest
    malleable = SJFMalleable()
    malleable.attach(view)
    for job in present:
        malleable.on_arrival(view, job)
    assert [job for _, job in malleable.queue] == shortest
    assert malleable.running_keys(view, present) == [
        malleable.waiting_key(view, j) for j in present
    ]


def by_job_id(jobs):
    """The cores of (job id, cores) pairs as a list by job id (the last pair of an id wins)."""
    cores = [0] * (max(job for job, _ in jobs) + 1)
    for job, need in jobs:
        cores[job] = need
    return cores


@given(
    st.lists(st.tuples(st.integers(0, 64), st.integers(0, 10**6)), min_size=1, max_size=40),
    st.integers(-2, 128),
)
def test_filler_order_is_the_queue_sorted_by_the_filler_key(jobs, free):
    """Sorting only the jobs that fit gives the whole queue sorted by the key (job ids ascending,
    as in the engine's queue)."""
    cores = by_job_id(jobs)
    queue = sorted(dict(jobs))
    ids = np.array(queue)
    expected = ids[queue_order(filler_key(ids, np.array([cores[j] for j in queue]), free))]
    assert filler_order(queue, cores, free) == expected.tolist()


@given(
    st.lists(st.tuples(st.integers(0, 64), st.integers(0, 10**6)), min_size=1, max_size=40),
    st.integers(-2, 128),
)
def test_filler_order_reads_the_live_queue_without_changing_it(jobs, free):
    """Filler passes the engine's queue column itself (no copy): the order is the one of a list
    copy, and the column is left as it was."""
    from cosched.simulator.view import read_only

    cores = by_job_id(jobs)
    queue = sorted(dict(jobs))
    column = read_only(list(queue), "queue")
    assert filler_order(column, cores, free) == filler_order(list(queue), cores, free)
    assert list(column) == queue


@given(
    st.lists(st.integers(0, 8), min_size=1, max_size=300),
    st.lists(st.integers(-1, 9), min_size=1, max_size=4),
    st.data(),
)
def test_a_runs_filler_order_reads_the_engine_column_and_keeps_ties(cores, frees, data):
    """One `FillerOrder` over the engine's queue column (values after a gap), pass after pass,
    gives `queue_order(filler_key(...))` of the waiting jobs: small job ids and core counts make
    many keys equal, long queues grow its buffer of keys."""
    from cosched.simulator.view import SortedColumn, insert_sorted, remove_sorted

    jobs = len(cores)
    waiting = sorted(data.draw(st.sets(st.integers(0, jobs - 1), min_size=1)))
    started = data.draw(st.sets(st.sampled_from(waiting), max_size=len(waiting) - 1))
    column = SortedColumn("queue")
    for job in waiting:
        insert_sorted(column, job)
    for job in sorted(started):  # the lowest leave first: the gap grows at the head
        remove_sorted(column, job)
    queue = [job for job in waiting if job not in started]
    ids = np.array(queue)
    ordering = FillerOrder(cores)
    for free in frees:
        expected = ids[queue_order(filler_key(ids, np.array(cores)[ids], free))].tolist()
        assert ordering.order(column, free) == expected
        assert ordering.order(queue, free) == expected
    assert list(column) == queue


def test_the_two_factor_fillers_sort_the_queue_by_their_priority():
    """Only Filler has its own order: SJF-Filler and Pop-Filler sort the queue by their key
    (`two_factor_key`) as every queue scheduler does."""
    from cosched.simulator.schedulers.base import QueueScheduler
    from cosched.simulator.schedulers.filler import PopFiller, SJFFiller

    assert SJFFiller.order is QueueScheduler.order
    assert PopFiller.order is QueueScheduler.order


def test_filler_order_takes_the_cores_as_a_mapping_and_refuses_one_it_cannot_index():
    cores = {3: 64, 4: 16, 7: 40, 8: 8}
    table = [0, 0, 0, 64, 16, 0, 0, 40, 8]
    assert filler_order([3, 4, 7, 8], cores, 48) == filler_order([3, 4, 7, 8], table, 48)
    with pytest.raises(KeyError):
        filler_order([3, 5], cores, 48)
    with pytest.raises(TypeError, match="sequence"):
        FillerOrder(cores)
