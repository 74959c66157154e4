"""SWF / CSV readers with cleaning counts, and platforms from presets or JSON (issue 4, items 1-2)."""
import gzip
import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cosched.errors import InputError
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
    assert w.estimate.tolist() == [200, 30, 40]  # missing -> run time; 10 < 40 -> raised to run time
    c = w.cleaning
    assert (c["records"], c["jobs"], c["dropped_run_time_le_0"], c["dropped_processors_le_0"]) == (5, 3, 1, 1)
    assert (c["processors_capped"], c["estimate_missing_set_to_run_time"],
            c["estimate_below_run_time_raised"]) == (1, 1, 1)
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


@pytest.mark.parametrize("text, message", [
    ("job_id,submit_time,run_time\n1,0,1\n", "cores"),
    ("job_id,submit_time,run_time,cores\n1,0,abc,1\n", r"line 2.*run_time"),
    ("job_id,submit_time,run_time,cores\n1,0,1,1.5\n", "cores"),
])
def test_csv_reader_rejects_bad_input_with_its_location(tmp_path, text, message):
    path = tmp_path / "w.csv"
    path.write_text(text)
    with pytest.raises(InputError, match=message):
        read_csv(path)


def test_unknown_workload_extension_is_an_input_error(tmp_path):
    with pytest.raises(InputError):
        load_workload(tmp_path / "w.txt")


@given(st.lists(st.tuples(st.integers(-5, 50), st.integers(-3, 40), st.integers(-2, 9), st.integers(-1, 60)),
                min_size=1, max_size=40))
def test_cleaned_workloads_are_sorted_positive_and_fit_the_platform(rows):
    submit, run, cores, estimate = map(list, zip(*rows))
    w = make_workload(range(len(rows)), submit, run, cores, estimate, max_cores=6)
    assert np.all(np.diff(w.submit) >= 0)
    assert np.all(w.run > 0) and np.all((w.cores > 0) & (w.cores <= 6)) and np.all(w.estimate >= w.run)
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
