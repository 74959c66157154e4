"""The engine's fast path (FCFS and EASY on whole nodes, plain rigid jobs) gives the general loop's
results value for value: start and end times, node ids, reservations, and the engine state after the
run."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cosched.simulator.engine import Engine, simulate
from cosched.simulator.jobs import RIGID
from cosched.simulator.platform import Platform
from cosched.simulator.schedulers import make_scheduler
from cosched.simulator.schedulers.easy import EASY
from cosched.simulator.workload import make_workload

# above the allocator's BULK_NODES (16): both ways of giving nodes back are exercised
MAX_NODES = 40


@st.composite
def whole_node_cases(draw):
    """A platform of up to MAX_NODES nodes and a workload on it: times on a coarse grid (many ties
    of arrivals, ends and reservations) or fractional, estimates above and below the run times."""
    platform = Platform(draw(st.integers(1, MAX_NODES)), 1, draw(st.integers(1, 4)))
    count = draw(st.integers(1, 60))
    grid = draw(st.sampled_from([1.0, 0.25, 0.1]))
    times = st.integers(0, 400).map(lambda t: t * grid)
    submit = draw(st.lists(times, min_size=count, max_size=count))
    durations = st.integers(1, 200).map(lambda t: t * grid)
    run = draw(st.lists(durations, min_size=count, max_size=count))
    cores = draw(st.lists(st.integers(1, platform.total_cores), min_size=count, max_size=count))
    slack = draw(st.lists(st.integers(-20, 200), min_size=count, max_size=count))
    estimate = [r + s * grid for r, s in zip(run, slack)]
    return platform, make_workload(list(range(count)), submit, run, cores, estimate)


class _GeneralEASY(EASY):
    """EASY with an overridden hook (doing what the base one does): the engine takes its general
    loop."""

    def on_arrival(self, engine, job):
        super().on_arrival(engine, job)


class _GeneralFCFS(_GeneralEASY):
    backfill = "none"


def _engine_state(engine):
    return (
        engine.state,
        engine.first_start,
        engine.end,
        engine.started,
        engine.updated,
        engine.held,
        engine.remaining,
        engine.predicted_end,
        engine.version,
        engine.free_nodes(),
        engine.idle_nodes().tolist(),
        engine.node_occupants().tolist(),
        len(engine.waiting),
        len(engine.running),
        engine.by_end,
    )


def _same(fast, general):
    assert np.array_equal(fast.start, general.start)
    assert np.array_equal(fast.end, general.end)
    assert len(fast.nodes) == len(general.nodes)
    for ours, theirs in zip(fast.nodes, general.nodes):
        assert ours.dtype == theirs.dtype and ours.tolist() == theirs.tolist()
    assert fast.lifecycle == general.lifecycle


@settings(max_examples=150, deadline=None)
@given(
    case=whole_node_cases(),
    backfill=st.sampled_from(["easy", "none"]),
    depth=st.sampled_from([0, 1, 3, 100]),
    use_run_times=st.booleans(),
    record=st.booleans(),
    models=st.booleans(),
)
def test_the_fast_path_gives_the_general_loops_results(
    case, backfill, depth, use_run_times, record, models
):
    platform, workload = case
    general_class = _GeneralEASY if backfill == "easy" else _GeneralFCFS
    runs = []
    for scheduler in (
        make_scheduler(backfill == "easy" and "easy" or "fcfs", depth=depth),
        general_class(depth=depth),
    ):
        scheduler.reservations = {} if record else None
        engine = Engine(
            workload,
            platform,
            scheduler,
            use_run_times=use_run_times,
            job_models=[RIGID] * len(workload) if models else None,
        )
        runs.append(
            (engine.fast_path(), engine.run(), _engine_state(engine), scheduler.reservations)
        )
    (fast_path, fast, fast_state, fast_reserved), (general_path, general, state, reserved) = runs
    assert fast_path and not general_path
    _same(fast, general)
    assert fast_state == state
    assert fast_reserved == reserved


@pytest.mark.parametrize("name", ["sjf", "ljf", "conservative", "easy-co"])
def test_other_schedulers_take_the_general_loop(name):
    workload = make_workload([1, 2], [0, 5], [10, 10], [1, 1], [10, 10], app=["a", "a"])
    engine = Engine(workload, Platform(2, 1, 2), make_scheduler(name))
    assert not engine.fast_path()


def test_logs_speed_models_and_job_models_take_the_general_loop():
    from cosched.simulator.jobs import malleable

    workload = make_workload([1, 2], [0, 5], [10, 10], [1, 1], [10, 10])
    assert Engine(workload, Platform(2), make_scheduler("easy")).fast_path()
    for options in (
        {"log_events": True},
        {"log_actions": True},
        {"job_models": [RIGID, malleable(1, 2)]},
        {"speed_model": object()},
    ):
        assert not Engine(workload, Platform(2), make_scheduler("easy"), **options).fast_path()


def test_the_fast_path_keeps_the_node_ids_of_a_crowded_run():
    """Jobs end out of start order, so the lowest idle nodes are scattered: every job gets exactly
    the nodes the general loop gives it."""
    rng = np.random.default_rng(3)
    count = 400
    workload = make_workload(
        np.arange(count),
        np.sort(rng.integers(0, 5000, count)),
        rng.integers(1, 500, count),
        rng.integers(1, 33, count),
        rng.integers(1, 900, count),
    )
    platform = Platform(32, 1, 1)
    fast = simulate(workload, platform, "easy")
    general = Engine(workload, platform, _GeneralEASY()).run()
    _same(fast, general)
    assert len({tuple(n.tolist()) for n in fast.nodes}) > 100  # many different node sets
