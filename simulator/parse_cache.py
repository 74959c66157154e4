"""Verified cache entries of parsed input files: an entry can save a parse, never change its result.

An entry is one regular file, named by a key the caller derives from everything the parse depends on
(the input's bytes, the options, the reader's source), holding three parts:

    <SHA-256 of the entry's name and the two parts below, hex>\\n
    <JSON line: the format, the arrays' names, dtypes and lengths, the caller's metadata>\\n
    <the arrays' bytes, one after the other>

`load` accepts an entry only if it is a regular file (no link, folder, FIFO, socket or device is
opened) whose checksum matches its name and contents; every read is bounded by the file's size,
itself bounded by the caller. Anything else (absent, unreadable, cut, extended, zeroed, reordered,
another key's entry, an older format) is a miss: the caller parses the input and `store` replaces
the entry. `store` writes a temporary ``*.part`` file in the same folder and renames it over the
entry, so readers see the old entry, the new one or none; a run killed while writing leaves only a
``*.part`` file, which is never read. The checksum also rejects an entry torn by a system crash
(the file is not synced to disk: the cache only saves time).
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path

import numpy as np

__all__ = ["entry_folder", "load", "store", "FORMAT", "META_LIMIT"]

FORMAT = "cosched cache entry 2"
META_LIMIT = 1 << 20  # bytes of an entry's JSON line; an entry with more metadata is not kept
_CHECK_BYTES = 64  # hex digits of the checksum line (SHA-256)
_ARRAY_KINDS = "biuf"  # plain numbers only: an entry never holds objects


def entry_folder(kind: str) -> Path | None:
    """The folder of the entries of `kind`: ``$XDG_CACHE_HOME/cosched/KIND`` (``~/.cache`` when
    XDG_CACHE_HOME is unset, empty or relative, as the XDG base directory specification asks); None
    when ``COSCHED_NO_CACHE`` is set to anything but 0."""
    if os.environ.get("COSCHED_NO_CACHE", "0") not in ("", "0"):
        return None
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "cosched" / kind


def _checksum(key: Path):
    """The running checksum of an entry named `key` (SHA-256, the fastest strong hash of hashlib on
    common CPUs): its name first, so an entry moved or copied under another key does not match."""
    return hashlib.sha256(key.name.encode() + b"\0")


def load(key: Path, max_array_bytes: int) -> tuple[dict, dict[str, np.ndarray]] | None:
    """(metadata, arrays by name) of the entry `key`, or None when there is no valid entry with at
    most `max_array_bytes` bytes of arrays (module docstring)."""
    max_bytes = _CHECK_BYTES + 1 + META_LIMIT + max_array_bytes
    try:
        info = os.lstat(key)
        if not stat.S_ISREG(info.st_mode) or info.st_size > max_bytes:
            return None
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
        with open(os.open(key, flags), "rb") as handle:
            opened = os.fstat(handle.fileno())
            if (opened.st_dev, opened.st_ino) != (info.st_dev, info.st_ino):
                return None  # replaced between the two looks: the next run will see it
            size = opened.st_size
            if not stat.S_ISREG(opened.st_mode) or size > max_bytes:
                return None
            check = handle.readline(_CHECK_BYTES + 1)
            line = handle.readline(META_LIMIT + 1)
            rest = size - len(check) - len(line)
            whole_lines = check.endswith(b"\n") and line.endswith(b"\n")
            if (
                len(check) != _CHECK_BYTES + 1
                or not whole_lines
                or not 0 <= rest <= max_array_bytes
            ):
                return None
            body = bytearray(rest + 1)  # one byte more: an entry that grew while read is refused
            if handle.readinto(body) != rest:
                return None
    except OSError:
        return None
    del body[rest:]
    expected = _checksum(key)
    expected.update(line)
    expected.update(body)
    if check[:-1] != expected.hexdigest().encode():
        return None
    return _arrays(line, body)


def _arrays(line: bytes, body: bytearray) -> tuple[dict, dict[str, np.ndarray]] | None:
    """The metadata and arrays of a checked entry, or None for another format or a layout that
    does not add up."""
    try:
        document = json.loads(line)
        if document["format"] != FORMAT:
            return None
        arrays, offset = {}, 0
        for name, dtype, length in document["arrays"]:
            dtype = np.dtype(dtype)
            if dtype.kind not in _ARRAY_KINDS or not isinstance(length, int) or length < 0:
                return None
            arrays[str(name)] = np.frombuffer(body, dtype, length, offset)
            offset += length * dtype.itemsize
        return (document["meta"], arrays) if offset == len(body) else None
    except (ValueError, KeyError, TypeError):
        return None


def store(key: Path, meta: dict, arrays: dict[str, np.ndarray]) -> None:
    """Keep `arrays` (one-dimensional, plain numbers) and the JSON-able `meta` as the entry `key`,
    atomically; errors are ignored (the cache only saves time)."""
    columns = [np.ascontiguousarray(array) for array in arrays.values()]
    line = json.dumps(
        {
            "format": FORMAT,
            "arrays": [
                [name, column.dtype.str, column.size] for name, column in zip(arrays, columns)
            ],
            "meta": meta,
        }
    ).encode()
    if len(line) >= META_LIMIT:
        return
    line += b"\n"
    check = _checksum(key)
    check.update(line)
    for column in columns:
        check.update(column.data)
    import tempfile  # on a miss only: a hit does not pay its import

    try:
        key.parent.mkdir(parents=True, exist_ok=True)
        handle, name = tempfile.mkstemp(dir=key.parent, prefix=key.name, suffix=".part")
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(check.hexdigest().encode() + b"\n" + line)
                for column in columns:
                    out.write(column.data)
            os.replace(name, key)
        except BaseException:
            os.unlink(name)
            raise
    except OSError:
        pass
