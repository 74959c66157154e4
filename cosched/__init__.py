"""cosched: HPC co-scheduling research toolkit (shared errors, output helpers and the CLI)."""

from pathlib import Path

from cosched._checkout import install_checkout_areas
from cosched._compiled import install_source_guard
from cosched.errors import InputError

install_source_guard()  # the hot modules' source instead of a stale or unwanted compiled copy
install_checkout_areas(Path(__file__).resolve().parent)  # cosched.<area> from a checkout's root

__all__ = ["InputError"]
__version__ = "0.3.0"
