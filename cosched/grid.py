"""One grid runner for the long experiments: cells → a function → tidy rows, in one CSV that
resumes.

A grid is a list of *cells*, each named by its key values (``(alpha_index, instance)`` for `cosched
experiment`, ``(experiment, scheduler)`` for `cosched experiment-sim`). `run_grid` calls
``function(*shared, *cell)`` for every cell not finished yet: in this process, in local worker
processes (`cosched.processes.pool_results`: they die with the command) or on a dask.distributed
cluster (``dask="local"`` starts a LocalCluster, otherwise a scheduler address; the shared arguments
are scattered once). The function returns the cell's rows (a list of dicts), or a `CellResult` that
also carries side files.

Files, for the CSV ``path`` (for example ``results.csv``):

- ``path``: the header (``columns``), then the rows of each finished cell, appended at once and
  flushed;
- ``path.with_suffix(".done")`` (``results.done``): the header ``key..., rows``, then one line per
  finished cell, appended after its rows were flushed: the cell's key values and how many rows it
  has;
- the side files of a cell (paths relative to the CSV's folder), written whole
  (`cosched.outputs.atomic_path`) *before* its rows, so a finished cell never lacks them.

`run_grid` writes them; `GridAppender` writes the same format for a command with its own loop.

Completeness rule: a cell is finished when the done-file lists it and the CSV holds exactly that
many rows with its key. A cut-off last line of either file never counts. Before running, the rows of
unfinished cells (a cell cut by SIGKILL) are dropped and both files rewritten whole, so a rerun
appends to finished cells only and an interrupted grid plus its rerun hold exactly the rows of one
uninterrupted run. A CSV holding rows but no done-file (an older format) is refused (InputError
suggesting --force). Ctrl-C / SIGTERM never cut a cell: the writes of one finished cell are one
section with the signals held back.

Which folder belongs to which configuration is decided by `grid_folder` (the rerun rule of
`cosched.rerun`, with the CSV and the done-file among the outputs the command owns). This module
sits below the areas: it imports none of them.

The experiment protocol: every experiment command (``experiment``, ``experiment-sim``,
``experiment-elastic``, ``experiment-hybrid``) is a subclass of `ExperimentSpec`, a frozen dataclass
that round-trips through JSON (``to_json``/``from_json``; the document is the folder's spec file),
lists its cells, runs one cell and writes the final tables; `run_experiment` runs any of them the
same way.
"""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from contextlib import ExitStack, closing, contextmanager
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import IO, TYPE_CHECKING, Any, ClassVar

from cosched.errors import InputError
from cosched.locks import output_lock
from cosched.outputs import atomic_path
from cosched.processes import pool_results, signals_deferred
from cosched.rerun import claim_output, json_key

if TYPE_CHECKING:  # imported on use: the CLI imports this module at start
    import pandas as pd
    from distributed import Client

__all__ = [
    "CellResult",
    "run_grid",
    "grid_folder",
    "read_rows",
    "done_path",
    "any_finished",
    "GridAppender",
    "DASK_CONNECT_TIMEOUT",
    "dask_client",
    "ExperimentSpec",
    "run_experiment",
]

DASK_CONNECT_TIMEOUT = "10s"  # how long to wait for a remote Dask scheduler before giving up
ROWS = "rows"  # the done-file's column holding a cell's row count


@dataclass
class CellResult:
    """What a cell function may return instead of a plain list of rows.

    Attributes:
        rows: the cell's rows (dicts; missing columns are left empty, unknown keys dropped).
        files: side files, relative path (inside the CSV's folder) -> text or bytes, written whole
            before the rows are appended.
    """

    rows: list[dict]
    files: dict[str, str | bytes] = field(default_factory=dict)


def done_path(path: str | os.PathLike) -> Path:
    """The done-file beside the grid's CSV: ``results.csv`` -> ``results.done``."""
    return Path(path).with_suffix(".done")


def _cell_key(values: Iterable) -> tuple[str, ...]:
    """A cell as written in the files: its key values as text (ints and names write as their
    str())."""
    return tuple(str(value) for value in values)


def _complete_text(path: Path) -> tuple[str, bool]:
    """The file's text up to its last newline (a cut-off last line never counts) and whether one was
    cut."""
    text = path.read_text(encoding="utf-8")
    if text and not text.endswith("\n"):
        return text[: text.rfind("\n") + 1], True
    return text, False


def _unreadable(path: Path, reason: str) -> InputError:
    return InputError(
        f"unreadable earlier results ({reason}); add --force to start over", source=str(path)
    )


def _read_done(path: Path, key: Sequence[str]) -> tuple[dict[tuple[str, ...], int], bool]:
    """The finished cells listed in the done-file -> their row counts, and whether the file needs
    rewriting."""
    text, cut = _complete_text(path)
    lines = list(csv.reader(io.StringIO(text)))
    if not lines:
        return {}, True
    if lines[0] != [*key, ROWS]:
        raise _unreadable(path, f"header {lines[0]}, expected {[*key, ROWS]}")
    done = {}
    for number, line in enumerate(lines[1:], start=2):
        try:
            if len(line) != len(key) + 1:
                raise ValueError(f"{len(line)} fields")
            done[tuple(line[:-1])] = int(line[-1])
        except ValueError as error:
            raise _unreadable(path, f"line {number}: {error}") from None
    return done, cut


def _scan(path: Path, columns: Sequence[str], key: Sequence[str]):
    """(rows of the CSV as text, one key per row, whether the CSV was cut) for an existing CSV."""
    import pandas as pd

    text, cut = _complete_text(path)
    if not text.strip():
        return pd.DataFrame(columns=list(columns), dtype=str), [], True
    header = next(csv.reader(io.StringIO(text)))
    if header != list(columns):
        raise InputError(
            f"unexpected columns {header} (written by another version?); add --force to start over",
            source=str(path),
            field="header",
        )
    try:
        frame = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    except (pd.errors.ParserError, ValueError) as error:
        raise _unreadable(path, str(error).strip()) from None
    keys = list(zip(*(frame[name] for name in key))) if len(frame) else []
    return frame, keys, cut


def _finished(
    path: Path, columns: Sequence[str], key: Sequence[str], repair: bool
) -> dict[tuple[str, ...], int]:
    """The finished cells of the grid at `path` (see the completeness rule). With `repair`, create
    the files if missing and rewrite both without the rows of unfinished cells and cut-off lines,
    ready for appending."""
    done_file = done_path(path)
    if not path.exists() and not done_file.exists():
        if repair:
            _rewrite(path, columns, key, None, {})
        return {}
    if not path.exists():
        listed: dict[tuple[str, ...], int] = {}
        rewrite = True
        frame, keys, cut = None, [], True
    else:
        frame, keys, cut = _scan(path, columns, key)
        if not done_file.exists():
            if keys:
                raise InputError(
                    f"{path.name} holds rows but no {done_file.name} telling which cells finished "
                    f"(written by an older version?); add --force to start over, or choose another "
                    f"--out",
                    source=str(path),
                )
            listed, rewrite = {}, True
        else:
            listed, rewrite = _read_done(done_file, key)
    counts: dict[tuple[str, ...], int] = {}
    for cell in keys:
        counts[cell] = counts.get(cell, 0) + 1
    finished = {cell: rows for cell, rows in listed.items() if counts.get(cell, 0) == rows}
    keep = [cell in finished for cell in keys]
    if repair and (cut or rewrite or len(finished) != len(listed) or not all(keep)):
        _rewrite(path, columns, key, None if frame is None else frame[keep], finished)
    return finished


def _rewrite(path: Path, columns: Sequence[str], key: Sequence[str], frame, finished: dict) -> None:
    """Write the CSV (header and the rows of `frame`, text as read) and the done-file (`finished`)
    whole."""
    import pandas as pd

    if frame is None:
        frame = pd.DataFrame(columns=list(columns), dtype=str)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise InputError(
            f"cannot create the output folder: {error.strerror}", source=str(path.parent)
        ) from None
    with atomic_path(path) as tmp:
        frame.to_csv(tmp, index=False, columns=list(columns), lineterminator="\n")
    with (
        atomic_path(done_path(path)) as tmp,
        open(tmp, "w", newline="", encoding="utf-8") as handle,
    ):
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow([*key, ROWS])
        writer.writerows([*cell, rows] for cell, rows in finished.items())


def read_rows(
    path: str | os.PathLike,
    columns: Sequence[str],
    key: Sequence[str],
    cells: Sequence[tuple] | None = None,
) -> pd.DataFrame:
    """The rows of the finished cells in the grid CSV `path` as a typed DataFrame (none if it does
    not exist).

    cells: only these cells, in this order (each cell's rows in the order written); default: every
    finished cell, in file order. Reads only: unfinished rows are left for `run_grid` to drop.
    """
    import pandas as pd

    path = Path(path)
    finished = _finished(path, columns, key, repair=False)
    if not path.exists():
        return pd.DataFrame(columns=list(columns))
    text, _ = _complete_text(path)
    if not text.strip():
        return pd.DataFrame(columns=list(columns))
    frame = pd.read_csv(io.StringIO(text))
    keys = (
        list(
            zip(
                *(
                    pd.read_csv(
                        io.StringIO(text), usecols=list(key), dtype=str, keep_default_na=False
                    )[name]
                    for name in key
                )
            )
        )
        if len(frame)
        else []
    )
    if cells is None:
        order = {cell: 0 for cell in finished}
    else:
        order = {_cell_key(cell): position for position, cell in enumerate(cells)}
    position = [order.get(cell) if cell in finished else None for cell in keys]
    keep = [value is not None for value in position]
    frame = frame[keep].assign(_position=[value for value in position if value is not None])
    return (
        frame.sort_values("_position", kind="stable")
        .drop(columns="_position")
        .reset_index(drop=True)
    )


def any_finished(path: str | os.PathLike) -> bool:
    """Whether the grid at `path` lists at least one finished cell (a folder with none holds nothing
    to keep)."""
    done_file = done_path(path)
    try:
        text, _ = _complete_text(done_file)
    except OSError:
        return False
    return text.count("\n") > 1


@contextmanager
def grid_folder(
    out: str | os.PathLike,
    *,
    command: str,
    spec_file: str,
    document: dict,
    owned: Iterable[str],
    grid: str,
    matches: Callable[[Path], bool] | None = None,
    force: bool = False,
) -> Iterator[bool]:
    """The folder of an experiment grid: claim it, write the spec, and remove it again if the run
    dies empty.

    Applies the rerun rule (`cosched.rerun.claim_output`; `matches` defaults to comparing
    `spec_file` with `document`), creates `out` with `document` as `spec_file` unless resuming, and
    yields whether it resumes. If the block raises (Ctrl-C included) and this call created the
    folder but no cell of the grid CSV `grid` finished, the folder is removed: nothing to resume,
    nothing left behind.
    """
    out = Path(out)
    created = not out.exists()
    try:
        resumed = claim_output(
            out,
            command=command,
            key_file=spec_file,
            owned=owned,
            matches=matches or json_key(document),
            force=force,
        )
        if not resumed:
            try:
                out.mkdir(parents=True, exist_ok=True)
            except OSError as error:
                raise InputError(
                    f"cannot create the output folder: {error.strerror}", source=str(out)
                ) from None
            with atomic_path(out / spec_file) as tmp:
                tmp.write_text(json.dumps(document, indent=1))
        yield resumed
    except BaseException:
        if created and not any_finished(out / grid):
            shutil.rmtree(out, ignore_errors=True)
        raise


def run_grid(
    function: Callable,
    cells: Sequence[tuple],
    *,
    path: str | os.PathLike,
    columns: Sequence[str],
    key: Sequence[str],
    shared: tuple = (),
    workers: int | None = None,
    dask: str | Client | None = None,
    progress: bool = True,
    desc: str = "grid",
    unit: str = "cell",
    order: Callable[[list[tuple]], list[tuple]] | None = None,
    meanwhile: Callable[[], object] | None = None,
) -> pd.DataFrame:
    """Run every cell of `cells` not finished in `path` yet, appending each finished cell; return
    all rows.

    Args:
        function: ``function(*shared, *cell)`` -> list of row dicts, or a `CellResult` (rows and
            side files). A module-level function: it is sent to worker processes or Dask workers.
        cells: the cells' key values, in the order of the returned rows (ints or names).
        path: the grid's CSV (its done-file is `done_path(path)`).
        columns: the CSV's columns, the key columns among them; each row gets its cell's key values.
        key: names of the key columns, one per value of a cell.
        shared: arguments every call gets first (sent once to each Dask worker).
        workers: local worker processes (default: all cores; 1 runs the cells in this process).
        dask: None for local execution, ``"local"`` for a LocalCluster of `workers` processes, a
            scheduler address ``"tcp://host:port"`` or a ``distributed.Client``.
        progress: show a progress bar of finished cells (`cosched.progress`).
        order: the cells to run, in the order to start them when they run side by side (in worker
            processes or on Dask; in this process they run in cell order). The rows do not depend
            on it.
        meanwhile: work for this process while the cells run in worker processes or on Dask: run
            in a thread started after the first cell finished (the workers all run by then), so
            finished cells are still appended at once and it costs no time of its own when the
            workers are the longer part; joined after the last cell, its exception raised then. Not
            called when the cells run in this process; left behind by an interrupt.

    Returns:
        A DataFrame of the rows of `cells`, in cell order, as read back from `path`.

    Ctrl-C / SIGTERM stop at once: pending cells are cancelled, the local workers killed, finished
    cells kept.
    """
    from cosched.progress import progress_bar

    path = Path(path)
    columns, key = list(columns), list(key)
    missing = [name for name in key if name not in columns]
    if missing:
        raise ValueError(f"key columns {missing} are not among the columns")
    cells = [tuple(cell) for cell in cells]
    if any(len(cell) != len(key) for cell in cells):
        raise ValueError(f"every cell needs {len(key)} key values ({', '.join(key)})")
    with GridAppender(path, columns, key) as grid:
        todo = list(
            {
                _cell_key(cell): cell for cell in cells if _cell_key(cell) not in grid.finished
            }.values()
        )
        total = len(dict.fromkeys(map(_cell_key, cells)))
        if dask is None and (workers or os.cpu_count() or 1) == 1:
            meanwhile = None  # `_execute` runs the cells in this process
        if todo:
            with (
                closing(_execute(function, todo, tuple(shared), workers, dask, order)) as results,
                progress_bar(
                    total=total,
                    initial=total - len(todo),
                    unit=unit,
                    desc=desc,
                    disable=not progress,
                ) as bar,
            ):
                side = None
                for cell, result in results:
                    grid.append(cell, result)
                    bar.update()
                    if meanwhile is not None and side is None:
                        side = _Beside(meanwhile)
                if side is not None:
                    side.join()
    return read_rows(path, columns, key, cells)


class _Beside(threading.Thread):
    """`run_grid`'s `meanwhile` in a daemon thread (an interrupt does not wait for it); `join`
    raises its exception."""

    def __init__(self, work: Callable[[], object]):
        super().__init__(daemon=True, name="cosched-meanwhile")
        self.work = work
        self.error: Exception | None = None
        self.start()

    def run(self) -> None:
        try:
            self.work()
        except Exception as error:  # raised again in the grid's thread
            self.error = error

    def join(self, timeout: float | None = None) -> None:
        super().join(timeout)
        if self.error is not None:
            raise self.error


class GridAppender:
    """The grid CSV `path` (and its done-file) opened for appending finished cells; a context
    manager.

    Entering repairs the files (creates them if missing, drops the rows of unfinished cells and
    cut-off lines: the completeness rule) and sets `finished`, the finished cells (key values as
    text) -> their row counts. `append` writes one finished cell; leaving closes both files.
    `run_grid` uses it; a command with its own scheduling loop (`cosched measure-heatmap`) uses it
    to write the same resumable format.
    """

    def __init__(self, path: str | os.PathLike, columns: Sequence[str], key: Sequence[str]):
        self.path = Path(path)
        self.columns, self.key = list(columns), list(key)
        self.finished: dict[tuple[str, ...], int] = {}
        self._files: list[IO[str]] = []
        self._stack = ExitStack()

    def __enter__(self) -> GridAppender:
        self.finished = _finished(self.path, self.columns, self.key, repair=True)
        with ExitStack() as stack:
            self._files = [
                stack.enter_context(open(name, "a", encoding="utf-8", newline=""))
                for name in (self.path, done_path(self.path))
            ]
            self._stack = stack.pop_all()
        return self

    def __exit__(self, *exc_info) -> None:
        self._files = []
        self._stack.close()

    def append(self, cell: tuple, result: list[dict] | CellResult) -> None:
        """Write one finished cell: its side files (whole), then its rows, then its line in the
        done-file, each flushed, with Ctrl-C / SIGTERM held back until all are written."""
        if len(self._files) != 2:
            raise RuntimeError("GridAppender.append outside its with-block")
        rows_file, done_file = self._files
        _record(self.path.parent, rows_file, done_file, self.columns, self.key, cell, result)


def _record(
    folder: Path, rows_file, done_file, columns: list, key: list, cell: tuple, result
) -> None:
    """Write one finished cell: side files, then its rows, then its line in the done-file."""
    import pandas as pd

    rows, files = (result.rows, result.files) if isinstance(result, CellResult) else (result, {})
    rows = [{**row, **dict(zip(key, cell))} for row in rows]
    text = (
        pd.DataFrame(rows, columns=columns).to_csv(index=False, header=False, lineterminator="\n")
        if rows
        else ""
    )
    line = io.StringIO()
    csv.writer(line, lineterminator="\n").writerow([*_cell_key(cell), len(rows)])
    targets = {name: _side_path(folder, name) for name in files}
    with signals_deferred():  # Ctrl-C / SIGTERM wait until the cell is written whole
        for name, content in files.items():
            with atomic_path(targets[name]) as tmp:
                if isinstance(content, bytes):
                    tmp.write_bytes(content)
                else:
                    tmp.write_text(content, encoding="utf-8")
        rows_file.write(text)
        rows_file.flush()
        done_file.write(line.getvalue())
        done_file.flush()


def _side_path(folder: Path, name: str) -> Path:
    relative = PurePosixPath(name)
    if relative.is_absolute() or ".." in relative.parts or not relative.parts:
        raise ValueError(
            f"a side file must be a relative path inside the grid's folder, got {name!r}"
        )
    return folder.joinpath(*relative.parts)


def _call(function: Callable, cell: tuple, *shared):
    return cell, function(*shared, *cell)


def _execute(
    function: Callable, todo: list[tuple], shared: tuple, workers: int | None, dask, order=None
) -> Generator:
    """Yield (cell, result) as cells finish: in this process, in local worker processes or on
    Dask (started in `order`, if given)."""
    workers = workers or os.cpu_count() or 1
    if dask is None and workers == 1:
        for cell in todo:
            yield cell, function(*shared, *cell)
        return
    if order is not None:
        todo = order(todo)
    if dask is not None:
        yield from _dask_results(function, todo, shared, workers, dask)
        return
    # workers die with us
    yield from pool_results(_call, [(function, cell, *shared) for cell in todo], workers)


def dask_client(address, *, workers: int, threads_per_worker: int = 1):
    """`(client, cluster)` for `--dask`: a `Client` given as is, a fresh `LocalCluster` for "local"
    (`cluster` is then the caller's to close), or a connection to a scheduler address."""
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise InputError(
            "dask.distributed is not installed (pip install distributed)", field="--dask"
        ) from None
    if isinstance(address, Client):
        return address, None
    try:
        if address == "local":
            cluster = LocalCluster(
                n_workers=workers,
                threads_per_worker=threads_per_worker,
                processes=True,
                dashboard_address=None,
            )
            return Client(cluster), cluster
        return Client(address, timeout=DASK_CONNECT_TIMEOUT), None
    except (OSError, TimeoutError, ValueError) as error:
        raise InputError(
            f"cannot reach the Dask scheduler {address!r} ({error})", field="--dask"
        ) from None


def _dask_results(
    function: Callable, todo: list[tuple], shared: tuple, workers: int | None, dask
) -> Generator:
    cluster = client = None
    futures = []
    try:
        client, cluster = dask_client(dask, workers=workers or os.cpu_count() or 1)
        from distributed import as_completed

        scattered = client.scatter(list(shared), broadcast=True) if shared else []
        futures = [client.submit(_call, function, cell, *scattered, pure=False) for cell in todo]
        for future in as_completed(futures):
            yield future.result()
    finally:
        if client is not None and futures:
            client.cancel(futures)
        if client is not None and client is not dask:
            client.close()
        if cluster is not None:
            cluster.close()


class ExperimentSpec(ABC):
    """Base of every experiment command's spec: a frozen dataclass naming one grid of cells.

    A subclass sets the class attributes (its command name, the files of its folder, the grid's key
    and columns) and implements the methods below; `run_experiment` does the rest (the rerun rule,
    the spec file, the resumable grid, local workers or Dask). The spec is the unit sent to every
    worker, once.

    Class attributes:
        command: the CLI command, also the rerun rule's owner name (``"experiment-sim"``).
        spec_file: the JSON document of the spec inside the output folder (``"spec.json"``).
        grid_file: the grid's CSV inside the output folder (``"grid.csv"``; its done-file beside
            it).
        key: the key columns, one per value of a cell.
        columns: the grid CSV's columns, the key columns among them.
        owned: every file and folder the command writes into its output folder (what ``--force``
            removes).
        unit: what one cell is, for the progress bar (``"run"``).
    """

    command: ClassVar[str]
    spec_file: ClassVar[str] = "spec.json"
    grid_file: ClassVar[str] = "grid.csv"
    key: ClassVar[tuple[str, ...]]
    columns: ClassVar[tuple[str, ...]]
    owned: ClassVar[tuple[str, ...]]
    unit: ClassVar[str] = "run"

    @abstractmethod
    def to_json(self) -> dict:
        """The spec as a JSON document (written as `spec_file`; a resume compares it with the stored
        one)."""

    @classmethod
    @abstractmethod
    def from_json(cls, document: dict) -> ExperimentSpec:
        """The spec a document of `to_json` describes (inputs named by path are read again and
        checked)."""

    @abstractmethod
    def cells(self) -> list[tuple]:
        """The grid's cells (key values), in the order of the rows `run_experiment` returns."""

    @abstractmethod
    def run_cell(self, *cell) -> list[dict] | CellResult:
        """Run one cell: its rows (a list of dicts), or a `CellResult` with side files."""

    @abstractmethod
    def finish(self, out: Path, grid: pd.DataFrame, *, plots: bool = True, workers: int = 1) -> Any:
        """Write the final tables (and plots) from the grid's rows; return what `run_experiment`
        returns. `workers`: local processes it may use (those the grid could)."""

    def matches(self, document: dict) -> Callable[[Path], bool] | None:
        """Whether a stored spec file describes this grid (None: equal to `document`,
        `cosched.rerun`)."""
        return None

    def prepare(self, out: Path, resumed: bool) -> None:  # noqa: B027 (a hook: most specs need none)
        """Checks before the first cell runs, inside the claimed folder (default: none)."""

    def meanwhile(self) -> None:  # noqa: B027 (a hook: most specs need none)
        """Work `finish` needs that no cell's result changes, done in this process while the cells
        run elsewhere (`run_grid`'s `meanwhile`; default: none)."""

    def dispatch_order(self, cells: list[tuple]) -> list[tuple]:
        """The cells in the order worker processes start them (default: as given); a spec whose
        cells differ much in cost puts the costly ones first, so the cheap ones, started last, even
        out when the workers finish."""
        return cells


def _run_spec_cell(spec: ExperimentSpec, *cell):
    """The cell function of every experiment: a module-level function, so workers can import it."""
    return spec.run_cell(*cell)


def run_experiment(
    spec: ExperimentSpec,
    out: str | os.PathLike,
    *,
    workers: int | None = None,
    dask: str | Client | None = None,
    progress: bool = True,
    plots: bool = True,
    force: bool = False,
) -> Any:
    """Run the cells of `spec` not finished in `out` yet, then write its final tables; return what
    its `finish` returns.

    Args:
        spec: an experiment spec (`ExperimentSpec` subclass).
        out: the output folder. The rerun rule of `cosched.rerun`: a folder of the same spec
            resumes, another spec or foreign files are refused unless `force` (start over).
        workers: local worker processes (default: all cores; 1 runs the cells in this process).
        dask: ``"local"`` for a LocalCluster, a scheduler address ``"tcp://host:port"`` or a
            ``distributed.Client`` (`run_grid`).
        progress: show a progress bar.
        plots: draw the experiment's plots at the end (experiments without plots ignore it).
        force: start over in a folder of another spec.

    Ctrl-C / SIGTERM cancel the pending cells at once and keep the finished ones.
    """
    if not isinstance(spec, ExperimentSpec):
        raise TypeError(f"expected an ExperimentSpec, got {type(spec).__name__}")
    out = Path(out)
    document = spec.to_json()
    with output_lock(out, folder=True, option="out"):  # one run at a time (cosched.locks)
        with grid_folder(
            out,
            command=spec.command,
            spec_file=spec.spec_file,
            document=document,
            owned=spec.owned,
            grid=spec.grid_file,
            matches=spec.matches(document),
            force=force,
        ) as resumed:
            spec.prepare(out, resumed)
            grid = run_grid(
                _run_spec_cell,
                spec.cells(),
                path=out / spec.grid_file,
                columns=spec.columns,
                key=spec.key,
                shared=(spec,),
                workers=workers,
                dask=dask,
                progress=progress,
                desc=spec.command,
                unit=spec.unit,
                order=spec.dispatch_order,
                meanwhile=spec.meanwhile,
            )
        return spec.finish(out, grid, plots=plots, workers=workers or os.cpu_count() or 1)
