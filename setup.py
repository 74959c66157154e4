"""Build script: the package list, derived from the folders (pyproject.toml holds everything else).

The area folders stay at the top of the repository but install inside the one import package
`cosched` (``theory/`` as ``cosched.theory``, ...). setuptools' own package discovery does not
follow such a mapping, so the list is derived here: every folder with an ``__init__.py`` below
``cosched/`` and below each area. A new subpackage therefore ships in the wheel without editing any
list.
"""

from setuptools import find_packages, setup

# top-level folders installed as cosched.<area>
AREAS = ("theory", "strategies", "simulator", "measurement")
PACKAGE_DIR = {"cosched": "cosched", **{f"cosched.{area}": area for area in AREAS}}


def packages() -> list[str]:
    """Every import package of the distribution, by dotted name."""
    found = []
    for package, folder in PACKAGE_DIR.items():
        found += [package, *(f"{package}.{name}" for name in find_packages(folder))]
    return found


if __name__ == "__main__":
    setup(packages=packages(), package_dir=PACKAGE_DIR)
