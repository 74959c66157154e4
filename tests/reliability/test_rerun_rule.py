"""The one rerun rule (cosched.rerun, docs/guarantees.md).

Also the process helpers (cosched.processes)."""

from __future__ import annotations

import json
import os
import signal
import time

import pytest

from cosched.cli import main
from cosched.processes import Interrupted, interrupt_exit_code, pool_results, termination_signals
from cosched.rerun import claim_output, json_key

EXPERIMENT = [
    "experiment",
    "--preset",
    "small",
    "--n",
    "4",
    "--instances",
    "1",
    "--k",
    "0.8",
    "--workers",
    "1",
    "--quiet",
]
PNG = b"\x89PNG\r\n\x1a\n"


def _one_error_line(capsys) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "error:" in err, err
    return err


def test_same_configuration_resumes_other_is_refused_and_force_starts_over(tmp_path, capsys):
    out = tmp_path / "grid"
    assert main([*EXPERIMENT, "--no-plots", "--out", str(out)]) == 0
    rows = (out / "results.csv").read_text()
    (out / "fig6.png").write_bytes(PNG)  # a figure of an earlier run
    (out / "notes.txt").write_text("mine")
    assert (
        main([*EXPERIMENT, "--no-plots", "--out", str(out)]) == 0
    )  # same grid: resumes, nothing to do
    assert (out / "results.csv").read_text() == rows
    capsys.readouterr()
    assert main([*EXPERIMENT, "--no-plots", "--seed", "3", "--out", str(out)]) == 2
    assert "different experiment run" in _one_error_line(capsys)
    assert (out / "results.csv").read_text() == rows  # refused: nothing touched
    assert main([*EXPERIMENT, "--no-plots", "--seed", "3", "--force", "--out", str(out)]) == 0
    assert json.loads((out / "config.json").read_text())["seed"] == 3
    assert not (out / "fig6.png").exists()  # removed with the old run, not left stale
    assert (out / "notes.txt").read_text() == "mine"  # not the command's: kept


def test_a_folder_of_foreign_files_is_refused_unless_forced(tmp_path, capsys):
    out = tmp_path / "somewhere"
    out.mkdir()
    (out / "thesis.tex").write_text("")
    assert main([*EXPERIMENT, "--no-plots", "--out", str(out)]) == 2
    assert "thesis.tex" in _one_error_line(capsys)
    assert sorted(p.name for p in out.iterdir()) == ["thesis.tex"]
    assert main([*EXPERIMENT, "--no-plots", "--force", "--out", str(out)]) == 0
    assert (out / "thesis.tex").exists() and (out / "results.csv").exists()


def test_an_empty_folder_or_temporary_leftovers_start_a_run(tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    (out / ".config.json.x1y2.json").write_text("{")  # a run killed while writing its first file
    matches = json_key({"a": 1})
    assert (
        claim_output(
            out, command="x", key_file="config.json", owned=("results.csv",), matches=matches
        )
        is False
    )
    assert list(out.iterdir()) == []


def test_experiment_sim_other_spec_is_refused_and_force_starts_over(tmp_path, capsys):
    out = tmp_path / "sim"
    argv = [
        "experiment-sim",
        "--preset",
        "example-small",
        "--jobs",
        "30",
        "--experiments",
        "1",
        "--scheduler",
        "easy",
        "--workers",
        "1",
        "--no-plots",
        "--quiet",
        "--out",
        str(out),
    ]
    assert main(argv) == 0
    capsys.readouterr()
    assert main([*argv, "--seed", "4"]) == 2
    assert "spec.json differs" in _one_error_line(capsys)
    assert main([*argv, "--seed", "4", "--force"]) == 0
    assert json.loads((out / "spec.json").read_text())["seed"] == 4


def test_measure_resumes_by_default_and_removes_plots_it_does_not_redraw(tmp_path, capsys):
    out = tmp_path / "m"
    argv = [
        "measure",
        "--kernels",
        "compute",
        "--combinations",
        "upto:1",
        "--window",
        "0.1",
        "--warmup",
        "0.05",
        "--backend",
        "cputime",
        "--quiet",
        "--out",
        str(out),
    ]
    assert main([*argv, "--plots"]) == 0
    assert (out / "plots" / "heatmap.png").exists()
    speeds = (out / "speeds.csv").read_text()
    assert main([*argv, "--no-plots", "--resume"]) == 0  # --resume: the old spelling, accepted
    assert (out / "speeds.csv").read_text() == speeds  # nothing re-measured
    assert (
        not (out / "plots" / "heatmap.png").exists()
        and not (out / "plots" / "speed_by_size.png").exists()
    )
    capsys.readouterr()
    assert main([*argv, "--window", "0.2"]) == 2  # another window: other speeds, refused
    assert "config.json differs" in _one_error_line(capsys)
    assert main([*argv, "--window", "0.2", "--no-plots", "--force"]) == 0
    assert (out / "speeds.csv").read_text() != speeds


def _sleep(seconds):
    time.sleep(seconds)
    return os.getpid()


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="needs /proc")
def test_stopping_early_kills_the_pool_workers_at_once(tmp_path):
    results = pool_results(_sleep, [(0.01,), (0.01,)] + [(30,)] * 4, workers=2)
    first = next(results)
    started = time.monotonic()
    results.close()  # e.g. Ctrl-C in the loop body
    assert time.monotonic() - started < 2
    deadline = time.monotonic() + 2
    while _alive(first) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not _alive(first)


def test_sigterm_raises_an_interrupt_with_exit_code_143():
    with pytest.raises(KeyboardInterrupt) as caught, termination_signals():
        signal.raise_signal(signal.SIGTERM)
        time.sleep(1)
    assert isinstance(caught.value, Interrupted) and interrupt_exit_code(caught.value) == 143
    assert interrupt_exit_code(KeyboardInterrupt()) == 130
