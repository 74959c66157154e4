"""ElastiSim inputs load: the example project, SimGrid units, the JSON platform form, expressions
via ExprTk."""

from collections import Counter

import pytest

from cosched.errors import InputError
from cosched.simulator.elastic.config import load_configuration
from cosched.simulator.elastic.expressions import Expressions, argument_value
from cosched.simulator.elastic.platform import (
    load_elastisim_platform,
    parse_quantity,
    platform_from_dict,
)
from cosched.simulator.elastic.workload import load_jobs

EXAMPLE = "elastisim/example-project"


@pytest.fixture
def example(shared_data, monkeypatch):
    """The example project's root as working directory (its paths are relative to it, as in
    ElastiSim)."""
    root = shared_data(EXAMPLE)
    monkeypatch.chdir(root)
    return root


def test_example_project_loads(example):
    configuration = load_configuration("data/input/configuration.json")
    platform = load_elastisim_platform(configuration.platform_file)
    jobs = load_jobs(configuration.jobs_file)
    assert len(platform) == 128 and platform.names[0] == "DA_100" and platform.names[-1] == "DA_227"
    assert platform.speed[0] == 100e9 and platform.bandwidth[0] == 100e9 / 8
    assert platform.latency[0] == pytest.approx(50e-6, rel=1e-12)
    assert platform.pfs_read == ("PFS_read", 80e9, pytest.approx(500e-6)) and platform.pfs_write[
        :2
    ] == ("PFS_write", 50e9)
    assert len(jobs) == 500
    assert Counter(job.type for job in jobs) == {
        "rigid": 238,
        "moldable": 163,
        "malleable": 74,
        "evolving": 19,
        "adaptive": 6,
    }
    assert [job.identifier for job in jobs] == list(range(500))
    assert all(a.submit_time <= b.submit_time for a, b in zip(jobs, jobs[1:]))
    model = jobs[0].model
    assert (
        model.on_init is not None
        and model.on_reconfiguration is not None
        and model.on_expansion is None
    )
    assert model.phases[0].evolving_request.startswith("phase_iteration")
    assert jobs[0].phase_iterations == (int(jobs[0].arguments["iterations"]),)
    assert configuration.sensing and configuration.sensing_interval == 1


@pytest.mark.parametrize(
    "text, kind, value",
    [
        ("100Gf", "speed", 100e9),
        ("1.5Tf", "speed", 1.5e12),
        ("100Gbps", "bandwidth", 12.5e9),
        ("80GBps", "bandwidth", 80e9),
        ("1GiBps", "bandwidth", 2.0**30),
        ("50us", "time", 50e-6),
        ("500ms", "time", 0.5),
        ("2", "time", 2.0),
        (3, "speed", 3.0),
    ],
)
def test_simgrid_units(text, kind, value):
    assert parse_quantity(text, kind, source="p", field="f") == pytest.approx(value, rel=1e-15)


def test_bad_unit_names_the_field():
    with pytest.raises(InputError, match=r"p, field 'speed': not a speed"):
        parse_quantity("100Gbps", "speed", source="p", field="speed")


def test_json_platform_matches_xml(tmp_path):
    xml = tmp_path / "p.xml"
    xml.write_text("""<?xml version='1.0'?><platform version="4.1"><zone id="z" routing="Full">
      <cluster id="c" prefix="n" radical="0-3" suffix="" speed="10Gf" bw="10Gbps" lat="1us">
        <prop id="node_local_bb" value="true"/><prop id="bb_read_bw" value="4GBps"/>
        <prop id="bb_write_bw" value="2GBps"/></cluster>
      <zone id="PFS_zone" routing="Full"><host id="PFS" speed="0Gf"><prop id="pfs_host"
      value="true"/></host></zone>
      <link id="L" bandwidth="8GBps" latency="1ms"/>
      <zoneRoute src="PFS_zone" dst="c" gw_src="PFS" gw_dst="n_c_router"><link_ctn
      id="L"/></zoneRoute>
    </zone></platform>""")
    from_xml = load_elastisim_platform(xml)
    from_json = platform_from_dict(
        {
            "clusters": [
                {
                    "prefix": "n",
                    "radical": "0-3",
                    "speed": "10Gf",
                    "bw": "10Gbps",
                    "lat": "1us",
                    "properties": {
                        "node_local_bb": True,
                        "bb_read_bw": "4GBps",
                        "bb_write_bw": "2GBps",
                    },
                }
            ],
            "pfs": {"read_bw": "8GBps", "write_bw": "8GBps", "latency": "1ms"},
        }
    )
    for key in ("speed", "bandwidth", "latency", "node_type", "bb_read", "bb_write"):
        assert list(getattr(from_xml, key)) == list(getattr(from_json, key)), key
    assert from_xml.names == from_json.names
    assert (
        from_xml.pfs_read[1:] == from_json.pfs_read[1:]
        and from_xml.pfs_write[1:] == from_json.pfs_write[1:]
    )
    # a symmetrical route serves reads and writes over the same link: they share its bandwidth
    assert from_xml.pfs_read[0] == from_xml.pfs_write[0] == "L"


def test_expressions_mean_what_exprtk_means():
    expressions = Expressions()

    def evaluate(text, **values):
        return expressions.evaluate(text, values, where="w")

    assert evaluate("2^10") == 1024
    assert evaluate("7 % 3") == 1
    assert evaluate("x > 2 ? x : -x", x=3.0) == 3
    assert evaluate("flops/num_nodes^alpha", flops=1e12, num_nodes=4.0, alpha=0.5) == pytest.approx(
        5e11
    )
    assert evaluate("min(a, b) + max(a, b)", a=1.0, b=2.0) == 3


def test_float_arguments_have_elastisim_precision():
    # ElastiSim writes arguments into the expression with C++ std::to_string: six decimals
    assert argument_value(0.8527412240709863) == 0.852741
    assert argument_value(28010281208643) == 28010281208643.0
    assert argument_value("2.5") == 2.5 and argument_value("fast") is None


def test_failing_expression_names_expression_and_variables():
    with pytest.raises(InputError, match=r"expression 'x \+ y' does not compile.*variables: x"):
        Expressions().compile("x + y", ("x",), where="phases[0]")
    with pytest.raises(InputError, match=r"'1/x' evaluates to inf with x=0"):
        Expressions().evaluate("1/x", {"x": 0.0}, where="w")


def test_paths_resolve_against_the_working_directory(tmp_path, monkeypatch):
    from .scenario import write_scenario

    config = write_scenario(
        tmp_path,
        [
            {
                "type": "rigid",
                "submit_time": 0,
                "num_nodes": 1,
                "application_model": "model.json",
                "arguments": {"iterations": 1, "flops": 1},
            }
        ],
    )
    monkeypatch.chdir(tmp_path)
    assert load_jobs(load_configuration(config).jobs_file)[0].model.source == "model.json"
    monkeypatch.chdir(tmp_path.parent)
    with pytest.raises(InputError, match=r"jobs\[0\]: application_model.*working directory"):
        load_jobs(tmp_path / "jobs.json")
