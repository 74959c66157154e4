"""EASY's pass objects (the scheduler's `_RunPass` and its `EasyBackfill`): a queue scheduler builds
them once per run and reuses them for every pass, so what they read of the view once must stay the
live state; on generated workloads they decide as fresh ones per pass (what `easy_pass` builds), a
scheduler object reused for a second run acts on that run's view, and a subclass whose `attach`
skips the base's still backfills."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from cosched.simulator.schedulers.easy import EASY
from cosched.simulator.simulation import simulate

from .conftest import platforms_and_workloads


class _FreshPassObject(EASY):
    """EASY with new pass objects in every pass (the run's pass and its EASY pass, as `easy_pass`
    makes): nothing read once per run, nor a skipped idle pass, changes a decision."""

    def scheduling_pass(self, view) -> None:
        self._run = None
        super().scheduling_pass(view)


class _OwnAttach(EASY):
    """A plug-in whose `attach` does not call the base's."""

    def attach(self, view) -> None:
        self.attached = True


def _same_run(first, second) -> None:
    assert np.array_equal(first.start, second.start)
    assert [nodes.tolist() for nodes in first.nodes] == [nodes.tolist() for nodes in second.nodes]


@settings(max_examples=30, deadline=None)
@given(
    case=platforms_and_workloads(max_jobs=30),
    extra=st.sampled_from(["first", "all"]),
    durations=st.sampled_from(["estimate", "run"]),
)
def test_one_pass_object_per_run_decides_as_a_fresh_one_per_pass(case, extra, durations):
    platform, workload = case
    options = {"record_reservations": True, "shadow_extra": extra, "queued_durations": durations}
    kept, fresh = EASY(**options), _FreshPassObject(**options)
    _same_run(simulate(workload, platform, kept), simulate(workload, platform, fresh))
    assert kept.reservations == fresh.reservations


@settings(max_examples=15, deadline=None)
@given(first=platforms_and_workloads(max_jobs=20), second=platforms_and_workloads(max_jobs=20))
def test_a_scheduler_reused_for_another_run_acts_on_that_run(first, second):
    reused = EASY()
    simulate(first[1], first[0], reused)
    platform, workload = second
    _same_run(simulate(workload, platform, reused), simulate(workload, platform, EASY()))


@settings(max_examples=10, deadline=None)
@given(case=platforms_and_workloads(max_jobs=20))
def test_an_attach_that_skips_the_base_one_still_backfills(case):
    platform, workload = case
    plugin = _OwnAttach()
    _same_run(simulate(workload, platform, plugin), simulate(workload, platform, EASY()))
    assert plugin.attached
