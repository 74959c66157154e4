"""The cache of parsed SWF files: a hit gives the parsed workload value for value, a changed file or
cap is parsed again, a damaged cache file is ignored (also by `simulate`), and COSCHED_NO_CACHE
turns the cache off."""

import gzip
import os
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cosched.cli import main
from cosched.simulator import workload as swf
from cosched.simulator.workload import CACHE_MIN_BYTES, cache_folder, read_swf

FIELDS = 18


def _write(path, rows):
    lines = ["; Computer: test", "; MaxProcs: 64"]
    for number, (submit, run, procs, estimate) in enumerate(rows, 1):
        fields = [number, submit, -1, run, procs, -1, -1, procs, estimate] + [-1] * (FIELDS - 9)
        lines.append(" ".join(str(v) for v in fields))
    text = "\n".join(lines) + "\n"
    # comments of random digits (gzip cannot shrink them much): the file reaches the size that is
    # cached
    noise = random.Random(0).randbytes(CACHE_MIN_BYTES).hex()
    text += "".join(f"; {noise[i : i + 200]}\n" for i in range(0, len(noise), 200))
    path.write_bytes(gzip.compress(text.encode()) if path.suffix == ".gz" else text.encode())


def _same(a, b):
    for name in ("job_id", "submit", "run", "cores", "estimate"):
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype and np.array_equal(x, y), name
    assert a.header == b.header and a.cleaning == b.cleaning and a.source == b.source


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("COSCHED_NO_CACHE", raising=False)
    return tmp_path / "xdg" / "cosched" / "workloads"


jobs = st.lists(
    st.tuples(
        st.integers(0, 10_000), st.integers(-1, 5_000), st.integers(-1, 100), st.integers(-1, 9_000)
    ),
    min_size=1,
    max_size=40,
)


@settings(max_examples=25, deadline=None)
@given(rows=jobs, cap=st.sampled_from([None, 16, 64]))
def test_a_cache_hit_gives_the_parsed_workload(tmp_path_factory, rows, cap):
    folder = tmp_path_factory.mktemp("swf")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(folder / "xdg"))
        patch.delenv("COSCHED_NO_CACHE", raising=False)
        path = folder / "t.swf"
        _write(path, rows)
        valid = any(run > 0 and procs > 0 and submit >= 0 for submit, run, procs, _ in rows)
        if not valid:
            return  # no job survives the cleaning rules: nothing to compare
        first = read_swf(path, max_cores=cap)
        assert len(list(cache_folder().glob("*.swfcache"))) == 1
        patch.setenv("COSCHED_NO_CACHE", "1")
        parsed = read_swf(path, max_cores=cap)
        patch.delenv("COSCHED_NO_CACHE")
        _same(read_swf(path, max_cores=cap), parsed)
        _same(first, parsed)


def test_a_changed_file_or_cap_is_parsed_again(cache, tmp_path):
    path = tmp_path / "t.swf.gz"
    _write(path, [(0, 10, 4, 20), (5, 10, 8, 20)])
    assert read_swf(path).run.tolist() == [10, 10]
    _write(path, [(0, 10, 4, 20), (5, 30, 8, 20)])
    assert read_swf(path).run.tolist() == [10, 30]
    assert read_swf(path, max_cores=4).cores.tolist() == [4, 4]
    assert read_swf(path).cores.tolist() == [4, 8]
    assert len(list(cache.glob("*.swfcache"))) == 3
    assert not list(cache.glob("*.part"))  # written atomically


def test_the_source_is_the_path_read(cache, tmp_path):
    one, two = tmp_path / "one.swf", tmp_path / "two.swf"
    _write(one, [(0, 10, 4, 20)])
    two.write_bytes(one.read_bytes())
    assert read_swf(one).source == str(one) and read_swf(two).source == str(two)
    assert len(list(cache.glob("*.swfcache"))) == 1  # one content, one cache file


def test_a_damaged_cache_file_is_ignored(cache, tmp_path):
    path = tmp_path / "t.swf"
    _write(path, [(0, 10, 4, 20), (5, 10, 8, 20)])
    parsed = read_swf(path)
    (kept,) = cache.glob("*.swfcache")
    for damage in (kept.read_bytes()[:-3], b"not json\n", b""):
        kept.write_bytes(damage)
        _same(read_swf(path), parsed)


def test_small_files_and_a_disabled_cache_are_not_cached(cache, tmp_path, monkeypatch):
    small = tmp_path / "small.swf"
    small.write_text("1 0 -1 10 4 -1 -1 4 20" + " -1" * 9 + "\n")
    assert read_swf(small).run.tolist() == [10]
    assert not cache.exists()
    monkeypatch.setenv("COSCHED_NO_CACHE", "1")
    assert cache_folder() is None
    big = tmp_path / "big.swf"
    _write(big, [(0, 10, 4, 20)])
    read_swf(big)
    assert not cache.exists()


def test_the_cache_folder_honours_xdg_cache_home(monkeypatch, tmp_path):
    monkeypatch.delenv("COSCHED_NO_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_folder() == tmp_path / "cosched" / "workloads"
    monkeypatch.setenv("XDG_CACHE_HOME", "")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_folder() == tmp_path / "home" / ".cache" / "cosched" / "workloads"


def test_bad_files_are_refused_as_before_and_not_cached(cache, tmp_path):
    from cosched.errors import InputError

    path = tmp_path / "bad.swf"
    _write(path, [(0, 10, 4, 20)])
    path.write_bytes(path.read_bytes().replace(b"\n1 0 ", b"\n1 x ", 1))
    with pytest.raises(InputError, match="submit_time"):
        read_swf(path)
    assert not list(cache.glob("*.swfcache")) if cache.exists() else True
    assert swf.CACHE_MIN_BYTES > 0


def _body_zeroed(kept, jobs):
    data = kept.read_bytes()
    kept.write_bytes(data[: len(data) - 40 * jobs] + bytes(40 * jobs))


def _fifo(kept, jobs):
    kept.unlink()
    os.mkfifo(kept)


def _dev_zero(kept, jobs):
    kept.unlink()
    kept.symlink_to("/dev/zero")


@pytest.mark.timeout(120)  # before the checks, a FIFO entry hung the command
@pytest.mark.parametrize("damage", [_body_zeroed, _fifo, _dev_zero])
def test_simulate_with_a_damaged_entry_writes_the_uncached_jobs_csv(cache, tmp_path, damage):
    trace = tmp_path / "t.swf"
    _write(trace, [(10 * i, 100 + i, 1 + i % 8, 300) for i in range(30)])

    def simulate(out):
        command = ["simulate", "--workload", str(trace), "--platform", "kth-sp2", "--quiet"]
        assert main([*command, "--out", str(tmp_path / out)]) == 0
        return (tmp_path / out / "jobs.csv").read_bytes()

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("COSCHED_NO_CACHE", "1")
        uncached = simulate("uncached")
    assert simulate("first") == uncached
    (kept,) = cache.glob("*.swfcache")
    damage(kept, 30)
    assert simulate("damaged") == uncached
