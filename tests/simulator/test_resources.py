"""Memory, GPUs and node types: hand-computed schedules, the no-over-commitment property, inputs."""

import gzip

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cosched.cli import main
from cosched.errors import InputError
from cosched.simulator.platform import NodeGroup, Platform, load_platform
from cosched.simulator.resources import per_node_use, whole_nodes_needed
from cosched.simulator.simulation import simulate
from cosched.simulator.workload import load_workload, make_workload, read_csv

MEMORY_TOLERANCE = 1e-9  # relative: per-node memory sums compare with this slack for rounding


def starts(result) -> list[float]:
    return result.start.tolist()


def nodes_of(result) -> list[list[int]]:
    return [nodes.tolist() for nodes in result.nodes]


# --- hand-computed schedules ---------------------------------------------------------------------


def test_memory_blocks_a_start_that_cores_would_allow():
    # two 4-core nodes of 1000 MiB. Job 1 (4 cores) takes node 0 for 10 s. Job 2: 2 cores of 600 MiB
    # each, one process per node fits (floor(1000 / 600) = 1), so it needs 2 nodes: it waits for
    # node 0 although node 1's cores would hold it. Job 3 (1 core, no memory) backfills node 1.
    platform = Platform(2, 1, 4, memory_per_node=1000)
    workload = make_workload(
        [1, 2, 3], [0, 1, 2], [10, 10, 5], [4, 2, 1], [10, 10, 5], memory=[100, 600, 0]
    )
    result = simulate(workload, platform, "easy")
    assert starts(result) == [0, 10, 2]
    assert nodes_of(result) == [[0], [0, 1], [1]]
    # without memory the same jobs start at once
    plain = simulate(make_workload([1, 2, 3], [0, 1, 2], [10, 10, 5], [4, 2, 1]), platform, "easy")
    assert starts(plain) == [0, 1, 10]


def test_gpu_jobs_wait_for_gpu_nodes():
    # cpu: nodes 0-1 (4 cores, no GPU); gpu: node 2 (4 cores, 2 GPUs). Job 2 and job 3 ask for GPUs:
    # they run one after the other on node 2 while node 1 stays idle; job 4 (no GPU, behind job 3
    # under FCFS) takes the lowest idle node at 10.
    platform = Platform.of_groups(
        [NodeGroup(2, 1, 4, name="cpu"), NodeGroup(1, 1, 4, gpus_per_node=2, name="gpu")]
    )
    workload = make_workload(
        [1, 2, 3, 4], [0, 0, 1, 2], [10, 10, 10, 5], [4, 4, 2, 1], gpus=[0, 2, 1, 0]
    )
    result = simulate(workload, platform, "fcfs")
    assert starts(result) == [0, 0, 10, 10]
    assert nodes_of(result) == [[0], [2], [2], [0]]
    easy = simulate(workload, platform, "easy")  # job 4 backfills node 1 at once
    assert starts(easy) == [0, 0, 10, 2] and nodes_of(easy)[3] == [1]


def test_colocation_refuses_a_pair_over_memory():
    # one 4-core node of 1000 MiB; each job spreads 2 processes on it (a half node). At 300 MiB per
    # core the pair needs 1200 MiB: the second job waits; at 250 MiB (1000 together) they share.
    platform = Platform(1, 1, 4, memory_per_node=1000)
    over = make_workload([1, 2], [0, 0], [10, 10], [2, 2], memory=[300, 300])
    assert starts(simulate(over, platform, "easy-co")) == [0, 10]
    fits = make_workload([1, 2], [0, 0], [10, 10], [2, 2], memory=[250, 250])
    assert starts(simulate(fits, platform, "easy-co")) == [0, 0]


def test_colocation_deploys_compact_a_job_whose_memory_fills_a_node():
    # 2 cores of 600 MiB on 4-core nodes of 1000 MiB: a half node (2 processes, 1200 MiB) cannot
    # hold it, so it takes two whole nodes; the 1-core job then waits for a node.
    platform = Platform(2, 1, 4, memory_per_node=1000)
    workload = make_workload([1, 2], [0, 0], [10, 10], [2, 1], memory=[600, 0])
    result = simulate(workload, platform, "easy-co")
    assert starts(result) == [0, 10]
    assert nodes_of(result)[0] == [0, 1]


def test_two_node_types_size_a_job_by_the_type_it_runs_on():
    # small: 2 nodes of 2 cores (ids 0-1); big: 1 node of 8 cores (id 2). Job 1 (4 cores) fits
    # both small nodes; job 2 (4 cores) then takes the big node; job 3 (6 cores) can run only on
    # the big node (3 small nodes do not exist) and waits for job 2.
    platform = Platform.of_groups(
        [NodeGroup(2, 1, 2, name="small"), NodeGroup(1, 2, 4, name="big")], "two"
    )
    workload = make_workload([1, 2, 3], [0, 0, 0], [10, 20, 5], [4, 4, 6])
    result = simulate(workload, platform, "fcfs")
    assert starts(result) == [0, 0, 20]
    assert nodes_of(result) == [[0, 1], [2], [2]]


def test_node_counts_follow_the_formula():
    # 8 cores, 1000 MiB, 4 GPUs per node: processes per node min(8, floor(1000 / m))
    group = NodeGroup(10, 2, 4, memory_per_node=1000, gpus_per_node=4)
    cores = np.array([8, 8, 3, 1, 1, 20])
    memory = np.array([0.0, 300.0, 1000.0, 1001.0, 0.0, 100.0])
    gpus = np.array([0, 0, 0, 0, 9, 0])
    assert whole_nodes_needed(cores, memory, gpus, group).tolist() == [1, 3, 3, 0, 3, 3]
    assert per_node_use(8, 300.0, 0, 3) == (3, 900.0, 0)


def test_jobs_without_memory_or_gpus_run_exactly_as_on_a_plain_platform():
    rng = np.random.default_rng(7)
    count = 300
    workload = make_workload(
        np.arange(count),
        np.sort(rng.integers(0, 5000, count)),
        rng.integers(1, 400, count),
        rng.integers(1, 64, count),
        rng.integers(1, 800, count),
    )
    plain, rich = Platform(16, 2, 2), Platform(16, 2, 2, memory_per_node=4096, gpus_per_node=2)
    for name in ("easy", "conservative", "easy-co"):
        a, b = simulate(workload, plain, name), simulate(workload, rich, name)
        assert np.array_equal(a.start, b.start) and np.array_equal(a.end, b.end)
        assert nodes_of(a) == nodes_of(b)


# --- no resource is ever over-committed ---------------------------------------------------------


def over_commitments(result, workload, platform) -> list[str]:
    """Every (node, time) where the running jobs use more cores, memory or GPUs than the node has,
    from the per-job records (start, end, node ids) of the result."""
    groups = platform.node_groups
    kind = np.repeat(np.arange(len(groups)), [g.nodes for g in groups])
    memory = np.zeros(len(workload)) if workload.memory is None else workload.memory
    gpus = np.zeros(len(workload), np.int64) if workload.gpus is None else workload.gpus
    events: dict[int, list] = {}
    for job, nodes in enumerate(result.nodes):
        use = per_node_use(int(workload.cores[job]), float(memory[job]), int(gpus[job]), nodes.size)
        for node in nodes.tolist():
            events.setdefault(node, []).extend(
                [(result.start[job], 1, use), (result.end[job], 0, use)]
            )
    problems = []
    for node, changes in events.items():
        group = groups[kind[node]]
        capacity = (group.cores_per_node, group.memory_per_node, group.gpus_per_node)
        used = [0, 0.0, 0]
        for time, arrives, use in sorted(changes, key=lambda e: (e[0], e[1])):
            sign = 1 if arrives else -1
            used = [u + sign * x for u, x in zip(used, use)]
            memory_over = capacity[1] is not None and used[1] > capacity[1] * (1 + MEMORY_TOLERANCE)
            if used[0] > capacity[0] or memory_over or used[2] > capacity[2]:
                problems.append(f"node {node} at {time}: {used} > {capacity}")
    return problems


@st.composite
def resource_platforms_and_workloads(draw, one_type: bool = False):
    """A platform of 1-3 node types (cores, optional memory, GPUs) and jobs that some type runs."""
    types = 1 if one_type else draw(st.integers(1, 3))
    groups = [
        NodeGroup(
            draw(st.integers(1, 4)),
            1,
            2 * draw(st.integers(1, 3)) if one_type else draw(st.integers(1, 5)),
            draw(st.none() | st.sampled_from([500.0, 1000.0, 3000.0])),
            draw(st.integers(0, 3)),
            f"type{index}",
        )
        for index in range(types)
    ]
    platform = Platform.of_groups(groups)
    count = draw(st.integers(1, 20))
    cores = np.array(draw(st.lists(st.integers(1, 12), min_size=count, max_size=count)))
    memory = np.array(
        draw(st.lists(st.sampled_from([0.0, 90.0, 240.0, 700.0]), min_size=count, max_size=count))
    )
    gpus = np.array(draw(st.lists(st.sampled_from([0, 0, 1, 3]), min_size=count, max_size=count)))
    runnable = np.zeros(count, dtype=bool)
    for group in groups:
        runnable |= whole_nodes_needed(cores, memory, gpus, group) > 0
    keep = np.flatnonzero(runnable)
    if not keep.size:
        keep = np.array([0])
        cores[0], memory[0], gpus[0] = 1, 0.0, 0
    submit = draw(st.lists(st.integers(0, 40), min_size=count, max_size=count))
    run = draw(st.lists(st.integers(1, 30), min_size=count, max_size=count))
    slack = draw(st.lists(st.integers(0, 20), min_size=count, max_size=count))
    workload = make_workload(
        keep,
        np.array(submit)[keep],
        np.array(run)[keep],
        cores[keep],
        (np.array(run) + np.array(slack))[keep],
        memory=memory[keep],
        gpus=gpus[keep],
    )
    return platform, workload


@given(resource_platforms_and_workloads(), st.sampled_from(["fcfs", "easy", "conservative", "sjf"]))
def test_no_resource_is_ever_over_committed(case, scheduler):
    platform, workload = case
    result = simulate(workload, platform, scheduler)
    assert np.isfinite(result.end).all() and (result.start >= workload.submit).all()
    assert over_commitments(result, workload, platform) == []


@given(resource_platforms_and_workloads(one_type=True), st.sampled_from(["easy-co", "sjf-co"]))
def test_colocation_never_over_commits_a_node(case, scheduler):
    platform, workload = case
    result = simulate(workload, platform, scheduler)
    assert np.isfinite(result.end).all()
    assert over_commitments(result, workload, platform) == []


def test_the_checker_sees_an_over_commitment():
    platform = Platform(1, 1, 4, memory_per_node=1000)
    workload = make_workload([1, 2], [0, 0], [10, 10], [2, 2], memory=[300, 300])
    result = simulate(workload, platform, "easy-co")
    result.start[1], result.end[1] = 0.0, 10.0  # as if both had shared the node
    assert over_commitments(result, workload, platform)


# --- inputs --------------------------------------------------------------------------------------

SWF_LINE = "{id} {submit} 0 {run} {procs} -1 {used} {procs} {run} {requested} 1 1 1 1 1 -1 -1 -1\n"


def test_swf_memory_reads_requested_or_used_memory_per_processor(tmp_path):
    path = tmp_path / "t.swf"
    path.write_text(
        SWF_LINE.format(id=1, submit=0, run=10, procs=2, used=1024, requested=4096)
        + SWF_LINE.format(id=2, submit=5, run=10, procs=1, used=-1, requested=-1)
    )
    assert load_workload(path).memory is None
    assert load_workload(path, swf_memory="requested").memory.tolist() == [4.0, 0.0]
    assert load_workload(path, swf_memory="used").memory.tolist() == [1.0, 0.0]
    with pytest.raises(InputError, match="SWF memory field"):
        load_workload(path, swf_memory="peak")


def test_swf_memory_is_kept_apart_in_the_parse_cache(tmp_path):
    from cosched.simulator.workload import CACHE_MIN_BYTES

    lines = [
        SWF_LINE.format(id=i, submit=i, run=10, procs=1, used=i % 7, requested=2048)
        for i in range(CACHE_MIN_BYTES // 40 + 1)
    ]
    path = tmp_path / "big.swf.gz"
    path.write_bytes(gzip.compress("".join(lines).encode()))
    for _ in range(2):  # parsed, then read from the cache
        assert load_workload(path).memory is None
        assert set(load_workload(path, swf_memory="requested").memory.tolist()) == {2.0}
        assert load_workload(path, swf_memory="used").memory[:3].tolist() == [
            0.0,
            1 / 1024,
            2 / 1024,
        ]


def test_csv_memory_and_gpu_columns(tmp_path):
    path = tmp_path / "w.csv"
    path.write_text(
        "job_id,submit_time,run_time,cores,memory_per_core,gpus\n1,0,5,2,512,\n2,1,5,1,,2\n"
    )
    workload = read_csv(path)
    assert workload.memory.tolist() == [512.0, 0.0] and workload.gpus.tolist() == [0, 2]
    path.write_text("job_id,submit_time,run_time,cores,gpus\n1,0,5,2,1.5\n")
    with pytest.raises(InputError, match="line 2") as error:
        read_csv(path)
    assert error.value.field == "gpus"


def test_platform_json_groups_and_their_errors(tmp_path):
    path = tmp_path / "p.json"
    path.write_text(
        '{"name": "mixed", "groups": [{"name": "cpu", "nodes": 4, "cores_per_socket": 8, '
        '"memory_per_node": 2048}, {"name": "gpu", "nodes": 2, "gpus_per_node": 4}]}'
    )
    platform = load_platform(path)
    assert [g.name for g in platform.node_groups] == ["cpu", "gpu"]
    assert platform.nodes == 6 and platform.total_cores == 34 and platform.max_job_cores == 32
    assert Platform(**platform.to_dict()) == platform
    for text, field in [
        ('{"groups": []}', "groups"),
        ('{"groups": [{"nodes": 1, "gpus_per_node": -1}]}', "groups[0].gpus_per_node"),
        ('{"groups": [{"nodes": 1, "memory_per_node": 0}]}', "groups[0].memory_per_node"),
        ('{"groups": [{"nodes": 1, "color": 1}]}', "groups[0].color"),
        ('{"nodes": 2, "memory_per_node": "lots"}', "memory_per_node"),
    ]:
        path.write_text(text)
        with pytest.raises(InputError) as error:
            load_platform(path)
        assert error.value.field == field


SIMGRID = """<?xml version='1.0'?>
<platform version="4.1">
  <zone id="site" routing="Full">
    <cluster id="cpu" prefix="c" radical="0-2" suffix="" speed="1Gf" bw="1Gbps" lat="0us" core="8">
      <prop id="memory_mib" value="4096"/>
    </cluster>
    <cluster id="gpu" prefix="g" radical="0-1" suffix="" speed="1Gf" bw="1Gbps" lat="0us" core="4">
      <prop id="num_gpus" value="2"/>
      <prop id="flops_per_gpu" value="1Tf"/>
      <prop id="gpu_to_gpu_bw" value="10Gbps"/>
    </cluster>
  </zone>
</platform>
"""


def test_simgrid_clusters_are_node_types(tmp_path):
    path = tmp_path / "site.xml"
    path.write_text(SIMGRID)
    groups = load_platform(path).node_groups
    assert [
        (g.name, g.nodes, g.cores_per_node, g.memory_per_node, g.gpus_per_node) for g in groups
    ] == [
        ("cpu", 3, 8, 4096.0, 0),
        ("gpu", 2, 4, None, 2),
    ]


def test_a_job_no_node_can_hold_is_one_error_line_naming_it(tmp_path, capsys):
    workload = tmp_path / "w.csv"
    workload.write_text(
        "job_id,submit_time,run_time,cores,memory_per_core\n1,0,5,1,10\n7,1,5,1,5000\n"
    )
    platform = tmp_path / "p.json"
    platform.write_text('{"nodes": 2, "cores_per_socket": 4, "memory_per_node": 4096}')
    out = tmp_path / "out"
    argv = ["simulate", "--workload", str(workload), "--platform", str(platform)]
    assert main(argv + ["--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "job 7" in err and "5000 MiB per core" in err
    assert not out.exists()


def test_compare_runs_on_node_types_and_refuses_colocation_there(tmp_path, capsys):
    workload = tmp_path / "w.csv"
    workload.write_text(
        "job_id,submit_time,run_time,cores,gpus\n"
        + "".join(f"{i},{i},{5 + i % 4},{1 + i % 5},{i % 3 == 0 and 1 or 0}\n" for i in range(30))
    )
    platform = tmp_path / "p.json"
    platform.write_text(
        '{"groups": [{"name": "cpu", "nodes": 3, "cores_per_socket": 4}, '
        '{"name": "gpu", "nodes": 2, "cores_per_socket": 4, "gpus_per_node": 1}]}'
    )
    common = ["--workload", str(workload), "--platform", str(platform), "--quiet"]
    assert main(["compare", *common, "--scheduler", "easy,sjf"]) == 0
    capsys.readouterr()
    assert main(["compare", *common, "--scheduler", "easy-co"]) == 2
    assert "one node type" in capsys.readouterr().err


def test_a_start_on_chosen_nodes_that_would_over_commit_one_is_refused():
    from cosched.simulator.engine import ActionError

    platform = Platform.of_groups(
        [NodeGroup(2, 1, 2, 1000.0, name="cpu"), NodeGroup(2, 1, 2, 1000.0, 1, name="gpu")]
    )
    # 2 cores of 600 MiB and 2 GPUs: one process and one GPU per node, 2 nodes of type gpu
    workload = make_workload([1], [0], [10], [2], memory=[600], gpus=[2])
    tried = []

    def schedule(engine):
        for nodes in ([0, 1], [1, 2], [2, 3]):
            try:
                tried.append(engine.start(0, nodes=nodes))
            except ActionError as error:
                tried.append(str(error))

    simulate(workload, platform, schedule)
    assert "does not fit" in tried[0] and "does not fit" in tried[1] and tried[2] is True


def test_jobs_csv_has_memory_and_gpu_columns_as_pandas_writes_them():
    import io

    from cosched.simulator.jobs_csv import jobs_csv_text

    platform = Platform.of_groups(
        [NodeGroup(2, 1, 4, 1000.0, name="cpu"), NodeGroup(1, 1, 4, 2000.0, 2, name="gpu")]
    )
    workload = make_workload(
        [1, 2, 3], [0, 0, 1], [10, 10, 10], [4, 4, 2], memory=[100.0, 0.0, 700.5], gpus=[0, 2, 0]
    )
    result = simulate(workload, platform, "easy")
    expected = io.StringIO()
    frame = result.jobs_frame()
    frame.to_csv(expected, index=False)
    assert jobs_csv_text(result) == expected.getvalue()
    assert frame["memory_per_core"].tolist() == [100.0, 0.0, 700.5]
    assert frame["gpus"].tolist() == [0, 2, 0]


def test_elastic_jobs_are_refused_on_several_node_types():
    from cosched.simulator.jobs import JobModel

    platform = Platform.of_groups([NodeGroup(2, 1, 2, name="a"), NodeGroup(2, 1, 4, name="b")])
    workload = make_workload([1, 2], [0, 0], [10, 10], [2, 2])
    with pytest.raises(InputError, match="one node type"):
        simulate(workload, platform, "fcfs-malleable", job_models=JobModel(kind="malleable"))


def test_a_shrink_below_what_memory_needs_is_refused():
    from cosched.simulator.engine import ActionError
    from cosched.simulator.jobs import JobModel

    platform = Platform(4, 1, 2, memory_per_node=1000)
    # 4 cores of 600 MiB: one process per node, 4 nodes; malleable down to 1 node by its bounds
    workload = make_workload([1], [0], [10], [4], memory=[600])
    tried = []

    def schedule(engine):
        if engine.waiting:
            engine.start(0)
            try:
                engine.resize(0, 2)
            except ActionError as error:
                tried.append(str(error))

    simulate(workload, platform, schedule, job_models=JobModel(kind="malleable", min_nodes=1))
    assert len(tried) == 1 and "needs 4 nodes" in tried[0]
