"""The ranges of the measurement commands' numeric flags, as argparse types.

Every numeric flag of `measure`, `measure-validate`, `execute` and `measure-heatmap` reads through
one of these: a value the run cannot use (nan, inf, 1e300, zero or a negative where a positive is
needed, a count no machine holds) is refused by argparse (exit 2, the flag named) before anything
starts, instead of overflowing a timer or planning runs without end. The limits are named in
`cosched.measurement.limits`, read when a flag is given (building a parser imports no numpy).
"""

from __future__ import annotations

import argparse

__all__ = ["seconds", "count"]


def _limit(name: str):
    from cosched.measurement import limits

    return getattr(limits, name)


def _argparse_type(check):
    """An argparse type from a check that raises InputError."""
    from cosched.errors import InputError

    def parse(text: str):
        try:
            return check(text)
        except InputError as error:
            raise argparse.ArgumentTypeError(error.message) from None

    return parse


def seconds(limit: str = "MAX_WAIT_SECONDS"):
    """A duration flag: finite, from MIN_WAIT_SECONDS to the limit named `limit`."""

    def check(text: str) -> float:
        from cosched.inputs import check_number

        shortest = _limit("MIN_WAIT_SECONDS")
        number = check_number(text, limit=_limit(limit))
        if number < shortest.value:
            return check_number(text, minimum=shortest.value)  # its error
        return number

    return _argparse_type(check)


def count(limit: str, minimum: int = 1):
    """A count flag: a whole number from `minimum` to the limit named `limit`."""

    def check(text: str) -> int:
        from cosched.inputs import check_number

        return check_number(text, integer=True, minimum=minimum, limit=_limit(limit))

    return _argparse_type(check)
