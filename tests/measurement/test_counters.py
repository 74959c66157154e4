"""Counters: procfs parsing, perf_event_open (software events on this machine), scaling, recorded
samples."""

import errno
import os
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cosched.errors import InputError
from cosched.measurement import counters
from cosched.measurement.counters import (
    BACKEND_CPUTIME,
    BACKEND_IPC_CPUTIME,
    PERF_COUNT_SW_TASK_CLOCK,
    PERF_TYPE_SOFTWARE,
    CountersUnavailable,
    PerfCounters,
    PerfEventGroup,
    ProcfsCounters,
    ReplayCounters,
    group_threads,
    load_samples,
    open_backend,
    parse_stat,
    scale_count,
)

PERF_COUNT_SW_CPU_CLOCK = 0
STRANGE_NAME = "a) (b c)"  # prctl truncates names to 15 bytes; this one fits


def _busy(seconds):
    end = time.process_time() + seconds
    x = 0
    while time.process_time() < end:
        x += 1
    return x


@given(
    comm=st.text(
        alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\n\x00"),
        max_size=15,
    ),
    state=st.sampled_from("RSDTZ"),
    pgrp=st.integers(1, 2**22),
    utime=st.integers(0, 2**40),
    stime=st.integers(0, 2**40),
)
def test_parse_stat_recovers_fields_whatever_the_thread_name(comm, state, pgrp, utime, stime):
    line = (
        f"4242 ({comm}) {state} 1 {pgrp} 3 0 -1 4194304 98 0 0 0 {utime} {stime} 0 0 20 0 1 "
        "0 3 4 5\n"
    )
    assert parse_stat(line) == (comm, state, pgrp, utime, stime)


def test_procfs_reads_a_real_thread_named_with_spaces_and_parentheses():
    code = (
        f"import ctypes, time; ctypes.CDLL(None).prctl(15, {STRANGE_NAME!r}.encode(), 0, 0, 0)\n"
        "end = time.time() + 5\n"
        "while time.time() < end: pass"
    )
    child = subprocess.Popen([sys.executable, "-c", code], start_new_session=True)
    try:
        deadline = time.monotonic() + 5
        name = None
        while time.monotonic() < deadline and name != STRANGE_NAME:
            time.sleep(0.05)
            name = counters.read_stat(f"/proc/{child.pid}/task/{child.pid}/stat")[0]
        assert name == STRANGE_NAME
        time.sleep(0.2)
        readings = ProcfsCounters().read({"t": child.pid})
        assert [r.tid for r in readings] == [child.pid]
        assert readings[0].cputime > 0 and np.isnan(readings[0].instructions)
    finally:
        child.kill()
        child.wait()


def test_group_threads_is_empty_for_a_group_that_does_not_exist():
    assert group_threads(2**22 + 12345) == []


def test_software_event_task_clock_counts_this_threads_cpu_time():
    group = PerfEventGroup(0, [(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK)])
    try:
        (first,), enabled0, running0 = group.read()
        _busy(0.15)
        (second,), enabled1, running1 = group.read()
        group.disable()
        (third,), _, _ = group.read()
        _busy(0.05)
        (fourth,), _, _ = group.read()
    finally:
        group.close()
    assert 0.12e9 < second - first < 0.6e9  # task-clock in ns for ~0.15 s of busy loop
    assert enabled1 >= running1 > running0 >= 0
    assert fourth == third  # disabled counters stay put


def test_perf_backend_follows_every_thread_of_a_process_group_with_software_events():
    events = [
        (PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK),
        (PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK),
    ]
    backend = PerfCounters(events=events)
    child = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "cosched.measurement.kernels",
            "compute",
            "--seconds",
            "5",
            "--threads",
            "2",
        ],
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 10
        while len({pid for pid, _ in group_threads(child.pid)}) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)  # interpreter start and fork of the second worker
        first = backend.read({"k": child.pid})
        time.sleep(0.3)
        second = backend.read({"k": child.pid})
    finally:
        os.killpg(child.pid, 9)
        child.wait()
        backend.close()
    assert len({r.pid for r in second}) == 2  # the parent worker and its forked worker
    before = {r.tid: r for r in first}
    assert all(r.cycles >= before[r.tid].cycles for r in second if r.tid in before)
    # counting since first seen
    assert any(r.cycles > before[r.tid].cycles for r in second if r.tid in before)
    assert backend.name == BACKEND_IPC_CPUTIME and not backend.groups


def test_hardware_counters_work_or_fail_with_a_typed_explained_error():
    try:
        backend, reason = open_backend("perf")
    except CountersUnavailable as error:
        assert error.errno in (errno.ENOENT, errno.EOPNOTSUPP, errno.EACCES, errno.EPERM)
        assert "PMU" in str(error) or "perf_event_paranoid" in str(error)
        backend, reason = open_backend("auto")
        assert backend.name == BACKEND_CPUTIME and reason == str(error)
    else:
        assert backend.name == BACKEND_IPC_CPUTIME and reason is None
        backend.close()


def test_permission_error_names_paranoid_value_and_capability(monkeypatch):
    monkeypatch.setattr(counters, "perf_event_paranoid", lambda: 3)
    message = str(counters._unavailable(errno.EACCES, "perf_event_open"))
    assert "perf_event_paranoid is 3" in message and "CAP_PERFMON" in message
    assert "no hardware PMU" in str(counters._unavailable(errno.ENOENT, "perf_event_open"))


@given(value=st.integers(0, 2**50), running=st.integers(1, 2**40), extra=st.integers(0, 2**40))
def test_scaled_count_is_value_times_enabled_over_running(value, running, extra):
    assert scale_count(value, running + extra, running) == pytest.approx(
        value * (running + extra) / running
    )
    assert scale_count(value, running, running) == value
    assert scale_count(value, extra, 0) == 0.0


def test_recorded_samples_are_scaled_by_enabled_over_running(tmp_path):
    path = tmp_path / "samples.csv"
    path.write_text(
        "time,task,tid,cputime,instructions,cycles,time_enabled,time_running\n"
        "0,a,7,0.0,100,200,10,5\n1,a,7,0.5,300,400,20,20\n1,b,9,0.1,0,0,5,0\n"
    )
    frame = load_samples(path)
    a = frame[frame["task"] == "a"]
    assert a["instructions"].tolist() == [200, 300] and a["cycles"].tolist() == [400, 400]
    assert frame.loc[frame["task"] == "b", "cycles"].tolist() == [0]
    assert (frame["pid"] == frame["tid"]).all()


def test_recorded_samples_errors_name_file_line_and_column(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("time,task,tid,cputime\n0,a,1,0.0\n1,a,1,oops\n")
    with pytest.raises(InputError, match=r"bad.csv, line 3, field 'cputime'"):
        load_samples(bad)
    missing = tmp_path / "missing.csv"
    missing.write_text("time,task,cputime\n0,a,0.0\n")
    with pytest.raises(InputError, match="field 'tid'"):
        load_samples(missing)


def test_replay_backend_returns_recorded_time_stamps_in_order(tmp_path):
    path = tmp_path / "samples.json"
    pd.DataFrame(
        {"time": [0, 0, 1, 1], "task": ["a"] * 4, "tid": [1, 2, 1, 2], "cputime": [0, 0, 0.4, 0.2]}
    ).to_json(path, orient="records")
    replay = ReplayCounters.from_file(path)
    assert [r.cputime for r in replay.read({"a": 0})] == [0, 0]
    assert [r.cputime for r in replay.read({"a": 0, "unknown": 1})] == [0.4, 0.2]
    assert replay.read({"a": 0}) == [] and replay.read({"unknown": 0}) == []
