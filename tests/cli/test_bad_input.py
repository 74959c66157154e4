"""Bad input files and options across `cosched` commands.

One stderr line naming file and field/line, exit 2, no traceback, no output file left behind
(regressions found by the contract audit)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from cosched.cli import main

HEADER = "name_A,procs_A,compact_A,name_B,procs_B,compact_B,co_A_B,co_B_A\n"


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def assert_one_line_error(code, err, *needles):
    assert code == 2
    assert err.count("\n") == 1 and "Traceback" not in err
    for needle in needles:
        assert needle in err


@pytest.mark.parametrize("command", ["opt", "run", "ratio"])
def test_npz_that_is_not_a_zip_exits_2_naming_the_file(tmp_path, capsys, command):
    bare = tmp_path / "bare.npz"
    with open(bare, "wb") as handle:
        np.save(handle, np.ones(3))  # a .npy payload: np.load returns an array, not an archive
    garbage = tmp_path / "garbage.npz"
    garbage.write_text("garbage")
    for path in (bare, garbage):
        code, out, err = run(capsys, command, path)
        assert_one_line_error(code, err, str(path), "not a .npz archive")
        assert out == ""


def test_npz_missing_array_names_the_field_once(tmp_path, capsys):
    path = tmp_path / "nowork.npz"
    np.savez(path, combinations=np.array([1, 2, 3]), speeds=np.ones((2, 3)))
    code, _, err = run(capsys, "opt", path)
    assert_one_line_error(code, err, str(path), "field 'work'", "missing array")
    assert "not a readable" not in err and err.count(str(path)) == 1


def test_missing_npz_says_no_such_file(tmp_path, capsys):
    path = tmp_path / "absent.npz"
    code, _, err = run(capsys, "opt", path)
    assert_one_line_error(code, err, str(path), "no such file")


def test_infeasible_instance_error_has_the_same_layout_as_other_field_errors(tmp_path, capsys):
    path = tmp_path / "restricted.json"
    path.write_text(json.dumps({"work": [1, 2], "combinations": [[0, 1]], "speeds": [[0.5, 0.6]]}))
    code, _, err = run(capsys, "opt", path)
    assert_one_line_error(code, err, f"{path}, field 'combinations': ")


@pytest.mark.parametrize(
    "argv",
    [
        ["demo", "--n", "3", "--out", "{tmp}/plot.xyz"],
        ["heatmap", "{heatmap}", "--plots", "{tmp}/plot.xyz"],
    ],
)
def test_unsupported_plot_extension_exits_2_before_writing(tmp_path, capsys, argv):
    heatmap = tmp_path / "h.csv"
    heatmap.write_text(HEADER + "a,4,10,b,4,20,15,30\n")
    argv = [a.format(tmp=tmp_path, heatmap=heatmap) for a in argv]
    code, out, err = run(capsys, *argv)
    assert_one_line_error(code, err, "plot.xyz", "'.xyz'")
    assert out == "" and not list(tmp_path.glob("*plot*"))


@pytest.mark.parametrize(
    "row, field", [("a,4,10,b,4,20\n", "field 'co_A_B'"), ("a,4,10,b,4,20,15,30,99\n", "line 2")]
)
def test_heatmap_row_with_wrong_cell_count_exits_2_naming_the_line(tmp_path, capsys, row, field):
    path = tmp_path / "h.csv"
    path.write_text(HEADER + row)
    instance = tmp_path / "out.json"
    code, out, err = run(capsys, "heatmap", path, "--instance", instance)
    assert_one_line_error(code, err, str(path), "line 2", field, "cells, the header has 8")
    assert out == "" and not instance.exists()


@pytest.mark.parametrize(
    "application, field",
    [
        ({"name": "a", "procs": 4, "compact_time": -3}, "applications[0].compact_time"),
        ({"name": "a", "procs": "x", "compact_time": 3}, "applications[0].procs"),
        ({"name": "a", "procs": 4.5, "compact_time": 3}, "applications[0].procs"),
    ],
)
def test_application_seed_bad_value_names_the_application_field(
    tmp_path, capsys, application, field
):
    path = tmp_path / "seed.json"
    path.write_text(json.dumps({"applications": [application]}))
    out_csv = tmp_path / "w.csv"
    code, _, err = run(
        capsys, "generate-workload", "--app-seed", path, "--jobs", "3", "--out", out_csv
    )
    assert_one_line_error(code, err, str(path), f"field '{field}'")
    assert not out_csv.exists()


def test_application_seed_duplicate_names_keep_their_message(tmp_path, capsys):
    path = tmp_path / "seed.json"
    app = {"name": "a", "procs": 4, "compact_time": 3}
    path.write_text(json.dumps({"applications": [app, app]}))
    code, _, err = run(
        capsys, "generate-workload", "--app-seed", path, "--jobs", "3", "--out", tmp_path / "w.csv"
    )
    assert_one_line_error(code, err, str(path), "unique application names")


@pytest.mark.parametrize(
    "rows, field",
    [("1,a,1,0.6\n2,a,1,0.5\n", "field 'cputime'"), ("1,a,1,0.5\n1,a,1,0.6\n", "field 'time'")],
)
def test_samples_that_are_not_cumulative_exit_2_naming_line_and_column(
    tmp_path, capsys, rows, field
):
    path = tmp_path / "samples.csv"
    path.write_text("time,task,tid,cputime\n" + rows)
    out_csv = tmp_path / "speeds.csv"
    code, out, err = run(capsys, "measure-speeds", path, "--out", out_csv)
    assert_one_line_error(code, err, str(path), "line 3", field)
    assert out == "" and not out_csv.exists()


def test_samples_path_that_is_a_directory_exits_2(tmp_path, capsys):
    path = tmp_path / "samples.json"
    path.mkdir()
    code, _, err = run(capsys, "measure-speeds", path)
    assert_one_line_error(code, err, str(path), "cannot read")


@pytest.mark.parametrize("option, field", [("--experiments", "experiments"), ("--jobs", "jobs")])
def test_experiment_sim_nonpositive_size_names_its_own_option(tmp_path, capsys, option, field):
    out = tmp_path / "grid"
    code, _, err = run(
        capsys,
        "experiment-sim",
        "--preset",
        "example-small",
        option,
        "-1",
        "--out",
        out,
        "--no-plots",
        "--quiet",
    )
    assert_one_line_error(code, err, f"field '{field}'")
    assert not out.exists()


def test_experiment_sim_failing_before_any_run_leaves_no_output_folder(tmp_path, capsys):
    heatmap = tmp_path / "gaps.csv"
    heatmap.write_text(
        HEADER + "a,4,10,b,4,20,,\nb,4,20,c,4,5,6,7\n"
    )  # a|b, a|c... measured in neither direction
    out = tmp_path / "grid"
    code, _, err = run(
        capsys,
        "experiment-sim",
        "--preset",
        "example-small",
        "--heatmap",
        heatmap,
        "--experiments",
        "1",
        "--jobs",
        "10",
        "--out",
        out,
        "--no-plots",
        "--quiet",
        "--workers",
        "1",
    )
    assert_one_line_error(code, err, str(heatmap), "no default speedup")
    assert not out.exists()


@pytest.mark.parametrize(
    "document, field",
    [
        ({"work": [1, 2], "combinations": [[0, 1]], "speeds": [[0.5, 0.6]]}, "combinations"),
        (
            {"work": [1, 2], "combinations": [[0], [1], [0, 1]], "speeds": [[0], [1], [0, 0.5]]},
            "speeds",
        ),
    ],
)
def test_normalize_failure_names_the_file(tmp_path, capsys, document, field):
    path = tmp_path / "measured.json"
    path.write_text(json.dumps(document))
    code, _, err = run(capsys, "opt", path, "--normalize")
    assert_one_line_error(code, err, f"{path}, field '{field}': cannot normalise")


def test_closed_stdout_pipe_exits_quietly_without_traceback(tmp_path):
    import os
    import subprocess
    import sys

    instance = tmp_path / "i.json"
    assert main(["generate", "--n", "3", "--seed", "1", "--out", str(instance)]) == 0
    read_end, write_end = os.pipe()
    os.close(read_end)  # every write now fails with EPIPE, as after `| head` exits
    try:
        done = subprocess.run(
            [sys.executable, "-m", "cosched.cli", "opt", str(instance)],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    finally:
        os.close(write_end)
    assert done.returncode == 141 and done.stderr == ""


@pytest.mark.parametrize(
    "argv",
    [
        ["generate", "--n", "3", "--out", "{target}"],
        ["demo", "--n", "3", "--out", "{target}"],
        ["heatmap", "{heatmap}", "--plots", "{target}"],
        ["heatmap", "{heatmap}", "--instance", "{target}"],
        ["generate-workload", "--heatmap", "{heatmap}", "--jobs", "3", "--out", "{target}"],
    ],
)
@pytest.mark.parametrize("blocker", ["directory", "parent-file"])
def test_unwritable_output_path_exits_2_naming_it(tmp_path, capsys, argv, blocker):
    heatmap = tmp_path / "h.csv"
    heatmap.write_text(HEADER + "a,4,10,b,4,20,15,30\n")
    name = "out.png" if "--plots" in argv or argv[0] == "demo" else "out.json"
    if blocker == "directory":
        target = tmp_path / name
        target.mkdir()
    else:
        (tmp_path / "plain").write_text("")
        target = tmp_path / "plain" / name
    code, _, err = run(capsys, *[a.format(target=target, heatmap=heatmap) for a in argv])
    assert_one_line_error(code, err, str(target), "cannot write the output")


def test_output_folder_that_is_a_file_exits_2(tmp_path, capsys):
    target = tmp_path / "results"
    target.write_text("")
    code, _, err = run(capsys, "measure", "--task", "a=sleep 5", "--out", target, "--no-plots")
    assert_one_line_error(code, err.splitlines(keepends=True)[-1], str(target), "not a folder")


def test_heatmap_with_a_byte_order_mark_reads_like_without(tmp_path, capsys):
    plain, marked = tmp_path / "plain.csv", tmp_path / "marked.csv"
    plain.write_text(HEADER + "a,4,10,b,4,20,15,30\n")
    marked.write_bytes(b"\xef\xbb\xbf" + plain.read_bytes())  # as spreadsheets export CSV
    documents = []
    for path in (plain, marked):
        code, out, _ = run(capsys, "heatmap", path, "--json")
        assert code == 0
        documents.append({k: v for k, v in json.loads(out).items() if k != "file"})
    assert documents[0] == documents[1]


@pytest.mark.parametrize("options, field", [(["--k", "2"], "k"), (["--quantum", "-1"], "quantum")])
@pytest.mark.parametrize("command", ["run", "ratio"])
def test_strategy_option_out_of_range_names_that_option_once(
    tmp_path, capsys, command, options, field
):
    instance = tmp_path / "i.json"
    assert main(["generate", "--n", "3", "--seed", "1", "--out", str(instance)]) == 0
    capsys.readouterr()
    code, _, err = run(capsys, command, instance, "--strategy", "ucb", *options)
    assert_one_line_error(code, err, f"field '{field}'")
    assert err.count("field '") == 1
