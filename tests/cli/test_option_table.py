"""The table of docs/simulator.md saying which of `simulate`, `compare` and `experiment-sim` takes
each cluster and trace option matches the parsers, and a shared option reads the same in each."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from cosched.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
SECTION = "### Which command takes which cluster and trace option"
FLAG = re.compile(r"`(--[a-z][a-z-]*)")


def _parsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def _table() -> tuple[list[str], list[tuple[list[str], list[str]]]]:
    """(commands, [(flags, yes/no per command)]) of the table under SECTION."""
    text = (ROOT / "docs" / "simulator.md").read_text()
    lines = text[text.index(SECTION) :].splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("|"))
    end = next(i for i in range(first, len(lines)) if not lines[i].startswith("|"))
    rows = lines[first:end]  # the first table of the section
    header = [cell.strip(" `") for cell in rows[0].strip("|").split("|")][1:]
    table = []
    for row in rows[2:]:
        cells = [cell.strip() for cell in re.split(r"(?<!\\)\|", row.strip("|"))]
        table.append((FLAG.findall(cells[0]), [cell.split(":")[0] for cell in cells[1:]]))
    return header, table


def test_the_option_table_says_which_command_takes_each_option():
    commands, table = _table()
    assert commands == ["simulate", "compare", "experiment-sim"] and len(table) >= 9
    parsers = _parsers()
    for flags, answers in table:
        assert flags, answers
        for command, answer in zip(commands, answers):
            known = {flag for a in parsers[command]._actions for flag in a.option_strings}
            taken = [flag in known for flag in flags]
            assert answer in ("yes", "no"), (command, flags, answer)
            assert all(taken) if answer == "yes" else not any(taken), (command, flags, answer)


def test_a_shared_option_is_one_definition_in_simulate_and_compare():
    # the same choices, default and help text: defined once and added to both parsers
    parsers = _parsers()
    _, table = _table()
    shared = [flags for flags, answers in table if answers[:2] == ["yes", "yes"]]
    for flags in shared:
        for flag in flags:
            simulate, compare = (
                next(a for a in parsers[name]._actions if flag in a.option_strings)
                for name in ("simulate", "compare")
            )
            assert (simulate.choices, simulate.default, simulate.help) == (
                compare.choices,
                compare.default,
                compare.help,
            ), flag
