"""Output files that appear whole or not at all, so a failed run leaves no partial results."""
from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path

__all__ = ["atomic_path", "output_dir"]


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike):
    """Yield a temporary path beside `path`; move it into place only if the block succeeds."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=path.suffix, dir=path.parent)
    os.close(fd)
    try:
        yield Path(tmp)
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp creates 0600; give the file the usual permissions
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def output_dir(path: str | os.PathLike):
    """Create `path` for a run's outputs; remove it again if the run fails and the folder was new."""
    path = Path(path)
    created = not path.exists()
    path.mkdir(parents=True, exist_ok=True)
    try:
        yield path
    except BaseException:
        if created:
            shutil.rmtree(path, ignore_errors=True)
        raise
