"""Strategy names -> factories, so the CLI, experiments and users build strategies the same way."""
from __future__ import annotations

import importlib
from typing import Callable

from strategies.schedule import OnlineStrategy

__all__ = ["STRATEGIES", "make_strategy", "register_strategy"]

# name -> "module:factory"; a factory takes keyword options (tie_break, k, quantum, bounds, ...)
STRATEGIES: dict[str, str] = {
    "fcs": "strategies.fcs:FCS",
    "ucb": "strategies.search:UCB",
    "pi": "strategies.search:PI",
    "ei": "strategies.search:EI",
}


def register_strategy(name: str, factory: str | Callable[..., OnlineStrategy]) -> None:
    """Make a user's strategy available by name (to the CLI, experiments and `make_strategy`)."""
    STRATEGIES[name] = factory


def make_strategy(name: str, **options) -> OnlineStrategy:
    """Build the strategy called `name`; options it does not take are ignored."""
    try:
        factory = STRATEGIES[name]
    except KeyError:
        raise ValueError(f"unknown strategy {name!r}; known: {', '.join(sorted(STRATEGIES))}") from None
    if isinstance(factory, str):
        module, attribute = factory.split(":")
        factory = getattr(importlib.import_module(module), attribute)
    accepted = getattr(factory, "OPTIONS", None)
    if accepted is not None:
        options = {key: value for key, value in options.items() if key in accepted and value is not None}
    return factory(**options)
