"""The combination model of 002 (n tasks, 2^n - 1 combinations, speeds A, work b) and its theory."""
from cosched.errors import InputError
from theory.instance import Instance, load_instance, save_instance, validate, monotonicity_violations

__all__ = ["Instance", "InputError", "load_instance", "save_instance", "validate", "monotonicity_violations"]
