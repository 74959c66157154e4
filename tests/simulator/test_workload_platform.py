"""SWF / CSV readers with cleaning counts, and platforms from presets or JSON."""

import gzip
import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cosched import inputs
from cosched.errors import InputError
from cosched.inputs import (
    MAX_PROCS,
    MAX_SECONDS,
    check_columns,
    check_number,
    check_unique,
    decode_text,
    parse_json,
    read_text,
)
from cosched.simulator.platform import PRESETS, Platform, load_platform
from cosched.simulator.workload import load_workload, make_workload, read_csv, read_swf

SWF = """; Version: 2.2
; UnixStartTime: 893466664
; MaxNodes: 4
; MaxProcs: 4
1 0 5 100 2 -1 -1 2 200 -1 1 1 1 1 1 -1 -1 -1
2 10 0 0 1 -1 -1 1 50 -1 5 1 1 1 1 -1 -1 -1
3 5 0 30 -1 -1 -1 8 -1 -1 1 1 1 1 1 -1 -1 -1
4 20 0 40 0 -1 -1 0 60 -1 1 1 1 1 1 -1 -1 -1
5 20 0 40 1 -1 -1 1 10 -1 1 1 1 1 1 -1 -1 -1
"""


def test_swf_reader_applies_the_cleaning_rules_and_counts_them(tmp_path):
    path = tmp_path / "t.swf.gz"
    with gzip.open(path, "wt") as handle:
        handle.write(SWF)
    w = read_swf(path, max_cores=4)
    assert w.job_id.tolist() == [1, 3, 5]  # sorted by submit: 0, 5, 20
    assert w.cores.tolist() == [2, 4, 1]  # job 3: requested 8 (allocated missing) capped to 4
    assert w.estimate.tolist() == [
        200,
        30,
        40,
    ]  # missing -> run time; 10 < 40 -> raised to run time
    c = w.cleaning
    assert (c["records"], c["jobs"], c["dropped_run_time_le_0"], c["dropped_processors_le_0"]) == (
        5,
        3,
        1,
        1,
    )
    assert (
        c["processors_capped"],
        c["estimate_missing_set_to_run_time"],
        c["estimate_below_run_time_raised"],
    ) == (1, 1, 1)
    assert w.header["UnixStartTime"] == "893466664" and w.header["MaxProcs"] == "4"


def test_swf_reader_names_the_bad_line(tmp_path):
    path = tmp_path / "bad.swf"
    path.write_text(SWF.replace("3 5 0 30 -1", "3 5 0 x -1"))
    with pytest.raises(InputError, match=r"line 7.*run_time"):
        read_swf(path)
    path.write_text(SWF + "6 1 2\n")
    with pytest.raises(InputError, match="line 10"):
        read_swf(path)


def test_csv_reader_keeps_estimates_and_app_names(tmp_path):
    path = tmp_path / "w.csv"
    path.write_text("job_id,submit_time,run_time,cores,estimate,app\n1,0,10,4,20,cg\n2,3,5,2,,ft\n")
    w = load_workload(path)
    assert w.estimate.tolist() == [20, 5] and w.app.tolist() == ["cg", "ft"]


@pytest.mark.parametrize(
    "text, message",
    [
        ("job_id,submit_time,run_time\n1,0,1\n", "cores"),
        ("job_id,submit_time,run_time,cores\n1,0,abc,1\n", r"line 2.*run_time"),
        ("job_id,submit_time,run_time,cores\n1,0,1,1.5\n", "cores"),
    ],
)
def test_csv_reader_rejects_bad_input_with_its_location(tmp_path, text, message):
    path = tmp_path / "w.csv"
    path.write_text(text)
    with pytest.raises(InputError, match=message):
        read_csv(path)


def test_unknown_workload_extension_is_an_input_error(tmp_path):
    with pytest.raises(InputError):
        load_workload(tmp_path / "w.txt")


@given(
    st.lists(
        st.tuples(
            st.integers(-5, 50), st.integers(-3, 40), st.integers(-2, 9), st.integers(-1, 60)
        ),
        min_size=1,
        max_size=40,
    )
)
def test_cleaned_workloads_are_sorted_positive_and_fit_the_platform(rows):
    submit, run, cores, estimate = map(list, zip(*rows))
    w = make_workload(range(len(rows)), submit, run, cores, estimate, max_cores=6)
    assert np.all(np.diff(w.submit) >= 0)
    assert (
        np.all(w.run > 0) and np.all((w.cores > 0) & (w.cores <= 6)) and np.all(w.estimate >= w.run)
    )
    dropped = sum(v for k, v in w.cleaning.items() if k.startswith("dropped"))
    assert w.cleaning["jobs"] + dropped == w.cleaning["records"] == len(rows)


def test_platform_presets_and_json(tmp_path):
    assert load_platform("aris") == Platform(420, 2, 10, "aris")
    assert PRESETS["sdsc-sp2"].total_cores == 128 and PRESETS["marconi"].cores_per_node == 48
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"nodes": 4, "sockets_per_node": 2, "cores_per_socket": 8}))
    assert load_platform(path).total_cores == 64
    path.write_text(json.dumps({"nodes": 0}))
    with pytest.raises(InputError, match="nodes"):
        load_platform(path)
    with pytest.raises(InputError):
        load_platform("no-such-machine")


# --- cosched.inputs: the one text policy and the one numeric validator used by every reader -------

REPO = __import__("pathlib").Path(__file__).resolve().parents[2]
SHARED_SWF = REPO.parent / "shared" / "data" / "swf"


def test_read_text_plain_gzip_and_utf8_bom(tmp_path):
    (tmp_path / "a.txt").write_bytes(b"\xef\xbb\xbfh\xc3\xa9\n")
    assert read_text(tmp_path / "a.txt") == "h\u00e9\n"
    (tmp_path / "b.swf.gz").write_bytes(gzip.compress(b"; caf\xe9\n1 2\n"))
    assert read_text(tmp_path / "b.swf.gz", comment=";") == "; caf\ufffd\n1 2\n"
    (tmp_path / "c.txt").write_bytes(
        gzip.compress(b"x")
    )  # gzip is recognised by content, not by name
    assert read_text(tmp_path / "c.txt") == "x"


@pytest.mark.parametrize(
    "raw, comment, message",
    [
        (b"\xff\xfeh\x00i\x00", None, "UTF-16"),
        (b"\xff\xfe\x00\x00h\x00\x00\x00", None, "UTF-32"),
        (b"h\x00i\x00\n\x00", None, r"line 1: binary data: a NUL byte at column 2"),
        (b"ok\nab\xe9\n", None, r"line 2: byte 0xe9 at column 3 is not UTF-8"),
        (b"; caf\xe9\n1 2\xe9 ; x\n", ";", r"line 2: byte 0xe9 at column 4"),
        (b"; \x00 is fine in a comment\n1\x002\n", ";", r"line 2: binary data"),
    ],
)
def test_decode_text_refuses_what_is_not_utf8_outside_comments(raw, comment, message):
    with pytest.raises(InputError, match=message) as error:
        decode_text(raw, "f.txt", comment=comment)
    assert str(error.value).startswith("f.txt") and "\n" not in str(error.value)


def test_read_text_refuses_bad_gzip_missing_files_folders_and_oversized_input(
    tmp_path, monkeypatch
):
    (tmp_path / "a.csv.gz").write_text("plain")
    with pytest.raises(InputError, match="not gzip"):
        read_text(tmp_path / "a.csv.gz")
    data = gzip.compress(b"x" * 1000)
    (tmp_path / "b.gz").write_bytes(data[: len(data) // 2])
    with pytest.raises(InputError, match="truncated gzip"):
        read_text(tmp_path / "b.gz")
    (tmp_path / "c.gz").write_bytes(data[:-8] + b"\x00" * 8)  # wrong CRC
    with pytest.raises(InputError, match="corrupt gzip"):
        read_text(tmp_path / "c.gz")
    with pytest.raises(InputError, match="no such file"):
        read_text(tmp_path / "missing.csv")
    with pytest.raises(InputError, match="folder"):
        read_text(tmp_path)
    monkeypatch.setattr(inputs, "MAX_INPUT_BYTES", inputs.Limit("MAX_INPUT_BYTES", 100, "bytes"))
    (tmp_path / "big.txt").write_text("y" * 101)
    with pytest.raises(InputError, match="MAX_INPUT_BYTES=100"):
        read_text(tmp_path / "big.txt")
    (tmp_path / "bomb.gz").write_bytes(gzip.compress(b"z" * 10_000))
    with pytest.raises(InputError, match="MAX_INPUT_BYTES=100.*decompressed"):
        read_text(tmp_path / "bomb.gz")


@pytest.mark.parametrize(
    "value, rules, message",
    [
        (float("nan"), {}, "finite"),
        ("inf", {}, "finite"),
        ("abc", {}, "not a number"),
        (True, {}, "number"),
        ("4", {"text": False}, "must be a number"),
        (7.5, {"integer": True}, "whole number, got 7.5"),
        (0, {"minimum": 1}, "at least 1"),
        (0, {"minimum": 0, "exclusive_minimum": True}, "above 0"),
        (1e30, {"limit": MAX_PROCS}, "above the limit MAX_PROCS=10,000,000"),
        (10**30, {"limit": MAX_PROCS}, "31-digit integer, above the limit MAX_PROCS"),
        (1e11, {"limit": MAX_SECONDS}, "MAX_SECONDS=10,000,000,000 "),
    ],
)
def test_check_number_names_source_line_field_and_limit(value, rules, message):
    with pytest.raises(InputError, match=message) as error:
        check_number(value, source="f.csv", line=3, field="cores", **rules)
    assert str(error.value).startswith("f.csv, line 3, field 'cores': ")


def test_check_number_returns_ints_for_counts():
    assert check_number("4", integer=True) == 4 and isinstance(check_number(4.0, integer=True), int)
    assert check_number(" 2.5 ") == 2.5


def test_check_columns_reports_the_first_bad_row_in_file_order():
    ids = np.array([1.0, 2.0, 3.0, 4.0])
    cores = np.array([1.0, 1.0, 1.5, 1.0])
    submit = np.array([0.0, 0.0, 0.0, np.inf])
    with pytest.raises(InputError, match=r"line 30, field 'cores': must be a whole number"):
        check_columns(
            [("submit", submit, {}), ("cores", cores, {"integer": True}), ("id", ids, {})],
            source="w",
            lines=[10, 20, 30, 40],
        )
    with pytest.raises(InputError, match=r"line 2, field 'x': not a number: 'abc'"):
        check_columns(
            [("x", np.array([1.0, np.nan]), {}, ["1", "abc"])],
            source="w",
            lines=lambda row: row + 1,
        )


def test_check_unique_names_the_repeat_and_the_first_line():
    with pytest.raises(
        InputError, match=r"line 9, field 'job_id': job id 5 given twice \(first on line 3\)"
    ):
        check_unique(
            np.array([4.0, 5.0, 6.0, 5.0, 5.0]),
            source="w",
            field="job_id",
            lines=[2, 3, 5, 9, 12],
            what="job id",
        )
    check_unique(np.array([1, 2, 3]))


def test_parse_json_refuses_duplicate_keys_deep_nesting_and_names_the_line(tmp_path):
    path = tmp_path / "a.json"
    path.write_text('{"a": 1,\n "a": 2}')
    with pytest.raises(InputError, match="field 'a': key given twice"):
        parse_json(path)
    path.write_text("[" * 50000 + "]" * 50000)
    with pytest.raises(InputError, match="nested too deeply"):
        parse_json(path)
    path.write_text('{"a": 1,\n "b": }')
    with pytest.raises(InputError, match=r"line 2: not valid JSON"):
        parse_json(path)
    path.write_text('{"a": %s}' % ("9" * 5000))
    assert parse_json(path)["a"] == float(
        "inf"
    )  # a huge integer literal: refused by the field's limit later


def test_make_workload_refuses_what_the_readers_refuse():
    with pytest.raises(InputError, match="job_id.*whole number"):
        make_workload([7.5], [0], [1], [1])
    with pytest.raises(InputError, match="job id 1 given twice"):
        make_workload([1, 1], [0, 0], [1, 1], [1, 1])
    with pytest.raises(InputError, match="submit_time.*finite"):
        make_workload([1], [np.inf], [1], [1])
    with pytest.raises(InputError, match="cores.*MAX_PROCS"):
        make_workload([1], [0], [1], [1e30])


def test_swf_reader_names_line_and_field_of_bad_values(tmp_path):
    path = tmp_path / "t.swf"
    for bad, message in [
        ("3 5 0 30 1.5", r"line 7, field 'allocated_processors'.*whole"),
        ("3 5 0 inf -1", r"line 7, field 'run_time'.*finite"),
        ("3 1e11 0 30 -1", r"line 7, field 'submit_time'.*MAX_SECONDS"),
        ("1 5 0 30 -1", r"line 7, field 'job_number'.*job id 1 given twice \(first on line 5\)"),
    ]:
        path.write_text(SWF.replace("3 5 0 30 -1", bad))
        with pytest.raises(InputError, match=message):
            read_swf(path)


def test_csv_reader_quoting_blank_rows_and_duplicate_columns(tmp_path):
    path = tmp_path / "w.csv"
    path.write_text(
        'job_id,submit_time,run_time,cores,app\n1,0,10,4,"a, b"\n\n,,,,\n2,1,5,2,"x\ny"\n'
    )
    w = read_csv(path)
    assert w.app.tolist() == ["a, b", "x\ny"] and w.job_id.tolist() == [1, 2]
    path.write_text("job_id,submit_time,run_time,cores,cores\n1,0,10,4,4\n")
    with pytest.raises(InputError, match=r"line 1, field 'cores': column given twice"):
        read_csv(path)
    path.write_text("job_id,submit_time,run_time,cores\n1,0,10,4\n2,0,10\n")
    with pytest.raises(InputError, match=r"line 3: row has 3 cells, the header has 4"):
        read_csv(path)


@pytest.mark.skipif(
    not (SHARED_SWF / "KTH-SP2-1996-2.1-cln.swf.gz").is_file(), reason="no ../shared/data"
)
def test_a_real_trace_reads_with_its_cleaning_counts():
    w = read_swf(SHARED_SWF / "KTH-SP2-1996-2.1-cln.swf.gz", max_cores=100)
    assert len(w) == 28467 and w.cleaning["records"] == 28476 and w.header["MaxProcs"] == "100"
