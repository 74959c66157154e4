"""Help texts and pages say what the commands do: plots, defaults, flags.

Plots are opt-in (docs/cli-conventions.md) except where the picture is the command's purpose
(`demo`): a help text or description that names a PNG says it comes with --plots, and only such a
command says "(default on)". A "(default X)" in a help text is the parser's default. Every flag a
table row of the documentation names is a flag some command shows in --help (no old spelling).
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from cosched.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md")])
PICTURE_COMMANDS = {"demo"}  # plots_target(..., picture=True): the plot is written without --plots
PNG = re.compile(r"\b[\w./-]+\.png\b")
DEFAULT = re.compile(r"\(default:? ([^()]*)\)")
NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
NUMERIC_TOLERANCE = 1e-12  # a shown default is the parser's number printed shorter (100 for 100.0)


def _commands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


COMMANDS = _commands()


def _helps(parser: argparse.ArgumentParser):
    """(flag, expanded help) of every visible option."""
    formatter = parser._get_formatter()
    for action in parser._actions:
        if action.help and action.help != argparse.SUPPRESS:
            yield action, formatter._expand_help(action)


@pytest.mark.parametrize("command", COMMANDS)
def test_help_prints_no_escaped_percent_sign(command):
    text = COMMANDS[command].format_help()
    assert "%%" not in text and "%(" not in text


@pytest.mark.parametrize("command", COMMANDS)
def test_a_png_named_in_help_comes_with_plots_unless_the_picture_is_the_purpose(command):
    if command in PICTURE_COMMANDS:
        return
    parser = COMMANDS[command]
    texts = [help_ for action, help_ in _helps(parser) if "--plots" not in action.option_strings]
    texts.append(parser.description or "")
    promised = [
        clause.strip()
        for text in texts
        for clause in re.split(r"[;.] ", " ".join(text.split()))
        if PNG.search(clause) and "--plots" not in clause
    ]
    assert promised == [], f"{command}: a PNG named as if written without --plots"
    for action, help_ in _helps(parser):
        if "--plots" in action.option_strings:
            assert "(default off)" in help_, f"{command} --plots: {help_}"


@pytest.mark.parametrize("command", COMMANDS)
def test_a_default_shown_in_help_is_the_parsers_default(command):
    wrong = []
    for action, help_ in _helps(COMMANDS[command]):
        shown = DEFAULT.findall(help_)
        default = action.default
        if not shown or default is None or isinstance(default, bool | str):
            continue
        expected = list(default) if isinstance(default, list | tuple) else [default]
        if not all(isinstance(value, int | float) for value in expected):
            continue
        numbers = [float(n) for n in NUMBER.findall(shown[-1])][: len(expected)]
        if len(numbers) < len(expected) or any(
            abs(a - float(b)) > NUMERIC_TOLERANCE * max(1.0, abs(float(b)))
            for a, b in zip(numbers, expected)
        ):
            wrong.append(f"{action.option_strings[0]}: shows {shown[-1]!r}, parser {default!r}")
    assert wrong == [], f"{command}: {wrong}"


def _visible_flags() -> set[str]:
    return {
        flag
        for parser in COMMANDS.values()
        for action in parser._actions
        if action.help != argparse.SUPPRESS
        for flag in action.option_strings
    }


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_flag_of_a_documentation_table_is_a_visible_flag(page):
    visible = _visible_flags()
    rows = [line for line in page.read_text(encoding="utf-8").splitlines() if line.startswith("|")]
    wrong = {
        flag
        for row in rows
        for flag in re.findall(r"`(--[a-z][a-z0-9-]*)", row)
        if flag not in visible
    }
    assert wrong == set(), f"{page.name}: old or unknown flags in a table: {sorted(wrong)}"
