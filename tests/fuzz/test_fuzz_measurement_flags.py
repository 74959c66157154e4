"""Fuzz target: every numeric flag and environment value of the measurement commands (`measure`,
`measure-validate`, `execute`, `measure-heatmap`) fed values no run can use: nan, inf, 1e300, 0,
negatives, counts no machine holds.

Each value goes through `cosched.cli.main` in-process and must be refused with exit 2: argparse's
usage and one error line naming the flag, or one `error:` line naming it; never a traceback, never a
hang (plans are sized before they are built), and nothing left in `--out`.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cosched.cli import main

CAMPAIGN_EXAMPLES = {"quick": 30, "long": 2000}
EXTREMES = ["inf", "-inf", "nan", "1e300", "-1e300", "1e309", "0", "-0", "-1", "1e18", "9" * 40]
# flags where 0 is a valid value
ZERO_ALLOWED = {"--seed", "--retries", "--noise-sigma"}
# upto:K of more tasks than there are means all of them: any K from 1 is valid
ANY_COUNT_ALLOWED = {"upto:V"}

KERNEL = ["--kernels", "compute", "--kernel-work", "1"]
# (command line before the flag, flag, template of the flag's value: V is the fuzzed value)
FLAGS = [
    *[
        (["measure", "--kernels", "compute"], flag, "V")
        for flag in ("--threads", "--window", "--warmup", "--task-timeout", "--timeout", "--seed")
    ],
    (["measure", "--kernels", "compute"], "--task-work", "compute=V"),
    (["measure", "--kernels", "compute,memory"], "--combinations", "sample:V"),
    (["measure", "--kernels", "compute,memory"], "--combinations", "chains:V"),
    (["measure", "--kernels", "compute,memory"], "--combinations", "chains:2:V"),
    (["measure", "--kernels", "compute,memory"], "--combinations", "upto:V"),
    *[
        (["measure-validate", "--kernels", "compute"], flag, "V")
        for flag in ("--runs", "--max-corunners", "--max-threads", "--seconds", "--repeats")
    ],
    (["measure-validate", "--kernels", "compute"], "--seed", "V"),
    *[
        (["execute", *KERNEL, "--strategy", "ucb"], flag, "V")
        for flag in (
            "--threads",
            "--k",
            "--quantum",
            "--noise-sigma",
            "--reference-window",
            "--window",
            "--reference-warmup",
            "--warmup",
            "--task-timeout",
            "--timeout",
            "--seed",
        )
    ],
    (["execute", "--kernels", "compute"], "--kernel-work", "V"),
    (["execute", "--kernels", "compute"], "--work", "V"),
    (["execute", *KERNEL], "--allowed-combinations", "upto:V"),
    *[(["measure-heatmap", "--dry-run"], flag, "V") for flag in ("--repeats", "--retries")],
    (["measure-heatmap", "--dry-run"], "--seed", "V"),
    (["measure-heatmap", "--dry-run"], "--nodes", "local:V"),
]
ENVIRONMENT = [  # (variable, template): the Slurm allocation `--nodes slurm` reads
    ("SLURM_JOB_CPUS_PER_NODE", "V"),
    ("SLURM_JOB_CPUS_PER_NODE", "V(x4)"),
    ("SLURM_JOB_CPUS_PER_NODE", "4(xV)"),
    ("SLURM_JOB_NODELIST", "n[1-V]"),
]
VALUES = st.one_of(
    st.sampled_from(EXTREMES),
    st.integers(max_value=-1).map(str),
    st.integers(min_value=2**64).map(str),
    st.floats(max_value=-1e-300).map(repr),
    st.floats(min_value=1e11).map(repr),
)


def _run(argv: list[str], environ: dict | None = None) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with (
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
        mock.patch.dict(os.environ, environ or {}),
    ):
        try:
            code = main(argv)
        except SystemExit as exit_:  # argparse refuses a value its type rejects
            code = exit_.code
    return code, err.getvalue()


def _apps(folder: Path) -> Path:
    path = folder / "apps.json"
    if not path.exists():
        path.write_text(json.dumps({"applications": [{"name": "a", "np": 1, "command": "true"}]}))
    return path


def _argv(prefix: list[str], flag: str, value: str, folder: Path) -> list[str]:
    argv = [*prefix, flag, value, "--out", str(folder / "out")]
    if prefix[0] == "measure-heatmap":
        argv += ["--apps", str(_apps(folder))]
        if flag != "--nodes":
            argv += ["--nodes", "local:1"]
    return argv


def _assert_refused(code: int, err: str, named: str, folder: Path, what: str) -> None:
    lines = err.splitlines()
    assert code == 2, (what, code, err)
    assert "Traceback" not in err, (what, err)
    assert lines, what
    last = lines[-1]
    assert last.startswith("cosched ") and "error:" in last, (what, err)
    assert named.lstrip("-") in last, (what, err)
    if lines[0].startswith("usage:"):  # argparse: usage, then its one error line
        assert "error: argument" in last, (what, err)
    else:
        assert len(lines) == 1, (what, err)
    assert not (folder / "out").exists(), what


def _flag_case(folder: Path, case: tuple, value: str) -> None:
    prefix, flag, template = case
    if flag in ZERO_ALLOWED and value in ("0", "-0"):
        return
    if template in ANY_COUNT_ALLOWED and value.isdigit() and int(value) >= 1:
        return
    argv = _argv(prefix, flag, template.replace("V", value), folder)
    code, err = _run(argv)
    _assert_refused(code, err, flag, folder, argv)


def _environment_case(folder: Path, case: tuple, value: str) -> None:
    variable, template = case
    environ = {"SLURM_JOB_NODELIST": "n[1-4]", "SLURM_JOB_CPUS_PER_NODE": "4(x4)"}
    environ[variable] = template.replace("V", value)
    argv = ["measure-heatmap", "--dry-run", "--apps", str(_apps(folder)), "--nodes", "slurm"]
    code, err = _run(argv, environ)
    _assert_refused(code, err, "--nodes", folder, (variable, environ[variable]))
    assert variable in err


@pytest.mark.parametrize("case", FLAGS, ids=lambda case: f"{case[0][0]} {case[1]} {case[2]}")
@pytest.mark.parametrize("value", ["1e300", "nan"])
def test_the_issue_values_are_refused_by_every_numeric_flag(tmp_path, case, value):
    _flag_case(tmp_path, case, value)


@pytest.mark.parametrize("case", ENVIRONMENT, ids=lambda case: f"{case[0]}={case[1]}")
def test_a_zero_or_huge_slurm_value_is_refused_naming_the_variable(tmp_path, case):
    for value in ("0", "9" * 40):
        _environment_case(tmp_path, case, value)


def test_extreme_values_of_every_measurement_flag_exit_2_without_a_traceback(
    tmp_path_factory, campaign
):
    folder = tmp_path_factory.mktemp("flags")

    @given(case=st.sampled_from(FLAGS), value=VALUES)
    def target(case, value):
        _flag_case(folder, case, value)

    campaign(target)()


def test_extreme_slurm_values_exit_2_without_a_traceback(tmp_path_factory, campaign):
    folder = tmp_path_factory.mktemp("slurm")

    @given(case=st.sampled_from(ENVIRONMENT), value=VALUES)
    def target(case, value):
        _environment_case(folder, case, value)

    campaign(target)()
