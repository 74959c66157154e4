"""Partitions with memory, GPUs and node types, and EASY's reservation on the nodes a job may use
(cosched.simulator.partitions, cosched.simulator.allocators.Eligibility)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cosched.cli import main
from cosched.errors import InputError
from cosched.simulator.job_attributes import JobAttributes
from cosched.simulator.partitions import Partition, Partitions, load_partitions
from cosched.simulator.platform import NodeGroup, Platform
from cosched.simulator.resources import per_node_use, whole_nodes_needed
from cosched.simulator.schedulers import make_scheduler
from cosched.simulator.simulation import simulate
from cosched.simulator.workload import make_workload

from .conftest import contiguous_partitions

MEMORY_TOLERANCE = 1e-9  # relative: per-node memory sums compare with this slack for rounding
SHADOW_TOLERANCE = 1e-9  # seconds: a start compares with its promised shadow time with this slack


def attributes(partition_numbers) -> JobAttributes:
    """Jobs with unknown user/group/queue and these SWF partition numbers."""
    unknown = np.full(len(partition_numbers), -1)
    return JobAttributes(unknown, unknown, unknown, np.asarray(partition_numbers))


def halves(nodes: int) -> Partitions:
    """Partition "a" on the lower half of the nodes (SWF partition 0), "b" on the upper half (1)."""
    cut = nodes // 2
    return Partitions(
        (
            Partition("a", tuple(range(cut)), cut, swf_ids=(0,)),
            Partition("b", tuple(range(cut, nodes)), nodes - cut, swf_ids=(1,)),
        )
    )


# --- hand-computed schedules ---------------------------------------------------------------------


def test_memory_sizes_jobs_inside_their_partition_and_over_large_ones_are_rejected():
    # four 2-core nodes of 1000 MiB; a = nodes 0-1, b = nodes 2-3.
    # job 1 (a, 2 cores x 800 MiB): one process per node fits, so it takes nodes 0 and 1 for 10 s;
    # job 2 (a, 1 core, no memory) waits for a until 10 although b has an idle node;
    # job 3 (b, 2 cores x 400 MiB: both on one node, 800 MiB) takes node 2 for 20 s;
    # job 4 (b, 4 cores x 600 MiB) needs 4 nodes, b has 2: rejected at submit;
    # job 5 (b, 2 cores) takes node 3 at 1.
    platform = Platform(4, 1, 2, memory_per_node=1000)
    workload = make_workload(
        [1, 2, 3, 4, 5],
        [0, 0, 0, 1, 1],
        [10, 5, 20, 5, 5],
        [2, 1, 2, 4, 2],
        memory=[800, 0, 400, 600, 0],
    )
    assignment = halves(4).assign(workload, 2, attributes([0, 0, 1, 1, 1]), platform=platform)
    assert assignment.rejected == 1
    result = simulate(assignment.workload, platform, "easy", partitions=assignment)
    assert result.start.tolist() == [0, 10, 0, 1]
    assert [nodes.tolist() for nodes in result.nodes] == [[0, 1], [0], [2], [3]]
    # without memory, job 1 fits on node 0 and job 2 starts at once on node 1
    cores_only = make_workload([1, 2], [0, 0], [10, 5], [2, 1])
    plain = halves(4).assign(cores_only, 2, attributes([0, 0]), platform=Platform(4, 1, 2))
    result = simulate(cores_only, Platform(4, 1, 2), "easy", partitions=plain)
    assert result.start.tolist() == [0, 0]


def two_types() -> Platform:
    """ "big": nodes 0-2, 1000 MiB; "small": nodes 3-6, 100 MiB (one core each)."""
    return Platform.of_groups(
        [NodeGroup(3, 1, 1, 1000.0, 0, "big"), NodeGroup(4, 1, 1, 100.0, 0, "small")]
    )


def test_easy_reserves_for_a_blocked_head_on_the_node_type_it_can_use():
    # job 0 (big only) holds node 0 until 100; the head, job 1, needs all three big nodes: its
    # reservation is at 100. Job 2 (2 cores, no memory, 1000 s) would take big nodes 1-2 (the
    # first type with room), which the head needs at 100: it must not backfill. Counting the idle
    # small nodes for the head (its shadow "now") let job 2 start at 2 and the head wait to 1002.
    workload = make_workload(
        [0, 1, 2], [0, 1, 2], [100, 10, 1000], [1, 3, 2], memory=[500.0, 500.0, 0.0]
    )
    for partitions in (None, Partitions((Partition("all", tuple(range(7)), 7, swf_ids=(0,)),))):
        assignment = (
            None
            if partitions is None
            else partitions.assign(workload, 1, attributes([0, 0, 0]), platform=two_types())
        )
        result = simulate(workload, two_types(), "easy", partitions=assignment)
        assert result.start.tolist() == [0, 100, 100]
        assert [nodes.tolist() for nodes in result.nodes] == [[0], [0, 1, 2], [3, 4]]


def test_a_long_job_placed_on_another_node_type_backfills_beside_the_heads_reservation():
    # as above, but job 2 needs 3 nodes: big has 2 idle, so the allocator gives it small nodes,
    # which the head (big only) never uses: it starts at once although it ends after 100
    workload = make_workload(
        [0, 1, 2], [0, 1, 2], [100, 10, 1000], [1, 3, 3], memory=[500.0, 500.0, 0.0]
    )
    result = simulate(workload, two_types(), "easy")
    assert result.start.tolist() == [0, 100, 2]
    assert [nodes.tolist() for nodes in result.nodes] == [[0], [0, 1, 2], [3, 4, 5]]


def test_conservative_reserves_on_the_node_type_a_job_can_use_inside_a_partition():
    # one partition over both types. Job 0 (big only) holds node 0 until 100; job 1 needs all three
    # big nodes: its reservation is at 100 on big. Job 2 (2 cores, no memory, 1000 s) fits on big
    # only from 110 (after job 1), on small at once: it is reserved and started on small nodes 3-4.
    # Counting the idle nodes of both types in one profile reserved job 1 "now" (6 idle nodes),
    # its start failed, and job 2 took big nodes 1-2 at 2, so job 1 waited until 1002.
    workload = make_workload(
        [0, 1, 2], [0, 1, 2], [100, 10, 1000], [1, 3, 2], memory=[500.0, 500.0, 0.0]
    )
    whole = Partitions((Partition("all", tuple(range(7)), 7, swf_ids=(0,)),))
    assignment = whole.assign(workload, 1, attributes([0, 0, 0]), platform=two_types())
    scheduler = make_scheduler("conservative", record_reservations=True)
    result = simulate(workload, two_types(), scheduler, partitions=assignment)
    assert result.start.tolist() == [0, 100, 2]
    assert [nodes.tolist() for nodes in result.nodes] == [[0], [0, 1, 2], [3, 4]]
    assert scheduler.reservations == {0: 0, 1: 100, 2: 2}


def test_conservative_reserves_on_the_node_type_a_job_can_use_without_partitions():
    # the case above with no partition file: the platform's node types are the pools
    workload = make_workload(
        [0, 1, 2], [0, 1, 2], [100, 10, 1000], [1, 3, 2], memory=[500.0, 500.0, 0.0]
    )
    scheduler = make_scheduler("conservative", record_reservations=True)
    result = simulate(workload, two_types(), scheduler)
    assert result.start.tolist() == [0, 100, 2]
    assert [nodes.tolist() for nodes in result.nodes] == [[0], [0, 1, 2], [3, 4]]
    assert scheduler.reservations == {0: 0, 1: 100, 2: 2}


# --- properties ----------------------------------------------------------------------------------


@st.composite
def partitioned_resource_runs(draw):
    """1-3 node types (cores, optional memory, GPUs) split into 1-3 partitions of contiguous node
    ranges (a partition may span types); jobs with cores, memory and GPUs in random partitions."""
    groups = [
        NodeGroup(
            draw(st.integers(1, 4)),
            1,
            draw(st.integers(1, 4)),
            draw(st.none() | st.sampled_from([500.0, 1000.0, 3000.0])),
            draw(st.integers(0, 2)),
            f"type{index}",
        )
        for index in range(draw(st.integers(1, 3)))
    ]
    platform = Platform.of_groups(groups)
    nodes = platform.nodes
    partitions = contiguous_partitions(draw, nodes)
    count = len(partitions.partitions)
    jobs = draw(st.integers(1, 20))

    def column(values):
        return draw(st.lists(values, min_size=jobs, max_size=jobs))

    submit = np.array(column(st.integers(0, 40)))
    order = np.argsort(submit, kind="stable")
    run = np.array(column(st.integers(1, 30)))
    workload = make_workload(
        range(jobs),
        submit[order],
        run[order],
        np.array(column(st.integers(1, 8)))[order],
        (run + np.array(column(st.integers(0, 20))))[order],
        memory=np.array(column(st.sampled_from([0.0, 90.0, 240.0, 700.0])))[order],
        gpus=np.array(column(st.sampled_from([0, 0, 1, 3])))[order],
    )
    numbers = np.array(column(st.integers(0, count - 1)))
    return platform, partitions, workload, numbers


def over_commitments(result, workload, platform) -> list[str]:
    """Every (node, time) where running jobs use more cores, memory or GPUs than the node has."""
    groups = platform.node_groups
    kind = np.repeat(np.arange(len(groups)), [g.nodes for g in groups])
    events: dict[int, list] = {}
    for job, nodes in enumerate(result.nodes):
        use = per_node_use(
            int(workload.cores[job]),
            float(workload.memory[job]),
            int(workload.gpus[job]),
            nodes.size,
        )
        for node in nodes.tolist():
            events.setdefault(node, []).extend(
                [(result.start[job], 1, use), (result.end[job], 0, use)]
            )
    problems = []
    for node, changes in events.items():
        group = groups[kind[node]]
        used = [0, 0.0, 0]
        for time, arrives, use in sorted(changes, key=lambda e: (e[0], e[1])):
            sign = 1 if arrives else -1
            used = [u + sign * x for u, x in zip(used, use)]
            memory = group.memory_per_node
            if (
                used[0] > group.cores_per_node
                or (memory is not None and used[1] > memory * (1 + MEMORY_TOLERANCE))
                or used[2] > group.gpus_per_node
            ):
                problems.append(f"node {node} at {time}: {used}")
    return problems


@settings(max_examples=30, deadline=None)
@given(partitioned_resource_runs(), st.sampled_from(["fcfs", "easy", "conservative", "sjf"]))
def test_no_resource_over_committed_and_no_job_outside_its_partition(case, scheduler):
    platform, partitions, workload, numbers = case
    assignment = partitions.assign(
        workload, platform.cores_per_node, attributes(numbers), platform=platform
    )
    if not len(assignment.workload):
        return
    kept = assignment.workload
    result = simulate(kept, platform, scheduler, partitions=assignment)
    assert np.isfinite(result.end).all() and (result.start >= kept.submit).all()
    for job, used in enumerate(result.nodes):
        allowed = partitions.partitions[assignment.partition_of[job]].nodes
        assert set(used.tolist()) <= set(allowed)
    assert over_commitments(result, kept, platform) == []


@settings(max_examples=25, deadline=None)
@given(partitioned_resource_runs(), st.booleans())
def test_easy_never_starts_a_blocked_head_later_than_its_reservation(case, partitioned):
    # EASY's promise (003 §5.1.2); on several node types it holds only if the reservation counts
    # the nodes of the pools the head may use
    platform, partitions, workload, numbers = case
    assignment = None
    if partitioned:
        assignment = partitions.assign(
            workload, platform.cores_per_node, attributes(numbers), platform=platform
        )
        workload = assignment.workload
        if not len(workload):
            return
    elif not runnable(workload, platform):
        return
    scheduler = make_scheduler("easy", record_reservations=True)
    result = simulate(workload, platform, scheduler, partitions=assignment)
    for job, promised in scheduler.reservations.items():
        assert result.start[job] <= promised + SHADOW_TOLERANCE


@settings(max_examples=25, deadline=None)
@given(partitioned_resource_runs())
def test_conservative_never_starts_a_job_later_than_its_first_reservation(case):
    # Conservative's promise (003 §5.1.3) when jobs end by their estimates; with node types inside
    # a partition it holds only if each reservation is made on the nodes of one pool
    platform, partitions, workload, numbers = case
    assignment = partitions.assign(
        workload, platform.cores_per_node, attributes(numbers), platform=platform
    )
    if not len(assignment.workload):
        return
    scheduler = make_scheduler("conservative", record_reservations=True)
    result = simulate(assignment.workload, platform, scheduler, partitions=assignment)
    for job, promised in scheduler.reservations.items():
        assert result.start[job] <= promised + SHADOW_TOLERANCE


@settings(max_examples=25, deadline=None)
@given(partitioned_resource_runs())
def test_conservative_keeps_its_reservations_on_node_types_without_partitions(case):
    platform, _, workload, _ = case
    if not runnable(workload, platform):
        return
    scheduler = make_scheduler("conservative", record_reservations=True)
    result = simulate(workload, platform, scheduler)
    for job, promised in scheduler.reservations.items():
        assert result.start[job] <= promised + SHADOW_TOLERANCE


def runnable(workload, platform) -> bool:
    """True if some node type can run every job (else the run is an input error)."""
    fits = np.zeros(len(workload), dtype=bool)
    for group in platform.node_groups:
        fits |= whole_nodes_needed(workload.cores, workload.memory, workload.gpus, group) > 0
    return bool(fits.all())


# --- the command line ----------------------------------------------------------------------------


def test_cli_runs_partitions_with_memory_node_types_and_counts_rejections(tmp_path, capsys):
    platform = tmp_path / "platform.json"
    platform.write_text(
        json.dumps(
            {
                "groups": [
                    {"name": "fat", "nodes": 2, "cores_per_socket": 2, "memory_per_node": 4096},
                    {"name": "thin", "nodes": 2, "cores_per_socket": 2, "memory_per_node": 1024},
                ]
            }
        )
    )
    partitions = tmp_path / "partitions.json"
    partitions.write_text(
        json.dumps({"partitions": [{"name": "all", "nodes": "0-3"}], "default": "all"})
    )
    line = "{id} {submit} -1 10 {procs} -1 -1 {procs} 10 {memory} 1 1 1 -1 1 1 -1 -1\n"
    trace = tmp_path / "jobs.swf"
    trace.write_text(
        line.format(id=1, submit=0, procs=2, memory=2048 * 1024)  # 2 GiB per core: fat only
        + line.format(id=2, submit=0, procs=2, memory=512 * 1024)  # fits everywhere
        + line.format(id=3, submit=0, procs=4, memory=4096 * 1024)  # 4 fat nodes: there are 2
    )
    out = tmp_path / "out"
    code = main(
        [
            "simulate",
            "--workload",
            str(trace),
            "--platform",
            str(platform),
            "--swf-memory",
            "requested",
            "--partitions",
            str(partitions),
            "--out",
            str(out),
            "--quiet",
        ]
    )
    _, err = capsys.readouterr()
    assert code == 0, err
    summary = json.loads((out / "summary.json").read_text())
    assert summary["cleaning"]["rejected_partition_limits"] == 1
    rows = (out / "jobs.csv").read_text().splitlines()
    assert len(rows) == 3  # header and the two accepted jobs, both started at 0


def test_cli_still_refuses_partitions_with_a_hybrid_mechanism(tmp_path, capsys):
    partitions = tmp_path / "partitions.json"
    partitions.write_text(json.dumps({"partitions": [{"name": "all", "nodes": "0-3"}]}))
    platform = tmp_path / "platform.json"
    platform.write_text(json.dumps({"nodes": 4}))
    trace = tmp_path / "jobs.swf"
    trace.write_text("1 0 -1 10 1 -1 -1 1 10 -1 1 1 1 -1 1 1 -1 -1\n")
    code = main(
        [
            "simulate",
            "--workload",
            str(trace),
            "--platform",
            str(platform),
            "--partitions",
            str(partitions),
            "--hybrid",
            "baseline",
            "--quiet",
        ]
    )
    _, err = capsys.readouterr()
    assert code == 2 and len(err.strip().splitlines()) == 1 and "--partitions" in err


@pytest.mark.parametrize(
    ("entries", "field", "needle"),
    [
        (
            [{"name": "a", "nodes": "0-1"}, {"name": "b", "nodes": "1-3"}],
            "partitions[1].nodes",
            "node 1 is also in partition 'a'",
        ),
        (
            [
                {"name": "a", "nodes": "0-1", "swf_ids": [3]},
                {"name": "b", "nodes": "2-3", "swf_ids": [4, 3]},
            ],
            "partitions[1].swf_ids",
            "SWF queue 3 is also mapped to partition 'a'",
        ),
        (
            [{"name": "a", "nodes": "0-1"}, {"name": "a", "nodes": "2-3"}],
            "partitions[1].name",
            "given twice",
        ),
    ],
)
def test_partitions_sharing_a_node_an_swf_number_or_a_name_are_one_error_naming_it(
    tmp_path, entries, field, needle
):
    path = tmp_path / "partitions.json"
    path.write_text(json.dumps({"partitions": entries, "map_by": "queue"}))
    with pytest.raises(InputError) as error:
        load_partitions(path, Platform(4))
    assert error.value.field == field and needle in str(error.value)
