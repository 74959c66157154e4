"""Short paths of the flow model on a platform of alike nodes (`flow.alike_nodes`, the one
definition the runtime uses too) that must give the same bits as the general code: a parallel task
without per-node arrays (`flow._ptask`) and a PFS task's one route latency and cap."""

import dataclasses

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from cosched.simulator.elastic import flow
from cosched.simulator.elastic.flow import pair_matrix
from cosched.simulator.elastic.platform import ElastiSimPlatform
from cosched.simulator.elastic.workload import Task

NODES = 8
PATTERNS = ("all_to_all", "gather", "scatter", "ring", "ring_clockwise", "master_worker")


def alike_platform(speed: float, bandwidth: float, latency: float) -> ElastiSimPlatform:
    zeros = np.zeros(NODES)
    return ElastiSimPlatform(
        tuple(f"n{i}" for i in range(NODES)),
        np.full(NODES, speed),
        np.full(NODES, bandwidth),
        np.full(NODES, latency),
        np.zeros(NODES, dtype=np.int64),
        zeros,
        zeros,
        zeros,
        np.zeros(NODES, dtype=np.int64),
        zeros,
        zeros,
        None,
        None,
    )


def bits(value):
    """`value` with every float (also in tuples and arrays) as its exact hexadecimal text."""
    if isinstance(value, float):
        return value.hex()
    if isinstance(value, np.ndarray):
        return [float(item).hex() for item in value.ravel()]
    if isinstance(value, tuple):
        return tuple(bits(item) for item in value)
    return value


positive = st.floats(min_value=1e-9, max_value=1e15, allow_nan=False, allow_infinity=False)
amounts = st.floats(min_value=0.0, max_value=1e15, allow_nan=False, allow_infinity=False)


@settings(max_examples=200, deadline=None)
@given(
    speed=positive,
    bandwidth=positive,
    latency=st.floats(min_value=0.0, max_value=1.0),
    count=st.integers(min_value=1, max_value=NODES),
    pattern=st.sampled_from((*PATTERNS, "matrix", "none")),
    size=amounts,
    cells=st.lists(amounts, min_size=NODES * NODES, max_size=NODES * NODES),
    flops=st.none() | st.lists(amounts, min_size=NODES, max_size=NODES),
)
def test_alike_parallel_task_is_the_general_one_bit_for_bit(
    speed, bandwidth, latency, count, pattern, size, cells, flops
):
    platform = alike_platform(speed, bandwidth, latency)
    general = dataclasses.replace(platform)
    flow._ALIKE[general] = None  # the same nodes, through the per-node arrays
    assert flow.alike_nodes(platform) == (speed, latency, bandwidth)
    if pattern == "matrix":
        sizes = pair_matrix(cells[: count * count], "matrix", count)
    elif pattern == "none":
        sizes = np.zeros((count, count))
    else:
        sizes = pair_matrix(size, pattern, count)
    nodes = np.arange(NODES)[NODES - count :]
    work = None if flops is None else np.asarray(flops[:count])
    assert bits(flow._ptask(sizes, nodes, platform, work)) == bits(
        flow._ptask(sizes, nodes, general, work)
    )


@settings(max_examples=200, deadline=None)
@given(
    bandwidth=positive,
    latency=st.floats(min_value=0.0, max_value=1.0),
    route=st.floats(min_value=0.0, max_value=1.0),
    kind=st.sampled_from(("pfs_read", "pfs_write")),
    sizes=st.lists(amounts | st.just(0.0), min_size=1, max_size=NODES),
    asynchronous=st.booleans(),
)
def test_alike_pfs_transfer_is_the_general_one_bit_for_bit(
    bandwidth, latency, route, kind, sizes, asynchronous
):
    platform = dataclasses.replace(
        alike_platform(1e9, bandwidth, latency),
        pfs_read=("read", 1e10, route),
        pfs_write=("write", 1e10, route),
    )
    general = dataclasses.replace(platform)
    flow._ALIKE[general] = None
    task = Task(kind, "test", asynchronous=asynchronous)
    nodes = np.arange(NODES)[NODES - len(sizes) :]
    fast, slow = (
        flow._pfs_cost(task, np.asarray(sizes), nodes, where) for where in (platform, general)
    )
    assert fast == slow
    assert [bits(field) for field in (fast.sizes, fast.caps, fast.latencies)] == [
        bits(field) for field in (slow.sizes, slow.caps, slow.latencies)
    ]


def test_a_platform_of_unlike_nodes_takes_the_general_path():
    platform = alike_platform(1e9, 1e9, 1e-6)
    assert flow.alike_nodes(platform) is not None
    for field in ("speed", "latency", "bandwidth", "bb_read", "gpus"):
        values = getattr(platform, field).astype(np.float64)
        values[NODES // 2] += 1.0
        assert flow.alike_nodes(dataclasses.replace(platform, **{field: values})) is None
