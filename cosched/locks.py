"""One run at a time in an output folder: a second run into a folder in use is refused, never mixed.

A command that writes into an output folder (or appends rows to a file) holds an exclusive lock on
``FOLDER/.cosched.lock`` (``.NAME.cosched.lock`` beside a file) from before it reads its inputs
until it ends. A second run asking for the same place while the first holds it gets one InputError
naming the folder and the holder's process id (exit 2) and writes nothing. The lock is the kernel's
`flock`: it ends with the process that holds it (Ctrl-C, SIGTERM, even SIGKILL), so a killed run
never blocks its rerun. A run that ends normally removes the lock file; a killed one leaves an
empty one, which the next run takes over.

Folders the lock had to create are recorded (`new_folder`): the run's own clean-up (remove a folder
it created when it fails) keeps treating them as new, and an empty one is removed again when the
lock is released, so a refused or failed run leaves nothing behind.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import warnings
from pathlib import Path

from cosched.errors import InputError

__all__ = ["LOCK_FILE", "lock_path", "output_lock", "new_folder"]

LOCK_FILE = ".cosched.lock"  # inside a locked folder; `cosched.rerun` does not count it as a file
HOLDER_CHARS = 32  # the lock file holds the holder's process id: a few bytes are enough

_created: set[Path] = set()  # folders created by a lock of this process, still held
_held: set[Path] = set()  # lock files this process holds: taking one again nests


def lock_path(path: str | os.PathLike, *, folder: bool) -> Path:
    """The lock file of an output folder (inside it) or of an output file (beside it)."""
    path = Path(path)
    return path / LOCK_FILE if folder else path.parent / f".{path.name}{LOCK_FILE}"


def new_folder(path: str | os.PathLike) -> bool:
    """Whether `path` is a folder this run creates: missing, or created by this run's lock."""
    path = Path(path)
    return not path.exists() or path.resolve() in _created


@contextlib.contextmanager
def output_lock(path: str | os.PathLike, *, folder: bool, option: str | None = None):
    """Hold `path` (an output folder, or a file the run appends to) for this run; InputError naming
    `option` when another process holds it. Creates the folder the lock file needs. Within one
    process the lock nests: the library's own lock inside the command's is a no-op."""
    lock = lock_path(path, folder=folder)
    key = Path(os.path.realpath(lock))
    if key in _held:
        yield
        return
    created = _make_folders(lock.parent, option)
    try:
        descriptor = _acquire(lock, Path(path), option)
        _held.add(key)
        try:
            yield
        finally:
            _held.discard(key)
            if descriptor is not None:
                with contextlib.suppress(FileNotFoundError):
                    lock.unlink()  # while still held: a waiting run then locks a new file
                os.close(descriptor)
    finally:
        for made in reversed(created):  # deepest first; only empty ones: the run wrote nothing
            _created.discard(made)
            with contextlib.suppress(OSError):
                made.rmdir()


def _make_folders(folder: Path, option: str | None) -> list[Path]:
    """Create `folder` and its missing parents; the ones created, outermost first."""
    missing = []
    for parent in (folder, *folder.parents):
        if parent.exists() or parent.is_symlink():
            break
        missing.append(parent)
    created = []
    try:
        for parent in reversed(missing):
            parent.mkdir()
            created.append(parent.resolve())
            _created.add(parent.resolve())
    except OSError as error:
        for made in reversed(created):
            _created.discard(made)
            with contextlib.suppress(OSError):
                made.rmdir()
        raise InputError(
            f"cannot write the output: {error.strerror or error}", source=str(folder), field=option
        ) from None
    return created


def _acquire(lock: Path, path: Path, option: str | None) -> int | None:
    """The descriptor of `lock`, locked; None (with a warning) on a file system without locks."""
    while True:
        try:
            descriptor = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
        except OSError as error:
            reason = error.strerror or str(error)
            raise InputError(
                f"cannot write the output: {reason}", source=str(path), field=option
            ) from None
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as error:
            holder = _holder(descriptor)
            os.close(descriptor)
            if error.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise InputError(
                    f"in use by another cosched run{holder}; wait for it to end or choose another "
                    "output",
                    source=str(path),
                    field=option,
                ) from None
            warnings.warn(
                f"{path}: cannot lock ({error.strerror or error}); another run writing there at "
                "the same time is not detected",
                RuntimeWarning,
                stacklevel=3,
            )
            return None
        if _same_file(descriptor, lock):
            os.ftruncate(descriptor, 0)
            os.write(descriptor, str(os.getpid()).encode())
            return descriptor
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
