"""A misspelled strategy option is bad input naming the known ones (the command line's flags are
fixed: argparse refuses a misspelled flag)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cosched.errors import InputError
from cosched.registry import _load
from cosched.strategies.registry import STRATEGIES, make_strategy

# a valid value of every option some built-in strategy takes
VALUES = {
    "tie_break": "first",
    "k": 0.9,
    "quantum": 5.0,
    "bounds": "paper",
    "noise": 0.01,
    "remeasure": True,
    "incumbent": "estimate",
    "lower_anchor": "n+1",
    "search_tie_break": "first",
    "ei_unclipped": True,
}
BUILT_IN = ("fcs", "ucb", "pi", "ei")


def test_every_built_in_option_has_a_value_here():
    known = set().union(*(_load(STRATEGIES[name]).OPTIONS for name in BUILT_IN))
    assert known == set(VALUES)


@pytest.mark.parametrize("name", BUILT_IN)
def test_a_misspelled_option_names_the_options_the_strategy_takes(name):
    with pytest.raises(
        InputError, match=r"unknown option 'qantum' of strategy .*it takes: "
    ) as err:
        make_strategy(name, qantum=5.0)
    assert err.value.field == "qantum"
    assert all(option in str(err.value) for option in _load(STRATEGIES[name]).OPTIONS)


@settings(max_examples=40, deadline=None)
@given(
    name=st.sampled_from(BUILT_IN),
    options=st.dictionaries(st.sampled_from(sorted(VALUES)), st.none()),
    stray=st.text("abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=12),
)
def test_options_of_any_strategy_pass_and_only_unknown_ones_fail(name, options, stray):
    options = {key: VALUES[key] for key in options}
    make_strategy(name, **options)  # one set of options can go to any strategy
    if stray in VALUES:
        return
    with pytest.raises(InputError, match=repr(stray)):
        make_strategy(name, **options, **{stray: 1})
