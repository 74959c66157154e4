"""Fuzz targets for the last bad-input classes: instance keys and task names, speedup options,
measuring windows, elastic jobs beside co-schedulers, hybrid mechanism names.

Each mutant goes through `cosched.cli.main` in-process and must give exit 0 with a well-formed
result (JSON without NaN) or exit 2 with one error line (argparse's usage line plus its error line
for a value the flag's type refuses) and nothing left in the `--out` location; never a traceback.
Where the outcome is predictable the oracle says which. Both campaigns of `conftest.py` run each
target.
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cosched.cli import main
from cosched.cli_options import MAX_SPEEDUP

CAMPAIGN_EXAMPLES = {"quick": 10, "long": 400}
NUMBERS = [
    "1e300",
    "-1e300",
    "1e309",
    "inf",
    "-inf",
    "nan",
    "NaN",
    "0",
    "-0",
    "-1",
    "1e-300",
    "0.5",
    "1",
    "2.5",
    "999",
    "1000",
    "1001",
    "abc",
    "",
    "1e",
    "0x10",
    "9" * 40,
]
HEADER = "name_A,procs_A,compact_A,name_B,procs_B,compact_B,co_A_B,co_B_A\n"
WORKLOAD = "job_id,submit_time,run_time,cores,estimate,app\n" + "".join(
    f"{i},{i * 7 % 50},{5 + i % 13},{2 + 2 * (i % 3)},{20 + i % 13},{'abc'[i % 3]}\n"
    for i in range(12)
)
INSTANCE_KEYS = ("tasks", "work", "combinations", "speeds")


def _run(*argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main([str(a) for a in argv])
        except SystemExit as exit_:  # argparse refuses a value its type rejects
            code = exit_.code
    return code, out.getvalue(), err.getvalue()


def _refused(code: int, err: str, *, usage: bool = False) -> bool:
    lines = err.splitlines()
    # argparse: its usage message, then "cosched CMD: error: argument ...: ..." as the last line
    if usage:
        return (
            code == 2
            and lines[0].startswith("usage:")
            and lines[-1].startswith("cosched ")
            and "error: argument" in lines[-1]
            and "Traceback" not in err
        )
    return code == 2 and len(lines) == 1 and "error:" in lines[0] and "Traceback" not in err


def _finite_json(document) -> bool:
    if isinstance(document, float):
        return math.isfinite(document)
    if isinstance(document, dict):
        return all(_finite_json(v) for v in document.values())
    if isinstance(document, list):
        return all(_finite_json(v) for v in document)
    return True


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("options")
    (folder / "w.csv").write_text(WORKLOAD)
    apps = {"a": 10, "b": 20, "c": 5}
    pairs = [(x, y) for i, x in enumerate(apps) for y in list(apps)[i:]]
    (folder / "h.csv").write_text(
        HEADER
        + "".join(
            f"{x},2,{apps[x]},{y},2,{apps[y]},{apps[x] + 3},{apps[y] + 2}\n" for x, y in pairs
        )
    )
    return folder


# --- instance documents: unknown keys, names that differ only by whitespace -----------------------

WHITESPACE = st.sampled_from([" ", "\t", "  ", "\u00a0", "\u2003"])
KEY = st.one_of(
    st.sampled_from(
        [
            "speed",
            "Work",
            "task",
            "combination",
            "speeds ",
            "_note",
            "comment",
            "description",
            "extra",
        ]
    ),
    st.text(min_size=1, max_size=8),
)


@given(
    extra=st.dictionaries(KEY, st.integers(0, 3), max_size=2),
    pad=st.lists(WHITESPACE, min_size=0, max_size=2),
    twin=st.booleans(),
)
def _instance_case(tmp_path_factory, extra, pad, twin):
    names = ["lu", "cg", "ft"]
    if twin:  # a second name that differs from the first only by whitespace
        names[1] = "".join(pad) + "lu" if pad else "lu "
    document = {
        "tasks": names,
        "work": [1, 2, 3],
        "combinations": [[0], [1], [2], [0, 1]],
        "speeds": [[1], [1], [1], [0.6, 0.7]],
        **{k: v for k, v in extra.items() if k not in INSTANCE_KEYS},
    }
    path = tmp_path_factory.mktemp("instance") / "i.json"
    path.write_text(json.dumps(document))
    code, out, err = _run("opt", path, "--json")
    unknown = [
        k
        for k in document
        if k not in INSTANCE_KEYS and not k.startswith("_") and k not in ("comment", "description")
    ]
    if unknown or twin:
        assert _refused(code, err), (document, err)
        assert str(path) in err and (
            "tasks" in err or any(repr(k) in err or k in err for k in unknown)
        )
    else:
        assert code == 0 and _finite_json(json.loads(out)), err


def test_instance_keys_and_task_names(tmp_path_factory, campaign):
    campaign(_instance_case)(tmp_path_factory)


# --- speedup options: finite, positive, at most MAX_SPEEDUP ---------------------------------------


@given(
    flag=st.sampled_from(["--default-speedup", "--spread-speedup"]),
    value=st.sampled_from(NUMBERS),
    command=st.sampled_from(["simulate", "compare"]),
)
def _speedup_case(inputs, tmp_path_factory, flag, value, command):
    out = tmp_path_factory.mktemp("speedup") / "run"
    code, stdout, err = _run(
        command,
        "--workload",
        inputs / "w.csv",
        "--platform",
        "grvingt",
        "--heatmap",
        inputs / "h.csv",
        "--scheduler",
        "easy-co",
        f"{flag}={value}",
        "--out",
        out,
        "--quiet",
        "--json",
    )
    try:
        number = float(value)
    except ValueError:
        number = math.nan
    if math.isfinite(number) and 0 < number <= MAX_SPEEDUP:
        assert code == 0, err
        document = json.loads(stdout)
        assert _finite_json(document) and _finite_json(
            json.loads(
                (out / ("summary.json" if command == "simulate" else "compare.csv")).read_text()
            )
            if command == "simulate"
            else document
        )
    else:
        assert _refused(code, err, usage=True), err
        assert not out.exists()


def test_speedup_options(inputs, tmp_path_factory, campaign):
    campaign(_speedup_case)(inputs, tmp_path_factory)


# --- measuring windows and warm-ups: positive finite seconds (checked by the parser) --------------


@given(
    command=st.sampled_from(["measure", "execute"]),
    flag=st.sampled_from(
        ["--window", "--warmup", "--reference-window", "--reference-warmup", "--threads"]
    ),
    value=st.sampled_from(NUMBERS),
)
def _window_case(command, flag, value):

    if (
        command == "measure"
        and flag.startswith("--reference")
        or command == "execute"
        and flag in ("--window", "--warmup")
    ):
        flag = {
            "--reference-window": "--window",
            "--reference-warmup": "--warmup",
            "--window": "--reference-window",
            "--warmup": "--reference-warmup",
        }[flag]
    if command == "measure" and flag == "--quantum":
        flag = "--window"
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        try:
            args = _parser().parse_args([command, "--out", "d", f"{flag}={value}"])
        except SystemExit as exit_:
            assert _refused(exit_.code, err.getvalue(), usage=True)
            return
    parsed = getattr(args, flag.lstrip("-").replace("reference-", "").replace("-", "_"))
    assert isinstance(parsed, (int, float)) and math.isfinite(parsed) and parsed > 0


@functools.lru_cache(maxsize=1)
def _parser():
    from cosched.cli import build_parser

    return build_parser()


def test_window_options(campaign):
    campaign(_window_case)()


# --- elastic jobs beside co-schedulers ------------------------------------------------------------


@given(
    fraction=st.sampled_from(["0", "0.5", "1", "0.01"]),
    scheduler=st.sampled_from(["easy", "fcfs", "easy-co", "sjf-co", "filler", "popularity"]),
    baseline=st.sampled_from([None, "conservative", "easy-co"]),
)
def _elastic_case(inputs, tmp_path_factory, fraction, scheduler, baseline):
    from cosched.simulator.schedulers import make_scheduler

    out = tmp_path_factory.mktemp("elastic") / "run"
    argv = [
        "simulate",
        "--workload",
        inputs / "w.csv",
        "--platform",
        "grvingt",
        "--heatmap",
        inputs / "h.csv",
        "--scheduler",
        scheduler,
        "--elastic-fraction",
        fraction,
        "--out",
        out,
        "--quiet",
        "--json",
    ]
    if baseline:
        argv += ["--baseline", baseline]
    code, stdout, err = _run(*argv)
    shared = any(make_scheduler(name).co_located for name in (scheduler, baseline) if name)
    if float(fraction) > 0 and shared:
        assert _refused(code, err) and "--elastic-fraction" in err and not out.exists()
    else:
        assert code == 0, err
        assert _finite_json(json.loads(stdout))


def test_elastic_fraction_with_schedulers(inputs, tmp_path_factory, campaign):
    campaign(_elastic_case)(inputs, tmp_path_factory)


# --- hybrid mechanism names -----------------------------------------------------------------------


@given(
    name=st.one_of(
        st.sampled_from(["n-pa", "cua", "baselin", "N-PAAA", "", ",", "cup-spaa,x"]),
        st.text(st.characters(min_codepoint=33, max_codepoint=126), min_size=1, max_size=10),
    )
)
def _mechanism_case(tmp_path_factory, name):
    from cosched.simulator.hybrid.cli import MECHANISM_NAMES

    names = [part.strip() for part in name.split(",") if part.strip()]
    if names and all(part.lower() in MECHANISM_NAMES for part in names):
        return  # a valid list runs a grid: not this target's business
    out = tmp_path_factory.mktemp("hybrid") / "grid"
    code, _, err = _run(
        "experiment-hybrid",
        "--workload",
        "kth-sp2",
        "--platform",
        "kth-sp2",
        "--limit",
        "20",
        f"--mechanism={name}",
        "--typings",
        "1",
        "--workers",
        "1",
        "--out",
        out,
        "--quiet",
    )
    assert _refused(code, err) and "--mechanism" in err, err
    assert not out.exists()


def test_hybrid_mechanism_names(tmp_path_factory, campaign):
    campaign(_mechanism_case)(tmp_path_factory)
