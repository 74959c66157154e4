"""MkDocs hook: the API reference, generated from the docstrings of every public module.

Two jobs at build time:

1. The area folders sit at the top of the repository and install inside `cosched` through the
   setuptools package-dir mapping. griffe, which mkdocstrings uses to read docstrings, walks source
   folders and does not follow that mapping, so the hook links the installed layout (`cosched/`
   with the areas inside it, symbolic links made by `cosched._layout`, nothing copied) into a
   temporary folder and points the Python handler there.
2. A page line ``<!-- api-modules: cosched.theory -->`` becomes one ``::: module`` block per public
   module of that package (a module that declares a non-empty ``__all__``; command-line modules are
   left to the CLI reference), so a new module appears in the reference without editing the page.
"""

from __future__ import annotations

import ast
import atexit
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from mkdocs.plugins import event_priority

from cosched._areas import AREAS
from cosched._layout import link_layout

MARKER = re.compile(r"^<!-- api-modules: ([\w.]+) -->$", re.MULTILINE)
CLI_MODULE = re.compile(r"^(cli|\w+_cli|__main__)$")

__all__ = ["public_modules", "on_config", "on_page_markdown"]

_sources: Path | None = None


def _python_files(folder: Path, skip: tuple[str, ...] = ()) -> Iterator[Path]:
    """Every Python file below `folder`, through symbolic links, leaving out the top-level folders
    named in `skip` and caches."""
    for parent, folders, files in os.walk(folder, followlinks=True):
        folders[:] = [
            name
            for name in folders
            if name != "__pycache__" and not (Path(parent) == folder and name in skip)
        ]
        yield from (Path(parent) / name for name in files if name.endswith(".py"))


def _declares_all(path: Path) -> bool:
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        targets = (
            node.targets
            if isinstance(node, ast.Assign)
            else [node.target]
            if isinstance(node, ast.AnnAssign)
            else []
        )
        if any(isinstance(target, ast.Name) and target.id == "__all__" for target in targets):
            return isinstance(node.value, (ast.List, ast.Tuple)) and bool(node.value.elts)
    return False


def public_modules(root: Path, package: str) -> list[str]:
    """Dotted names of the public modules of `package` under `root`, its own `__init__` excluded.

    Subpackages come after the plain modules; for `cosched` itself the area packages are left out
    (each has its own page).
    """
    folder = root.joinpath(*package.split("."))
    skip = AREAS if package == "cosched" else ()
    found = []
    for path in sorted(
        _python_files(folder, skip),
        key=lambda path: (len(path.relative_to(folder).parts), str(path)),
    ):
        parts = path.relative_to(folder).with_suffix("").parts
        if (
            parts == ("__init__",)
            or CLI_MODULE.match(parts[-1])
            or any(part.startswith("_") for part in parts[:-1])
        ):
            continue
        if parts[-1].startswith("_") and parts[-1] != "__init__":
            continue
        if _declares_all(path):
            found.append(".".join((package, *parts)).removesuffix(".__init__"))
    return found


@event_priority(100)  # before the mkdocstrings plugin reads its handler options
def on_config(config):
    global _sources
    _sources = Path(tempfile.mkdtemp(prefix="cosched-api-"))
    atexit.register(shutil.rmtree, _sources, True)
    link_layout(_sources)  # the installed layout, as symbolic links
    config.plugins["mkdocstrings"].config.handlers.setdefault("python", {})["paths"] = [
        str(_sources)
    ]
    return config


def on_page_markdown(markdown: str, page, config, files) -> str:
    """Expand every ``<!-- api-modules: PACKAGE -->`` line into ``::: module`` blocks."""

    def blocks(match: re.Match) -> str:
        modules = public_modules(_sources, match.group(1))
        if not modules:
            raise ValueError(f"{page.file.src_uri}: no public module in {match.group(1)}")
        return "\n\n".join(f"::: {module}" for module in modules)

    return MARKER.sub(blocks, markdown)
