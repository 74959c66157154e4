"""Measurement noise for the search strategies (beyond 002, which assumes exact measurements, §5).

A `NoiseModel` is the `measure(column, rng)` callable of `cosched.strategies.schedule.execute`: the
loop runs the true speeds and the strategy observes them multiplied by a random factor of mean 1 and
relative σ.
"""

from __future__ import annotations

import numpy as np

from cosched.errors import InputError

__all__ = ["NoiseModel", "NOISE_MODELS"]

NOISE_MODELS = ("lognormal", "normal")


class NoiseModel:
    """Multiply each measured speed by an independent factor with mean 1 and standard deviation
    `sigma`.

    lognormal: exp(N(-s²/2, s)) with s² = ln(1 + sigma²) (always positive); normal: 1 + N(0,
    sigma²), clipped at 0 so a speed never turns negative.
    """

    def __init__(self, sigma: float, model: str = "lognormal"):
        if not np.isfinite(sigma) or sigma < 0:
            raise InputError(
                f"the relative noise σ must be finite and >= 0, got {sigma}", field="noise-sigma"
            )
        if model not in NOISE_MODELS:
            raise InputError(
                f"unknown noise model {model!r}; choose from {', '.join(NOISE_MODELS)}",
                field="noise-model",
            )
        self.sigma, self.model = float(sigma), model

    def factors(self, size: int, rng: np.random.Generator) -> np.ndarray:
        if self.model == "lognormal":
            spread = np.sqrt(np.log1p(self.sigma**2))
            return np.exp(rng.normal(-0.5 * spread**2, spread, size=size))
        return np.maximum(1.0 + rng.normal(0.0, self.sigma, size=size), 0.0)

    def __call__(self, column: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return column * self.factors(column.shape[0], rng)

    def __repr__(self) -> str:
        return f"NoiseModel(sigma={self.sigma}, model={self.model!r})"
