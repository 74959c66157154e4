"""Competitive ratio and the FCS bound of 002 Theorem 1."""

import numpy as np
import pytest

from cosched.theory.bounds import competitive_ratio, example1_ratio, fcs_bound
from cosched.theory.generators import worst_case_instance
from cosched.theory.instance import Instance


def test_competitive_ratio_is_makespan_over_opt():
    assert competitive_ratio(3.0, 2.0) == 1.5


def test_fcs_bound_is_two_minus_inverse_fastest_speed():
    assert fcs_bound(worst_case_instance(5)) == pytest.approx(2 - 1 / 4)
    alone = Instance(np.ones(2), [1, 2], np.eye(2))
    assert fcs_bound(alone) == 1.0


@pytest.mark.parametrize("n", range(3, 13))
def test_example1_ratio_reaches_the_bound(n):
    assert example1_ratio(n) == pytest.approx(fcs_bound(worst_case_instance(n)))
