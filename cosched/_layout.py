"""The installed layout of `cosched` as symbolic links, for tools that walk source folders.

The area folders sit at the top of the repository and install inside `cosched` through the
package-dir mapping of setup.py. Tools that read sources by walking folders (mypy in
``.ci/typecheck.py``, griffe in the API-reference hook of the documentation) do not follow that
mapping. `link_layout` gives them the installed layout, ``cosched/`` with each area inside it, as
symbolic links to the real folders: nothing is copied, and paths below an area are the real files.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping
from pathlib import Path

from cosched._areas import AREAS

__all__ = ["installed_folders", "link_layout", "repository_folders"]

PACKAGES = ("cosched", *(f"cosched.{area}" for area in AREAS))


def repository_folders(root: Path) -> dict[str, Path]:
    """The folder of `cosched` and of each ``cosched.<area>`` in the repository at `root`."""
    return {"cosched": root / "cosched", **{f"cosched.{area}": root / area for area in AREAS}}


def installed_folders() -> dict[str, Path]:
    """The folder each of `cosched` and ``cosched.<area>`` is imported from by this Python (an
    editable install maps them to the repository, a regular one has the areas inside cosched/)."""
    folders = {}
    for package in PACKAGES:
        spec = importlib.util.find_spec(package)
        if spec is None or spec.origin is None:
            raise ImportError(f"{package} is not installed (pip install -e .)")
        folders[package] = Path(spec.origin).parent
    return folders


def link_layout(target: Path, folders: Mapping[str, Path] | None = None) -> Path:
    """Build ``target/cosched`` from symbolic links and return `target`.

    ``target/cosched`` is a real folder holding a link to every entry of the `cosched` folder
    (caches and any area folder left out) and one link per area to that area's folder. `folders`
    maps each package to its folder (`repository_folders` or, by default, `installed_folders`).
    Removing the tree (`shutil.rmtree`) removes the links, never what they point to.
    """
    folders = installed_folders() if folders is None else folders
    package = target / "cosched"
    package.mkdir()
    for path in sorted(folders["cosched"].iterdir()):
        if path.name != "__pycache__" and path.name not in AREAS:
            (package / path.name).symlink_to(path, target_is_directory=path.is_dir())
    for area in AREAS:
        (package / area).symlink_to(folders[f"cosched.{area}"], target_is_directory=True)
    return target
