"""Online co-scheduling strategies run against an instance through one execution loop."""
from cosched.strategies.schedule import Decision, OnlineStrategy, Schedule, StrategyError, execute

__all__ = ["Decision", "OnlineStrategy", "Schedule", "StrategyError", "execute"]
