"""FCS, Fastest Combination Speed first (002 §4.2, Listing 1): run the fastest combination of
unfinished tasks until one of its tasks completes, then repeat. Non-clairvoyant: reads the speeds A,
never the work b."""

from __future__ import annotations

import numpy as np

from cosched.deprecation import module_aliases
from cosched.errors import InputError
from cosched.strategies.schedule import Decision, StrategyError
from cosched.theory.instance import Instance
from cosched.theory.lattice import tasks_of

__all__ = ["FCS", "TIE_BREAKS", "SPEED_TIE_TOLERANCE"]

TIE_BREAKS = ("first", "last", "random")
# combination speeds within this (relative to the largest) count as equal
SPEED_TIE_TOLERANCE = 1e-12
# the name before 0.3.0
__getattr__ = module_aliases(__name__, {"TIE_TOLERANCE": "SPEED_TIE_TOLERANCE"}, globals())


class FCS:
    """Tie-break among equally fast combinations: `first` (smallest bitmask, as in 002 Listing 1),
    `last` (largest bitmask, the worst case of Example 1) or `random` (the run's seeded
    generator)."""

    name = "fcs"
    OPTIONS = {"tie_break"}

    def __init__(self, tie_break: str = "first"):
        if tie_break not in TIE_BREAKS:
            raise InputError(
                f"unknown tie-break {tie_break!r}; choose from {', '.join(TIE_BREAKS)}",
                field="tie_break",
            )
        self.tie_break = tie_break

    def start(self, instance: Instance, rng: np.random.Generator) -> None:
        self._rng = rng
        self._masks = instance.combinations
        self._speeds = instance.combination_speeds

    def decide(self, unfinished: int) -> Decision:
        # the candidates only shrink as tasks finish, so each step filters the previous survivors
        keep = (self._masks & ~np.int64(unfinished)) == 0
        self._masks, self._speeds = self._masks[keep], self._speeds[keep]
        if self._masks.size == 0:
            raise StrategyError(
                f"fcs: no combination of the unfinished tasks {tasks_of(unfinished)} is available"
            )
        fastest = self._speeds.max()  # a_j = sum_i a_ij, the combination speed (002 §3)
        ties = np.flatnonzero(self._speeds >= fastest - SPEED_TIE_TOLERANCE * max(fastest, 1.0))
        if self.tie_break == "first":
            pick = ties[0]
        elif self.tie_break == "last":
            pick = ties[-1]
        else:
            pick = self._rng.choice(ties)
        return Decision(int(self._masks[pick]))

    def observe(
        self, combination: int, duration: float, measured_speeds: np.ndarray, finished: int
    ) -> None:
        """FCS knows A in advance (002 §4.2); completions reach it through `decide`'s unfinished
        set."""
