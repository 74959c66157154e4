"""Strategy names -> factories, so the CLI, experiments and users build strategies the same way."""

from __future__ import annotations

from collections.abc import Callable

from cosched.registry import build, refuse_unknown_options
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
    """Build the strategy called `name` with keyword `options`.

    An option no registered strategy takes (a misspelling such as ``qantum``) is an InputError
    naming the options this one takes. An option of other strategies that this one does not take
    (``quantum`` for FCS) is ignored, so one set of options can go to any strategy.
    """
    refuse_unknown_options(STRATEGIES, name, "strategy", options)
    return build(STRATEGIES, name, "strategy", **options)
