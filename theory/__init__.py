"""The combination model of 002 (n tasks, 2^n - 1 combinations, speeds A, work b) and its theory."""

from cosched._areas import require_package_name

require_package_name(__name__, "theory")  # never a second copy under the folder name

from cosched.errors import InputError
from cosched.theory.bounds import competitive_ratio, fcs_bound
from cosched.theory.generators import random_instance, worst_case_instance
from cosched.theory.instance import (
    Instance,
    load_instance,
    monotonicity_violations,
    save_instance,
    validate,
)
from cosched.theory.opt import InfeasibleError, OptResult, SolverError, solve_opt

__all__ = [
    "Instance",
    "InputError",
    "load_instance",
    "save_instance",
    "validate",
    "monotonicity_violations",
    "random_instance",
    "worst_case_instance",
    "solve_opt",
    "OptResult",
    "InfeasibleError",
    "SolverError",
    "fcs_bound",
    "competitive_ratio",
]
