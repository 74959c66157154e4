"""Acquisition functions of the search strategies (002 §5.2): σ from the interpolation interval, PI,
EI, UCB.

Task speeds are treated as independent normals N(ã_ij, σ_ij²); a combination's speed is then normal
with mean ã_j = sum ã_ij and variance σ_j² = sum σ_ij². k in (0.5, 1) sets how wide σ is relative to
the interval.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy.special import ndtr, ndtri

from cosched.errors import InputError

__all__ = [
    "task_sigma",
    "combination_moments",
    "probability_of_improvement",
    "expected_improvement",
    "upper_confidence_bound",
    "check_k",
]

SQRT_2PI = np.sqrt(2.0 * np.pi)
# |z| beyond this saturates Φ and φ in float64; clipping avoids overflow for tiny σ_j
Z_LIMIT = 40.0


def check_k(k: float) -> float:
    """k must lie strictly between 0.5 and 1 so that Φ⁻¹(k) > 0 (002 §5.2)."""
    if not 0.5 < k < 1.0:
        # callers name the option (search: field k)
        raise InputError(f"k must lie in (0.5, 1), got {k}")
    return float(k)


def task_sigma(upper, estimate, lower, k: float) -> np.ndarray:
    """σ_ij = Δ_ij / Φ⁻¹(k), Δ_ij = min(upper - ã, ã - lower); 002 §5.2, formulas (25)-(26).

    Δ is clipped at 0: noisy measurements can cross the bounds, and a negative width means "no doubt
    left".
    """
    delta = np.maximum(np.minimum(upper - estimate, estimate - lower), 0.0)  # 002 §5.2 (25)
    return delta / _quantile(k)  # 002 §5.2 (26)


@lru_cache(maxsize=64)
def _quantile(k: float) -> float:
    """Φ⁻¹(k), computed once per k (it is needed at every update)."""
    return float(ndtri(check_k(k)))


def combination_moments(estimate, sigma) -> tuple[np.ndarray, np.ndarray]:
    """(ã_j, σ_j): ã_j = sum_{i in S_j} ã_ij, σ_j² = sum_{i in S_j} σ_ij² over the last (task) axis;
    002 §5.2.

    Entries of tasks outside S_j must be 0 (as `Bounds` keeps them).
    """
    return estimate.sum(axis=-1), np.sqrt(np.square(sigma).sum(axis=-1))


def probability_of_improvement(mean, sigma, incumbent) -> np.ndarray:
    """PI_j = Φ((ã_j - a⁺)/σ_j); for σ_j = 0: 1 if ã_j >= a⁺ else 0; 002 §5.2, formula (27)."""
    mean, sigma = np.asarray(mean, dtype=float), np.asarray(sigma, dtype=float)
    gap = mean - incumbent
    z = _standardized(gap, sigma)
    return np.where(sigma > 0, ndtr(z), (gap >= 0).astype(float))  # 002 §5.2 (27)


def expected_improvement(mean, sigma, incumbent, clip: bool = True) -> np.ndarray:
    """EI_j = (ã_j - a⁺)Φ(z) + σ_j φ(z), z = (ã_j - a⁺)/σ_j; for σ_j = 0 the improvement max(ã_j -
    a⁺, 0).

    002 §5.2, formula (28). By default the σ_j = 0 case is clipped at 0 (an improvement is never
    negative), which is the limit of the σ_j > 0 expression as σ_j -> 0; `clip=False` gives (28) as
    printed, ã_j - a⁺.
    """
    mean, sigma = np.asarray(mean, dtype=float), np.asarray(sigma, dtype=float)
    gap = mean - incumbent
    z = _standardized(gap, sigma)
    density = np.exp(-0.5 * z * z) / SQRT_2PI
    value = gap * ndtr(z) + sigma * density  # 002 §5.2 (28)
    return np.where(sigma > 0, np.maximum(value, 0.0), np.maximum(gap, 0.0) if clip else gap)


def upper_confidence_bound(mean, sigma, incumbent=None) -> np.ndarray:
    """UCB_j = ã_j + σ_j; 002 §5.2, formula (29). The incumbent a⁺ is not used."""
    return np.asarray(mean, dtype=float) + np.asarray(sigma, dtype=float)  # 002 §5.2 (29)


def _standardized(gap, sigma):
    """(ã_j - a⁺)/σ_j where σ_j > 0 (0 elsewhere), clipped to ±Z_LIMIT."""
    with np.errstate(over="ignore"):
        z = np.divide(gap, sigma, out=np.zeros_like(gap), where=sigma > 0)
    return np.clip(z, -Z_LIMIT, Z_LIMIT)
