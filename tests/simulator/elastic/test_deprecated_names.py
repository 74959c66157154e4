"""Old names of the ElastiSim front end and its policies stay importable for one release, each with
a one-line DeprecationWarning naming the new spelling and the release that removes it."""

import importlib

import pytest

from cosched.simulator.jobs import JobKind

RENAMED = [
    ("cosched.simulator.schedulers.elastic", "RIGID", JobKind.RIGID),
    ("cosched.simulator.schedulers.elastic", "MOLDABLE", JobKind.MOLDABLE),
    ("cosched.simulator.schedulers.elastic", "MALLEABLE", JobKind.MALLEABLE),
]


@pytest.mark.parametrize("module, name, now", RENAMED)
def test_old_name_warns_and_gives_the_new_object(module, name, now):
    with pytest.warns(DeprecationWarning, match="removed in 0.4.0") as caught:
        value = getattr(importlib.import_module(module), name)
    assert value is now
    (warning,) = caught
    assert "\n" not in str(warning.message)


def test_old_kind_codes_map_spellings_to_job_kinds():
    module = importlib.import_module("cosched.simulator.schedulers.elastic")
    with pytest.warns(DeprecationWarning, match="JobKind"):
        codes = module.KIND_CODES
    assert codes == {
        "rigid": JobKind.RIGID,
        "moldable": JobKind.MOLDABLE,
        "malleable": JobKind.MALLEABLE,
    }


def test_unknown_names_still_raise_attribute_error():
    module = importlib.import_module("cosched.simulator.schedulers.elastic")
    with pytest.raises(AttributeError):
        module.NO_SUCH_NAME  # noqa: B018
