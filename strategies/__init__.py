"""Online co-scheduling strategies run against an instance through one execution loop."""

from cosched._areas import require_package_name

require_package_name(__name__, "strategies")  # never a second copy under the folder name

from cosched.strategies.schedule import Decision, OnlineStrategy, Schedule, StrategyError, execute

__all__ = ["Decision", "OnlineStrategy", "Schedule", "StrategyError", "execute"]
