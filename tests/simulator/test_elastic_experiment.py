"""`cosched experiment-elastic`: the six policies on the bundled trace, the table, plots,
resumption, bad input."""

import json

import pandas as pd
import pytest

from cosched.cli import main
from cosched.simulator.elastic.experiment import experiment_spec, finish, run_experiment
from cosched.simulator.elastic.traces import ElasticMarking
from cosched.simulator.schedulers import ELASTIC


def test_experiment_writes_the_table_and_the_plots(tmp_path, capsys):
    out = tmp_path / "out"
    code = main(
        [
            "experiment-elastic",
            "--limit",
            "300",
            "--arrival-scale",
            "0.2",
            "--workers",
            "1",
            "--out",
            str(out),
            "--quiet",
            "--json",
            "--plots",
        ]
    )
    assert code == 0
    rows = json.loads(capsys.readouterr().out)
    assert [row["policy"] for row in rows] == list(ELASTIC)
    runs = pd.read_csv(out / "runs.csv")
    assert len(runs) == 6 and (runs["makespan"] > 0).all()
    assert runs.loc[runs.policy == "fcfs-rigid", "resizes"].item() == 0
    counterpart = runs.set_index("policy")
    expected = 100 * (
        1
        - counterpart.loc["fcfs-malleable", "makespan"] / counterpart.loc["fcfs-rigid", "makespan"]
    )
    assert counterpart.loc["fcfs-malleable", "reduction_vs_rigid_pct"] == pytest.approx(expected)
    jobs = pd.read_csv(out / "jobs" / "r000_srtf.csv")
    assert len(jobs) == 300 and (jobs["turnaround_time"] >= jobs["wait_time"]).all()
    assert "| fcfs-malleable |" in (out / "table.md").read_text()
    assert sorted(p.name for p in (out / "plots").iterdir()) == [
        "makespan.png",
        "wait_turnaround.png",
    ]


def test_an_interrupted_experiment_resumes_to_the_same_rows(tmp_path):
    spec = experiment_spec(
        "kth-sp2",
        jobs=120,
        marking=ElasticMarking(0.5, seed=4),
        replicates=2,
        policies=["fcfs-rigid", "fcfs-malleable"],
    )
    whole = run_experiment(spec, tmp_path / "whole", workers=1, progress=False, plots=False)
    part, cut = tmp_path / "part", spec
    run_experiment(cut, part, workers=1, progress=False, plots=False)
    lines = (part / "grid.done").read_text().splitlines()
    (part / "grid.done").write_text(
        "\n".join(lines[:2]) + "\n"
    )  # only the first cell counts as finished
    resumed = run_experiment(cut, part, workers=1, progress=False, plots=False)
    columns = [c for c in whole.columns if c != "wall_seconds"]
    pd.testing.assert_frame_equal(whole[columns], resumed[columns])
    assert finish(cut, part, plots=False)["makespan"].tolist() == resumed["makespan"].tolist()


@pytest.mark.parametrize(
    "flags, field",
    [
        (["--elastic-fraction", "-1"], "elastic_fraction"),
        (["--elastic-range", "1,0.5"], "elastic_range"),
        (["--scheduler", "lottery"], "policies"),
        (["--arrival-scale", "0"], "arrival_scale"),
        (["--replicates", "0"], "replicates"),
        (["--preset", "nope"], "preset"),
    ],
)
def test_bad_input_exits_2_and_writes_nothing(tmp_path, capsys, flags, field):
    out = tmp_path / "out"
    assert (
        main(
            [
                "experiment-elastic",
                "--limit",
                "50",
                "--workers",
                "1",
                "--out",
                str(out),
                "--quiet",
                *flags,
            ]
        )
        == 2
    )
    error = capsys.readouterr().err.strip()
    assert error.startswith("cosched experiment-elastic: error:") and field in error
    assert not out.exists()


def test_another_spec_in_the_same_folder_is_refused(tmp_path, capsys):
    out = tmp_path / "out"
    base = [
        "experiment-elastic",
        "--limit",
        "60",
        "--workers",
        "1",
        "--out",
        str(out),
        "--quiet",
        "--no-plots",
        "--scheduler",
        "fcfs-rigid",
    ]
    assert main(base) == 0
    assert main(base + ["--seed", "1"]) == 2
    assert "different experiment-elastic run" in capsys.readouterr().err
    assert main(base + ["--seed", "1", "--force"]) == 0


def _replica_run(out, *flags):
    return main(
        [
            "experiment-elastic",
            "--limit",
            "120",
            "--arrival-scale",
            "0.3",
            "--scheduler",
            "fcfs-rigid,sjf-malleable",
            "--workers",
            "1",
            "--out",
            str(out),
            "--no-plots",
            *flags,
        ]
    )


def test_unjittered_replicas_repeat_each_run_and_leave_the_other_outputs_alone(tmp_path, capsys):
    assert _replica_run(tmp_path / "plain") == 0
    assert _replica_run(tmp_path / "replicas", "--replicas", "2", "--jitter", "0") == 0
    for name in ("summary.csv", "table.md"):
        plain = (tmp_path / "plain" / name).read_bytes()
        assert (tmp_path / "replicas" / name).read_bytes() == plain, name
    runs = [pd.read_csv(tmp_path / run / "runs.csv") for run in ("plain", "replicas")]
    pd.testing.assert_frame_equal(*(frame.drop(columns="wall_seconds") for frame in runs))
    assert "replicas" not in json.loads((tmp_path / "plain" / "spec.json").read_text())
    assert not (tmp_path / "plain" / "spread.csv").exists()
    spread = pd.read_csv(tmp_path / "replicas" / "spread.csv")
    values = spread[spread.metric != "job_turnaround_spread"]
    assert len(values) == 2 * 7
    assert (values["min"] == values["unjittered"]).all()
    assert (values["max"] == values["unjittered"]).all()
    assert (spread.loc[spread.metric == "job_turnaround_spread", "max"] == 0).all()


def test_jittered_replicas_spread_around_the_run(tmp_path, capsys):
    assert _replica_run(tmp_path / "out", "--replicas", "3", "--jitter", "600") == 0
    assert "spread over 3 replicas (submissions moved by up to 600 s)" in capsys.readouterr().out
    spread = pd.read_csv(tmp_path / "out" / "spread.csv")
    assert (spread["min"].fillna(0) <= spread["median"]).all()
    assert (spread["median"] <= spread["max"]).all()
    assert spread.loc[spread.metric == "job_turnaround_spread", "max"].max() > 0


def test_jitter_without_replicas_is_refused(tmp_path, capsys):
    assert _replica_run(tmp_path / "out", "--jitter", "1") == 2
    assert "field '--jitter': needs --replicas K" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
