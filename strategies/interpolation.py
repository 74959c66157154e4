"""Interpolation bounds for the speeds not measured yet (002 §5.1), over the whole combination
lattice.

For every combination S_j (bitmask j, 0 <= j < 2^n) and task i in S_j the `Bounds` keep the measured
sub-combination S_p (i in S_p) that gives the upper bound and the measured super-combination S_q
that gives the lower bound, as (size, speed) pairs in arrays of shape (2^n, n) indexed [bitmask,
task]. A new measurement updates its supersets and subsets in one vectorised step (O(n 2^n));
`recompute` rebuilds everything with subset/superset transforms over the lattice (n passes of O(n
2^n)).
"""

from __future__ import annotations

import numpy as np

from cosched.errors import InputError
from cosched.theory.lattice import membership, popcount

__all__ = [
    "Bounds",
    "interpolate",
    "RULES",
    "LOWER_ANCHORS",
    "SEARCH_TIE_BREAKS",
    "MAX_SEARCH_TASKS",
]

RULES = ("paper", "tight")
# where the lower bound 0 sits when no superset is measured (002 §5.1 leaves it open): at size n + 1
# (the
# full set keeps a non-zero estimate) or at size n (the full set is estimated at 0 until it is
# measured)
LOWER_ANCHORS = ("n+1", "n")
# the other reading 002 §5 leaves open, kept beside this one so that parsers need not import the
# search (scipy):
# among equal (acquisition, estimate): smallest bitmask or the run's rng
SEARCH_TIE_BREAKS = ("first", "random")
MAX_SEARCH_TASKS = 16  # the lattice arrays hold 2^n x n entries per bound
# superset/subset lists are cached up to this n (2 x 3^n entries, 2.8 MB at n = 11)
CACHE_MAX_TASKS = 11
_NEIGHBOURS: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}


def interpolate(upper, upper_size, lower, lower_size, size):
    """ã_ij by linear interpolation in the combination size between S_p and S_q; 002 §5.1, formula
    (22).

    Where S_p = S_q = S_j (a measured combination) the weight is 0 and the estimate is the measured
    speed.
    """
    # |S_q| - |S_p| >= 1 when unmeasured
    weight = (lower_size - size) / np.maximum(lower_size - upper_size, 1.0)
    # 002 §5.1 (22): a_iq + (a_ip - a_iq)(|S_q| - |S_j|)/(|S_q| - |S_p|)
    return lower + (upper - lower) * weight


class Bounds:
    """Upper/lower speed bounds and interpolated estimates for all combinations of n tasks.

    rule="paper": the largest measured subset and the smallest measured superset, ties broken by the
    narrowest interval (002 §5.1). rule="tight": the smallest upper and the largest lower bound over
    all measured subsets/supersets (ties: the closest size). Singletons are known: a_i{i} = 1 (002
    §3). When no superset is measured the lower bound is 0, placed at size n + 1
    (lower_anchor="n+1", so the full set keeps a non-zero estimate) or at size n (lower_anchor="n").
    A measured combination's bounds are its measured speeds.
    """

    def __init__(self, n: int, rule: str = "paper", lower_anchor: str = "n+1"):
        if rule not in RULES:
            raise InputError(
                f"unknown bounds rule {rule!r}; choose from {', '.join(RULES)}", field="bounds"
            )
        if lower_anchor not in LOWER_ANCHORS:
            raise InputError(
                f"unknown lower anchor {lower_anchor!r}; choose from {', '.join(LOWER_ANCHORS)}",
                field="lower_anchor",
            )
        self.n, self.rule = n, rule
        self.anchor = n + 1.0 if lower_anchor == "n+1" else float(n)  # size of the lower bound 0
        self.lattice = np.arange(1 << n, dtype=np.int64)
        self.sizes = popcount(self.lattice)
        # |S_j| as a (2^n, 1) column for formula (22)
        self.size_column = self.sizes[:, None].astype(float)
        self.member = membership(self.lattice, n).T.copy()  # (2^n, n): task i in combination j
        self.measured = np.zeros(1 << n, dtype=bool)
        self.values = np.zeros((1 << n, n))
        singletons = 1 << np.arange(n, dtype=np.int64)
        self.measured[singletons] = True
        self.values[singletons, np.arange(n)] = 1.0  # 002 §3: speed alone is 1
        # what `recompute` gives with only the singletons measured: upper 1 at size 1, lower 0 at
        # the anchor
        self.upper_size = self.member.astype(float)
        self.upper = self.member.astype(float)
        self.lower_size = self.member * self.anchor
        self.lower = np.zeros((1 << n, n))
        for mask in singletons:
            self._pin(mask)

    def add(self, mask: int, speeds: np.ndarray, live: int | None = None) -> np.ndarray:
        """Record the first measurement of combination `mask`; return the bitmasks whose bounds may
        have changed.

        `live` (a bitmask of tasks) skips supersets with other tasks: a strategy never asks about
        combinations holding finished tasks again, so their bounds may go stale (`recompute`
        rebuilds all of them).
        """
        mask = int(mask)
        member = self.member[mask]
        speeds = np.where(member, speeds, 0.0)
        size = float(self.sizes[mask])
        self.values[mask] = speeds
        supersets, subsets = self._neighbours(mask)
        if live is not None and live != self.lattice[-1]:
            supersets = supersets[(supersets & ~live) == 0]
        tight = self.rule == "tight"
        # measured combinations keep their own speeds (`_pin`); under the paper rule no filter is
        # needed:
        # a measured superset holds its own, larger size as upper bound and a measured subset its
        # own, smaller
        # size as lower bound, so this candidate never wins against them
        rows = supersets[~self.measured[supersets]] if tight else supersets
        upper_size, upper = self.upper_size[rows], self.upper[rows]
        take = self._better_upper(size, speeds, upper_size, upper)
        take &= member  # tasks of S_j outside the measured combination keep their bound
        np.copyto(upper_size, size, where=take)
        np.copyto(upper, speeds, where=take)
        self.upper_size[rows], self.upper[rows] = upper_size, upper
        rows = subsets[~self.measured[subsets]] if tight else subsets
        lower_size, lower = self.lower_size[rows], self.lower[rows]
        take = self._better_lower(size, speeds, lower_size, lower)
        if tight:  # the paper rule never takes entries outside S_j (their size 0 is always smaller)
            take &= self.member[rows]
        np.copyto(lower_size, size, where=take)
        np.copyto(lower, speeds, where=take)
        self.lower_size[rows], self.lower[rows] = lower_size, lower
        self.measured[mask] = True
        self._pin(mask)
        return np.concatenate([supersets, subsets])  # `mask` itself appears twice

    def _neighbours(self, mask: int) -> tuple[np.ndarray, np.ndarray]:
        """Bitmasks of all supersets and all subsets of `mask` (cached per lattice size for small
        n)."""
        key = (self.n, mask)
        found = _NEIGHBOURS.get(key)
        if found is None:
            found = (
                np.flatnonzero((self.lattice & mask) == mask),
                np.flatnonzero((self.lattice & ~mask) == 0),
            )
            if self.n <= CACHE_MAX_TASKS:
                _NEIGHBOURS[key] = found
        return found

    def replace(self, mask: int, speeds: np.ndarray) -> None:
        """Set new measured speeds for an already measured combination (re-measurement) and rebuild
        the bounds."""
        self.values[int(mask)] = np.where(self.member[int(mask)], speeds, 0.0)
        self.recompute()

    def recompute(self) -> None:
        """Rebuild both bounds from the measured values by subset/superset transforms over the
        lattice."""
        n = self.n
        known = self.measured[:, None] & self.member
        self.upper_size = np.where(known, self.size_column, -1.0)
        self.upper = np.where(known, self.values, np.inf)
        self.lower_size = np.where(known, self.size_column, self.anchor)
        self.lower = np.where(known, self.values, 0.0)
        for bit in range(n):
            high = self.lattice[(self.lattice >> bit) & 1 == 1]
            low = high ^ (1 << bit)
            # subsets flow up: S_p subset of S_j (i in S_p is guaranteed by the initial `known`
            # mask)
            take = self._better_upper(
                self.upper_size[low], self.upper[low], self.upper_size[high], self.upper[high]
            )
            self.upper_size[high] = np.where(take, self.upper_size[low], self.upper_size[high])
            self.upper[high] = np.where(take, self.upper[low], self.upper[high])
            # supersets flow down: S_j subset of S_q
            take = self._better_lower(
                self.lower_size[high], self.lower[high], self.lower_size[low], self.lower[low]
            )
            self.lower_size[low] = np.where(take, self.lower_size[high], self.lower_size[low])
            self.lower[low] = np.where(take, self.lower[high], self.lower[low])
        outside = ~self.member
        self.upper[outside], self.lower[outside] = 0.0, 0.0
        self.upper_size[outside], self.lower_size[outside] = 0.0, 0.0
        for mask in np.flatnonzero(self.measured):
            self._pin(int(mask))

    def estimate(self, columns=slice(None)) -> np.ndarray:
        """ã_ij (rows: the given combinations, columns: tasks), formula (22); 0 for tasks outside
        S_j."""
        return interpolate(
            self.upper[columns],
            self.upper_size[columns],
            self.lower[columns],
            self.lower_size[columns],
            self.size_column[columns],
        )

    def _pin(self, mask: int) -> None:
        """A measured combination is its own best subset and superset: both bounds are its
        speeds."""
        size = float(self.sizes[mask]) * self.member[mask]
        self.upper[mask] = self.lower[mask] = self.values[mask]
        self.upper_size[mask] = self.lower_size[mask] = size

    def _better_upper(self, size, value, current_size, current):
        if self.rule == "paper":  # largest subset, then the smallest speed (narrowest interval)
            return (size > current_size) | ((size == current_size) & (value < current))
        return (value < current) | ((value == current) & (size > current_size))

    def _better_lower(self, size, value, current_size, current):
        if self.rule == "paper":  # smallest superset, then the largest speed (narrowest interval)
            return (size < current_size) | ((size == current_size) & (value > current))
        return (value > current) | ((value == current) & (size < current_size))
