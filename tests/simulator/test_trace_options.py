"""Walltime kills, trace windows and the schedule written as SWF: hand-computed schedules,
properties, the command line and its bad input."""

import json
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cosched.cli import main
from cosched.errors import InputError
from cosched.simulator.platform import Platform
from cosched.simulator.simulation import simulate
from cosched.simulator.swf_out import swf_text
from cosched.simulator.trace_window import TraceWindow, trace_time
from cosched.simulator.workload import SWF_FIELDS, make_workload, read_swf

TIME_TOLERANCE = 1e-9  # seconds: end - start against the estimate


def killed(result) -> list[bool]:
    if result.lifecycle is None:
        return [False] * len(result.start)
    return [state == "killed" for state in result.lifecycle["state"]]


def test_kill_at_walltime_hand_computed():
    """2 nodes. Job 1 (2 nodes) runs 100 s but asked for 50: killed at 50. Job 2 (2 nodes, 10 s,
    asked 10) starts then and ends exactly at its walltime: completed, not killed."""
    workload = make_workload([1, 2], [0, 0], [100, 10], [2, 2], [50, 10], keep_estimates=True)
    platform = Platform(nodes=2)
    result = simulate(workload, platform, "easy", kill_at_walltime=True)
    assert result.start.tolist() == [0, 50] and result.end.tolist() == [50, 60]
    assert killed(result) == [True, False] and result.options["killed_at_walltime"] == 1
    plain = simulate(workload, platform, "easy")
    assert plain.end.tolist() == [100, 110] and plain.options["killed_at_walltime"] == 0


@given(
    jobs=st.lists(
        st.tuples(st.integers(0, 50), st.integers(1, 40), st.integers(1, 4), st.integers(1, 40)),
        min_size=1,
        max_size=25,
    ),
    scheduler=st.sampled_from(["fcfs", "easy", "conservative"]),
)
def test_no_job_runs_past_its_walltime_and_kills_are_the_overruns(jobs, scheduler):
    submit, run, cores, estimate = (list(column) for column in zip(*jobs))
    workload = make_workload(range(len(jobs)), submit, run, cores, estimate, keep_estimates=True)
    result = simulate(workload, Platform(nodes=4), scheduler, kill_at_walltime=True)
    ran = result.end - result.start
    assert (ran <= workload.estimate + TIME_TOLERANCE).all()
    assert killed(result) == (workload.run > workload.estimate).tolist()


def test_window_simulates_the_margins_and_measures_the_window():
    workload = make_workload(range(6), [0, 10, 20, 30, 40, 50], [5] * 6, [1] * 6)
    window = TraceWindow(10, 30, warmup=10, cooldown=10)
    cut = window.cut(workload)
    assert cut.submit.tolist() == [0, 10, 20, 30]
    assert window.measured(cut.submit).tolist() == [False, True, True, False]
    assert window.to_dict(cut)["measured_jobs"] == 2


def test_trace_time_reads_seconds_and_dates_in_the_trace_time_zone():
    header = {"UnixStartTime": "843480031", "TimeZoneString": "Europe/Stockholm"}
    assert trace_time("3600", header, "--from") == 3600.0
    # 843480031 is 1996-09-23 14:00:31 in Stockholm (UTC+2 then)
    assert trace_time("1996-09-23T14:00:31", header, "--from") == 0.0
    assert trace_time("1996-09-24", header, "--to") == 10 * 3600 - 31
    with pytest.raises(InputError, match="UnixStartTime"):
        trace_time("1996-09-24", {}, "--to")
    with pytest.raises(InputError, match="neither seconds nor a date"):
        trace_time("yesterday", header, "--to")


CSV = "job_id,submit_time,run_time,cores,estimate\n" + "".join(
    f"{i},{10 * i},{30 + i % 3 * 20},{1 + i % 2},{50}\n" for i in range(8)
)


@pytest.fixture
def workload_csv(tmp_path):
    path = tmp_path / "w.csv"
    path.write_text(CSV)
    return path


def simulate_cli(workload, out, *extra):
    return main(
        ["simulate", "--workload", str(workload), "--platform", "grvingt", "--scheduler", "easy"]
        + ["--out", str(out), "--quiet", *extra]
    )


def test_cli_kill_at_walltime_counts_and_marks_the_kills(tmp_path, workload_csv):
    out = tmp_path / "out"
    assert simulate_cli(workload_csv, out, "--kill-at-walltime") == 0
    summary = json.loads((out / "summary.json").read_text())
    jobs = pd.read_csv(out / "jobs.csv")
    overruns = sum(1 for i in range(8) if 30 + i % 3 * 20 > 50)  # run 70 > estimate 50
    assert summary["killed_at_walltime"] == overruns == (jobs.state == "killed").sum() > 0
    assert (jobs.run_time <= 50).all()


def test_cli_window_measures_the_jobs_submitted_in_it(tmp_path, workload_csv):
    out = tmp_path / "out"
    assert simulate_cli(workload_csv, out, "--from", "20", "--to", "50", "--warmup", "20") == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["jobs"] == 3  # submitted at 20, 30, 40
    assert summary["window"]["simulated_jobs"] == 5  # and 0, 10 as warm-up
    assert summary["window"]["rule"] == "submitted-in-window"
    jobs = pd.read_csv(out / "jobs.csv")
    assert jobs.measured.tolist() == [False, False, True, True, True]


def test_swf_out_reads_back_as_the_schedule(tmp_path, workload_csv):
    out, swf = tmp_path / "out", tmp_path / "schedule.swf"
    assert simulate_cli(workload_csv, out, "--swf-out", str(swf)) == 0
    jobs = pd.read_csv(out / "jobs.csv")
    back = read_swf(swf)
    assert back.job_id.tolist() == jobs.job_id.tolist()
    assert np.array_equal(back.submit, jobs.submit_time)
    assert np.array_equal(back.run, jobs.run_time) and np.array_equal(back.cores, jobs.cores)
    assert np.array_equal(back.estimate, jobs.estimate)
    # another tool: 18 blank-separated fields, comments from ';'
    table = pd.read_csv(swf, sep=r"\s+", comment=";", header=None, names=SWF_FIELDS)
    assert np.array_equal(table.wait_time, jobs.wait_time) and (table.status == 1).all()
    gz = tmp_path / "schedule.swf.gz"
    assert simulate_cli(workload_csv, tmp_path / "out2", "--swf-out", str(gz)) == 0
    assert read_swf(gz).job_id.tolist() == back.job_id.tolist()


# (job, submit, run, processors, user, group, queue, partition) of a hand-written SWF trace
ATTRIBUTED_JOBS = [
    (1, 0, 100, 1, 1, 10, 2, 1),
    (2, 0, 100, 1, 2, 20, 3, 1),
    (3, 150, 10, 1, 2, 20, 2, 2),
    (4, 160, 10, 1, 1, 10, 3, 2),
]


def test_swf_out_keeps_user_group_queue_and_partition_so_fair_share_reads_it_back(tmp_path):
    trace = tmp_path / "trace.swf"
    trace.write_text(
        "".join(
            f"{job} {submit} -1 {run} {procs} -1 -1 {procs} {run} -1 1 {user} {group} -1 "
            f"{queue} {partition} -1 -1\n"
            for job, submit, run, procs, user, group, queue, partition in ATTRIBUTED_JOBS
        )
    )
    platform, schedule = tmp_path / "one-core.json", tmp_path / "schedule.swf"
    platform.write_text(json.dumps({"nodes": 1, "sockets_per_node": 1, "cores_per_socket": 1}))
    plain = ["--platform", str(platform), "--scheduler", "easy", "--quiet"]
    argv = ["simulate", "--workload", str(trace), *plain, "--out", str(tmp_path / "plain")]
    assert main([*argv, "--swf-out", str(schedule)]) == 0
    table = pd.read_csv(schedule, sep=r"\s+", comment=";", header=None, names=SWF_FIELDS)
    expected = [row[4:] for row in ATTRIBUTED_JOBS]
    columns = ["user_id", "group_id", "queue", "partition"]
    assert table[columns].values.tolist() == [list(row) for row in expected]
    # fair share over the users of the schedule read back orders the queue as over the trace's
    # (test_multifactor's worked example: user 1's later job starts first)
    weights = "fairshare=10000,decay_half_life=100,fair_tree=false"
    fair = ["--priority", "multifactor", "--priority-weights", weights]
    starts = {}
    for name, workload in (("trace", trace), ("read back", schedule)):
        out = tmp_path / f"fair-{name}"
        argv = ["simulate", "--workload", str(workload), *plain, *fair, "--out", str(out)]
        assert main(argv) == 0
        starts[name] = pd.read_csv(out / "jobs.csv").start_time.tolist()
    assert starts["trace"] == starts["read back"] == [0, 100, 210, 200]


def test_swf_text_marks_killed_jobs_and_never_started_ones():
    workload = make_workload([1, 2], [0, 0], [100, 10], [2, 2], [50, 10], keep_estimates=True)
    result = simulate(workload, Platform(nodes=2), "easy", kill_at_walltime=True)
    records = [line.split() for line in swf_text(result).splitlines() if not line.startswith(";")]
    assert [record[10] for record in records] == ["0", "1"]  # status: killed, completed
    assert all(len(record) == len(SWF_FIELDS) for record in records)
    result.start[1] = math.nan  # a job that never started: wait and run unknown
    record = swf_text(result).splitlines()[-1].split()
    assert record[2] == record[3] == "-1"


@pytest.mark.parametrize(
    "extra, field",
    [
        (["--from", "50", "--to", "20"], "--to"),
        (["--warmup", "10"], "--warmup"),
        (["--from", "1996-13-40"], "--from"),
        (["--from", "2000-01-01"], "--from"),  # a CSV has no UnixStartTime
        (["--from", "1000"], "window"),  # no job submitted after it
        (["--cleaning", "cqsim"], "SWF"),
    ],
)
def test_bad_window_and_cleaning_exit_2_with_one_line(tmp_path, workload_csv, capsys, extra, field):
    out = tmp_path / "out"
    assert simulate_cli(workload_csv, out, *extra) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and field in lines[0]
    assert not out.exists()


def test_swf_out_into_a_folder_is_refused_before_anything_is_written(
    tmp_path, workload_csv, capsys
):
    out = tmp_path / "out"
    assert simulate_cli(workload_csv, out, "--swf-out", str(tmp_path)) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
    assert not out.exists()


def test_compare_takes_the_trace_options(tmp_path, workload_csv, capsys):
    code = main(
        ["compare", "--workload", str(workload_csv), "--platform", "grvingt"]
        + ["--scheduler", "easy", "--baseline", "fcfs", "--kill-at-walltime", "--json"]
        + ["--from", "0", "--to", "40"]
    )
    assert code == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows[0]["jobs"] == 4 and rows[0]["killed_at_walltime"] >= 1
