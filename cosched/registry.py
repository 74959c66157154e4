"""Build things registered by name ("module:factory" strings load lazily, so the CLI starts
fast)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping

from cosched.errors import InputError

__all__ = ["build"]


def build(registry: Mapping[str, str | Callable], name: str, kind: str, **options):
    """Call the factory registered as `name`, passing only the options its `OPTIONS` attribute
    lists.

    An unknown name is bad input: InputError listing the known names.
    """
    try:
        factory = registry[name]
    except KeyError:
        from cosched.cli_options import did_you_mean

        raise InputError(
            f"unknown {kind} {name!r}; known: {', '.join(sorted(registry))}"
            + did_you_mean(name, registry)
        ) from None
    if isinstance(factory, str):
        module, attribute = factory.split(":")
        factory = getattr(importlib.import_module(module), attribute)
    accepted = getattr(factory, "OPTIONS", None)
    if accepted is not None:
        options = {
            key: value for key, value in options.items() if key in accepted and value is not None
        }
    return factory(**options)
