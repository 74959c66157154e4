"""EASY's pass objects (the scheduler's `_RunPass` and its `EasyBackfill`): a queue scheduler builds
them once per run and reuses them for every pass, so what they read of the view once must stay the
live state; on generated workloads they decide as fresh ones per pass (what `easy_pass` builds), a
scheduler object reused for a second run acts on that run's view, a subclass whose `attach`
skips the base's still backfills, and the pass's memo of the jobs it rejected decides as the
scan."""

import contextlib
import dataclasses
from unittest import mock

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from cosched._compiled import compiled_modules
from cosched.simulator.platform import Platform
from cosched.simulator.schedulers import backfilling
from cosched.simulator.schedulers.easy import EASY
from cosched.simulator.simulation import simulate
from cosched.simulator.workload import load_workload
from cosched.theory.heatmap import read_heatmap

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


def _with_memo(remembers: bool, *run_args, **run_options):
    """`simulate` with EASY's memo of rejected jobs on or off."""
    with mock.patch.object(backfilling, "REMEMBERS_REJECTED", remembers):
        return simulate(*run_args, **run_options)


@settings(max_examples=30, deadline=None)
@given(case=platforms_and_workloads(max_jobs=30), extra=st.sampled_from(["first", "all"]))
def test_the_memo_of_rejected_jobs_decides_as_the_scan(case, extra):
    platform, workload = case
    on = _with_memo(True, workload, platform, EASY(shadow_extra=extra))
    _same_run(on, _with_memo(False, workload, platform, EASY(shadow_extra=extra)))


@settings(max_examples=30, deadline=None)
@given(case=platforms_and_workloads(max_jobs=30))
def test_the_memo_decides_as_the_scan_when_co_scheduled(case):
    """Co-located (twice the cores per node, an application per job), where a job that fits in
    the free units may fail to start (its nodes)."""
    platform, workload = case
    heatmap = read_heatmap("aris-nas", default=1.0)
    paired = Platform(platform.nodes, 2, platform.sockets_per_node * platform.cores_per_socket)
    draw = np.random.default_rng(len(workload)).integers(0, len(heatmap), len(workload))
    with_apps = dataclasses.replace(workload, app=np.array(heatmap.applications, object)[draw])
    on = _with_memo(True, with_apps, paired, "easy-co", heatmap=heatmap)
    _same_run(on, _with_memo(False, with_apps, paired, "easy-co", heatmap=heatmap))


def test_the_memo_skips_jobs_and_decides_as_the_scan_on_a_real_trace():
    """KTH-SP2 (bundled), plain and co-scheduled EASY: the memo skips part of the queue (counted
    where `_untested` is a Python method) and every start stays the same."""
    workload = load_workload("kth-sp2").head(3000)
    heatmap = read_heatmap("aris-nas", default=1.0)
    draw = np.random.default_rng(1).integers(0, len(heatmap), len(workload))
    with_apps = dataclasses.replace(workload, app=np.array(heatmap.applications, object)[draw])
    skipped = []
    plain_python = not compiled_modules()["cosched.simulator.schedulers.backfilling"]
    untested = backfilling.EasyBackfill._untested if plain_python else None  # compiled: a C method

    def counting(self, queue, first, stop, free, extra, shadow):
        position = untested(self, queue, first, stop, free, extra, shadow)
        skipped.append(position - first)
        return position

    for platform, scheduler, options in (
        (Platform(100, 1, 1), "easy", {}),
        (Platform(50, 2, 1), "easy-co", {"heatmap": heatmap}),
    ):
        counted = mock.patch.object(backfilling.EasyBackfill, "_untested", counting)
        with counted if plain_python else contextlib.nullcontext():
            on = _with_memo(True, with_apps, platform, scheduler, **options)
        _same_run(on, _with_memo(False, with_apps, platform, scheduler, **options))
    assert not plain_python or sum(skipped) > 0
