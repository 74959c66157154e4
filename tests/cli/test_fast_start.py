"""A fast start without a different answer: the SWF reader's numpy path reads what the
field-by-field reader reads, a command builds only its own area's parser, and the lower bound is
computed on request (the pandas-free jobs.csv: tests/simulator/test_jobs_csv.py). (The speed itself
is measured by benchmarks/bench_simulator.py.)
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cosched.cli import COMMAND_MODULES, COMMAND_OWNERS, build_parser
from cosched.collector import GC_THRESHOLD
from cosched.simulator import workload as swf


def _field_by_field(text: str) -> np.ndarray:
    """The reference reading: each record split on blanks, each token through Python's float."""
    _, rows = swf._swf_rows(text)
    return np.array(
        [[float(token) for token in swf._SWF_SEPARATOR.split(row.strip(" \t"))] for row in rows]
    )


NUMBER = st.one_of(
    st.integers(-1, 10**9).map(str),
    st.floats(0, 1e6, allow_nan=False).map(repr),
    st.sampled_from(["-1", "0", "5.", ".5", "+3", "1e3", "7.25"]),
)
ROW = st.lists(NUMBER, min_size=18, max_size=18)
BLANK = st.sampled_from([" ", "  ", "\t", " \t "])


@settings(max_examples=60, deadline=None)
@given(
    rows=st.lists(ROW, min_size=1, max_size=12),
    gap=BLANK,
    lead=st.sampled_from(["", " ", "\t"]),
    comment=st.sampled_from(["", "; Computer: x\n", ";\n; MaxNodes: 4\n"]),
)
def test_numpy_reader_reads_what_the_field_by_field_reader_reads(rows, gap, lead, comment):
    text = comment + "".join(lead + gap.join(row) + "\n" for row in rows)
    data, numbers = swf._swf_values(text, "t.swf")
    assert np.array_equal(data, _field_by_field(text), equal_nan=True)


# blanks numpy's reader splits on and the SWF rules do not
ODD_BLANK = st.sampled_from(["\x0b", "\x0c", "\x1c", "\x1f", "\xa0", "\u2003", "\x85", "é"])


@settings(max_examples=120, deadline=None)
@given(
    rows=st.lists(ROW, min_size=0, max_size=6),
    gap=BLANK,
    odd=ODD_BLANK,
    where=st.sampled_from(["gap", "line", "blank line", "comment", "nowhere"]),
    position=st.integers(0, 6),
)
def test_numpy_rows_without_counting_are_the_counted_records(rows, gap, odd, where, position):
    """Where numpy's reader and the rules agree on blanks, its rows are taken as the records: the
    same array (or the same refusal) as the rules read field by field."""
    from cosched.errors import InputError

    lines = [
        (odd if where == "gap" and i == position else gap).join(row) for i, row in enumerate(rows)
    ]
    extra = {"line": odd, "blank line": f" {odd}\t", "comment": f"; c{odd}"}.get(where)
    if extra is not None:
        lines.insert(min(position, len(lines)), extra)
    text = "".join(line + "\n" for line in lines)

    def outcome():
        try:
            return swf._swf_values(text, "t.swf")[0]
        except InputError as error:
            return str(error)

    found = outcome()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(swf, "_blanks_agree", lambda text: False)  # always field by field
        by_rules = outcome()
    if isinstance(by_rules, str):
        assert found == by_rules
    else:
        assert np.array_equal(found, by_rules, equal_nan=True)


@pytest.mark.parametrize("odd", ["\x0b", "\x0c", "\x1c", "\xa0"])
def test_a_blank_the_rules_do_not_split_on_is_refused_between_fields(odd):
    """numpy's reader splits on it; the SWF rules (space and tab) see a 19th field: the line is
    refused, not read as 18 numbers."""
    from cosched.errors import InputError

    fields = ["1"] * 18
    record = " ".join(fields[:9]) + f" {odd} " + " ".join(fields[9:])
    with pytest.raises(InputError, match=r"line 2"):
        swf._swf_values(f"{' '.join(fields)}\n{record}\n", "t.swf")


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet="ab;: \n\r\t", max_size=40))
def test_header_lines_are_the_lines_of_the_file(text):
    assert list(swf._lines(text)) == text.split("\n")


def test_a_bad_field_still_names_its_line_and_field():
    from cosched.errors import InputError

    good = " ".join(["1"] * 18)
    with pytest.raises(InputError, match=r"line 3, field 'run_time': not a number: 'x'"):
        swf._swf_values(f"; c\n{good}\n1 1 1 x {' '.join(['1'] * 14)}\n", "t.swf")


def test_help_summaries_are_the_commands_own():
    from cosched.cli import SUMMARIES, summary_parser

    def summaries(parser):
        action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        return {choice.dest: choice.help for choice in action._choices_actions}

    assert summaries(summary_parser()) == summaries(build_parser()) == SUMMARIES
    assert summary_parser().format_help() == build_parser().format_help()


def test_command_owners_name_every_command_of_every_module():
    found = {}
    for module in COMMAND_MODULES:
        parser = argparse.ArgumentParser()
        subparsers = parser.add_subparsers()
        importlib.import_module(module).register(subparsers)
        found[module] = tuple(subparsers.choices)
    assert found == COMMAND_OWNERS


def test_a_command_builds_only_its_own_area(tmp_path):
    probe = (
        "import sys, json; from cosched.cli import build_parser; build_parser('simulate'); "
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('cosched.'))))"
    )
    loaded = json.loads(
        subprocess.run(
            [sys.executable, "-c", probe], capture_output=True, text=True, check=True
        ).stdout
    )
    assert "cosched.simulator.cli" in loaded
    assert not [m for m in loaded if m.startswith(("cosched.measurement", "cosched.strategies"))]
    assert "pandas" not in loaded
    parser = build_parser("simulate")
    assert (
        parser.parse_args(["simulate", "--workload", "w", "--platform", "p"]).command == "simulate"
    )
    assert (
        "generate" in build_parser("no-such-command").format_help()
    )  # unknown: all, for "did you mean"


def test_a_command_builds_its_own_parser_not_its_modules_other_commands():
    def commands(name=None):
        return set(build_parser(name)._subcommands.choices)  # type: ignore[attr-defined]

    assert commands("simulate") == {"simulate"} and commands("compare") == {"compare"}
    assert {"simulate", "compare", "heatmap"} <= commands()
    assert commands("no-such-command") == commands()


# modules a plain `cosched simulate` run never needs: pandas (jobs.csv is written without it), the
# plug-in entry points' metadata scan (only for a name no built-in has), the "did you mean" matcher
# (only on an error), importlib.abc (a meta path finder needs only find_spec), csv (CSV workloads
# and action logs only), the multifactor priority (--priority), the partitioned passes
# (--partitions, or Conservative over several node types) and the trace window (--from, --to)
SIMULATE_UNNEEDED = (
    "pandas",
    "importlib.metadata",
    "difflib",
    "importlib.abc",
    "csv",
    "cosched.simulator.schedulers.multifactor",
    "cosched.simulator.schedulers.partitioned",
    "cosched.simulator.trace_window",
)


def test_simulate_writes_jobs_csv_without_pandas_and_the_bound_on_request(tmp_path):
    from cosched.simulator.compare import load_inputs

    load_inputs("kth-sp2", "kth-sp2")  # the parsed-trace cache warm, as for a user's second run
    probe = (
        "import os, sys, json; from cosched.cli import main; code = main(sys.argv[1:]); "
        "print(json.dumps([code, os.environ['OPENBLAS_NUM_THREADS'], sorted(m for m in "
        f"{SIMULATE_UNNEEDED!r} if m in sys.modules)]))"
    )
    # no linear algebra: numpy's OpenBLAS gets one thread, not a pool that spins while importing
    environment = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    out = tmp_path / "run"
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            probe,
            "simulate",
            "--workload",
            "kth-sp2",
            "--platform",
            "kth-sp2",
            "--limit",
            "200",
            "--out",
            str(out),
            "--quiet",
        ],
        capture_output=True,
        text=True,
        check=True,
        env=environment,
    )
    assert json.loads(done.stdout.splitlines()[-1]) == [0, "1", []]
    summary = json.loads((out / "summary.json").read_text())
    assert "bound" not in summary and (out / "jobs.csv").read_text().startswith(
        "job_id,submit_time,"
    )


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.floats(allow_infinity=True),
            st.integers(-(10**6), 10**6).map(float),
            st.sampled_from([0.0, -0.0, 0.5, 1e300, -1e300]),
        ),
        max_size=25,
    )
)
def test_median_is_numpys_median_without_numpy_ma(values):
    import warnings

    from cosched.simulator.metrics import median

    array = np.array(values, dtype=np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # numpy's mean of an empty array
        expected = float(np.median(array))
        got = median(array)
    assert repr(got) == repr(expected)


BATCH_PROBE = """
import atexit, gc, sys

class Noted:
    def __del__(self):
        print("teardown", flush=True)

kept = Noted()  # freed by the interpreter's teardown, which a batch command skips
atexit.register(gc.unfreeze)  # else the teardown keeps objects frozen by the command
atexit.register(lambda: print(f"exit handler, young threshold {gc.get_threshold()[0]}"))
from cosched.cli import main

sys.exit(main())
"""


@pytest.mark.parametrize("command", ["simulate", "compare"])
def test_a_batch_command_ends_after_exit_handlers_and_output_without_teardown(tmp_path, command):
    """simulate and compare, run as a program: stdout complete, the exit handlers run, the exit
    code kept, the rare young collections set, and no teardown (objects are not freed one by
    one); an error exits the same way with its one line."""

    flags = ["--workload", "kth-sp2", "--platform", "kth-sp2", "--limit", "30", "--json"]
    done = subprocess.run(
        [sys.executable, "-c", BATCH_PROBE, command, *flags],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    document, handler = done.stdout.rsplit("\n", 2)[:2]
    assert done.returncode == 0, done.stderr
    assert json.loads(document)  # the whole document, flushed
    assert handler == f"exit handler, young threshold {GC_THRESHOLD}"
    assert "teardown" not in done.stdout
    failed = subprocess.run(
        [sys.executable, "-c", BATCH_PROBE, command, *flags, "--depth", "-1"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert failed.returncode == 2 and failed.stderr.startswith(f"cosched {command}: error:")
    assert failed.stdout.startswith("exit handler") and "teardown" not in failed.stdout


COLLECTIONS_PROBE = """
import atexit, gc, sys

passes = []
atexit.register(lambda: print(f"young passes {len(passes)}"))
from cosched.cli import main

gc.callbacks.append(lambda phase, info: phase == "start" and passes.append(info["generation"]))
sys.exit(main())
"""


def test_a_batch_command_runs_no_collection_from_its_parse_on():
    """The rare young collections start before the parse imports numpy and the simulator (at
    CPython's rate, that parse alone ran about 30 passes): a short simulate runs none at all."""
    done = subprocess.run(
        [sys.executable, "-c", COLLECTIONS_PROBE, "simulate", "--workload", "kth-sp2"]
        + ["--platform", "kth-sp2", "--limit", "30", "--quiet"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "young passes 0\n"


def test_a_batch_command_waits_for_a_running_thread_with_the_usual_exit(tmp_path):
    # a thread still running when the command has written its last file
    waiting = (
        "import os, threading, time\n"
        "def wait():\n"
        "    while not os.path.exists('run/summary.json'):\n"
        "        time.sleep(0.01)\n"
        "    time.sleep(0.5)\n"
        "    print('thread done')\n"
        "threading.Thread(target=wait).start()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", waiting + BATCH_PROBE, "simulate", "--workload", "kth-sp2"]
        + ["--platform", "kth-sp2", "--limit", "30", "--quiet", "--out", "run"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    # the thread ends before the exit handlers run, then the teardown: the usual exit
    expected = f"thread done\nexit handler, young threshold {GC_THRESHOLD}\nteardown\n"
    assert done.stdout == expected


def test_other_commands_end_with_the_usual_teardown(tmp_path):
    done = subprocess.run(
        [sys.executable, "-c", BATCH_PROBE, "generate", "--n", "3", "--out", "i.json"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.endswith("exit handler, young threshold 700\nteardown\n")


HEAVY_LIBRARIES = ("pandas", "scipy", "matplotlib", "networkx", "tqdm", "pyarrow")


def test_plain_simulate_imports_no_heavy_library_and_no_other_area(tmp_path):
    """The import budget of `cosched simulate --quiet --out` on a trace: numpy and the simulator's
    own modules, no plotting, table, graph or progress library and no other area."""
    probe = (
        "import sys, json; from cosched.cli import main; code = main(sys.argv[1:]); "
        "print(json.dumps([code, sorted(m for m in sys.modules)]))"
    )
    command = ["simulate", "--workload", "kth-sp2", "--platform", "kth-sp2", "--limit", "300"]
    done = subprocess.run(
        [sys.executable, "-c", probe, *command, "--quiet", "--out", str(tmp_path / "run")],
        capture_output=True,
        text=True,
        check=True,
    )
    code, loaded = json.loads(done.stdout.splitlines()[-1])
    assert code == 0 and (tmp_path / "run" / "jobs.csv").is_file()
    assert "numpy" in loaded and "cosched.simulator.engine" in loaded
    assert not [m for m in loaded if m.partition(".")[0] in HEAVY_LIBRARIES]
    areas = ("cosched.theory", "cosched.strategies", "cosched.measurement")
    assert not [m for m in loaded if m.startswith(areas)]


def test_the_command_module_imports_its_helpers_on_use():
    """`import cosched.cli` leaves the option vocabulary, the output helpers and the process helpers
    (with argparse, dataclasses, ctypes) to `main`, which a batch command enters with rare garbage
    collections (`cosched.collector`): their imports run no collector pass at CPython's rate."""
    probe = (
        "import sys, json; import cosched.cli; print(json.dumps(sorted(m for m in ("
        "'cosched.cli_options', 'cosched.outputs', 'cosched.processes', 'argparse', "
        "'dataclasses', 'ctypes') if m in sys.modules)))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout) == []
