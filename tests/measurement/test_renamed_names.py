"""Names of the measurement API renamed in 0.3.0: the old spelling still works, with one warning."""

from __future__ import annotations

import importlib

import pytest

RENAMED = [
    ("cosched.measurement.session", "OUTPUT_FILES", "MEASURE_OUTPUT_FILES"),
    ("cosched.measurement.execute_session", "OUTPUT_FILES", "EXECUTE_OUTPUT_FILES"),
]


@pytest.mark.parametrize(("module", "old", "new"), RENAMED)
def test_the_old_name_warns_and_gives_the_new_object(module, old, new):
    namespace = importlib.import_module(module)
    with pytest.warns(DeprecationWarning, match=rf"use {module}\.{new} \(removed in 0\.4\.0\)"):
        value = getattr(namespace, old)
    assert value is getattr(namespace, new)
    assert old not in namespace.__all__ and new in namespace.__all__


def test_the_two_commands_own_different_files():
    from cosched.measurement.execute_session import EXECUTE_OUTPUT_FILES
    from cosched.measurement.session import MEASURE_OUTPUT_FILES

    assert "speeds.csv" in MEASURE_OUTPUT_FILES and "schedule.csv" in EXECUTE_OUTPUT_FILES
    assert MEASURE_OUTPUT_FILES != EXECUTE_OUTPUT_FILES
