"""Progress bars only on a terminal; a file or log gets a plain note a minute."""

from __future__ import annotations

import io
import itertools

from tqdm import tqdm

import cosched.progress as progress
from cosched.cli import main


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_command_writing_to_a_file_draws_no_bar(tmp_path, capsys):
    out = tmp_path / "run"
    argv = ["simulate", "--workload", "kth-sp2", "--platform", "kth-sp2", "--limit", "2000"]
    assert main([*argv, "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "\r" not in err and "job/s" not in err and "%|" not in err
    assert err.strip().splitlines() == [f"cosched simulate: wrote {out}/: jobs.csv, summary.json"]


def test_a_long_run_in_a_file_writes_one_plain_line_per_note_interval(monkeypatch):
    clock = itertools.count(0.0, 25.0)  # every reading of the clock: 25 s later
    monkeypatch.setattr("tqdm.std.time", lambda: next(clock))
    log = io.StringIO()
    bar = progress.progress_bar(total=8, unit="run", desc="measure-heatmap", file=log)
    for _ in range(8):
        bar.update()
    bar.close()
    lines = log.getvalue().splitlines()
    assert "\r" not in log.getvalue() and len(lines) >= 2
    assert all(line.startswith("measure-heatmap: ") and " run (" in line for line in lines)
    assert lines[-1].startswith("measure-heatmap: 8/8 run (100 %)")


def test_a_short_run_in_a_file_writes_nothing():
    log = io.StringIO()
    with progress.progress_bar(total=3, desc="short", file=log) as bar:
        bar.update(3)
    assert log.getvalue() == ""


def test_a_terminal_gets_the_bar():
    screen = Terminal()
    with progress.progress_bar(total=3, desc="bar", file=screen) as bar:
        bar.update(3)
    assert type(bar) is tqdm and "\r" in screen.getvalue() and "3/3" in screen.getvalue()
