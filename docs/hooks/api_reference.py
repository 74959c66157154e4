"""MkDocs hook: the API reference, generated from the docstrings of every public module.

Two jobs at build time:

1. The area folders sit at the top of the repository and install inside `cosched` through the
   setuptools package-dir mapping. griffe, which mkdocstrings uses to read docstrings, walks source
   folders and does not follow that mapping, so the hook assembles the installed layout (`cosched/`
   with the areas inside it, Python sources only) in a temporary folder and points the Python
   handler there.
2. A page line ``<!-- api-modules: cosched.theory -->`` becomes one ``::: module`` block per public
   module of that package (a module that declares a non-empty ``__all__``; command-line modules are
   left to the CLI reference), so a new module appears in the reference without editing the page.
"""

from __future__ import annotations

import ast
import atexit
import importlib
import re
import shutil
import tempfile
from pathlib import Path

from mkdocs.plugins import event_priority

AREAS = ("theory", "strategies", "simulator", "measurement")
MARKER = re.compile(r"^<!-- api-modules: ([\w.]+) -->$", re.MULTILINE)
CLI_MODULE = re.compile(r"^(cli|\w+_cli|__main__)$")

__all__ = ["AREAS", "assemble_sources", "public_modules", "on_config", "on_page_markdown"]

_sources: Path | None = None


def _not_python(folder: str, names: list[str]) -> list[str]:
    """copytree filter: keep folders and Python sources, skip data files and caches."""
    return [
        name
        for name in names
        if name == "__pycache__"
        or (not name.endswith(".py") and not (Path(folder) / name).is_dir())
    ]


def assemble_sources(root: Path) -> Path:
    """Copy the installed `cosched` package with its areas into `root/cosched`; return `root`."""
    target = root / "cosched"
    shutil.copytree(
        Path(importlib.import_module("cosched").__file__).parent, target, ignore=_not_python
    )
    for area in AREAS:
        if not (
            target / area
        ).exists():  # a regular (non-editable) install already has it inside cosched/
            source = Path(importlib.import_module(f"cosched.{area}").__file__).parent
            shutil.copytree(source, target / area, ignore=_not_python)
    return root


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
    found = []
    for path in sorted(
        folder.rglob("*.py"), key=lambda path: (len(path.relative_to(folder).parts), str(path))
    ):
        parts = path.relative_to(folder).with_suffix("").parts
        if package == "cosched" and parts[0] in AREAS:
            continue
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
    assemble_sources(_sources)
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
