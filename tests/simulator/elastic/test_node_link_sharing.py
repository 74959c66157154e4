"""A job's parallel task and its own asynchronous PFS flows share its nodes' links (SimGrid L07: a
node's private link, split duplex, is one resource for every action on it; a PFS write uses the up
link, a read the down link). The micro projects x24-x29 check the times against the real ElastiSim;
these tests check the invariants on the scenario platform (1 GB/s node links, no latency)."""

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cosched.simulator.elastic.algorithms import make_algorithm

from .scenario import BANDWIDTH, run_scenario, write_scenario

MICRO = Path(__file__).parent / "data" / "micro"
TIME_TOLERANCE = 1e-9  # relative: times built from a few divisions and sums


def overlap_model(kind: str, pattern: str, iterations: int, **cpu) -> dict:
    """Per iteration: an asynchronous PFS transfer of `io` bytes over all ranks, then a
    communication of `comm` bytes (and the keys in `cpu`)."""
    task = {"type": "cpu", "bytes": "comm", "communication_pattern": pattern, **cpu}
    io = {"type": kind, "bytes": "io", "pattern": "all_ranks", "async": True}
    return {"phases": [{"iterations": iterations, "tasks": [io, task]}]}


def simulate(folder, model, io: float, comm: float, **job):
    jobs = [{"type": "rigid", "submit_time": 0, "num_nodes": 2, **job}]
    for spec in jobs:
        spec["arguments"] = {"io": io, "comm": comm}
    return run_scenario(write_scenario(folder, jobs, model, nodes=2), make_algorithm("fcfs-rigid"))


@settings(max_examples=20, deadline=None)
@given(
    st.sampled_from([("pfs_write", "all_to_all"), ("pfs_read", "gather")]),
    st.floats(1e8, 1e10),
    st.floats(1e8, 1e10),
    st.integers(1, 3),
)
def test_the_busiest_node_link_stays_fully_used(tmp_path_factory, kinds, io, comm, iterations):
    """Both nodes write (or read) io / 2 while the task moves comm / 2 over the root's (or every)
    node link in the same direction: whichever ends first, the link carries (io + comm) / 2 at its
    full bandwidth each iteration (an equal share while both run, then all of it)."""
    kind, pattern = kinds
    sim = simulate(
        tmp_path_factory.mktemp("overlap"), overlap_model(kind, pattern, iterations), io, comm
    )
    expected = iterations * (io + comm) / 2 / BANDWIDTH
    assert sim.runs[0].end == pytest.approx(expected, rel=TIME_TOLERANCE)
    assert not sim._node_tasks
    assert all(not caps for link in sim.routes.values() for caps in link.node_caps.values())


def test_a_task_held_by_its_cpus_leaves_the_rest_of_the_link_to_the_flows(tmp_path):
    """A coupled all-to-all of 1 GB per node and 4 Gflop per node takes 4 s (CPU bound), 0.25 GB/s
    of each up link: the write of 4 GB per node gets the other 0.75 GB/s (3 GB in 4 s), then the
    whole link for its last GB (an equal share would leave it 2 GB after 4 s: 6 s)."""
    cpu = {"flops": 4e9, "computation_pattern": "uniform", "coupled": True}
    sim = simulate(tmp_path, overlap_model("pfs_write", "all_to_all", 1, **cpu), 8e9, 2e9)
    assert sim.runs[0].end == pytest.approx(5.0, rel=TIME_TOLERANCE)


def test_a_job_killed_while_its_task_shares_node_links_leaves_nothing_behind(tmp_path):
    """Killed 2 s into a 10 s overlap: its task, its flows and their shares of the node links
    are gone from both solvers."""
    sim = simulate(tmp_path, overlap_model("pfs_write", "all_to_all", 2), 1e10, 1e10, walltime=2)
    run = sim.runs[0]
    assert run.status == "killed" and run.end == pytest.approx(2.0)
    assert not sim._node_tasks and not sim.network.tasks
    for link in sim.routes.values():
        assert not link.transfers and not link.node_caps
        assert not any(link.node_flows.values()) and not any(link.extra_flows.values())
        assert not link.crowded


@pytest.mark.parametrize("walltime", [5e-5, 3e-4, 5.0])
def test_a_job_killed_before_during_or_after_its_flows_start_leaves_nothing_behind(
    walltime, tmp_path, monkeypatch
):
    """x24 killed while its all-to-all is in its route latency (50 us of 100 us), after the task
    started but before its writes did (300 us of 550 us), or in the middle of both."""
    project = tmp_path / "x24"
    shutil.copytree(MICRO / "x24_async_write_all_to_all", project)
    jobs_file = project / "data" / "input" / "jobs.json"
    document = json.loads(jobs_file.read_text())
    document["jobs"][0]["walltime"] = walltime
    jobs_file.write_text(json.dumps(document))
    monkeypatch.chdir(project)
    sim = run_scenario(
        project / "data" / "input" / "configuration.json", make_algorithm("fcfs-rigid")
    )
    assert sim.runs[0].status == "killed" and sim.runs[0].end == pytest.approx(walltime)
    assert not sim._node_tasks and not sim.network.tasks
    for link in sim.routes.values():
        assert not link.transfers and not link.node_caps and not link.crowded
        assert not any(link.node_flows.values()) and not any(link.extra_flows.values())
