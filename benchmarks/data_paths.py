"""Where the benchmarks find their data, without machine paths.

Bundled real data (ELiSE heatmaps, the KTH-SP2 trace) comes from the installed package by preset
name (`cosched.data`). The large traces are not bundled: they are read from ``../shared/data`` next
to the repository checkout, or from the folder (holding swf/ and heatmaps/) named by
COSCHED_SHARED_DATA.
"""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("COSCHED_SHARED_DATA", REPO.parent / "shared" / "data"))
