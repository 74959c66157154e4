"""cosched: HPC co-scheduling research toolkit (shared errors, output helpers and the CLI)."""

from pathlib import Path

from cosched._checkout import install_checkout_areas
from cosched.errors import InputError

install_checkout_areas(Path(__file__).resolve().parent)  # cosched.<area> from a checkout's root

__all__ = ["InputError"]
__version__ = "0.3.0"
