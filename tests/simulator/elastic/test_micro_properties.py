"""Invariants of the per-node model that the micro projects check on examples (ElastiSim's
Application actor: one clock per node, barriers where ElastiSim's ranks meet; SimGrid's L07 parallel
tasks)."""

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from cosched.simulator.elastic.algorithms import make_algorithm
from cosched.simulator.elastic.flow import TCP_GAMMA, pair_matrix, traffic

from .scenario import BANDWIDTH, PFS_WRITE, run_scenario, write_scenario

TIME_TOLERANCE = 1e-9  # relative, on end times built from a few sums and maxima
PATTERNS = (
    "all_to_all",
    "gather",
    "scatter",
    "master_worker",
    "ring",
    "ring_clockwise",
    "ring_counter_clockwise",
)

delays = st.lists(st.lists(st.integers(0, 20), min_size=3, max_size=3), min_size=1, max_size=3)


@settings(max_examples=25, deadline=None)
@given(delays, st.integers(1, 4), st.booleans())
def test_delays_run_per_node_and_meet_where_tasks_are_synchronized(
    tmp_path_factory, tasks, iterations, synchronized
):
    # idle tasks with a delay vector per node: nodes advance on their own and meet only before a
    # synchronized task (and at the phase barrier); the job ends when its last node does
    model = {
        "phases": [
            {
                "iterations": iterations,
                "tasks": [
                    {
                        "type": "idle",
                        "delay": [float(value) for value in task],
                        "pattern": "vector",
                        "synchronized": synchronized,
                    }
                    for task in tasks
                ],
            }
        ]
    }
    jobs = [{"type": "rigid", "submit_time": 0, "num_nodes": 3}]
    sim = run_scenario(
        write_scenario(tmp_path_factory.mktemp("delays"), jobs, model, nodes=3),
        make_algorithm("fcfs-rigid"),
    )
    matrix = np.asarray(tasks, dtype=float)  # task x node
    expected = iterations * (matrix.max(axis=1).sum() if synchronized else matrix.sum(axis=0).max())
    assert sim.runs[0].end == pytest.approx(expected, rel=TIME_TOLERANCE, abs=TIME_TOLERANCE)


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(PATTERNS), st.integers(2, 6), st.floats(1e3, 1e12))
def test_pair_matrix_conserves_the_pattern_payload(pattern, n, size):
    # ElastiSim's createMatrix: no self-traffic, every byte sent is received, and the totals of its
    # patterns
    sizes = pair_matrix(size, pattern, n)
    sent, received = traffic(size, pattern, n)
    assert np.all(np.diag(sizes) == 0) and sent.sum() == pytest.approx(
        received.sum(), rel=TIME_TOLERANCE
    )
    totals = {
        "all_to_all": size,
        "gather": size * (n - 1) / n,
        "scatter": size * (n - 1) / n,
        "master_worker": 4 * size,
        "ring": size,
        "ring_clockwise": size,
        "ring_counter_clockwise": size,
    }
    assert sizes.sum() == pytest.approx(totals[pattern], rel=TIME_TOLERANCE)


@settings(max_examples=20, deadline=None)
@given(st.integers(1, 6), st.floats(1e8, 1e11), st.sampled_from([0.0, 1e-4, 5e-4]))
def test_lone_pfs_write_takes_latency_plus_the_tightest_rate(tmp_path_factory, n, size, latency):
    # n flows of one job alone on the PFS write link: each after the route latency at min(node link,
    # fair share of the PFS link, TCP window over the route)
    model = {"phases": [{"tasks": [{"type": "pfs_write", "bytes": size, "pattern": "all_ranks"}]}]}
    jobs = [{"type": "rigid", "submit_time": 0, "num_nodes": n}]
    folder = tmp_path_factory.mktemp("pfs")
    config = write_scenario(folder, jobs, model, nodes=6)
    platform = folder / "platform.json"
    text = platform.read_text().replace('"latency": 0}', f'"latency": {latency}}}')
    platform.write_text(text)
    sim = run_scenario(config, make_algorithm("fcfs-rigid"))
    window = TCP_GAMMA / (2 * latency) if latency else np.inf
    rate = min(BANDWIDTH, PFS_WRITE / n, window)
    assert sim.runs[0].end == pytest.approx(latency + size / n / rate, rel=TIME_TOLERANCE)


@settings(max_examples=15, deadline=None)
@given(st.integers(1, 30), st.integers(0, 20))
def test_walltime_kill_waits_for_the_grace_period(tmp_path_factory, walltime, grace):
    # ElastiSim's WalltimeMonitor kills a job at start + walltime + job_kill_grace_period
    import types

    assume(walltime + grace != 100)  # a kill at the very end: which comes first is not specified

    from cosched.simulator.elastic.config import load_configuration
    from cosched.simulator.elastic.expressions import Expressions
    from cosched.simulator.elastic.platform import load_elastisim_platform
    from cosched.simulator.elastic.runtime import simulate_project
    from cosched.simulator.elastic.workload import load_jobs

    model = {"phases": [{"tasks": [{"type": "idle", "delay": 100, "pattern": "uniform"}]}]}
    jobs = [{"type": "rigid", "submit_time": 2, "num_nodes": 1, "walltime": walltime}]
    path = write_scenario(tmp_path_factory.mktemp("grace"), jobs, model, nodes=2)
    loaded = load_configuration(path)
    configuration = types.SimpleNamespace(**{**vars(loaded), "job_kill_grace_period": float(grace)})
    expressions = Expressions()
    sim = simulate_project(
        configuration,
        load_elastisim_platform(loaded.platform_file),
        load_jobs(loaded.jobs_file, expressions),
        make_algorithm("fcfs-rigid"),
        expressions=expressions,
    )
    run = sim.runs[0]
    if walltime + grace < 100:
        assert run.status == "killed" and run.end == pytest.approx(2 + walltime + grace)
    else:
        assert run.status == "completed" and run.end == pytest.approx(102)
