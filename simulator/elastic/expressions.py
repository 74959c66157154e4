"""Performance models: ExprTk expressions evaluated by ExprTk itself (the `cexprtk` wrapper), as ElastiSim does.

ElastiSim writes a job's arguments into the expression text before ExprTk compiles it (001 §4.2.2): integers
exactly, floating-point values with six decimals (C++ `std::to_string`), strings verbatim. Here arguments are
ExprTk variables holding those same values, so `^`, `%`, `? :` and every ExprTk function mean what they mean in
ElastiSim, and one compiled expression serves every job with the same argument names.
"""
from __future__ import annotations

import math
import re

import cexprtk

from cosched.errors import InputError

__all__ = ["RESOURCE_VARIABLES", "argument_value", "Expressions"]

# 001 §4.2.2: the variables of the assigned resources; `phase_iteration` is the iteration of an evolving request
RESOURCE_VARIABLES = ("num_nodes", "num_gpus_per_node", "num_gpus", "phase_iteration")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")  # ExprTk symbols are case-insensitive


def argument_value(value) -> float | None:
    """The number ElastiSim substitutes for a job argument (float: six decimals), or None for a non-numeric one."""
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

    def __init__(self):
        self._compiled: dict[tuple[str, tuple[str, ...]], tuple[cexprtk.Expression, dict, tuple[str, ...]]] = {}

    def compile(self, text: str, names: tuple[str, ...], *, where: str, source: str | None = None):
        """The compiled `text` over the variables `names` (sorted); InputError naming the expression if it fails."""
        key = (text, names)
        entry = self._compiled.get(key)
        if entry is None:
            table = cexprtk.Symbol_Table({name: 0.0 for name in names}, add_constants=True)
            try:
                expression = cexprtk.Expression(text, table)
            except (cexprtk.ParseException, cexprtk.UnknownSymbolResolverException) as error:
                reason = str(error).replace("Syntax Error", "").strip()
                raise InputError(f"expression {text!r} does not compile ({reason}); variables: "
                                 f"{', '.join(names) or 'none'}", source=source, field=where) from None
            except (cexprtk.VariableNameShadowException, cexprtk.ReservedFunctionShadowException,
                    cexprtk.BadVariableException) as error:
                raise InputError(f"an argument name is not an ExprTk variable name ({error}); variables: "
                                 f"{', '.join(names)}", source=source, field=where) from None
            used = tuple(name for name in names if name.lower() in _IDENTIFIER.findall(text.lower()))
            entry = (expression, table.variables, used)
            self._compiled[key] = entry
        return entry

    def evaluate(self, text: str, variables: dict[str, float], *, where: str, source: str | None = None) -> float:
        """The value of `text` with `variables`; InputError naming the expression and the variables if not finite."""
        expression, slots, used = self.compile(text, tuple(sorted(variables)), where=where, source=source)
        for name in used:  # only the variables the expression names: setting one costs a lookup in ExprTk
            slots[name] = variables[name]
        value = expression.value()
        if not math.isfinite(value):
            shown = ", ".join(f"{name}={value:g}" for name, value in sorted(variables.items()))
            raise InputError(f"expression {text!r} evaluates to {value} with {shown}", source=source, field=where)
        return value
