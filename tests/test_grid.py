"""The one grid runner (cosched.grid): incremental CSV, the completeness rule, side files, workers,
Dask errors."""

from __future__ import annotations

import io

import pandas as pd
import pytest

import cosched.grid as grid
from cosched.errors import InputError
from cosched.grid import CellResult, any_finished, done_path, read_rows, run_grid

COLUMNS = ["group", "item", "value", "label"]
KEY = ["group", "item"]
# a name with a comma: quoted in both files
CELLS = [(g, name) for g in range(3) for name in ("a", "b,c")]


def rows_of(group: int, item: str) -> list[dict]:
    """A cell's rows: as many as its group number plus one (so cells differ in size)."""
    return [{"value": group * 10 + i + 0.1, "label": f"{item}-{i}"} for i in range(group + 1)]


def with_files(scale: int, group: int, item: str) -> CellResult:
    return CellResult(
        [{"value": scale * group, "label": item}], {f"side/{group}_{item[0]}.txt": f"{group}{item}"}
    )


def run(path, function=rows_of, cells=CELLS, **options):
    return run_grid(
        function,
        cells,
        path=path,
        columns=COLUMNS,
        key=KEY,
        progress=False,
        **{"workers": 1, **options},
    )


def test_rows_come_back_in_cell_order_with_their_keys(tmp_path):
    frame = run(tmp_path / "rows.csv", cells=list(reversed(CELLS)))
    assert list(frame.columns) == COLUMNS
    assert len(frame) == sum(g + 1 for g, _ in CELLS)
    assert list(dict.fromkeys(zip(frame["group"], frame["item"]))) == list(reversed(CELLS))
    done = pd.read_csv(done_path(tmp_path / "rows.csv"))
    assert list(done.columns) == [*KEY, "rows"] and len(done) == len(CELLS)
    pd.testing.assert_frame_equal(
        read_rows(tmp_path / "rows.csv", COLUMNS, KEY, CELLS), run(tmp_path / "rows.csv")
    )


def test_a_cut_off_cell_is_computed_again_and_the_result_is_that_of_one_run(tmp_path):
    path = tmp_path / "rows.csv"
    reference = run(tmp_path / "reference.csv")
    run(path)
    lines = path.read_text().splitlines(keepends=True)
    # SIGKILL while the last cell (3 rows) was written
    path.write_text("".join(lines[:-2]) + lines[-2][:5])
    done = done_path(path).read_text().splitlines(keepends=True)
    done_path(path).write_text("".join(done[:-1]) + done[-1][:3])  # ... and the done-file cut too
    # the last cell (3 rows) no longer counts
    assert len(read_rows(path, COLUMNS, KEY)) == len(reference) - 3
    calls = []
    frame = run(path, function=lambda *cell: calls.append(cell) or rows_of(*cell))
    assert calls == [CELLS[-1]]
    pd.testing.assert_frame_equal(frame, reference)
    assert path.read_text() == (tmp_path / "reference.csv").read_text()


def test_rows_without_their_done_line_do_not_count(tmp_path):
    path = tmp_path / "rows.csv"
    run(path)
    done = done_path(path).read_text().splitlines(keepends=True)
    # killed after the rows of the second cell, before its line
    done_path(path).write_text("".join(done[:2]))
    calls = []
    run(path, function=lambda *cell: calls.append(cell) or rows_of(*cell))
    assert calls == CELLS[1:]
    assert len(pd.read_csv(path)) == sum(g + 1 for g, _ in CELLS)  # no duplicate rows


def test_an_interrupted_grid_keeps_its_finished_cells(tmp_path):
    path = tmp_path / "out" / "rows.csv"

    def interrupted(group, item):
        if (group, item) == CELLS[3]:
            raise KeyboardInterrupt
        return rows_of(group, item)

    with pytest.raises(KeyboardInterrupt):
        run(path, function=interrupted)
    assert any_finished(path)
    assert (
        list(dict.fromkeys(zip(*(read_rows(path, COLUMNS, KEY)[name] for name in KEY))))
        == CELLS[:3]
    )
    assert not any_finished(tmp_path / "elsewhere.csv")


def test_side_files_are_written_before_the_rows(tmp_path):
    path = tmp_path / "rows.csv"
    frame = run(path, function=with_files, shared=(7,))
    assert frame["value"].tolist() == [7 * g for g, _ in CELLS]
    assert (tmp_path / "side" / "2_b.txt").read_text() == "2b,c"

    # the CSV as the runner sees it: the side file must exist when the row comes
    class Rows(io.StringIO):
        def write(self, text):
            assert (tmp_path / "side" / "5_x.txt").exists()
            return super().write(text)

    grid._record(tmp_path, Rows(), io.StringIO(), COLUMNS, KEY, (5, "x"), with_files(1, 5, "x"))


def test_an_older_csv_without_done_file_or_other_columns_is_refused(tmp_path):
    path = tmp_path / "rows.csv"
    run(path)
    done_path(path).unlink()
    with pytest.raises(InputError, match="--force"):
        run(path)
    path.write_text("group,item,other\n")
    with pytest.raises(InputError, match="unexpected columns"):
        run(path)


def test_local_worker_processes_give_the_same_rows(tmp_path):
    pd.testing.assert_frame_equal(run(tmp_path / "two.csv", workers=2), run(tmp_path / "one.csv"))


def test_the_dispatch_order_starts_worker_cells_and_leaves_the_rows_alone(tmp_path):
    asked: list[list[tuple]] = []

    def backwards(cells: list[tuple]) -> list[tuple]:
        asked.append(cells)
        return list(reversed(cells))

    in_process = run(tmp_path / "one.csv", order=backwards)
    assert asked == []  # one process runs the cells in cell order
    assert list(pd.read_csv(tmp_path / "one.csv")["group"]) == [0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2]
    side_by_side = run(tmp_path / "two.csv", workers=2, order=backwards)
    assert asked == [CELLS]
    pd.testing.assert_frame_equal(side_by_side, in_process)


def test_meanwhile_runs_once_while_worker_cells_run_and_never_in_process(tmp_path):
    calls: list[int] = []

    def meanwhile() -> None:
        # the first cell is appended: the others run in the workers
        calls.append(len(pd.read_csv(tmp_path / "two.csv")))

    in_process = run(tmp_path / "one.csv", meanwhile=meanwhile)
    assert calls == []  # one process: nothing runs beside the cells
    side_by_side = run(tmp_path / "two.csv", workers=2, meanwhile=meanwhile)
    assert len(calls) == 1 and calls[0] >= 1
    pd.testing.assert_frame_equal(side_by_side, in_process)


def test_an_error_of_meanwhile_is_raised_after_every_cell_is_kept(tmp_path):
    def fails() -> None:
        raise RuntimeError("meanwhile failed")

    with pytest.raises(RuntimeError, match="meanwhile failed"):
        run(tmp_path / "two.csv", workers=2, meanwhile=fails)
    assert len(read_rows(tmp_path / "two.csv", COLUMNS, KEY, CELLS)) == len(
        run(tmp_path / "one.csv")
    )


def test_an_unreachable_dask_scheduler_names_the_option(tmp_path, monkeypatch):
    pytest.importorskip("distributed")
    monkeypatch.setattr(grid, "DASK_CONNECT_TIMEOUT", "0.5s")
    with pytest.raises(InputError, match="--dask"):
        run(tmp_path / "rows.csv", dask="tcp://127.0.0.1:9")
