"""Bundled example data: a small SYNTHETIC NPB-like heatmap and application seed (see
make_example.py)."""

from __future__ import annotations

from pathlib import Path

from cosched.deprecation import module_aliases

__all__ = ["EXAMPLE_HEATMAP", "EXAMPLE_SEED", "example_path"]

EXAMPLE_HEATMAP = "synthetic_npb_heatmap.csv"
EXAMPLE_SEED = "synthetic_npb_seed.json"


def example_path(name: str) -> Path:
    """Path of a bundled example file (the real data files are `cosched.data.data_path`)."""
    from importlib.resources import files  # on use: importlib.resources costs every start

    return Path(str(files(__name__) / name))


__getattr__ = module_aliases(
    __name__, {"data_path": "example_path"}, globals()
)  # the name before 0.3.0
