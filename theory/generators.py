"""Instance generators: the random procedure of 002 §8 and the FCS worst case of 002 Example 1."""

from __future__ import annotations

from math import comb

import numpy as np

from cosched.errors import InputError
from cosched.theory.instance import Instance
from cosched.theory.lattice import (
    MAX_TASKS,
    all_combinations,
    combinations_of_size,
    combinations_up_to,
    membership,
    popcount,
)

__all__ = ["random_instance", "worst_case_instance", "MAX_COLUMNS"]

# refuse to generate more combinations than this (n x m float64 would exceed ~3 GB)
MAX_COLUMNS = 1 << 24


def random_instance(
    n: int, alpha=(0.75, 0.85), seed=None, work=(100.0, 200.0), max_size: int | None = None
) -> Instance:
    """Random monotone instance of 002 §8: b_i ~ U(work), alpha_i ~ U(alpha), singleton speeds 1,
    then level by level a_{i,S} = min_{k in S, k != i} a_{i,S-{k}} * U(alpha_i, 1); `max_size` keeps
    combinations of <= k tasks.
    """
    alpha_lo, alpha_hi = (float(a) for a in alpha)
    work_lo, work_hi = (float(b) for b in work)
    if not 1 <= n <= MAX_TASKS:
        raise InputError(f"n must be in 1..{MAX_TASKS}, got {n}", field="n")
    if not 0 <= alpha_lo <= alpha_hi <= 1:
        raise InputError(
            f"alpha range must satisfy 0 <= lo <= hi <= 1, got ({alpha_lo}, {alpha_hi})",
            field="alpha",
        )
    if not 0 < work_lo <= work_hi:
        raise InputError(
            f"work range must satisfy 0 < lo <= hi, got ({work_lo}, {work_hi})", field="work"
        )
    top = n if max_size is None else int(max_size)
    if not top >= 1:
        raise InputError(f"max_size must be at least 1, got {max_size}", field="max_size")
    top = min(top, n)
    count = sum(comb(n, size) for size in range(1, top + 1))
    if count > MAX_COLUMNS:
        raise InputError(
            f"{count} combinations exceed the limit of {MAX_COLUMNS}; lower n or max_size",
            field="max_size",
        )
    rng = np.random.default_rng(seed)
    # 002 §8: b_i ~ U(100, 200), alpha_i ~ U(alpha_lo, alpha_hi) per task
    task_work = rng.uniform(work_lo, work_hi, size=n)
    task_alpha = rng.uniform(alpha_lo, alpha_hi, size=n)

    # Each task's speeds live on the lattice of the n-1 other tasks (the combination without the
    # task's own
    # bit), which has the same shape for every task: one level at a time, all tasks at once.
    others = _levels(n - 1, top - 1)
    lattice = [np.ones((n, 1))]  # level 0: the task alone, speed 1 (002 §3)
    for size in range(1, len(others)):
        level, below = others[size], others[size - 1]
        cap = np.full((n, level.size), np.inf)
        for k in range(n - 1):
            has_k = np.flatnonzero((level >> k) & 1)
            subset = np.searchsorted(below, level[has_k] ^ (1 << k))
            cap[:, has_k] = np.minimum(cap[:, has_k], lattice[-1][:, subset])
        factor = task_alpha[:, None] + (1 - task_alpha[:, None]) * rng.random(cap.shape)
        # 002 §8: the smallest speed one task smaller, times U(alpha_i, 1)
        lattice.append(cap * factor)

    masks = combinations_up_to(n, top)
    complete = masks.size == (1 << n) - 1
    speeds = np.zeros((n, masks.size))
    for level, values in zip(others, lattice):
        for i in range(n):
            full = _insert_bit(level, i)
            speeds[i, full - 1 if complete else np.searchsorted(masks, full)] = values[i]
    return Instance(task_work, masks, speeds)


def _insert_bit(compressed: np.ndarray, bit: int) -> np.ndarray:
    """Bitmasks over n tasks from bitmasks over the n-1 tasks other than `bit`, with `bit` set."""
    low = compressed & ((1 << bit) - 1)
    return ((compressed - low) << 1) | (1 << bit) | low


def _levels(n: int, top: int) -> list[np.ndarray]:
    """Combinations of n tasks by size 0..top (level 0 is the empty set)."""
    return [np.zeros(1, dtype=np.int64)] + [
        combinations_of_size(n, size) for size in range(1, top + 1)
    ]


def worst_case_instance(n: int, b1: float = 1.0) -> Instance:
    """002 Example 1: a_ij = 1 when T_i in S_j and |S_j| < n, else 0; b_1 = b1 and b_i = (n-2)/(n-1)
    b1.

    FCS choosing {T_2..T_n} (the `last` tie-break) reaches the ratio (2n-3)/(n-1) of 002 (14).
    """
    if not 3 <= n <= 24:
        raise InputError(f"Example 1 needs 3 <= n <= 24, got {n}", field="n")
    if not b1 > 0:
        raise InputError(f"b1 must be positive, got {b1}", field="b1")
    masks = all_combinations(n)
    speeds = (membership(masks, n) & (popcount(masks) < n)[None, :]).astype(np.float64)  # 002 (15)
    work = np.full(n, (n - 2) / (n - 1) * b1)  # 002 (16)
    work[0] = b1
    return Instance(work, masks, speeds)
