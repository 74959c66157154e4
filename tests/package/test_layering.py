"""The import graph: one package, dependencies pointing one way, no cycles."""
from __future__ import annotations

import ast
import importlib
from pathlib import Path

import networkx as nx
import pytest


AREAS = ("theory", "strategies", "simulator", "measurement")
# What each area may import from the others: theory <- strategies <- simulator/measurement <- CLI.
ALLOWED = {
    "theory": set(),
    "strategies": {"theory"},
    "simulator": {"theory", "strategies"},
    "measurement": {"theory", "strategies"},
}


def _module_files() -> dict[str, Path]:
    """Every module of the installed package, by dotted name (the area folders map into `cosched.*`)."""
    modules = {}
    for package in ("cosched", *(f"cosched.{area}" for area in AREAS)):
        root = Path(importlib.import_module(package).__file__).parent
        for path in root.rglob("*.py"):
            parts = path.relative_to(root).with_suffix("").parts
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
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else []))
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
    wrong = [(a, b) for a, b in graph.edges
             if _area(a) and _area(b) and _area(a) != _area(b) and _area(b) not in ALLOWED[_area(a)]]
    assert wrong == []


def test_areas_never_import_the_cli_dispatcher(graph):
    assert [(a, b) for a, b in graph.edges if _area(a) and b == "cosched.cli"] == []


def test_no_import_cycle(graph):
    """Package `__init__` re-exports aside (a package importing its own modules), no module imports itself back."""
    edges = [(a, b) for a, b in graph.edges if not b.startswith(a + ".")]
    cycles = list(nx.simple_cycles(nx.DiGraph(edges)))
    assert cycles == []


def test_graph_sees_the_real_imports(graph):
    assert graph.has_edge("cosched.strategies.schedule", "cosched.theory.schedule")
    assert graph.has_edge("cosched.simulator.engine", "cosched.simulator.platform")
