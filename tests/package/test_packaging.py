"""Packaging: every package folder and data file ships, and an area is importable only as
`cosched.<area>`.

The area folders sit at the top of the repository and install inside `cosched`; setup.py derives the
package list from the folders. The fast tests check the derivation against the tree; the slow one
builds the wheel and reads what is in it.
"""

from __future__ import annotations

import fnmatch
import importlib.util
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import tomllib

from cosched._areas import AREAS

ROOT = Path(__file__).resolve().parents[2]


def _setup_module():
    """setup.py as a module (it calls setup() only when run as a script)."""
    spec = importlib.util.spec_from_file_location("cosched_setup", ROOT / "setup.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# folders of bundled projects: data shipped with the package (a user's algorithm file is no module
# of it)
DATA_FOLDERS = {"presets"}


def _package_folders() -> dict[str, Path]:
    """Every folder holding Python sources below cosched/ and the areas -> its dotted name when
    installed."""
    folders = {}
    for top, name in (("cosched", "cosched"), *((area, f"cosched.{area}") for area in AREAS)):
        for path in (ROOT / top).rglob("*.py"):
            parts = path.parent.relative_to(ROOT / top).parts
            if "__pycache__" not in parts and not set(parts) & DATA_FOLDERS:
                folders[".".join((name, *parts))] = path.parent
    return folders


def _data_patterns() -> list[str]:
    document = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return document["tool"]["setuptools"]["package-data"]["*"]


def test_setup_uses_the_areas_of_the_package():
    assert _setup_module().AREAS == AREAS


def test_every_folder_with_sources_is_a_package_of_the_distribution():
    folders = _package_folders()
    assert sorted(_setup_module().packages()) == sorted(folders)
    assert all((folder / "__init__.py").exists() for folder in folders.values())


def test_every_data_file_matches_a_package_data_pattern():
    patterns = _data_patterns()
    data = [
        path
        for folder in _package_folders().values()
        for path in folder.iterdir()
        if path.is_file() and path.suffix not in (".py", ".pyc")
    ]
    assert data, "the bundled data files were not found"
    assert [path for path in data if not any(fnmatch.fnmatch(path.name, p) for p in patterns)] == []


@pytest.mark.parametrize("area", AREAS)
def test_an_area_imported_under_its_folder_name_fails_naming_the_package(area):
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run(
        [sys.executable, "-c", f"import {area}"],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0
    assert f"import cosched.{area}, not {area}" in result.stderr.strip().splitlines()[-1]


@pytest.mark.slow
def test_the_wheel_holds_every_package_and_data_file(tmp_path):
    """Build the wheel (isolated build, as `pip install .` does) and compare its files with the
    tree."""
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(ROOT)],
        check=True,
        timeout=600,
    )
    (wheel,) = tmp_path.glob("cosched-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = set()
    for package, folder in _package_folders().items():
        prefix = package.replace(".", "/")
        for path in folder.iterdir():
            if path.is_file() and path.suffix != ".pyc":
                expected.add(f"{prefix}/{path.name}")
    assert sorted(expected - names) == []


# run from the checkout's root with the editable install's finder removed: what a regular
# `pip install .` sees there (the checkout's cosched/ hides the installed one)
AS_REGULAR_INSTALL = (
    "import sys; sys.meta_path[:] = [f for f in sys.meta_path if 'Editable' not in repr(f)]; "
)


@pytest.mark.parametrize("area", AREAS)
def test_an_area_imports_from_the_checkout_root_as_installed(area):
    result = subprocess.run(
        [sys.executable, "-c", f"{AS_REGULAR_INSTALL}import cosched.{area}; print(cosched.{area})"],
        cwd=ROOT,
        env={key: value for key, value in os.environ.items() if key != "PYTHONPATH"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert str(ROOT / area) in result.stdout
