"""`--compat cqsim`: CQSim's EASY job for job (its saved output on a KTH-SP2 slice), each setting of
the variant on a hand-computed schedule, and CQSim's trace cleaning."""

import gzip
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cosched.cli import main
from cosched.simulator.compat import COMPAT
from cosched.simulator.platform import Platform
from cosched.simulator.schedulers.backfilling import shadow_time
from cosched.simulator.simulation import simulate
from cosched.simulator.workload import make_workload, read_swf

DATA = Path(__file__).parent / "data" / "cqsim"
SLICE = DATA / "kth-sp2-first800.swf.gz"
CQSIM_RESULT = DATA / "kth-sp2-first800.cqsim-easy.rst.gz"
KTH_NODES = 100


def cqsim_waits() -> dict[int, float]:
    """Job id -> wait in CQSim's result file (id;proc;proc;request;run;wait;submit;start;end)."""
    with gzip.open(CQSIM_RESULT, "rt") as handle:
        return {int(f[0]): float(f[5]) for f in (line.split(";") for line in handle)}


def waits(workload, result) -> dict[int, float]:
    return dict(zip(workload.job_id.tolist(), (result.start - workload.submit).tolist()))


def run_compat(workload, platform, **changes):
    compat = COMPAT["cqsim"]
    options = {"depth": compat.depth(len(workload)), **compat.scheduler_options}
    engine = dict(compat.engine_options)
    for key, value in changes.items():
        (engine if key == "pass_per_event" else options)[key] = value
    return simulate(workload, platform, "easy", scheduler_options=options, **engine)


def test_compat_cqsim_starts_every_job_of_the_slice_when_cqsim_does():
    workload = read_swf(SLICE, cleaning="cqsim")
    expected = cqsim_waits()
    assert len(workload) == len(expected) == 800
    assert waits(workload, run_compat(workload, Platform(nodes=KTH_NODES))) == expected


@pytest.mark.parametrize(
    "change",
    [{"shadow_extra": "first"}, {"queued_durations": "estimate"}, {"pass_per_event": False}],
)
def test_each_setting_of_the_variant_is_needed_on_the_slice(change):
    workload = read_swf(SLICE, cleaning="cqsim")
    result = run_compat(workload, Platform(nodes=KTH_NODES), **change)
    assert waits(workload, result) != cqsim_waits()


def test_cosched_default_easy_is_not_cqsims():
    workload = read_swf(SLICE)
    result = simulate(workload, Platform(nodes=KTH_NODES), "easy")
    assert waits(workload, result) != cqsim_waits()


def test_shadow_extra_all_counts_every_job_ending_at_the_shadow_time():
    # head needs 4, 1 free; jobs 0 and 1 (2 units each) both end at 10: "first" stops at job 1
    by_end, held = [(10.0, 0), (10.0, 1), (20.0, 2)], [2, 2, 3]
    assert shadow_time(4, 1, by_end, held, "first") == (10.0, 1)
    assert shadow_time(4, 1, by_end, held, "all") == (10.0, 1)
    assert shadow_time(3, 1, by_end, held, "first") == (10.0, 0)
    assert shadow_time(3, 1, by_end, held, "all") == (10.0, 2)
    assert shadow_time(9, 1, by_end, held, "all") == (float("inf"), 0)


@given(
    need=st.integers(1, 12),
    free=st.integers(0, 4),
    ends=st.lists(st.tuples(st.integers(1, 5), st.integers(1, 4)), max_size=6),
)
def test_shadow_extra_all_has_the_same_shadow_and_never_fewer_extra_units(need, free, ends):
    by_end = sorted((float(end), job) for job, (end, _) in enumerate(ends))
    held = [units for _, units in ends]
    first, every = (
        shadow_time(need, free, by_end, held, "first"),
        shadow_time(need, free, by_end, held, "all"),
    )
    assert first[0] == every[0] and every[1] >= first[1]


def test_hand_computed_schedule_of_each_cqsim_setting():
    """4 nodes. Job 0: 3 nodes, 0-100 (estimate 100). Job 1: 1 node, 0-50 (estimate 50).
    Job 2 (t=1): 4 nodes (the head). Job 3 (t=2): 1 node, run 30, estimate 200.

    Job 2's shadow time is 100 (job 1 frees 1 node at 50, job 0 the other 3 at 100), no node
    extra. At 50 one node is free: cosched's EASY keeps job 3 waiting (50 + estimate 200 passes
    the shadow), CQSim's starts it (predicted to last its run time: 50 + 30 <= 100)."""
    workload = make_workload(
        [0, 1, 2, 3], [0, 0, 1, 2], [100, 50, 10, 30], [3, 1, 4, 1], [100, 50, 10, 200]
    )
    platform = Platform(nodes=4)
    own = simulate(workload, platform, "easy")
    assert own.start.tolist() == [0, 0, 100, 110]
    cqsim = run_compat(workload, platform)
    assert cqsim.start.tolist() == [0, 0, 100, 50]


def test_pass_per_event_sees_each_completion_alone():
    """2 nodes. Jobs 0 and 1 (1 node each) end at 10, job 0 predicted to end at 10, job 1 at 50.
    Job 2 (t=1): 2 nodes, the head; job 3 (t=2): 1 node, run 5.

    One pass at t=10 starts the head (both nodes free). With a pass after each completion, the pass
    after job 0's end sees 1 node free and job 1 predicted to end at 50: job 3 (ends at 15, before
    the shadow 50) is backfilled first, and the head waits for it."""
    workload = make_workload(
        [0, 1, 2, 3], [0, 0, 1, 2], [10, 10, 10, 5], [1, 1, 2, 1], [10, 50, 10, 5]
    )
    platform = Platform(nodes=2)
    options = {"depth": 10}
    once = simulate(workload, platform, "easy", scheduler_options=options)
    assert once.start.tolist() == [0, 0, 10, 20]
    each = simulate(workload, platform, "easy", scheduler_options=options, pass_per_event=True)
    assert each.start.tolist() == [0, 0, 15, 10]


SWF_RECORDS = """; MaxProcs: 8
1 0 -1 100 2 -1 -1 4 50 -1 1 -1 -1 -1 -1 -1 -1 -1
2 5 -1 30 2 -1 -1 2 0 -1 1 -1 -1 -1 -1 -1 -1 -1
3 6 -1 0.5 1 -1 -1 1 60 -1 1 -1 -1 -1 -1 -1 -1 -1
4 7 -1 20 -1 -1 -1 -1 60 -1 1 -1 -1 -1 -1 -1 -1 -1
5 8 -1 20 3 -1 -1 3 60 -1 5 -1 -1 -1 -1 -1 -1 -1
"""


def test_cqsim_cleaning_of_hand_written_records(tmp_path):
    path = tmp_path / "t.swf"
    path.write_text(SWF_RECORDS)
    cqsim = read_swf(path, cleaning="cqsim")
    # job 2: no requested time; job 3: whole run time 0; job 4: no requested processors
    assert cqsim.job_id.tolist() == [1, 5]
    assert cqsim.cores.tolist() == [4, 3]  # requested processors
    assert cqsim.run.tolist() == [50, 20]  # job 1's run cut to its request
    assert cqsim.cleaning["cqsim_run_time_cut_to_request"] == 1
    own = read_swf(path)
    assert own.job_id.tolist() == [1, 2, 3, 5] and own.cores[0] == 2  # allocated processors
    completed = read_swf(path, status=("completed",))
    assert completed.job_id.tolist() == [1, 2, 3] and completed.cleaning["dropped_status"] == 1


def run_cli(args, capsys):
    code = main(args)
    captured = capsys.readouterr()
    return code, captured.err.strip().splitlines()


@pytest.mark.parametrize(
    "extra, field",
    [
        (["--compat", "cqsim", "--scheduler", "conservative"], "--compat"),
        (["--status", "completed,nonsense"], "--status"),
        (["--compat", "cqsim", "--run-times"], "--run-times"),
    ],
)
def test_bad_trace_options_exit_2_with_one_line_and_no_output(tmp_path, capsys, extra, field):
    out = tmp_path / "out"
    code, lines = run_cli(
        ["simulate", "--workload", str(SLICE), "--platform", "kth-sp2", "--out", str(out)] + extra,
        capsys,
    )
    assert code == 2 and len(lines) == 1 and field in lines[0]
    assert not out.exists()


def test_simulate_compat_cqsim_from_the_command_line(tmp_path, capsys):
    import json

    out = tmp_path / "out"
    code = main(
        [
            "simulate",
            "--workload",
            str(SLICE),
            "--platform",
            "kth-sp2",
            "--compat",
            "cqsim",
            "--out",
            str(out),
            "--quiet",
        ]
    )
    assert code == 0
    import pandas as pd

    jobs = pd.read_csv(out / "jobs.csv")
    assert dict(zip(jobs.job_id, jobs.wait_time)) == cqsim_waits()
    summary = json.loads((out / "summary.json").read_text())
    assert (
        summary["compat"] == "cqsim" and summary["cleaning"]["cqsim_dropped_without_request"] == 0
    )


def test_compat_settings_are_documented_in_help(capsys):
    with pytest.raises(SystemExit):
        main(["simulate", "--help"])
    text = capsys.readouterr().out
    assert "--compat {cqsim}" in text and "--kill-at-walltime" in text and "--swf-out" in text


def test_cqsim_variant_never_overcommits_nodes():
    workload = read_swf(SLICE, cleaning="cqsim")
    result = run_compat(workload, Platform(nodes=KTH_NODES))
    times = np.concatenate([result.start, result.end])
    deltas = np.concatenate([workload.cores, -workload.cores])
    order = np.lexsort((deltas, times))  # ends before starts at one time
    assert np.cumsum(deltas[order]).max() <= KTH_NODES


@given(
    jobs=st.lists(
        st.tuples(st.integers(0, 60), st.integers(1, 30), st.integers(1, 6), st.integers(0, 30)),
        min_size=1,
        max_size=30,
    )
)
def test_cqsim_variant_on_generated_workloads_never_overcommits_nor_starts_early(jobs):
    submit, run, cores, slack = (list(column) for column in zip(*jobs))
    estimate = [r + s for r, s in zip(run, slack)]
    workload = make_workload(range(len(jobs)), submit, run, cores, estimate)
    result = run_compat(workload, Platform(nodes=6))
    assert (result.start >= workload.submit).all()
    assert (result.end - result.start == workload.run).all()
    times = np.concatenate([result.start, result.end])
    deltas = np.concatenate([workload.cores, -workload.cores])
    order = np.lexsort((deltas, times))
    assert np.cumsum(deltas[order]).max() <= 6
