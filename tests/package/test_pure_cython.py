"""The hot modules' C types (Cython's pure-Python mode) leave them plain Python when Cython is not
installed: `cosched._pure_cython` stands in for it."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from cosched import _pure_cython
from cosched._compiled import COMPILED_MODULES, PURE_PYTHON_VARIABLE
from cosched.simulator.simulation import simulate
from cosched.simulator.workload import make_workload

# the hot modules imported with `import cython` failing, then a small EASY run; prints the starts
WITHOUT_CYTHON = """
import importlib, json, sys
sys.modules["cython"] = None  # `import cython` raises ModuleNotFoundError
from cosched import _pure_cython
modules = [importlib.import_module(name) for name in sys.argv[1:]]
assert all(module.cython is _pure_cython for module in modules if hasattr(module, "cython"))
assert sum(hasattr(module, "cython") for module in modules) >= 4
from cosched.simulator.platform import Platform
from cosched.simulator.simulation import simulate
from cosched.simulator.workload import make_workload
workload = make_workload(
    list(range(6)), [0, 0, 1, 2, 2, 5], [10, 4, 3, 8, 2, 1], [4, 2, 2, 1, 3, 1],
    [12, 5, 3, 9, 6, 1],
)
result = simulate(workload, Platform(4, 1, 1), "easy")
print(json.dumps(result.start.tolist()))
"""

# the same with Cython installed: `import cython` finds its shadow module (`compiled` False)
WITH_CYTHON = """
import importlib, sys, types
sys.modules["cython"] = types.SimpleNamespace(compiled=False)  # what Cython's shadow module says
from cosched import _pure_cython
modules = [importlib.import_module(name) for name in sys.argv[1:]]
assert all(module.cython is _pure_cython for module in modules if hasattr(module, "cython"))
assert sum(hasattr(module, "cython") for module in modules) >= 4
"""


def test_the_typed_locals_decorator_returns_the_function_itself():
    def shadow(free: int) -> int:
        return free

    typed = _pure_cython.locals(free=_pure_cython.Py_ssize_t, end=_pure_cython.double)
    assert typed(shadow) is shadow


def test_the_extension_type_decorators_return_the_class_and_functions_themselves():
    # what conservative.Profile uses: an extension type with declared attributes, C-level methods
    class Shadow:
        size = _pure_cython.declare(list, visibility="public")

    def shadow(free: int) -> int:
        return free

    for decorator in (
        _pure_cython.cclass,
        _pure_cython.no_gc,
        _pure_cython.boundscheck(False),
        _pure_cython.wraparound(False),
        _pure_cython.cdivision(True),
    ):
        assert decorator(Shadow) is Shadow
    for decorator in (
        _pure_cython.cfunc,
        _pure_cython.ccall,
        _pure_cython.inline,
        _pure_cython.returns(_pure_cython.double),
    ):
        assert decorator(shadow) is shadow
    assert Shadow.size is None  # the instance sets it


def test_a_cast_gives_the_value_itself():
    # what easy_backfill uses to call its own pass's starter at C level
    starter = object()
    assert _pure_cython.cast(_pure_cython.double, starter) is starter


def test_the_hot_modules_run_as_plain_python_without_cython():
    from cosched.simulator.platform import Platform

    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_CYTHON, *COMPILED_MODULES],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, PURE_PYTHON_VARIABLE: "1"},
    )
    workload = make_workload(
        list(range(6)),
        [0, 0, 1, 2, 2, 5],
        [10, 4, 3, 8, 2, 1],
        [4, 2, 2, 1, 3, 1],
        [12, 5, 3, 9, 6, 1],
    )
    expected = simulate(workload, Platform(4, 1, 1), "easy").start.tolist()
    assert json.loads(done.stdout) == expected


def test_plain_python_uses_the_stand_in_also_where_cython_is_installed():
    subprocess.run(
        [sys.executable, "-c", WITH_CYTHON, *COMPILED_MODULES],
        check=True,
        env={**os.environ, PURE_PYTHON_VARIABLE: "1"},
    )
