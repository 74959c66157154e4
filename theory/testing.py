"""Public hypothesis strategies for valid instances, and a worst-case search for competitive ratios,
so users can property-test their own strategies and look for the instances where they do worst.

    from hypothesis import given
    from cosched.theory.testing import instances, search_worst_case

    @given(instances(n=(2, 6), alpha=(0.3, 1.0)))
    def test_my_strategy_finishes_the_work(instance): ...

    worst = search_worst_case(lambda instance: my_makespan(instance), n=4, budget=2000)
    worst.ratio, worst.instance

The worst-case search walks a parameter cube [0, 1]^d that maps onto valid instances
(`instance_from_parameters`): hypothesis's targeted property-based testing (`hypothesis.target`)
drives the ratio up, then scipy.optimize (COBYLA, then Powell, bounded) refines the best points
found.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from hypothesis import strategies as st

from cosched.deprecation import module_aliases
from cosched.theory.generators import random_instance
from cosched.theory.instance import Instance
from cosched.theory.lattice import membership, popcount
from cosched.theory.limits import DEFAULT_BUDGET, WORST_CASE_MAX_TASKS

__all__ = [
    "instances",
    "alpha_ranges",
    "parameter_count",
    "instance_from_parameters",
    "parametrised_instances",
    "search_worst_case",
    "WorstCase",
    "SPEED_FLOOR",
    "SEARCH_WORK_FLOOR",
    "WORST_CASE_MAX_TASKS",
    "DEFAULT_BUDGET",
]

# speeds of searched instances stay in [SPEED_FLOOR, 1]: in (0, 1] and the LP well scaled
SPEED_FLOOR = 1e-3
# work of searched instances lies in [SEARCH_WORK_FLOOR, 1] (ratios do not depend on
SEARCH_WORK_FLOOR = 1e-3
# the scale of b); not `cosched.theory.opt.WORK_FLOOR`, the smallest positive float the LP scales
# work by
# tie-favouring draws: speed factors that differ from their combination size's base factor
MAX_OWN_VALUES = 4
# the refinement starts from this many of the best points the hypothesis phase found
REFINE_STARTS = 3
# the constants the search's draws sometimes take (in place of those hypothesis would collect from
# the project's code): the fractions k/m, m <= 8, such as Example 1's work ratios (n - 2)/(n - 1)
SEARCH_CONSTANTS = tuple(sorted({k / m for m in range(1, 9) for k in range(m + 1)}))

# the name before 0.3.0
__getattr__ = module_aliases(__name__, {"WORK_FLOOR": "SEARCH_WORK_FLOOR"}, globals())


def _range(value) -> tuple:
    return (value, value) if isinstance(value, (int, float)) else tuple(value)


def alpha_ranges(alpha=(0.0, 1.0)) -> st.SearchStrategy:
    """(lo, hi) sub-ranges of `alpha` for the per-task slope alpha_i of 002 §8."""
    lo, hi = _range(alpha)
    bounds = st.floats(min_value=lo, max_value=hi, allow_nan=False)
    return st.tuples(bounds, bounds).map(sorted).map(tuple)


@st.composite
def instances(draw, n=(2, 6), alpha=(0.0, 1.0), max_size=None, work=(100.0, 200.0)):
    """Valid monotone instances from the 002 §8 generator: n tasks (an int or a (lo, hi) range),
    per-task alpha drawn from a sub-range of `alpha`, optionally restricted to combinations of at
    most `max_size` tasks (an int, a (lo, hi) range, or None for all 2^n - 1 combinations)."""
    n_lo, n_hi = _range(n)
    tasks = draw(st.integers(min_value=n_lo, max_value=n_hi))
    size = None
    if max_size is not None:
        size_lo, size_hi = _range(max_size)
        size = draw(st.integers(min_value=min(size_lo, tasks), max_value=min(size_hi, tasks)))
    seed = draw(st.integers(min_value=0, max_value=2**32 - 1))
    return random_instance(
        tasks, alpha=draw(alpha_ranges(alpha)), seed=seed, work=work, max_size=size
    )


def parameter_count(n: int, alpha=None) -> int:
    """Length d of the parameter vector of `instance_from_parameters`: one factor per (task,
    combination of at least two tasks holding it), one work value per task, and one α_i per task
    when an α range is given."""
    return n * ((1 << (n - 1)) - 1) + n + (n if alpha is not None else 0)


def instance_from_parameters(parameters, n: int, alpha=None) -> Instance:
    """The valid instance (002 §3: constraint (1), speeds in (0, 1], singletons 1, b > 0) at a point
    of [0, 1]^d.

    Level by level, a_{i,S} = max(SPEED_FLOOR, f_{i,S} · min_{k in S, k != i} a_{i,S-{k}}): each
    speed is at most the speeds one task smaller, so (1) holds by construction. Without `alpha` the
    factor f is the parameter itself, so every valid instance with speeds >= SPEED_FLOOR is
    reachable; with alpha = (lo, hi) it is f = α_i + (1 - α_i) θ with α_i in [lo, hi], the family of
    the 002 §8 generator. Work b_i lies in [SEARCH_WORK_FLOOR, 1]. Parameters outside [0, 1] are
    clipped.
    """
    theta = np.clip(np.asarray(parameters, dtype=float), 0.0, 1.0)
    if theta.shape != (parameter_count(n, alpha),):
        raise ValueError(
            f"{parameter_count(n, alpha)} parameters for n = {n}, got shape {theta.shape}"
        )
    lattice = np.arange(1 << n, dtype=np.int64)
    sizes = popcount(lattice)
    member = membership(lattice, n)  # (n, 2^n)
    free = member & (sizes >= 2)[None, :]
    count = int(free.sum())
    factors = np.ones((1 << n, n))
    factors[free.T] = theta[:count]  # ordered by combination, then task
    work = SEARCH_WORK_FLOOR + (1.0 - SEARCH_WORK_FLOOR) * theta[count : count + n]
    if alpha is not None:
        lo, hi = (float(a) for a in alpha)
        task_alpha = lo + (hi - lo) * theta[count + n :]
        factors = task_alpha + (1.0 - task_alpha) * factors  # 002 §8: U(α_i, 1) at θ uniform
    speed = np.where(member.T, 1.0, np.inf)  # (2^n, n); +inf outside S_j so the min ignores it
    for size in range(2, n + 1):
        level = lattice[sizes == size]
        cap = np.full((level.size, n), np.inf)
        for k in range(n):
            has_k = level[(level >> k) & 1 == 1]
            rows = np.searchsorted(level, has_k)
            parent = speed[has_k ^ (1 << k)]
            parent[:, k] = np.inf  # a_{k, S - {k}} is not a speed of task k
            cap[rows] = np.minimum(cap[rows], parent)
        inside = member.T[level]
        # constraint (1)
        speed[level] = np.where(inside, np.maximum(cap * factors[level], SPEED_FLOOR), np.inf)
    speeds = np.where(member, speed.T, 0.0)[:, 1:]
    return Instance(work, lattice[1:], speeds)


@st.composite
def parametrised_instances(draw, n: int, alpha=None) -> np.ndarray:
    """Points of [0, 1]^d for `instance_from_parameters` (a search keeps the point it found, not
    just the instance).

    Half of the draws are free points of the cube. The other half favour ties, which worst cases
    exploit (equal speeds leave FCS a choice, equal works finish together): every combination size
    gets a base factor (often exactly 0 or 1) that all its factors share except at most
    MAX_OWN_VALUES, and most tasks share one base work.
    """
    unit = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
    sizes = popcount(np.arange(1 << n, dtype=np.int64))
    free = membership(np.arange(1 << n, dtype=np.int64), n) & (sizes >= 2)[None, :]
    # the size of the combination of every factor, in order
    factor_sizes = np.repeat(sizes, free.sum(axis=0))
    if draw(st.booleans()):
        factors = draw(st.lists(unit, min_size=factor_sizes.size, max_size=factor_sizes.size))
    else:
        base = {
            size: draw(st.one_of(st.just(1.0), st.just(1.0), st.just(0.0), unit))
            for size in range(2, n + 1)
        }
        factors = [base[size] for size in factor_sizes]
        own = draw(
            st.dictionaries(st.integers(0, factor_sizes.size - 1), unit, max_size=MAX_OWN_VALUES)
        )
        for position, value in own.items():
            factors[position] = value
    work_base = draw(unit)
    work = [draw(unit) if draw(st.booleans()) else work_base for _ in range(n)]
    alphas = [draw(unit) for _ in range(n if alpha is not None else 0)]
    return np.asarray(factors + work + alphas)


@dataclass(frozen=True)
class WorstCase:
    """The worst instance a search found and how the search got there.

    Attributes:
        instance: the instance with the largest ratio found.
        ratio, makespan, opt: makespan / OPT on it, and both makespans.
        parameters: its point in [0, 1]^d (`instance_from_parameters`).
        history: the ratio of every evaluation, in order (the first `searched` by hypothesis, then
            scipy's).
        searched: evaluations of the hypothesis phase.
        seconds: wall time of the whole search.
    """

    instance: Instance
    ratio: float
    makespan: float
    opt: float
    parameters: np.ndarray
    history: np.ndarray
    searched: int
    seconds: float

    @property
    def best_so_far(self) -> np.ndarray:
        """The largest ratio found after each evaluation (the convergence curve)."""
        return np.maximum.accumulate(self.history)


def search_worst_case(
    makespan: Callable[[Instance], float],
    n: int,
    *,
    alpha=None,
    budget: int = DEFAULT_BUDGET,
    refine: int | None = None,
    seed: int = 0,
    progress: Callable[[float], None] | None = None,
) -> WorstCase:
    """Search valid instances of n tasks for the largest ratio makespan(instance) / OPT (002 §4.3,
    (4)).

    makespan: the strategy under test, instance -> its makespan (deterministic for a given
    instance).
    budget: hypothesis examples (targeted property-based testing: `hypothesis.target` on the ratio);
    refine: evaluations of the scipy.optimize refinement, bounded to [0, 1]^d, shared by the
    REFINE_STARTS best distinct points of the hypothesis phase: COBYLA, then Powell (default:
    `budget`; 0 skips it).
    seed: the same seed repeats the search, whatever else the code or the caller imports (the
    search draws SEARCH_CONSTANTS, not the constants hypothesis would collect from the project's
    modules, see `_without_project_constants`). progress(ratio) is called after every evaluation.
    """
    from hypothesis import HealthCheck, Phase, given, settings, target
    from hypothesis import seed as seeded

    from cosched.theory.opt import solve_opt

    if not 2 <= n <= WORST_CASE_MAX_TASKS:
        raise ValueError(f"n must be in 2..{WORST_CASE_MAX_TASKS}, got {n}")
    if budget < 1:
        raise ValueError(f"the budget must be at least one example, got {budget}")
    refine = budget if refine is None else int(refine)
    started = time.perf_counter()
    history: list[float] = []
    # the point of every evaluation (the refinement starts from the best ones)
    points: list[np.ndarray] = []
    best: dict = {"ratio": -np.inf}

    def evaluate(theta: np.ndarray) -> float:
        instance = instance_from_parameters(theta, n, alpha)
        value, opt = float(makespan(instance)), solve_opt(instance).makespan
        ratio = value / opt  # 002 §4.3, (4)
        history.append(ratio)
        points.append(theta)
        if ratio > best["ratio"]:
            best.update(
                ratio=ratio,
                makespan=value,
                opt=opt,
                instance=instance,
                parameters=np.clip(theta, 0, 1),
            )
        if progress is not None:
            progress(ratio)
        return ratio

    @seeded(seed)
    @settings(
        max_examples=budget,
        phases=(Phase.generate, Phase.target),
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(parametrised_instances(n, alpha))
    def explore(theta):
        target(evaluate(theta), label="ratio")

    with _without_project_constants():
        explore()
    searched = len(history)
    for start in _refinement_starts(points, history, REFINE_STARTS):
        _refine(lambda theta: -evaluate(theta), start, refine // REFINE_STARTS)
    return WorstCase(
        best["instance"],
        best["ratio"],
        best["makespan"],
        best["opt"],
        best["parameters"],
        np.asarray(history),
        searched,
        time.perf_counter() - started,
    )


@contextlib.contextmanager
def _without_project_constants():
    """Hypothesis (6.131 and later) draws some values from the constants of every loaded module of
    the project under test, so any edit anywhere in the code, or one more import, would change what
    a seeded search finds. Within this context it draws from its own constants and
    SEARCH_CONSTANTS instead, whatever the code holds."""
    try:
        from hypothesis.internal.conjecture import providers
        from sortedcontainers import SortedSet
    except ImportError:  # a hypothesis without that machinery draws no project constants
        yield
        return
    collect = getattr(providers, "_get_local_constants", None)
    if collect is None or not hasattr(providers, "CONSTANTS_CACHE"):
        yield
        return
    fixed = providers.Constants(floats=SortedSet(SEARCH_CONSTANTS))
    providers._get_local_constants = lambda: fixed
    providers.CONSTANTS_CACHE.cache.clear()
    try:
        yield
    finally:
        providers._get_local_constants = collect
        providers.CONSTANTS_CACHE.cache.clear()


def _refinement_starts(points: list, history: list, count: int) -> list:
    """The `count` distinct points with the largest ratios found so far (hypothesis repeats some
    examples)."""
    starts: list[np.ndarray] = []
    for index in np.argsort(history, kind="stable")[::-1]:
        point = np.clip(points[index], 0.0, 1.0)
        if not any(np.array_equal(point, chosen) for chosen in starts):
            starts.append(point)
        if len(starts) == count:
            break
    return starts


class _BudgetSpent(Exception):
    """Raised inside an optimiser's objective to stop it at its evaluation budget (some overshoot
    their own)."""


def _refine(objective: Callable, start: np.ndarray, evaluations: int) -> None:
    """Minimise `objective` from `start` in [0, 1]^d with at most `evaluations` calls: COBYLA for
    half, whose linear models follow directions that move many parameters at once (equal works,
    equal speeds), then Powell along single parameters from the best point COBYLA saw."""
    from scipy.optimize import minimize

    if evaluations < 1:  # refine=0 skips the refinement (scipy refuses a budget of 0)
        return
    bounds = [(0.0, 1.0)] * start.size
    state = {"calls": 0, "limit": evaluations // 2, "value": np.inf, "point": start}

    def limited(theta):
        if state["calls"] >= state["limit"]:
            raise _BudgetSpent
        state["calls"] += 1
        value = objective(theta)
        if value < state["value"]:
            state.update(value=value, point=np.clip(theta, 0.0, 1.0))
        return value

    # stopped by `limited`
    for method, options in (
        ("COBYLA", {"maxiter": max(evaluations // 2, start.size + 2)}),
        ("Powell", {"maxfev": evaluations, "xtol": 1e-6}),
    ):
        with contextlib.suppress(_BudgetSpent):
            minimize(limited, state["point"], method=method, bounds=bounds, options=options)
        state["limit"] = evaluations
