"""Competitive ratio of an online strategy against OPT and the FCS bound of 002 §4.3."""

from __future__ import annotations

from cosched.theory.instance import Instance

__all__ = ["competitive_ratio", "fcs_bound", "example1_ratio"]


def competitive_ratio(makespan: float, opt_makespan: float) -> float:
    """rho = C_max / C_max^OPT (002 §4.3, (4))."""
    return float(makespan) / float(opt_makespan)


def fcs_bound(instance: Instance) -> float:
    """2 - 1/a* with a* the largest combination speed (002 §4.3, proof of Theorem 1, (13)); 1 when
    a* <= 1."""
    fastest = float(instance.combination_speeds.max())
    return 2.0 - 1.0 / fastest if fastest > 1.0 else 1.0


def example1_ratio(n: int) -> float:
    """FCS / OPT on the worst case of 002 Example 1: (2n - 3)/(n - 1) (002 (14), (22))."""
    return (2 * n - 3) / (n - 1)
