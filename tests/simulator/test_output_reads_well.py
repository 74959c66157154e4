"""Output that reads well: no raw Python values, units by the documented rule, a word when a plot
is skipped or a co-scheduler has no heatmap, series plots that stay readable over long spans."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cosched.simulator.plots as plots
from cosched.cli import main
from cosched.cli_options import time_unit
from cosched.theory.heatmap import MissingPairsWarning

CSV = "job_id,submit_time,run_time,cores,estimate\n" + "".join(
    f"{i},{i * 7 % 50},{5 + i % 13},{1 + i % 6},{20 + i % 13}\n" for i in range(40)
)
KTH = ["--workload", "kth-sp2", "--platform", "kth-sp2", "--limit", "300"]
MEAN_TOLERANCE = 1e-9  # relative: the binned means conserve the series' integral


@pytest.fixture
def workload_csv(tmp_path):
    path = tmp_path / "w.csv"
    path.write_text(CSV)
    return path


def test_simulate_text_has_no_python_dict_and_no_elastic_line_on_a_rigid_run(capsys):
    assert main(["simulate", *KTH]) == 0
    rigid = capsys.readouterr().out
    assert "{" not in rigid and "elastic" not in rigid
    argv = ["simulate", *KTH, "--scheduler", "sjf-malleable", "--elastic-fraction", "1"]
    assert main(argv) == 0
    elastic = capsys.readouterr().out
    assert "{" not in elastic and re.search(r"elastic\s+fraction 1\.0, kind malleable", elastic)


def test_bound_prints_in_the_unit_that_fits_its_size(workload_csv, capsys):
    argv = ["bound", "--workload", str(workload_csv), "--platform", "grvingt"]
    assert main([*argv, "--json"]) == 0
    import json

    bound = json.loads(capsys.readouterr().out)["bound"]
    assert main(argv) == 0
    line = next(line for line in capsys.readouterr().out.splitlines() if "bound [" in line)
    unit, seconds = time_unit(bound)
    assert f"bound [{unit}]" in line
    assert float(line.split("]")[1].split()[0]) == pytest.approx(bound / seconds, abs=0.05)


@pytest.mark.slow  # draws plots (matplotlib)
def test_a_skipped_gantt_chart_is_named(monkeypatch, workload_csv, tmp_path, capsys):
    monkeypatch.setattr(plots, "GANTT_MAX_JOBS", 10)
    argv = ["simulate", "--workload", str(workload_csv), "--platform", "grvingt", "--quiet"]
    assert main([*argv, "--out", str(tmp_path / "run"), "--plots"]) == 0
    assert "warning: gantt.png not drawn: 40 jobs, more than 10" in capsys.readouterr().err
    assert not (tmp_path / "run" / "plots" / "gantt.png").exists()


def test_a_co_scheduler_without_heatmap_says_it_runs_at_speedup_1(workload_csv, capsys):
    argv = ["simulate", "--workload", str(workload_csv), "--platform", "grvingt", "--quiet"]
    assert main([*argv, "--scheduler", "filler"]) == 0
    assert "no --heatmap was given: every pair runs at speedup 1.0" in capsys.readouterr().err
    assert main([*argv, "--scheduler", "easy"]) == 0
    assert capsys.readouterr().err == ""


def test_an_asked_default_speedup_does_not_warn_and_errors_name_the_preset(tmp_path, capsys):
    jobs = tmp_path / "jobs.csv"
    argv = ["generate-workload", "--heatmap", "aris-nas", "--jobs", "40", "--seed", "1"]
    assert main([*argv, "--out", str(jobs), "--quiet"]) == 0
    bound = ["bound", "--workload", str(jobs), "--platform", "aris", "--heatmap", "aris-nas"]
    with warnings.catch_warnings():
        warnings.simplefilter("error", MissingPairsWarning)
        assert main([*bound, "--default-speedup", "1.0", "--quiet"]) == 0
    capsys.readouterr()
    assert main(bound) == 2
    assert "cosched bound: error: aris-nas, field 'co_A_B'" in capsys.readouterr().err


@pytest.mark.slow  # the 500-job example project
def test_the_bundled_elastic_example_runs_without_a_warning(tmp_path, capsys):
    assert main(["elastic", "example", "--out", str(tmp_path / "example")]) == 0
    assert "warning" not in capsys.readouterr().err


@settings(max_examples=50, deadline=None)
@given(
    st.lists(st.floats(0.01, 100.0), min_size=3, max_size=60),
    st.lists(st.floats(0.0, 10.0), min_size=60, max_size=60),
    st.integers(1, 20),
)
def test_binned_means_keep_the_series_integral(gaps, values, bins):
    times = np.concatenate([[0.0], np.cumsum(gaps)])
    values = np.array(values[: times.size])
    left, means = plots.binned_mean(times, values, bins)
    width = (times[-1] - times[0]) / bins
    integral = float(np.sum(values[:-1] * np.diff(times)))
    assert left.size == bins and means.min() >= values[:-1].min() - MEAN_TOLERANCE
    assert float(np.sum(means) * width) == pytest.approx(integral, rel=MEAN_TOLERANCE, abs=1e-9)


def test_a_combination_with_a_member_gone_is_not_counted_as_measured():
    from cosched.measurement.session import _measured_counts

    table = pd.DataFrame(
        {
            "combination": [1, 2, 3, 3],
            "members": ["a", "b", "a+b", "a+b"],
            "speed": [1.0, 1.0, 0.8, np.nan],
        }
    )
    assert _measured_counts(table) == {
        "combinations_measured": 2,
        "combinations_incomplete": ["a+b"],
    }
