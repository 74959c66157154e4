"""The compiled hot modules: what setup.py compiles, and the import guard that loads their source
instead of a stale or unwanted extension (cosched/_compiled.py)."""

from __future__ import annotations

import importlib.machinery
import importlib.util
from pathlib import Path

import pytest

from cosched._compiled import (
    COMPILED_MODULES,
    HASH_SUFFIX,
    PURE_PYTHON_VARIABLE,
    SourceGuard,
    source_hash,
)

ROOT = Path(__file__).resolve().parents[2]
EXTENSION_SUFFIX = importlib.machinery.EXTENSION_SUFFIXES[0]


def _setup_module():
    spec = importlib.util.spec_from_file_location("cosched_setup", ROOT / "setup.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_compiled_module_maps_to_its_source_file():
    setup = _setup_module()
    assert setup._compiled_module_names() == COMPILED_MODULES
    sources = [ROOT / setup._source_of(name) for name in COMPILED_MODULES]
    assert [path for path in sources if not path.is_file()] == []
    assert setup._source_of("cosched.simulator.schedulers.base") == "simulator/schedulers/base.py"


def test_a_build_drops_the_extensions_of_modules_no_longer_compiled(tmp_path):
    """An extension left in the build folder by an earlier build would ship and load unguarded."""
    setup = _setup_module()
    assert setup.SIDECAR_SUFFIX == HASH_SUFFIX
    folder = tmp_path / "cosched" / "simulator"
    folder.mkdir(parents=True)
    for name in ("engine", "retired"):
        (folder / f"{name}{EXTENSION_SUFFIX}").write_bytes(b"")
        (folder / f"{name}{HASH_SUFFIX}").write_text("0\n")
    setup.drop_stale_extensions(tmp_path, {"cosched.simulator.engine"})
    assert sorted(path.name for path in folder.iterdir()) == sorted(
        [f"engine{EXTENSION_SUFFIX}", f"engine{HASH_SUFFIX}"]
    )


def test_every_pxd_reaches_the_compiler_under_its_module_name(tmp_path):
    """A compiled module cimports another's declarations by its installed name
    (``cosched.simulator.view``): the build's include folder holds each .pxd at that path, and
    every .pxd augments a compiled module (a stray one would compile nothing)."""
    setup = _setup_module()
    root = setup.pxd_tree(tmp_path)
    found = sorted(path.relative_to(root).as_posix() for path in root.rglob("*.pxd"))
    assert "cosched/simulator/view.pxd" in found
    assert "cosched/simulator/schedulers/backfilling.pxd" in found
    compiled = {name.replace(".", "/") + ".pxd" for name in COMPILED_MODULES}
    assert [name for name in found if name not in compiled] == []
    for name in found:
        source = ROOT / setup._source_of(name[: -len(".pxd")].replace("/", "."))
        assert (root / name).read_bytes() == source.with_suffix(".pxd").read_bytes()


def test_the_source_distribution_takes_the_pxd_files():
    assert "recursive-include simulator *.pxd" in (ROOT / "MANIFEST.in").read_text()


@pytest.mark.parametrize("command", ["editable_wheel", "develop"])
def test_an_editable_install_compiles_nothing(monkeypatch, command):
    setup = _setup_module()
    monkeypatch.delenv("COSCHED_NO_COMPILE", raising=False)
    monkeypatch.setattr("sys.argv", ["setup.py", command])
    assert setup.extensions() == []
    monkeypatch.setattr("sys.argv", ["setup.py", "bdist_wheel"])
    assert [ext.name for ext in setup.extensions()] == list(COMPILED_MODULES)
    monkeypatch.setenv("COSCHED_NO_COMPILE", "1")
    assert setup.extensions() == []


@pytest.fixture
def package(tmp_path, monkeypatch):
    """A folder with a hot module's source `hot.py` and a (fake) extension beside it."""
    monkeypatch.delenv(PURE_PYTHON_VARIABLE, raising=False)
    (tmp_path / "hot.py").write_text("VALUE = 1\n")
    (tmp_path / f"hot{EXTENSION_SUFFIX}").write_bytes(b"not loaded by these tests")
    return tmp_path


def _origin(folder: Path) -> str | None:
    """Where the guard sends the import of pkg.hot: the source's path, or None (the extension)."""
    spec = SourceGuard(("pkg.hot",)).find_spec("pkg.hot", [str(folder)])
    return None if spec is None else spec.origin


def test_an_extension_built_from_the_current_source_is_used(package):
    (package / f"hot{HASH_SUFFIX}").write_text(source_hash(package / "hot.py") + "\n")
    assert _origin(package) is None


def test_an_extension_of_an_edited_source_is_never_loaded(package):
    (package / f"hot{HASH_SUFFIX}").write_text(source_hash(package / "hot.py") + "\n")
    (package / "hot.py").write_text("VALUE = 2\n")
    assert _origin(package) == str(package / "hot.py")


def test_an_extension_without_its_source_hash_is_never_loaded(package):
    assert _origin(package) == str(package / "hot.py")


def test_pure_python_is_loaded_when_asked_for(package, monkeypatch):
    (package / f"hot{HASH_SUFFIX}").write_text(source_hash(package / "hot.py") + "\n")
    monkeypatch.setenv(PURE_PYTHON_VARIABLE, "1")
    assert _origin(package) == str(package / "hot.py")
    monkeypatch.setenv(PURE_PYTHON_VARIABLE, "0")
    assert _origin(package) is None


def test_modules_without_an_extension_and_other_modules_are_left_to_the_ordinary_finders(package):
    (package / f"hot{EXTENSION_SUFFIX}").unlink()
    assert _origin(package) is None
    assert SourceGuard(("pkg.hot",)).find_spec("pkg.other", [str(package)]) is None


def test_the_guard_comes_before_the_ordinary_finders():
    import sys

    import cosched  # noqa: F401  (installs the guard)

    guard = next(i for i, finder in enumerate(sys.meta_path) if isinstance(finder, SourceGuard))
    assert guard < sys.meta_path.index(importlib.machinery.PathFinder)


@pytest.mark.slow
def test_without_a_c_compiler_the_wheel_builds_as_plain_python(tmp_path):
    """A failing compiler leaves every hot module as plain Python, and the build still succeeds."""
    import os
    import shutil
    import subprocess
    import sys
    import zipfile

    from cosched._areas import AREAS

    source = tmp_path / "source"  # a copy: no build/ folder of an earlier compile to reuse
    source.mkdir()
    for name in ("setup.py", "pyproject.toml", "build_backend.py", "MANIFEST.in", "README.md"):
        shutil.copy2(ROOT / name, source / name)
    ignore = shutil.ignore_patterns("__pycache__", f"*{EXTENSION_SUFFIX}", f"*{HASH_SUFFIX}")
    for folder in ("cosched", *AREAS):
        shutil.copytree(ROOT / folder, source / folder, ignore=ignore)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(source)],
        check=True,
        timeout=900,
        env={**os.environ, "CC": "false"},
    )
    (wheel,) = tmp_path.glob("cosched-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert [name for name in names if name.endswith((EXTENSION_SUFFIX, HASH_SUFFIX))] == []
    assert "cosched/simulator/engine.py" in names


def test_only_a_wheel_build_asks_for_cython(monkeypatch):
    """An editable install (tests, CI) compiles nothing and does not fetch Cython."""
    spec = importlib.util.spec_from_file_location(
        "cosched_build_backend", ROOT / "build_backend.py"
    )
    backend = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(backend)
    monkeypatch.setattr(backend.build_meta, "get_requires_for_build_wheel", lambda settings: [])
    assert backend.get_requires_for_build_wheel() == [backend.CYTHON]
    assert (
        backend.get_requires_for_build_editable
        is backend.build_meta.get_requires_for_build_editable
    )
