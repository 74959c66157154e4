"""`cosched simulate` / `cosched compare` on small workloads: outputs, metrics, exit code 2 on bad
input."""

import json

import pandas as pd
import pytest

from cosched.cli import main
from cosched.errors import InputError
from cosched.simulator.compare import compare
from cosched.simulator.data import EXAMPLE_HEATMAP, example_path
from cosched.simulator.metrics import makespan_speedup, summarize
from cosched.simulator.platform import Platform, load_platform
from cosched.simulator.simulation import simulate
from cosched.simulator.workload import load_workload, make_workload

HEATMAP = str(example_path(EXAMPLE_HEATMAP))
CSV = "job_id,submit_time,run_time,cores,estimate\n" + "".join(
    f"{i},{i * 7 % 50},{5 + i % 13},{1 + i % 6},{20 + i % 13}\n" for i in range(40)
)


@pytest.fixture
def workload_csv(tmp_path):
    path = tmp_path / "w.csv"
    path.write_text(CSV)
    return path


def test_simulate_writes_jobs_and_summary(tmp_path, workload_csv, capsys):
    out, plots = tmp_path / "out", tmp_path / "plots"
    code = main(
        [
            "simulate",
            "--workload",
            str(workload_csv),
            "--platform",
            "grvingt",
            "--scheduler",
            "easy",
            "--out",
            str(out),
            "--parquet",
            "--plots",
            str(plots),
            "--baseline",
            "conservative",
        ]
    )
    assert code == 0
    jobs = pd.read_csv(out / "jobs.csv")
    assert {"job_id", "submit_time", "start_time", "end_time", "cores", "nodes"} <= set(
        jobs.columns
    )
    assert len(jobs) == 40 and (jobs.start_time >= jobs.submit_time).all()
    assert pd.read_parquet(out / "jobs.parquet").shape == jobs.shape
    summary = json.loads((out / "summary.json").read_text())
    assert summary["jobs"] == 40 and summary["makespan_speedup"] > 0
    assert sorted(p.name for p in plots.iterdir()) == [
        "gantt.png",
        "utilization_queue.png",
        "wait_times.png",
    ]
    assert "mean_slowdown" in capsys.readouterr().out


def test_compare_prints_every_classic_scheduler(workload_csv, capsys):
    assert main(["compare", "--workload", str(workload_csv), "--platform", "grvingt"]) == 0
    text = capsys.readouterr().out
    for name in ("fcfs", "easy", "conservative", "sjf", "ljf"):
        assert f"\n{name} " in text


@pytest.mark.parametrize(
    "args",
    [
        ["--platform", "nowhere"],
        ["--scheduler", "nope"],
        ["--depth", "-1"],
        ["--bounded-threshold", "0"],
    ],
)
def test_bad_arguments_exit_2_and_leave_no_output(tmp_path, workload_csv, args, capsys):
    out = tmp_path / "out"
    options = {"--platform": "grvingt", **dict(zip(args[::2], args[1::2]))}
    argv = ["simulate", "--workload", str(workload_csv), "--out", str(out), "--quiet"]
    assert main(argv + [item for pair in options.items() for item in pair]) == 2
    assert not out.exists()
    assert capsys.readouterr().err.count("\n") == 1


def test_metrics_follow_the_thesis_formulas():
    # one node; job 0 runs 0-10, job 1 (submitted at 0) waits 10 s and runs 10-30
    workload = make_workload([0, 1], [0, 0], [10, 20], [1, 1])
    result = simulate(workload, Platform(1), "fcfs")
    s = summarize(result, baseline=result, bounded_threshold=10)
    assert s["makespan"] == 30 and s["makespan_speedup"] == 1.0
    assert s["mean_wait"] == 5 and s["mean_turnaround"] == 20
    assert s["mean_slowdown"] == pytest.approx((1 + 30 / 20) / 2)  # (2.2), (2.3)
    assert s["mean_slowdown_per_processor"] == pytest.approx(
        (1 + 30 / 20) / 2
    )  # (2.4), (2.5) with 1 core
    assert s["utilization"] == pytest.approx(1.0)  # (2.6): the node is busy all the time
    assert makespan_speedup(60.0, 30.0) == 2.0 and makespan_speedup(None, 30.0) is None  # (2.1)
    assert makespan_speedup(60.0, 0.0) is None
    assert makespan_speedup(pd.Series([60.0, 60.0]), pd.Series([30.0, 0.0])) == pytest.approx(
        [2.0, float("nan")], nan_ok=True
    )


def test_compare_writes_rows_incrementally_and_resumes_finished_schedulers(
    tmp_path, workload_csv, capsys
):
    out = tmp_path / "cmp"
    argv = [
        "compare",
        "--workload",
        str(workload_csv),
        "--platform",
        "grvingt",
        "--schedulers",
        "fcfs,easy",
        "--out",
        str(out),
        "--quiet",
        "--json",
    ]
    assert main(argv) == 0
    frame = pd.read_csv(out / "compare.csv")
    assert sorted(frame.scheduler) == ["conservative", "easy", "fcfs"]
    frame.loc[frame.scheduler == "fcfs", "wall_seconds"] = 12345.0  # marks a row computed before
    frame.to_csv(out / "compare.csv", index=False)
    capsys.readouterr()
    assert main(argv) == 0
    rows = {row["scheduler"]: row for row in json.loads(capsys.readouterr().out)}
    assert rows["fcfs"]["wall_seconds"] == 12345.0 and rows["easy"]["makespan_speedup"] > 0
    assert (
        main(argv + ["--depth", "5"]) == 2
    )  # other options: refused, the rows are kept (docs/guarantees.md)
    assert main(argv + ["--depth", "5", "--force"]) == 0
    rows = {row["scheduler"]: row for row in json.loads(capsys.readouterr().out)}
    assert rows["fcfs"]["wall_seconds"] != 12345.0  # --force: recomputed


def test_limit_keeps_the_cleaning_counts_of_the_whole_file(tmp_path, capsys):
    path = tmp_path / "w.csv"
    path.write_text(
        CSV + "40,3,0,1,20\n41,4,7,2,3\n"
    )  # one record dropped (run time 0), one estimate raised
    assert (
        main(
            [
                "simulate",
                "--workload",
                str(path),
                "--platform",
                "grvingt",
                "--limit",
                "10",
                "--quiet",
                "--json",
            ]
        )
        == 0
    )
    summary = json.loads(capsys.readouterr().out)
    assert summary["jobs"] == 10 and summary["cleaning"]["jobs"] == 10
    assert summary["cleaning"]["dropped_run_time_le_0"] == 1
    assert summary["cleaning"]["estimate_below_run_time_raised"] == 1


def test_compare_library_gives_one_row_per_scheduler_with_the_speedup_of_the_metrics_module(
    workload_csv,
):
    frame = compare(str(workload_csv), "grvingt", ["fcfs", "easy"])
    assert list(frame["scheduler"]) == ["fcfs", "easy"] and set(frame["baseline"]) == {
        "conservative"
    }
    assert not {"mean_job_speedup", "slowdown_counts"} & set(frame.columns)  # no co-scheduler ran
    platform = load_platform("grvingt")
    reference = simulate(
        load_workload(workload_csv, max_cores=platform.total_cores), platform, "conservative"
    ).makespan
    assert frame["makespan_speedup"].tolist() == pytest.approx(
        [makespan_speedup(reference, m) for m in frame["makespan"]]
    )
    assert (
        frame.attrs["jobs"] == 40
        and frame.attrs["platform"] == "grvingt"
        and frame.attrs["path"] is None
    )


@pytest.fixture
def app_workload(tmp_path):
    path = tmp_path / "apps.csv"
    assert (
        main(
            [
                "generate-workload",
                "--heatmap",
                HEATMAP,
                "--jobs",
                "30",
                "--interarrival",
                "poisson",
                "--mean-interarrival",
                "5",
                "--out",
                str(path),
                "--quiet",
            ]
        )
        == 0
    )
    return str(path)


@pytest.mark.parametrize(
    "flags, options",
    [
        (["--placement", "shared"], {"placement": "shared"}),
        (["--spread-speedup", "0.8"], {"alone_speedup": 0.8}),
    ],
)
def test_compare_rerun_with_other_co_scheduling_options_never_returns_the_old_rows(
    tmp_path, app_workload, capsys, flags, options
):
    out = tmp_path / "cmp"
    argv = [
        "compare",
        "--workload",
        app_workload,
        "--platform",
        "marconi",
        "--heatmap",
        HEATMAP,
        "--scheduler",
        "easy-co,easy",
        "--out",
        str(out),
        "--quiet",
        "--json",
    ]
    assert main(argv) == 0
    frame = pd.read_csv(out / "compare.csv")
    frame["wall_seconds"] = 12345.0  # marks the rows computed before
    frame.to_csv(out / "compare.csv", index=False)
    capsys.readouterr()
    assert main(argv + flags) == 2  # refused by the rerun rule, the old rows are not reported
    assert "different compare run" in capsys.readouterr().err
    assert (pd.read_csv(out / "compare.csv")["wall_seconds"] == 12345.0).all()  # and kept
    with pytest.raises(
        InputError, match="different compare run"
    ):  # the library follows the same rule
        compare(app_workload, "marconi", ["easy-co", "easy"], heatmap=HEATMAP, out=out, **options)
    same = compare(
        app_workload, "marconi", ["easy-co", "easy"], heatmap=HEATMAP, out=out
    )  # the CLI's comparison
    assert (same["wall_seconds"] == 12345.0).all() and "mean_job_speedup" in same
    assert main(argv + flags + ["--force"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [row["scheduler"] for row in rows] == ["easy-co", "easy"]
    assert all(row["wall_seconds"] != 12345.0 for row in rows)  # recomputed
    assert (
        "mean_job_speedup" in rows[0] and "mean_job_speedup" not in rows[1]
    )  # the co-scheduler's metrics only
    resumed = compare(
        app_workload, "marconi", ["easy-co", "easy"], heatmap=HEATMAP, out=out, **options
    )
    assert resumed["wall_seconds"].tolist() == [
        row["wall_seconds"] for row in rows
    ]  # library resumes the CLI's
