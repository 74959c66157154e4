"""Schedulers, mechanisms and failure sources use the engine only through `SchedulerView` and its
actions.

A static check over the built-in modules: every attribute they read on the engine (``engine.x``,
``e.x``) is a member of the view, none reads allocator arrays or private engine members, and no
event source calls a hook that only one scheduler defines. (tests/package/test_layering.py checks
the allocator and private-member rule over every module of the package.)
"""

import ast
from pathlib import Path

import numpy as np

from cosched.simulator.engine import Engine
from cosched.simulator.platform import Platform
from cosched.simulator.schedulers import make_scheduler
from cosched.simulator.view import VIEW_MEMBERS, SchedulerView
from cosched.simulator.workload import make_workload

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
            "__init__.py",
        )
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
        assert outside_view(path) == {"allocator.state", "engine._advance"}
    finally:
        path.unlink()


def test_the_engine_offers_every_member_of_the_view():
    workload = make_workload([1, 2], [0, 5], [10, 10], [1, 1], [10, 10])
    engine = Engine(workload, Platform(2), make_scheduler("easy"))
    assert isinstance(engine, SchedulerView)
    missing = [name for name in VIEW_MEMBERS if name != "STATES" and not hasattr(engine, name)]
    assert missing == []
    engine.run()
    assert engine.free_nodes() == 2 and engine.idle_nodes().tolist() == [0, 1]
    assert not engine.is_reserved(0) and engine.occupant(0) == -1
    assert (engine.node_occupants() == -1).all() and engine.node_occupants(np.array([1])).shape[
        0
    ] == 1
    reservation = engine.reserve(np.array([1]))
    assert engine.is_reserved(1) and engine.reservation_of(1) is reservation


def test_a_misspelled_scheduler_option_is_refused_naming_the_known_ones():
    import pytest

    from cosched.errors import InputError

    with pytest.raises(InputError, match="depht.*backfill, depth, record_reservations"):
        make_scheduler("easy", depht=5)
    with pytest.raises(InputError, match="backfil"):
        make_scheduler("easy", backfil="none")
    assert make_scheduler("easy", depth=5).depth == 5
    make_scheduler("fcfs-rigid", depth=5)  # an option of other schedulers: ignored, as before
