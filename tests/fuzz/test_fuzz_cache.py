"""Fuzzing the cache of parsed SWF files: whatever sits where an entry belongs, `read_swf` gives the
uncached parse.

Each form of a damaged or foreign entry below is put in place of a valid entry of one of a few SWF
files (plain, gzipped, read with a processor cap); reading the file must then give exactly what
``COSCHED_NO_CACHE=1`` gives (every column, dtype, header and cleaning count), twice in a row,
without hanging (the test's timeout) and without an exception. The forms: the whole entry zeroed,
all 0xFF or random bytes; its body zeroed, 0xFF, one byte flipped, two columns swapped or the rows
permuted under an intact header; truncated or extended; a header with one field changed over a valid
body; the format of cosched 0.3.0; the valid entry of another file or of the same file under
another cap; empty; a folder, a FIFO, a socket, an unreadable file, a hard link; symbolic links to
/dev/zero, /dev/null, a valid entry elsewhere, another key's entry, a folder, nowhere and to
themselves; a sparse file larger than any entry.

Each form is its own test; ``[quick]`` (the default suite) tries a few seeds per form, ``[long]``
(``-m fuzz``) many more.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import random
import shutil
import socket
import stat
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, note
from hypothesis import strategies as st

from cosched.simulator.workload import CACHE_MIN_BYTES, cache_folder, read_swf

CAMPAIGN_EXAMPLES = {"quick": 3, "long": max(1, int(os.environ.get("FUZZ_EXAMPLES", "1000")) // 5)}
COLUMNS = ("job_id", "submit", "run", "cores", "estimate")
COLUMN_BYTES = 8  # every cached column holds 8-byte numbers
FIELDS = 18
pytestmark = pytest.mark.timeout(600)  # a hang (an entry read without end) fails the test


def _swf_text(seed: int, jobs: int) -> bytes:
    """A valid SWF file of `jobs` jobs padded with comments of random digits to a cached size."""
    rng = random.Random(seed)
    lines = ["; Computer: fuzz cache", "; MaxProcs: 64", f"; Seed: {seed}"]
    for number in range(1, jobs + 1):
        run, procs = rng.randint(-1, 9_000), rng.randint(-1, 100)
        fields = [number, rng.randint(0, 50_000), -1, run, procs, -1, -1, procs]
        fields += [rng.choice([-1, run, 2 * run])] + [-1] * (FIELDS - 9)
        lines.append(" ".join(str(v) for v in fields))
    noise = rng.randbytes(CACHE_MIN_BYTES).hex()
    lines += [f"; {noise[i : i + 200]}" for i in range(0, len(noise), 200)]
    return ("\n".join(lines) + "\n").encode()


class Base:
    """One SWF file, its uncached parse, its valid cache entry and where that entry lives."""

    def __init__(self, folder: Path, name: str, text: bytes, cap: int | None):
        self.xdg = folder / f"xdg-{name}"
        self.path = folder / name
        self.path.write_bytes(gzip.compress(text) if name.endswith(".gz") else text)
        self.cap = cap
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("COSCHED_NO_CACHE", "1")
            self.parsed = read_swf(self.path, max_cores=cap)
            patch.setenv("XDG_CACHE_HOME", str(self.xdg))
            patch.delenv("COSCHED_NO_CACHE")
            read_swf(self.path, max_cores=cap)
            (self.key,) = cache_folder().glob("*.swfcache")
        self.entry = self.key.read_bytes()
        self.jobs = len(self.parsed)


@pytest.fixture(scope="module")
def bases(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cache-fuzz")
    text = _swf_text(1, 60)
    made = [
        Base(folder, "plain.swf", text, None),
        Base(folder, "packed.swf.gz", _swf_text(2, 90), None),
        Base(folder, "capped.swf", text, 16),
    ]
    elsewhere = folder / "elsewhere"
    elsewhere.mkdir()
    return made, elsewhere


def _same(read, parsed) -> None:
    for name in COLUMNS:
        x, y = getattr(read, name), getattr(parsed, name)
        assert x.dtype == y.dtype and np.array_equal(x, y), name
    assert read.header == parsed.header and read.cleaning == parsed.cleaning
    assert read.source == parsed.source and read.app is None


def _clear(path: Path) -> None:
    """Remove whatever sits at `path` (file, link, FIFO, socket or folder)."""
    with contextlib.suppress(FileNotFoundError):
        if path.is_dir() and not path.is_symlink():
            path.chmod(0o700)
            shutil.rmtree(path)
        else:
            path.unlink()


# --- the forms: each puts something at `key` ------------------------------------------------


def _split(entry: bytes, jobs: int) -> tuple[bytes, bytearray]:
    """(header, body) of an entry: the body is its last jobs x 5 numbers, whatever the layout."""
    cut = len(entry) - jobs * len(COLUMNS) * COLUMN_BYTES
    return entry[:cut], bytearray(entry[cut:])


def _columns_swapped(base, rng, junk, elsewhere):
    header, body = _split(base.entry, base.jobs)
    width = base.jobs * COLUMN_BYTES
    a, b = rng.sample(range(len(COLUMNS)), 2)
    first, second = body[a * width : (a + 1) * width], body[b * width : (b + 1) * width]
    body[a * width : (a + 1) * width], body[b * width : (b + 1) * width] = second, first
    return header + body


def _rows_permuted(base, rng, junk, elsewhere):
    header, body = _split(base.entry, base.jobs)
    order = list(range(base.jobs))
    while order == sorted(order) and base.jobs > 1:
        rng.shuffle(order)
    table = np.frombuffer(bytes(body), np.uint64).reshape(len(COLUMNS), base.jobs)
    return header + table[:, order].tobytes()


def _body_flipped(base, rng, junk, elsewhere):
    header, body = _split(base.entry, base.jobs)
    body[rng.randrange(len(body))] ^= rng.randrange(1, 256)
    return header + body


def _header_changed(base, rng, junk, elsewhere):
    """One leaf of the JSON header line changed (a number +1, a string extended, a list
    reversed)."""
    header, body = _split(base.entry, base.jobs)
    lines = header.split(b"\n")
    document = json.loads(lines[-2])
    leaves = []

    def walk(node, parent, index):
        if isinstance(node, dict):
            for key in node:
                walk(node[key], node, key)
        elif isinstance(node, list):
            leaves.append((parent, index, "list"))
            for i, item in enumerate(node):
                walk(item, node, i)
        else:
            leaves.append((parent, index, "leaf"))

    walk(document, None, None)
    parent, index, kind = rng.choice([leaf for leaf in leaves if leaf[0] is not None])
    value = parent[index]
    if kind == "list":
        parent[index] = value[::-1] + ([0] if len(value) < 2 or value == value[::-1] else [])
    elif isinstance(value, bool) or not isinstance(value, (int, float)):
        parent[index] = str(value) + "x"
    else:
        parent[index] = value + 1
    lines[-2] = json.dumps(document).encode()
    return b"\n".join(lines) + body


def _old_format(base, rng, junk, elsewhere):
    """The entry as cosched 0.3.0 wrote it: a JSON line and the columns."""
    parsed = base.parsed
    meta = {
        "jobs": len(parsed),
        "dtypes": [getattr(parsed, name).dtype.str for name in COLUMNS],
        "header": parsed.header,
        "cleaning": parsed.cleaning,
    }
    body = b"".join(getattr(parsed, name).tobytes() for name in COLUMNS)
    return json.dumps(meta).encode() + b"\n" + body


def _other_entry(bases):
    def form(base, rng, junk, elsewhere):
        return rng.choice([other for other in bases if other is not base]).entry

    return form


def _link_to(target_of):
    def form(base, rng, junk, elsewhere, key):
        key.symlink_to(target_of(base, elsewhere, key))

    return form


def _valid_elsewhere(base, elsewhere, key):
    target = elsewhere / f"valid-{base.path.name}"
    target.write_bytes(base.entry)
    return target


def _folder_elsewhere(base, elsewhere, key):
    target = elsewhere / "folder"
    target.mkdir(exist_ok=True)
    return target


def _folder(base, rng, junk, elsewhere, key):
    key.mkdir()
    (key / "inside").write_bytes(base.entry)


def _fifo(base, rng, junk, elsewhere, key):
    os.mkfifo(key)


def _socket(base, rng, junk, elsewhere, key):
    here = os.getcwd()
    os.chdir(key.parent)  # a socket path is limited to about 100 bytes: bind the name alone
    try:
        server = socket.socket(socket.AF_UNIX)
        server.bind(key.name)
        server.close()
    finally:
        os.chdir(here)


def _unreadable(base, rng, junk, elsewhere, key):
    key.write_bytes(bytes(len(base.entry)))
    key.chmod(0)


def _hard_link(base, rng, junk, elsewhere, key):
    target = elsewhere / f"linked-{rng.random()}"
    target.write_bytes(junk + base.entry[len(junk) :])
    os.link(target, key)


def _sparse(base, rng, junk, elsewhere, key):
    with open(key, "wb") as handle:
        handle.write(base.entry[:100])
        handle.truncate(1 << 40)  # a hole: no disk used


CONTENT_FORMS = {
    "intact": lambda base, rng, junk, elsewhere: base.entry,
    "zeroed": lambda base, rng, junk, elsewhere: bytes(len(base.entry)),
    "all_0xff": lambda base, rng, junk, elsewhere: b"\xff" * len(base.entry),
    "random_bytes": lambda base, rng, junk, elsewhere: rng.randbytes(rng.randrange(4000)) + junk,
    "random_same_length": lambda base, rng, junk, elsewhere: rng.randbytes(len(base.entry)),
    "empty": lambda base, rng, junk, elsewhere: b"",
    "body_zeroed": lambda base, rng, junk, elsewhere: (
        _split(base.entry, base.jobs)[0] + bytes(base.jobs * len(COLUMNS) * COLUMN_BYTES)
    ),
    "body_0xff": lambda base, rng, junk, elsewhere: (
        _split(base.entry, base.jobs)[0] + b"\xff" * (base.jobs * len(COLUMNS) * COLUMN_BYTES)
    ),
    "body_byte_flipped": _body_flipped,
    "columns_swapped": _columns_swapped,
    "rows_permuted": _rows_permuted,
    "truncated": lambda base, rng, junk, elsewhere: base.entry[: rng.randrange(len(base.entry))],
    "extended": lambda base, rng, junk, elsewhere: base.entry + (junk or b"\0"),
    "header_changed": _header_changed,
    "format_of_0_3_0": _old_format,
}
PLACE_FORMS = {
    "folder": _folder,
    "fifo": _fifo,
    "socket": _socket,
    "unreadable_file": _unreadable,
    "hard_link": _hard_link,
    "sparse_huge_file": _sparse,
    "symlink_to_dev_zero": _link_to(lambda base, elsewhere, key: Path("/dev/zero")),
    "symlink_to_dev_null": _link_to(lambda base, elsewhere, key: Path("/dev/null")),
    "symlink_to_a_valid_entry_elsewhere": _link_to(_valid_elsewhere),
    "symlink_to_a_folder": _link_to(_folder_elsewhere),
    "symlink_dangling": _link_to(lambda base, elsewhere, key: elsewhere / "missing"),
    "symlink_to_itself": _link_to(lambda base, elsewhere, key: key),
}
FOREIGN_FORMS = ("another_files_entry",)


def _damage(form: str, base: Base, all_bases, elsewhere: Path, seed: int, junk: bytes) -> None:
    rng = random.Random(seed)
    key = base.key
    _clear(key)
    if form in PLACE_FORMS:
        PLACE_FORMS[form](base, rng, junk, elsewhere, key)
        return
    make = _other_entry(all_bases) if form == "another_files_entry" else CONTENT_FORMS[form]
    key.write_bytes(make(base, rng, junk, elsewhere))


@pytest.mark.parametrize("form", [*CONTENT_FORMS, *PLACE_FORMS, *FOREIGN_FORMS])
def test_any_cache_entry_gives_the_uncached_parse(bases, campaign, form):
    made, elsewhere = bases

    @given(which=st.integers(0, len(made) - 1), seed=st.integers(0, 2**32 - 1), junk=st.binary())
    def check(which, seed, junk):
        base = made[which]
        note(f"{form} in place of the entry of {base.path.name} (cap {base.cap})")
        _damage(form, base, made, elsewhere, seed, junk)
        try:
            with pytest.MonkeyPatch.context() as patch:
                patch.setenv("XDG_CACHE_HOME", str(base.xdg))
                patch.delenv("COSCHED_NO_CACHE", raising=False)
                _same(read_swf(base.path, max_cores=base.cap), base.parsed)
                _same(read_swf(base.path, max_cores=base.cap), base.parsed)
        finally:
            if base.key.exists() and not base.key.is_symlink():
                mode = base.key.lstat().st_mode
                if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
                    base.key.chmod(0o700)
            _clear(base.key)

    campaign(check)()
