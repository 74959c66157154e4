"""Every output path of every command is checked before any input is read, a folder in use by
another run is refused, and flags that only mean something with another are refused without it.

The commands and their output options are read from the parsers, so a new command is covered
without editing this file (`cosched.outputs.output_options`)."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import textwrap

import pytest

from cosched.cli import build_parser, main
from cosched.locks import output_lock
from cosched.outputs import output_options

WORKLOAD = "job_id,submit_time,run_time,cores\n1,0,100,4\n2,10,50,8\n3,20,70,2\n"
NUMBER = "2"  # a value every numeric option takes
HYBRID = ["--hybrid", "baseline", "--type-by", "job"]  # a CSV has no SWF group ids


def commands() -> dict[str, argparse.ArgumentParser]:
    return dict(build_parser()._subcommands.choices)


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def assert_refused(code, err, *needles):
    assert code == 2, err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    for needle in needles:
        assert needle in err, err


def tree(folder) -> dict[str, bytes | None]:
    """Every path under `folder` and the bytes of each file: what a refused run must leave alone."""
    found = {}
    for root, folders, files in os.walk(folder):
        for name in folders:
            found[os.path.join(root, name)] = None
        for name in files:
            path = os.path.join(root, name)
            with open(path, "rb") as handle:
                found[path] = handle.read()
    return found


@pytest.fixture
def workload(tmp_path):
    path = tmp_path / "w.csv"
    path.write_text(WORKLOAD)
    return path


def simulate(workload, out, *extra):
    return ["simulate", "--workload", workload, "--platform", "kth-sp2", "--out", out, *extra]


def test_log_actions_naming_the_workload_is_refused_and_the_workload_kept(
    tmp_path, capsys, workload
):
    before = tree(tmp_path)
    argv = simulate(workload, tmp_path / "OUT", *HYBRID, "--log-actions", workload)
    code, _, err = run(capsys, *argv)
    assert_refused(code, err, "--log-actions", "input of the run (--workload)")
    assert tree(tmp_path) == before


def test_log_actions_where_out_writes_its_jobs_csv_is_refused(tmp_path, capsys, workload):
    before = tree(tmp_path)
    out = tmp_path / "OUT"
    code, _, err = run(capsys, *simulate(workload, out, *HYBRID, "--log-actions", out / "jobs.csv"))
    assert_refused(code, err, "--log-actions", "--out writes its jobs.csv there")
    assert tree(tmp_path) == before


@pytest.mark.parametrize("case", ["empty", "existing-folder", "under-a-file"])
def test_a_log_actions_path_that_cannot_be_written_is_refused_before_out(
    tmp_path, capsys, workload, case
):
    (tmp_path / "folder").mkdir()
    (tmp_path / "plain").write_text("")
    path = {"empty": "", "existing-folder": "folder", "under-a-file": "plain/log.csv"}[case]
    before = tree(tmp_path)
    argv = simulate(workload, tmp_path / "OUT", *HYBRID, "--log-actions", path and tmp_path / path)
    code, _, err = run(capsys, *argv)
    assert_refused(code, err, "--log-actions")
    assert tree(tmp_path) == before


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_a_read_only_log_actions_folder_is_refused_before_out(tmp_path, capsys, workload):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    before = tree(tmp_path)
    argv = simulate(workload, tmp_path / "OUT", *HYBRID, "--log-actions", locked / "log.csv")
    code, _, err = run(capsys, *argv)
    assert_refused(code, err, "--log-actions", "permission denied")
    assert tree(tmp_path) == before


def test_two_outputs_on_one_path_are_refused(tmp_path, capsys, workload):
    out = tmp_path / "OUT"
    code, _, err = run(capsys, *simulate(workload, out, "--plots", out))
    assert_refused(code, err, "--plots", "the same path as --out")
    assert not out.exists()


def test_a_hybrid_run_with_its_log_beside_out_writes_both(tmp_path, capsys, workload):
    out, log = tmp_path / "OUT", tmp_path / "actions.csv"
    code, _, err = run(capsys, *simulate(workload, out, *HYBRID, "--log-actions", log, "--quiet"))
    assert code == 0, err
    assert log.read_text().startswith("time,") and (out / "jobs.csv").exists()
    assert sorted(os.listdir(tmp_path)) == ["OUT", "actions.csv", "w.csv"]  # no lock file left


def test_every_option_that_names_an_output_is_marked():
    """An option whose help says it writes a file or folder is among the checked outputs."""
    for name, parser in commands().items():
        marked = output_options(parser)
        for action in parser._actions:
            text = (action.help or "").lower()
            writes = (
                text.startswith(("output file", "output folder", "write ")) and action.nargs != 0
            )
            if writes and action.help != argparse.SUPPRESS:
                assert action.dest in marked, f"{name} {action.option_strings}"


# --- one run at a time per output folder ---

HOLDER = textwrap.dedent(
    """
    import sys
    from cosched.locks import output_lock
    with output_lock(sys.argv[1], folder=True):
        print("held", flush=True)
        sys.stdin.read()
    """
)


def locked_outputs() -> list[tuple[str, argparse.Action]]:
    """(command, option) of every output a run holds for itself, from the parsers."""
    return [
        (name, action)
        for name, parser in commands().items()
        for action in output_options(parser).values()
        if action.output.lock
    ]


def placeholder_argv(parser: argparse.ArgumentParser, name: str, value: str) -> list[str]:
    """A command line of `name` with every required argument given `value` (never read)."""
    positional, options = [], []
    for action in parser._actions:
        if action.option_strings and not action.required:
            continue
        given = str(list(action.choices)[0]) if action.choices else value
        if action.type is not None and not action.choices:
            try:
                action.type(NUMBER)
                given = NUMBER
            except (ValueError, TypeError, argparse.ArgumentTypeError):
                pass
        if action.option_strings:
            options += [action.option_strings[0], given]
        else:
            positional.append(given)
    return [name, *positional, *options]


def test_every_command_writing_into_a_folder_holds_it():
    names = {name for name, _ in locked_outputs()}
    assert {"compare", "experiment-sim", "measure-heatmap", "simulate", "experiment"} <= names


def test_a_folder_held_by_another_run_is_refused_in_one_line(tmp_path, capsys):
    out = tmp_path / "OUT"
    out.mkdir()
    (out / "kept.txt").write_text("kept")
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(out)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        before = tree(tmp_path)
        for name, action in locked_outputs():
            argv = placeholder_argv(commands()[name], name, str(tmp_path / "absent-input"))
            code, _, err = run(capsys, *argv, action.option_strings[0], out)
            assert_refused(code, err, f"in use by another cosched run (process {holder.pid})")
            assert tree(tmp_path) == before, name
    finally:
        holder.communicate("")
    assert holder.returncode == 0


def test_a_killed_holder_does_not_block_the_next_run(tmp_path):
    out = tmp_path / "OUT"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(out)], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert holder.stdout.readline().strip() == b"held"
    holder.kill()
    holder.communicate()
    with output_lock(out, folder=True):
        pass
    assert sorted(os.listdir(tmp_path)) == []  # the stale lock file taken over and removed


def test_a_run_in_this_process_nests_its_lock(tmp_path):
    out = tmp_path / "OUT"
    with output_lock(out, folder=True), output_lock(out, folder=True):
        assert os.listdir(tmp_path) == [".OUT.cosched.lock"]
    assert os.listdir(tmp_path) == []


# --- flags that mean something only with another ---


def only_with_options() -> list[tuple[str, argparse.Action]]:
    return [
        (name, action)
        for name, parser in commands().items()
        for action in parser._actions
        if getattr(action, "only_with", None) is not None
    ]


def test_every_hybrid_flag_of_simulate_needs_hybrid():
    flags = {action.option_strings[0] for name, action in only_with_options() if name == "simulate"}
    assert {"--mtbf", "--preemption-warning", "--regrow", "--log-actions", "--notice"} <= flags
    assert "--hybrid" not in flags and "--seed" not in flags  # the seed also marks elastic jobs


@pytest.mark.parametrize(
    "command, action", only_with_options(), ids=lambda x: getattr(x, "dest", x)
)
def test_a_flag_without_its_owner_is_refused_naming_it(tmp_path, capsys, workload, command, action):
    if action.choices:
        value = str(list(action.choices)[-1])
    elif action.type in (int, float):
        value = "1"
    else:
        value = str(tmp_path / "value.csv")
    argv = ["simulate", "--workload", workload, "--platform", "kth-sp2", "--quiet"]
    before = tree(tmp_path)
    code, _, err = run(capsys, *argv, action.option_strings[0], value)
    assert_refused(code, err, action.option_strings[0], action.only_with.option_strings[0])
    assert tree(tmp_path) == before


@pytest.mark.parametrize(
    "flag, value",
    [("--preemption-warning", "60"), ("--regrow", "pre-shrink"), ("--notice", "w1")],
)
def test_hybrid_mechanism_flags_without_hybrid_are_refused(tmp_path, capsys, workload, flag, value):
    argv = ["simulate", "--workload", workload, "--platform", "kth-sp2", "--quiet"]
    code, _, err = run(capsys, *argv, flag, value)
    assert_refused(code, err, flag, "--hybrid")


def test_an_atomic_output_appears_whole_with_the_usual_permissions_or_not_at_all(tmp_path):
    from cosched.outputs import atomic_path

    target = tmp_path / "deep" / "jobs.csv"
    with atomic_path(target) as path:
        # the temporary file: new, empty, private, beside the target, named after it
        assert path.parent == target.parent and path.name.startswith(".jobs.csv.")
        assert path.suffix == ".csv" and path.stat().st_size == 0
        assert path.stat().st_mode & 0o777 == 0o600
        path.write_text("whole\n")
        assert not target.exists()
    mask = os.umask(0)
    os.umask(mask)
    assert target.read_text() == "whole\n" and target.stat().st_mode & 0o777 == 0o666 & ~mask
    assert sorted(p.name for p in target.parent.iterdir()) == ["jobs.csv"]
    with pytest.raises(RuntimeError), atomic_path(tmp_path / "failed.csv") as path:
        path.write_text("half")
        raise RuntimeError("the run failed")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["deep"]
    names = set()
    for _ in range(20):  # each temporary file its own name
        with atomic_path(target) as path:
            names.add(path.name)
    assert len(names) == 20
