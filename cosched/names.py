"""One resolver for every list of names a user types: schedulers, strategies, mechanisms, presets,
kernels.

Names are matched without regard to case (``FCS`` is ``fcs``), and an unknown name is one error
line listing the known names with the closest one offered ("did you mean"). A plug-in given as a
file (``FILE.py`` or ``FILE.py:Class``) is no name of a list: it passes through unchanged, for the
caller that loads it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from cosched.errors import InputError

__all__ = ["canonical", "did_you_mean", "is_plugin", "resolve_name", "unknown_name"]

SUGGESTION_CUTOFF = 0.6  # difflib similarity a name needs to be offered as "did you mean"
# a plug-in named by its Python file, optionally with the class or function to load from it
PLUGIN = re.compile(r".+\.py(:[A-Za-z_][\w.]*)?")


def is_plugin(value: str) -> bool:
    """Whether `value` names a plug-in file (``FILE.py``, ``FILE.py:Class``), not a listed name."""
    return PLUGIN.fullmatch(value) is not None


def canonical(value: str, known: Iterable[str]) -> str:
    """The known name `value` means (the same name in another case counts), else `value`."""
    names = [str(name) for name in known]
    if value in names or is_plugin(value):
        return value
    folded = [name for name in names if name.lower() == value.lower()]
    return folded[0] if len(folded) == 1 else value


def did_you_mean(value: str, known: Iterable[str]) -> str:
    """`; did you mean 'x'?` for the known name closest to `value`, or '' when none is close."""
    import difflib  # imported on an error only, not at every start

    names = {str(name).lower(): str(name) for name in known}
    close = difflib.get_close_matches(str(value).lower(), names, n=1, cutoff=SUGGESTION_CUTOFF)
    return f"; did you mean {names[close[0]]!r}?" if close else ""


def unknown_name(value: str, known: Iterable[str], kind: str) -> str:
    """The error text of an unknown name: `unknown KIND 'x'; known: a, b; did you mean 'a'?`."""
    names = [str(name) for name in known]
    return f"unknown {kind} {value!r}; known: {', '.join(names)}" + did_you_mean(value, names)


def resolve_name(value: str, known: Iterable[str], kind: str, *, field: str | None = None) -> str:
    """The known name `value` means (`canonical`); InputError (`unknown_name`, naming `field`)
    when it means none. A plug-in file passes unchanged."""
    names = [str(name) for name in known]
    name = canonical(value, names)
    if name in names or is_plugin(name):
        return name
    raise InputError(unknown_name(value, names, kind), field=field)
