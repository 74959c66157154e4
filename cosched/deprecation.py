"""Deprecated spellings of the Python API: one warning, one removal version.

Every rename keeps the old spelling working until `REMOVED_IN`, with one warning that names the new
spelling. The command line has its own form of the same rule (hidden flag aliases,
`cosched.cli_options`).
"""

from __future__ import annotations

import warnings
from typing import Any

__all__ = [
    "REMOVED_IN",
    "UNSET",
    "warn_renamed",
    "warn_old_form",
    "renamed_keyword",
    "module_aliases",
]

REMOVED_IN = "0.4.0"  # the release that removes every deprecated spelling


class _Unset:
    """The default of a deprecated keyword: tells "not given" apart from None."""

    def __repr__(self) -> str:
        return "UNSET"


UNSET: Any = _Unset()


def warn_renamed(old: str, new: str, *, stacklevel: int = 3) -> None:
    """Warn (DeprecationWarning) that `old` is now spelled `new`."""
    warnings.warn(
        f"{old} is deprecated, use {new} (removed in {REMOVED_IN})",
        DeprecationWarning,
        stacklevel=stacklevel,
    )


def warn_old_form(old: str, new: str, *, stacklevel: int = 3) -> None:
    """Warn users (FutureWarning: shown by the command line and by default) that an old form of
    input or output, `old`, still works but is deprecated in favour of `new`."""
    warnings.warn(
        f"{old} is deprecated, {new} (removed in {REMOVED_IN})",
        FutureWarning,
        stacklevel=stacklevel,
    )


def renamed_keyword(
    new_value: Any, old_value: Any, *, old: str, new: str, default: Any = None
) -> Any:
    """The value of keyword `new` when the caller may still pass it as `old` (default `UNSET`).

    Passing `old` warns; passing both (the new one not at its `default`) is a TypeError.
    """
    if old_value is UNSET:
        return new_value
    warn_renamed(f"the keyword {old}=", f"{new}=", stacklevel=4)
    if new_value is not default:
        raise TypeError(f"give {new}= or the deprecated {old}=, not both")
    return old_value


def module_aliases(module: str, renamed: dict[str, str], namespace: dict[str, Any]):
    """A module-level ``__getattr__`` serving the old names of `renamed` (old -> new) with a
    warning."""

    def __getattr__(name: str) -> Any:
        if name in renamed:
            warn_renamed(f"{module}.{name}", f"{module}.{renamed[name]}")
            return namespace[renamed[name]]
        raise AttributeError(f"module {module!r} has no attribute {name!r}")

    return __getattr__
