"""Build script: the package list, derived from the folders (pyproject.toml holds everything else).

The area folders stay at the top of the repository but install inside the one import package
`cosched` (``theory/`` as ``cosched.theory``, ...). setuptools' own package discovery does not
follow such a mapping, so the list is derived here: every folder with an ``__init__.py`` below
``cosched/`` and below each area. A new subpackage therefore ships in the wheel without editing any
list.

It also compiles the simulator's hot modules with Cython, from their unmodified ``.py`` files
(``cosched/_compiled.py`` lists them and explains how the source can still run): only in a regular
build (``pip install .``, a wheel), never in an editable one, and never at the cost of the install:
without Cython or a C compiler, or with ``COSCHED_NO_COMPILE=1``, the package installs as plain
Python, with the same results.
"""

import hashlib
import importlib.machinery
import importlib.util
import os
import shutil
import sys
from pathlib import Path

from setuptools import Extension, find_packages, setup
from setuptools.command.build_ext import build_ext

# top-level folders installed as cosched.<area>
AREAS = ("theory", "strategies", "simulator", "measurement")
HERE = Path(__file__).resolve().parent
SIDECAR_SUFFIX = ".source-sha256"  # `HASH_SUFFIX` of cosched/_compiled.py
PACKAGE_DIR = {"cosched": "cosched", **{f"cosched.{area}": area for area in AREAS}}


def packages() -> list[str]:
    """Every import package of the distribution, by dotted name."""
    found = []
    for package, folder in PACKAGE_DIR.items():
        found += [package, *(f"{package}.{name}" for name in find_packages(folder))]
    return found


def _compiled_module_names() -> tuple[str, ...]:
    """`COMPILED_MODULES` of cosched/_compiled.py, read without importing the package."""
    spec = importlib.util.spec_from_file_location("_compiled", HERE / "cosched" / "_compiled.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.COMPILED_MODULES


def _source_of(module: str) -> str:
    """The repository path of a module: cosched.simulator.engine -> simulator/engine.py."""
    package, _, name = module.rpartition(".")
    parts = package.split(".")
    while ".".join(parts) not in PACKAGE_DIR:
        name = f"{parts.pop()}/{name}"
    return f"{PACKAGE_DIR['.'.join(parts)]}/{name}.py"


def extensions() -> list[Extension]:
    """The hot modules as extensions, or none: in an editable install (the tests must see the
    current source) or when COSCHED_NO_COMPILE is set."""
    editable = {"editable_wheel", "develop"} & set(sys.argv)
    if editable or os.environ.get("COSCHED_NO_COMPILE", "") not in ("", "0"):
        return []
    return [Extension(name, [_source_of(name)]) for name in _compiled_module_names()]


class OptionalBuildExt(build_ext):
    """Each hot module translated by Cython and compiled, if Cython and a C compiler are there and
    both steps succeed; else that module stays plain Python (with a warning), and the install goes
    on. Each extension gets a sidecar with its source's hash (the import guard of
    cosched/_compiled.py loads the source instead when they differ)."""

    def run(self) -> None:
        drop_stale_extensions(Path(self.build_lib), {ext.name for ext in self.extensions})
        try:
            import Cython.Build  # noqa: F401
        except ImportError:
            print(
                "cosched: Cython is not installed; the simulator stays plain Python",
                file=sys.stderr,
            )
            return
        super().run()

    def build_extension(self, ext: Extension) -> None:
        from Cython.Build import cythonize

        target = Path(self.get_ext_fullpath(ext.name))
        source = Path(_source_of(ext.name))
        try:
            # annotation_typing off: annotations stay hints, so the compiled code accepts exactly
            # what the Python source accepts (an `int` annotation would reject numpy integers)
            (translated,) = cythonize(
                [ext],
                build_dir=self.build_temp,
                include_path=[str(pxd_tree(Path(self.build_temp)))],
                compiler_directives={"language_level": 3, "annotation_typing": False},
                quiet=True,
            )
            ext.sources = translated.sources
            super().build_extension(ext)
        except Exception as error:  # no compiler, or a construct Cython or the compiler refuses
            print(f"cosched: {ext.name} stays plain Python ({error})", file=sys.stderr)
            target.unlink(missing_ok=True)
            return
        _sidecar(target, ext.name).write_text(
            hashlib.sha256(source.read_bytes()).hexdigest() + "\n"
        )


def pxd_tree(folder: Path) -> Path:
    """A copy of every ``.pxd`` of the source laid out as the installed package (``simulator/``
    under ``cosched/simulator/``), in `folder`: where Cython finds the declarations a compiled
    module cimports (``from cosched.simulator.view cimport ReadOnlyColumn``)."""
    root = folder / "pxd"
    for package, source in PACKAGE_DIR.items():
        for pxd in (HERE / source).rglob("*.pxd"):
            target = root / package.replace(".", "/") / pxd.relative_to(HERE / source)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(pxd, target)
    return root


def drop_stale_extensions(build_lib: Path, compiled: set[str]) -> None:
    """Delete from an earlier build's folder the extension and sidecar of each module that is no
    longer compiled: left there, they would ship in the wheel and load, since the import guard
    checks only the modules it compiles."""
    for sidecar in build_lib.glob("cosched/**/*" + SIDECAR_SUFFIX):
        module = ".".join(sidecar.relative_to(build_lib).parts)[: -len(SIDECAR_SUFFIX)]
        if module in compiled:
            continue
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            sidecar.with_name(sidecar.name[: -len(SIDECAR_SUFFIX)] + suffix).unlink(missing_ok=True)
        sidecar.unlink()


def _sidecar(extension: Path, module: str) -> Path:
    """The file beside a compiled module that records its source's hash."""
    return extension.with_name(module.rpartition(".")[2] + SIDECAR_SUFFIX)


if __name__ == "__main__":
    setup(
        packages=packages(),
        package_dir=PACKAGE_DIR,
        ext_modules=extensions(),
        cmdclass={"build_ext": OptionalBuildExt},
    )
