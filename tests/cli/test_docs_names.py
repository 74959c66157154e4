"""The documentation names only commands and flags that exist, and its CLI tables are generated from
the parsers.

Every `cosched COMMAND --flag ...` written in a code span or code block of README.md and docs/*.md
must name a real command and flags that command shows in `--help` (an old spelling, hidden from
help, is no example to copy). A flag written on its own (`--plots`) must be a flag of some command.
The command and vocabulary tables of the home page and the CLI-conventions page are rendered from
`build_parser()` by the MkDocs hook.
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import shlex
from functools import lru_cache
from pathlib import Path

import pytest

from cosched.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md")])
CODE = re.compile(r"```[^\n]*\n(.*?)```|``(.+?)``|`([^`\n]+)`", re.DOTALL)
COMMAND_LINE = re.compile(r"(?:^|[\s;&|(])cosched\s+(.*)")
STOP = re.compile(r"\s(?:\||&&|;|>|2>|#)\s")  # the end of one cosched invocation on a line
FLAG = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*)")
# flags of other tools that the pages show (pip, pytest, mkdocs, python -m, benchmark scripts)
OTHER_TOOLS = {  # flags of launchers and other tools that pages show inside command templates
    "--cpu-bind",
    "--cpu-set",
    "--hostfile",
    "--map-by",
    "--nodelist",
    "--overlap",
    "--strict",
    "--help",
    "--version",
    "--import-mode",
    "--durations",
    "--cov",
    "--timeout",
    "--hypothesis-seed",
    "--hypothesis-profile",
    "--user",
    "--upgrade",
    "--no-deps",
    "--editable",
    "--seconds",
    "--threads",
    "--work",
    "--repeats",
    "--out",
    "--keep",
    "--workers",
    "--jobs",
    "--windows",
    "--instances",
    "--n",
    "--seed",
    "--cosched",
    "--workloads",
    "--folder",
    "--budget",
    "--quick",
    "--full",
    "--runs",
    "--name",
    "--rerun-failures",
    "--lf",
    "--maxfail",
    "--benchmark",
    "--color",
    "--unshare",
    "--user-namespace",
    "--cgroup",
    "--before",
    "--skip",
    "--bind-to",
    "--mca",
    "--cap-add",
    "--page",
    "--write",
    "--list",
}
DELIBERATE = {"simulat", "--schedular", "dirct"}  # the mistypes of the "did you mean" examples


@lru_cache(maxsize=1)
def _commands() -> dict[str, dict[str, bool]]:
    """command -> {flag: visible} for every command (hidden aliases map to False)."""
    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {
        name: {flag: a.help != argparse.SUPPRESS for a in sub._actions for flag in a.option_strings}
        for name, sub in action.choices.items()
    }


def _code_texts(text: str) -> list[str]:
    return [
        next(group for group in match.groups() if group is not None)
        for match in CODE.finditer(text)
    ]


def _invocations(text: str):
    """(command, [flags]) of every `cosched COMMAND ...` in the page's code."""
    for code in _code_texts(text):
        for line in code.replace("\\\n", " ").splitlines():
            for match in COMMAND_LINE.finditer(line):
                rest = STOP.split(" " + match.group(1))[0]
                try:
                    words = shlex.split(rest, comments=False)
                except ValueError:
                    words = rest.split()
                if (
                    not words
                    or words[0].startswith("-")
                    or not re.fullmatch(r"[a-z][a-z-]*", words[0])
                ):
                    continue
                yield (
                    words[0],
                    [
                        word.split("=")[0].rstrip(";,.")
                        for word in words[1:]
                        if word.startswith("--")
                    ],
                )


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_cosched_command_line_names_a_command_and_its_visible_flags(page):
    commands = _commands()
    wrong = []
    for command, flags in _invocations(page.read_text(encoding="utf-8")):
        if command in DELIBERATE:
            continue
        if command not in commands:
            wrong.append(f"cosched {command}: no such command")
            continue
        for flag in flags:
            if flag in DELIBERATE:
                continue
            if flag not in commands[command]:
                wrong.append(f"cosched {command} {flag}: no such flag")
            elif not commands[command][flag] and page.name != "cli-conventions.md":
                wrong.append(f"cosched {command} {flag}: an old spelling")
    assert not wrong, f"{page.name}: " + "; ".join(sorted(set(wrong)))


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_flag_named_on_its_own_exists(page):
    known = {flag for flags in _commands().values() for flag in flags} | OTHER_TOOLS
    wrong = set()
    for code in _code_texts(page.read_text(encoding="utf-8")):
        if (
            "cosched " in code
            or "python" in code
            or "pip " in code
            or "pytest" in code
            or "mkdocs" in code
            or "ruff " in code
            or "mypy " in code
            or "valgrind " in code
        ):
            continue  # a command line: checked above, or another tool's
        wrong |= {flag for flag in FLAG.findall(code) if flag not in known | DELIBERATE}
    assert not wrong, f"{page.name} names flags no command has: {sorted(wrong)}"


def _hook():
    path = ROOT / "docs" / "hooks" / "cli_reference.py"
    spec = importlib.util.spec_from_file_location("docs_hook_cli_reference_names", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_command_and_vocabulary_tables_are_generated_and_list_every_command():
    hook = _hook()
    index = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    conventions = (ROOT / "docs" / "cli-conventions.md").read_text(encoding="utf-8")
    assert hook.COMMANDS_MARKER in index and hook.VOCABULARY_MARKER in conventions
    table = hook.render_commands()
    for command in _commands():
        assert f"`cosched {command}`" in table
    vocabulary = hook.render_vocabulary()
    from cosched.cli_options import VOCABULARY

    for flag in VOCABULARY:
        assert f"| `{flag}` |" in vocabulary
    assert "every command" in vocabulary.splitlines()[2]  # --quiet
    for old in ("`--schedulers`", "`--policy`", "`--no-progress`", "`--mean`"):
        assert old in vocabulary


def test_every_vocabulary_flag_exists_somewhere():
    from cosched.cli_options import VOCABULARY

    known = {flag for flags in _commands().values() for flag in flags} | {"--version"}
    assert set(VOCABULARY) <= known
