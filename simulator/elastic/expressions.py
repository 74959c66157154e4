"""Performance models: ExprTk expressions evaluated by ExprTk itself (the `cexprtk` wrapper), as
ElastiSim does.

ElastiSim writes a job's arguments into the expression text before ExprTk compiles it (001 §4.2.2):
integers exactly, floating-point values with six decimals (C++ `std::to_string`), strings verbatim.
Here arguments are ExprTk variables holding those same values, so `^`, `%`, `? :` and every ExprTk
function mean what they mean in ElastiSim, and one compiled expression serves every job with the
same argument names.
"""

from __future__ import annotations

import math
import re
import threading

import cexprtk

from cosched.errors import InputError

__all__ = [
    "RESOURCE_VARIABLES",
    "argument_value",
    "Expressions",
    "MAX_EXPRESSION_CHARS",
    "MAX_EXPRESSION_DEPTH",
]

# 001 §4.2.2: the variables of the assigned resources; `phase_iteration` is the iteration of an
# evolving request
RESOURCE_VARIABLES = ("num_nodes", "num_gpus_per_node", "num_gpus", "phase_iteration")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")  # ExprTk symbols are case-insensitive
_VARIABLE = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")  # an ExprTk variable: no leading _, no dot
# ExprTk refuses chains of more than 10,000 terms (its depth limit, ERR018)
MAX_EXPRESSION_CHARS = 20_000
MAX_EXPRESSION_DEPTH = 200  # brackets inside brackets; ExprTk's parser stops near 400 nested levels
_SHOWN_CHARS = 80  # how much of a long expression an error message repeats
# payloads (flops, bytes, delays, iteration counts) are amounts: a negative value is a broken model;
# an evolving request may be negative (ElastiSim clips it to the job's bounds with
# clip_evolving_requests)
_SIGNED = ("evolving_request",)


# Every cexprtk expression compiled in this process, by (thread, text, variable names), shared by
# the Expressions of one thread and kept until the interpreter's module teardown frees them by
# reference count. cexprtk's classes let Python's cycle collector clear their fields before their
# C++ destructors run: an expression reachable only from a reference cycle (an error's traceback
# holds one) then corrupts the heap, and the process dies with SIGSEGV at exit after printing its
# error line (exit 139 instead of 2). Shared, the cache stays as small as the distinct expressions;
# per thread, because evaluating sets the expression's variables first (simulations in threads of
# one Dask worker never share one).
_COMPILED: dict[tuple[int, str, tuple[str, ...]], tuple[cexprtk.Expression, dict, tuple]] = {}
_NAME_CHECKS: dict[str, cexprtk.Expression] = {}  # the same for the argument-name checks


def _shown(text: str) -> str:
    return (
        repr(text)
        if len(text) <= _SHOWN_CHARS
        else f"{text[:_SHOWN_CHARS]!r}... ({len(text):,} characters)"
    )


def _depth(text: str) -> int:
    deepest = depth = 0
    for char in text:
        if char in "([{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in ")]}":
            depth -= 1
    return deepest


def argument_value(value) -> float | None:
    """The number ElastiSim substitutes for a job argument (float: six decimals), or None for a
    non-numeric one."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return float(value)
    if isinstance(value, float):
        return float(f"{value:f}")  # std::to_string(double) prints six decimals
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None


class Expressions:
    """Compiled expressions, shared by all jobs whose arguments have the same names."""

    def __init__(self) -> None:
        self._compiled: dict[
            tuple[str, tuple[str, ...]], tuple[cexprtk.Expression, dict, tuple[str, ...]]
        ] = {}
        self._names: dict[str, str | None] = {}

    def variable_name_problem(self, name: str) -> str | None:
        """Why `name` cannot be an ExprTk variable (a space, an ExprTk function or keyword, ...),
        or None."""
        if name not in self._names:
            problem = None
            if not _VARIABLE.match(name):
                problem = (
                    f"argument name {name!r} is not an ExprTk variable name (a letter, then "
                    f"letters, digits or _)"
                )
            elif name.lower() in RESOURCE_VARIABLES:
                problem = f"argument name {name!r} is a resource variable ElastiSim sets itself"
            else:
                try:
                    _NAME_CHECKS[name] = cexprtk.Expression(
                        name, cexprtk.Symbol_Table({name: 0.0}, add_constants=True)
                    )
                except Exception:  # noqa: BLE001 - cexprtk's exceptions for reserved and shadowing names vary
                    problem = f"argument name {name!r} is an ExprTk function, keyword or constant"
            self._names[name] = problem
        return self._names[name]

    def compile(self, text: str, names: tuple[str, ...], *, where: str, source: str | None = None):
        """The compiled `text` over the variables `names` (sorted); InputError naming the
        expression if it fails."""
        key = (text, names)
        entry = self._compiled.get(key)
        if entry is not None:
            return entry
        shared = (threading.get_ident(), text, names)
        entry = _COMPILED.get(shared)
        if entry is None:
            if len(text) > MAX_EXPRESSION_CHARS:
                raise InputError(
                    f"expression {_shown(text)} is longer than {MAX_EXPRESSION_CHARS:,} characters "
                    f"(ExprTk compiles at most 10,000 terms in a row)",
                    source=source,
                    field=where,
                )
            if not text.isascii():
                bad = next(char for char in text if not char.isascii())
                raise InputError(
                    f"expression {_shown(text)} contains the non-ASCII character {bad!r} (ExprTk "
                    f"reads ASCII only)",
                    source=source,
                    field=where,
                )
            depth = _depth(text)
            if depth > MAX_EXPRESSION_DEPTH:
                raise InputError(
                    f"expression {_shown(text)} nests brackets {depth:,} deep, above the limit of "
                    f"{MAX_EXPRESSION_DEPTH} (ExprTk's parser stops near 400)",
                    source=source,
                    field=where,
                )
            table = None
            try:
                table = cexprtk.Symbol_Table({name: 0.0 for name in names}, add_constants=True)
                expression = cexprtk.Expression(text, table)
            except (cexprtk.ParseException, cexprtk.UnknownSymbolResolverException) as error:
                table = None  # freed now by reference count, never by the cycle collector (above)
                reason = str(error).replace("Syntax Error", "").replace("Parser Error", "").strip()
                raise InputError(
                    f"expression {_shown(text)} does not compile ({reason}); variables: "
                    f"{', '.join(names) or 'none'}",
                    source=source,
                    field=where,
                ) from None
            except (
                cexprtk.VariableNameShadowException,
                cexprtk.ReservedFunctionShadowException,
                cexprtk.BadVariableException,
            ) as error:
                table = None
                raise InputError(
                    f"an argument name is not an ExprTk variable name ({error}); variables: "
                    f"{', '.join(names)}",
                    source=source,
                    field=where,
                ) from None
            used = tuple(
                name for name in names if name.lower() in _IDENTIFIER.findall(text.lower())
            )
            entry = _COMPILED[shared] = (expression, table.variables, used)
        self._compiled[key] = entry
        return entry

    def evaluate(
        self, text: str, variables: dict[str, float], *, where: str, source: str | None = None
    ) -> float:
        """The value of `text` with `variables`; InputError naming the expression and the variables
        if not finite."""
        expression, slots, used = self.compile(
            text, tuple(sorted(variables)), where=where, source=source
        )
        for name in used:  # only the variables the expression names: a set costs a lookup
            slots[name] = variables[name]
        value = expression.value()
        if not math.isfinite(value) or (value < 0 and not any(key in where for key in _SIGNED)):
            shown = ", ".join(f"{name}={value:g}" for name, value in sorted(variables.items()))
            raise InputError(
                f"expression {_shown(text)} evaluates to "
                f"{value:g}{' (negative)' if value < 0 else ''} "
                f"with {shown}",
                source=source,
                field=where,
            )
        return value
