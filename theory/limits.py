"""Size limits of the worst-case search, in a module without heavy imports (the CLI reads them at
start).

`cosched.theory.testing` (which imports hypothesis) runs the search; `cosched worst-case` checks its
arguments against these limits before loading it.
"""

from __future__ import annotations

__all__ = ["WORST_CASE_MAX_TASKS", "DEFAULT_BUDGET"]

WORST_CASE_MAX_TASKS = 10  # n (2^(n-1) - 1) speed parameters: 5,110 at n = 10
DEFAULT_BUDGET = 1000  # hypothesis examples, and as many evaluations again for the scipy refinement
