"""The optimal offline strategy OPT of 002 §4.1: min sum_j x_j s.t. A x = b, x >= 0.

Two methods: the direct LP over all m columns, and column generation, which keeps a small master LP
(the LP has only n rows) and prices the other columns against its duals, reduced cost 1 - y^T a_j,
in one vectorised product over the full speed matrix. Two backends: scipy's HiGHS and PuLP (CBC).

The solvers never see the user's units: row i of A x = b is divided by the power of two nearest b_i,
and each x_j by the power of two nearest the longest it can run (`_Scaling`), so the LP's numbers
are of order 1 whatever the units of work and however far apart the tasks' work lies, solver
tolerances are relative to each task's work, and the answer is scaled back exactly. Every returned
schedule is checked against A x = b (`VERIFY_TOLERANCE`) and its makespan against the dual bound
(`OPTIMALITY_TOLERANCE`); an answer that fails either raises `SolverError` instead of being
returned.
"""

from __future__ import annotations

import importlib
import time
import warnings
from dataclasses import dataclass, field

import numpy as np

from cosched.errors import InputError
from cosched.theory.instance import Instance, work_problem
from cosched.theory.schedule import Schedule

__all__ = [
    "OptResult",
    "InfeasibleError",
    "SolverError",
    "solve_opt",
    "METHODS",
    "BACKENDS",
    "DIRECT_MAX_COLUMNS",
    "LP_TOLERANCE",
    "PRICING_TOLERANCE",
    "TIME_TOLERANCE",
    "SHORTFALL_TOLERANCE",
    "VERIFY_TOLERANCE",
    "OPTIMALITY_TOLERANCE",
]

METHODS = ("auto", "direct", "colgen")
BACKENDS = ("highs", "pulp")
DIRECT_MAX_COLUMNS = 1 << 10  # method="auto": direct LP up to n = 10 (faster there), colgen above
# HiGHS' and CBC's primal and dual feasibility tolerance on the scaled LP (b'' ~ 1)
LP_TOLERANCE = 1e-10
# a column enters the master when its reduced cost is below -PRICING_TOLERANCE
PRICING_TOLERANCE = 1e-10
# x_j is noise when it does at most this fraction of every member task's work
TIME_TOLERANCE = 1e-12
# a task counts as unfinishable when more than this fraction of b_i is left
SHORTFALL_TOLERANCE = 1e-7
# a returned schedule does every task's work b_i within this fraction of b_i
VERIFY_TOLERANCE = 1e-9
# a returned makespan exceeds the dual lower bound by at most this fraction (seen:
OPTIMALITY_TOLERANCE = 1e-7
# 1e-15 on generated instances, 4e-9 with tasks' work 1e20 and more
# apart)
# entering columns per round, times n: the most negative reduced costs
COLUMNS_PER_ROUND = 4
# once the master holds this many rounds of columns, it drops those with x_j = 0
PRUNE_ROUNDS = 8
# basis re-solves in `_polish` (each drops columns the re-solve makes negative)
POLISH_ROUNDS = 3
MAX_ROUNDS = 10_000
# tasks' best times b_i / max_j a_ij span at most 2^1000: costs c' stay normal floats
MAX_EXPONENT = 1000
# column scales c'_j <= 2^60: HiGHS treats costs above 1e20 as infinite
MAX_COST_EXPONENT = 60
# b_i / T below this only sets a column scale: no exact value needed
WORK_FLOOR = float(np.finfo(np.float64).tiny)


class InfeasibleError(InputError):
    """No schedule finishes every task (e.g. a restricted combination set); names the tasks left
    unfinished."""

    def __init__(self, message: str, tasks: list[str]):
        self.tasks = tasks
        super().__init__(message, field="combinations")


class SolverError(InputError):
    """The LP solver failed, or its answer failed the check against A x = b or the dual bound: no
    answer is returned rather than a wrong one. An InputError (the CLI prints one line, exit 2): the
    instance is beyond what the solver resolves in float64, or the backend failed on it."""

    def __init__(self, message: str, field: str | None = "work"):
        super().__init__(message, field=field)


@dataclass(frozen=True, eq=False)
class OptResult:
    """Result of OPT, shaped like scipy's OptimizeResult: the makespan, x_j per combination, duals,
    solver info."""

    makespan: float
    times: np.ndarray
    schedule: Schedule  # with strategy "opt"
    duals: np.ndarray
    solver: str
    method: str
    solve_seconds: float
    status: int = 0
    message: str = "optimal"
    iterations: int = 1
    info: dict = field(default_factory=dict)

    @property
    def success(self) -> bool:
        return self.status == 0

    def to_json(self) -> dict:
        """{"makespan", "schedule": [{"combination": [task indices], "time"}], "solver", "method",
        "solve_seconds"}."""
        return {
            "makespan": self.makespan,
            "schedule": self.schedule.to_json()["schedule"],
            "solver": self.solver,
            "method": self.method,
            "solve_seconds": self.solve_seconds,
        }


@dataclass(frozen=True, eq=False)
class _Scaling:
    """LP (3) of 002 §4.1 in solver units, every factor a power of two (exact both ways):

        min sum_j c'_j z_j  s.t.  A'' z = b'',  z >= 0,  with  x_j = 2^K_j z_j,  A''_ij = a_ij
        2^(K_j - e_i), b''_i = b_i 2^-e_i in [0.5, 1) (b_i = m_i 2^e_i),  c'_j = 2^(K_j - E)

    where 2^K_j ~ u_j = min_i b_i / a_ij bounds x_j (no column runs past finishing a member) and T =
    2^E is the longest time a task needs at its best speed. So b'' in [1/2, 1), z in [0, 1], A'' <=
    2 with column maxima above 1/4, the objective is C_max / T, and the user duals are y_i = 2^(E -
    e_i) pi_i (y^T a_j = pi^T A''_j / c'_j)."""

    work_exponents: np.ndarray
    work: np.ndarray
    time_exponent: int

    @classmethod
    def of(cls, instance: Instance, row_max: np.ndarray) -> _Scaling:
        _, work_exponents = np.frexp(instance.work)
        with np.errstate(over="ignore", under="ignore"):
            best_time = instance.work / row_max  # b_i / max_j a_ij: task i alone at its best speed
        low, high = int(np.argmin(best_time)), int(np.argmax(best_time))
        _, low_exponent = np.frexp(best_time[low])
        _, time_exponent = np.frexp(best_time[high])
        if (
            not (np.isfinite(best_time[high]) and best_time[low] > 0)
            or time_exponent - low_exponent > MAX_EXPONENT
        ):
            raise SolverError(
                f"tasks {instance.tasks[low]} and {instance.tasks[high]} need "
                f"{best_time[low]:.3g} and {best_time[high]:.3g} time at their best speeds: beyond "
                f"the 2^{MAX_EXPONENT} range one LP can be scaled to in float64; express work in "
                "other units or split the instance"
            )
        return cls(
            work_exponents.astype(np.int64),
            np.ldexp(instance.work, -work_exponents),
            int(time_exponent),
        )

    def lp(self, speeds: np.ndarray):
        """(A'', c', K) for these columns of A. Any K is exact (a change of variables); K_j ~ log2
        u_j conditions."""
        # 002 §4.1, LP (3) in the variables z = x / 2^K: min sum_j c'_j z_j s.t. A'' z = b'', z >= 0
        work_over_time = np.maximum(
            np.ldexp(self.work, self.work_exponents - self.time_exponent), WORK_FLOOR
        )
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            # u_j / T, inf for zeros
            longest = (work_over_time[:, None] / speeds).min(axis=0, initial=np.inf)
        # a slightly negative speed (within validate's tolerance) or NaN: redo exactly
        unsure = ~(longest > 0)
        if unsure.any():
            longest[unsure] = self.longest(speeds[:, unsure])
        # 2^(K_j - E) >= u_j / T; frexp(inf) = (inf, 0): cost 1 for zeros
        _, exponents = np.frexp(longest)
        exponents = self.time_exponent + np.clip(
            exponents, -MAX_EXPONENT, MAX_COST_EXPONENT
        ).astype(np.int64)
        matrix = np.ldexp(speeds, exponents[None, :] - self.work_exponents[:, None])
        return matrix, np.ldexp(1.0, exponents - self.time_exponent), exponents

    def duals(self, pi: np.ndarray) -> np.ndarray:
        """y = 2^(E - e) pi, the duals of LP (3) in the user's units (y^T A <= 1, y^T b = C_max; 002
        §4.1)."""
        return np.ldexp(pi, self.time_exponent - self.work_exponents)

    def longest(self, speeds: np.ndarray) -> np.ndarray:
        """u_j / T = min_i b_i / (a_ij T) over the tasks with a_ij > 0, for these columns (inf for
        zeros)."""
        with np.errstate(divide="ignore", over="ignore", under="ignore", invalid="ignore"):
            ratio = np.ldexp(
                self.work[:, None] / speeds, (self.work_exponents - self.time_exponent)[:, None]
            )
            return np.where(speeds > 0, ratio, np.inf).min(axis=0, initial=np.inf)


def solve_opt(instance: Instance, method: str = "auto", backend: str = "highs") -> OptResult:
    """C_max^OPT and x* of the LP (3) of 002 §4.1; raises InfeasibleError naming tasks that cannot
    finish and SolverError when the solver's answer fails the check against A x = b or the dual
    bound."""
    if method not in METHODS:
        raise InputError(
            f"unknown method {method!r}; choose from {', '.join(METHODS)}", field="method"
        )
    if backend not in BACKENDS:
        raise InputError(
            f"unknown backend {backend!r}; choose from {', '.join(BACKENDS)}", field="backend"
        )
    problem = work_problem(instance.work, instance.tasks)
    if problem:
        raise InputError(problem, field="work")
    row_max = instance.speeds.max(axis=1)
    if not np.isfinite(row_max).all():
        raise InputError("speeds must be finite", field="speeds")
    stuck = np.flatnonzero(row_max <= 0)
    if stuck.size:
        names = [instance.tasks[i] for i in stuck]
        raise InfeasibleError(
            f"tasks {names} have speed 0 in every combination: they can never finish", names
        )
    if method == "auto":
        method = "direct" if instance.m <= DIRECT_MAX_COLUMNS else "colgen"
    solve = _solve_highs if backend == "highs" else _solve_pulp
    # before the clock starts: solve_seconds is time in the solver
    importlib.import_module("scipy.optimize")
    if backend == "pulp":
        importlib.import_module("pulp")

    started = time.perf_counter()
    scaling = _Scaling.of(instance, row_max)
    if method == "direct":
        columns = np.arange(instance.m)
        matrix, costs, exponents = scaling.lp(instance.speeds)
        z, pi = solve(matrix, costs, scaling.work)
        if z is None:
            raise _infeasible(instance, scaling)
        z, pi = _polish(matrix, costs, scaling.work, z, pi)
        # reduced cost 1 - y^T a_j (002 §4.1, LP (3))
        reduced = 1.0 - scaling.duals(pi) @ instance.speeds
        rounds = 1
    else:
        columns, z, exponents, pi, reduced, rounds = _column_generation(instance, scaling, solve)
    seconds = time.perf_counter() - started
    return _result(
        instance, scaling, columns, z, exponents, pi, reduced, backend, method, seconds, rounds
    )


def _column_generation(instance: Instance, scaling: _Scaling, solve):
    """Master LP over a growing column set; price all columns with one product y^T A (002 §4.1, LP
    (3))."""
    speeds, n = instance.speeds, instance.n
    active = _initial_columns(instance, scaling)
    for rounds in range(1, MAX_ROUNDS + 1):
        matrix, costs, exponents = scaling.lp(speeds[:, active])
        z, pi = solve(matrix, costs, scaling.work)
        if z is None:
            # the master includes every column the phase-1 LP could use
            raise _infeasible(instance, scaling)
        z, pi = _polish(matrix, costs, scaling.work, z, pi)
        # reduced cost of every column, 1 - y^T a_j (002 §4.1)
        reduced = 1.0 - scaling.duals(pi) @ speeds
        kept = reduced[active]
        reduced[active] = np.inf  # only columns outside the master may enter
        entering = np.flatnonzero(reduced < -PRICING_TOLERANCE)
        count = COLUMNS_PER_ROUND * n
        if entering.size > count:
            entering = entering[np.argpartition(reduced[entering], count)[:count]]
        reduced[active] = kept  # the certificate in `_result` reads every column's reduced cost
        if entering.size == 0:
            return active, z, exponents, pi, reduced, rounds
        if active.size > PRUNE_ROUNDS * count:
            active = active[z > 0]
        active = np.union1d(active, entering)
    raise SolverError(f"column generation did not converge in {MAX_ROUNDS} rounds", field=None)


def _initial_columns(instance: Instance, scaling: _Scaling) -> np.ndarray:
    """The singletons and the n + 1 fastest combinations; when a singleton is missing, also the
    support of a phase-1 solution, so that the master is feasible whenever LP (3) is."""
    n = instance.n
    singletons = instance.index(1 << np.arange(n, dtype=np.int64))
    fastest = np.argpartition(-instance.combination_speeds, min(n, instance.m - 1))[: n + 1]
    start = np.union1d(singletons[singletons >= 0], fastest)
    if (singletons >= 0).all():
        return start
    _, support = _phase_one(scaling.lp(instance.speeds)[0], scaling.work)
    return np.union1d(start, support)


def _phase_one(matrix: np.ndarray, work: np.ndarray):
    """max sum(A'' z) s.t. A'' z <= b'', z >= 0 (scaled LP (3)): per-task shortfall b'' - A'' z (all
    ~0 iff LP (3) is feasible) and the support of z."""
    from scipy.optimize import linprog

    result = linprog(-matrix.sum(axis=0), A_ub=matrix, b_ub=work, bounds=(0, None), method="highs")
    if result.x is None:
        raise SolverError(
            f"HiGHS failed on the phase-1 LP: {_one_line(result.message)}", field=None
        )
    z = np.maximum(result.x, 0)
    return work - matrix @ z, np.flatnonzero(z > 0)


def _infeasible(instance: Instance, scaling: _Scaling) -> InfeasibleError:
    """Name the tasks left short by the phase-1 LP (the most work any schedule of these combinations
    does)."""
    shortfall, _ = _phase_one(scaling.lp(instance.speeds)[0], scaling.work)
    left = shortfall / scaling.work  # fraction of b_i left undone
    unfinished = np.flatnonzero(left > SHORTFALL_TOLERANCE)
    # the phase-1 LP finishes everything within tolerance: blame no task in particular
    if unfinished.size == 0:
        return InfeasibleError(
            "the LP is infeasible within the solver tolerance", list(instance.tasks)
        )
    detail = ", ".join(
        f"{instance.tasks[i]} ({left[i] * instance.work[i]:.6g} of {instance.work[i]:.6g} "
        "work left)"
        for i in unfinished
    )
    return InfeasibleError(
        f"no schedule of these combinations does exactly the work b; cannot finish: {detail}",
        [instance.tasks[i] for i in unfinished],
    )


def _one_line(message) -> str:
    return " ".join(str(message).split())


def _solve_highs(matrix: np.ndarray, costs: np.ndarray, work: np.ndarray):
    """(z, duals) of min c'^T z s.t. matrix z = work, z >= 0 with HiGHS, or (None, None) when
    infeasible."""
    from scipy.optimize import linprog

    result = linprog(
        costs,
        A_eq=matrix,
        b_eq=work,
        bounds=(0, None),
        method="highs",
        options={
            "primal_feasibility_tolerance": LP_TOLERANCE,
            "dual_feasibility_tolerance": LP_TOLERANCE,
        },
    )
    if result.status in (2, 4) and "infeasible" in str(result.message).lower():
        return None, None
    if result.status != 0 or result.x is None:
        raise SolverError(f"HiGHS failed: {_one_line(result.message)}", field=None)
    return np.maximum(result.x, 0.0), np.asarray(result.eqlin.marginals, dtype=float)


def _solve_pulp(matrix: np.ndarray, costs: np.ndarray, work: np.ndarray):
    """(z, duals) of the same LP with PuLP's bundled CBC solver, or (None, None) when infeasible."""
    import pulp

    # PuLP 3 deprecates the 2.x API that pyproject's pulp>=2.7 still needs
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        problem = pulp.LpProblem("opt", pulp.LpMinimize)
        x = [pulp.LpVariable(f"x{j}", lowBound=0) for j in range(matrix.shape[1])]
        problem += pulp.lpSum(float(c) * v for c, v in zip(costs, x))
        for i, row in enumerate(matrix):
            nonzero = np.flatnonzero(row)
            problem += (
                pulp.lpSum(float(row[j]) * x[j] for j in nonzero) == float(work[i]),
                f"task{i}",
            )
        # the LP is already scaled to numbers ~1 (`_Scaling`): CBC's own scaling on top, and its
        # default
        # tolerances of 1e-7, stop short of the optimum when the columns' costs c'_j span many
        # orders of magnitude
        options = [
            "scaling off",
            f"primalTolerance {LP_TOLERANCE:g}",
            f"dualTolerance {LP_TOLERANCE:g}",
        ]
        status = problem.solve(pulp.PULP_CBC_CMD(msg=False, options=options))
        if status == pulp.LpStatusInfeasible:
            return None, None
        if status != pulp.LpStatusOptimal:
            raise SolverError(f"CBC failed: {pulp.LpStatus[status]}", field=None)
        values = np.maximum(np.array([v.varValue or 0.0 for v in x]), 0.0)
        duals = np.array(
            [problem.constraints[f"task{i}"].pi or 0.0 for i in range(matrix.shape[0])], dtype=float
        )
    return values, duals


def _polish(matrix: np.ndarray, costs: np.ndarray, work: np.ndarray, z: np.ndarray, pi: np.ndarray):
    """Re-solve A_B z_B = b on the support B of a basic solution and project the duals onto pi^T A_B
    = c'_B: removes the solver's tolerance-level error (HiGHS) and the 8 to 13 printed digits of a
    solution and duals read back from text files (CBC). Keeps the solver's answer when the re-solve
    is not a better vertex."""
    # A'' z = b'' with b'' ~ 1
    support = np.flatnonzero(z * matrix.max(axis=0, initial=0.0) > TIME_TOLERANCE)
    cleaned = np.zeros_like(z)
    # columns doing under TIME_TOLERANCE of every task's work are solver noise
    cleaned[support] = z[support]
    for _ in range(POLISH_ROUNDS):
        if support.size == 0:
            break
        basis = matrix[:, support]
        exact, *_ = np.linalg.lstsq(basis, work, rcond=None)
        # a degenerate column the re-solve pushes below 0: drop it and re-solve
        if (exact < 0).any():
            support = support[exact > 0]
            continue
        if np.abs(basis @ exact - work).max() > LP_TOLERANCE:
            break
        polished = np.zeros_like(z)
        polished[support] = exact
        # 002 §4.1 duals: the closest pi with pi^T a_j = c'_j on the basis (complementary slackness)
        correction, *_ = np.linalg.lstsq(basis.T, costs[support] - pi @ basis, rcond=None)
        return polished, pi + correction
    return cleaned, pi


def _result(
    instance: Instance,
    scaling: _Scaling,
    columns: np.ndarray,
    z: np.ndarray,
    exponents: np.ndarray,
    pi: np.ndarray,
    reduced: np.ndarray,
    solver: str,
    method: str,
    seconds: float,
    rounds: int,
) -> OptResult:
    """Back to the user's units (z_k belongs to column columns[k]), then the checks: A x = b within
    VERIFY_TOLERANCE, optimal by the dual bound."""
    times = np.zeros(instance.m)
    positive = z > 0
    with np.errstate(over="ignore"):
        # x_j = 2^K_j z_j, exact
        times[columns[positive]] = np.ldexp(z[positive], exponents[positive])
        makespan = float(times.sum())  # C_max^OPT = sum_j x_j* (002 §4.1)
    if not np.isfinite(makespan):
        raise SolverError(
            f"the optimal makespan overflows float64 (work up to {instance.work.max():.6g}); "
            "express work in larger units"
        )
    used = np.flatnonzero(times > 0)
    schedule = Schedule(instance.combinations[used], times[used], "opt", instance.tasks)
    _verify(instance, schedule, solver)
    bound = _dual_bound(instance, scaling, pi, reduced)
    ratio = float(np.ldexp(makespan, -scaling.time_exponent)) / bound if bound > 0 else np.inf
    if not ratio <= 1.0 + OPTIMALITY_TOLERANCE:
        raise SolverError(
            f"the {solver} answer is not certified optimal: makespan {makespan:.10g} exceeds the "
            f"dual bound by a factor {ratio:.6g} (> 1 + OPTIMALITY_TOLERANCE = "
            f"{1 + OPTIMALITY_TOLERANCE})"
        )
    times.flags.writeable = False
    duals = scaling.duals(pi)
    return OptResult(
        makespan,
        times,
        schedule,
        duals,
        solver,
        method,
        seconds,
        iterations=rounds,
        info={
            "dual_bound": float(np.ldexp(bound, scaling.time_exponent)),
            "certified_ratio": ratio,
        },
    )


def _dual_bound(
    instance: Instance, scaling: _Scaling, pi: np.ndarray, reduced: np.ndarray
) -> float:
    """A lower bound on C_max^OPT / T from the duals (weak duality for LP (3) of 002 §4.1), robust
    to their tolerance-level infeasibility d_j = y^T a_j - 1 > 0: any feasible x has x_j <= u_j =
    min_i b_i / a_ij, so OPT >= y^T b - sum_j d_j u_j; also OPT >= y^T b / (1 + max_j d_j)."""
    dual = float(pi @ scaling.work)  # y^T b / T: weak duality of LP (3), 002 §4.1
    short = np.flatnonzero(reduced < 0)
    if short.size == 0:
        return dual
    excess = -reduced[short]
    with np.errstate(over="ignore", invalid="ignore"):
        slack = float(excess @ scaling.longest(instance.speeds[:, short]))
    scaled = dual / (1.0 + float(excess.max()))
    return max(dual - slack, scaled) if np.isfinite(slack) else scaled


def _verify(instance: Instance, schedule: Schedule, solver: str) -> None:
    """The schedule does every task's work: |sum_j a_ij x_j - b_i| <= VERIFY_TOLERANCE b_i (002 §3,
    A x = b)."""
    with np.errstate(over="ignore", invalid="ignore"):
        done = schedule.work_done(instance)
        error = np.abs(done - instance.work) / instance.work
    if not (error <= VERIFY_TOLERANCE).all():
        worst = int(np.argmax(np.where(np.isnan(error), np.inf, error)))
        raise SolverError(
            f"the {solver} answer fails the check A x = b (002 §4.1): task "
            f"{instance.tasks[worst]} gets "
            f"{done[worst]:.10g} of its work {instance.work[worst]:.10g} (relative error "
            f"{error[worst]:.2g} > VERIFY_TOLERANCE = {VERIFY_TOLERANCE:g})"
        )
