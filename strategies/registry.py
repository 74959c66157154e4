"""Strategy names -> factories, so the CLI, experiments and users build strategies the same way."""

from __future__ import annotations

from collections.abc import Callable

from cosched.registry import build
from cosched.strategies.schedule import OnlineStrategy

__all__ = ["STRATEGIES", "make_strategy", "register_strategy"]

# name -> "module:factory"; a factory takes keyword options (tie_break, k, quantum, bounds, ...)
STRATEGIES: dict[str, str | Callable[..., OnlineStrategy]] = {
    "fcs": "cosched.strategies.fcs:FCS",
    "ucb": "cosched.strategies.search:UCB",
    "pi": "cosched.strategies.search:PI",
    "ei": "cosched.strategies.search:EI",
}


def register_strategy(name: str, factory: str | Callable[..., OnlineStrategy]) -> None:
    """Make a user's strategy available by name (to the CLI, experiments and `make_strategy`)."""
    STRATEGIES[name] = factory


def make_strategy(name: str, **options) -> OnlineStrategy:
    """Build the strategy called `name`; options it does not take are ignored."""
    return build(STRATEGIES, name, "strategy", **options)
