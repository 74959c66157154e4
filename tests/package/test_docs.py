"""The documentation stays short where it should and generated where it could drift.

The README is the front page (at most 200 lines; the rest lives in docs/). The CLI reference is
rendered from `build_parser()` by the MkDocs hook docs/hooks/cli_reference.py; these tests call the
hook's render function directly (no MkDocs build), so a subcommand or flag missing from the
reference fails here.
"""

from __future__ import annotations

import argparse
import importlib.util
import re
from pathlib import Path

import pytest

from cosched._areas import AREAS
from cosched._layout import link_layout
from cosched.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
README_MAX_LINES = 200


def _hook(name: str):
    """Import a MkDocs hook module from docs/hooks by file path (it is not part of the package)."""
    path = ROOT / "docs" / "hooks" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"docs_hook_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def cli_reference():
    return _hook("cli_reference")


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """Every subcommand name (aliases included) -> its parser, read from argparse directly."""
    actions = [
        action for action in parser._actions if isinstance(action, argparse._SubParsersAction)
    ]
    return {name: sub for action in actions for name, sub in action.choices.items()}


def _hidden_subcommands(parser: argparse.ArgumentParser) -> set[str]:
    return {
        choice.dest
        for action in parser._actions
        if isinstance(action, argparse._SubParsersAction)
        for choice in action._choices_actions
        if choice.help == argparse.SUPPRESS
    }


def _sections(markdown: str, prog: str) -> dict[str, str]:
    """The rendered page cut at its `## \\`prog NAME\\`` headings: NAME -> that section's text."""
    parts = re.split(rf"^## `{re.escape(prog)} ([^`]+)`.*$", markdown, flags=re.MULTILINE)
    return dict(zip(parts[1::2], parts[2::2]))


def _table_rows(section: str) -> list[str]:
    return [line for line in section.splitlines() if line.startswith("| `")]


def test_readme_is_at_most_200_lines():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, (
        f"README.md has {len(lines)} lines; move detail into docs/"
    )


def test_cli_reference_lists_every_subcommand(cli_reference):
    parser = build_parser()
    sections = _sections(cli_reference.render_cli_reference(parser), parser.prog)
    hidden = _hidden_subcommands(parser)
    listed = {name for name, *_ in cli_reference.subcommands(parser)}
    aliases = {alias for _, names, *_ in cli_reference.subcommands(parser) for alias in names}
    for name, _subparser in _subparsers(parser).items():
        if name in hidden:
            assert name not in sections
            continue
        assert name in listed | aliases, f"`{parser.prog} {name}` is missing from the CLI reference"
    assert listed and listed <= set(sections)


def test_cli_reference_lists_every_visible_flag_and_no_hidden_one(cli_reference):
    parser = build_parser()
    sections = _sections(cli_reference.render_cli_reference(parser), parser.prog)
    for name, _, _, subparser in cli_reference.subcommands(parser):
        rows = "\n".join(_table_rows(sections[name]))
        formatter = subparser._get_formatter()
        for action in subparser._actions:
            if isinstance(action, argparse._SubParsersAction):
                continue
            spellings = action.option_strings or [formatter._format_action_invocation(action)]
            for spelling in spellings:
                if action.help == argparse.SUPPRESS:
                    assert not re.search(
                        rf"^\| `{re.escape(spelling)}(?=[ ,`])", rows, flags=re.MULTILINE
                    ), f"hidden alias {spelling} of `{parser.prog} {name}` is listed"
                else:
                    assert spelling in rows, (
                        f"{spelling} of `{parser.prog} {name}` is missing from the CLI reference"
                    )


def test_cli_reference_renders_usage_description_and_the_overview(cli_reference):
    parser = build_parser()
    page = cli_reference.render_cli_reference(parser)
    for name, _, _summary, _subparser in cli_reference.subcommands(parser):
        section = _sections(page, parser.prog)[name]
        assert f"usage: {parser.prog} {name}" in section
        assert f"(#{parser.prog}-{name})" in page  # the overview table links every subcommand


def test_cli_reference_of_a_small_parser(cli_reference):
    """Hidden flags and hidden subcommands are left out; aliases, defaults, groups and pipes are
    rendered."""
    parser = argparse.ArgumentParser(prog="tool", description="A tool.")
    commands = parser.add_subparsers(dest="command")
    run = commands.add_parser("run", aliases=["go"], help="run it", description="Run the thing.")
    run.add_argument("file", help="input file")
    run.add_argument("--mode", choices=["a", "b"], default="a", help="mode (%(choices)s)")
    run.add_argument("--dask", metavar="local|ADDRESS", help="where to run")
    run.add_argument("--old-mode", dest="mode", help=argparse.SUPPRESS)
    group = run.add_mutually_exclusive_group(required=True)
    group.add_argument("--x", action="store_true", help="x")
    group.add_argument("--y", action="store_true", help="y * with _markdown_ | chars")
    commands.add_parser("secret", help=argparse.SUPPRESS)

    page = cli_reference.render_cli_reference(parser)
    sections = _sections(page, "tool")
    assert set(sections) == {"run"}
    rows = _table_rows(sections["run"])
    assert any(row.startswith("| `--mode {a,b}` | mode (a, b) | `a` |") for row in rows)
    assert any(row.startswith("| `--dask local|ADDRESS` |") for row in rows)
    assert any(row.startswith("| `file` | input file |") for row in rows)
    assert not any("--old-mode" in row for row in rows)
    assert r"y \* with \_markdown\_ \| chars" in sections["run"]
    assert "Also spelled `go`." in sections["run"]
    assert "exactly one of `--x`, `--y`" in sections["run"]
    assert "Run the thing." in sections["run"]


def test_cli_reference_hook_fills_only_its_page(cli_reference):
    class Page:
        def __init__(self, uri):
            self.file = type("File", (), {"src_uri": uri})()

    marker = cli_reference.MARKER
    assert (
        cli_reference.on_page_markdown(f"# x\n{marker}\n", Page("other.md"), None, None)
        == f"# x\n{marker}\n"
    )
    filled = cli_reference.on_page_markdown(
        f"# CLI\n\n{marker}\n", Page(cli_reference.PAGE), None, None
    )
    assert marker not in filled and "## Overview" in filled
    with pytest.raises(ValueError):
        cli_reference.on_page_markdown(
            "# CLI without its marker\n", Page(cli_reference.PAGE), None, None
        )


def test_api_reference_covers_every_public_module(tmp_path):
    pytest.importorskip("mkdocs")
    api = _hook("api_reference")
    root = link_layout(tmp_path)
    for area in AREAS:
        modules = api.public_modules(root, f"cosched.{area}")
        folder = root / "cosched" / area
        for path in folder.rglob("*.py"):
            name = ".".join(
                ("cosched", area, *path.relative_to(folder).with_suffix("").parts)
            ).removesuffix(".__init__")
            if (
                name == f"cosched.{area}"
                or api.CLI_MODULE.match(path.stem)
                or not api._declares_all(path)
            ):
                assert name not in modules
            else:
                assert name in modules, f"{name} declares __all__ but is not in the API reference"
        assert not any(module.rsplit(".", 1)[-1] == "cli" for module in modules)
    shared = api.public_modules(root, "cosched")
    assert "cosched.errors" in shared and not any(
        module.startswith("cosched.theory") for module in shared
    )


def _docs_config(monkeypatch, url: str | None):
    # the docs extra (CI installs it); the README's test setup has only the test extra
    load_config = pytest.importorskip("mkdocs.config").load_config

    if url is None:
        monkeypatch.delenv("COSCHED_DOCS_URL", raising=False)
    else:
        monkeypatch.setenv("COSCHED_DOCS_URL", url)
    return load_config(str(ROOT / "mkdocs.yml"))


def test_docs_site_url_is_set_and_follows_the_published_address(monkeypatch):
    # without site_url, MkDocs writes the 404 page's links root-absolute ("/model/"), which break
    # when the site is served below a path
    assert _docs_config(monkeypatch, None)["site_url"] == "http://127.0.0.1:8000/"
    published = "https://example.org/cosched/"
    assert _docs_config(monkeypatch, published)["site_url"] == published


@pytest.mark.slow
def test_docs_404_page_links_stay_below_the_published_path(tmp_path, monkeypatch):
    from mkdocs.commands.build import build

    config = _docs_config(monkeypatch, "https://example.org/cosched/")
    config["site_dir"] = str(tmp_path)
    build(config)
    page = (tmp_path / "404.html").read_text()
    links = re.findall(r'(?:href|src)="(/[^"]*)"', page)
    assert links, "the 404 page links to the site"
    assert all(link.startswith("/cosched/") for link in links), [
        link for link in links if not link.startswith("/cosched/")
    ][:5]
