"""One run at a time in an output folder: a second run into a folder in use is refused, never mixed.

A command that writes into an output folder (or appends rows to a file) holds an exclusive lock from
before it reads its inputs until it ends. A second run asking for the same place while the first
holds it gets one InputError naming the place and the holder's process id (exit 2) and writes
nothing. The lock is the kernel's `flock` on a lock file beside the output (``.OUT.cosched.lock``
in the folder holding ``OUT``; inside ``OUT`` when that folder cannot be written): it ends with the
process that holds it (Ctrl-C, SIGTERM, even SIGKILL), so a killed run never blocks its rerun. A run
removes its lock file when it ends; one killed outright leaves it, empty of meaning: the next run
takes it over.

The output folder itself is not created for the lock: a refused or failed run leaves no folder
behind. Parent folders it needs are created, and removed again at the end while empty.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import warnings
from pathlib import Path

from cosched.errors import InputError

__all__ = ["LOCK_FILE", "lock_paths", "output_lock"]

LOCK_FILE = ".cosched.lock"  # the lock inside a folder, when beside it is not writable
HOLDER_CHARS = 32  # the lock file holds the holder's process id: a few bytes are enough
BUSY = (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES)  # what flock says of a lock held elsewhere

_held: set[Path] = set()  # lock files this process holds: taking one again nests


def lock_paths(path: str | os.PathLike) -> tuple[Path, Path]:
    """The lock files of an output: beside it, and inside it (a folder in a read-only parent)."""
    real = Path(os.path.realpath(path))
    return real.parent / f".{real.name}{LOCK_FILE}", real / LOCK_FILE


@contextlib.contextmanager
def output_lock(path: str | os.PathLike, *, folder: bool, option: str | None = None):
    """Hold `path` (an output folder, or a file the run appends to) while the block runs;
    InputError naming `option` when another process holds it. Within one process the lock nests:
    the library's own lock inside the command's is a no-op."""
    beside, inside = lock_paths(path)
    if beside in _held or inside in _held:
        yield
        return
    created = _make_parents(beside.parent, option)
    try:
        lock, descriptor = _acquire(beside, Path(path), option)
        if descriptor is None and folder and Path(path).is_dir():
            lock, descriptor = _acquire(inside, Path(path), option)
        if descriptor is None:
            warnings.warn(
                f"{path}: cannot lock it; another run writing there at the same time is not "
                "detected",
                RuntimeWarning,
                stacklevel=3,
            )
        _held.add(lock)
        try:
            yield
        finally:
            _held.discard(lock)
            if descriptor is not None:
                with contextlib.suppress(FileNotFoundError):
                    lock.unlink()  # while still held: a run waiting for it then locks a new file
                os.close(descriptor)
    finally:
        for made in reversed(created):  # deepest first, only while empty
            with contextlib.suppress(OSError):
                made.rmdir()


def _make_parents(folder: Path, option: str | None) -> list[Path]:
    """Create `folder` and its missing parents; the ones created, outermost first."""
    missing = [
        parent for parent in (folder, *folder.parents) if not os.path.lexists(parent)
    ]  # stops mattering at the first existing one: all above it exist too
    created: list[Path] = []
    try:
        for parent in reversed(missing):
            parent.mkdir()
            created.append(parent)
    except OSError as error:
        for made in reversed(created):
            with contextlib.suppress(OSError):
                made.rmdir()
        raise InputError(
            f"cannot write the output: {error.strerror or error}", source=str(folder), field=option
        ) from None
    return created


def _acquire(lock: Path, path: Path, option: str | None) -> tuple[Path, int | None]:
    """`lock` and its descriptor, locked; None for a lock file that cannot be made or locked here
    (a read-only folder, a file system without locks)."""
    while True:
        try:
            descriptor = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
        except OSError:
            return lock, None
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as error:
            holder = _holder(descriptor)
            os.close(descriptor)
            if error.errno in BUSY:
                raise InputError(
                    f"in use by another cosched run{holder}; wait for it to end or choose another "
                    "output",
                    source=str(path),
                    field=option,
                ) from None
            return lock, None
        if _same_file(descriptor, lock):
            os.ftruncate(descriptor, 0)
            os.write(descriptor, str(os.getpid()).encode())
            return lock, descriptor
        os.close(descriptor)  # the holder released and removed the file in between: lock anew


def _same_file(descriptor: int, path: Path) -> bool:
    """Whether `path` still names the open file (a releasing run unlinks its lock file)."""
    try:
        named = os.stat(path)
    except FileNotFoundError:
        return False
    held = os.fstat(descriptor)
    return (named.st_dev, named.st_ino) == (held.st_dev, held.st_ino)


def _holder(descriptor: int) -> str:
    """` (process N)` from the lock file's text, or ''."""
    try:
        text = os.pread(descriptor, HOLDER_CHARS, 0).decode("ascii", "replace").strip()
    except OSError:
        return ""
    return f" (process {text})" if text.isdigit() else ""
