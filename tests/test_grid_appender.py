"""GridAppender: the public way to write cells of a resumable grid from a command's own loop."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cosched.grid import CellResult, GridAppender, done_path, read_rows, run_grid

COLUMNS = ["run", "attempt", "value"]
KEY = ["run", "attempt"]


def rows_of(run: str, attempt: int) -> list[dict]:
    return [{"value": attempt * 10 + i} for i in range(attempt % 3)]


@settings(max_examples=25, deadline=None)
@given(
    cells=st.lists(
        st.tuples(st.sampled_from(["a", "b,c", "d"]), st.integers(0, 5)), unique=True, max_size=6
    ),
    cut=st.integers(0, 6),
)
def test_appended_cells_read_back_as_run_grid_writes_them(tmp_path_factory, cells, cut):
    folder = tmp_path_factory.mktemp("grid")
    with GridAppender(folder / "own.csv", COLUMNS, KEY) as grid:
        assert grid.finished == {}
        for cell in cells[:cut]:
            grid.append(cell, rows_of(*cell))
    expected = run_grid(
        rows_of,
        cells[:cut],
        path=folder / "ref.csv",
        columns=COLUMNS,
        key=KEY,
        workers=1,
        progress=False,
    )
    assert (folder / "own.csv").read_text() == (folder / "ref.csv").read_text()
    assert done_path(folder / "own.csv").read_text() == done_path(folder / "ref.csv").read_text()
    # entering again lists exactly the finished cells and appends after them
    with GridAppender(folder / "own.csv", COLUMNS, KEY) as grid:
        assert grid.finished == {
            (run, str(attempt)): len(rows_of(run, attempt)) for run, attempt in cells[:cut]
        }
        for cell in cells[cut:]:
            grid.append(cell, rows_of(*cell))
    frame = read_rows(folder / "own.csv", COLUMNS, KEY, cells)
    assert len(frame) == sum(len(rows_of(*cell)) for cell in cells)
    assert len(expected) == sum(len(rows_of(*cell)) for cell in cells[:cut])


def test_rows_without_their_done_line_are_dropped_on_entering(tmp_path):
    path = tmp_path / "runs.csv"
    with GridAppender(path, COLUMNS, KEY) as grid:
        grid.append(("a", 1), CellResult([{"value": 1}], {"logs/a.1.txt": "out"}))
    with open(path, "a") as handle:  # a cell cut off between its rows and its done line
        handle.write("b,0,7\n")
    with GridAppender(path, COLUMNS, KEY) as grid:
        assert grid.finished == {("a", "1"): 1}
    assert path.read_text() == "run,attempt,value\na,1,1\n"
    assert (tmp_path / "logs" / "a.1.txt").read_text() == "out"


def test_append_outside_the_with_block_is_refused(tmp_path):
    grid = GridAppender(tmp_path / "runs.csv", COLUMNS, KEY)
    with pytest.raises(RuntimeError, match="with-block"):
        grid.append(("a", 0), [])
    with grid:
        pass
    with pytest.raises(RuntimeError, match="with-block"):
        grid.append(("a", 0), [])
