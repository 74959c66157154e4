"""Paper-scale check of the findings of 002 §8 that this implementation reproduces (slow: about a
minute)."""

import dataclasses

import pytest

from cosched.strategies.experiment import STRATEGY_PRESETS, run_experiment
from cosched.strategies.plots import fig7_table


@pytest.mark.slow
def test_paper_grid_reproduces_the_findings_of_section_8(tmp_path):
    frame = run_experiment(
        dataclasses.replace(STRATEGY_PRESETS["paper"], instances=10), tmp_path, progress=False
    )
    best = fig7_table(frame).pivot(index="alpha_lo", columns="strategy", values="mean_ratio")
    assert (
        best[["ucb", "pi", "ei"]].min(axis=1) > best["fcs"]
    ).all()  # search strategies are above FCS
    assert (
        best.loc[:0.75, "pi"] <= best.loc[:0.75, ["ucb", "ei"]].min(axis=1)
    ).all()  # PI lowest (α <= 0.85)
    means = frame.groupby(["alpha_lo", "strategy", "k"])["ratio"].mean()
    assert (
        means.xs("pi", level="strategy").groupby(level="alpha_lo").nunique() == 1
    ).all()  # PI ignores k
    ucb = means.xs("ucb", level="strategy").unstack("k")
    assert (
        ucb.loc[:0.45, 0.99] < ucb.loc[:0.45, 0.6]
    ).all()  # UCB improves with k where k matters (α < 0.55)
    assert ucb[0.99].mean() < ucb[0.6].mean()  # for α >= 0.55 k changes the ratio by less than 0.01
