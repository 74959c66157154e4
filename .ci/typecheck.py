#!/usr/bin/env python3
"""Type-check the installed layout with mypy: `python .ci/typecheck.py [PACKAGE ...]` (default: all
of cosched).

The area folders (theory/, strategies/, simulator/, measurement/) install inside `cosched` through
the package-dir mapping of setup.py, which mypy does not follow. This script links the installed
layout into a temporary folder (symbolic links, nothing copied) and runs mypy there with the
[tool.mypy] settings of pyproject.toml. Paths in mypy's messages read `cosched/<area>/...`: the file
is `<area>/...` in the repository.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # cosched._layout from this checkout, installed or not

from cosched._layout import link_layout, repository_folders  # noqa: E402


def main(packages: list[str]) -> int:
    from mypy import api

    with tempfile.TemporaryDirectory(prefix="cosched-mypy-") as folder:
        link_layout(Path(folder), repository_folders(ROOT))
        arguments = [
            "--config-file",
            str(ROOT / "pyproject.toml"),
            "--cache-dir",
            str(Path(folder) / ".cache"),
        ]
        for package in packages:
            arguments += ["-p", package]
        cwd = os.getcwd()
        os.chdir(folder)
        try:
            stdout, stderr, status = api.run(arguments)
        finally:
            os.chdir(cwd)
    sys.stdout.write(stdout)
    sys.stderr.write(stderr)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
