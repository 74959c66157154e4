"""Worst-case search of a strategy's competitive ratio (002 §4.3): library, files, command line."""

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cosched.cli import main
from cosched.strategies.fcs import FCS
from cosched.strategies.registry import make_strategy
from cosched.strategies.schedule import execute
from cosched.strategies.worst_case import (
    CONVERGENCE,
    INSTANCE,
    PLOT,
    RESULT,
    find_worst_case,
    strategy_makespan,
)
from cosched.theory.bounds import example1_ratio, fcs_bound
from cosched.theory.instance import load_instance, validate
from cosched.theory.opt import solve_opt
from cosched.theory.testing import DEFAULT_BUDGET, WORST_CASE_MAX_TASKS

# ratio recomputed from the written JSON (floats round-trip exactly; LP re-solved)
RATIO_RTOL = 1e-9
BOUND_SLACK = 1e-9  # Theorem 1: FCS never exceeds 2 - 1/a*
FCS_N4_TARGET = 1.6  # the default budget must find at least this at n = 4 (Example 1: 5/3)


@settings(
    max_examples=6,
    deadline=None,
    suppress_health_check=[HealthCheck.nested_given, HealthCheck.too_slow],
)
@given(st.sampled_from(["fcs", "ucb", "pi", "ei"]), st.integers(2, 4), st.integers(0, 2**31))
def test_search_returns_a_valid_instance_and_its_recomputed_ratio(name, n, seed):
    options = {"tie_break": "last"} if name == "fcs" else {"quantum": 1.0}
    worst = find_worst_case(name, n, budget=8, seed=seed, **options)
    validate(worst.instance)
    schedule = execute(worst.instance, make_strategy(name, **options), seed=seed)
    assert worst.ratio == pytest.approx(
        schedule.makespan / solve_opt(worst.instance).makespan, rel=RATIO_RTOL
    )
    if name == "fcs":
        assert worst.ratio <= fcs_bound(worst.instance) + BOUND_SLACK


def test_strategy_makespan_is_the_execution_loop():
    from cosched.theory.generators import worst_case_instance

    instance = worst_case_instance(4)
    makespan = strategy_makespan("fcs", tie_break="last")
    assert makespan(instance) == execute(instance, FCS(tie_break="last")).makespan
    assert makespan(instance) / solve_opt(instance).makespan == pytest.approx(example1_ratio(4))


def test_command_writes_the_instance_its_ratio_bound_and_convergence(tmp_path, capsys):
    out = tmp_path / "worst"
    assert (
        main(
            [
                "worst-case",
                "--strategy",
                "fcs",
                "--tie-break",
                "last",
                "--n",
                "3",
                "--budget",
                "20",
                "--out",
                str(out),
                "--json",
                "--quiet",
                "--plots",
            ]
        )
        == 0
    )
    report = json.loads(capsys.readouterr().out)
    assert json.loads((out / RESULT).read_text()) == report
    instance = load_instance(out / INSTANCE)  # the instance format, monotone and valid
    ratio = execute(instance, FCS(tie_break="last")).makespan / solve_opt(instance).makespan
    assert report["ratio"] == pytest.approx(ratio, rel=RATIO_RTOL)
    assert report["bound"] == pytest.approx(fcs_bound(instance))
    assert report["example1_ratio"] == pytest.approx(1.5)
    convergence = pd.read_csv(out / CONVERGENCE)
    assert len(convergence) == report["evaluations"]
    assert (
        convergence["best"].is_monotonic_increasing
        and convergence["best"].iloc[-1] == report["ratio"]
    )
    assert (out / "plots" / PLOT).read_bytes().startswith(b"\x89PNG")


@pytest.mark.parametrize(
    "flags, field",
    [
        (["--n", "1"], "--n"),
        (["--n", "3", "--budget", "0"], "--budget"),
        (["--n", "3", "--alpha", "0.8", "0.2"], "--alpha"),
        (["--n", "3", "--strategy", "ucb", "--k", "2"], "k"),
    ],
)
def test_bad_input_is_one_line_and_leaves_no_folder(tmp_path, capsys, flags, field):
    out = tmp_path / "worst"
    assert main(["worst-case", *flags, "--out", str(out)]) == 2
    assert field in capsys.readouterr().err
    assert not out.exists()


def test_command_constants_match_the_library():
    from cosched.strategies import worst_case_cli
    from cosched.theory import limits

    assert worst_case_cli.DEFAULT_BUDGET is limits.DEFAULT_BUDGET is DEFAULT_BUDGET
    assert (
        worst_case_cli.WORST_CASE_MAX_TASKS is limits.WORST_CASE_MAX_TASKS is WORST_CASE_MAX_TASKS
    )


@pytest.mark.slow
def test_default_budget_finds_fcs_ratio_near_example1_at_n4():
    worst = find_worst_case("fcs", 4, tie_break="last")
    assert worst.ratio >= FCS_N4_TARGET
    assert worst.ratio <= fcs_bound(worst.instance) + BOUND_SLACK
    assert np.isclose(worst.instance.combination_speeds.max(), 3.0, atol=0.01)
