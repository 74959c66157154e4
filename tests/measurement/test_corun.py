"""Co-run harness: combination sets, measuring two short kernels, and never leaving stopped or
orphan processes."""

import json
import os
import signal
import sys
import threading
import time

import numpy as np
import pandas as pd
import pytest

from cosched.errors import InputError
from cosched.measurement.corun import (
    CoRunHarness,
    TaskSpec,
    combination_set,
    measure_combinations,
    parse_task,
)
from cosched.measurement.counters import ProcfsCounters, group_threads, load_samples, read_stat
from cosched.measurement.probe import interval_speeds
from cosched.measurement.session import measure_to_directory
from cosched.measurement.validation import kernel_command
from cosched.theory.instance import load_instance
from cosched.theory.lattice import popcount

WARMUP, WINDOW = 0.1, 0.3
# busy task that exits (code 0) as soon as it runs after FLAG exists: the test creates FLAG once the
# task's window
# alone is measured (it is frozen then), so the task is measured alone once, then gone in its next
# combination
EXIT_ON_NEXT_CONTINUE = "import os, sys\nwhile not os.path.exists(sys.argv[1]): pass"


def kernel(name, seconds=30, threads=1):
    return TaskSpec(name, kernel_command(name, threads, seconds=seconds))


def _leftovers(pids):
    """Live (non-zombie) threads of the given process groups, and whether any of them is stopped."""
    threads = [t for pid in pids for t in group_threads(pid)]
    states = [read_stat(f"/proc/{p}/task/{t}/stat") for p, t in threads]
    return threads, [s for s in states if s is not None and s[1] in "tT"]


def test_combination_sets_start_with_singletons_and_have_the_requested_sizes():
    pairs = combination_set(4, "pairs")
    assert pairs[:4].tolist() == [1, 2, 4, 8] and len(pairs) == 4 + 6
    assert (
        popcount(combination_set(4, "upto:3")).max() == 3 and len(combination_set(4, "all")) == 15
    )
    sample = combination_set(6, "sample:10", seed=3)
    assert len(sample) == 6 + 10 and (popcount(sample[6:]) >= 2).all()
    assert np.array_equal(sample, combination_set(6, "sample:10", seed=3))
    wide = combination_set(40, "sample:300", seed=1)  # 2^40 combinations: drawn, not enumerated
    assert (
        len(wide) == 40 + 300
        and len(np.unique(wide)) == len(wide)
        and (popcount(wide[40:]) >= 2).all()
    )
    # fewer combinations than asked: all of them
    assert len(combination_set(3, "sample:300")) == 3 + 4
    chains = combination_set(6, "chains:5:4", seed=2)
    assert popcount(chains).max() == 4 and chains[:6].tolist() == [1, 2, 4, 8, 16, 32]
    # every step of a chain is present: one task fewer, same target
    for mask in chains[popcount(chains) > 1]:
        assert any(mask ^ (1 << bit) in chains for bit in range(6) if mask >> bit & 1)
    for bad in ("pair", "upto:0", "sample:x", "upto", "chains:2:7", "chains:0"):
        with pytest.raises(InputError, match="--combinations"):
            combination_set(3, bad)


def test_parse_task_splits_at_the_first_equals_sign():
    assert parse_task("a=echo x=1") == TaskSpec("a", "echo x=1")
    with pytest.raises(InputError, match="NAME=COMMAND"):
        parse_task("no-command")
    with pytest.raises(InputError, match="cannot contain"):
        parse_task("a+b=true")


def test_harness_on_two_kernels_gives_an_instance_that_opt_accepts(tmp_path):
    report = measure_to_directory(
        [kernel("compute"), kernel("cache")],
        tmp_path,
        ProcfsCounters(),
        warmup=WARMUP,
        window=WINDOW,
        progress=False,
        plots=False,
    )
    assert report["backend"] == "cputime" and not report["interrupted"]
    assert [t["status"] for t in report["tasks"]] == ["ok", "ok"]
    instance = load_instance(tmp_path / "instance.json", monotone=False)
    assert instance.tasks == ("compute", "cache") and instance.combinations.tolist() == [1, 2, 3]
    assert np.allclose(instance.speeds[[0, 1], [0, 1]], 1.0)
    assert (instance.speeds[:, 2] > 0).all()
    header = (tmp_path / "heatmap.csv").read_text().splitlines()[0]
    assert header == "name_A,procs_A,compact_A,name_B,procs_B,compact_B,co_A_B,co_B_A"
    assert json.loads((tmp_path / "report.json").read_text())["backend"] == "cputime"
    replayed = interval_speeds(load_samples(tmp_path / "samples.csv"))
    speeds = pd.read_csv(tmp_path / "speeds.csv").merge(replayed, on=["combination", "task"])
    # replay = live probe, up to the clock ticks of the per-thread times the replay has (the live
    # probe takes the
    # task's CPU time from its container, in nanoseconds): two readings, one tick each, over one
    # window
    tick_speed = 2.0 / os.sysconf("SC_CLK_TCK") / WINDOW
    assert len(speeds) == 4
    assert np.allclose(speeds["speed_x"], speeds["speed_y"], rtol=0, atol=tick_speed)
    from cosched.theory.opt import solve_opt

    assert solve_opt(instance).makespan > 0


def test_no_process_is_left_stopped_or_alive_after_an_error_inside_the_harness():
    pids = []
    with (
        pytest.raises(RuntimeError, match="boom"),
        CoRunHarness(
            [kernel("compute", threads=2), kernel("memory")],
            ProcfsCounters(),
            warmup=WARMUP,
            window=WINDOW,
        ) as harness,
    ):
        pids = [p.pid for p in harness.processes]
        time.sleep(0.5)  # let the kernel fork its second worker (it is stopped right after)
        harness.measure(1)
        used = [handle.cpu_time() for handle in harness.handles]
        time.sleep(0.1)
        # between combinations all frozen
        assert [handle.cpu_time() for handle in harness.handles] == used
        raise RuntimeError("boom")
    assert _leftovers(pids) == ([], [])


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_or_sigterm_keeps_measured_combinations_and_leaves_no_process(signum):
    tasks = [kernel("compute"), kernel("cache")]
    original = signal.getsignal(signal.SIGTERM)

    timers = []

    def on_result(result):
        if result.combination == 2:  # arrives during the third combination's warm-up or window
            timers.append(threading.Timer(0.15, os.kill, (os.getpid(), signum)))
            timers[-1].start()

    try:
        measurement = measure_combinations(
            tasks,
            combination_set(2, "pairs"),
            ProcfsCounters(),
            warmup=WARMUP,
            window=WINDOW,
            on_result=on_result,
        )
    finally:
        for timer in timers:  # never let the signal reach pytest itself
            timer.cancel()
    assert measurement.interrupted
    assert [r.combination for r in measurement.results] == [1, 2]
    assert _leftovers([s.pid for s in measurement.status]) == ([], [])
    assert signal.getsignal(signal.SIGTERM) is original


def test_tasks_that_fail_or_exit_are_reported_and_their_combinations_skipped(tmp_path):
    flag = tmp_path / "flag"
    tasks = [
        kernel("compute"),
        TaskSpec("missing", "exec /nonexistent/binary"),
        TaskSpec("cache", f"exec {sys.executable} -c '{EXIT_ON_NEXT_CONTINUE}' {flag}"),
    ]

    def after_alone(result):
        if result.combination == 4:
            flag.touch()

    measurement = measure_combinations(
        tasks,
        combination_set(3, "pairs"),
        ProcfsCounters(),
        warmup=0.3,
        # the warm-up: interpreter start
        window=WINDOW,
        on_result=after_alone,
    )
    status = {s.name: s for s in measurement.status}
    assert status["compute"].status == "ok"
    assert status["missing"].status == "never-ran" and status["missing"].returncode != 0
    assert status["cache"].status == "exited" and status["cache"].returncode == 0
    measured = [r.combination for r in measurement.results]
    assert 3 not in measured and 6 not in measured  # formed after a member was gone: skipped
    assert all(np.isnan(r.speeds["missing"]) for r in measurement.results if r.combination & 2)
    assert _leftovers([s.pid for s in measurement.status]) == ([], [])
