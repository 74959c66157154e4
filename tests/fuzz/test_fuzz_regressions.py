"""Regression tests for the reader bugs fuzzing found (issue "Reliability: no wrong answer, no
traceback").

Each runs the real CLI in-process and expects exit 0 with the right result, or exit 2 with one
stderr line naming the file (and the line, field and limit where there is one) and no output left
behind.
"""

from __future__ import annotations

import gzip
import json
import re

import pytest

from cosched.cli import main

SWF_HEADER = "; Version: 2.2\n; MaxProcs: 100\n"
SWF_JOBS = [
    "1 0 5 100 2 -1 -1 2 200 -1 1 1 1 1 1 -1 -1 -1",
    "2 10 0 20 1 -1 -1 1 50 -1 1 1 1 1 1 -1 -1 -1",
    "3 12 0 30 4 -1 -1 4 60 -1 1 1 1 1 1 -1 -1 -1",
]
CSV_HEADER = "job_id,submit_time,run_time,cores,estimate,app"
CSV_JOBS = ["1,0,100,2,200,cg", "2,10,20,1,50,ft", "3,12,30,4,60,cg"]
HEATMAP = (
    "name_A,procs_A,compact_A,name_B,procs_B,compact_B,co_A_B,co_B_A\n"
    "cg,4,100,cg,4,100,110,110\ncg,4,100,ft,2,50,120,60\nft,2,50,ft,2,50,55,55\n"
)


def swf(jobs=SWF_JOBS, header=SWF_HEADER) -> str:
    return header + "\n".join(jobs) + "\n"


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def simulate(capsys, tmp_path, workload, *extra, scheduler="easy"):
    out = tmp_path / "out"
    code, stdout, err = run(
        capsys,
        "simulate",
        "--workload",
        workload,
        "--platform",
        "kth-sp2",
        "--scheduler",
        scheduler,
        "--quiet",
        "--no-plots",
        "--json",
        "--out",
        out,
        *extra,
    )
    return code, stdout, err, out


def one_error(code, err, command, path, *needles, out=None):
    assert code == 2, err
    lines = err.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"cosched {command}: error: ") and str(path) in lines[0], lines[0]
    for needle in needles:
        assert re.search(needle, lines[0]), f"{needle!r} not in {lines[0]!r}"
    if out is not None:
        assert not out.exists(), "a failed run left output behind"
    return lines[0]


# --- text decoding: one policy for every text input -----------------------------------------------


def test_latin1_byte_in_an_swf_comment_is_ignored(tmp_path, capsys):
    path = tmp_path / "t.swf"
    path.write_bytes(
        b"; Computer: Universit\xe9 de Gen\xe8ve\n; note \x00\xff\n"
        + swf().encode()
        + b"; trailing caf\xe9\n"
    )
    code, stdout, err, out = simulate(capsys, tmp_path, path)
    assert code == 0, err
    assert json.loads(stdout)["jobs"] == 3


def test_latin1_byte_in_an_inline_swf_comment_is_ignored(tmp_path, capsys):
    jobs = [SWF_JOBS[0] + " ; caf\xe9"] + SWF_JOBS[1:]
    path = tmp_path / "t.swf"
    path.write_bytes(swf(jobs).encode("latin-1"))
    code, stdout, err, _ = simulate(capsys, tmp_path, path)
    assert code == 0, err


def test_latin1_byte_in_swf_data_names_line_and_column(tmp_path, capsys):
    path = tmp_path / "t.swf"
    path.write_bytes(swf().encode().replace(b"2 10 0 20", b"2 1\xe9 0 20"))
    code, _, err, out = simulate(capsys, tmp_path, path)
    one_error(code, err, "simulate", path, r"line 4\b", "0xe9", "column 4", "UTF-8", out=out)


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-32"])
@pytest.mark.parametrize("name", ["t.swf", "t.csv"])
def test_utf16_and_utf32_workloads_are_refused(tmp_path, capsys, encoding, name):
    path = tmp_path / name
    text = swf() if name.endswith(".swf") else "\n".join([CSV_HEADER] + CSV_JOBS) + "\n"
    path.write_bytes(text.encode(encoding))
    code, _, err, out = simulate(capsys, tmp_path, path)
    one_error(code, err, "simulate", path, r"UTF-(16|32)|NUL", out=out)


@pytest.mark.parametrize("name", ["t.swf", "t.csv", "t.swf.gz", "t.csv.gz"])
def test_binary_workloads_are_refused(tmp_path, capsys, name):
    path = tmp_path / name
    payload = bytes(range(256)) * 4
    path.write_bytes(gzip.compress(payload) if name.endswith(".gz") else payload)
    code, _, err, out = simulate(capsys, tmp_path, path)
    one_error(code, err, "simulate", path, out=out)


def test_binary_heatmap_platform_and_seed_are_refused(tmp_path, capsys):
    junk = tmp_path / "junk.bin"
    junk.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    code, _, err = run(capsys, "heatmap", junk)
    one_error(code, err, "heatmap", junk, "NUL")
    workload = tmp_path / "w.swf"
    workload.write_text(swf())
    code, _, err, out = simulate(capsys, tmp_path, workload, "--platform", junk)
    one_error(code, err, "simulate", junk, out=out)
    target = tmp_path / "w.csv"
    code, _, err = run(
        capsys, "generate-workload", "--app-seed", junk, "--jobs", 3, "--out", target
    )
    one_error(code, err, "generate-workload", junk, out=target)


@pytest.mark.parametrize("kind", ["swf", "csv"])
def test_gz_that_is_not_gzip_is_refused(tmp_path, capsys, kind):
    path = tmp_path / f"t.{kind}.gz"
    path.write_text(swf() if kind == "swf" else "\n".join([CSV_HEADER] + CSV_JOBS))
    code, _, err, out = simulate(capsys, tmp_path, path)
    one_error(code, err, "simulate", path, "not gzip", out=out)


@pytest.mark.parametrize("kind", ["swf", "csv"])
def test_truncated_gzip_is_refused(tmp_path, capsys, kind):
    text = swf(SWF_JOBS * 1) if kind == "swf" else "\n".join([CSV_HEADER] + CSV_JOBS)
    data = gzip.compress(text.encode())
    path = tmp_path / f"t.{kind}.gz"
    for cut in (5, len(data) // 2, len(data) - 3):
        path.write_bytes(data[:cut])
        code, _, err, out = simulate(capsys, tmp_path, path)
        one_error(code, err, "simulate", path, "gzip", out=out)


def test_corrupt_gzip_is_refused(tmp_path, capsys):
    data = bytearray(gzip.compress(swf().encode()))
    data[len(data) // 2] ^= 0xFF
    path = tmp_path / "t.swf.gz"
    path.write_bytes(bytes(data))
    code, _, err, out = simulate(capsys, tmp_path, path)
    one_error(code, err, "simulate", path, "gzip", out=out)


def test_gzipped_csv_and_utf8_bom_are_read(tmp_path, capsys):
    path = tmp_path / "t.csv.gz"
    path.write_bytes(gzip.compress(("\ufeff" + "\n".join([CSV_HEADER] + CSV_JOBS) + "\n").encode()))
    code, stdout, err, _ = simulate(capsys, tmp_path, path)
    assert code == 0, err
    assert json.loads(stdout)["jobs"] == 3


def test_a_directory_given_as_a_workload_is_an_input_error(tmp_path, capsys):
    folder = tmp_path / "w.swf"
    folder.mkdir()
    code, _, err, _ = simulate(capsys, tmp_path, folder)
    one_error(code, err, "simulate", folder, "folder")


# --- numbers: finite, whole where a count or id is expected, within named limits ------------------


@pytest.mark.parametrize("value", ["inf", "-inf", "1e309", "nan", "Infinity"])
@pytest.mark.parametrize("field, column", [("submit_time", 1), ("run_time", 3)])
def test_non_finite_swf_times_are_refused_not_simulated(tmp_path, capsys, value, field, column):
    cells = SWF_JOBS[1].split()
    cells[column] = value
    path = tmp_path / "t.swf"
    path.write_text(swf([SWF_JOBS[0], " ".join(cells), SWF_JOBS[2]]))
    code, _, err, out = simulate(capsys, tmp_path, path)  # was: StopIteration from the engine
    one_error(code, err, "simulate", path, r"line 4\b", f"'{field}'", "finite", out=out)


@pytest.mark.parametrize("value", ["inf", "1e309", "nan"])
def test_non_finite_csv_times_are_refused(tmp_path, capsys, value):
    path = tmp_path / "t.csv"
    path.write_text(
        "\n".join([CSV_HEADER, CSV_JOBS[0], f"2,{value},20,1,50,ft", CSV_JOBS[2]]) + "\n"
    )
    code, _, err, out = simulate(capsys, tmp_path, path)
    one_error(code, err, "simulate", path, r"line 3\b", "'submit_time'", "finite", out=out)


def test_huge_submit_time_is_refused_not_run_in_zero_seconds(tmp_path, capsys):
    path = tmp_path / "t.swf"
    path.write_text(swf([SWF_JOBS[0], SWF_JOBS[1].replace("2 10 ", "2 1e300 ", 1), SWF_JOBS[2]]))
    code, _, err, out = simulate(capsys, tmp_path, path)
    one_error(code, err, "simulate", path, r"line 4\b", "'submit_time'", "MAX_SECONDS", out=out)


def test_run_time_below_the_time_resolution_is_refused(tmp_path, capsys):
    path = tmp_path / "t.csv"
    path.write_text("\n".join([CSV_HEADER, CSV_JOBS[0], "2,10,1e-9,1,,ft"]) + "\n")
    code, _, err, out = simulate(capsys, tmp_path, path)
    one_error(code, err, "simulate", path, r"line 3\b", "'run_time'", "MIN_SECONDS", out=out)


@pytest.mark.parametrize(
    "column, field", [(4, "allocated_processors"), (7, "requested_processors")]
)
def test_huge_swf_processor_counts_are_refused_not_dropped(tmp_path, capsys, column, field):
    cells = SWF_JOBS[1].split()
    cells[column] = "1e30"
    path = tmp_path / "t.swf"
    path.write_text(swf([SWF_JOBS[0], " ".join(cells), SWF_JOBS[2]]))
    code, _, err, out = simulate(capsys, tmp_path, path)  # was: dropped as "processors <= 0"
    one_error(code, err, "simulate", path, r"line 4\b", f"'{field}'", "MAX_PROCS", out=out)


def test_processor_counts_above_the_platform_are_still_capped(tmp_path, capsys):
    path = tmp_path / "t.swf"
    path.write_text(swf([SWF_JOBS[0], SWF_JOBS[1].replace(" 1 -1 -1 1 ", " 5000 -1 -1 5000 ", 1)]))
    code, stdout, err, _ = simulate(capsys, tmp_path, path)
    assert code == 0, err
    assert json.loads(stdout)["cleaning"]["processors_capped"] == 1


@pytest.mark.parametrize("kind", ["swf", "csv"])
def test_duplicate_job_ids_name_both_lines(tmp_path, capsys, kind):
    path = tmp_path / f"t.{kind}"
    if kind == "swf":
        path.write_text(swf(SWF_JOBS + [SWF_JOBS[1].replace("2 10 ", "2 40 ", 1)]))
        needles = (r"line 6\b", "first on line 4", "'job_number'", "job id 2 given twice")
    else:
        path.write_text("\n".join([CSV_HEADER] + CSV_JOBS + ["2,40,5,1,,ft"]) + "\n")
        needles = (r"line 5\b", "first on line 3", "'job_id'", "job id 2 given twice")
    code, _, err, out = simulate(capsys, tmp_path, path)
    one_error(code, err, "simulate", path, *needles, out=out)


@pytest.mark.parametrize("kind", ["swf", "csv"])
def test_fractional_job_ids_are_refused_not_truncated(tmp_path, capsys, kind):
    path = tmp_path / f"t.{kind}"
    if kind == "swf":
        path.write_text(swf([SWF_JOBS[0], SWF_JOBS[1].replace("2 10 ", "7.5 10 ", 1)]))
        needles = (r"line 4\b", "'job_number'", "whole number, got 7.5")
    else:
        path.write_text("\n".join([CSV_HEADER, CSV_JOBS[0], "7.5,10,20,1,50,ft"]) + "\n")
        needles = (r"line 3\b", "'job_id'", "whole number, got 7.5")
    code, _, err, out = simulate(capsys, tmp_path, path)  # was: job 7.5 became job 7
    one_error(code, err, "simulate", path, *needles, out=out)


def test_fractional_swf_processors_are_refused(tmp_path, capsys):
    path = tmp_path / "t.swf"
    path.write_text(swf([SWF_JOBS[0], SWF_JOBS[1].replace(" 1 -1 -1 1 ", " 1.5 -1 -1 1 ", 1)]))
    code, _, err, out = simulate(capsys, tmp_path, path)
    one_error(
        code, err, "simulate", path, r"line 4\b", "'allocated_processors'", "whole number", out=out
    )


def test_nan_in_an_unused_swf_field_names_line_and_field(tmp_path, capsys):
    cells = SWF_JOBS[2].split()
    cells[6] = "nan"
    path = tmp_path / "t.swf"
    path.write_text(swf(SWF_JOBS[:2] + [" ".join(cells)]))
    code, _, err, out = simulate(capsys, tmp_path, path)  # was: "unreadable SWF content", no line
    one_error(code, err, "simulate", path, r"line 5\b", "'used_memory'", out=out)


def test_huge_procs_in_a_heatmap_are_refused(tmp_path, capsys):
    path = tmp_path / "h.csv"
    path.write_text(HEATMAP.replace("ft,2,50,ft,2,50", "ft,1e18,50,ft,1e18,50"))
    code, _, err = run(capsys, "heatmap", path)
    one_error(code, err, "heatmap", path, r"line 4\b", "'procs_A'", "MAX_PROCS")
    target = tmp_path / "w.csv"
    code, _, err = run(capsys, "generate-workload", "--heatmap", path, "--jobs", 5, "--out", target)
    one_error(code, err, "generate-workload", path, "MAX_PROCS", out=target)


def test_heatmap_conflicting_procs_name_the_procs_column(tmp_path, capsys):
    path = tmp_path / "h.csv"
    path.write_text(HEATMAP.replace("ft,2,50,ft,2,50", "ft,3,50,ft,3,50"))
    code, _, err = run(capsys, "heatmap", path)
    one_error(code, err, "heatmap", path, r"line 4\b", "'procs_A'", "on line 3")


def test_heatmap_spread_row_with_values_for_b_is_refused(tmp_path, capsys):
    path = tmp_path / "h.csv"
    path.write_text(HEATMAP + "cg,4,100,,,,90,-4e66\n")
    code, _, err = run(capsys, "heatmap", path)  # was: the garbage cell was silently ignored
    one_error(code, err, "heatmap", path, r"line 5\b", "'co_B_A'")


@pytest.mark.parametrize(
    "nodes", [10**12, 10**30, "1" + "0" * 5000], ids=["1e12", "1e30", "5001 digits"]
)
def test_huge_node_counts_are_refused_before_allocating(tmp_path, capsys, nodes):
    platform = tmp_path / "p.json"
    platform.write_text(f'{{"nodes": {nodes}, "sockets_per_node": 2, "cores_per_socket": 2}}')
    workload = tmp_path / "w.swf"
    workload.write_text(swf())
    code, _, err, out = simulate(capsys, tmp_path, workload, "--platform", platform)
    one_error(code, err, "simulate", platform, "nodes", out=out)


def test_huge_cores_per_node_are_refused(tmp_path, capsys):
    platform = tmp_path / "p.json"
    platform.write_text(
        json.dumps({"nodes": 2, "sockets_per_node": 4096, "cores_per_socket": 4096})
    )
    workload = tmp_path / "w.swf"
    workload.write_text(swf())
    code, _, err, out = simulate(capsys, tmp_path, workload, "--platform", platform)
    one_error(code, err, "simulate", platform, "'cores_per_socket'", "MAX_CORES_PER_NODE", out=out)


@pytest.mark.parametrize(
    "text, needle",
    [
        ("[" * 100000 + "]" * 100000, "nested too deeply"),
        ('{"nodes": 4, "nodes": 8}', "'nodes'.*twice"),
        ('{"nodes": "8"}', "'nodes'.*number"),
        ('{"nodes": 8.5}', "'nodes'.*whole"),
        ('{"nodes": NaN}', "'nodes'.*finite"),
        ('{"nodes": 8, "name": ["x"]}', "'name'"),
    ],
    ids=["deep", "duplicate-key", "string", "fraction", "nan", "name-list"],
)
def test_platform_json_edge_cases(tmp_path, capsys, text, needle):
    platform = tmp_path / "p.json"
    platform.write_text(text)
    workload = tmp_path / "w.swf"
    workload.write_text(swf())
    code, _, err, out = simulate(capsys, tmp_path, workload, "--platform", platform)
    one_error(code, err, "simulate", platform, needle, out=out)


def test_generate_workload_refuses_a_billion_jobs_quickly(tmp_path, capsys):
    seed = tmp_path / "seed.json"
    seed.write_text(json.dumps({"applications": [{"name": "a", "procs": 4, "compact_time": 10}]}))
    target = tmp_path / "w.csv"
    code, _, err = run(
        capsys, "generate-workload", "--app-seed", seed, "--jobs", 1_000_000_000, "--out", target
    )
    one_error(code, err, "generate-workload", "", "'jobs'", "MAX_JOBS", out=target)


@pytest.mark.parametrize(
    "options, needle",
    [
        (["--mean-interarrival=nan", "--interarrival", "poisson"], "'mean'"),
        (["--mean-interarrival=1e300", "--interarrival", "constant"], "'mean'.*MAX_SECONDS"),
        # 40 x 1e9 s: past the limit
        (
            ["--interarrival", "constant", "--mean-interarrival=1e9"],
            "'mean'.*MAX_SECONDS",
        ),
        (["--interarrival", "weibull", "--shape=1e-5"], "'shape'"),
        (["--high=inf", "--interarrival", "uniform"], "'high'"),
        (["--seed=-1"], "'seed'"),
        (["--selection", "frequencies", "--frequencies=nan,1"], "'frequencies'"),
        (["--selection", "frequencies", "--frequencies=inf,1"], "'frequencies'"),
    ],
)
def test_generate_workload_refuses_bad_options(tmp_path, capsys, options, needle):
    seed = tmp_path / "seed.json"
    seed.write_text(
        json.dumps(
            {
                "applications": [
                    {"name": "a", "procs": 4, "compact_time": 10},
                    {"name": "b", "procs": 2, "compact_time": 5},
                ]
            }
        )
    )
    target = tmp_path / "w.csv"
    code, _, err = run(
        capsys, "generate-workload", "--app-seed", seed, "--jobs", 40, "--out", target, *options
    )
    one_error(code, err, "generate-workload", "", needle, out=target)


def test_generate_workload_with_huge_frequencies_does_not_overflow(tmp_path, capsys):
    seed = tmp_path / "seed.json"
    seed.write_text(
        json.dumps(
            {
                "applications": [
                    {"name": "a", "procs": 4, "compact_time": 10},
                    {"name": "b", "procs": 2, "compact_time": 5},
                ]
            }
        )
    )
    target = tmp_path / "w.csv"
    code, _, err = run(
        capsys,
        "generate-workload",
        "--app-seed",
        seed,
        "--jobs",
        20,
        "--out",
        target,
        "--selection",
        "frequencies",
        "--frequencies=1e308,1e308",
    )
    assert code == 0, err
    assert len(target.read_text().splitlines()) == 21


def test_generated_workloads_read_back_exactly(tmp_path, capsys):
    seed = tmp_path / "seed.json"
    seed.write_text(
        json.dumps({"applications": [{"name": "a", "procs": 4, "compact_time": 123.456789012345}]})
    )
    target = tmp_path / "w.csv"
    code, _, err = run(
        capsys,
        "generate-workload",
        "--app-seed",
        seed,
        "--jobs",
        3,
        "--out",
        target,
        "--interarrival",
        "poisson",
    )
    assert code == 0, err
    from cosched.simulator.workload import read_csv

    assert read_csv(target).run.tolist() == [123.456789012345] * 3  # was: written with 10 digits


@pytest.mark.parametrize(
    "app, needle",
    [
        ({"name": "a", "procs": 1e30, "compact_time": 1}, r"applications\[0\]\.procs.*MAX_PROCS"),
        ({"name": "a", "procs": "4", "compact_time": 1}, r"applications\[0\]\.procs.*number"),
        (
            {"name": "a", "procs": 4, "compact_time": 1e300},
            r"applications\[0\]\.compact_time.*MAX_SECONDS",
        ),
        ({"name": "", "procs": 4, "compact_time": 1}, r"applications\[0\]\.name"),
        ({"name": "a\u0000b", "procs": 4, "compact_time": 1}, r"applications\[0\]\.name"),
        ({"name": 5, "procs": 4, "compact_time": 1}, r"applications\[0\]\.name"),
    ],
)
def test_application_seed_values_are_checked(tmp_path, capsys, app, needle):
    seed = tmp_path / "seed.json"
    seed.write_text(json.dumps({"applications": [app]}))
    target = tmp_path / "w.csv"
    code, _, err = run(
        capsys, "generate-workload", "--app-seed", seed, "--jobs", 3, "--out", target
    )
    one_error(code, err, "generate-workload", seed, needle, out=target)


# --- --heatmap with a classic scheduler -----------------------------------------------------------


def test_heatmap_given_to_a_classic_scheduler_is_still_checked(tmp_path, capsys):
    workload = tmp_path / "w.csv"
    workload.write_text("\n".join([CSV_HEADER] + CSV_JOBS) + "\n")
    garbage = tmp_path / "h.csv"
    garbage.write_bytes(b"not,a,heatmap\n\x00\x01\x02")
    # was: never read, exit 0
    code, _, err, out = simulate(capsys, tmp_path, workload, "--heatmap", garbage)
    one_error(code, err, "simulate", garbage, out=out)
    code, _, err = run(
        capsys,
        "compare",
        "--workload",
        workload,
        "--platform",
        "kth-sp2",
        "--quiet",
        "--heatmap",
        garbage,
        "--scheduler",
        "fcfs,easy",
        "--baseline",
        "fcfs",
    )
    one_error(code, err, "compare", garbage)
    good = tmp_path / "good.csv"
    good.write_text(HEATMAP)
    code, stdout, err, _ = simulate(capsys, tmp_path, workload, "--heatmap", good)
    assert code == 0, err


def test_a_second_byte_order_mark_is_data_not_silently_dropped(tmp_path, capsys):
    path = tmp_path / "t.swf"
    # pandas alone dropped the second one
    path.write_bytes(b"\xef\xbb\xbf\xef\xbb\xbf" + swf().encode())
    code, _, err, out = simulate(capsys, tmp_path, path)
    one_error(code, err, "simulate", path, r"line 1\b", "expected 18 fields, got 1", out=out)
