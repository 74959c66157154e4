"""Build things registered by name ("module:factory" strings load lazily, so the CLI starts
fast)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping

from cosched.errors import InputError
from cosched.names import canonical, resolve_name, unknown_name

__all__ = ["build", "refuse_unknown_options"]


def build(registry: Mapping[str, str | Callable], name: str, kind: str, **options):
    """Call the factory registered as `name`, passing only the options its `OPTIONS` attribute
    lists.

    An unknown name is bad input: InputError listing the known names.
    """
    resolved = resolve_name(name, sorted(registry), kind)
    if resolved not in registry:  # a plug-in file: its caller loads it, a registry cannot
        raise InputError(unknown_name(name, sorted(registry), kind))
    factory = _load(registry[resolved])
    accepted = getattr(factory, "OPTIONS", None)
    if accepted is not None:
        options = {
            key: value for key, value in options.items() if key in accepted and value is not None
        }
    return factory(**options)


def refuse_unknown_options(
    registry: Mapping[str, str | Callable], name: str, kind: str, options: Mapping[str, object]
) -> None:
    """Raise InputError for an option of `options` that no factory of `registry` takes (a
    misspelling), naming the options `name` takes.

    An option of another factory that `name` does not take passes (`build` drops it), so one set of
    options can go to any of them; a factory without ``OPTIONS`` takes anything. An unknown `name`
    is left to `build`.
    """
    name = canonical(name, registry)
    if name not in registry or not options:
        return
    accepted = getattr(_load(registry[name]), "OPTIONS", None)
    foreign = [key for key in options if accepted is not None and key not in accepted]
    if not foreign:
        return
    # the error path only: loads every factory of the registry
    known = set().union(*(getattr(_load(f), "OPTIONS", None) or () for f in registry.values()))
    unknown = [key for key in foreign if key not in known]
    if unknown:
        raise InputError(
            f"unknown option {unknown[0]!r} of {kind} {name!r}; it takes: "
            f"{', '.join(sorted(accepted or ())) or 'no options'}",
            field=unknown[0],
        )


def _load(factory: str | Callable) -> Callable:
    """The factory itself: a "module:attribute" string is imported on first use."""
    if isinstance(factory, str):
        module, attribute = factory.split(":")
        return getattr(importlib.import_module(module), attribute)
    return factory
