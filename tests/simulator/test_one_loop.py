"""One event loop for every scheduler: a scheduler that overrides a hook gets the results of the one
it extends, value for value, and the compact allocator's node state (written behind its idle list)
is what the running jobs hold whenever someone reads it."""

import gc
from unittest.mock import patch

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from cosched.collector import GC_THRESHOLD
from cosched.simulator import allocators
from cosched.simulator.allocators import EMPTY
from cosched.simulator.platform import Platform
from cosched.simulator.schedulers import make_scheduler
from cosched.simulator.schedulers.easy import EASY
from cosched.simulator.simulation import simulate
from cosched.simulator.workload import make_workload

# up to 40 nodes: jobs both below and above the allocator's BULK_NODES (16, where `commit` switches
# from per-node deletions to one pass over the idle list)
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


class _OverridingEASY(EASY):
    """EASY with an overridden hook doing what the base one does."""

    def on_arrival(self, engine, job):
        super().on_arrival(engine, job)


class _OverridingFCFS(_OverridingEASY):
    backfill = "none"


def _same(first, second):
    assert np.array_equal(first.start, second.start)
    assert np.array_equal(first.end, second.end)
    assert len(first.nodes) == len(second.nodes)
    for ours, theirs in zip(first.nodes, second.nodes):
        assert ours.dtype == theirs.dtype and ours.tolist() == theirs.tolist()


class _NodeStateCheck:
    """An event source that reads the node state at every submit time and checks it against the
    allocations of the running jobs and the reservations."""

    def __init__(self, times):
        self.times, self.checks = sorted(set(times)), 0

    def attach(self, engine):
        for when in self.times:
            engine.at(when, self.check)

    def check(self, engine):
        expected = np.full(engine.platform.nodes, EMPTY)
        for job in engine.running:
            expected[engine.allocation[job].nodes] = job
        for key, reservation in engine.reservations.items():
            expected[reservation.nodes] = key
        assert engine.node_occupants()[:, 0].tolist() == expected.tolist()
        assert engine.idle_nodes().tolist() == np.flatnonzero(expected == EMPTY).tolist()
        assert engine.free_nodes() == int((expected == EMPTY).sum())
        assert (
            engine.is_idle(np.arange(engine.platform.nodes)).tolist()
            == (expected == EMPTY).tolist()
        )
        self.checks += 1


@settings(max_examples=100, deadline=None)
@given(
    case=whole_node_cases(),
    backfill=st.sampled_from(["easy", "none"]),
    depth=st.sampled_from([0, 1, 3, 100]),
    use_run_times=st.booleans(),
    queued=st.sampled_from([0, 1, 7, 1024]),
    replayed=st.sampled_from([0, 2, 32]),
)
def test_the_compact_allocators_node_state_is_what_the_running_jobs_hold(
    case, backfill, depth, use_run_times, queued, replayed
):
    platform, workload = case
    check = _NodeStateCheck(workload.submit.tolist())
    runs = []
    with (
        patch.object(allocators, "WRITE_BEHIND", queued),
        patch.object(allocators, "REPLAY_AT_MOST", replayed),
    ):
        for sources in ((), [check]):
            scheduler = make_scheduler("easy", backfill=backfill, depth=depth)
            runs.append(
                simulate(
                    workload, platform, scheduler, use_run_times=use_run_times, sources=sources
                )
            )
    plain, checked = runs
    assert check.checks == len(check.times)
    _same(plain, checked)  # reading the state changes nothing


@settings(max_examples=60, deadline=None)
@given(case=whole_node_cases(), backfill=st.sampled_from(["easy", "none"]))
def test_a_scheduler_that_overrides_a_hook_gets_the_same_results(case, backfill):
    platform, workload = case
    base = make_scheduler("easy", backfill=backfill)
    overriding = _OverridingEASY() if backfill == "easy" else _OverridingFCFS()
    _same(simulate(workload, platform, base), simulate(workload, platform, overriding))


def test_the_node_ids_of_a_crowded_run_are_the_lowest_idle_ones():
    """Jobs end out of start order, so the lowest idle nodes are scattered: every job gets the
    lowest idle node ids at its start (checked by replaying the starts and ends in time order)."""
    rng = np.random.default_rng(3)
    count = 400
    workload = make_workload(
        np.arange(count),
        np.sort(rng.integers(0, 5000, count)),
        rng.integers(1, 500, count),
        rng.integers(1, 33, count),
        rng.integers(1, 900, count),
    )
    result = simulate(workload, Platform(32, 1, 1), "easy")
    events = sorted(
        [(end, 0, job) for job, end in enumerate(result.end.tolist())]
        + [(start, 1, job) for job, start in enumerate(result.start.tolist())]
    )
    idle = set(range(32))
    for _, kind, job in events:
        nodes = result.nodes[job].tolist()
        if kind == 0:
            idle.update(nodes)
        else:
            assert nodes == sorted(idle)[: len(nodes)]
            idle.difference_update(nodes)
    assert len({tuple(n.tolist()) for n in result.nodes}) > 100  # many different node sets


def test_hooks_the_engine_calls_are_the_ones_a_scheduler_uses():
    """`listens`: the base's do-nothing hooks and EASY's (they serve Conservative only) are skipped;
    an override, Conservative's hooks and a hook set on the object are called."""
    hooks = ("on_arrival", "on_finish", "on_preempt", "on_revoke")
    easy, conservative, overriding = EASY(), make_scheduler("conservative"), _OverridingEASY()
    platform = Platform(4, 1, 1)
    workload = make_workload([0], [0.0], [1.0], [1], [1.0])
    for scheduler in (easy, conservative, overriding):
        simulate(workload, platform, scheduler)  # attach: Conservative's hooks exist from here
    assert not any(easy.listens(hook) for hook in hooks)
    assert [conservative.listens(hook) for hook in hooks] == [True, True, True, False]
    assert [overriding.listens(hook) for hook in hooks] == [True, False, False, False]
    easy.on_finish = lambda engine, job: None
    assert easy.listens("on_finish")


class _CountingEASY(EASY):
    """EASY that checks `waiting_units` at every pass and counts the passes with waiting jobs and
    the ones that start a job."""

    def attach(self, engine):
        super().attach(engine)
        self.passes = self.starting = 0

    def schedule(self, engine):
        table = engine.units_table
        if table is None:
            assert engine.waiting_units is None
        else:
            assert engine.waiting_units == sorted(table[job] for job in engine.waiting)
        running = len(engine.running)
        self.passes += bool(engine.waiting)
        super().schedule(engine)
        self.starting += len(engine.running) > running


class _CountingPriority(_CountingEASY):
    """Largest area first, counting how often its priority is asked."""

    asked = 0

    def priority(self, engine, waiting):
        self.asked += 1
        return self.cores[waiting] * self.estimate[waiting]


@settings(max_examples=30, deadline=None)
@given(whole_node_cases())
def test_a_pass_where_no_waiting_job_fits_is_skipped_and_changes_nothing(case):
    """`waiting_units` is the sorted units of the waiting jobs at every pass; a priority is asked
    only in passes where some waiting job fits, and the results are those of asking it always."""
    platform, workload = case
    counted = _CountingPriority()
    result = simulate(workload, platform, counted)
    assert counted.asked <= counted.passes and counted.starting <= counted.asked
    with patch.object(allocators.CompactAllocator, "static_units", lambda self, cores: None):
        always = _CountingPriority()  # no units table: no waiting_units, every pass sorts
        _same(simulate(workload, platform, always), result)


def test_no_priority_is_asked_while_every_waiting_job_is_too_large():
    """Two whole-platform jobs queue behind a third: the passes at their arrivals start nothing and
    do not ask the priority; the result is unchanged."""
    platform = Platform(2, 1, 1)
    workload = make_workload([0, 1, 2], [0.0, 1.0, 2.0], [10.0, 5.0, 5.0], [2, 2, 2], [10.0] * 3)
    counted = _CountingPriority()
    result = simulate(workload, platform, counted)
    assert counted.passes == 5 and counted.asked == 3  # t = 0, 1, 2, 10, 15: not asked at 1, 2
    assert result.start.tolist() == [0.0, 10.0, 15.0]


class _CollectorRecord(EASY):
    """EASY recording the collector's young-pass threshold at each pass."""

    def __init__(self):
        super().__init__()
        self.thresholds = []

    def schedule(self, engine):
        self.thresholds.append(gc.get_threshold()[0])
        super().schedule(engine)


class _YoungRecord(EASY):
    """EASY recording, at its first pass, whether the collector's generations hold `marker`."""

    def __init__(self, marker):
        super().__init__()
        self.marker, self.seen = marker, []

    def schedule(self, engine):
        if not self.seen:
            self.seen.append(any(found is self.marker for found in gc.get_objects()))
        super().schedule(engine)


def test_a_run_freezes_what_existed_before_it_out_of_its_collections():
    """The objects alive when a run begins (the engine's per-job lists among them) are out of the
    collector's generations while it lasts, so a pass examines only what the run made; afterwards
    they are back in the oldest generation."""
    platform = Platform(4, 1, 1)
    workload = make_workload(list(range(5)), [0, 0, 1, 3, 4], [5, 2, 2, 1, 3], [4, 1, 2, 1, 1])
    marker: list = [object()]  # a tracked container made before the run
    scheduler = _YoungRecord(marker)
    frozen = gc.get_freeze_count()
    simulate(workload, platform, scheduler)
    assert scheduler.seen == [False]
    assert gc.get_freeze_count() == frozen and any(found is marker for found in gc.get_objects(2))


def test_the_collectors_young_passes_are_rare_only_while_a_run_lasts():
    platform = Platform(4, 1, 1)
    workload = make_workload(list(range(5)), [0, 0, 1, 3, 4], [5, 2, 2, 1, 3], [4, 1, 2, 1, 1])
    before = gc.get_threshold()
    scheduler = _CollectorRecord()
    simulate(workload, platform, scheduler)
    assert set(scheduler.thresholds) == {GC_THRESHOLD}
    assert gc.get_threshold() == before
