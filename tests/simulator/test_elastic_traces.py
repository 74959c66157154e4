"""Elastic marking of ordinary traces: seeded, the exact fraction, bounds from the trace size, bad
input."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cosched.cli import main
from cosched.errors import InputError
from cosched.simulator.elastic.traces import (
    ElasticMarking,
    elastic_models,
    marked_jobs,
    node_bounds,
    parse_range,
)
from cosched.simulator.jobs import RIGID
from cosched.simulator.platform import Platform
from cosched.simulator.simulation import simulate
from cosched.simulator.workload import make_workload

CSV = "job_id,submit_time,run_time,cores,estimate\n" + "".join(
    f"{i},{i * 7 % 50},{5 + i % 13},{1 + i % 6},{20 + i % 13}\n" for i in range(40)
)


def trace(cores, cores_per_node=1):
    n = len(cores)
    return make_workload(
        np.arange(n),
        np.arange(n, dtype=float),
        np.full(n, 10.0),
        np.asarray(cores) * cores_per_node,
    )


@given(st.integers(0, 300), st.floats(0, 1), st.integers(0, 2**32 - 1))
def test_marking_picks_exactly_the_rounded_fraction_and_repeats_under_its_seed(
    count, fraction, seed
):
    mask = marked_jobs(count, fraction, seed)
    assert mask.sum() == round(fraction * count)
    assert (mask == marked_jobs(count, fraction, seed)).all()


def test_different_seeds_mark_different_jobs():
    assert (marked_jobs(1000, 0.5, 0) != marked_jobs(1000, 0.5, 1)).any()


@given(
    st.lists(st.integers(1, 64), min_size=1, max_size=50),
    st.floats(0.01, 1),
    st.floats(1, 8),
    st.integers(1, 64),
)
def test_bounds_hold_the_trace_size_and_stay_within_the_range_and_platform(sizes, low, high, nodes):
    sizes = np.minimum(sizes, nodes)
    smallest, largest = node_bounds(sizes, low, high, nodes)
    assert (smallest >= 1).all() and (smallest <= sizes).all() and (sizes <= largest).all()
    assert (largest <= nodes).all()
    assert (largest <= np.maximum(high * sizes + 1e-9, sizes)).all()
    assert ((smallest >= low * sizes - 1e-9) | (smallest == 1)).all()


def test_models_follow_the_marking_on_whole_nodes():
    platform = Platform(16, 2, 2)  # 4 cores per node
    w = trace([1, 2, 4, 8, 3, 1, 2, 4], cores_per_node=4)  # 1..8 nodes each
    marking = ElasticMarking(0.5, "moldable", 0.5, 2.0, "amdahl", 0.1, 2.0, seed=7)
    models = elastic_models(w, platform, marking)
    mask = marked_jobs(len(w), 0.5, 7)
    requested = w.cores // 4
    for job, model in enumerate(models):
        if not mask[job]:
            assert model is RIGID
            continue
        assert model.kind == "moldable" and model.reconfiguration == 2.0
        assert (model.min_nodes, model.max_nodes) == (
            math.ceil(requested[job] / 2),
            min(16, 2 * requested[job]),
        )
        assert model.rate(requested[job], requested[job]) == 1.0
        f = 0.1  # Amdahl: speed(n) = 1 / (f + (1 - f) / n)
        assert model.scaling(4) == pytest.approx(1 / (f + (1 - f) / 4))


@pytest.mark.parametrize(
    "options",
    [
        {"fraction": -0.1},
        {"fraction": 1.5},
        {"fraction": float("nan")},
        {"kind": "evolving"},
        {"low": 0.0},
        {"low": 1.5},
        {"high": 0.5},
        {"scaling": "gustafson"},
        {"serial_fraction": 2.0},
        {"reconfiguration": -1.0},
        {"seed": -1},
    ],
)
def test_bad_marking_is_an_input_error(options):
    with pytest.raises(InputError):
        ElasticMarking(**options)


@pytest.mark.parametrize("text", ["0.5", "0.5,2,3", "a,2", "0,2", "1.5,2", "0.5,0.9", "-1,2", ""])
def test_bad_range_is_an_input_error(text):
    with pytest.raises(InputError, match="elastic_range"):
        parse_range(text)


def test_rigid_marking_keeps_the_engine_results():
    w = trace([1, 2, 3, 1, 2])
    platform = Platform(4)
    plain = simulate(w, platform, "easy")
    marked = simulate(
        w, platform, "easy", job_models=elastic_models(w, platform, ElasticMarking(1.0))
    )
    assert np.array_equal(plain.start, marked.start) and np.array_equal(plain.end, marked.end)


def test_simulate_marks_jobs_from_the_flags(tmp_path, capsys):
    import json

    import pandas as pd

    path = tmp_path / "w.csv"
    path.write_text(CSV)
    out = tmp_path / "out"
    code = main(
        [
            "simulate",
            "--workload",
            str(path),
            "--platform",
            "grvingt",
            "--scheduler",
            "fcfs-malleable",
            "--elastic-fraction",
            "0.5",
            "--elastic-range",
            "0.5,2",
            "--seed",
            "3",
            "--out",
            str(out),
            "--quiet",
            "--json",
        ]
    )
    assert code == 0
    jobs = pd.read_csv(out / "jobs.csv")
    assert (jobs["kind"] == "malleable").sum() == 20 and (jobs["state"] == "finished").all()
    assert (jobs["min_nodes"] <= jobs["node_count"]).all() and (
        jobs["node_count"] <= jobs["max_nodes"]
    ).all()
    summary = json.loads(capsys.readouterr().out)
    assert summary["elastic"]["fraction"] == 0.5 and summary["elastic"]["seed"] == 3


@pytest.mark.parametrize(
    "flags, field",
    [
        (["--elastic-fraction", "1.2"], "elastic_fraction"),
        (["--elastic-range", "2,4"], "elastic_range"),
        (["--elastic-range", "0.5"], "elastic_range"),
        (["--serial-fraction", "-0.1"], "serial_fraction"),
    ],
)
def test_simulate_rejects_bad_marking_flags_with_exit_code_2(tmp_path, capsys, flags, field):
    path = tmp_path / "w.csv"
    path.write_text(CSV)
    out = tmp_path / "out"
    code = main(
        [
            "simulate",
            "--workload",
            str(path),
            "--platform",
            "grvingt",
            "--out",
            str(out),
            "--quiet",
            "--elastic-fraction",
            "0.5",
            *flags,
        ]
    )
    assert code == 2
    error = capsys.readouterr().err.strip()
    assert error.startswith("cosched simulate: error:") and field in error and "\n" not in error
    assert not out.exists()
