"""The flow model gives exact analytic times; the protocol keeps its invariants on generated
workloads."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cosched.simulator.elastic.algorithms import make_algorithm
from cosched.simulator.elastic.compat import JobState
from cosched.simulator.elastic.flow import SharedLink, Transfer, traffic

from .scenario import PFS_WRITE, SPEED, compute_model, run_scenario, write_scenario

TIME_TOLERANCE = 1e-9  # relative, float sums of task times
WORK_TOLERANCE = 1e-6  # relative, work recovered from node-seconds x speed


def test_rigid_compute_only_jobs_take_the_analytic_time(tmp_path):
    # 8 nodes; each job needs all 8, so they run one after the other in arrival order
    jobs = [
        {
            "type": "rigid",
            "submit_time": 0,
            "num_nodes": 8,
            "arguments": {"iterations": 3, "flops": 2e9},
        },
        {
            "type": "rigid",
            "submit_time": 1,
            "num_nodes": 8,
            "arguments": {"iterations": 5, "flops": 4e9},
        },
        {
            "type": "rigid",
            "submit_time": 100,
            "num_nodes": 4,
            "arguments": {"iterations": 1, "flops": 8e9},
        },
    ]
    sim = run_scenario(
        write_scenario(tmp_path, jobs, compute_model(pattern="uniform")),
        make_algorithm("fcfs-rigid"),
    )
    # uniform: every node computes the full flops, one iteration takes flops / speed
    first = 3 * 2e9 / SPEED
    second = first + 5 * 4e9 / SPEED
    third = max(100.0, second) + 8e9 / SPEED
    assert [run.end for run in sim.runs] == pytest.approx(
        [first, second, third], rel=TIME_TOLERANCE
    )
    assert [run.start for run in sim.runs] == pytest.approx(
        [0, first, max(100.0, second)], rel=TIME_TOLERANCE
    )


@settings(max_examples=25)
@given(
    st.lists(
        st.tuples(st.integers(0, 50), st.integers(1, 4), st.integers(1, 4), st.integers(1, 20)),
        min_size=1,
        max_size=6,
    )
)
def test_rigid_jobs_analytic_times_property(tmp_path_factory, specs):
    folder = tmp_path_factory.mktemp("rigid")
    jobs = [
        {
            "type": "rigid",
            "submit_time": submit,
            "num_nodes": nodes,
            "arguments": {"iterations": iterations, "flops": gflops * 1e9},
        }
        for submit, nodes, iterations, gflops in specs
    ]
    sim = run_scenario(
        write_scenario(folder, jobs, compute_model(pattern="all_ranks"), nodes=4),
        make_algorithm("fcfs-rigid"),
    )
    for run in sim.runs:
        job = run.spec
        expected = job.phase_iterations[0] * job.variables["flops"] / job.num_nodes_min / SPEED
        assert run.end - run.start == pytest.approx(expected, rel=TIME_TOLERANCE)
        assert run.start >= job.submit_time


def test_pfs_write_shares_the_link_max_min(tmp_path):
    # one job of 4 nodes writes 8 GB over all ranks: 4 flows capped at 1 GB/s on a 2 GB/s link ->
    # 0.5 GB/s each
    model = {
        "phases": [{"tasks": [{"type": "pfs_write", "bytes": "size", "pattern": "all_ranks"}]}]
    }
    jobs = [
        {"type": "rigid", "submit_time": 0, "num_nodes": 4, "arguments": {"size": 8e9}},
        {"type": "rigid", "submit_time": 0, "num_nodes": 1, "arguments": {"size": 1e9}},
    ]
    sim = run_scenario(write_scenario(tmp_path, jobs, model), make_algorithm("fcfs-rigid"))
    # 5 flows share 2 GB/s: 0.4 GB/s each; the 1-node job (1 GB) ends at 2.5 s; then 4 flows at 0.5
    # GB/s
    small_end = 1e9 / (PFS_WRITE / 5)
    left = 2e9 - small_end * PFS_WRITE / 5
    assert sim.runs[1].end == pytest.approx(small_end, rel=TIME_TOLERANCE)
    assert sim.runs[0].end == pytest.approx(small_end + left / (PFS_WRITE / 4), rel=TIME_TOLERANCE)


@given(
    st.lists(st.tuples(st.integers(1, 5), st.floats(0.1, 10)), min_size=1, max_size=8),
    st.floats(0.5, 20),
)
def test_shared_link_rates_are_max_min_fair(groups, capacity):
    link = SharedLink(capacity)
    # count flows of 1 byte with a cap, each from its own node (position, bytes, cap, node, node
    # bandwidth)
    nodes = iter(range(10_000))
    transfers = [
        Transfer([(position, 1.0, cap, next(nodes), cap) for position in range(count)], None)
        for count, cap in groups
    ]
    for transfer in transfers:
        link.add(transfer)
    link.share()
    rates = [
        (transfer.groups[0][0], transfer.groups[0][3], transfer.groups[0][2])
        for transfer in transfers
    ]
    total = sum(count * rate for count, rate, _ in rates)
    assert total <= capacity * (1 + 1e-12)
    assert all(rate <= cap * (1 + 1e-12) for _, rate, cap in rates)
    top = max(rate for _, rate, _ in rates)
    if total < capacity * (1 - 1e-9):  # link not saturated: every flow runs at its cap
        assert all(rate == pytest.approx(cap) for _, rate, cap in rates)
    else:  # saturated: a flow below its cap gets the largest rate of all
        assert all(rate == pytest.approx(top) for _, rate, cap in rates if rate < cap * (1 - 1e-9))


@pytest.mark.parametrize(
    "pattern, sent0, received0, sent1",
    [
        ("all_to_all", 1 / 4, 1 / 4, 1 / 4),
        ("ring", 1 / 4, 1 / 4, 1 / 4),
        ("scatter", 3 / 4, 0, 0),
        ("gather", 0, 3 / 4, 1 / 4),
        ("master_worker", 2, 2, 2 / 3),
    ],
)
def test_communication_patterns_split_the_payload_as_elastisim(pattern, sent0, received0, sent1):
    sent, received = traffic(1.0, pattern, 4)
    assert (sent[0], received[0], sent[1]) == pytest.approx((sent0, received0, sent1))


elastic_jobs = st.lists(
    st.tuples(
        st.integers(0, 30),
        st.sampled_from(["rigid", "moldable", "malleable", "evolving", "adaptive"]),
        st.integers(1, 3),
        st.integers(0, 3),
        st.integers(1, 6),
        st.integers(1, 30),
    ),
    min_size=1,
    max_size=8,
)


def _jobs(specs):
    jobs = []
    for submit, kind, low, extra, iterations, gflops in specs:
        job = {
            "type": kind,
            "submit_time": submit,
            "arguments": {"iterations": iterations, "flops": gflops * 1e9},
        }
        if kind == "rigid":
            job["num_nodes"] = low
        else:
            job["num_nodes_min"], job["num_nodes_max"] = low, low + extra
        jobs.append(job)
    return jobs


@settings(max_examples=30)
@given(
    elastic_jobs, st.sampled_from(["fcfs-malleable", "sjf-malleable", "drf", "srtf", "fcfs-rigid"])
)
def test_resizes_conserve_work_never_overcommit_and_happen_at_scheduling_points(
    tmp_path_factory, specs, policy
):
    folder = tmp_path_factory.mktemp("elastic")
    model = compute_model(pattern="all_ranks")
    model["phases"][0]["evolving_request"] = (
        "phase_iteration % 2 == 0 ? num_nodes - 1 : num_nodes + 2"
    )
    sim = run_scenario(
        write_scenario(
            folder, _jobs(specs), model, nodes=6, config={"clip_evolving_requests": True}
        ),
        make_algorithm(policy),
    )
    # no node ever runs two jobs or is promised to two jobs
    for _, _, _, running, expected in sim.node_log:
        assert len(running) <= 1 and len(expected) <= 1
    for run in sim.runs:
        assert run.state == JobState.COMPLETED
        spec, history = run.spec, run.history
        work = spec.phase_iterations[0] * spec.variables["flops"]
        done, iteration_work = 0.0, spec.variables["flops"]
        for (when, nodes), (after, _) in zip(history, history[1:]):
            assert spec.num_nodes_min <= nodes <= spec.num_nodes_max
            done += (after - when) * nodes * SPEED
            if (
                after < run.end
            ):  # a reconfiguration: only after whole iterations (scheduling points)
                assert spec.type in ("malleable", "evolving", "adaptive")
                ratio = done / iteration_work
                assert ratio == pytest.approx(round(ratio), rel=WORK_TOLERANCE, abs=WORK_TOLERANCE)
        # total pattern: the work of an iteration is spread over the nodes, so resizes conserve it
        assert done == pytest.approx(work, rel=WORK_TOLERANCE)


@settings(max_examples=20)
@given(st.integers(1, 50), st.integers(1, 10))
def test_walltime_kill_at_the_walltime(tmp_path_factory, walltime, iterations):
    folder = tmp_path_factory.mktemp("walltime")
    jobs = [
        {
            "type": "rigid",
            "submit_time": 3,
            "num_nodes": 2,
            "walltime": walltime,
            "arguments": {"iterations": iterations, "flops": 10e9},
        },
        {
            "type": "rigid",
            "submit_time": 4,
            "num_nodes": 8,
            "arguments": {"iterations": 1, "flops": 1e9},
        },
    ]
    sim = run_scenario(
        write_scenario(folder, jobs, compute_model(pattern="uniform")), make_algorithm("fcfs-rigid")
    )
    run = sim.runs[0]
    runtime = iterations * 10e9 / SPEED
    if runtime < walltime:
        assert run.status == "completed" and run.end == pytest.approx(3 + runtime)
    elif runtime > walltime:
        assert run.status == "killed" and run.end == 3 + walltime
        assert all(0 not in running for when, _, _, running, _ in sim.node_log if when >= run.end)
    # the queued job starts when the first one ends, killed or not
    assert sim.runs[1].start == run.end


def test_reconfiguration_waits_for_the_next_scheduling_point(tmp_path):
    # one malleable job of 10 iterations x 4 s on 1 node; a second (rigid) job ends at 6 s and frees
    # 3 nodes
    jobs = [
        {
            "type": "rigid",
            "submit_time": 0,
            "num_nodes": 3,
            "arguments": {"iterations": 1, "flops": 18e9},
        },
        {
            "type": "malleable",
            "submit_time": 0,
            "num_nodes_min": 1,
            "num_nodes_max": 4,
            "arguments": {"iterations": 10, "flops": 4e9},
        },
    ]
    sim = run_scenario(
        write_scenario(tmp_path, jobs, compute_model(pattern="all_ranks"), nodes=4),
        make_algorithm("fcfs-malleable"),
    )
    malleable = sim.runs[1]
    assert malleable.history[0] == (0, 1)
    # the rigid job ends at 6 s; the expansion is decided then and applied at the next point, t = 8
    # s
    assert malleable.history[1] == (pytest.approx(8.0), 4)
    assert malleable.end == pytest.approx(8.0 + 8 * 1.0)
    # as in ElastiSim's node_utilization.csv, the reservation writes no row: the nodes leave the
    # rigid job at 6 s
    # and join the malleable one at 8 s
    assert [state.name for when, _, state, _, _ in sim.node_log if math.isclose(when, 6.0)] == [
        "FREE"
    ] * 3
    assert [state.name for when, _, state, _, _ in sim.node_log if math.isclose(when, 8.0)] == [
        "ALLOCATED"
    ] * 3


def test_gpu_and_burst_buffer_tasks_take_the_analytic_time(tmp_path):
    model = {
        "phases": [
            {
                "tasks": [
                    {
                        "type": "gpu",
                        "flops": 8e9,
                        "computation_pattern": "uniform",
                    },  # per node over 2 GPUs of 1 Gflop/s
                    {
                        "type": "bb_write",
                        "bytes": 6e9,
                        "pattern": "all_ranks",
                    },  # 3 GB per node at 1.5 GB/s
                    {"type": "busy_wait", "delay": 5, "pattern": "uniform"},
                ]
            }
        ]
    }
    jobs = [{"type": "rigid", "submit_time": 0, "num_nodes": 2, "num_gpus_per_node": 2}]
    properties = {
        "num_gpus": 2,
        "flops_per_gpu": "1Gf",
        "gpu_to_gpu_bw": "10GBps",
        "node_local_bb": True,
        "bb_read_bw": "3GBps",
        "bb_write_bw": "1.5GBps",
    }
    sim = run_scenario(
        write_scenario(tmp_path, jobs, model, properties=properties), make_algorithm("fcfs-rigid")
    )
    assert sim.runs[0].end == pytest.approx(8e9 / 2e9 + 3e9 / 1.5e9 + 5, rel=TIME_TOLERANCE)


def test_periodic_invocations_and_the_minimum_interval(tmp_path):
    calls = []

    def schedule(jobs, nodes, system):
        calls.append((system["time"], system["invocation_type"].name))
        free = [node for node in nodes if node.state.name == "FREE"]
        for job in jobs:
            if job.state == JobState.PENDING and job.num_nodes <= len(free):
                job.assign(free[: job.num_nodes])
                del free[: job.num_nodes]

    jobs = [
        {
            "type": "rigid",
            "submit_time": 3,
            "num_nodes": 1,
            "arguments": {"iterations": 1, "flops": 5e9},
        }
    ]
    periodic = {
        "scheduling_interval": 10,
        "schedule_on_job_submit": False,
        "schedule_on_job_finalize": False,
    }
    sim = run_scenario(write_scenario(tmp_path, jobs, config=periodic), schedule)
    assert sim.runs[0].start == 10 and sim.runs[0].end == 15  # waits for the first periodic call
    assert calls == [(10, "INVOKE_PERIODIC")]  # ends at 15: no call at 20
    calls.clear()
    jobs = [dict(jobs[0], submit_time=when) for when in (0, 1, 2, 12)]
    dropping = {"min_scheduling_interval": 5}
    sim = run_scenario(write_scenario(tmp_path, jobs, config=dropping), schedule)
    # invocations closer than 5 s to the previous one (initially time 0) are dropped, not deferred
    # (ElastiSim's
    # rule): the submissions at 0, 1, 2 call nobody, the one at 12 starts all four jobs, their ends
    # at 17 call once
    assert calls == [(12, "INVOKE_JOB_SUBMIT"), (17, "INVOKE_JOB_COMPLETED")]
    assert sim.dropped == 6 and [run.start for run in sim.runs] == [12] * 4


def test_progress_is_reported_at_scheduling_points(tmp_path):
    seen = []

    def schedule(jobs, nodes, system):
        if system["invocation_type"].name == "INVOKE_SCHEDULING_POINT":
            seen.append(system["job"].completed_phases)
        for job in jobs:
            if job.state == JobState.PENDING:
                job.assign(nodes[:1])

    jobs = [
        {
            "type": "malleable",
            "submit_time": 0,
            "num_nodes_min": 1,
            "num_nodes_max": 1,
            "arguments": {"iterations": 4, "flops": 1e9},
        }
    ]
    sim = run_scenario(write_scenario(tmp_path, jobs), schedule)
    assert (
        seen == [1, 2, 3]
        and sim.runs[0].view.completed_phases == 4 == sim.runs[0].view.total_phase_count
    )


@pytest.mark.parametrize("asynchronous, end", [(True, 4.0), (False, 6.0)])
def test_async_io_overlaps_the_following_tasks(tmp_path, asynchronous, end):
    # the root writes 4 GB at its link's 1 GB/s (4 s) while, if async, the job computes for 2 s
    model = {
        "phases": [
            {
                "tasks": [
                    {
                        "type": "pfs_write",
                        "bytes": 4e9,
                        "pattern": "root_only",
                        "async": asynchronous,
                    },
                    {"type": "cpu", "flops": 2e9, "computation_pattern": "uniform"},
                ]
            }
        ]
    }
    jobs = [{"type": "rigid", "submit_time": 0, "num_nodes": 2}]
    sim = run_scenario(write_scenario(tmp_path, jobs, model), make_algorithm("fcfs-rigid"))
    assert sim.runs[0].end == pytest.approx(end, rel=TIME_TOLERANCE)


def test_a_killed_job_releases_its_share_of_the_pfs(tmp_path):
    # job 0 (2 flows) and job 1 (1 flow) write together: 3 flows share 2 GB/s; job 0 is killed at
    # its walltime 2 s
    model = {
        "phases": [{"tasks": [{"type": "pfs_write", "bytes": "size", "pattern": "all_ranks"}]}]
    }
    jobs = [
        {
            "type": "rigid",
            "submit_time": 0,
            "num_nodes": 2,
            "walltime": 2,
            "arguments": {"size": 20e9},
        },
        {"type": "rigid", "submit_time": 0, "num_nodes": 1, "arguments": {"size": 4e9}},
    ]
    sim = run_scenario(write_scenario(tmp_path, jobs, model), make_algorithm("fcfs-rigid"))
    assert sim.runs[0].status == "killed" and sim.runs[0].end == 2
    written = 2 * PFS_WRITE / 3
    assert sim.runs[1].end == pytest.approx(
        2 + (4e9 - written) / 1e9, rel=TIME_TOLERANCE
    )  # then at its 1 GB/s cap
    assert not sim.routes["pfs_write"].transfers


@settings(max_examples=25)
@given(
    elastic_jobs,
    st.lists(st.integers(0, 40), min_size=8, max_size=8),
    st.sampled_from(["fcfs-malleable", "drf", "sjf-rigid"]),
)
def test_io_workloads_with_walltimes_keep_the_invariants(
    tmp_path_factory, specs, walltimes, policy
):
    folder = tmp_path_factory.mktemp("io")
    model = {
        "on_init": {"tasks": [{"type": "pfs_read", "bytes": 2e9, "pattern": "root_only"}]},
        "on_reconfiguration": {
            "tasks": [{"type": "cpu", "bytes": 1e9, "communication_pattern": "scatter"}]
        },
        "phases": [
            {
                "iterations": "iterations",
                "tasks": [
                    {"type": "cpu", "flops": "flops", "computation_pattern": "all_ranks"},
                    {"type": "pfs_write", "bytes": 3e9, "pattern": "all_ranks", "async": True},
                ],
            }
        ],
    }
    jobs = _jobs(specs)
    for job, walltime in zip(jobs, walltimes):
        job["walltime"] = walltime
    sim = run_scenario(write_scenario(folder, jobs, model, nodes=6), make_algorithm(policy))
    for _, _, _, running, expected in sim.node_log:
        assert len(running) <= 1 and len(expected) <= 1
    assert all(not link.transfers for link in sim.routes.values())
    for run in sim.runs:
        assert run.status in ("completed", "killed")
        walltime = run.spec.walltime
        if walltime:
            assert run.end <= run.start + walltime
            assert (run.status == "killed") == (run.end == run.start + walltime)
        else:
            assert run.status == "completed"
