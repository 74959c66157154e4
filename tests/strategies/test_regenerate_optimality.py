"""The worst-case numbers of docs/optimality.md come from the commands shown beside them:
benchmarks/regenerate_optimality.py finds each command and number on the page and reruns them (the
quick ones in the slow test), and a seeded search does not change with the code around it."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cosched.strategies.worst_case import strategy_makespan
from cosched.theory.testing import search_worst_case

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "regenerate_optimality.py"
# evaluations of the determinism test's small searches (hypothesis examples, no refinement)
SMALL_BUDGET = 40


def _script():
    spec = importlib.util.spec_from_file_location("regenerate_optimality", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


REGENERATE = _script()


def test_the_page_shows_a_command_beside_every_worst_case_number():
    regenerate = REGENERATE
    checks = regenerate.page_checks(regenerate.PAGE.read_text())
    names = [check.name for check in checks]
    assert names[0] == "random n = 4" and checks[0].python
    assert [name for name in names if name.startswith("fcs")] == [
        f"fcs n = {n}" for n in range(3, 9)
    ]
    assert {"pi n = 4", "ucb n = 3"} <= set(names)
    for check in checks:
        assert check.numbers
        if not check.python:
            assert check.command.startswith("cosched worst-case ") and "--out" in check.command
    quick = {f"fcs n = {n}" for n in regenerate.QUICK_ROWS}
    assert quick <= set(names)


@given(st.floats(min_value=0.0, max_value=1e4, allow_nan=False), st.integers(0, 6))
def test_a_value_agrees_with_itself_rounded_as_the_page_prints_it(value, decimals):
    number = REGENERATE.Number("x", f"{value:,.{decimals}f}", "ratio")
    assert abs(number.value({"ratio": value}) - number.page_value()) <= number.tolerance()
    # a page number one unit of its last digit further away disagrees
    unit = 10.0**-decimals
    off = number.page_value() + (unit if number.page_value() >= value else -unit)
    assert abs(off - value) > number.tolerance()


def test_a_seeded_search_ignores_constants_in_newly_imported_code(tmp_path, monkeypatch):
    """Hypothesis collects the constants of every loaded local module; the search must not draw
    them, or any edit or import anywhere would change what the page's commands find."""
    fcs = strategy_makespan("fcs", tie_break="last")

    def search():
        return search_worst_case(fcs, 3, budget=SMALL_BUDGET, refine=0, seed=0).history

    before = search()
    (tmp_path / "constants_elsewhere.py").write_text(
        "VALUES = (0.123456, 0.654321, 0.999, 0.25, 0.75, 1e-3, 0.333, 42, 7.5)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "constants_elsewhere", raising=False)
    importlib.import_module("constants_elsewhere")
    assert search().tolist() == before.tolist()


@pytest.mark.slow
def test_quick_commands_regenerate_the_page_numbers(capsys):
    assert REGENERATE.main(["--quick"]) == 0
    printed = capsys.readouterr().out
    assert "0 of " in printed and "NO" not in printed
