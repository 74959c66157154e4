"""The compact and the partition allocators' idle lists stay the sorted sets of idle nodes, whatever
comes back."""

from types import SimpleNamespace

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from cosched.simulator.allocators import (
    Allocation,
    CompactAllocator,
    end_job,
    insert_nodes,
    start_job,
)
from cosched.simulator.partitions import PartitionAllocator
from cosched.simulator.platform import Platform
from cosched.simulator.workload import make_workload

NODES = 12


def _allocator(jobs: int) -> CompactAllocator:
    allocator = CompactAllocator(Platform(NODES, 1, 1))
    workload = make_workload(list(range(jobs)), [0] * jobs, [1] * jobs, [1] * jobs)
    allocator.bind(workload)
    return allocator


# one step: a job's node count; True: the allocator chooses, False: node ids in a shuffled order (as
# a scheduler may hand them); then which running job (by position, modulo) ends, if odd
STEPS = st.lists(
    st.tuples(st.integers(1, 5), st.booleans(), st.randoms(use_true_random=False), st.integers(0)),
    max_size=40,
)


@settings(max_examples=60, deadline=None)
@given(STEPS)
def test_idle_nodes_stay_sorted_and_exact_whatever_order_nodes_come_back(steps):
    allocator = _allocator(len(steps))
    engine = SimpleNamespace(cores=[count for count, *_ in steps])
    held: dict[int, Allocation] = {}
    for job, (count, own_choice, random, ending) in enumerate(steps):
        if count <= allocator.free_units():
            if own_choice:
                lowest = allocator.idle_nodes(count).tolist()
                allocation = allocator.allocate(engine, job)
                assert allocation is not None
                # what `allocate` builds without calling the class reads as the class builds it
                expected = Allocation(lowest, 1)
                assert (allocation.node_ids, allocation.cores, allocation.size) == (
                    expected.node_ids,
                    expected.cores,
                    expected.size,
                )
                np.testing.assert_array_equal(allocation.nodes, expected.nodes)
            else:
                ids = allocator.idle_nodes().tolist()
                random.shuffle(ids)
                allocation = Allocation(ids[:count], 1)
                allocator.commit(job, allocation)
            held[job] = allocation
        if held and ending % 2:
            leaving = sorted(held)[ending % len(held)]
            allocator.release(leaving, held.pop(leaving))
        busy = {node for allocation in held.values() for node in allocation.node_ids}
        idle = allocator.idle_nodes()
        assert idle.tolist() == sorted(set(range(NODES)) - busy)
        assert allocator.free_units() == idle.size
        np.testing.assert_array_equal(
            allocator.state.used == 0, ~np.isin(np.arange(NODES), list(busy))
        )


# partitions 0-4 and 5-11 (node 12 in none); one step as above, plus the job's partition
PARTITION_NODES = [list(range(5)), list(range(5, NODES))]
PARTITION_STEPS = st.lists(
    st.tuples(
        st.integers(1, 4),
        st.booleans(),
        st.randoms(use_true_random=False),
        st.integers(0),
        st.integers(0, 1),
    ),
    max_size=40,
)


@settings(max_examples=60, deadline=None)
@given(PARTITION_STEPS)
def test_partition_pools_stay_sorted_and_exact_whatever_order_nodes_come_back(steps):
    platform = Platform(NODES + 1, 1, 1)
    jobs = len(steps)
    allocator = PartitionAllocator(
        platform, PARTITION_NODES, [partition for *_, partition in steps]
    )
    cores = [count for count, *_ in steps]  # one core per node: a job's nodes
    allocator.bind(make_workload(list(range(jobs)), [0] * jobs, [1] * jobs, cores))
    engine = SimpleNamespace(cores=cores)
    held: dict[int, Allocation] = {}
    for job, (count, own_choice, random, ending, partition) in enumerate(steps):
        free = allocator.free_units_in(partition)
        if own_choice:
            allocation = allocator.allocate(engine, job)
            assert (allocation is None) == (count > free)
        elif count <= free:  # the partition's idle nodes, in a shuffled order
            ids = [
                node
                for node in allocator.idle_nodes().tolist()
                if node in PARTITION_NODES[partition]
            ]
            random.shuffle(ids)
            allocation = Allocation(ids[:count], 1)
            allocator.commit(job, allocation)
        else:
            allocation = None
        if allocation is not None:
            held[job] = allocation
        if held and ending % 2:
            leaving = sorted(held)[ending % len(held)]
            allocator.release(leaving, held.pop(leaving))
        busy = {node for allocation in held.values() for node in allocation.node_ids}
        assert allocator.idle_nodes().tolist() == sorted(set(range(NODES + 1)) - busy)
        for p, nodes in enumerate(PARTITION_NODES):
            assert allocator.free_units_in(p) == len(set(nodes) - busy)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(0, 40), unique=True, max_size=30),
    st.lists(st.integers(0, 40), unique=True, max_size=12),
    st.integers(0, 10),
)
def test_nodes_given_back_merge_into_the_idle_part_and_leave_the_stale_part_alone(
    idle, back, stale
):
    back = [node for node in back if node not in idle]
    stale_entries = [-1] * stale  # what the compact allocator leaves before its offset
    listed = stale_entries + sorted(idle)
    insert_nodes(listed, back, False, stale)
    assert listed[:stale] == stale_entries
    assert listed[stale:] == sorted(idle + back)


def test_the_idle_list_keeps_few_stale_entries_however_long_the_run():
    # jobs of 1 to 4 nodes; when one does not fit, the middle running job ends: nodes come back
    # among idle ones, and without its compaction the list grew to 2,500 entries here
    jobs = 2000
    allocator = _allocator(jobs)
    engine = SimpleNamespace(cores=[1 + job * 7 % 4 for job in range(jobs)])
    running = []
    for job in range(jobs):
        allocation = allocator.allocate(engine, job)
        while allocation is None:
            allocator.release(*running.pop(len(running) // 2))
            allocation = allocator.allocate(engine, job)
        running.append((job, allocation))
        assert len(allocator._idle) <= 2 * NODES + 4
    busy = {node for _, allocation in running for node in allocation.node_ids}
    assert allocator.idle_nodes().tolist() == sorted(set(range(NODES)) - busy)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 5), st.integers(0)), max_size=60))
def test_the_engines_starts_and_ends_in_c_keep_the_idle_nodes_sorted_and_exact(steps):
    # `start_job`/`end_job` with `direct_entry`: runs and lists of nodes held by the engine alone;
    # nodes come back below, among and above the idle ones (merged down into the stale room)
    allocator = _allocator(len(steps))
    engine = SimpleNamespace(
        cores=[count for count, _ in steps],
        running={},
        allocation=[],
        models=None,
        speed_model=None,
    )
    assert allocator.direct_entry(engine)
    held: dict[int, Allocation] = {}
    for job, (count, ending) in enumerate(steps):
        lowest = allocator.idle_nodes(count).tolist()
        allocation = start_job(allocator, engine, job, count)
        if allocation is not None:
            assert allocation.node_ids == lowest
            held[job] = allocation
        if held and ending % 3:
            leaving = sorted(held)[ending % len(held)]
            end_job(allocator, leaving, held.pop(leaving))
        busy = {node for allocation in held.values() for node in allocation.node_ids}
        assert allocator.idle_nodes().tolist() == sorted(set(range(NODES)) - busy)
        assert allocator.free_units() == NODES - len(busy)
