"""MkDocs hook: render the CLI tables from `cosched.cli.build_parser()` at build time.

The page `cli.md` holds one marker line; this hook replaces it with every subcommand's usage,
description and flags, read from the argparse parsers themselves, so the reference cannot drift
from the code. Flags and subcommands whose help is `argparse.SUPPRESS` (hidden aliases) are left
out.
Two more markers, on any page: `<!-- cli-commands -->` (every command, its area and summary: the
home
page) and `<!-- cli-vocabulary -->` (the shared flags of `cosched.cli_options.VOCABULARY`, with the
commands that take each one and its old spellings: the CLI-conventions page).
"""

from __future__ import annotations

import argparse
import html

PAGE = "cli.md"
MARKER = "<!-- cli-reference -->"
COMMANDS_MARKER = "<!-- cli-commands -->"
VOCABULARY_MARKER = "<!-- cli-vocabulary -->"
AREA_PAGES = {
    "theory": "model.md",
    "strategies": "online.md",
    "simulator": "simulator.md",
    "elastic": "elastisim.md",
    "hybrid": "hybrid.md",
    "measurement": "measurement.md",
}

__all__ = [
    "PAGE",
    "MARKER",
    "COMMANDS_MARKER",
    "VOCABULARY_MARKER",
    "subcommands",
    "visible_actions",
    "render_cli_reference",
    "render_commands",
    "render_vocabulary",
    "on_page_markdown",
]


def subcommands(
    parser: argparse.ArgumentParser,
) -> list[tuple[str, list[str], str, argparse.ArgumentParser]]:
    """(name, visible aliases, one-line summary, parser) of every non-hidden subcommand, in
    registration order."""
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
            aliases = [
                alias
                for alias, other in action.choices.items()
                if other is subparser and alias != name
            ]
            found.append(
                (name, aliases, (choice.help if choice is not None else "") or "", subparser)
            )
    return found


def visible_actions(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """The arguments a user sees in `--help`: everything except hidden flags and the subcommand
    action."""
    return [
        action
        for action in parser._actions
        if action.help != argparse.SUPPRESS and not isinstance(action, argparse._SubParsersAction)
    ]


def _text(value: object) -> str:
    """Plain text made safe for a Markdown paragraph or table cell."""
    text = html.escape(" ".join(str(value).split()), quote=False)
    for char in "\\`*_[]|":
        text = text.replace(char, "\\" + char)
    return text


def _code(value: str) -> str:
    """An inline code span (Python-Markdown tables do not split cells on pipes inside code)."""
    fence = "``" if "`" in value else "`"
    return f"{fence}{value}{fence}"


def _default(action: argparse.Action) -> str:
    if isinstance(action, (argparse._HelpAction, argparse._VersionAction)) or action.required:
        return ""
    if action.default in (None, argparse.SUPPRESS) or action.option_strings and action.nargs == 0:
        return ""
    default = (
        " ".join(map(str, action.default))
        if isinstance(action.default, (list, tuple))
        else str(action.default)
    )
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
        names = [
            action.option_strings[-1] if action.option_strings else action.dest
            for action in group._group_actions
            if action.help != argparse.SUPPRESS
        ]
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
    lines += [
        f"| [`{parser.prog} {name}`](#{parser.prog}-{name}) | {_text(summary)} |"
        for name, _, summary, _ in commands
    ]
    lines += [
        "",
        f"## `{parser.prog}`",
        "",
        *_usage(parser),
        "",
        _text(parser.description or ""),
        "",
        *_arguments_table(parser),
        "",
    ]
    for name, aliases, summary, subparser in commands:
        lines += [f"## `{parser.prog} {name}` {{#{parser.prog}-{name}}}", ""]
        if aliases:
            lines += ["Also spelled " + ", ".join(f"`{alias}`" for alias in aliases) + ".", ""]
        lines += [*_usage(subparser), "", _text(subparser.description or summary), ""]
        if subparser.epilog:
            lines += [_text(subparser.epilog), ""]
        lines += [*_arguments_table(subparser), ""]
    return "\n".join(lines)


def _area(subparser: argparse.ArgumentParser) -> str:
    """The area that registered a subcommand: theory, strategies, simulator, elastic, hybrid,
    measurement."""
    module = getattr(subparser._defaults.get("func"), "__module__", "") or ""
    parts = module.split(".")
    for name in ("elastic", "hybrid"):
        if name in parts:
            return name
    return parts[1] if len(parts) > 1 else ""


def render_commands(parser: argparse.ArgumentParser | None = None, link: str = "") -> str:
    """Markdown table of every command: its area (linked to the area's page) and its one-line
    summary."""
    if parser is None:
        from cosched.cli import build_parser

        parser = build_parser()
    lines = ["| command | area | what it does |", "|---|---|---|"]
    for name, _, summary, subparser in subcommands(parser):
        area = _area(subparser)
        page = AREA_PAGES.get(area)
        shown = f"[{area}]({link}{page})" if page else area
        lines.append(
            f"| [`{parser.prog} {name}`]({link}cli.md#{parser.prog}-{name}) | {shown} | "
            f"{_text(summary)} |"
        )
    return "\n".join(lines)


def _default_text(actions: dict[str, argparse.Action]) -> str:
    """One default, or per command where they differ."""
    shown = {
        command: _default(action).strip("`") and _default(action) or "—"
        for command, action in actions.items()
    }
    if len(set(shown.values())) == 1:
        return next(iter(shown.values()))
    given = [f"{command}: {value}" for command, value in shown.items() if value != "—"]
    return "; ".join(given) + ("; others: none" if len(given) < len(shown) else "")


def render_vocabulary(parser: argparse.ArgumentParser | None = None) -> str:
    """Markdown table of the shared flags: meaning, the commands that take each, defaults, old
    spellings."""
    from cosched.cli_options import VOCABULARY

    if parser is None:
        from cosched.cli import build_parser

        parser = build_parser()
    commands = subcommands(parser)
    lines = [
        "| flag | meaning | commands | default | old spellings (removed in 0.4.0) |",
        "|---|---|---|---|---|",
    ]
    for flag, meaning in VOCABULARY.items():
        taking: dict[str, argparse.Action] = {}
        old: set[str] = set()
        for name, _, _, subparser in commands:
            actions = [action for action in subparser._actions if flag in action.option_strings]
            if not actions or actions[0].help == argparse.SUPPRESS:
                continue
            taking[name] = actions[0]
            old |= {
                option
                for action in subparser._actions
                if getattr(action, "new_spelling", None) == flag
                for option in action.option_strings
            }
        if flag == "--version":
            where = f"`{parser.prog}` itself"
        elif len(taking) == len(commands):
            where = "every command"
        else:
            where = ", ".join(taking)
        default = _default_text(taking) if taking else "—"
        olds = ", ".join(f"`{option}`" for option in sorted(old)) or "—"
        lines.append(f"| `{flag}` | {_text(meaning)} | {where} | {default} | {olds} |")
    return "\n".join(lines)


def on_page_markdown(markdown: str, page, config, files) -> str:
    """Fill the markers: the CLI reference on its page, the command and vocabulary tables where they
    stand."""
    if COMMANDS_MARKER in markdown:
        depth = page.file.src_uri.count("/")
        markdown = markdown.replace(COMMANDS_MARKER, render_commands(link="../" * depth))
    if VOCABULARY_MARKER in markdown:
        markdown = markdown.replace(VOCABULARY_MARKER, render_vocabulary())
    if page.file.src_uri != PAGE:
        return markdown
    if MARKER not in markdown:
        raise ValueError(f"{PAGE} lost its {MARKER} line: the CLI reference has nowhere to go")
    return markdown.replace(MARKER, render_cli_reference())
