"""The area folders and the guard against importing one of them under its folder name.

The folders ``theory/``, ``strategies/``, ``simulator/`` and ``measurement/`` sit at the top of the
repository but install inside the one import package `cosched` (``cosched.simulator``, ...). From
the repository root, ``import simulator.engine`` would otherwise load a second copy of the area,
whose classes are not those of ``cosched.simulator`` (an ``isinstance`` check against the other copy
fails).
"""

from __future__ import annotations

# setup.py derives the package list from them
AREAS = ("theory", "strategies", "simulator", "measurement")


def require_package_name(name: str, area: str) -> None:
    """Raise ImportError unless the area's package was imported as ``cosched.<area>`` (`name` is its
    __name__)."""
    if name != f"cosched.{area}":
        raise ImportError(
            f"import cosched.{area}, not {name}: the folder {area}/ installs inside the package "
            f"cosched (pip install -e .), and importing it under its folder name would load a "
            f"second copy"
        )
