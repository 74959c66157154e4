"""Find the area folders next to `cosched/` when the package is imported from a checkout.

A regular install puts ``theory/`` ... inside ``cosched/``; the checkout keeps them beside it. From
the checkout's root, Python imports the checkout's ``cosched/`` (the current folder comes first on
the path) and would then miss ``cosched.theory``, hiding the installed copy. `CheckoutAreas` maps
``cosched.<area>`` to the folder beside the package, so the checkout imports exactly as installed.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
from pathlib import Path

from cosched._areas import AREAS

__all__ = ["CheckoutAreas", "install_checkout_areas"]


class CheckoutAreas:
    """Import finder for ``cosched.<area>`` from ``root/<area>`` (only the areas, nothing else).

    A meta path finder needs only `find_spec`; it does not subclass importlib.abc's, whose import
    (importlib.resources and more) every command would pay at start."""

    def __init__(self, root: Path):
        self.root = root

    def find_spec(self, fullname, path=None, target=None) -> importlib.machinery.ModuleSpec | None:
        package, _, area = fullname.partition(".")
        if package != "cosched" or area not in AREAS:
            return None
        folder = self.root / area
        return importlib.util.spec_from_file_location(
            fullname, folder / "__init__.py", submodule_search_locations=[str(folder)]
        )


def install_checkout_areas(package_folder: Path) -> None:
    """Add a `CheckoutAreas` finder when `package_folder` (cosched/) lacks the areas and its parent
    folder holds them (a checkout); an installed package or an editable install needs none."""
    root = package_folder.parent
    if all((package_folder / area).is_dir() for area in AREAS):
        return
    if not all((root / area / "__init__.py").is_file() for area in AREAS):
        return
    if not any(isinstance(finder, CheckoutAreas) for finder in sys.meta_path):
        sys.meta_path.append(CheckoutAreas(root))
