"""Fuzz targets for output paths: every output option of every command (read from the parsers, so a
new command or option is a new target) pointed at an input of the run, at another output, at a
place of the wrong kind, at an empty path, under a plain file, through a link to an input, or over
an input where a folder output writes one of its entries.

Each case must be refused before any input is read: exit 2, one error line naming the option, the
input's bytes unchanged and nothing written anywhere. Two runs sharing an output folder at once
(the `fuzz` marker only) must never lose a row: the second is refused in one line or both finish.
Both campaigns of `conftest.py` run the path targets.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cosched.cli import build_parser, main
from cosched.outputs import output_options

CAMPAIGN_EXAMPLES = {"quick": 4, "long": 150}
NUMBER = "2"  # a value every numeric option takes
INPUT_NAMES = ("in.csv", "in.json", "in.png", "in.swf", "in")
HAZARDS = (
    "input",
    "input-symlink",
    "input-hardlink",
    "input-at-entry",
    "other-output",
    "empty",
    "wrong-kind",
    "under-a-file",
)
COMMANDS = dict(build_parser()._subcommands.choices)
OUTPUTS = [
    (name, action)
    for name, parser in COMMANDS.items()
    for action in output_options(parser).values()
]


def _value_for(action: argparse.Action, text: str) -> str:
    """`text`, or a value the option's type or choices accept."""
    if action.choices:
        return str(list(action.choices)[0])
    if action.type is not None:
        with contextlib.suppress(ValueError, TypeError, argparse.ArgumentTypeError):
            action.type(NUMBER)
            return NUMBER
    return text


def _carriers(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """Options and positionals that take one free-text value and name no output: an input path
    given to any of them is an input of the run."""
    outputs = output_options(parser)
    return [
        action
        for action in parser._actions
        if action.dest not in outputs
        and action.dest != "help"
        and action.nargs in (None, "?")
        and action.choices is None
        and action.type is None
        and action.help != argparse.SUPPRESS
        and getattr(action, "only_with", None) is None
        and type(action).__name__ in ("_StoreAction", "NameList")
    ]


def _argv(parser, name, fixed: dict[argparse.Action, str]) -> list[str]:
    """A command line of `name`: the `fixed` values, every other required argument a placeholder
    (never read: the outputs are refused first)."""
    positional, options = [], []
    chosen = {  # one option of each required group ("one of --heatmap --app-seed")
        group._group_actions[0]
        for group in parser._mutually_exclusive_groups
        if group.required and not any(action in fixed for action in group._group_actions)
    }
    for action in parser._actions:
        if action in fixed:
            value = fixed[action]
        elif (action.option_strings and not action.required and action not in chosen) or (
            action.dest == "help"
        ):
            continue
        else:
            value = _value_for(action, "absent-input")
        owner = getattr(action, "only_with", None)
        if action in fixed and owner is not None and owner not in fixed:
            options += [owner.option_strings[0], "x"]  # the option needs it to count
        if action.option_strings:
            options += [action.option_strings[0], value]
        else:
            positional.append(value)
    return [name, *positional, *options]


def _tree(folder: Path) -> dict[str, bytes | None]:
    found: dict[str, bytes | None] = {}
    for root, folders, files in os.walk(folder):
        for item in folders:
            found[os.path.join(root, item)] = None
        for item in files:
            with open(os.path.join(root, item), "rb") as handle:
                found[os.path.join(root, item)] = handle.read()
    return found


def _hazards(name: str, output: argparse.Action) -> list[str]:
    """The hazards that apply to an output: some need an input option, entries or a second
    output."""
    parser, option = COMMANDS[name], output.output
    carriers = bool(_carriers(parser))
    needs = {
        "input": carriers,
        "input-symlink": carriers and option.kind != "folder",
        "input-hardlink": carriers and option.kind != "folder",
        "input-at-entry": carriers and option.kind == "folder" and bool(list(option.writes)),
        "other-output": len(output_options(parser)) > 1,
    }
    return [hazard for hazard in HAZARDS if needs.get(hazard, True)]


def _case(name: str, output: argparse.Action, hazard: str, input_name: str, data) -> None:
    parser = COMMANDS[name]
    option = output.output
    carriers = _carriers(parser)
    others = [a for a in output_options(parser).values() if a is not output]
    entries = list(option.writes)
    with tempfile.TemporaryDirectory() as folder, contextlib.chdir(folder):
        root = Path(folder)
        data_file = root / input_name
        data_file.write_bytes(b"1,2,3\n")
        (root / "plain").write_text("plain")
        (root / "a-folder").mkdir()
        fixed: dict[argparse.Action, str] = {}
        flags = {output.option_strings[0]}
        if hazard.startswith("input"):
            fixed[data.draw(st.sampled_from(carriers), label="carrier")] = str(data_file)
        if hazard == "input":
            fixed[output] = str(data_file)
        elif hazard == "input-symlink":
            (root / "link.png").symlink_to(data_file)
            fixed[output] = str(root / "link.png")
        elif hazard == "input-hardlink":
            os.link(data_file, root / "hard.png")
            fixed[output] = str(root / "hard.png")
        elif hazard == "input-at-entry":
            entry = data.draw(st.sampled_from(entries), label="entry")
            (root / "OUT").mkdir()
            inside = root / "OUT" / entry
            inside.write_bytes(data_file.read_bytes())
            carrier = next(action for action in fixed)
            fixed[carrier] = str(inside)
            fixed[output] = str(root / "OUT")
        elif hazard == "other-output":
            other = data.draw(st.sampled_from(others), label="other")
            fixed[output] = fixed[other] = str(root / "same.png")
            flags.add(other.option_strings[0])
        elif hazard == "empty":
            fixed[output] = data.draw(st.sampled_from(["", " "]), label="empty")
        elif hazard == "wrong-kind":
            fixed[output] = str(root / ("plain" if option.kind == "folder" else "a-folder"))
        elif hazard == "under-a-file":
            fixed[output] = str(root / "plain" / "sub.png")
        argv = _argv(parser, name, fixed)
        before = _tree(root)
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(argv)
        lines = err.getvalue().splitlines()
        assert code == 2, (argv, err.getvalue())
        assert len(lines) == 1 and lines[0].startswith(f"cosched {name}: error: "), lines
        assert any(flag in lines[0] for flag in flags), (argv, lines)
        assert _tree(root) == before, argv


@pytest.mark.parametrize(
    "name, output", OUTPUTS, ids=[f"{n}{a.option_strings[0]}" for n, a in OUTPUTS]
)
def test_every_output_path_is_checked_before_any_input(name, output, campaign):
    campaign(
        given(
            hazard=st.sampled_from(_hazards(name, output)),
            input_name=st.sampled_from(INPUT_NAMES),
            data=st.data(),
        )(lambda hazard, input_name, data: _case(name, output, hazard, input_name, data))
    )()


# --- two runs into one folder at once ---

WORKLOAD = "job_id,submit_time,run_time,cores\n" + "".join(
    f"{i},{i * 5},{30 + i % 7},{2 + 2 * (i % 3)}\n" for i in range(20)
)
TRIALS = 6
SCHEDULERS = ("fcfs", "easy", "conservative", "sjf")


def _together(*argvs: list[str], cwd: Path) -> list[subprocess.CompletedProcess]:
    """Run the command lines at once."""
    commands = [[sys.executable, "-m", "cosched", *argv] for argv in argvs]
    processes = [
        subprocess.Popen(
            command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for command in commands
    ]
    return [
        subprocess.CompletedProcess(command, p.wait(timeout=300), *p.communicate())
        for command, p in zip(commands, processes)
    ]


def _each_finished_or_refused(runs) -> None:
    assert any(run.returncode == 0 for run in runs), [run.stderr for run in runs]
    for run in runs:
        assert "Traceback" not in run.stderr, run.stderr
        if run.returncode != 0:
            assert run.returncode == 2, run.stderr
            lines = run.stderr.strip().splitlines()
            assert len(lines) == 1 and "in use by another cosched run" in lines[0], lines


@pytest.mark.fuzz
def test_two_compare_runs_into_one_folder_lose_no_row(tmp_path):
    """Two comparisons of the same workload, each adding its schedulers to one compare.csv."""
    workload = tmp_path / "w.csv"
    workload.write_text(WORKLOAD)
    for trial in range(TRIALS):
        out = tmp_path / f"out{trial}"
        argv = ["compare", "--workload", str(workload), "--platform", "kth-sp2", "--quiet"]
        argv += ["--baseline", "fcfs", "--out", str(out), "--scheduler"]
        halves = (SCHEDULERS[:2], SCHEDULERS[2:])
        runs = _together(*[argv + [",".join(("fcfs", *half))] for half in halves], cwd=tmp_path)
        _each_finished_or_refused(runs)
        rows = pd.read_csv(out / "compare.csv")
        finished = {"fcfs"}.union(*(half for half, run in zip(halves, runs) if run.returncode == 0))
        assert finished <= set(rows["scheduler"]), (finished, list(rows["scheduler"]))
        assert not rows["scheduler"].duplicated().any()


@pytest.mark.fuzz
def test_two_experiment_sim_runs_into_one_folder_lose_no_row(tmp_path):
    for trial in range(TRIALS):
        out = tmp_path / f"out{trial}"
        argv = ["experiment-sim", "--experiments", "2", "--jobs", "30", "--workers", "1"]
        argv += ["--scheduler", "easy,sjf", "--quiet", "--out", str(out)]
        _each_finished_or_refused(_together(argv, argv, cwd=tmp_path))
        runs = pd.read_csv(out / "runs.csv")
        assert {"easy", "sjf"} <= set(runs["scheduler"])  # and the preset's baseline
        assert len(runs) == 2 * runs["scheduler"].nunique()  # each run once, none lost
        assert not runs.duplicated(["experiment", "scheduler"]).any()
        assert sorted(os.listdir(tmp_path)) == sorted(f"out{t}" for t in range(trial + 1))
