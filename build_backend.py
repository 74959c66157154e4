"""The build backend: setuptools', asking for Cython only when a wheel is built.

A regular build (``pip install .``, a wheel) compiles the simulator's hot modules with Cython (see
setup.py); an editable install (``pip install -e .``, what the tests and CI use) compiles nothing,
so it does not need Cython in its isolated build environment either.
"""

from setuptools import build_meta
from setuptools.build_meta import *  # noqa: F403  (every hook of the setuptools backend)

CYTHON = "Cython>=3.0"


def get_requires_for_build_wheel(config_settings=None) -> list[str]:
    """setuptools' requirements for a wheel, and Cython to compile the hot modules."""
    return [*build_meta.get_requires_for_build_wheel(config_settings), CYTHON]
