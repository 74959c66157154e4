"""Bundled kernels (fixed work) and the Table 2 regression of 002 §7."""

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from cosched.measurement.kernels import KERNELS, main, run_kernel
from cosched.measurement.validation import fit_table, kernel_command


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_kernel_performs_exactly_the_requested_work_units(name):
    assert run_kernel(name, work=2) == 2


def test_kernel_with_a_time_limit_stops_and_reports_its_units():
    assert run_kernel("compute", seconds=0.05) >= 1


def test_kernel_command_line_runs_workers_as_processes_and_rejects_bad_arguments():
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "cosched.measurement.kernels",
            "cache",
            "--work",
            "2",
            "--threads",
            "2",
        ],
        timeout=60,
    )
    assert done.returncode == 0
    with pytest.raises(SystemExit) as error:
        main(["compute", "--threads", "0"])
    assert error.value.code == 2
    assert "--work 5 --threads 3" in kernel_command("memory", 3, work=5)


@given(
    slope=st.floats(0.5, 2),
    intercept=st.floats(-0.5, 0.5),
    ratios=st.lists(st.floats(1, 5), min_size=3, max_size=30, unique=True),
)
def test_regression_recovers_an_exact_linear_relation_with_r2_one(slope, intercept, ratios):
    x = np.array(ratios)
    assume(np.ptp(x) > 1e-3)
    frame = pd.DataFrame({"kernel": "k", "time_ratio": x, "speed_ratio": slope * x + intercept})
    row = fit_table(frame).iloc[0]
    assert row.slope == pytest.approx(slope, abs=1e-6) and row.intercept == pytest.approx(
        intercept, abs=1e-6
    )
    assert row.r2 == pytest.approx(1.0) and row.runs == len(ratios)


def test_regression_of_too_few_runs_is_nan_not_an_error():
    row = fit_table(
        pd.DataFrame({"kernel": ["k"], "time_ratio": [1.0], "speed_ratio": [1.0]})
    ).iloc[0]
    assert np.isnan(row.slope) and row.runs == 1
