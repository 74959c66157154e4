"""The compact allocator's idle list stays the sorted set of idle nodes, whatever comes back."""

from types import SimpleNamespace

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from cosched.simulator.allocators import Allocation, CompactAllocator
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
                allocation = allocator.allocate(engine, job)
                assert allocation is not None
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
