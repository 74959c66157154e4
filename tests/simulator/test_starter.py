"""A pass starts jobs and reads the free units through its view's `Starter`: compiled, C methods,
a built-in allocator's count read in C; the engine starts and ends jobs on a built-in allocator
through its C methods (`start_job`, `end_job`). An engine whose `start`, or an allocator whose
`allocate`, `release` or `free_units` a subclass overrides in Python, still has its override
called, with the same results."""

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cosched.simulator.allocators import Allocation, CompactAllocator, _Units, end_job, start_job
from cosched.simulator.colocation import CoLocationAllocator, co_context
from cosched.simulator.engine import Engine
from cosched.simulator.platform import Platform
from cosched.simulator.schedulers import make_scheduler
from cosched.simulator.schedulers.easy import EASY
from cosched.simulator.schedulers.fcfs import FCFS
from cosched.simulator.view import Clock

from .conftest import platforms_and_workloads

calls: Counter[str] = Counter()


class _CountingEngine(Engine):
    def start(self, job, nodes=None, placement=None, reason=""):
        calls["start"] += 1
        return super().start(job, nodes, placement, reason)


class _CountingAllocator(CompactAllocator):
    def free_units(self) -> int:
        calls["free_units"] += 1
        return super().free_units()


class _CountingCoAllocator(CoLocationAllocator):
    def allocate(self, engine, job):
        calls["allocate"] += 1
        return super().allocate(engine, job)

    def release(self, job, allocation):
        calls["release"] += 1
        super().release(job, allocation)

    def free_units(self) -> int:
        calls["free_units"] += 1
        return super().free_units()


@settings(max_examples=40, deadline=None)
@given(case=platforms_and_workloads(), scheduler=st.sampled_from(["easy-co", "filler"]))
def test_overrides_of_the_co_location_allocators_methods_are_called_with_the_same_results(
    case, scheduler
):
    nodes_platform, workload = case
    platform = Platform(nodes_platform.nodes, 1, 2)  # half-socket binding: an even core count
    workload.cores[:] = np.minimum(workload.cores, platform.total_cores)
    results = []
    for allocator_class in (CoLocationAllocator, _CountingCoAllocator):
        calls.clear()
        engine = Engine(
            workload,
            platform,
            make_scheduler(scheduler),
            allocator=allocator_class(platform),
            speed_model=co_context(workload).speed_model(),
        )
        results.append(engine.run())
    assert calls["allocate"] >= calls["release"] == len(workload)  # tries that did not fit too
    assert calls["free_units"] > 0
    before, after = results
    np.testing.assert_array_equal(before.start, after.start)
    np.testing.assert_array_equal(before.end, after.end)


@settings(max_examples=40, deadline=None)
@given(case=platforms_and_workloads(), easy=st.booleans())
def test_overrides_of_start_and_free_units_are_called_with_the_same_results(case, easy):
    platform, workload = case
    results = []
    for engine_class, allocator_class in ((Engine, CompactAllocator), (_CountingEngine, None)):
        calls.clear()
        allocator = (allocator_class or _CountingAllocator)(platform)
        scheduler = EASY() if easy else FCFS()
        engine = engine_class(workload, platform, scheduler, allocator=allocator)
        results.append(engine.run())
    assert calls["start"] >= len(workload) and calls["free_units"] > 0
    before, after = results
    np.testing.assert_array_equal(before.start, after.start)
    np.testing.assert_array_equal(before.end, after.end)


def test_a_clock_without_an_engine_refuses_to_start_a_job():
    with pytest.raises(TypeError, match="only the engine's loop state starts jobs"):
        Clock().start(0)


def test_a_units_allocator_without_c_methods_starts_and_ends_through_its_python_ones():
    """`start_job` and `end_job` call the base's C entries of an allocator that gives none: they
    are its `allocate` and `release`."""
    calls: list[tuple] = []
    held = Allocation([0, 1], 2)

    class Listed(_Units):
        def allocate(self, engine, job):
            calls.append(("allocate", engine, job))
            return held

        def release(self, job, allocation):
            calls.append(("release", job, allocation))

    allocator = Listed()
    allocator._direct = True
    assert start_job(allocator, "engine", 3, 4) is held
    end_job(allocator, 3, held)
    assert calls == [("allocate", "engine", 3), ("release", 3, held)]
