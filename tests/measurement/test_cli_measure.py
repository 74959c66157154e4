"""`cosched measure` and `cosched measure-validate` end to end (short windows, bundled kernels)."""

import json

import pytest

from cosched.cli import build_parser, main
from cosched.theory.instance import load_instance

FAST = ["--window", "0.3", "--warmup", "0.1"]


def _has_command(name):
    return name in build_parser()._subparsers._group_actions[0].choices


def test_measure_writes_instance_heatmap_samples_report_and_plots(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["measure", "--kernels", "compute,cache", *FAST, "--out", str(out), "--plots"]) == 0
    names = {p.name for p in out.iterdir()}
    assert {
        "instance.json",
        "heatmap.csv",
        "samples.csv",
        "speeds.csv",
        "report.json",
        "plots",
    } <= names
    assert {p.name for p in (out / "plots").iterdir()} == {"heatmap.png", "speed_by_size.png"}
    report = json.loads((out / "report.json").read_text())
    assert report["backend"] in ("cputime", "ipc×cputime") and {"start", "end", "tasks"} <= set(
        report
    )
    assert f"backend: {report['backend']}" in capsys.readouterr().out
    assert load_instance(out / "instance.json", monotone=False).tasks == ("compute", "cache")
    assert main(["measure-speeds", str(out / "samples.csv"), "--json"]) == 0
    replayed = json.loads(capsys.readouterr().out)
    assert replayed["backend"] == report["backend"] and len(replayed["tasks"]) == 4
    if _has_command("opt"):
        assert main(["opt", str(out / "instance.json"), "--allow-nonmonotone", "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["makespan"] > 0


def test_resume_measures_only_the_combinations_not_yet_in_speeds_csv(tmp_path):
    out = tmp_path / "run"
    common = ["measure", "--kernels", "compute,memory", *FAST, "--no-plots", "--out", str(out)]
    assert main([*common, "--combinations", "upto:1"]) == 0
    singletons = (out / "speeds.csv").read_text()
    assert main([*common, "--combinations", "pairs", "--resume"]) == 0
    speeds = (out / "speeds.csv").read_text()
    assert speeds.startswith(singletons)
    added = speeds[len(singletons) :].splitlines()
    assert len(added) == 2 and all(line.split(",")[1] == "compute+memory" for line in added)
    report = json.loads((out / "report.json").read_text())
    assert report["combinations_measured"] == 3
    assert load_instance(out / "instance.json", monotone=False).m == 3


@pytest.mark.parametrize(
    "argv, field",
    [
        (["--task", "no-equals-sign"], "--task"),
        (["--kernels", "compute", "--combinations", "triples"], "--combinations"),
        (["--kernels", "gpu"], "--kernels"),
        (["--kernels", "compute", "--task-work", "nobody=3"], "--task-work"),
    ],
)
def test_bad_arguments_exit_2_and_leave_no_output(tmp_path, capsys, argv, field):
    out = tmp_path / "run"
    assert main(["measure", *argv, *FAST, "--out", str(out)]) == 2
    assert field in capsys.readouterr().err
    assert not out.exists()


def test_measure_validate_prints_the_table_2_regression_naming_the_backend(tmp_path, capsys):
    out = tmp_path / "validation"
    assert (
        main(
            [
                "measure-validate",
                "--kernels",
                "compute",
                "--runs",
                "2",
                "--repeats",
                "1",
                "--seconds",
                "0.3",
                "--max-corunners",
                "1",
                "--max-threads",
                "1",
                "--out",
                str(out),
                "--plots",
            ]
        )
        == 0
    )
    printed = capsys.readouterr().out
    assert "backend:" in printed and "compute" in printed
    assert {"runs.csv", "table.csv", "report.json"} <= {p.name for p in out.iterdir()}
    assert (out / "plots" / "validation.png").exists()


def test_forcing_hardware_counters_without_a_pmu_exits_2_naming_the_cause(tmp_path, capsys):
    from cosched.measurement.counters import CountersUnavailable, open_backend

    try:
        open_backend("perf")[0].close()
    except CountersUnavailable as error:
        out = tmp_path / "run"
        assert (
            main(["measure", "--kernels", "compute", "--backend", "perf", *FAST, "--out", str(out)])
            == 2
        )
        assert str(error) in capsys.readouterr().err and not out.exists()
    else:
        pytest.skip("this machine has working hardware counters")


def test_a_task_that_fails_at_once_names_the_last_lines_of_its_stderr(tmp_path, capsys):
    out = tmp_path / "run"
    failing = "bad=echo first line >&2; echo the real cause >&2; exit 1"
    argv = ["measure", "--kernels", "compute", "--task", failing, *FAST, "--out", str(out)]
    assert main(argv) == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert "exit status 1" in error and "first line | the real cause" in error
    assert not out.exists()


def test_a_measurement_without_an_instance_explains_its_exit_on_stderr_under_quiet(
    tmp_path, capsys
):
    sleeper = "exec sleep 30"
    argv = ["measure", "--task", f"a={sleeper}", "--task", f"b={sleeper}"]
    argv += ["--window", "0.05", "--warmup", "0.01", "--backend", "cputime"]
    code = main([*argv, "--out", str(tmp_path / "run"), "--quiet"])
    captured = capsys.readouterr()
    assert code == 1
    assert captured.out == ""
    assert captured.err.startswith("cosched measure: error: ")
    assert "nothing to normalise" in captured.err and "Traceback" not in captured.err
