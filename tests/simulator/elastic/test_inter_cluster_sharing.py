"""Links between clusters shared between jobs: a parallel task that crosses a SHARED link between
clusters is one SimGrid L07 action whose rate the fair-bottleneck solver sets together with every
other job's task on that link. The micro projects x15-x23 check the times against the real
ElastiSim; these tests check the solver's invariants and what the runtime does around it."""

import csv
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cosched.cli import main
from cosched.simulator.elastic.flow import (
    Comm,
    CrossComm,
    Crossing,
    _comm,
    fair_bottleneck,
    pair_matrix,
)

from .test_inter_cluster import platform_with

MICRO = Path(__file__).parent / "data" / "micro"
RELATIVE = 1e-9  # float rounding of rates and times built from a few divisions and sums
LINKS = ("L1", "L2", "L3")
BANDWIDTH = {"L1": 2e9, "L2": 5e9, "L3": 1e9}


def crossing(own: float, loads: dict[str, float], bandwidth=BANDWIDTH) -> Crossing:
    links = tuple((key, load, bandwidth[key]) for key, load in loads.items())
    item = CrossComm(None, 0.0, 0.0, own, links)
    return Crossing(item, None, 0.0)


task_strategy = st.builds(
    crossing,
    st.floats(0.01, 100.0),
    st.dictionaries(st.sampled_from(LINKS), st.floats(1e6, 1e11), min_size=1),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(task_strategy, min_size=1, max_size=6))
def test_fair_bottleneck_rates_respect_bounds_links_and_the_rate_alone(tasks):
    fair_bottleneck(tasks, BANDWIDTH)
    for task in tasks:
        assert 0.0 < task.value <= task.bound * (1 + RELATIVE)
        assert task.value <= task.alone * (1 + RELATIVE)
    for key in LINKS:
        used = sum(
            load * task.value for task in tasks for name, load, _ in task.links if name == key
        )
        assert used <= BANDWIDTH[key] * (1 + RELATIVE)


@settings(max_examples=100, deadline=None)
@given(task_strategy, st.integers(1, 5))
def test_fair_bottleneck_alone_gives_the_rate_alone_and_equal_tasks_equal_rates(task, copies):
    fair_bottleneck([task], BANDWIDTH)
    assert task.value == pytest.approx(task.alone, rel=RELATIVE)
    item = CrossComm(None, 0.0, 0.0, 1.0 / task.bound, task.links)
    twins = [Crossing(item, None, 0.0) for _ in range(copies)]
    fair_bottleneck(twins, BANDWIDTH)
    assert all(twin.value == pytest.approx(twins[0].value, rel=RELATIVE) for twin in twins)


def test_fair_bottleneck_gives_equal_bandwidth_not_equal_progress():
    """SimGrid's fair-bottleneck solver splits a link's bandwidth evenly between its tasks (a
    max-min share of the rates would give both the same progress instead): x16's case."""
    small, large = crossing(8.0, {"L1": 1e10}), crossing(12.0, {"L1": 1.5e10})
    fair_bottleneck([small, large], BANDWIDTH)
    assert small.value * 1e10 == pytest.approx(1e9, rel=RELATIVE)
    assert large.value * 1.5e10 == pytest.approx(1e9, rel=RELATIVE)


def test_fair_bottleneck_subtracts_stopped_tasks_again_as_simgrid_does():
    """x19's case: on a 3 GB/s link, tasks held at 0.2 and 1.25 GB/s by their own resources leave
    the third task 1.4 GB/s (its max-min share would be 1.55 GB/s)."""
    link = {"L": 3e9}
    held = crossing(50.0, {"L": 1e10}, link), crossing(8.0, {"L": 1e10}, link)
    free = crossing(0.8, {"L": 1e10}, link)
    fair_bottleneck([*held, free], link)
    assert [task.value * 1e10 for task in held] == pytest.approx([2e8, 1.25e9], rel=RELATIVE)
    assert free.value * 1e10 == pytest.approx(1.4e9, rel=RELATIVE)


TWO_CLUSTERS = """
    <link id="Shared" bandwidth="2GBps" latency="0us"/>
    <link id="Fat" bandwidth="2GBps" latency="0us" sharing_policy="FATPIPE"/>
    <zoneRoute src="A" dst="B" gw_src="a-A_router" gw_dst="b-B_router">
      <link_ctn id="Shared"/></zoneRoute>
    <zoneRoute src="A" dst="C" gw_src="a-A_router" gw_dst="c-C_router">
      <link_ctn id="Fat"/></zoneRoute>"""


def test_only_tasks_crossing_a_shared_link_wait_for_the_other_jobs(tmp_path):
    platform = platform_with(tmp_path, TWO_CLUSTERS)
    sizes = pair_matrix(2e10, "gather", 2)
    inside = _comm(None, sizes, np.array([0, 1]), platform)  # a-0, a-1
    fat = _comm(None, sizes, np.array([0, 4]), platform)  # a-0, c-0: a FATPIPE is its own
    shared = _comm(None, sizes, np.array([0, 2]), platform)  # a-0, b-0
    assert type(inside) is Comm and type(fat) is Comm
    assert type(shared) is CrossComm
    assert shared.links == (("Shared", 1e10, 2e9),)
    assert fat.duration == pytest.approx(shared.duration, rel=RELATIVE)  # alone: the same time
    assert shared.duration == pytest.approx(shared.latency + 1e10 / 2e9, rel=RELATIVE)


def run_copy(tmp_path, monkeypatch, name: str, edit) -> dict:
    project = tmp_path / name
    shutil.copytree(MICRO / name, project)
    jobs_file = project / "data" / "input" / "jobs.json"
    document = json.loads(jobs_file.read_text())
    edit(document["jobs"])
    jobs_file.write_text(json.dumps(document))
    monkeypatch.chdir(project)
    arguments = ["elastic", "data/input/configuration.json", "--algorithm", "algorithm.py"]
    assert main([*arguments, "--out", str(tmp_path / "out"), "--quiet"]) == 0
    with open(tmp_path / "out" / "job_statistics.csv", newline="") as handle:
        return {row["ID"]: row for row in csv.DictReader(handle)}


def test_a_job_killed_while_crossing_leaves_the_link_to_the_other(tmp_path, monkeypatch):
    """x15 with a walltime of 5 s on job 1: job 0's first gather crosses at half speed until the
    kill, then alone (0.2 of the task per second); its last two gathers take 5.0001 s each."""

    def walltime(jobs):
        jobs[1]["walltime"] = 5

    got = run_copy(tmp_path, monkeypatch, "x15_inter_cluster_sharing", walltime)
    latency = 1e-4  # two node links of 50 us
    first_left = 1.0 - 0.1 * (5.0 - latency)
    expected = 5.0 + first_left / 0.2 + 2 * (latency + 5.0)
    assert got["1"]["Status"] == "killed"
    assert float(got["1"]["End Time"]) == pytest.approx(5.0, rel=RELATIVE)
    assert float(got["0"]["End Time"]) == pytest.approx(expected, rel=RELATIVE)


def test_jobs_crossing_one_after_the_other_each_get_the_whole_link(tmp_path, monkeypatch):
    def later(jobs):
        jobs[1]["submit_time"] = 20

    got = run_copy(tmp_path, monkeypatch, "x15_inter_cluster_sharing", later)
    assert float(got["0"]["End Time"]) == pytest.approx(15.0003, rel=RELATIVE)
    assert float(got["1"]["End Time"]) == pytest.approx(35.0003, rel=RELATIVE)
