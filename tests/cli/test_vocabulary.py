"""One CLI vocabulary (docs/cli-conventions.md).

The same flags mean the same in every subcommand, old spellings still parse to the same arguments,
outputs are checked before any work, warnings and notices are one line."""

from __future__ import annotations

import argparse
import functools
import json
import os

import pytest

import cosched
from cosched.cli import build_parser, main
from cosched.cli_options import SEED_DEFAULT
from cosched.errors import InputError
from cosched.outputs import check_outputs

HEADER = "name_A,procs_A,compact_A,name_B,procs_B,compact_B,co_A_B,co_B_A\n"
WORKLOAD = "job_id,submit_time,run_time,cores,estimate\n" + "".join(
    f"{i},{i * 7 % 50},{5 + i % 13},{1 + i % 6},{20 + i % 13}\n" for i in range(20)
)

# the least each subcommand needs to parse; a new subcommand must be added here
# (test_every_subcommand_is_listed)
MINIMAL = {
    "generate": ["--out", "x.json"],
    "opt": ["i.json"],
    "run": ["i.json"],
    "ratio": ["i.json"],
    "demo": [],
    "experiment": ["--out", "d"],
    "simulate": ["--workload", "w.csv", "--platform", "grvingt"],
    "compare": ["--workload", "w.csv", "--platform", "grvingt"],
    "heatmap": ["h.csv"],
    "generate-workload": ["--heatmap", "h.csv", "--out", "w.csv"],
    "experiment-sim": ["--out", "d"],
    "measure": ["--out", "d"],
    "measure-validate": [],
    "measure-speeds": ["s.csv"],
    "execute": ["--out", "d"],
    "bound": ["--workload", "w.csv", "--platform", "grvingt"],
    "elastic": ["c.json", "--scheduler", "fcfs-rigid"],
    "experiment-elastic": ["--out", "d"],
    "worst-case": ["--n", "3", "--out", "d"],
    "hybrid-workload": ["--workload", "w.swf", "--platform", "grvingt", "--out", "w.csv"],
    "experiment-hybrid": ["--workload", "w.swf", "--platform", "grvingt", "--out", "d"],
    "measure-heatmap": ["--apps", "a.json", "--nodes", "local:1", "--out", "d"],
}
RANDOM = (
    "generate",
    "run",
    "ratio",
    "demo",
    "experiment",
    "generate-workload",
    "experiment-sim",
    "measure",
    "measure-validate",
    "execute",
    "worst-case",
    "hybrid-workload",
    "experiment-hybrid",
    "experiment-elastic",
    "measure-heatmap",
)
PROGRESS_BARS = (
    "experiment",
    "simulate",
    "compare",
    "experiment-sim",
    "measure",
    "measure-validate",
    "execute",
    "worst-case",
    "experiment-hybrid",
    "experiment-elastic",
    "measure-heatmap",
)


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@functools.lru_cache(maxsize=1)
def parser() -> argparse.ArgumentParser:
    """One parser for the read-only checks (parsing does not change it)."""
    return build_parser()


def subparsers() -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def parse(*argv) -> argparse.Namespace:
    return parser().parse_args([str(a) for a in argv])


def options(command: str) -> dict[str, argparse.Action]:
    return {
        flag: action for action in subparsers()[command]._actions for flag in action.option_strings
    }


def test_every_subcommand_is_listed():
    assert set(subparsers()) == set(MINIMAL) == set(subparsers_of_a_fresh_parser())


def subparsers_of_a_fresh_parser():
    action = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return action.choices


@pytest.mark.parametrize("command", sorted(MINIMAL))
def test_every_subcommand_has_help_quiet_and_json_or_files(command, capsys):
    with pytest.raises(SystemExit) as exit_:
        main([command, "--help"])
    assert exit_.value.code == 0
    text = capsys.readouterr().out
    assert text.startswith(f"usage: cosched {command}") and "--quiet" in text
    assert parse(command, *MINIMAL[command], "--quiet").quiet is True
    assert parse(command, *MINIMAL[command]).quiet is False
    flags = options(command)
    assert "--json" in flags or "--out" in flags


@pytest.mark.parametrize("command", RANDOM)
def test_seed_has_one_default_everywhere(command):
    assert parse(command, *MINIMAL[command]).seed == SEED_DEFAULT == 0
    assert parse(command, *MINIMAL[command], "--seed", "7").seed == 7
    assert f"(default {SEED_DEFAULT})" in options(command)["--seed"].help


def test_progress_bar_commands_take_quiet():
    for command in PROGRESS_BARS:
        assert "--quiet" in options(command)


OLD_AND_NEW = [  # (command, old spelling, new spelling): both parse to the same arguments
    ("experiment-sim", ["--no-progress"], ["--quiet"]),
    (
        "experiment-sim",
        ["--schedulers", "easy,sjf-co"],
        ["--scheduler", "easy", "--scheduler", "sjf-co"],
    ),
    ("experiment-sim", ["--mean", "30"], ["--mean-interarrival", "30"]),
    ("experiment-sim", ["--no-plots"], ["--no-plots"]),
    ("compare", ["--schedulers", "fcfs,easy"], ["--scheduler", "fcfs,easy"]),
    ("simulate", ["--schedulers", "sjf"], ["--scheduler", "sjf"]),
    ("simulate", ["--plots", "figures"], ["--plots", "figures"]),
    ("experiment", ["--strategies", "ucb", "pi"], ["--strategy", "ucb,pi"]),
    ("experiment", ["--strategies", "ei"], ["--strategy", "ei"]),
    ("experiment", ["--no-plots"], ["--no-plots"]),
    ("run", ["--strategies", "ucb"], ["--strategy", "ucb"]),
    ("generate-workload", ["--mean", "30"], ["--mean-interarrival", "30"]),
    ("measure", ["--monotone"], ["--project-monotone"]),
    ("measure", ["--no-plots"], ["--no-plots"]),
    ("heatmap", ["--plot", "h.png"], ["--plots", "h.png"]),
    ("generate", ["--work", "1", "2"], ["--work-range", "1", "2"]),
    ("measure", ["--work", "a=2"], ["--task-work", "a=2"]),
    ("execute", ["--work", "5"], ["--kernel-work", "5"]),
    ("execute", ["--window", "3"], ["--reference-window", "3"]),
    ("execute", ["--warmup", "0.1"], ["--reference-warmup", "0.1"]),
    ("execute", ["--combinations", "pairs"], ["--allowed-combinations", "pairs"]),
    ("experiment-elastic", ["--jobs", "5"], ["--limit", "5"]),
    ("experiment-elastic", ["--policy", "drf"], ["--scheduler", "drf"]),
    ("elastic", ["--algorithm", "fcfs-malleable"], ["--scheduler", "fcfs-malleable"]),
]


@pytest.mark.parametrize(
    "command, old, new", OLD_AND_NEW, ids=lambda v: " ".join(v) if isinstance(v, list) else v
)
def test_old_spelling_warns_once_naming_the_new_one(command, old, new, capsys):
    if old == new:
        return
    with pytest.warns(FutureWarning) as caught:
        parse(command, *_argv(command, old))
    messages = [str(w.message) for w in caught if issubclass(w.category, FutureWarning)]
    assert len(messages) == 1, messages
    assert "deprecated" in messages[0] and "removed in 0.4.0" in messages[0]
    assert new[0] in messages[0]


def test_new_spellings_do_not_warn(recwarn):
    for command, _, new in OLD_AND_NEW:
        parse(command, *_argv(command, new))
    assert not [w for w in recwarn if issubclass(w.category, FutureWarning)]


def test_deprecation_warning_prints_as_one_line_before_the_command_runs(tmp_path, capsys):
    path = tmp_path / "i.json"
    code, _, err = run(capsys, "generate", "--n", 3, "--work", 1, 2, "--out", path)
    assert code == 0 and path.exists()
    assert err.splitlines()[0] == (
        "cosched generate: warning: --work is deprecated, use --work-range (removed in 0.4.0)"
    )


def test_one_word_per_meaning():
    """`--work`, `--jobs`, `--policy`, `--algorithm` each mean one thing.

    See docs/cli-conventions.md."""
    for command, actions in ((c, options(c)) for c in MINIMAL):
        visible = {flag for flag, action in actions.items() if action.help != argparse.SUPPRESS}
        assert "--work" not in visible, command
        assert "--policy" not in visible, command
        if "--jobs" in visible:  # jobs to draw, never "only the first N" (that is --limit)
            assert "first" not in actions["--jobs"].help, command
        if "--algorithm" in visible:
            assert command == "elastic" and ".py" in actions["--algorithm"].metavar
    assert {"--limit", "--scheduler"} <= set(options("experiment-elastic"))


def test_measure_and_execute_share_no_flag_with_two_defaults():
    shared = {
        flag for flag, action in options("measure").items() if action.help != argparse.SUPPRESS
    } & {flag for flag, action in options("execute").items() if action.help != argparse.SUPPRESS}
    for flag in shared - {"-h", "--help"}:
        assert options("measure")[flag].default == options("execute")[flag].default, flag


@pytest.mark.parametrize("command", sorted(MINIMAL))
def test_help_says_repeatable_only_where_several_values_parse(command):
    from cosched.cli_options import NameList

    for flag, action in options(command).items():
        help_text = action.help or ""
        if "repeatable" in help_text:
            assert (
                isinstance(action, NameList)
                or action.nargs in ("+", "*")
                or isinstance(action, argparse._AppendAction)
            ), (command, flag)
    if "--strategy" in options(command) and command in ("run", "ratio", "worst-case", "execute"):
        assert "repeatable" not in options(command)["--strategy"].help
    if command == "simulate":
        assert "repeatable" not in options(command)["--scheduler"].help


@pytest.mark.parametrize(
    "argv, suggestion",
    [
        (["simulat"], "did you mean 'simulate'?"),
        (["experiment-hybird", "--out", "d"], "did you mean 'experiment-hybrid'?"),
        (["opt", "i.json", "--method", "dirct"], "did you mean 'direct'?"),
        (
            ["simulate", "--workload", "w.csv", "--platform", "grvingt", "--schedular", "easy"],
            "did you mean '--scheduler'?",
        ),
    ],
)
def test_a_mistyped_name_suggests_the_closest(argv, suggestion, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    assert suggestion in capsys.readouterr().err


def test_unknown_scheduler_suggests_the_closest():
    from cosched.simulator.schedulers import make_scheduler

    with pytest.raises(InputError, match="did you mean 'conservative'"):
        make_scheduler("conservativ")


def test_quiet_prints_only_errors_and_warnings(tmp_path, capsys):
    path = tmp_path / "i.json"
    assert run(capsys, "generate", "--n", 3, "--out", path, "--quiet") == (0, "", "")
    assert run(capsys, "opt", path, "--quiet") == (0, "", "")
    code, out, _ = run(
        capsys, "opt", path, "--quiet", "--json"
    )  # a document asked for still prints
    assert code == 0 and "makespan" in json.loads(out)
    code, out, err = run(capsys, "run", path, "--strategy", "nope", "--quiet")
    assert code == 2 and out == "" and "error" in err


@pytest.mark.parametrize(
    "seconds, unit",
    [
        (59, "s"),
        (3599, "s"),
        (7199, "s"),
        (7200, "h"),
        (86400, "h"),
        (2 * 86400, "d"),
        (30 * 86400, "d"),
    ],
)
def test_durations_print_in_a_unit_that_fits(seconds, unit):
    from cosched.cli_options import time_unit

    assert time_unit(seconds)[0] == unit
    assert time_unit([1.0, seconds, None])[0] == unit


@pytest.mark.parametrize(
    "command, old, new", OLD_AND_NEW, ids=lambda v: " ".join(v) if isinstance(v, list) else v
)
def test_old_spelling_parses_to_the_same_arguments(command, old, new):
    assert parse(command, *_argv(command, old)) == parse(command, *_argv(command, new))
    assert parse(command, *_argv(command, old)) != parse(command, *MINIMAL[command])


def _argv(command, extra):
    """MINIMAL plus `extra`; elastic's --scheduler and --algorithm exclude each other."""
    if command == "elastic":
        return ["c.json", *extra]
    return [*MINIMAL[command], *extra]


@pytest.mark.parametrize(
    "command, hidden",
    [
        ("experiment-sim", "--no-progress"),
        ("experiment-sim", "--schedulers"),
        ("experiment-sim", "--mean"),
        ("compare", "--schedulers"),
        ("simulate", "--schedulers"),
        ("experiment", "--strategies"),
        ("run", "--strategies"),
        ("generate-workload", "--mean"),
        ("measure", "--monotone"),
        ("heatmap", "--plot"),
    ],
)
def test_old_spellings_are_hidden_from_help(command, hidden):
    assert options(command)[hidden].help == argparse.SUPPRESS
    assert f"{hidden} " not in subparsers()[command].format_help().replace(f"{hidden}-", "")


def test_choice_lists_come_from_the_library():
    from cosched.measurement.counters import BACKEND_NAMES
    from cosched.simulator.colocation import PLACEMENTS
    from cosched.simulator.generate import INTERARRIVALS, SELECTIONS
    from cosched.simulator.schedulers import SCHEDULERS
    from cosched.strategies.experiment import ACQUISITIONS
    from cosched.strategies.fcs import TIE_BREAKS
    from cosched.strategies.interpolation import RULES
    from cosched.strategies.registry import STRATEGIES
    from cosched.strategies.search import INCUMBENTS
    from cosched.theory.opt import BACKENDS, METHODS

    assert tuple(options("opt")["--backend"].choices) == tuple(BACKENDS)
    assert tuple(options("opt")["--method"].choices) == tuple(METHODS)
    for command in ("run", "ratio"):
        assert tuple(options(command)["--tie-break"].choices) == tuple(TIE_BREAKS)
        assert tuple(options(command)["--bounds"].choices) == tuple(RULES)
        assert tuple(options(command)["--incumbent"].choices) == tuple(INCUMBENTS)
        assert all(name in options(command)["--strategy"].help for name in STRATEGIES)
    assert tuple(options("experiment")["--incumbent"].choices) == tuple(INCUMBENTS)
    assert all(name in options("experiment")["--strategy"].help for name in ACQUISITIONS)
    for command in ("simulate", "compare", "experiment-sim"):
        assert all(name in options(command)["--scheduler"].help for name in SCHEDULERS)
    for command in ("generate-workload", "experiment-sim"):
        assert tuple(options(command)["--interarrival"].choices) == tuple(INTERARRIVALS)
    assert tuple(options("generate-workload")["--selection"].choices) == tuple(SELECTIONS)
    assert tuple(options("simulate")["--placement"].choices) == tuple(PLACEMENTS)
    for command in ("measure", "measure-validate"):
        assert tuple(options(command)["--backend"].choices) == tuple(BACKEND_NAMES)


def test_version_flag_prints_the_package_version(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.strip() == f"cosched {cosched.__version__}"


def test_warnings_print_as_one_line_naming_the_command(tmp_path, capsys):
    heatmap = tmp_path / "gaps.csv"
    heatmap.write_text(
        HEADER + "a,4,10,b,4,20,12,\nb,4,20,c,4,5,6,7\n"
    )  # a|b measured in one direction only: the mirrored pair stands in (a warning)
    workload = tmp_path / "w.csv"
    assert (
        run(
            capsys,
            "generate-workload",
            "--heatmap",
            heatmap,
            "--jobs",
            6,
            "--out",
            workload,
            "--quiet",
        )[0]
        == 0
    )
    code, out, err = run(
        capsys,
        "simulate",
        "--workload",
        workload,
        "--platform",
        "grvingt",
        "--scheduler",
        "easy-co",
        "--heatmap",
        heatmap,
        "--default-speedup",
        1,
        "--quiet",
        "--json",
    )
    assert code == 0 and json.loads(out)["jobs"] == 6
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("cosched simulate: warning: ")
    assert "unmeasured pairs" in lines[0] and "warnings.warn" not in err and "Warning" not in err


def _blocked(tmp_path, kind):
    """A path no output can go to: under a plain file, or a plain file where a folder is wanted."""
    plain = tmp_path / "plain"
    plain.write_text("")
    return plain if kind == "file-for-folder" else plain / "sub"


@pytest.mark.parametrize(
    "argv, flag",
    [
        (
            [
                "simulate",
                "--workload",
                "{w}",
                "--platform",
                "grvingt",
                "--out",
                "{tmp}/run",
                "--plots",
                "{blocked}",
            ],
            "--plots",
        ),
        (["simulate", "--workload", "{w}", "--platform", "grvingt", "--out", "{blocked}"], "--out"),
        (["compare", "--workload", "{w}", "--platform", "grvingt", "--out", "{blocked}"], "--out"),
        (["experiment", "--preset", "small", "--out", "{blocked}"], "--out"),
        (
            ["experiment", "--preset", "small", "--out", "{tmp}/run", "--plots", "{blocked}"],
            "--plots",
        ),
        (["experiment-sim", "--preset", "example-small", "--out", "{blocked}"], "--out"),
        (["measure", "--kernels", "compute", "--out", "{blocked}"], "--out"),
        (
            [
                "measure-validate",
                "--kernels",
                "compute",
                "--out",
                "{tmp}/run",
                "--plots",
                "{blocked}",
            ],
            "--plots",
        ),
        (["measure-validate", "--kernels", "compute", "--out", "{blocked}"], "--out"),
        (["measure-speeds", "{w}", "--out", "{blocked}/x.csv"], "--out"),
        (
            ["generate-workload", "--heatmap", "{h}", "--jobs", "3", "--out", "{blocked}/w.csv"],
            "--out",
        ),
        (["heatmap", "{h}", "--plots", "{blocked}/h.png"], "--plots"),
        (["heatmap", "{h}", "--instance", "{blocked}/h.json"], "--instance"),
        (["demo", "--n", "3", "--out", "{blocked}/d.png"], "--out"),
        (["demo", "--n", "3", "--plots", "{blocked}/d.png"], "--plots"),
        (["generate", "--n", "3", "--out", "{blocked}/i.json"], "--out"),
    ],
)
@pytest.mark.parametrize("kind", ["file-for-folder", "under-a-file"])
def test_outputs_are_checked_before_any_work(tmp_path, capsys, argv, flag, kind):
    w, h = tmp_path / "w.csv", tmp_path / "h.csv"
    w.write_text(WORKLOAD)
    h.write_text(HEADER + "a,4,10,b,4,20,15,30\n")
    blocked = _blocked(tmp_path, kind)
    before = sorted(tmp_path.rglob("*"))
    code, out, err = run(capsys, *[a.format(w=w, h=h, tmp=tmp_path, blocked=blocked) for a in argv])
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and f"field '{flag}'" in err and "cannot write the output" in err
    assert sorted(tmp_path.rglob("*")) == before  # nothing written, no folder created


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_unwritable_folder_is_refused_before_any_work(tmp_path, capsys):
    w = tmp_path / "w.csv"
    w.write_text(WORKLOAD)
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        code, _, err = run(
            capsys,
            "simulate",
            "--workload",
            w,
            "--platform",
            "grvingt",
            "--out",
            tmp_path / "run",
            "--plots",
            locked / "plots",
        )
    finally:
        locked.chmod(0o700)
    assert code == 2 and "permission denied" in err and "field '--plots'" in err
    assert not (tmp_path / "run").exists()


def test_check_outputs_accepts_new_and_existing_locations_and_creates_nothing(tmp_path):
    (tmp_path / "old").mkdir()
    (tmp_path / "f.csv").write_text("")
    check_outputs(
        ("--out", tmp_path / "old", "folder"),
        ("--out", tmp_path / "new" / "deeper", "folder"),
        ("--out", tmp_path / "f.csv", "file"),
        ("--plots", tmp_path / "p.png", "plot"),
        ("--out", None, "file"),
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.csv", "old"]
    with pytest.raises(InputError, match="'.xyz'"):
        check_outputs(("--plots", tmp_path / "p.xyz", "plot"))
    with pytest.raises(InputError, match="is a directory"):
        check_outputs(("--out", tmp_path / "old", "file"))


def test_simulate_plots_go_into_the_out_folder_when_asked(tmp_path, capsys):
    w = tmp_path / "w.csv"
    w.write_text(WORKLOAD)
    common = ["simulate", "--workload", w, "--platform", "grvingt", "--quiet"]
    assert run(capsys, *common, "--out", tmp_path / "a", "--plots")[0] == 0
    assert {"jobs.csv", "summary.json", "plots"} <= {p.name for p in (tmp_path / "a").iterdir()}
    assert "utilization_queue.png" in {p.name for p in (tmp_path / "a" / "plots").iterdir()}
    for folder, flags in (("b", ["--no-plots"]), ("c", [])):  # off by default, as before
        assert run(capsys, *common, "--out", tmp_path / folder, *flags)[0] == 0
        assert sorted(p.name for p in (tmp_path / folder).iterdir()) == ["jobs.csv", "summary.json"]
    code, _, err = run(capsys, *common, "--plots")  # no --out: nowhere to put them
    assert code == 2 and "field '--plots'" in err


def test_outputs_are_announced_on_stderr_unless_quiet(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    w = tmp_path / "w.csv"
    w.write_text(WORKLOAD)
    code, _, err = run(
        capsys,
        "simulate",
        "--workload",
        w,
        "--platform",
        "grvingt",
        "--out",
        "run",
        "--no-plots",
        "--json",
    )
    assert (
        code == 0 and err.splitlines()[-1] == "cosched simulate: wrote run/: jobs.csv, summary.json"
    )
    code, out, err = run(
        capsys, "demo", "--n", 3, "--json"
    )  # the default plot file, in the current folder
    assert code == 0 and json.loads(out)["plot"] == "demo.png" and (tmp_path / "demo.png").exists()
    assert "cosched demo: wrote demo.png" in err
    code, _, err = run(
        capsys, "simulate", "--workload", w, "--platform", "grvingt", "--out", "run2", "--quiet"
    )
    assert code == 0 and err == ""


def test_simulate_text_output_carries_units_and_uses_compare_units(tmp_path, capsys):
    w = tmp_path / "w.csv"
    w.write_text(WORKLOAD)  # a makespan of a few minutes: in seconds
    code, out, _ = run(capsys, "simulate", "--workload", w, "--platform", "grvingt")
    assert code == 0 and "makespan [s]" in out and "mean_wait [s]" in out and "e+" not in out
    code, document, _ = run(
        capsys, "simulate", "--workload", w, "--platform", "grvingt", "--quiet", "--json"
    )
    summary = json.loads(document)
    shown = float(next(line for line in out.splitlines() if "makespan [s]" in line).split()[-1])
    assert shown == pytest.approx(summary["makespan"], rel=1e-2)  # JSON keeps seconds
    code, out, _ = run(
        capsys, "compare", "--workload", w, "--platform", "grvingt", "--scheduler", "easy"
    )
    assert code == 0 and "makespan [s]" in out.splitlines()[1] and "wait [s]" in out.splitlines()[1]
    code, out, _ = run(
        capsys, "simulate", "--workload", "kth-sp2", "--platform", "kth-sp2", "--limit", 300
    )
    assert code == 0 and "makespan [d]" in out  # 300 jobs of KTH-SP2 span days


def test_json_schedules_name_the_tasks_of_their_indices(tmp_path, capsys):
    path = tmp_path / "i.json"
    assert run(capsys, "generate", "--n", 3, "--out", path, "--quiet")[0] == 0
    for command in ("opt", "run"):
        code, out, _ = run(capsys, command, path, "--json")
        document = json.loads(out)
        assert code == 0 and document["tasks"] == ["T1", "T2", "T3"]
        assert all(0 <= i < 3 for step in document["schedule"] for i in step["combination"])


def test_default_seed_makes_random_commands_repeatable(tmp_path, capsys):
    for name in ("a.json", "b.json"):
        assert run(capsys, "generate", "--n", 4, "--out", tmp_path / name, "--quiet")[0] == 0
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()


def test_one_strategy_or_scheduler_for_one_run_commands(tmp_path, capsys):
    path = tmp_path / "i.json"
    assert run(capsys, "generate", "--n", 3, "--out", path, "--quiet")[0] == 0
    code, _, err = run(capsys, "run", path, "--strategy", "fcs,ucb")
    assert code == 2 and err.count("\n") == 1 and "field '--strategy'" in err


def test_unknown_registry_names_and_strategy_options_are_input_errors():
    from cosched.registry import build
    from cosched.simulator.schedulers import make_scheduler
    from cosched.strategies.fcs import FCS
    from cosched.strategies.interpolation import Bounds

    with pytest.raises(InputError, match="unknown widget 'x'; known: a"):
        build({"a": dict}, "x", "widget")
    with pytest.raises(InputError, match="unknown scheduler"):
        make_scheduler("nope")
    with pytest.raises(InputError, match="field 'depth'"):
        make_scheduler("easy", depth=-1)
    with pytest.raises(InputError, match="field 'tie_break'"):
        FCS("sideways")
    with pytest.raises(InputError, match="field 'bounds'"):
        Bounds(3, "loose")


def test_counter_fallback_notice_is_one_short_line_and_quiet_silences_it(capsys):
    from cosched.measurement.cli import _fallback

    reason = (
        "perf_event_open(type=0, config=0, tid=0): the kernel has no such hardware event (ENOENT); "
        * 4
    )
    args = argparse.Namespace(command="measure", backend="auto", quiet=False)
    _fallback(args, reason, "the reason is in report.json")
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and len(err) < 160 and err.startswith("cosched measure: note: ")
    _fallback(argparse.Namespace(command="measure", backend="auto", quiet=True), reason, "x")
    _fallback(
        argparse.Namespace(command="measure", backend="cputime", quiet=False),
        "cputime requested",
        "x",
    )
    assert capsys.readouterr().err == ""


def test_compare_out_is_a_folder_and_the_old_csv_file_form_still_works(tmp_path, capsys):
    w = tmp_path / "w.csv"
    w.write_text(WORKLOAD)
    common = [
        "compare",
        "--workload",
        w,
        "--platform",
        "grvingt",
        "--scheduler",
        "easy",
        "--quiet",
        "--json",
    ]
    assert run(capsys, *common, "--out", tmp_path / "folder")[0] == 0
    assert (tmp_path / "folder" / "compare.csv").is_file()
    assert run(capsys, *common, "--out", tmp_path / "mine.csv")[0] == 0  # old form: the file itself
    assert (tmp_path / "mine.csv").is_file()
