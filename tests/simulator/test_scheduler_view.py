"""Schedulers, mechanisms and failure sources see the engine only through `SchedulerView`: its
read-only state and its actions.

A static check over the built-in modules: every attribute they read on the engine (``engine.x``,
``e.x``) is a member of the view, none reads allocator arrays or private engine members, and no
event source calls a hook that only one scheduler defines. (tests/package/test_layering.py checks
the allocator and private-member rule over every module of the package.)
"""

import ast
import random
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cosched.simulator.engine import Engine
from cosched.simulator.platform import Platform
from cosched.simulator.schedulers import make_scheduler
from cosched.simulator.view import VIEW_MEMBERS, SchedulerView
from cosched.simulator.workload import make_workload

from .conftest import platforms_and_workloads

ROOT = Path(__file__).resolve().parents[2] / "simulator"
CHECKED = [
    ROOT / "colocation.py",
    *(ROOT / "hybrid" / name for name in ("mechanisms.py", "failures.py", "models.py")),
    *(
        ROOT / "schedulers" / name
        for name in (
            "base.py",
            "backfilling.py",
            "easy.py",
            "fcfs.py",
            "ordering.py",
            "matching.py",
            "elastic.py",
            "coscheduling.py",
            "filler.py",
            "popularity.py",
            "__init__.py",
        )
    ),
    # the documented plug-ins read only the view too (no deprecated fallback)
    *(
        ROOT.parent / "docs" / "examples" / name
        for name in ("smallest_area_first.py", "best_neighbour.py", "expand_into_idle.py")
    ),
]
ENGINE_NAMES = {"engine", "e"}


def outside_view(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Attribute):
            if (
                isinstance(node.value, ast.Name)
                and node.value.id in ENGINE_NAMES
                and node.attr not in VIEW_MEMBERS
            ):
                found.add(f"engine.{node.attr}")
            if node.attr == "state" and (
                (isinstance(node.value, ast.Attribute) and node.value.attr == "allocator")
                or (isinstance(node.value, ast.Name) and node.value.id == "allocator")
            ):
                found.add("allocator.state")
            if node.attr == "yield_node":
                found.add("yield_node")
    return found


def test_built_in_schedulers_mechanisms_and_failures_use_only_the_view():
    for path in CHECKED:
        assert outside_view(path) == set(), path.name


def test_the_checker_sees_a_violation():
    source = "def f(engine):\n    return engine.allocator.state.used, engine._advance\n"
    path = Path(__file__).with_name("_view_probe.py")
    try:
        path.write_text(source)
        assert outside_view(path) == {"allocator.state", "engine.allocator", "engine._advance"}
    finally:
        path.unlink()


def test_the_view_offers_every_member_and_refuses_writes():
    workload = make_workload([1, 2], [0, 5], [10, 10], [1, 1], [10, 10])
    engine = Engine(workload, Platform(2), make_scheduler("easy"))
    view = engine.view
    assert isinstance(view, SchedulerView)
    assert [name for name in VIEW_MEMBERS if not hasattr(view, name)] == []
    engine.run()
    assert view.free_nodes() == 2 and view.idle_nodes().tolist() == [0, 1]
    assert view.free_units() == view.total_units == 2 and view.units(0) == 1
    assert not view.is_reserved(0) and view.occupant(0) == -1
    assert (view.node_occupants() == -1).all() and view.node_occupants(np.array([1])).shape[0] == 1
    reservation = view.reserve(np.array([1]))
    assert view.is_reserved(1) and view.reservation_of(1) is reservation
    assert view.now == engine.now and view.end == engine.end  # the engine's state, live
    with pytest.raises(AttributeError, match="read-only"):
        view.now = 0.0  # type: ignore[misc]
    with pytest.raises(AttributeError, match="read-only"):
        view.waiting = {}  # type: ignore[misc]
    for container in (view.waiting, view.running, view.reservations):
        with pytest.raises(TypeError):
            container[0] = None  # type: ignore[index]
    for fixed in (view.submit, view.estimate, view.cores, view.run_time):
        with pytest.raises(TypeError):
            fixed[0] = 1  # type: ignore[index]


def test_hooks_receive_the_view_and_the_old_interface_still_works_with_a_warning():
    """A plug-in written when hooks received the engine (here: it reads the engine's allocator)
    still runs; reading a member the view does not offer warns (DeprecationWarning)."""
    from cosched.simulator.simulation import simulate

    seen = []

    def old_style(engine):
        seen.append(type(engine))
        while engine.waiting and engine.allocator.free_units():
            if not engine.start(next(iter(engine.waiting))):
                break

    workload = make_workload([1, 2], [0, 5], [10, 10], [1, 1], [10, 10])
    with pytest.warns(DeprecationWarning, match="engine.allocator"):
        result = simulate(workload, Platform(2), old_style)
    assert set(seen) == {SchedulerView} and result.start.tolist() == [0.0, 5.0]


def test_a_misspelled_scheduler_option_is_refused_naming_the_known_ones():
    from cosched.errors import InputError

    with pytest.raises(InputError, match="depht.*backfill, depth, record_reservations"):
        make_scheduler("easy", depht=5)
    with pytest.raises(InputError, match="backfil"):
        make_scheduler("easy", backfil="none")
    assert make_scheduler("easy", depth=5).depth == 5
    make_scheduler("fcfs-rigid", depth=5)  # an option of other schedulers: ignored, as before


class RandomActions:
    """A plug-in that preempts, kills and starts jobs at random and records, before and after its
    actions, whether the view's `queue` is the waiting jobs in the queue's order."""

    name = "random-actions"
    MAX_PASSES = 200  # after these, it only starts jobs: the run ends

    def __init__(self, seed: int) -> None:
        self.random = random.Random(seed)
        self.passes = 0
        self.agrees: list[bool] = []

    def check(self, view) -> None:
        queue = list(view.queue)
        self.agrees.append(queue == list(view.waiting) == sorted(queue))

    def schedule(self, view) -> None:
        self.check(view)
        self.passes += 1
        draw = self.random.random
        if self.passes < self.MAX_PASSES:
            for job in list(view.running):
                if draw() < 0.2:
                    view.preempt(job)
                elif draw() < 0.05:
                    view.kill(job)
            for job in list(view.queue):
                if draw() < 0.05:
                    view.kill(job)
                elif draw() < 0.5:
                    view.start(job)
        while view.queue and not view.running and view.start(view.queue[0]):
            pass  # an idle platform starts its head: no pass leaves the run stuck
        self.check(view)


@given(case=platforms_and_workloads(max_jobs=25), seed=st.integers(0, 2**16))
def test_the_queue_column_is_always_the_waiting_jobs_in_queue_order(case, seed):
    platform, workload = case
    plug_in = RandomActions(seed)
    Engine(workload, platform, plug_in).run()
    assert plug_in.agrees and all(plug_in.agrees)
