"""Bundled example data: a small SYNTHETIC NPB-like heatmap and application seed (see make_example.py)."""
from __future__ import annotations

from importlib.resources import files
from pathlib import Path

__all__ = ["EXAMPLE_HEATMAP", "EXAMPLE_SEED", "data_path"]

EXAMPLE_HEATMAP = "synthetic_npb_heatmap.csv"
EXAMPLE_SEED = "synthetic_npb_seed.json"


def data_path(name: str) -> Path:
    """Path of a bundled data file."""
    return Path(str(files(__name__) / name))
