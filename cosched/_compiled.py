"""Which modules run compiled, and the switch back to their plain Python source.

A regular install (``pip install .``) compiles the simulator's hot modules (`COMPILED_MODULES`) with
Cython from their unmodified ``.py`` files, and installs both the extension and the source. The
source always wins when

- ``COSCHED_PURE_PYTHON=1`` is set (debugging, coverage, checking that both give the same results);
- the source has changed since the compile: each extension has a sidecar file
  ``<module>.source-sha256`` with the hash of the source it was built from, and an extension whose
  source no longer matches (or that has no sidecar, e.g. a stray in-place build) is never loaded.

An editable install (``pip install -e .``) compiles nothing, so the tests see the current source.
This file imports nothing from cosched: setup.py reads `COMPILED_MODULES` from it before the
package is installed.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import os
import sys
from pathlib import Path

__all__ = [
    "COMPILED_MODULES",
    "PURE_PYTHON_VARIABLE",
    "HASH_SUFFIX",
    "SourceGuard",
    "source_hash",
    "compiled_modules",
    "install_source_guard",
]

# the event loop, the scheduler's view (read once or more per pass), the FCFS/EASY passes,
# Conservative's profile and pass, the queue scheduler, the allocators, the co-location allocator
# and speed model, the matching co-scheduler (half of the thesis preset's time), the per-partition
# pass and the partition allocator, the co-schedulers' queue orderings (Filler's among them), the
# result's node ids (copied from the allocations' lists), and the one binary search of the engine,
# the sorted columns and the allocators
COMPILED_MODULES = (
    "cosched.simulator.engine",
    "cosched.simulator.view",
    "cosched.simulator.schedulers.backfilling",
    "cosched.simulator.schedulers.conservative",
    "cosched.simulator.schedulers.base",
    "cosched.simulator.allocators",
    "cosched.simulator.colocation",
    "cosched.simulator.schedulers.matching",
    "cosched.simulator.schedulers.partitioned",
    "cosched.simulator.partitions",
    "cosched.simulator.schedulers.co_ordering",
    "cosched.simulator.result",
    "cosched.simulator.bisection",
)
PURE_PYTHON_VARIABLE = "COSCHED_PURE_PYTHON"
HASH_SUFFIX = ".source-sha256"


def source_hash(path: Path) -> str:
    """The hex SHA-256 of a source file's bytes (what the sidecar of its extension records)."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _pure_python_requested() -> bool:
    return os.environ.get(PURE_PYTHON_VARIABLE, "") not in ("", "0")


def _extension_beside(source: Path) -> Path | None:
    """The compiled extension of a module next to its source, if there is one."""
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        candidate = source.with_name(source.stem + suffix)
        if candidate.is_file():
            return candidate
    return None


def _extension_matches(source: Path) -> bool:
    """True if the sidecar of `source`'s extension records the source as it is now."""
    sidecar = source.with_name(source.stem + HASH_SUFFIX)
    try:
        recorded = sidecar.read_text().strip()
    except OSError:
        return False
    return recorded == source_hash(source)


class SourceGuard:
    """Loads a compiled module's ``.py`` source instead of its extension when pure Python is asked
    for or the extension was built from another version of the source; otherwise defers to the
    ordinary finders (which prefer the extension). A meta path finder needs only `find_spec`, as
    `CheckoutAreas` (no importlib.abc import at start)."""

    def __init__(self, modules: tuple[str, ...] = COMPILED_MODULES):
        self.modules = modules

    def find_spec(self, fullname, path=None, target=None) -> importlib.machinery.ModuleSpec | None:
        if fullname not in self.modules or not path:
            return None
        name = fullname.rpartition(".")[2]
        for folder in path:
            source = Path(folder) / f"{name}.py"
            if not source.is_file():
                continue
            if _extension_beside(source) is None:
                return None  # plain Python install: the ordinary finders load the source
            if _pure_python_requested() or not _extension_matches(source):
                return importlib.util.spec_from_file_location(fullname, source)
            return None
        return None


def compiled_modules() -> dict[str, bool]:
    """Per hot module: True if the imported module is the compiled extension (imports them)."""
    import importlib

    states = {}
    for name in COMPILED_MODULES:
        origin = importlib.import_module(name).__file__ or ""
        states[name] = not origin.endswith(".py")
    return states


def install_source_guard() -> None:
    """Put a `SourceGuard` first on the import path (once)."""
    if not any(isinstance(finder, SourceGuard) for finder in sys.meta_path):
        sys.meta_path.insert(0, SourceGuard())
