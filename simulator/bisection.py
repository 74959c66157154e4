"""The simulator's one binary search over its ascending lists: the sorted columns' job indices
and units (`cosched.simulator.view`), the compact allocator's idle nodes, and the running jobs'
(predicted end, job index) pairs the engine keeps in `by_end`.

Compiled, `_search` is a C loop that reads the items as C integers and doubles: no Python call and
no Python comparison per step. In plain Python, the two entry points hand the same question to the
`bisect` module's C functions instead, which give the same positions (the tests check `_search`
against them), because a binary search written in Python is slower than the C one there.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right

try:  # Cython's pure-Python mode: C types when compiled (bisection.pxd), plain Python here
    import cython
except ModuleNotFoundError:
    from cosched import _pure_cython as cython

__all__ = ["int_position", "end_position"]


def int_position(items: list, value: int, low: int, high: int, right: bool) -> int:
    """Where `value` goes in the ascending integers ``items[low:high]``: before its equals, as
    ``bisect_left``, or after them (`right`), as ``bisect_right``."""
    if not cython.compiled:
        return (bisect_right if right else bisect_left)(items, value, low, high)
    return _search(items, False, 0.0, value, low, high, right)


def end_position(by_end: list, predicted: float, job: int) -> int:
    """Where the pair (`predicted`, `job`) is or goes in `by_end`, ascending by predicted end, then
    job index (the one tie rule), as ``bisect_left``."""
    if not cython.compiled:
        return bisect_left(by_end, (predicted, job))
    return _search(by_end, True, predicted, job, 0, len(by_end), False)


@cython.locals(middle=cython.Py_ssize_t, pair=tuple, at=cython.double, other=cython.Py_ssize_t)
def _search(
    items: list, pairs: bool, end: float, value: int, low: int, high: int, right: bool
) -> int:
    """The first position in ``items[low:high]`` whose item is above `value` (`right`) or not
    below it: items are integers, or (`pairs`) (float, integer) pairs ordered by `end`, then
    `value`."""
    while low < high:
        middle = (low + high) >> 1
        if pairs:
            pair = items[middle]
            at = pair[0]
            if at != end:
                if at < end:
                    low = middle + 1
                else:
                    high = middle
                continue
            other = pair[1]
        else:
            other = items[middle]
        if other < value or (right and other == value):
            low = middle + 1
        else:
            high = middle
    return low
