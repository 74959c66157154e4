"""The numbers of the documentation come from the commands beside them: regenerate_docs.py (in
benchmarks/) finds each marked output block and table, reruns its commands and compares. The fast
tests check the matching on made-up blocks; the slow ones regenerate the pages (optimality has its
own slow test)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "regenerate_docs.py"


def _script():
    spec = importlib.util.spec_from_file_location("regenerate_docs", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


REGENERATE = _script()


def test_a_shown_line_is_compared_with_the_printed_line_of_its_shape():
    block = REGENERATE.Block(["cosched x"], ["makespan [s]   113792.7", "...", "wall [s]  1.2"], 0)
    printed = ["header", "makespan [s]      120338.4", "wall [s]  9.9"]
    compared, problems, rewritten = REGENERATE.compare_lines(block, printed)
    assert compared == 1 and problems == ["'makespan [s]   113792.7': 113792.7 is now 120338.4"]
    assert rewritten == ["makespan [s]      120338.4", "...", "wall [s]  9.9"]


def test_rounding_within_half_a_unit_of_the_last_digit_agrees_and_a_new_column_does_not():
    block = REGENERATE.Block(["cosched x"], ["name     a  wall [s]", "x      1.23       0.5"], 0)
    printed = ["name     a  wall [s]", "x    1.2349       7.0"]
    assert REGENERATE.compare_lines(block, printed)[:2] == (1, [])  # wall: not compared
    _, problems, _ = REGENERATE.compare_lines(block, ["name  a  b  wall [s]", "x  1  1.23  7.0"])
    assert problems and problems[0].startswith("no printed line like: name     a  wall [s]")


def test_every_listed_page_has_what_its_check_reads():
    for name, (path, _, check) in REGENERATE.PAGES.items():
        text = path.read_text(encoding="utf-8")
        if check is REGENERATE.check_output_blocks:
            assert REGENERATE.blocks(text), name
    assert REGENERATE.HYBRID_TABLE in REGENERATE.PAGES["hybrid"][0].read_text(encoding="utf-8")


@pytest.mark.slow
@pytest.mark.parametrize(
    "page",
    [name for name in REGENERATE.PAGES if name != "optimality"],
)
def test_the_page_numbers_are_what_the_commands_print(page, capsys):
    assert REGENERATE.main(["--page", page]) == 0, capsys.readouterr().out
