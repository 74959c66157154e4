"""The partition allocator's starts and ends (`PartitionAllocator.allocate` / `release`) against a
model of its rule: a job takes the lowest idle nodes of the first pool of its partition with enough
of them idle, and gives them back at its end."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from cosched.simulator.partitions import PartitionAllocator
from cosched.simulator.platform import NodeGroup, Platform
from cosched.simulator.workload import make_workload


@st.composite
def allocator_runs(draw):
    """A platform of one or two node types split into 1..3 partitions, jobs of 1..2 cores with
    their partition, and a sequence of starts and ends (True: start the next job; False: end the
    oldest running one)."""
    thin, fat = draw(st.integers(1, 6)), draw(st.integers(0, 6))
    groups = [NodeGroup(thin, 1, 1, name="thin")] + (
        [NodeGroup(fat, 1, 2, name="fat")] if fat else []
    )
    platform = Platform.of_groups(groups, name="mixed")
    nodes = thin + fat
    count = draw(st.integers(1, min(3, nodes)))
    cuts = sorted(
        draw(st.sets(st.integers(1, max(1, nodes - 1)), min_size=count - 1, max_size=count - 1))
    )
    bounds = [0, *cuts, nodes]
    node_sets = [list(range(bounds[p], bounds[p + 1])) for p in range(count)]
    jobs = draw(st.integers(1, 30))
    partition_of = [draw(st.integers(0, count - 1)) for _ in range(jobs)]
    cores = [draw(st.integers(1, 2)) for _ in range(jobs)]
    steps = draw(st.lists(st.booleans(), min_size=1, max_size=60))
    return platform, node_sets, partition_of, cores, steps


def _options(platform, node_sets, partition, cores):
    """(nodes of a pool ascending, cores per node, nodes a job of `cores` cores needs there) of
    every pool of `partition` with that many nodes, in node type order (the allocator's pools)."""
    first, pools = 0, []
    for group in platform.node_groups:
        members = [n for n in node_sets[partition] if first <= n < first + group.nodes]
        count = -(-cores // group.cores_per_node)
        if count <= len(members):
            pools.append((members, group.cores_per_node, count))
        first += group.nodes
    return pools


@settings(max_examples=60, deadline=None)
@given(allocator_runs())
def test_starts_and_ends_take_the_lowest_idle_nodes_of_the_first_pool_that_fits(run):
    platform, node_sets, partition_of, cores, steps = run
    jobs = len(cores)
    usable = [bool(_options(platform, node_sets, p, c)) for p, c in zip(partition_of, cores)]
    kept = [job for job in range(jobs) if usable[job]]  # jobs their partition can run
    if not kept:
        return
    partition_of = [partition_of[job] for job in kept]
    cores = [cores[job] for job in kept]
    workload = make_workload(
        np.arange(len(kept)), np.zeros(len(kept)), np.ones(len(kept)), np.array(cores)
    )
    allocator = PartitionAllocator(platform, node_sets, partition_of)
    allocator.bind(workload)
    idle = set(range(platform.nodes))
    running: list[tuple[int, object]] = []
    next_job = 0
    for start in steps:
        if start and next_job < len(kept):
            job = next_job
            next_job += 1
            expected = None
            for members, per_node, count in _options(
                platform, node_sets, partition_of[job], cores[job]
            ):
                free = [n for n in members if n in idle]
                if len(free) >= count:
                    expected = (free[:count], per_node)
                    break
            allocation = allocator.allocate(None, job)
            if expected is None:
                assert allocation is None
                continue
            assert allocation is not None
            assert (allocation.node_ids, allocation.cores) == expected
            idle -= set(allocation.node_ids)
            running.append((job, allocation))
        elif running:
            job, allocation = running.pop(0)
            allocator.release(job, allocation)
            idle |= set(allocation.node_ids)
        for partition, members in enumerate(node_sets):
            assert allocator.free_units_in(partition) == len(idle & set(members))
        assert allocator.idle_nodes().tolist() == sorted(idle)
        assert allocator.free_units() == len(idle)
