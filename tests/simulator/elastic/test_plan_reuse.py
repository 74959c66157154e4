"""A job's plans on a platform of alike nodes are reused by node count, across reconfigurations.

The simulation keeps, per job, the plan of each phase by (phase, node count, GPUs per node,
iteration) when every node of the platform is alike (same speed, links, latency, burst buffer, GPUs,
cluster). These tests check the assumption behind it (a plan is then the same on any nodes of that
count) and that the reuse changes no result."""

import dataclasses

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cosched.simulator.elastic import runtime
from cosched.simulator.elastic.cli import PRESET_CONFIG, PRESET_ROOT
from cosched.simulator.elastic.compat import GuardedAlgorithm, load_algorithm
from cosched.simulator.elastic.config import load_configuration
from cosched.simulator.elastic.expressions import Expressions
from cosched.simulator.elastic.flow import Comm, PfsTransfer, alike_nodes
from cosched.simulator.elastic.platform import load_elastisim_platform
from cosched.simulator.elastic.runtime import Simulation, simulate_project
from cosched.simulator.elastic.workload import load_jobs

EXAMPLE = PRESET_ROOT / "example"
SOME_JOBS = 150  # of the example's 500: enough evolving and malleable jobs that change size


def _example(monkeypatch):
    """The example preset's configuration, platform, jobs, expressions and algorithm."""
    monkeypatch.chdir(EXAMPLE)
    configuration = load_configuration(PRESET_CONFIG)
    expressions = Expressions()
    platform = load_elastisim_platform(configuration.platform_file)
    jobs = load_jobs(configuration.jobs_file, expressions)
    algorithm = GuardedAlgorithm(load_algorithm(EXAMPLE / "algorithm.py"), "algorithm.py")
    return configuration, platform, jobs, expressions, algorithm


@pytest.fixture(scope="module")
def example_simulation():
    with pytest.MonkeyPatch.context() as monkeypatch:
        configuration, platform, jobs, expressions, algorithm = _example(monkeypatch)
        return Simulation(configuration, platform, jobs, algorithm, expressions=expressions)


def _same_item(first, second) -> bool:
    if first.__class__ is not second.__class__:
        return False
    if first.__class__ is np.ndarray:
        return np.array_equal(first, second)
    if first.__class__ is Comm:
        local_same = (first.local is None and second.local is None) or (
            first.local is not None
            and second.local is not None
            and np.array_equal(first.local, second.local)
        )
        return local_same and first.duration == second.duration
    if first.__class__ is PfsTransfer:
        return first == second
    return first == second


def test_the_example_platform_has_alike_nodes_and_one_different_node_breaks_it(
    example_simulation,
):
    platform = example_simulation.platform
    assert alike_nodes(platform)
    for field in ("speed", "bandwidth", "latency", "bb_read", "gpus"):
        values = getattr(platform, field).copy()
        values[len(values) // 2] += 1.0
        assert not alike_nodes(dataclasses.replace(platform, **{field: values}))


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_a_plan_on_alike_nodes_depends_on_their_count_only(example_simulation, data):
    sim = example_simulation
    run = sim.runs[data.draw(st.integers(0, len(sim.runs) - 1), label="job")]
    size = data.draw(st.integers(run.spec.num_nodes_min, run.spec.num_nodes_max), label="size")
    nodes = st.lists(
        st.integers(0, len(sim.platform) - 1), min_size=size, max_size=size, unique=True
    )
    first, second = data.draw(nodes, label="first"), data.draw(nodes, label="second")
    run.gpus = run.spec.num_gpus_per_node_min
    model = run.spec.model
    for phase in [model.on_init, model.on_reconfiguration, *model.phases]:
        if phase is None:
            continue
        one = sim._plan(run, phase, first, 0, {})
        other = sim._plan(run, phase, second, 0, {})
        assert len(one) == len(other)
        assert all(_same_item(a, b) for a, b in zip(one, other))


def test_reusing_plans_by_node_count_changes_no_result(monkeypatch):
    def outcome(sim):
        return (
            [(run.start, run.end, run.history) for run in sim.runs],
            sim.node_log,
            sim.pfs_log,
            sim.invocations,
        )

    configuration, platform, jobs, expressions, algorithm = _example(monkeypatch)
    reused = simulate_project(
        configuration, platform, jobs[:SOME_JOBS], algorithm, expressions=expressions
    )
    assert reused._alike
    monkeypatch.setattr(runtime, "alike_nodes", lambda platform: None)
    configuration, platform, jobs, expressions, algorithm = _example(monkeypatch)
    fresh = simulate_project(
        configuration, platform, jobs[:SOME_JOBS], algorithm, expressions=expressions
    )
    assert not fresh._alike
    assert outcome(reused) == outcome(fresh)
    assert sum(run.reconfigurations for run in reused.runs) > 0
