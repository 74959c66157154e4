"""The two campaigns every fuzz target runs in: `quick` in the default suite, `long` under `-m
fuzz`.

A fuzz target is one test that takes the `campaign` fixture (the hypothesis settings of its
campaign, which are a decorator) and runs a `given` inside it:

    def test_swf_byte_mutations(tmp_path_factory, campaign):
        campaign(given(case=swf_bytes)(lambda case: _swf_bytes(tmp_path_factory, case)))()

`python3 -m pytest tests/fuzz` runs `test_swf_byte_mutations[quick]`; `python3 -m pytest -m fuzz
tests/fuzz` runs `test_swf_byte_mutations[long]` (the default addopts leave out the `fuzz` marker).

Both campaigns run without a deadline and without the example database. By default the quick
campaign runs 50 examples and the long one FUZZ_EXAMPLES (default 1000), with the too_slow and
data_too_large health checks suppressed; a test module may set its own counts and suppressions:

    CAMPAIGN_EXAMPLES = {"quick": 120, "long": 3000}
    SUPPRESSED_HEALTH_CHECKS = list(HealthCheck)
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

CAMPAIGN_EXAMPLES = {"quick": 50, "long": int(os.environ.get("FUZZ_EXAMPLES", "1000"))}
SUPPRESSED_HEALTH_CHECKS = [HealthCheck.too_slow, HealthCheck.data_too_large]


@pytest.fixture(
    params=[
        pytest.param("quick", id="quick"),
        pytest.param("long", id="long", marks=pytest.mark.fuzz),
    ]
)
def campaign(request) -> settings:
    """The hypothesis settings of the quick or the long campaign, for the requesting test module."""
    examples = getattr(request.module, "CAMPAIGN_EXAMPLES", CAMPAIGN_EXAMPLES)[request.param]
    suppressed = getattr(request.module, "SUPPRESSED_HEALTH_CHECKS", SUPPRESSED_HEALTH_CHECKS)
    return settings(
        max_examples=examples, deadline=None, database=None, suppress_health_check=suppressed
    )
