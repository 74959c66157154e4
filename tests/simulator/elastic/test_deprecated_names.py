"""Old names of the ElastiSim front end and its policies stay importable for one release, each with
a one-line DeprecationWarning naming the new spelling and the release that removes it."""

import importlib

import pytest

from cosched.simulator.elastic.platform import ElastiSimPlatform, load_elastisim_platform
from cosched.simulator.elastic.runtime import simulate_project
from cosched.simulator.jobs import JobKind

RENAMED = [
    ("cosched.simulator.schedulers.elastic", "RIGID", JobKind.RIGID),
    ("cosched.simulator.schedulers.elastic", "MOLDABLE", JobKind.MOLDABLE),
    ("cosched.simulator.schedulers.elastic", "MALLEABLE", JobKind.MALLEABLE),
    ("cosched.simulator.elastic.platform", "Platform", ElastiSimPlatform),
    ("cosched.simulator.elastic.platform", "load_platform", load_elastisim_platform),
    ("cosched.simulator.elastic.runtime", "simulate", simulate_project),
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


@pytest.mark.parametrize("module", sorted({module for module, _, _ in RENAMED}))
def test_unknown_names_still_raise_attribute_error(module):
    with pytest.raises(AttributeError):
        importlib.import_module(module).NO_SUCH_NAME  # noqa: B018


def test_old_spelling_of_an_import_still_works():
    with pytest.warns(
        DeprecationWarning, match="use cosched.simulator.elastic.platform.load_elastisim_platform"
    ):
        from cosched.simulator.elastic.platform import load_platform  # noqa: F401
