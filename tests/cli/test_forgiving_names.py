"""Names that forgive: one resolver for every name list (case-insensitive, "did you mean"), and an
unknown flag answered by its command, naming the command that has it."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cosched.cli import main
from cosched.errors import InputError
from cosched.names import canonical, is_plugin, resolve_name

KNOWN = ("easy", "fcfs", "conservative", "sjf-malleable")


@pytest.mark.parametrize(
    "argv, suggestion",
    [
        (["simulate", "--workload", "kth-sp2", "--platform", "kth-sp2", "--hybrid", "cua-spa"],
         "did you mean 'cua-spaa'?"),
        (["experiment-sim", "--preset", "exmple", "--out", "OUT"], "did you mean 'example'?"),
        (["measure", "--kernels", "compte", "--out", "OUT"], "did you mean 'compute'?"),
        (["heatmap", "aris-nass"], "did you mean 'aris-nas'?"),
        (["simulate", "--workload", "kth-sp3", "--platform", "kth-sp2", "--out", "OUT"],
         "did you mean 'kth-sp2'?"),
        (["simulate", "--workload", "kth-sp2", "--platform", "kth-sp3", "--out", "OUT"],
         "did you mean 'kth-sp2'?"),
        (["experiment-hybrid", "--workload", "kth-sp2", "--platform", "kth-sp2",
          "--mechanism", "cup-spa", "--out", "OUT"], "did you mean 'cup-spaa'?"),
    ],
)  # fmt: skip
def test_every_name_list_suggests_the_closest_name(argv, suggestion, tmp_path, capsys):
    argv = [str(tmp_path / "out") if word == "OUT" else word for word in argv]
    assert main(argv) == 2
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and suggestion in error[0]
    assert not (tmp_path / "out").exists()


def test_names_are_matched_without_regard_to_case(tmp_path, capsys):
    out = tmp_path / "run"
    argv = ["simulate", "--workload", "kth-sp2", "--platform", "KTH-SP2", "--limit", "50"]
    assert main([*argv, "--scheduler", "EASY", "--out", str(out), "--json"]) == 0
    assert '"scheduler": "easy"' in (out / "summary.json").read_text()
    instance = tmp_path / "i.json"
    assert main(["generate", "--n", "3", "--out", str(instance), "--quiet"]) == 0
    assert main(["ratio", str(instance), "--strategy", "FCS", "--json"]) == 0


@pytest.mark.parametrize(
    "argv, answer",
    [
        (["simulate", "--workload", "kth-sp2", "--platform", "kth-sp2", "--jobs", "5"],
         "cosched simulate: error: unrecognized arguments: --jobs 5; did you mean '--limit'?"),
        (["opt", "i.json", "--limit", "3"],
         "cosched opt: error: unrecognized arguments: --limit 3; --limit is a flag of simulate"),
    ],
)  # fmt: skip
def test_an_unknown_flag_is_answered_by_its_command(argv, answer, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    assert answer in capsys.readouterr().err.strip().splitlines()[-1]


def test_a_plugin_file_passes_the_resolver_unchanged():
    assert is_plugin("my_scheduler.py:Greedy") and is_plugin("sched.py")
    assert resolve_name("./my_scheduler.py:Greedy", KNOWN, "scheduler") == (
        "./my_scheduler.py:Greedy"
    )
    with pytest.raises(InputError, match="did you mean 'easy'"):
        resolve_name("EAZY", KNOWN, "scheduler")


@given(st.sampled_from(KNOWN), st.lists(st.booleans(), min_size=20, max_size=20))
def test_any_casing_of_a_known_name_resolves_to_it(name, upper):
    typed = "".join(c.upper() if flip else c for c, flip in zip(name, upper))
    assert resolve_name(typed, KNOWN, "scheduler") == name == canonical(typed, KNOWN)
