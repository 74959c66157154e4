"""Verified cache entries (`cosched.simulator.parse_cache`): a stored entry loads as stored;
concurrent writers, a killed writer, a moved entry and things that are not regular files never load
as valid.
Every damaged form of an SWF entry is fuzzed in tests/fuzz/test_fuzz_cache.py."""

import os
import signal
import subprocess
import sys
import threading

import numpy as np
import pytest

from cosched.simulator import parse_cache

MAX_ARRAY_BYTES = 1 << 24
ENTRY_NUMBERS = 50_000  # numbers per test entry: writes take long enough to overlap


def _store(key, value: int) -> None:
    parse_cache.store(key, {"value": value}, {"x": np.full(ENTRY_NUMBERS, value, dtype=np.int64)})


def _loaded_value(key):
    """The value of the entry `key`, None for no valid entry; fails on an entry mixing two
    writes."""
    entry = parse_cache.load(key, MAX_ARRAY_BYTES)
    if entry is None:
        return None
    meta, arrays = entry
    assert arrays["x"].size == ENTRY_NUMBERS and np.all(arrays["x"] == meta["value"])
    return meta["value"]


def test_a_stored_entry_loads_as_stored(tmp_path):
    key = tmp_path / "k.entry"
    arrays = {"a": np.arange(5, dtype=np.int64), "b": np.linspace(0, 1, 5), "empty": np.zeros(0)}
    parse_cache.store(key, {"header": {"Computer": "x"}, "n": 5}, arrays)
    meta, loaded = parse_cache.load(key, MAX_ARRAY_BYTES)
    assert meta == {"header": {"Computer": "x"}, "n": 5} and list(loaded) == list(arrays)
    for name, array in arrays.items():
        assert loaded[name].dtype == array.dtype and np.array_equal(loaded[name], array)
    assert parse_cache.load(key, 8 * 5) is None  # larger than the caller allows
    assert not list(tmp_path.glob("*.part"))


def test_an_entry_moved_or_copied_under_another_key_is_refused(tmp_path):
    key, other = tmp_path / "one.entry", tmp_path / "two.entry"
    _store(key, 1)
    other.write_bytes(key.read_bytes())
    assert _loaded_value(key) == 1 and _loaded_value(other) is None


@pytest.mark.timeout(60)  # a FIFO opened for reading blocks until a writer comes
def test_only_regular_files_are_read(tmp_path):
    _store(tmp_path / "valid.entry", 1)
    os.mkfifo(tmp_path / "fifo.entry")
    (tmp_path / "zero.entry").symlink_to("/dev/zero")
    (tmp_path / "link.entry").symlink_to(tmp_path / "valid.entry")
    (tmp_path / "folder.entry").mkdir()
    for name in ("fifo", "zero", "link", "folder", "missing"):
        assert _loaded_value(tmp_path / f"{name}.entry") is None, name
    _store(tmp_path / "fifo.entry", 2)  # a bad entry is replaced by the next store
    assert _loaded_value(tmp_path / "fifo.entry") == 2


def test_concurrent_writers_never_leave_a_mixed_entry(tmp_path):
    key = tmp_path / "shared.entry"
    stop, seen = threading.Event(), set()

    def write(value: int) -> None:
        while not stop.is_set():
            _store(key, value)

    writers = [threading.Thread(target=write, args=(value,)) for value in (1, 2)]
    for writer in writers:
        writer.start()
    try:
        for _ in range(300):
            seen.add(_loaded_value(key))
    finally:
        stop.set()
        for writer in writers:
            writer.join()
    assert seen - {None} <= {1, 2} and _loaded_value(key) in (1, 2)
    assert not list(tmp_path.glob("*.part"))


KILLED_WRITER = """
import os, sys, time
from pathlib import Path
import numpy as np
from cosched.simulator import parse_cache

def paused(source, target):
    print("written", flush=True)
    time.sleep(600)

os.replace = paused
parse_cache.store(Path(sys.argv[1]), {"value": 2}, {"x": np.full(50_000, 2)})
"""


def test_a_writer_killed_before_the_rename_leaves_the_old_entry(tmp_path):
    key = tmp_path / "k.entry"
    _store(key, 1)
    writer = subprocess.Popen(
        [sys.executable, "-c", KILLED_WRITER, str(key)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert writer.stdout.readline() == "written\n"
    finally:
        writer.send_signal(signal.SIGKILL)
        writer.wait()
        writer.stdout.close()
    (part,) = tmp_path.glob("*.part")  # the whole new entry, never read under that name
    assert part.stat().st_size > 0 and _loaded_value(key) == 1
    _store(key, 3)
    assert _loaded_value(key) == 3
