"""Bitmask helpers for the combination lattice: task i <-> bit i, combinations in ascending bitmask
order."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

__all__ = [
    "popcount",
    "membership",
    "all_combinations",
    "combinations_up_to",
    "combinations_of_size",
    "mask_of",
    "tasks_of",
    "is_downward_closed",
    "MAX_TASKS",
]

MAX_TASKS = 62  # bitmasks are int64


def popcount(masks: np.ndarray) -> np.ndarray:
    """Number of tasks in each combination (|S_j|)."""
    masks = np.asarray(masks, dtype=np.int64)
    if hasattr(np, "bitwise_count"):
        return np.bitwise_count(masks).astype(np.int64)
    counts = np.zeros(masks.shape, dtype=np.int64)
    rest = masks.copy()
    while rest.any():
        counts += rest & 1
        rest >>= 1
    return counts


def membership(masks: np.ndarray, n: int) -> np.ndarray:
    """Boolean (n, m) matrix: task i belongs to combination j."""
    masks = np.asarray(masks, dtype=np.int64)
    return ((masks[None, :] >> np.arange(n, dtype=np.int64)[:, None]) & 1).astype(bool)


def all_combinations(n: int) -> np.ndarray:
    """All 2^n - 1 non-empty combinations of n tasks, ascending."""
    return np.arange(1, 1 << n, dtype=np.int64)


def combinations_up_to(n: int, max_size: int) -> np.ndarray:
    """Non-empty combinations of at most `max_size` tasks, ascending (no 2^n array when max_size is
    small)."""
    if max_size >= n:
        return all_combinations(n)
    return np.sort(
        np.concatenate([combinations_of_size(n, size) for size in range(1, max_size + 1)])
    )


def combinations_of_size(n: int, size: int) -> np.ndarray:
    """All combinations of exactly `size` of n tasks, ascending; built level by level, one bit above
    the top."""
    level, top = np.zeros(1, dtype=np.int64), np.full(1, -1)
    bit_index = np.arange(n)
    for _ in range(size):
        above = bit_index[None, :] > top[:, None]
        parent, bit = np.nonzero(above)
        level, top = level[parent] | (np.int64(1) << bit.astype(np.int64)), bit
    return np.sort(level)


def mask_of(tasks: Iterable[int]) -> int:
    """Bitmask of a collection of task indices."""
    mask = 0
    for task in tasks:
        mask |= 1 << int(task)
    return mask


def tasks_of(mask: int) -> list[int]:
    """Task indices of a bitmask, ascending."""
    mask = int(mask)
    return [i for i in range(mask.bit_length()) if mask >> i & 1]


def is_downward_closed(masks: np.ndarray) -> bool:
    """True when every one-task-smaller non-empty subset of every combination is in the set."""
    masks = np.asarray(masks, dtype=np.int64)
    if masks.size == 0:
        return True
    n = int(masks.max()).bit_length()
    for bit in range(n):
        with_bit = masks[(masks >> bit) & 1 == 1]
        smaller = with_bit ^ (1 << bit)
        smaller = smaller[smaller != 0]
        if smaller.size and not np.isin(smaller, masks).all():
            return False
    return True
