"""Fuzzing the ElastiSim project readers of `cosched elastic` (configuration, jobs, application
model,
platform).

A small valid project (two jobs of different types, a model with compute, I/O, delay and sequence
tasks, a JSON platform with GPUs and burst buffers) is mutated: one value anywhere in one of its
four files replaced by a huge, negative, fractional, non-finite, non-numeric, ExprTk-unfriendly or
wrongly typed value, a key deleted, an unknown key added, or the file's text cut or given a stray
byte. Each mutant runs through `cosched.cli.main` in-process and must give exit 0, or exit 2 with
one `cosched elastic: error: ...` line (and nothing else on stderr) naming one of the project's
files (or the algorithm) and nothing in `--out`; never a traceback. Campaigns as in `conftest.py`.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import tempfile
import warnings
from pathlib import Path

from hypothesis import given, note
from hypothesis import strategies as st

from cosched.cli import main

CAMPAIGN_EXAMPLES = {"quick": 40, "long": int(os.environ.get("FUZZ_EXAMPLES", "1000"))}
FILES = ("configuration.json", "jobs.json", "model.json", "platform.json")
VALUES = [
    -1,
    0,
    0.5,
    2.5,
    3,
    1e10,
    1e30,
    2**63,
    -1e300,
    "1e309",
    "nan",
    "inf",
    "abc",
    "x +",
    "sin",
    "a b",
    "num_nodes",
    "-num_nodes",
    "(" * 500 + "1" + ")" * 500,
    "0GBps",
    "1Gf",
    "",
    None,
    True,
    [],
    {},
    [1, 2],
    {"type": "idle", "delay": 1},
    "0-99999999999",
]
KEYS = ["wall_time", "flop", "typo", "num_gpus", "iterations", "tasks", "bw", "speed"]


def _project() -> dict:
    model = {
        "on_init": {
            "tasks": [{"type": "pfs_read", "bytes": "1e8 * num_nodes", "pattern": "all_ranks"}]
        },
        "phases": [
            {
                "iterations": "iterations",
                "evolving_request": "num_nodes + 1",
                "tasks": [
                    {
                        "type": "cpu",
                        "flops": "flops / num_nodes",
                        "computation_pattern": "uniform",
                        "bytes": 1e6,
                        "communication_pattern": "all_to_all",
                    },
                    {
                        "type": "sequence",
                        "iterations": 2,
                        "tasks": [
                            {"type": "idle", "delay": 0.5, "pattern": "uniform"},
                            {"type": "bb_write", "bytes": 1e6, "pattern": "uniform"},
                        ],
                    },
                    {"type": "pfs_write", "bytes": "1e7", "pattern": "root_only", "async": True},
                ],
            }
        ],
    }
    jobs = {
        "jobs": [
            {
                "type": "rigid",
                "submit_time": 0,
                "num_nodes": 2,
                "walltime": 1000,
                "application_model": "model.json",
                "arguments": {"iterations": 3, "flops": 4e9},
            },
            {
                "type": "evolving",
                "submit_time": 5,
                "num_nodes_min": 1,
                "num_nodes_max": 3,
                "num_gpus_per_node_min": 0,
                "num_gpus_per_node_max": 1,
                "application_model": "model.json",
                "arguments": {"iterations": 2, "flops": 2e9},
            },
        ]
    }
    platform = {
        "clusters": [
            {
                "prefix": "n",
                "radical": "0-3",
                "speed": "1Gf",
                "bw": "10GBps",
                "lat": "10us",
                "properties": {
                    "node_local_bb": True,
                    "bb_read_bw": "1GBps",
                    "bb_write_bw": "1GBps",
                    "num_gpus": 2,
                    "flops_per_gpu": "1Tf",
                    "gpu_to_gpu_bw": "10GBps",
                },
            }
        ],
        "pfs": {"read_bw": "4GBps", "write_bw": "2GBps", "latency": "100us"},
    }
    configuration = {
        "jobs_file": "jobs.json",
        "platform_file": "platform.json",
        "schedule_on_job_submit": True,
        "schedule_on_job_finalize": True,
        "schedule_on_scheduling_point": True,
        "scheduling_interval": 0,
        "job_statistics": "out/job_statistics.csv",
    }
    return {
        "configuration.json": configuration,
        "jobs.json": jobs,
        "model.json": model,
        "platform.json": platform,
    }


def _slots(document, path=()):
    """Every (container, key) below `document`, depth first."""
    if isinstance(document, dict):
        for key, value in document.items():
            yield document, key
            yield from _slots(value, (*path, key))
    elif isinstance(document, list):
        for index, value in enumerate(document):
            yield document, index
            yield from _slots(value, (*path, index))


mutations = st.tuples(
    st.sampled_from(FILES),
    st.sampled_from(["replace", "delete", "add", "cut", "byte"]),
    st.integers(0, 10**6),
    st.sampled_from(VALUES),
    st.sampled_from(KEYS),
)


def _mutant(case) -> dict[str, str]:
    name, operation, position, value, key = case
    project = _project()
    texts = {file: json.dumps(document) for file, document in project.items()}
    if operation in ("cut", "byte"):
        text = texts[name]
        at = position % (len(text) + 1)
        texts[name] = (
            text[:at] if operation == "cut" else text[:at] + "\u00e9\x00"[position % 2] + text[at:]
        )
        return texts
    slots = list(_slots(project[name]))
    container, slot = slots[position % len(slots)]
    if operation == "replace":
        container[slot] = value
    elif operation == "delete":
        container.pop(slot) if isinstance(container, dict) else container.pop(slot)
    elif isinstance(container, dict):
        container[key] = value
    else:
        container.append(value)
    texts[name] = json.dumps(project[name])
    return texts


@contextlib.contextmanager
def _inside(folder):
    before = os.getcwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(before)


def _check(tmp_path_factory, case, *, noted=True) -> None:
    if noted:
        note(repr(case))
    folder = Path(tempfile.mkdtemp(dir=tmp_path_factory.getbasetemp()))
    try:
        for file, text in _mutant(case).items():
            (folder / file).write_text(text, encoding="utf-8", errors="surrogatepass")
        out, err = io.StringIO(), io.StringIO()
        with (
            _inside(folder),
            contextlib.redirect_stdout(out),
            contextlib.redirect_stderr(err),
            warnings.catch_warnings(),
        ):
            warnings.simplefilter(
                "error", RuntimeWarning
            )  # numeric trouble is a bug, not a warning
            code = main(
                [
                    "elastic",
                    "configuration.json",
                    "--scheduler",
                    "fcfs-malleable",
                    "--out",
                    "result",
                    "--quiet",
                    "--algorithm-time-limit",
                    "5",
                ]
            )
        lines = err.getvalue().strip().splitlines()
        errors = [line for line in lines if line.startswith("cosched elastic: error: ")]
        if code == 0:
            assert not errors and (folder / "result" / "job_statistics.csv").is_file()
            return
        assert code == 2, (code, lines)
        assert len(lines) == 1 and lines == errors, lines  # the error line alone, no warning
        assert any(name in errors[0] for name in (*FILES, "fcfs-malleable")), errors[0]
        assert not (folder / "result").exists()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_elastic_project_mutations(tmp_path_factory, campaign):
    campaign(given(case=mutations)(lambda case: _check(tmp_path_factory, case)))()


def test_valid_project_runs(tmp_path_factory):
    _check(
        tmp_path_factory, ("jobs.json", "replace", 0, "rigid", "typo"), noted=False
    )  # "jobs" replaced
    folder = tmp_path_factory.mktemp("valid")
    for file, document in _project().items():
        (folder / file).write_text(json.dumps(document))
    with _inside(folder):
        assert (
            main(
                [
                    "elastic",
                    "configuration.json",
                    "--algorithm",
                    "fcfs-malleable",
                    "--out",
                    "result",
                    "--quiet",
                ]
            )
            == 0
        )
