"""A run's node ids (`cosched.simulator.result.JobNodes`) read as the list of per-job arrays they
replace: same length, items, negative indices, slices, iteration, errors and pickling."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cosched.simulator.allocators import Allocation
from cosched.simulator.platform import PRESETS
from cosched.simulator.result import JobNodes, SimulationResult, node_arrays
from cosched.simulator.workload import Workload

JOBS = st.lists(st.lists(st.integers(0, 500), max_size=6), max_size=15)


def _listed(nodes) -> list[list[int]]:
    return [ids.tolist() for ids in nodes]


@settings(max_examples=60, deadline=None)
@given(JOBS, st.integers(-20, 20), st.integers(-20, 20), st.integers(1, 3))
def test_job_nodes_read_as_the_list_of_arrays(jobs, index, stop, step):
    arrays = [np.array(ids, dtype=np.int64) for ids in jobs]
    unread = pickle.loads(pickle.dumps(JobNodes.of(arrays)))  # no job read before it is pickled
    assert _listed(unread) == jobs
    nodes = JobNodes.of(arrays)
    assert len(nodes) == len(jobs) and _listed(nodes) == jobs
    assert nodes.counts.tolist() == [len(ids) for ids in jobs]
    assert _listed(nodes[index:stop:step]) == jobs[index:stop:step]
    if -len(jobs) <= index < len(jobs):
        assert (
            nodes[index].tolist() == jobs[index] and nodes[np.int64(index)].tolist() == jobs[index]
        )
    else:
        with pytest.raises(IndexError):
            nodes[index]
    assert JobNodes.of(nodes) is nodes
    assert _listed(pickle.loads(pickle.dumps(nodes))) == jobs  # results cross to worker processes


def test_a_result_keeps_a_list_of_arrays_as_job_nodes():
    workload = Workload(
        job_id=np.arange(3),
        submit=np.zeros(3),
        run=np.ones(3),
        cores=np.ones(3, dtype=np.int64),
        estimate=np.ones(3),
    )
    arrays = [np.array([0, 1]), np.array([], dtype=np.int64), np.array([2])]
    result = SimulationResult(
        workload, PRESETS["kth-sp2"], "easy", np.zeros(3), np.ones(3), arrays, 0.0
    )
    assert isinstance(result.nodes, JobNodes)
    assert _listed(result.nodes) == [[0, 1], [], [2]]
    assert result.jobs_frame()["node_count"].tolist() == [2, 0, 1]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.none(), st.lists(st.integers(0, 2**40), max_size=6)), max_size=15))
def test_node_arrays_hold_each_jobs_ids_in_job_order(jobs):
    """From the allocations (`node_arrays`), of lists or of arrays of ids: every job's ids in
    order, none for a job that never ran."""
    expected = [[] if ids is None else ids for ids in jobs]
    for kind in (list, np.array):
        allocations = [None if ids is None else Allocation(kind(ids), 1) for ids in jobs]
        nodes = node_arrays(allocations)
        assert _listed(nodes) == expected
        assert nodes.flat.dtype == np.int64 and nodes.counts.dtype == np.int64
