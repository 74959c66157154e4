"""Search strategies UCB, PI and EI (002 §5): learn the speed matrix while running, pick by
acquisition value.

A strategy starts knowing only that every task alone runs at speed 1. Each decision scores every
combination of unfinished tasks with its acquisition function over the interpolation bounds
(`cosched.strategies.interpolation`) and runs the best one: an unmeasured combination for one
measurement quantum τ (or until one of its tasks completes), a measured one until one of its tasks
completes. It plugs into `cosched.strategies.schedule.execute` like FCS and never reads
`instance.speeds` or `instance.work`.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import numpy as np

from cosched.deprecation import module_aliases
from cosched.errors import InputError
from cosched.strategies.acquisition import (
    check_k,
    combination_moments,
    expected_improvement,
    probability_of_improvement,
    task_sigma,
    upper_confidence_bound,
)
from cosched.strategies.interpolation import (
    LOWER_ANCHORS,
    MAX_SEARCH_TASKS,
    RULES,
    SEARCH_TIE_BREAKS,
    Bounds,
    interpolate,
)
from cosched.strategies.schedule import Decision, StrategyError
from cosched.theory.instance import Instance
from cosched.theory.lattice import tasks_of

__all__ = [
    "SearchStrategy",
    "UCB",
    "PI",
    "EI",
    "INCUMBENTS",
    "DEFAULT_K",
    "DEFAULT_QUANTUM",
    "ACQUISITION_TIE_TOLERANCE",
]

DEFAULT_K = 0.99  # the paper's best k for every acquisition (002 §8, Fig. 7)
DEFAULT_QUANTUM = 10.0  # measurement quantum τ in time units (002 §8)
# acquisition values this close are ties (broken by the estimate, then `search_tie_break`)
ACQUISITION_TIE_TOLERANCE = 1e-12
# the name before 0.3.0
__getattr__ = module_aliases(__name__, {"TIE_TOLERANCE": "ACQUISITION_TIE_TOLERANCE"}, globals())
INCUMBENTS = ("estimate", "measured")


class SearchStrategy:
    """Online search over combinations with an acquisition function (002 §5); subclasses set `name`
    and `acquisition` (so a new acquisition function is a three-line subclass).

    Options: k in (0.5, 1) (σ scale, 002 §5.2), quantum τ > 0, bounds "paper" | "tight" (002 §5.1),
    incumbent a⁺ = "estimate" (the largest estimated combination speed ã_j, 002 §5.2 "the estimated
    maximum value") or "measured" (the best measured combination speed of unfinished tasks), and for
    noisy
    measurements: noise (the relative σ the strategy assumes for one measurement) and remeasure
    (measured combinations also run one quantum at a time, each observation is averaged in). Choices
    002 leaves open: lower_anchor "n+1" | "n" (where the lower bound 0 sits without a measured
    superset, `Bounds`) and search_tie_break "first" | "random" (among equal acquisition values and
    estimates: the smallest bitmask or a random one).

    After a run, `explored` counts the combinations measured for the first time (singletons are
    known) and `exploration_time` sums the time spent in those first measurements.
    """

    name = "search"
    # subclasses: a function (mean ã_j, σ_j, incumbent a⁺) -> value per combination
    acquisition: Callable[..., np.ndarray] | None = None
    OPTIONS = frozenset(
        {
            "k",
            "quantum",
            "bounds",
            "noise",
            "remeasure",
            "incumbent",
            "lower_anchor",
            "search_tie_break",
        }
    )

    def __init__(
        self,
        k: float = DEFAULT_K,
        quantum: float = DEFAULT_QUANTUM,
        bounds: str = "paper",
        noise: float = 0.0,
        remeasure: bool = False,
        incumbent: str = "estimate",
        lower_anchor: str = "n+1",
        search_tie_break: str = "first",
    ):
        try:
            self.k = check_k(float(k))
        except ValueError as error:
            raise InputError(str(error), field="k") from None
        if not np.isfinite(quantum) or quantum <= 0:
            raise InputError(
                f"the measurement quantum must be positive, got {quantum}", field="quantum"
            )
        if bounds not in RULES:
            raise InputError(
                f"unknown bounds rule {bounds!r}; choose from {', '.join(RULES)}", field="bounds"
            )
        if not np.isfinite(noise) or noise < 0:
            raise InputError(f"noise must be a non-negative relative σ, got {noise}", field="noise")
        if incumbent not in INCUMBENTS:
            raise InputError(
                f"unknown incumbent {incumbent!r}; choose from {', '.join(INCUMBENTS)}",
                field="incumbent",
            )
        if lower_anchor not in LOWER_ANCHORS:
            raise InputError(
                f"unknown lower anchor {lower_anchor!r}; choose from {', '.join(LOWER_ANCHORS)}",
                field="lower_anchor",
            )
        if search_tie_break not in SEARCH_TIE_BREAKS:
            raise InputError(
                f"unknown search tie-break {search_tie_break!r}; choose from "
                f"{', '.join(SEARCH_TIE_BREAKS)}",
                field="search_tie_break",
            )
        self.quantum, self.rule, self.noise = float(quantum), bounds, float(noise)
        self.remeasure, self.incumbent = bool(remeasure), incumbent
        self.lower_anchor, self.search_tie_break = lower_anchor, search_tie_break

    def start(self, instance: Instance, rng: np.random.Generator) -> None:
        if instance.n > MAX_SEARCH_TASKS:
            raise InputError(
                f"search strategies keep n x 2^n bounds; at most {MAX_SEARCH_TASKS} tasks, "
                f"got {instance.n}",
                field="tasks",
            )
        self.bounds = Bounds(instance.n, self.rule, self.lower_anchor)
        self._rng = rng
        self.explored, self.exploration_time = 0, 0.0
        self.unfinished = (1 << instance.n) - 1
        self.candidates = instance.combinations  # only shrinks: tasks never become unfinished again
        # observations per combination (singletons: exact)
        self.counts = np.zeros(1 << instance.n, dtype=np.int64)
        self.mean = np.zeros(1 << instance.n)
        self.sigma = np.zeros(1 << instance.n)
        self._refresh(slice(None))

    def decide(self, unfinished: int) -> Decision:
        self.unfinished = unfinished
        candidates = self.candidates = self.candidates[(self.candidates & ~unfinished) == 0]
        if candidates.size == 0:
            raise StrategyError(
                f"{self.name}: no combination of the unfinished tasks {tasks_of(unfinished)} exists"
            )
        mean, sigma = self.mean[candidates], self.sigma[candidates]
        incumbent = mean.max()
        if self.incumbent == "measured":
            measured = self.bounds.measured[candidates]
            incumbent = mean[measured].max() if measured.any() else incumbent
        assert self.acquisition is not None, "a search strategy subclass sets its acquisition"
        value = self.acquisition(mean, sigma, incumbent)
        pick = int(np.argmax(value))
        best = value >= value[pick] - ACQUISITION_TIE_TOLERANCE
        # ties: the largest estimate, then the smallest bitmask or at random
        if np.count_nonzero(best) > 1:
            best &= mean >= mean[best].max() - ACQUISITION_TIE_TOLERANCE
            pick = (
                int(np.argmax(best))
                if self.search_tie_break == "first"
                else int(self._rng.choice(np.flatnonzero(best)))
            )
        choice = int(candidates[pick])
        exploring = not self.bounds.measured[choice] or self.remeasure
        return Decision(choice, self.quantum if exploring else np.inf)

    def observe(
        self, combination: int, duration: float, measured_speeds: np.ndarray, finished: int
    ) -> None:
        bounds = self.bounds
        if not bounds.measured[combination]:
            changed = bounds.add(
                combination, np.maximum(measured_speeds, 0.0), live=self.unfinished
            )
            self.counts[combination] = 1
            self.explored += 1
            self.exploration_time += duration
            self._refresh(changed)
        elif self.remeasure and bounds.sizes[combination] > 1:
            count = self.counts[combination] + 1
            previous = bounds.values[combination]
            self.counts[combination] = count
            bounds.replace(
                combination, np.maximum(previous + (measured_speeds - previous) / count, 0.0)
            )
            self._refresh(slice(None))

    def _refresh(self, columns) -> None:
        """Recompute ã_j and σ_j of the given combinations after their bounds changed."""
        bounds = self.bounds
        upper, lower = bounds.upper[columns], bounds.lower[columns]
        estimate = interpolate(
            upper,
            bounds.upper_size[columns],
            lower,
            bounds.lower_size[columns],
            bounds.size_column[columns],
        )
        sigma = task_sigma(upper, estimate, lower, self.k)
        # a measured speed is uncertain too: relative σ / sqrt(number of observations)
        if self.noise > 0:
            counts = self.counts[columns][:, None]
            sigma = np.where(
                counts > 0, self.noise * estimate / np.sqrt(np.maximum(counts, 1)), sigma
            )
        self.mean[columns], self.sigma[columns] = combination_moments(estimate, sigma)


class UCB(SearchStrategy):
    """Upper confidence bound ã_j + σ_j (002 §5.2, formula (29))."""

    name = "ucb"
    acquisition = staticmethod(upper_confidence_bound)


class PI(SearchStrategy):
    """Probability of improvement over a⁺ (002 §5.2, formula (27))."""

    name = "pi"
    acquisition = staticmethod(probability_of_improvement)


class EI(SearchStrategy):
    """Expected improvement over a⁺ (002 §5.2, formula (28)); ei_unclipped=True keeps ã_j - a⁺ < 0
    at σ_j = 0 as (28) prints it instead of clipping it at 0."""

    name = "ei"
    acquisition = staticmethod(expected_improvement)
    OPTIONS = SearchStrategy.OPTIONS | {"ei_unclipped"}

    def __init__(self, ei_unclipped: bool = False, **options):
        super().__init__(**options)
        self.ei_unclipped = bool(ei_unclipped)
        if self.ei_unclipped:
            self.acquisition = partial(expected_improvement, clip=False)
