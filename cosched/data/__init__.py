"""Real data bundled with cosched, each file with its provenance and licence in README.txt.

A preset is a short name for a bundled file. The loaders accept a preset wherever they accept a
file, so ``read_heatmap("aris-nas")`` and ``cosched simulate --heatmap aris-nas`` read the same
file, as do ``load_workload("kth-sp2")`` and ``--workload kth-sp2``. A preset name wins over a file
of the same name in the current folder (write ``./aris-nas`` for the file).

Platforms are shapes, not files: their presets (``kth-sp2`` = the 100 single-processor nodes of the
bundled trace, ``aris``, ``grvingt``, ...) are ``cosched.simulator.platform.PRESETS``, read by
``load_platform``.
"""

from __future__ import annotations

import os
from pathlib import Path

from cosched.deprecation import module_aliases
from cosched.errors import InputError
from cosched.names import did_you_mean

__all__ = ["HEATMAPS", "WORKLOADS", "DATA_PRESETS", "data_path", "resolve"]

# ELiSE co-run heatmaps in the thesis Table 4.1 layout (+ 2 speedup columns the reader ignores).
HEATMAPS = {
    "aris-nas": "derived_pairs_aris_NAS.csv",  # 33 NPB loads on ARIS, 421 pairs
    "aris-spec": "derived_pairs_aris_SPEC.csv",  # 8 SPEChpc 2021 loads on ARIS, 35 pairs
    "g5k-nas": "derived_pairs_g5k_grvingt_NAS.csv",  # 13 NPB loads on Grid'5000 grvingt, 91 pairs
    # 8 NPB loads x 256 on Marconi, transcribed from 000 Fig. 2
    "marconi-fig2": "marconi_npb256_fig2.csv",
}
# Parallel Workloads Archive traces (SWF, gzipped as published); run them on the platform of the
# same name.
WORKLOADS = {
    "nasa-ipsc": "NASA-iPSC-1993-3.1-cln.swf.gz",  # 18,239 records, NASA Ames iPSC/860, 128 nodes
    "kth-sp2": "KTH-SP2-1996-2.1-cln.swf.gz",  # 28,476 records, KTH IBM SP2, 100 nodes
    "sdsc-sp2": "SDSC-SP2-1998-4.2-cln.swf.gz",  # 59,715 records, SDSC IBM SP2, 128 nodes
    "ctc-sp2": "CTC-SP2-1996-3.1-cln.swf.gz",  # 77,222 records, CTC IBM SP2, 338 nodes
}
DATA_PRESETS = {"heatmap": HEATMAPS, "workload": WORKLOADS}  # kind -> its presets
# the name before 0.3.0
__getattr__ = module_aliases(__name__, {"PRESETS": "DATA_PRESETS"}, globals())


def data_path(name: str) -> Path:
    """Path of a bundled data file (by file name): beside this module, as the package is installed
    as files (importlib.resources, with tempfile and more, would cost a preset's every run)."""
    return Path(__file__).with_name(name)


def resolve(kind: str, spec: str | os.PathLike) -> str | os.PathLike:
    """The bundled file of preset `spec` of `kind` ("heatmap", "workload"), else `spec` itself if it
    exists.

    Anything else raises InputError naming `spec` and listing the presets of that kind.
    """
    presets = DATA_PRESETS[kind]
    name = os.fspath(spec)
    bundled = presets.get(name.lower())
    if bundled is not None:
        return data_path(bundled)
    if not Path(name).exists():
        raise InputError(
            f"no such file, nor a {kind} preset ({', '.join(presets)})"
            + did_you_mean(name, presets),
            source=name,
        )
    return spec
