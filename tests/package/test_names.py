"""One name, one thing: no two modules export the same public name unless one re-exports the other's
object.

A researcher reading `from cosched.x import NAME` must find one definition of NAME. Command-line
modules (``cli``, ``*_cli``, ``__main__``) are left out: they export their `register`/`main` entry
points for the dispatcher, not an API (the API reference leaves them out too).
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections import defaultdict

from cosched._areas import AREAS

CLI_MODULE = re.compile(r"(^|\.)(cli|\w+_cli|__main__)$")  # the rule of docs/hooks/api_reference.py


def _modules() -> list[str]:
    names = set()
    for package in ("cosched", *(f"cosched.{area}" for area in AREAS)):
        module = importlib.import_module(package)
        names.add(package)
        names.update(info.name for info in pkgutil.walk_packages(module.__path__, f"{package}."))
    return sorted(name for name in names if not CLI_MODULE.search(name))


# Modules that mirror another project's API, whose names users' files import unchanged: the classes
# of elastisim-python that algorithm files use.
FOREIGN_APIS = {"cosched.simulator.elastic.compat"}


def collisions() -> dict[str, set[str]]:
    """Public names exported (`__all__`) by two or more modules as different objects -> those
    modules."""
    exported = defaultdict(dict)
    for name in _modules():
        if name in FOREIGN_APIS:
            continue
        module = importlib.import_module(name)
        for public in getattr(module, "__all__", ()):
            exported[public][name] = getattr(module, public)
    found = {}
    for public, owners in exported.items():
        if len({id(value) for value in owners.values()}) > 1:
            found[public] = set(owners)
    return found


def test_no_two_modules_export_different_things_under_one_name():
    assert collisions() == {}, "rename one of them, or import the one definition"


def test_the_check_sees_every_area():
    modules = _modules()
    assert all(any(name.startswith(f"cosched.{area}.") for name in modules) for area in AREAS)
    assert "cosched.grid" in modules and "cosched.simulator.cli" not in modules
