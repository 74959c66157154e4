"""Output files that appear whole or not at all, so a failed run leaves no partial results."""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from cosched.errors import InputError
from cosched.locks import output_lock

__all__ = [
    "atomic_path",
    "output_dir",
    "check_plot_path",
    "check_outputs",
    "OutputOption",
    "output_options",
    "check_run_outputs",
    "claimed_outputs",
    "pyplot",
    "save_figure",
]

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


@dataclass(frozen=True)
class OutputOption:
    """What a command-line option names as an output (`cosched.cli_options.mark_output`), for the
    check every run goes through before it reads an input (`check_run_outputs`).

    kind: "file", "folder" or "plot" (a plot file: its extension is checked too).
    writes: the entries the command writes inside the folder (a name may be a folder): an input or
        another output there would be overwritten. Any sequence (a lazy `LazyChoices` too).
    lock: the run holds the place for itself (`cosched.locks`): a folder it writes several files
        into, or a file it appends rows to.
    csv_file: a path ending in .csv that is no folder names a file (`compare`'s older form).
    """

    kind: str
    writes: Sequence[str] = ()
    lock: bool = False
    csv_file: bool = False

    def kind_of(self, value: str | os.PathLike) -> str:
        """The kind of output the path `value` names."""
        if self.csv_file and str(value).lower().endswith(".csv") and not Path(value).is_dir():
            return "file"
        return self.kind


@dataclass(frozen=True)
class _Output:
    flag: str
    path: Path
    kind: str
    option: OutputOption


def output_options(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    """The options of a command's parser that name outputs (`OutputOption` as their `output`), by
    `dest`."""
    found: dict[str, argparse.Action] = {}
    for action in parser._actions:
        if isinstance(getattr(action, "output", None), OutputOption):
            found.setdefault(action.dest, action)
    return found


def _flag(action: argparse.Action) -> str:
    return action.option_strings[0] if action.option_strings else str(action.metavar or action.dest)


def check_run_outputs(parser: argparse.ArgumentParser, args: argparse.Namespace) -> list[_Output]:
    """Check every output path of a command line before the command reads any input; the outputs
    given. Options left at their default are skipped: None, `--plots` without a location, or a
    default location, which the command checks when it uses it (demo's demo.png, replaced by
    `--plots PNG`).

    Each output path must be non-empty and writable as its kind (`check_outputs`), differ from
    every other output and from every existing path the run reads (any other argument naming a
    file or folder), and neither an input nor a data file output may sit where a folder output
    writes one of its entries. Raises InputError naming the path and the flag; creates nothing.
    """
    options = output_options(parser)
    given = []
    for dest, action in options.items():
        value = getattr(args, dest, None)
        if not isinstance(value, (str, os.PathLike)) or value == action.default:
            continue
        flag, option = _flag(action), action.output  # type: ignore[attr-defined]
        if not str(value).strip():
            raise InputError("an empty path names no output; give a file or folder", field=flag)
        kind = option.kind_of(value)
        check_outputs((flag, value, kind))
        given.append(_Output(flag, Path(value), kind, option))
    inputs = _input_paths(parser, args, options)
    for index, output in enumerate(given):
        for other in given[:index]:
            if _place(output.path) == _place(other.path):
                raise _clash(output, f"the same path as {other.flag}; give each output its own")
        for other in given:
            entry = _entry(output.path, other) if other is not output else None
            # a plot where the folder writes it is the command's to place (measure-heatmap)
            if entry is not None and output.kind == "file":
                raise _clash(output, f"{other.flag} writes its {entry} there; choose another path")
        for flag, path in inputs:
            if _place(path) == _place(output.path):
                raise _clash(
                    output,
                    f"is also an input of the run ({flag}); writing it would "
                    "overwrite it, choose another path",
                )
            entry = _entry(path, output)
            if entry is not None:
                raise _clash(
                    output,
                    f"the run would write its {entry} over {path}, an input of "
                    f"the run ({flag}); choose another path",
                )
    return given


def _clash(output: _Output, reason: str) -> InputError:
    return InputError(
        f"cannot write the output: {reason}", source=str(output.path), field=output.flag
    )


def _input_paths(parser, args, options) -> list[tuple[str, Path]]:
    """(flag, path) of every argument that is no output and names an existing file or folder."""
    found = []
    for action in parser._actions:
        if action.dest in options or action.dest == argparse.SUPPRESS:
            continue
        value = getattr(args, action.dest, None)
        for item in value if isinstance(value, (list, tuple)) else [value]:
            if isinstance(item, (str, os.PathLike)) and str(item) and os.path.exists(item):
                found.append((_flag(action), Path(item)))
    return found


def _place(path: Path) -> tuple:
    """What `path` names: the file itself when it exists (links and symbolic links compare equal),
    else its resolved path."""
    try:
        status = os.stat(path)
    except (OSError, ValueError):
        return ("path", os.path.realpath(path))
    return ("file", status.st_dev, status.st_ino)


def _entry(path: Path, output: _Output) -> str | None:
    """The entry of the folder `output` that `path` is or lies in, or None."""
    if output.kind != "folder":
        return None
    target = os.path.realpath(path)
    for entry in output.option.writes:
        place = os.path.join(os.path.realpath(output.path), entry)
        if target == place or target.startswith(place + os.sep):
            return entry
        if _place(path) == _place(Path(place)):
            return entry
    return None


@contextlib.contextmanager
def claimed_outputs(parser: argparse.ArgumentParser, args: argparse.Namespace) -> Iterator[None]:
    """Check the outputs of a command line (`check_run_outputs`) and hold the ones that need it
    (`cosched.locks.output_lock`) while the block runs."""
    outputs = check_run_outputs(parser, args)
    with contextlib.ExitStack() as stack:
        for output in outputs:
            if output.option.lock:
                stack.enter_context(
                    output_lock(output.path, folder=output.kind == "folder", option=output.flag)
                )
        yield


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
