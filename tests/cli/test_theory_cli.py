"""`cosched generate | opt | demo | run | ratio`.

JSON shapes, Example 1, and exit code 2 on bad input."""

import json

import pytest

from cosched.cli import main
from cosched.theory.bounds import example1_ratio


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def instance_file(tmp_path, capsys):
    path = tmp_path / "r6.json"
    assert run(capsys, "generate", "--n", 6, "--seed", 4, "--out", path)[0] == 0
    return path


def test_generate_writes_json_and_npz_that_opt_reads(tmp_path, capsys):
    for name in ("a.json", "a.npz"):
        code, out, _ = run(
            capsys,
            "generate",
            "--n",
            5,
            "--seed",
            1,
            "--alpha",
            0.5,
            0.9,
            "--out",
            tmp_path / name,
            "--json",
        )
        assert code == 0 and json.loads(out)["m"] == 31
    makespans = [
        json.loads(run(capsys, "opt", tmp_path / name, "--json")[1])["makespan"]
        for name in ("a.json", "a.npz")
    ]
    assert makespans[0] == makespans[1]


def test_generate_max_size_restricts_combinations(tmp_path, capsys):
    code, out, _ = run(
        capsys, "generate", "--n", 6, "--max-size", 2, "--out", tmp_path / "r.json", "--json"
    )
    assert json.loads(out)["m"] == 6 + 15


def test_opt_json_shape_and_methods_agree(instance_file, capsys):
    documents = {}
    for method, backend in (("direct", "highs"), ("colgen", "highs"), ("direct", "pulp")):
        code, out, _ = run(
            capsys, "opt", instance_file, "--method", method, "--backend", backend, "--json"
        )
        documents[method, backend] = document = json.loads(out)
        assert code == 0
        assert set(document) == {
            "makespan",
            "schedule",
            "solver",
            "method",
            "solve_seconds",
            "tasks",
        }
        assert document["tasks"] == [
            f"T{i + 1}" for i in range(6)
        ]  # names of the 0-based combination indices
        assert document["method"] == method and document["solver"] == backend
        assert all(set(step) == {"combination", "time"} for step in document["schedule"])
    values = [document["makespan"] for document in documents.values()]
    assert max(values) - min(values) <= 1e-9 * values[0]
    code, out, _ = run(capsys, "opt", instance_file)
    assert code == 0 and "OPT makespan" in out


def test_run_json_shape(instance_file, capsys):
    code, out, _ = run(
        capsys,
        "run",
        instance_file,
        "--strategy",
        "fcs",
        "--tie-break",
        "random",
        "--seed",
        3,
        "--json",
    )
    document = json.loads(out)
    assert code == 0 and set(document) == {"strategy", "makespan", "schedule", "tasks"}
    assert document["strategy"] == "fcs"
    assert document["makespan"] == pytest.approx(sum(step["time"] for step in document["schedule"]))
    assert run(capsys, "run", instance_file)[0] == 0


@pytest.mark.parametrize("n", [3, 5, 9])
def test_ratio_on_example_1_with_last_tie_break_prints_the_formula(tmp_path, capsys, n):
    path = tmp_path / f"ex1_{n}.json"
    assert run(capsys, "generate", "--worst-case", "--n", n, "--out", path)[0] == 0
    code, out, _ = run(capsys, "ratio", path, "--tie-break", "last", "--json")
    document = json.loads(out)
    assert code == 0 and set(document) == {"opt", "makespan", "ratio", "bound"}
    assert document["ratio"] == pytest.approx(example1_ratio(n), rel=1e-12)
    assert document["bound"] == pytest.approx(2 - 1 / (n - 1))
    code, out, _ = run(capsys, "ratio", path, "--tie-break", "last")
    printed = next(line for line in out.splitlines() if line.startswith("ratio"))
    assert float(printed.split()[-1]) == pytest.approx(example1_ratio(n), rel=1e-9)


def test_demo_prints_the_table_and_writes_the_plot(tmp_path, capsys):
    png = tmp_path / "demo.png"
    code, out, _ = run(capsys, "demo", "--n", 5, "--seed", 2, "--out", png, "--json")
    document = json.loads(out)
    assert code == 0 and png.read_bytes()[:4] == b"\x89PNG"
    assert 1 <= document["ratio"] <= document["bound"] + 1e-9
    code, out, _ = run(capsys, "demo", "--n", 5, "--seed", 2, "--out", png)
    assert code == 0 and "OPT makespan" in out and "bound" in out


def test_nonmonotone_and_normalize_flags_reach_the_loader(tmp_path, capsys):
    path = tmp_path / "measured.json"
    path.write_text(
        json.dumps(
            {
                "work": [10, 20],
                "combinations": [[0], [1], [0, 1]],
                "speeds": [[2.0], [0.5], [2.2, 0.3]],
            }
        )
    )
    code, _, err = run(capsys, "opt", path)
    assert code == 2 and "field 'speeds'" in err
    code, _, err = run(capsys, "opt", path, "--normalize")
    assert code == 2 and "at most 1" in err  # T1 is 1.1x faster beside T2 than alone
    code, out, _ = run(capsys, "ratio", path, "--normalize", "--allow-nonmonotone", "--json")
    assert code == 0 and json.loads(out)["ratio"] >= 1 - 1e-9


@pytest.mark.parametrize(
    "content, field",
    [
        ('{"work": [1, 2], "combinations": [[0], [1]], "speeds": [[1], ["x"]]}', "speeds[1]"),
        ('{"work": [1, 2], "combinations": [[0], [1]]}', "speeds"),
        ('{"work": [1, 2], "combinations": [[0], [3]], "speeds": [[1], [1]]}', "combinations[1]"),
    ],
)
@pytest.mark.parametrize("command", ["opt", "run", "ratio"])
def test_malformed_file_exits_2_with_one_line_naming_file_and_field(
    tmp_path, capsys, content, field, command
):
    path = tmp_path / "bad.json"
    path.write_text(content)
    code, out, err = run(capsys, command, path)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and str(path) in err and f"field '{field}'" in err


def test_infeasible_restricted_instance_exits_2_naming_the_task(tmp_path, capsys):
    path = tmp_path / "restricted.json"
    path.write_text(
        json.dumps({"work": [1, 3], "combinations": [[0], [0, 1]], "speeds": [[1], [1, 1]]})
    )
    for command in ("opt", "ratio", "run"):
        code, out, err = run(capsys, command, path)
        assert code == 2 and out == "" and "T2" in err and str(path) in err and err.count("\n") == 1


@pytest.mark.parametrize(
    "argv",
    [
        ["generate", "--n", "0", "--out", "{tmp}/x.json"],
        ["generate", "--n", "4", "--alpha", "0.9", "0.1", "--out", "{tmp}/x.json"],
        ["generate", "--n", "4", "--out", "{tmp}/x.csv"],
        ["generate", "--worst-case", "--n", "4", "--max-size", "2", "--out", "{tmp}/x.json"],
        ["generate", "--n", "30", "--out", "{tmp}/x.npz"],
        ["demo", "--n", "40", "--out", "{tmp}/x.png"],
    ],
)
def test_bad_arguments_exit_2_and_leave_no_output_file(tmp_path, capsys, argv):
    code, _, err = run(capsys, *[a.format(tmp=tmp_path) for a in argv])
    assert code == 2 and err.count("\n") == 1
    assert list(tmp_path.iterdir()) == []


def test_unknown_strategy_exits_2(instance_file, capsys):
    code, _, err = run(capsys, "run", instance_file, "--strategy", "nope")
    assert code == 2 and "unknown strategy" in err
