"""cosched: HPC co-scheduling research toolkit (shared errors, output helpers and the CLI)."""

from cosched.errors import InputError

__all__ = ["InputError"]
__version__ = "0.3.0"
