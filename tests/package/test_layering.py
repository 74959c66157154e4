"""The import graph: one package, dependencies pointing one way, no cycles."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import networkx as nx
import pytest

from cosched._areas import AREAS

# What each area may import from the others: theory <- strategies <- simulator/measurement <- CLI.
ALLOWED = {
    "theory": set(),
    "strategies": {"theory"},
    "simulator": {"theory", "strategies"},
    "measurement": {"theory", "strategies"},
}


def _module_files() -> dict[str, Path]:
    """Every module of the installed package, by dotted name (the area folders map into
    `cosched.*`)."""
    modules = {}
    for package in ("cosched", *(f"cosched.{area}" for area in AREAS)):
        root = Path(importlib.import_module(package).__file__).parent
        for path in root.rglob("*.py"):
            parts = path.relative_to(root).with_suffix("").parts
            if "presets" in parts:  # bundled projects: data, their algorithm files are no modules
                continue
            modules[".".join((package, *parts)).removesuffix(".__init__")] = path
    return modules


def _imports(name: str, path: Path, known: set[str]) -> set[str]:
    """Modules of cosched that `name` imports anywhere in its body (lazy imports included)."""
    found = set()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(
                    package.split(".")[: len(package.split(".")) - node.level + 1]
                    + ([base] if base else [])
                )
            targets = [f"{base}.{alias.name}" for alias in node.names] + [base]
        else:
            continue
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


@pytest.fixture(scope="module")
def graph() -> nx.DiGraph:
    modules = _module_files()
    graph = nx.DiGraph()
    graph.add_nodes_from(modules)
    for name, path in modules.items():
        graph.add_edges_from((name, target) for target in _imports(name, path, set(modules)))
    return graph


def _area(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in AREAS else None


def test_areas_import_only_downwards(graph):
    wrong = [
        (a, b)
        for a, b in graph.edges
        if _area(a) and _area(b) and _area(a) != _area(b) and _area(b) not in ALLOWED[_area(a)]
    ]
    assert wrong == []


def test_areas_never_import_the_cli_dispatcher(graph):
    assert [(a, b) for a, b in graph.edges if _area(a) and b == "cosched.cli"] == []


def test_no_import_cycle(graph):
    """Package `__init__` re-exports aside (a package importing its own modules), no module imports
    itself back."""
    edges = [(a, b) for a, b in graph.edges if not b.startswith(a + ".")]
    cycles = list(nx.simple_cycles(nx.DiGraph(edges)))
    assert cycles == []


def test_graph_sees_the_real_imports(graph):
    assert graph.has_edge("cosched.strategies.schedule", "cosched.theory.schedule")
    assert graph.has_edge("cosched.simulator.engine", "cosched.simulator.platform")


# the command dispatcher loads the areas' command modules by name (importlib), on demand
DISPATCHER = {"cosched.cli", "cosched.__main__"}


def test_shared_infrastructure_imports_no_area(graph):
    """Every module of cosched/ but the dispatcher sits below the areas: it imports none of them."""
    shared = [name for name in graph if not _area(name) and name not in DISPATCHER]
    assert {"cosched.grid", "cosched.errors", "cosched._layout"} <= set(shared)
    wrong = [(a, b) for a, b in graph.edges if a in shared and _area(b)]
    assert wrong == []


def _parsed(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def test_nothing_imports_an_area_under_its_folder_name():
    """`import simulator.engine` would load a second copy of the area: always `cosched.<area>`."""
    wrong = []
    for name, path in _module_files().items():
        for node in ast.walk(_parsed(path)):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                targets = [node.module or ""]
            else:
                continue
            wrong += [(name, target) for target in targets if target.split(".")[0] in AREAS]
    assert wrong == []


def test_every_area_package_refuses_its_folder_name_first():
    """The first statement of each area's __init__ (after the docstring) is the guard of
    cosched._areas."""
    for area in AREAS:
        body = _parsed(_module_files()[f"cosched.{area}"]).body
        statements = [
            node
            for node in body
            if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant))
        ]
        first, second = statements[0], statements[1]
        assert isinstance(first, ast.ImportFrom) and first.module == "cosched._areas", area
        assert (
            isinstance(second, ast.Expr)
            and ast.unparse(second.value) == f"require_package_name(__name__, '{area}')"
        ), area


def test_experiment_specs_run_through_the_one_experiment_runner():
    """A module defining an `ExperimentSpec` subclass gets `run_experiment` from `cosched.grid` and
    does not drive the grid itself (`run_grid`, `grid_folder`): one protocol, one runner."""
    from cosched.grid import ExperimentSpec

    spec_modules = set()
    for name in _module_files():
        if "cli" in name.rpartition(".")[2] or name.endswith("__main__"):
            continue
        module = importlib.import_module(name)
        spec_modules |= {
            value.__module__
            for value in vars(module).values()
            if isinstance(value, type)
            and issubclass(value, ExperimentSpec)
            and value is not ExperimentSpec
        }
    assert {
        "cosched.strategies.experiment",
        "cosched.simulator.experiment",
        "cosched.simulator.elastic.experiment",
        "cosched.simulator.hybrid.experiment",
    } <= spec_modules
    files = _module_files()
    for name in spec_modules:
        module = importlib.import_module(name)
        assert module.run_experiment is importlib.import_module("cosched.grid").run_experiment, name
        imported = {
            alias.name
            for node in ast.walk(_parsed(files[name]))
            if isinstance(node, ast.ImportFrom) and node.module == "cosched.grid"
            for alias in node.names
        }
        assert not imported & {"run_grid", "grid_folder"}, name


# the modules that own the simulation state: everyone else reads it through SchedulerView
STATE_OWNERS = {"cosched.simulator.engine", "cosched.simulator.allocators"}


def _reads_behind_the_view(tree: ast.AST) -> set[str]:
    """Reads of allocator arrays (``allocator.state``) and private engine members (``engine._x``,
    ``self.engine._x``) in a module's syntax tree."""
    found = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        owner = node.value
        owner_name = (
            owner.id
            if isinstance(owner, ast.Name)
            else owner.attr
            if isinstance(owner, ast.Attribute)
            else None
        )
        if node.attr == "state" and owner_name == "allocator":
            found.add("allocator.state")
        if owner_name == "engine" and node.attr.startswith("_") and not node.attr.startswith("__"):
            found.add(f"engine.{node.attr}")
    return found


def test_only_the_engine_and_the_allocators_touch_the_simulation_state():
    """Schedulers, mechanisms, failure sources, front ends: the view and the engine's actions only
    (the per-module attribute check against the view's members is tests/simulator/
    test_scheduler_view.py)."""
    wrong = {
        name: found
        for name, path in _module_files().items()
        if name not in STATE_OWNERS and (found := _reads_behind_the_view(_parsed(path)))
    }
    assert wrong == {}


def test_the_state_check_sees_a_violation():
    source = (
        "def f(engine, self):\n"
        "    return engine.allocator.state.used, engine._advance, self.engine._queue, engine.now\n"
    )
    assert _reads_behind_the_view(ast.parse(source)) == {
        "allocator.state",
        "engine._advance",
        "engine._queue",
    }


def test_the_engine_and_the_view_import_no_scheduler(graph):
    """The engine runs any object with ``schedule(view)``: it and the view sit below the scheduler
    family (`cosched.simulator.simulation` resolves scheduler names above both)."""
    below = ("cosched.simulator.engine", "cosched.simulator.view")
    reached = {target for module in below for target in nx.descendants(graph, module)}
    wrong = sorted(
        target
        for target in reached
        if target.startswith(("cosched.simulator.schedulers", "cosched.simulator.simulation"))
    )
    assert wrong == []
