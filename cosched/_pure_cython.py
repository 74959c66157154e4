"""The names of Cython's pure-Python mode that the hot modules use, for plain Python without Cython.

A hot module (`cosched._compiled.COMPILED_MODULES`) types its local counters, times and lists with
``@cython.locals(...)``, and the fields of a class with ``@cython.cclass`` and
``cython.declare(...)``; the Cython compiler reads these through the module's own
``import cython``. When the module runs as plain Python, ``import cython`` finds Cython's own
shadow module if Cython is installed, and this one otherwise: the decorator returns its function
unchanged, a declared field is a class attribute None (every instance sets its own) and every type
is a name, so the source behaves exactly as if it carried no types.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["locals", "cclass", "declare", "bint", "double", "Py_ssize_t"]

F = TypeVar("F", bound=Callable[..., Any])
C = TypeVar("C", bound=type)

# C types, as names only
bint = bool
double = float
Py_ssize_t = int


def locals(**types: object) -> Callable[[F], F]:  # noqa: A001  (Cython's name)
    """``@cython.locals(name=type, ...)``: the types of a function's locals, ignored here."""

    def unchanged(function: F) -> F:
        return function

    return unchanged


def cclass(cls: C) -> C:
    """``@cython.cclass``: a class compiled to a C struct with typed fields; unchanged here."""
    return cls


def declare(kind: object, visibility: str = "private") -> Any:
    """``name = cython.declare(type, visibility=...)`` in a ``cclass`` body: a typed field; here a
    class attribute None, which every instance overrides."""
    return None
