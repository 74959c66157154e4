"""Partitions: jobs confined to their partition's nodes, limits rejected at submit, each partition
backfilled on its own (cosched.simulator.partitions)."""

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
from cosched.simulator.platform import Platform
from cosched.simulator.schedulers import make_scheduler
from cosched.simulator.simulation import simulate
from cosched.simulator.workload import make_workload

from .conftest import contiguous_partitions

QUEUE_SCHEDULERS = ("fcfs", "easy", "conservative", "sjf", "ljf")


def attributes(partition_numbers) -> JobAttributes:
    """Jobs with unknown user/group/queue and these SWF partition numbers."""
    jobs = len(partition_numbers)
    unknown = np.full(jobs, -1)
    return JobAttributes(unknown, unknown, unknown, np.asarray(partition_numbers))


def two_partitions(**limits) -> Partitions:
    """4 one-core nodes: "a" on 0-1 (SWF partition 0), "b" on 2-3 (SWF partition 1)."""
    return Partitions(
        (
            Partition(
                "a", (0, 1), limits.get("a_max_nodes", 2), limits.get("a_max_time", np.inf), (0,)
            ),
            Partition("b", (2, 3), 2, np.inf, (1,)),
        )
    )


def run(scheduler, job_ids, submit, run_time, cores, estimate, partition_numbers, partitions):
    workload = make_workload(job_ids, submit, run_time, cores, estimate)
    assignment = partitions.assign(workload, 1, attributes(partition_numbers))
    return simulate(assignment.workload, Platform(4), scheduler, partitions=assignment), assignment


@pytest.mark.parametrize("scheduler", ["fcfs", "easy", "conservative"])
def test_a_job_waits_for_its_partition_although_other_nodes_are_idle(scheduler):
    # job 4 (partition a, 1 node) arrives at 2 while node 3 of b is idle: it waits for a's nodes
    result, _ = run(
        scheduler,
        [1, 2, 3, 4],
        [0, 0, 1, 2],
        [10, 10, 5, 3],
        [2, 1, 2, 1],
        [10, 10, 5, 3],
        [0, 1, 1, 0],
        two_partitions(),
    )
    assert result.start.tolist() == [0, 0, 10, 10]
    assert [nodes.tolist() for nodes in result.nodes] == [[0, 1], [2], [2, 3], [0]]
    plain = simulate(
        make_workload([1, 2, 3, 4], [0, 0, 1, 2], [10, 10, 5, 3], [2, 1, 2, 1]),
        Platform(4),
        "easy",
    )
    assert plain.start[3] == 2  # without partitions EASY backfills it on the idle node 3 at once


@pytest.mark.parametrize("scheduler", ["easy", "conservative"])
def test_backfill_in_one_partition_is_not_blocked_by_the_other_partitions_head(scheduler):
    # a: job 1 holds both nodes until 100, so job 2 (a's head) waits until 100.
    # b: job 3 starts at 2 on node 2 (a's blocked head does not hold it back); job 4 (b's head, 2
    # nodes) waits for job 3's end at 52; job 5 (1 node, ends at 24 <= 52) backfills at 4 on node
    # 3; job 6 (1 node, 100 s) would delay b's head: it starts at 62, after job 4.
    result, _ = run(
        scheduler,
        [1, 2, 3, 4, 5, 6],
        [0, 1, 2, 3, 4, 5],
        [100, 10, 50, 10, 20, 100],
        [2, 2, 1, 2, 1, 1],
        [100, 10, 50, 10, 20, 100],
        [0, 0, 1, 1, 1, 1],
        two_partitions(),
    )
    assert result.start.tolist() == [0, 100, 2, 52, 4, 62]
    assert [nodes.tolist() for nodes in result.nodes] == [[0, 1], [0, 1], [2], [2, 3], [3], [2]]


def test_fcfs_blocks_only_its_own_partition():
    # a's head (job 2) waits; b's job 3 still starts at once (Slurm: a pending job holds back only
    # the lower-priority jobs of its partition)
    result, _ = run(
        "fcfs",
        [1, 2, 3],
        [0, 1, 2],
        [100, 10, 5],
        [2, 2, 1],
        [100, 10, 5],
        [0, 0, 1],
        two_partitions(),
    )
    assert result.start.tolist() == [0, 100, 2]


def test_jobs_breaking_the_limits_are_rejected_at_submit_and_counted():
    partitions = two_partitions(a_max_nodes=1, a_max_time=50)
    # job 1: 2 nodes in a (max 1); job 2: 60 s requested in a (max 50); job 3 fits
    result, assignment = run(
        "easy", [1, 2, 3], [0, 0, 0], [10, 10, 10], [2, 1, 1], [10, 60, 10], [0, 0, 0], partitions
    )
    assert assignment.rejected == 2
    assert assignment.workload.cleaning["rejected_partition_limits"] == 2
    assert result.workload.job_id.tolist() == [3]
    assert result.start.tolist() == [0]


def test_a_job_of_no_partition_without_a_default_is_an_error_naming_the_field():
    workload = make_workload([1, 2], [0, 0], [1, 1], [1, 1])
    with pytest.raises(InputError, match="job 2 has partition 7") as error:
        two_partitions().assign(workload, 1, attributes([0, 7]))
    assert error.value.field == "partition"
    default = Partitions(two_partitions().partitions, default="b")
    assert default.assign(workload, 1, attributes([0, 7])).partition_of.tolist() == [0, 1]


@st.composite
def partitioned_runs(draw):
    """A small workload on 1..6 nodes split into 1..3 partitions (contiguous ranges)."""
    nodes = draw(st.integers(2, 6))
    partitions = contiguous_partitions(draw, nodes)
    count = len(partitions.partitions)
    jobs = draw(st.integers(1, 25))
    numbers = draw(st.lists(st.integers(0, count - 1), min_size=jobs, max_size=jobs))
    sizes = [draw(st.integers(1, len(partitions.partitions[p].nodes))) for p in numbers]
    submit = draw(st.lists(st.integers(0, 50), min_size=jobs, max_size=jobs))
    run_time = draw(st.lists(st.integers(1, 40), min_size=jobs, max_size=jobs))
    slack = draw(st.lists(st.integers(0, 20), min_size=jobs, max_size=jobs))
    workload = make_workload(
        range(jobs), submit, run_time, sizes, [r + s for r, s in zip(run_time, slack)]
    )
    order = np.argsort(submit, kind="stable")
    return nodes, partitions, workload, np.asarray(numbers)[order]


@settings(max_examples=40, deadline=None)
@given(partitioned_runs(), st.sampled_from(QUEUE_SCHEDULERS), st.booleans())
def test_no_job_ever_runs_outside_its_partition(case, scheduler, multifactor):
    nodes, partitions, workload, numbers = case
    assignment = partitions.assign(workload, 1, attributes(numbers))
    options = {"priority": "multifactor"} if multifactor else None
    result = simulate(
        assignment.workload,
        Platform(nodes),
        scheduler,
        partitions=assignment,
        scheduler_options=options,
    )
    assert not np.isnan(result.start).any()
    busy: dict[int, list[tuple[float, float]]] = {}
    for job, used in enumerate(result.nodes):
        allowed = partitions.partitions[assignment.partition_of[job]].nodes
        assert set(used.tolist()) <= set(allowed)
        assert used.size == workload.cores[job]
        for node in used.tolist():  # and no node holds two jobs at once
            for begin, end in busy.get(node, []):
                assert result.end[job] <= begin or result.start[job] >= end
            busy.setdefault(node, []).append((result.start[job], result.end[job]))


@settings(max_examples=40, deadline=None)
@given(partitioned_runs(), st.sampled_from(QUEUE_SCHEDULERS))
def test_one_partition_over_every_node_schedules_as_no_partition(case, scheduler):
    nodes, _, workload, _ = case
    whole = Partitions((Partition("all", tuple(range(nodes)), nodes, swf_ids=(0,)),))
    assignment = whole.assign(workload, 1, attributes(np.zeros(len(workload), dtype=int)))
    partitioned = simulate(workload, Platform(nodes), scheduler, partitions=assignment)
    plain = simulate(workload, Platform(nodes), scheduler)
    assert partitioned.start.tolist() == plain.start.tolist()
    assert [n.tolist() for n in partitioned.nodes] == [n.tolist() for n in plain.nodes]


@settings(max_examples=40, deadline=None)
@given(partitioned_runs(), st.sampled_from([1, 2, 100]))
def test_conservative_reserves_as_without_partitions_with_one_partition_over_every_node(
    case, depth
):
    # both run one pass loop (`conservative_pass`): with a short window, jobs slide into it as the
    # jobs ahead start, and are reserved in the same pass
    nodes, _, workload, _ = case
    whole = Partitions((Partition("all", tuple(range(nodes)), nodes, swf_ids=(0,)),))
    assignment = whole.assign(workload, 1, attributes(np.zeros(len(workload), dtype=int)))
    runs = []
    for partitions in (assignment, None):
        scheduler = make_scheduler("conservative", depth=depth, record_reservations=True)
        result = simulate(workload, Platform(nodes), scheduler, partitions=partitions)
        runs.append((result.start.tolist(), scheduler.reservations))
    assert runs[0] == runs[1]


# EASY's variants (`shadow_extra`, `queued_durations`) and its other settings: the per-partition
# pass backfills as the scheduler it runs for, not as EASY's defaults
EASY_SETTINGS = st.fixed_dictionaries(
    {
        "shadow_extra": st.sampled_from(["first", "all"]),
        "queued_durations": st.sampled_from(["estimate", "run"]),
        "depth": st.sampled_from([1, 2, 100]),
        "record_reservations": st.booleans(),
    }
)


@settings(max_examples=60, deadline=None)
@given(partitioned_runs(), EASY_SETTINGS)
def test_one_partition_over_every_node_backfills_with_the_schedulers_easy_settings(case, options):
    nodes, _, workload, _ = case
    whole = Partitions((Partition("all", tuple(range(nodes)), nodes, swf_ids=(0,)),))
    assignment = whole.assign(workload, 1, attributes(np.zeros(len(workload), dtype=int)))
    runs = []
    for partitions in (assignment, None):
        scheduler = make_scheduler("easy", **options)
        result = simulate(workload, Platform(nodes), scheduler, partitions=partitions)
        runs.append(
            (result.start.tolist(), [n.tolist() for n in result.nodes], scheduler.reservations)
        )
    assert runs[0] == runs[1]


@settings(max_examples=40, deadline=None)
@given(partitioned_runs(), EASY_SETTINGS)
def test_each_partition_schedules_as_the_scheduler_on_its_nodes_alone(case, options):
    # in arrival order each partition's queue and nodes are its own: its jobs start as they would
    # on a platform of its nodes alone, under the same settings. With a backfilling depth below the
    # queue's length that does not hold: a pass at another partition's event looks again at jobs
    # the partition alone would next look at only at its own next event (a job that moved up after
    # a start), so every waiting job is within the depth here
    nodes, partitions, workload, numbers = case
    options = {**options, "depth": max(options["depth"], len(workload))}
    assignment = partitions.assign(workload, 1, attributes(numbers))
    scheduler = make_scheduler("easy", **options)
    together = simulate(assignment.workload, Platform(nodes), scheduler, partitions=assignment)
    for number, partition in enumerate(partitions.partitions):
        jobs = np.flatnonzero(assignment.partition_of == number)
        if not jobs.size:
            continue
        alone_scheduler = make_scheduler("easy", **options)
        alone = simulate(
            assignment.workload.take(jobs), Platform(len(partition.nodes)), alone_scheduler
        )
        assert together.start[jobs].tolist() == alone.start.tolist()
        first = partition.nodes[0]
        assert [together.nodes[j].tolist() for j in jobs] == [
            (n + first).tolist() for n in alone.nodes
        ]
        if scheduler.reservations is not None:  # each head's shadow time, on its own nodes
            members = set(jobs.tolist())
            ours = {job: at for job, at in scheduler.reservations.items() if job in members}
            assert ours == {int(jobs[job]): at for job, at in alone_scheduler.reservations.items()}


# --- the file and the command line ----------------------------------------------------------------

SWF_LINE = (
    "{id} {submit} -1 {run} {procs} -1 -1 {procs} {run} -1 1 {user} 1 -1 {queue} {part} -1 -1\n"
)


def swf(tmp_path, rows) -> str:
    path = tmp_path / "jobs.swf"
    path.write_text(
        "".join(
            SWF_LINE.format(id=i + 1, submit=s, run=r, procs=p, user=u, queue=q, part=part)
            for i, (s, r, p, u, q, part) in enumerate(rows)
        )
    )
    return str(path)


def platform_file(tmp_path, nodes=4, cores=1) -> str:
    path = tmp_path / "platform.json"
    path.write_text(json.dumps({"nodes": nodes, "cores_per_socket": cores}))
    return str(path)


def partition_file(tmp_path, document) -> str:
    path = tmp_path / "partitions.json"
    path.write_text(document if isinstance(document, str) else json.dumps(document))
    return str(path)


GOOD = {
    "map_by": "queue",
    "partitions": [
        {"name": "a", "nodes": "0-1", "swf_ids": [0]},
        {"name": "b", "nodes": "2-3", "swf_ids": [1], "max_time": 30},
    ],
}


def cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_runs_the_partitions_of_a_file_and_counts_rejections(tmp_path, capsys):
    # queue 1 -> b (max 30 s): the third job asks for 40 s and is rejected
    workload = swf(
        tmp_path,
        [(0, 10, 2, 1, 0, -1), (0, 10, 1, 1, 1, -1), (1, 40, 1, 1, 1, -1), (2, 5, 1, 1, 0, -1)],
    )
    out = tmp_path / "out"
    code, printed, err = cli(
        capsys,
        "simulate",
        "--workload",
        workload,
        "--platform",
        platform_file(tmp_path),
        "--partitions",
        partition_file(tmp_path, GOOD),
        "--out",
        out,
        "--json",
        "--quiet",
    )
    assert code == 0, err
    summary = json.loads((out / "summary.json").read_text())
    assert summary["cleaning"]["rejected_partition_limits"] == 1
    assert summary["partitions"].endswith("partitions.json")
    jobs = (out / "jobs.csv").read_text().splitlines()
    assert len(jobs) == 4  # header + the 3 accepted jobs
    assert jobs[3].split(",")[:3] == ["4", "2.0", "10.0"]  # job 4 waits for partition a


@pytest.mark.parametrize(
    ("document", "needles"),
    [
        ("{not json", ["partitions.json"]),
        ({"partitions": []}, ["field 'partitions'"]),
        ({"partitions": [{"name": "a"}]}, ["field 'partitions[0].nodes'", "missing"]),
        (
            {"partitions": [{"name": "a", "nodes": "0-9"}]},
            ["field 'partitions[0].nodes'", "outside the platform"],
        ),
        ({"partitions": [{"name": "a", "nodes": "x"}]}, ["field 'partitions[0].nodes'"]),
        (
            {"partitions": [{"name": "a", "nodes": "0-1", "max_nodes": 3}]},
            ["field 'partitions[0].max_nodes'"],
        ),
        (
            {"partitions": [{"name": "a", "nodes": "0-1", "max_time": -1}]},
            ["field 'partitions[0].max_time'"],
        ),
        (
            {"partitions": [{"name": "a", "nodes": "0-1", "colour": 1}]},
            ["field 'partitions[0].colour'"],
        ),
        (
            {"partitions": [{"name": "a", "nodes": "0-1"}, {"name": "b", "nodes": "1-2"}]},
            ["field 'partitions[1].nodes'", "do not overlap"],
        ),
        ({"partitions": [{"name": "a", "nodes": "0-1"}], "default": "z"}, ["field 'default'"]),
        ({"partitions": [{"name": "a", "nodes": "0-1"}], "map_by": "user"}, ["field 'map_by'"]),
    ],
)
def test_malformed_partition_file_is_one_line_naming_file_and_field(
    tmp_path, capsys, document, needles
):
    workload = swf(tmp_path, [(0, 10, 1, 1, 0, -1)])
    path = partition_file(tmp_path, document)
    out = tmp_path / "out"
    code, printed, err = cli(
        capsys,
        "simulate",
        "--workload",
        workload,
        "--platform",
        platform_file(tmp_path),
        "--partitions",
        path,
        "--out",
        out,
    )
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert path in err
    for needle in needles:
        assert needle in err
    assert not out.exists()


def test_unknown_partition_of_a_job_is_one_line_exit_2(tmp_path, capsys):
    workload = swf(tmp_path, [(0, 10, 1, 1, 0, -1), (0, 10, 1, 1, 5, -1)])  # queue 5: unmapped
    out = tmp_path / "out"
    code, _, err = cli(
        capsys,
        "simulate",
        "--workload",
        workload,
        "--platform",
        platform_file(tmp_path),
        "--partitions",
        partition_file(tmp_path, GOOD),
        "--out",
        out,
    )
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert "job 2 has queue 5" in err and "field 'queue'" in err and workload in err
    assert not out.exists()


def test_partitions_with_a_co_scheduler_are_refused(tmp_path, capsys):
    workload = swf(tmp_path, [(0, 10, 1, 1, 0, -1)])
    code, _, err = cli(
        capsys,
        "simulate",
        "--workload",
        workload,
        "--platform",
        platform_file(tmp_path, cores=2),
        "--partitions",
        partition_file(tmp_path, GOOD),
        "--scheduler",
        "easy-co",
    )
    assert code == 2 and "--partitions" in err and err.count("\n") == 1


def test_load_partitions_reads_ranges_and_defaults(tmp_path):
    path = partition_file(tmp_path, {"partitions": [{"name": "a", "nodes": "0-1,3"}]})
    (partition,) = load_partitions(path, Platform(4)).partitions
    assert partition.nodes == (0, 1, 3) and partition.max_nodes == 3
    assert partition.max_time == np.inf and partition.priority_job_factor == 1.0


@pytest.mark.parametrize("scheduler", ["easy", "conservative"])
def test_idle_nodes_of_another_partition_do_not_count_for_a_reservation(scheduler):
    # a is idle. b: job 1 on node 2 until 50; job 2 (b's head, 2 nodes) waits until 50; job 3 (1
    # node, 100 s) would end after 50 and b has no extra node then: it waits, although a's two idle
    # nodes would make it look harmless to a backfill over the whole machine.
    result, _ = run(
        scheduler,
        [1, 2, 3],
        [0, 1, 2],
        [50, 10, 100],
        [1, 2, 1],
        [50, 10, 100],
        [1, 1, 1],
        two_partitions(),
    )
    assert result.start.tolist() == [0, 50, 60]
