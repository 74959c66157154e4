"""The optimal offline strategy OPT of 002 §4.1: min sum_j x_j s.t. A x = b, x >= 0.

Two methods: the direct LP over all m columns, and column generation, which keeps a small master LP
(the LP has only n rows) and prices the other columns against its duals, reduced cost 1 - y^T a_j,
in one vectorised product over the full speed matrix. Two backends: scipy's HiGHS and PuLP (CBC).
"""
from __future__ import annotations

import importlib
import time
import warnings
from dataclasses import dataclass, field

import numpy as np

from cosched.errors import InputError
from cosched.theory.instance import Instance
from cosched.theory.schedule import Schedule

__all__ = [
    "OptResult", "InfeasibleError", "solve_opt", "METHODS", "BACKENDS", "DIRECT_MAX_COLUMNS",
    "LP_TOLERANCE", "PRICING_TOLERANCE", "TIME_TOLERANCE", "SHORTFALL_TOLERANCE",
]

METHODS = ("auto", "direct", "colgen")
BACKENDS = ("highs", "pulp")
DIRECT_MAX_COLUMNS = 1 << 10   # method="auto": direct LP up to n = 10 (faster there), colgen above
LP_TOLERANCE = 1e-10           # HiGHS primal and dual feasibility tolerance (default 1e-7 is too loose for 1e-9)
PRICING_TOLERANCE = 1e-10      # a column enters the master when its reduced cost is below -PRICING_TOLERANCE
TIME_TOLERANCE = 1e-12         # x_j below this fraction of the makespan is dropped from the schedule
SHORTFALL_TOLERANCE = 1e-7     # a task counts as unfinishable when more than this fraction of b_i is left
COLUMNS_PER_ROUND = 4          # entering columns per round, times n: the most negative reduced costs
PRUNE_ROUNDS = 8               # once the master holds this many rounds of columns, it drops those with x_j = 0
MAX_ROUNDS = 10_000


class InfeasibleError(InputError):
    """No schedule finishes every task (e.g. a restricted combination set); names the tasks left unfinished."""

    def __init__(self, message: str, tasks: list[str]):
        self.tasks = tasks
        super().__init__(message, field="combinations")


@dataclass(frozen=True, eq=False)
class OptResult:
    """Result of OPT, shaped like scipy's OptimizeResult: the makespan, x_j per combination, duals, solver info."""

    makespan: float
    times: np.ndarray
    schedule: object  # strategies.schedule.Schedule with strategy "opt"
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
        """{"makespan", "schedule": [{"combination": [task indices], "time"}], "solver", "method", "solve_seconds"}."""
        return {
            "makespan": self.makespan,
            "schedule": self.schedule.to_json()["schedule"],
            "solver": self.solver,
            "method": self.method,
            "solve_seconds": self.solve_seconds,
        }


def solve_opt(instance: Instance, method: str = "auto", backend: str = "highs") -> OptResult:
    """C_max^OPT and x* of the LP (3) of 002 §4.1; raises InfeasibleError naming tasks that cannot finish."""
    if method not in METHODS:
        raise InputError(f"unknown method {method!r}; choose from {', '.join(METHODS)}", field="method")
    if backend not in BACKENDS:
        raise InputError(f"unknown backend {backend!r}; choose from {', '.join(BACKENDS)}", field="backend")
    stuck = np.flatnonzero(instance.speeds.max(axis=1) <= 0)
    if stuck.size:
        names = [instance.tasks[i] for i in stuck]
        raise InfeasibleError(f"tasks {names} have speed 0 in every combination: they can never finish", names)
    if method == "auto":
        method = "direct" if instance.m <= DIRECT_MAX_COLUMNS else "colgen"
    solve = _solve_highs if backend == "highs" else _solve_pulp
    importlib.import_module("scipy.optimize")  # before the clock starts: solve_seconds is time in the solver
    if backend == "pulp":
        importlib.import_module("pulp")

    started = time.perf_counter()
    if method == "direct":
        x, duals = solve(instance.speeds, instance.work)
        if x is None:
            raise _infeasible(instance)
        times, rounds = x, 1
    else:
        times, duals, rounds = _column_generation(instance, solve)
    seconds = time.perf_counter() - started
    return _result(instance, times, duals, backend, method, seconds, rounds)


def _column_generation(instance: Instance, solve):
    """Master LP over a growing column set; price all columns with one product y^T A (002 §4.1, LP (3))."""
    speeds, work, n = instance.speeds, instance.work, instance.n
    active = _initial_columns(instance)
    for rounds in range(1, MAX_ROUNDS + 1):
        x, duals = solve(speeds[:, active], work)
        if x is None:
            raise _infeasible(instance)  # the master includes every column the phase-1 LP could use
        reduced = 1.0 - duals @ speeds  # reduced cost of every column, 1 - y^T a_j
        reduced[active] = np.inf
        entering = np.flatnonzero(reduced < -PRICING_TOLERANCE)
        if entering.size == 0:
            times = np.zeros(instance.m)
            times[active] = x
            return times, duals, rounds
        count = COLUMNS_PER_ROUND * n
        if entering.size > count:
            entering = entering[np.argpartition(reduced[entering], count)[:count]]
        if active.size > PRUNE_ROUNDS * count:
            active = active[x > 0]
        active = np.union1d(active, entering)
    raise RuntimeError(f"column generation did not converge in {MAX_ROUNDS} rounds")


def _initial_columns(instance: Instance) -> np.ndarray:
    """The singletons and the n + 1 fastest combinations; when a singleton is missing, also the support of a
    phase-1 solution, so that the master is feasible whenever LP (3) is."""
    n = instance.n
    singletons = instance.index(1 << np.arange(n, dtype=np.int64))
    fastest = np.argpartition(-instance.combination_speeds, min(n, instance.m - 1))[:n + 1]
    start = np.union1d(singletons[singletons >= 0], fastest)
    if (singletons >= 0).all():
        return start
    _, support = _phase_one(instance)
    return np.union1d(start, support)


def _phase_one(instance: Instance):
    """max sum(A x) s.t. A x <= b, x >= 0: per-task shortfall b - A x (all ~0 iff LP (3) is feasible), support."""
    from scipy.optimize import linprog

    result = linprog(-instance.speeds.sum(axis=0), A_ub=instance.speeds, b_ub=instance.work,
                     bounds=(0, None), method="highs")
    x = np.maximum(result.x, 0)
    return instance.work - instance.speeds @ x, np.flatnonzero(x > 0)


def _infeasible(instance: Instance) -> InfeasibleError:
    """Name the tasks left short by the phase-1 LP (the most work any schedule of these combinations does)."""
    shortfall, _ = _phase_one(instance)
    unfinished = np.flatnonzero(shortfall > SHORTFALL_TOLERANCE * instance.work)
    if unfinished.size == 0:  # the phase-1 LP finishes everything within tolerance: blame no task in particular
        return InfeasibleError("the LP is infeasible within the solver tolerance", list(instance.tasks))
    detail = ", ".join(f"{instance.tasks[i]} ({shortfall[i]:.6g} of {instance.work[i]:.6g} work left)"
                       for i in unfinished)
    return InfeasibleError(f"no schedule of these combinations does exactly the work b; cannot finish: {detail}",
                           [instance.tasks[i] for i in unfinished])


def _solve_highs(matrix: np.ndarray, work: np.ndarray):
    """(x, duals) of min 1^T x s.t. matrix x = work, x >= 0 with HiGHS, or (None, None) when infeasible."""
    from scipy.optimize import linprog

    result = linprog(np.ones(matrix.shape[1]), A_eq=matrix, b_eq=work, bounds=(0, None), method="highs",
                     options={"primal_feasibility_tolerance": LP_TOLERANCE,
                              "dual_feasibility_tolerance": LP_TOLERANCE})
    if result.status == 2:
        return None, None
    if result.status != 0:
        raise RuntimeError(f"HiGHS failed: {result.message}")
    return _polish(matrix, work, np.maximum(result.x, 0.0)), np.asarray(result.eqlin.marginals, dtype=float)


def _solve_pulp(matrix: np.ndarray, work: np.ndarray):
    """(x, duals) of the same LP with PuLP's bundled CBC solver, or (None, None) when infeasible."""
    import pulp

    with warnings.catch_warnings():  # PuLP 3 deprecates the 2.x API that pyproject's pulp>=2.7 still needs
        warnings.simplefilter("ignore", DeprecationWarning)
        problem = pulp.LpProblem("opt", pulp.LpMinimize)
        x = [pulp.LpVariable(f"x{j}", lowBound=0) for j in range(matrix.shape[1])]
        problem += pulp.lpSum(x)
        for i, row in enumerate(matrix):
            nonzero = np.flatnonzero(row)
            problem += pulp.lpSum(float(row[j]) * x[j] for j in nonzero) == float(work[i]), f"task{i}"
        status = problem.solve(pulp.PULP_CBC_CMD(msg=False))
        if status == pulp.LpStatusInfeasible:
            return None, None
        if status != pulp.LpStatusOptimal:
            raise RuntimeError(f"CBC failed: {pulp.LpStatus[status]}")
        values = np.maximum(np.array([v.varValue or 0.0 for v in x]), 0.0)
        duals = np.array([problem.constraints[f"task{i}"].pi for i in range(matrix.shape[0])], dtype=float)
    return _polish(matrix, work, values), duals


def _polish(matrix: np.ndarray, work: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Re-solve A_B x_B = b on the support B of a basic solution: removes the solver's tolerance-level error
    (HiGHS) and the few printed digits of a solution read back from a text file (CBC)."""
    support = np.flatnonzero(x > TIME_TOLERANCE * x.sum())
    exact, *_ = np.linalg.lstsq(matrix[:, support], work, rcond=None)
    residual = np.abs(matrix[:, support] @ exact - work).max()
    if (exact < 0).any() or residual > LP_TOLERANCE * np.abs(work).max():
        return x
    polished = np.zeros_like(x)
    polished[support] = exact
    return polished


def _result(instance: Instance, times: np.ndarray, duals: np.ndarray, solver: str, method: str,
            seconds: float, rounds: int) -> OptResult:
    makespan = float(times.sum())  # C_max^OPT = sum_j x_j* (002 §4.1)
    used = np.flatnonzero(times > TIME_TOLERANCE * makespan)
    schedule = Schedule(instance.combinations[used], times[used], "opt", instance.tasks)
    times.flags.writeable = False
    return OptResult(makespan, times, schedule, duals, solver, method, seconds, iterations=rounds)
