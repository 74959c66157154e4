"""The names of Cython's pure-Python mode that the hot modules use, for plain Python without Cython.

A hot module (`cosched._compiled.COMPILED_MODULES`) types its local counters, times and lists with
``@cython.locals(...)`` (and what a function returns with ``@cython.returns(...)``), and may declare
extension types (``@cython.cclass`` with ``cython.declare``d attributes) and C-level functions and
methods (``@cython.cfunc``, ``@cython.ccall``); the Cython compiler reads these through the module's
own ``import cython``.
When the module runs as plain Python, it uses this module, also where Cython is installed (Cython's
own shadow module, which ``import cython`` then finds, makes plain SDSC-SP2 EASY about 40 % slower):
every decorator returns its function or class unchanged,
`declare` gives None (the instance sets the attribute) and every type is a name, so the source
behaves exactly as if it carried no types.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

__all__ = [
    "compiled",
    "locals",
    "returns",
    "cclass",
    "final",
    "no_gc",
    "cfunc",
    "ccall",
    "exceptval",
    "inline",
    "declare",
    "cast",
    "address",
    "boundscheck",
    "wraparound",
    "initializedcheck",
    "cdivision",
    "bint",
    "double",
    "longlong",
    "uchar",
    "p_uchar",
    "p_void",
    "Py_ssize_t",
]

F = TypeVar("F", bound=Callable[..., Any])
C = TypeVar("C", bound=type)

compiled = False  # ``cython.compiled``: True only inside a compiled module


class _CType:
    """A C type, as a name only; ``type[:]`` (a typed memoryview of it) is a name too."""

    def __init__(self, name: str):
        self.name = name

    def __getitem__(self, dimensions: object) -> _CType:
        return _CType(f"{self.name}[:]")

    def __repr__(self) -> str:
        return self.name


# C types, as names only
bint = _CType("bint")
double = _CType("double")
longlong = _CType("long long")
uchar = _CType("unsigned char")
p_uchar = _CType("unsigned char *")
p_void = _CType("void *")
Py_ssize_t = _CType("Py_ssize_t")


def locals(**types: object) -> Callable[[F], F]:  # noqa: A001  (Cython's name)
    """``@cython.locals(name=type, ...)``: the types of a function's locals, ignored here."""

    def unchanged(function: F) -> F:
        return function

    return unchanged


def returns(kind: object) -> Callable[[F], F]:
    """``@cython.returns(type)``: the C type a function returns, ignored here."""

    def unchanged(function: F) -> F:
        return function

    return unchanged


def cclass(kind: C) -> C:
    """``@cython.cclass``: an extension type when compiled; here the plain class."""
    return kind


def final(kind: C) -> C:
    """``@cython.final``: an extension type that cannot be subclassed, whose C methods are called
    directly, when compiled; here the plain class."""
    return kind


def no_gc(kind: C) -> C:
    """``@cython.no_gc``: an extension type the cyclic garbage collector does not track (its
    fields can hold no reference cycle) when compiled; here the plain class."""
    return kind


def cfunc(function: F) -> F:
    """``@cython.cfunc``: a C function (called from the module only) when compiled."""
    return function


def ccall(function: F) -> F:
    """``@cython.ccall``: a function or method callable from C and from Python when compiled."""
    return function


def exceptval(value: object = None, *, check: bool = True) -> Callable[[F], F]:
    """``@cython.exceptval(value, check=...)``: the C value a C function returns on an error (so
    a caller tests for an error only then), ignored here."""

    def unchanged(function: F) -> F:
        return function

    return unchanged


def inline(function: F) -> F:
    """``@cython.inline``: inlined into its callers when compiled."""
    return function


def boundscheck(check: bool) -> Callable[[C], C]:
    """``@cython.boundscheck(False)``: list and array indices are not checked when compiled."""
    return _unchanged


def wraparound(wrap: bool) -> Callable[[C], C]:
    """``@cython.wraparound(False)``: no negative indices (from the end) when compiled."""
    return _unchanged


def initializedcheck(check: bool) -> Callable[[C], C]:
    """``@cython.initializedcheck(False)``: no check that a typed memoryview was set before it is
    read, when compiled."""
    return _unchanged


def cdivision(c_semantics: bool) -> Callable[[C], C]:
    """``@cython.cdivision(True)``: C division (no sign checks) of C integers when compiled."""
    return _unchanged


def _unchanged(kind: C) -> C:
    return kind


def declare(kind: object, value: Any = None, **options: object) -> Any:
    """``cython.declare(type, visibility=...)``: an attribute of an extension type, None here (the
    instance sets it); ``cython.declare(type, value)``: a C variable, here the value itself."""
    return value


def cast(kind: object, value: Any, typecheck: bool = False) -> Any:
    """``cython.cast(type, value)``: `value` seen as a C type or extension type (no check, no
    conversion) when compiled; here `value` itself."""
    return value


def address(value: Any) -> Any:
    """``cython.address(value)``: a pointer to `value` (``&value``) when compiled; here `value`."""
    return value
