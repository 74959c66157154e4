"""Shared test settings: hypothesis runs without per-example deadlines (CI machines are shared and
noisy), and `shared_data` for the large inputs that are not bundled with the package."""

import os
import signal
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "default", deadline=None, max_examples=40, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "thorough", deadline=None, max_examples=500, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

# A shell starts its background jobs with SIGINT ignored and children inherit that: Ctrl-C, which
# tests send to the commands they start, must reach them as from a terminal (`pytest &` too).
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# Large traces and unbundled heatmaps live next to the checkout: <repository>/../shared/data.
SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.fixture(autouse=True, scope="session")
def private_cache_folder(tmp_path_factory):
    """The SWF parse cache (and any other XDG cache) of the test run lives in a temporary folder,
    also for the commands the tests start: tests never fill the user's ~/.cache."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg-cache")))
        yield


@pytest.fixture
def shared_data():
    """`shared_data("swf/X.swf.gz")`: the path under ../shared/data, or skip the test naming the
    missing path.

    Only for data that is not bundled; tests on the bundled presets (`cosched.data`) must never
    skip.
    """

    def need(relative: str) -> Path:
        path = SHARED_DATA / relative
        if not path.exists():
            pytest.skip(f"shared data not present: {path}")
        return path

    return need
