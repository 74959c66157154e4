"""`written_aside`: a large output written by a forked child while the command writes the others,
all or nothing (the file appears only when the block and the child both succeed)."""

from __future__ import annotations

import errno
import os
import signal
import sys
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cosched.cli import main
from cosched.errors import InputError
from cosched.simulator.elastic import results

from .scenario import write_scenario

pytestmark = pytest.mark.skipif(not results.FORK_WRITES, reason="fork: Linux only")

SLOW_CHILD_SECONDS = 30  # a child that would outlive the test unless it is stopped
STOP_SECONDS = 5  # a stopped child is gone well before this


@pytest.fixture(params=[True, False], ids=["forked", "in-process"])
def forking(request, monkeypatch):
    monkeypatch.setattr(results, "_fork_allowed", lambda: request.param)
    return request.param


def _writer(data: bytes):
    def write(path):
        with open(path, "wb") as handle:
            handle.write(data)

    return write


def test_the_file_appears_whole_when_the_block_ends(tmp_path, forking):
    target = tmp_path / "series.csv"
    data = b"1,0,1\n" * 100_000
    with results.written_aside(target, _writer(data)):
        assert not target.exists()
        (tmp_path / "other.csv").write_text("written meanwhile\n")
    assert target.read_bytes() == data
    assert sorted(path.name for path in tmp_path.iterdir()) == ["other.csv", "series.csv"]


@settings(max_examples=15, deadline=None)
@given(data=st.binary(max_size=5000), fork=st.booleans())
def test_the_file_holds_exactly_what_the_writer_wrote(tmp_path_factory, data, fork):
    folder = tmp_path_factory.mktemp("aside")
    saved = results._fork_allowed
    results._fork_allowed = lambda: fork
    try:
        with results.written_aside(folder / "out.csv", _writer(data)):
            pass
    finally:
        results._fork_allowed = saved
    assert (folder / "out.csv").read_bytes() == data
    assert [path.name for path in folder.iterdir()] == ["out.csv"]


def test_a_failing_writer_is_one_input_error_and_leaves_nothing(tmp_path, forking):
    def full_disk(path):
        with open(path, "wb") as handle:
            handle.write(b"partial")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    target = tmp_path / "series.csv"
    expected = InputError if forking else OSError
    with (
        pytest.raises(expected, match="No space left on device") as caught,
        results.written_aside(target, full_disk),
    ):
        pass
    if forking:
        assert str(target) in str(caught.value)
    assert list(tmp_path.iterdir()) == []


def test_a_failing_block_stops_the_child_and_leaves_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(results, "_fork_allowed", lambda: True)

    def slow(path):
        with open(path, "wb") as handle:
            handle.write(b"partial")
        time.sleep(SLOW_CHILD_SECONDS)

    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt), results.written_aside(tmp_path / "series.csv", slow):
        time.sleep(0.2)  # the child has opened its file
        raise KeyboardInterrupt  # Ctrl-C while the command writes the other files
    assert time.monotonic() - started < STOP_SECONDS
    assert list(tmp_path.iterdir()) == []


def test_a_child_killed_from_outside_is_named(tmp_path, monkeypatch):
    monkeypatch.setattr(results, "_fork_allowed", lambda: True)

    def killed(path):
        os.kill(os.getpid(), 9)

    with (
        pytest.raises(InputError, match="stopped by signal 9"),
        results.written_aside(tmp_path / "series.csv", killed),
    ):
        pass
    assert list(tmp_path.iterdir()) == []


def test_the_child_prints_nothing_the_parent_had_buffered(tmp_path, monkeypatch, capfd):
    monkeypatch.setattr(results, "_fork_allowed", lambda: True)
    print("printed once", end="")  # still in the buffer when the child is forked
    with results.written_aside(tmp_path / "series.csv", _writer(b"x")):
        pass
    sys.stdout.flush()
    assert capfd.readouterr().out.count("printed once") == 1


def _sensed_project(tmp_path):
    model = {
        "phases": [
            {
                "tasks": [
                    {"type": "cpu", "flops": 3e9, "computation_pattern": "uniform"},
                    {"type": "pfs_write", "bytes": 2e9, "pattern": "all_ranks"},
                ]
            }
        ]
    }
    sensing = {"sensing": True, "sensing_interval": 1, "cpu_utilization": "c.csv"}
    jobs = [{"type": "rigid", "submit_time": 0, "num_nodes": 2}]
    return write_scenario(tmp_path, jobs, model, nodes=3, config=sensing)


def _elastic(config, out):
    return main(["elastic", str(config), "--scheduler", "fcfs-rigid", "--out", str(out), "--quiet"])


def test_the_command_writes_the_same_files_with_and_without_the_child(tmp_path, monkeypatch):
    config = _sensed_project(tmp_path)
    written = {}
    for fork in (True, False):
        monkeypatch.setattr(results, "_fork_allowed", lambda fork=fork: fork)
        out = tmp_path / f"out-{fork}"
        assert _elastic(config, out) == 0
        written[fork] = {
            path.name: path.read_bytes() for path in out.iterdir() if path.name != "summary.json"
        }
    assert written[True] == written[False]
    assert "cpu_utilization.csv" in written[True]


def test_a_failing_child_is_one_line_exit_2_and_no_output_folder(tmp_path, monkeypatch, capsys):
    config = _sensed_project(tmp_path)
    monkeypatch.setattr(results, "_fork_allowed", lambda: True)

    def full_disk(sim, path, interval):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(results, "write_cpu_series", full_disk)
    out = tmp_path / "out"
    assert _elastic(config, out) == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert "cpu_utilization.csv" in error and "No space left on device" in error
    assert not out.exists()


def test_no_child_when_sigchld_is_ignored(monkeypatch):
    monkeypatch.setattr(results, "_idle_core", lambda: True)
    monkeypatch.setattr(results.threading, "active_count", lambda: 1)
    assert results._fork_allowed() == results.FORK_WRITES
    previous = signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    try:
        assert not results._fork_allowed()
    finally:
        signal.signal(signal.SIGCHLD, previous)


def test_a_failed_fork_writes_in_this_process(tmp_path, monkeypatch):
    monkeypatch.setattr(results, "_fork_allowed", lambda: True)

    def no_process():
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(results.os, "fork", no_process)
    with results.written_aside(tmp_path / "series.csv", _writer(b"1,0\n")):
        pass
    assert (tmp_path / "series.csv").read_bytes() == b"1,0\n"
    assert [path.name for path in tmp_path.iterdir()] == ["series.csv"]
