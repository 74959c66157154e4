"""MkDocs hook: render the CLI reference page from `cosched.cli.build_parser()` at build time.

The page `cli.md` holds one marker line; this hook replaces it with every subcommand's usage,
description and flags, read from the argparse parsers themselves, so the reference cannot drift
from the code. Flags and subcommands whose help is `argparse.SUPPRESS` (hidden aliases) are left out.
"""
from __future__ import annotations

import argparse
import html

PAGE = "cli.md"
MARKER = "<!-- cli-reference -->"

__all__ = ["PAGE", "MARKER", "subcommands", "visible_actions", "render_cli_reference", "on_page_markdown"]


def subcommands(parser: argparse.ArgumentParser) -> list[tuple[str, list[str], str, argparse.ArgumentParser]]:
    """(name, visible aliases, one-line summary, parser) of every non-hidden subcommand, in registration order."""
    found: list[tuple[str, list[str], str, argparse.ArgumentParser]] = []
    for action in parser._actions:
        if not isinstance(action, argparse._SubParsersAction):
            continue
        summaries = {choice.dest: choice for choice in action._choices_actions}
        seen: set[int] = set()
        for name, subparser in action.choices.items():
            if id(subparser) in seen:
                continue  # an alias of a parser already listed
            seen.add(id(subparser))
            choice = summaries.get(name)
            if choice is not None and choice.help == argparse.SUPPRESS:
                continue
            aliases = [alias for alias, other in action.choices.items() if other is subparser and alias != name]
            found.append((name, aliases, (choice.help if choice is not None else "") or "", subparser))
    return found


def visible_actions(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """The arguments a user sees in `--help`: everything except hidden flags and the subcommand action."""
    return [action for action in parser._actions
            if action.help != argparse.SUPPRESS and not isinstance(action, argparse._SubParsersAction)]


def _text(value: object) -> str:
    """Plain text made safe for a Markdown paragraph or table cell."""
    text = html.escape(" ".join(str(value).split()), quote=False)
    for char in "\\`*_[]|":
        text = text.replace(char, "\\" + char)
    return text


def _code(value: str) -> str:
    """An inline code span (Python-Markdown tables do not split cells on pipes inside code spans)."""
    fence = "``" if "`" in value else "`"
    return f"{fence}{value}{fence}"


def _default(action: argparse.Action) -> str:
    if isinstance(action, (argparse._HelpAction, argparse._VersionAction)) or action.required:
        return ""
    if action.default in (None, argparse.SUPPRESS) or action.option_strings and action.nargs == 0:
        return ""
    default = " ".join(map(str, action.default)) if isinstance(action.default, (list, tuple)) else str(action.default)
    return _code(default)


def _arguments_table(parser: argparse.ArgumentParser) -> list[str]:
    formatter = parser._get_formatter()
    rows = ["| argument | meaning | default |", "|---|---|---|"]
    for action in visible_actions(parser):
        invocation = formatter._format_action_invocation(action)
        help_text = formatter._expand_help(action) if action.help else ""
        if action.required and action.option_strings:
            help_text = f"(required) {help_text}".strip()
        rows.append(f"| {_code(invocation)} | {_text(help_text)} | {_default(action)} |")
    for group in parser._mutually_exclusive_groups:
        names = [action.option_strings[-1] if action.option_strings else action.dest
                 for action in group._group_actions if action.help != argparse.SUPPRESS]
        rule = "exactly one of" if group.required else "at most one of"
        rows.append("")
        rows.append(f"Mutually exclusive: {rule} " + ", ".join(f"`{name}`" for name in names) + ".")
    return rows


def _usage(parser: argparse.ArgumentParser) -> list[str]:
    return ["```text", parser.format_usage().strip(), "```"]


def render_cli_reference(parser: argparse.ArgumentParser | None = None) -> str:
    """Markdown for every subcommand of `parser` (default: `cosched.cli.build_parser()`)."""
    if parser is None:
        from cosched.cli import build_parser
        parser = build_parser()
    commands = subcommands(parser)
    lines = ["## Overview", "", "| command | what it does |", "|---|---|"]
    lines += [f"| [`{parser.prog} {name}`](#{parser.prog}-{name}) | {_text(summary)} |"
              for name, _, summary, _ in commands]
    lines += ["", f"## `{parser.prog}`", "", *_usage(parser), "", _text(parser.description or ""), "",
              *_arguments_table(parser), ""]
    for name, aliases, summary, subparser in commands:
        lines += [f"## `{parser.prog} {name}` {{#{parser.prog}-{name}}}", ""]
        if aliases:
            lines += ["Also spelled " + ", ".join(f"`{alias}`" for alias in aliases) + ".", ""]
        lines += [*_usage(subparser), "", _text(subparser.description or summary), ""]
        if subparser.epilog:
            lines += [_text(subparser.epilog), ""]
        lines += [*_arguments_table(subparser), ""]
    return "\n".join(lines)


def on_page_markdown(markdown: str, page, config, files) -> str:
    """Fill the marker of the CLI reference page; every other page passes through unchanged."""
    if page.file.src_uri != PAGE:
        return markdown
    if MARKER not in markdown:
        raise ValueError(f"{PAGE} lost its {MARKER} line: the CLI reference has nowhere to go")
    return markdown.replace(MARKER, render_cli_reference())
