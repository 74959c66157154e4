"""`cosched elastic --replicas K --jitter SECONDS`: K more runs with jittered submission times, and
the spread of their results in summary.json and the text output."""

import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cosched.cli import main
from cosched.simulator.elastic.replicas import jittered_jobs, replica_spread
from cosched.simulator.elastic.workload import JobSpec

PROJECT = Path(__file__).parent / "data" / "micro" / "x30_async_write_pfs_contention"


def _spec(position: int, submit: float) -> JobSpec:
    return JobSpec(position, position, "rigid", submit, 0.0, 1, 1, 0, 0, None)  # type: ignore[arg-type]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.sampled_from([0.0, 1.0, 2.5, 100.0]), min_size=1, max_size=12),
    st.floats(0, 5),
    st.integers(0, 2**32 - 1),
)
def test_jittered_jobs_move_each_submission_by_at_most_the_jitter_and_renumber(
    submits, jitter, seed
):
    jobs = [_spec(position, submit) for position, submit in enumerate(submits)]
    moved = jittered_jobs(jobs, jitter, np.random.default_rng(seed))
    assert sorted(job.position for job in moved) == list(range(len(jobs)))
    for job in moved:
        original = submits[job.position]
        # the shift is within the jitter; the sum is rounded to the moved time's precision
        assert job.submit_time >= 0
        assert abs(job.submit_time - original) <= jitter + math.ulp(job.submit_time)
    assert [job.identifier for job in moved] == list(range(len(jobs)))
    keys = [(job.submit_time, job.position) for job in moved]
    assert keys == sorted(keys)
    assert [job.submit_time for job in jobs] == submits  # the originals are not changed


def test_spread_gives_min_median_max_and_the_per_job_turnaround_spread():
    summaries = [{"makespan": value, "mean_wait": None} for value in (3.0, 1.0, 2.0)]
    rows = [
        [
            {"position": 0, "status": "completed", "turnaround_time": 10.0 + k},
            {"position": 1, "status": "completed" if k else "killed", "turnaround_time": 5.0},
        ]
        for k in range(3)
    ]
    result = replica_spread(summaries, rows, 1e-6, 7)
    assert result["metrics"] == {"makespan": {"min": 1.0, "median": 2.0, "max": 3.0}}
    per_job = result["turnaround_spread_per_job"]
    assert per_job["jobs"] == 1 and per_job["max"] == 2.0 and per_job["max_relative"] == 2.0 / 11


def _run(tmp_path, monkeypatch, capsys, *flags):
    monkeypatch.chdir(PROJECT)
    code = main(
        [
            "elastic",
            "data/input/configuration.json",
            "--algorithm",
            "algorithm.py",
            "--out",
            str(tmp_path / "out"),
            *flags,
        ]
    )
    return code, capsys.readouterr()


def test_replicas_without_jitter_repeat_the_run_exactly(tmp_path, monkeypatch, capsys):
    code, captured = _run(tmp_path, monkeypatch, capsys, "--replicas", "2", "--jitter", "0")
    assert code == 0
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    for name, values in summary["replicas"]["metrics"].items():
        assert values["min"] == values["max"] == summary[name], name
    assert summary["replicas"]["turnaround_spread_per_job"]["max"] == 0.0
    assert "replicas          2 (submissions moved by up to 0 s, seed 0)" in captured.out


def test_jittered_replicas_leave_the_output_files_as_the_unjittered_run(
    tmp_path, monkeypatch, capsys
):
    assert _run(tmp_path / "plain", monkeypatch, capsys)[0] == 0
    code, _ = _run(tmp_path / "jittered", monkeypatch, capsys, "--replicas", "3", "--jitter", "0.5")
    assert code == 0
    for name in ("job_statistics.csv", "node_utilization.csv", "jobs.csv"):
        plain = (tmp_path / "plain" / "out" / name).read_bytes()
        assert (tmp_path / "jittered" / "out" / name).read_bytes() == plain, name
    replicas = json.loads((tmp_path / "jittered" / "out" / "summary.json").read_text())["replicas"]
    assert replicas["replicas"] == 3 and replicas["jitter"] == 0.5
    assert replicas["metrics"]["makespan"]["min"] <= replicas["metrics"]["makespan"]["max"]


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--jitter", "1"], "field '--jitter': needs --replicas K"),
        (["--replicas", "-1"], "field '--replicas': must be 0 or more"),
        (["--replicas", "2", "--jitter", "nan"], "field '--jitter': must be a finite number"),
        (["--replicas", "2", "--jitter", "-1"], "field '--jitter': must be a finite number"),
    ],
)
def test_bad_replica_flags_are_refused_before_anything_is_written(
    tmp_path, monkeypatch, capsys, flags, message
):
    code, captured = _run(tmp_path, monkeypatch, capsys, *flags)
    assert code == 2 and message in captured.err and len(captured.err.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()
