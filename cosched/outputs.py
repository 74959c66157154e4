"""Output files that appear whole or not at all, so a failed run leaves no partial results."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path

from cosched.errors import InputError

__all__ = ["atomic_path", "output_dir", "check_plot_path", "check_outputs", "pyplot", "save_figure"]

OUTPUT_KINDS = ("file", "folder", "plot")  # what check_outputs checks a location for


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike):
    """Yield a temporary path beside `path`; move it into place only if the block succeeds."""
    path = Path(path)
    if path.is_dir():
        raise _unwritable(path, "is a directory")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=path.suffix, dir=path.parent)
    except (FileExistsError, NotADirectoryError):
        raise _unwritable(path, "a parent folder is a file") from None
    except OSError as error:
        raise _unwritable(path, error.strerror or str(error)) from None
    os.close(fd)
    try:
        yield Path(tmp)
        # mkstemp creates 0600; give the file the usual permissions
        os.chmod(tmp, 0o666 & ~_umask())
        try:
            os.replace(tmp, path)
        except OSError as error:
            raise _unwritable(path, error.strerror or str(error)) from None
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _unwritable(path: Path, reason: str) -> InputError:
    return InputError(f"cannot write the output: {reason}", source=str(path))


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def output_dir(path: str | os.PathLike):
    """Create `path` for a run's outputs;
    remove it again if the run fails and the folder was new.
    """
    path = Path(path)
    created = not path.exists()
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        reason = (
            "exists and is not a folder" if isinstance(error, FileExistsError) else error.strerror
        )
        raise _unwritable(path, reason or str(error)) from None
    try:
        yield path
    except BaseException:
        if created:
            shutil.rmtree(path, ignore_errors=True)
        raise


def check_plot_path(path: str | os.PathLike, option: str | None) -> str:
    """`path` if matplotlib writes its extension (none means PNG); else InputError naming `option`,
    before any run."""
    from matplotlib.backend_bases import FigureCanvasBase

    suffix = Path(path).suffix.lstrip(".").lower()
    formats = FigureCanvasBase.get_supported_filetypes()
    if suffix and suffix not in formats:
        raise InputError(
            f"cannot write a plot as '.{suffix}'; use one of {', '.join(sorted(formats))}",
            source=str(path),
            field=option,
        )
    return str(path)


def check_outputs(*outputs: tuple[str | None, str | os.PathLike | None, str]) -> None:
    """Check every output location before a command does any work: (flag, path, kind) with kind
    "file", "folder" or "plot" (a plot file: its extension too). A None path is skipped. Creates
    nothing.

    A file must not be a folder; a folder must not be a file; a missing one needs its nearest
    existing parent to be a writable folder; an existing one must be writable. Raises InputError
    naming the path and the flag.
    """
    for flag, path, kind in outputs:
        if path is None:
            continue
        if kind not in OUTPUT_KINDS:
            raise ValueError(f"kind is one of {OUTPUT_KINDS}, not {kind!r}")
        path = Path(path)
        reason = _output_problem(path, kind)
        if reason is not None:
            raise InputError(f"cannot write the output: {reason}", source=str(path), field=flag)
        if kind == "plot":
            check_plot_path(path, flag)


def _output_problem(path: Path, kind: str) -> str | None:
    """Why `path` cannot receive a file (kind file/plot) or folder, or None."""
    if path.exists():
        if kind == "folder" and not path.is_dir():
            return "exists and is not a folder"
        if kind != "folder" and path.is_dir():
            return "is a directory"
        if not os.access(path, os.W_OK | (os.X_OK if path.is_dir() else 0)):
            return "permission denied"
        return None
    parent = path.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        return "a parent folder is a file"
    if not os.access(parent, os.W_OK | os.X_OK):
        return f"permission denied in {parent}"
    return None


def pyplot():
    """matplotlib.pyplot on the file-only Agg backend, imported on first use so the CLI starts
    without it."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(figure, path: str | os.PathLike, dpi: int = 110) -> Path:
    """Write a figure whole or not at all (format from the extension, PNG without one), then close
    it."""
    plt = pyplot()
    path = Path(path)
    try:
        with atomic_path(path) as tmp:
            figure.savefig(tmp, dpi=dpi, format=path.suffix.lstrip(".") or "png")
    finally:
        plt.close(figure)
    return path
