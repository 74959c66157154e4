"""OPT is scale-invariant and never returns a wrong answer (002 §4.1, LP (3)): OPT(c b) = c OPT(b)
for c from 1e-12 to 1e12 with both backends and both methods, tasks whose work lies orders of
magnitude apart are solved alike by both backends, every returned schedule does the work b within
VERIFY_TOLERANCE, a solver answer that fails the check raises SolverError, and the fuzzed work
values of the issue end in exit 0 with the right answer or exit 2 with one line through the real
CLI."""

import json
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cosched.cli import main
from cosched.errors import InputError
from cosched.theory import opt as opt_module
from cosched.theory.generators import random_instance
from cosched.theory.instance import Instance, instance_to_json, save_instance
from cosched.theory.opt import OPTIMALITY_TOLERANCE, VERIFY_TOLERANCE, SolverError, solve_opt
from cosched.theory.testing import instances

SCALE_AGREEMENT = 1e-9  # relative: OPT(c b) against c OPT(b)
# log-uniform c
SCALES = st.floats(min_value=-12, max_value=12).map(lambda exponent: 10.0**exponent)
COMBOS = [("highs", "direct"), ("highs", "colgen"), ("pulp", "direct"), ("pulp", "colgen")]
# CBC runs as a subprocess per LP: fewer examples keep the suite fast
EXAMPLES = {
    "highs": 25,
    "pulp": 10,
}


def scaled(instance: Instance, factor: float) -> Instance:
    return Instance(instance.work * factor, instance.combinations, instance.speeds, instance.tasks)


def assert_does_the_work(result, instance):
    """The schedule does every task's work b_i within VERIFY_TOLERANCE of b_i (A x = b,
    002 §4.1).
    """
    done = result.schedule.work_done(instance)
    assert np.all(np.abs(done - instance.work) <= VERIFY_TOLERANCE * instance.work), (
        done,
        instance.work,
    )
    assert np.all(result.times >= 0) and np.isfinite(result.makespan)
    assert result.schedule.makespan == pytest.approx(result.makespan, rel=1e-12)


def check_scale_invariance(instance, factor, backend, method):
    base = solve_opt(instance, method, backend)
    big = scaled(instance, factor)
    result = solve_opt(big, method, backend)
    assert result.makespan == pytest.approx(factor * base.makespan, rel=SCALE_AGREEMENT)
    assert_does_the_work(base, instance)
    assert_does_the_work(result, big)


@pytest.mark.parametrize("backend, method", COMBOS)
def test_opt_of_scaled_work_is_scaled_opt(backend, method):
    @settings(max_examples=EXAMPLES[backend])
    @given(instances(n=(1, 4), max_size=(1, 4)), SCALES)
    def check(instance, factor):
        check_scale_invariance(instance, factor, backend, method)

    check()


@pytest.mark.slow
@pytest.mark.parametrize("backend, method", COMBOS)
def test_opt_of_scaled_work_is_scaled_opt_larger_sweep(backend, method):
    @settings(max_examples=200 if backend == "highs" else 60)
    @given(instances(n=(1, 9), alpha=(0.0, 1.0), max_size=(1, 9), work=(1e-3, 1e3)), SCALES)
    def check(instance, factor):
        check_scale_invariance(instance, factor, backend, method)

    check()


def check_spread_work(instance, exponents, combos):
    """Tasks' work spread over many orders of magnitude: every combination solves, does the work,
    and agrees."""
    spread = Instance(
        instance.work * 10.0 ** np.resize(exponents, instance.n),
        instance.combinations,
        instance.speeds,
        instance.tasks,
    )
    makespans = []
    for backend, method in combos:
        result = solve_opt(spread, method, backend)
        assert_does_the_work(result, spread)
        makespans.append(result.makespan)
    assert max(makespans) == pytest.approx(min(makespans), rel=1e-8)


SPREADS = st.lists(st.floats(min_value=-12, max_value=12), min_size=1, max_size=6)


@settings(max_examples=12)
@given(instances(n=(2, 5), max_size=(1, 5)), SPREADS)
def test_work_spread_over_24_orders_of_magnitude_is_solved_by_both_backends(instance, exponents):
    check_spread_work(instance, exponents, [("highs", "direct"), ("pulp", "direct")])


@pytest.mark.slow
@settings(max_examples=150)
@given(
    instances(n=(2, 8), alpha=(0.0, 1.0), max_size=(1, 8)),
    st.lists(st.floats(min_value=-100, max_value=100), min_size=1, max_size=8),
)
def test_work_spread_over_200_orders_of_magnitude_all_methods_agree(instance, exponents):
    check_spread_work(instance, exponents, COMBOS)


@pytest.mark.parametrize("backend", ["highs", "pulp"])
@pytest.mark.parametrize("factor", [1e-11, 1e-8, 1e-320 / 100, 1e200, 1e12])
def test_the_fuzzed_scales_give_the_scaled_answer_or_an_input_error(backend, factor):
    # the 1e-11 case was 1.3 % (HiGHS) and 100 % (CBC) too small
    instance = random_instance(8, seed=0)
    reference = solve_opt(instance, "direct", "highs").makespan
    work = instance.work * factor
    if (work < 2.2250738585072014e-308).any():  # subnormal: refused, naming the field
        with pytest.raises(InputError, match="WORK_MIN") as caught:
            solve_opt(scaled(instance, factor), backend=backend)
        assert caught.value.field == "work"
        return
    for method in ("direct", "colgen"):
        result = solve_opt(scaled(instance, factor), method, backend)
        assert result.makespan == pytest.approx(factor * reference, rel=SCALE_AGREEMENT)
        assert_does_the_work(result, scaled(instance, factor))


@pytest.mark.parametrize("backend", ["highs", "pulp"])
def test_a_task_with_tiny_work_next_to_large_ones_is_done(backend):
    # T1 with (0.8, 0.6) in the pair: run the pair for b1 / 0.8, then T2 alone (002 §4.1, LP (3))
    instance = Instance([1e-11, 1.0], [1, 2, 3], [[1.0, 0.0, 0.8], [0.0, 1.0, 0.6]])
    result = solve_opt(instance, "direct", backend)
    assert_does_the_work(result, instance)
    # T1's choice moves C_max by 1e-11 at most
    assert result.makespan == pytest.approx(1.0 + 0.5e-11, rel=1e-11)
    if backend == "highs":
        assert result.times.tolist() == pytest.approx(
            [0.0, 1.0 - 0.6 * 1.25e-11, 1.25e-11], rel=1e-12, abs=0
        )


def test_duals_are_in_user_units_at_any_scale():
    instance = random_instance(5, seed=3)
    for factor in (1e-9, 1.0, 1e9):
        big = scaled(instance, factor)
        result = solve_opt(big, "colgen")
        assert (1 - result.duals @ big.speeds).min() >= -1e-9  # y^T A <= 1
        assert result.duals @ big.work == pytest.approx(result.makespan, rel=1e-9)  # y^T b = OPT


def test_a_solver_answer_that_misses_work_is_an_error_not_a_result(monkeypatch):
    real = opt_module._solve_highs

    def short_of_work(matrix, costs, work):
        z, duals = real(matrix, costs, work)
        z = z.copy()
        # one combination runs 6 % too short: some task's work is never done
        z[np.argmax(z)] *= 0.94
        return z, duals

    monkeypatch.setattr(opt_module, "_polish", lambda matrix, costs, work, z, pi: (z, pi))
    monkeypatch.setattr(opt_module, "_solve_highs", short_of_work)
    with pytest.raises(SolverError, match="A x = b.*VERIFY_TOLERANCE") as caught:
        solve_opt(random_instance(4, seed=1), "direct")
    assert caught.value.field == "work" and isinstance(caught.value, InputError)


def test_a_feasible_but_not_optimal_answer_is_an_error(monkeypatch):
    # every task alone (columns 0, 1, 3 hold {T1}, {T2}, {T3}): not optimal
    def sequential(matrix, costs, work):
        z = np.zeros(matrix.shape[1])
        for task, column in enumerate((0, 1, 3)):
            z[column] = work[task] / matrix[task, column]
        return z, np.zeros(matrix.shape[0])

    monkeypatch.setattr(opt_module, "_solve_highs", sequential)
    with pytest.raises(SolverError, match="not certified optimal"):
        solve_opt(random_instance(3, seed=2), "direct")
    assert OPTIMALITY_TOLERANCE <= 1e-7


# --- through the real CLI -------------------------------------------------------------------------


def cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def base():
    instance = random_instance(6, seed=4)
    return instance, solve_opt(instance, "direct", "highs").makespan


# (how the work vector b is replaced, the answer: scale factor of OPT, or None for exit 2)
FUZZED_WORK = [
    ("scale 1e-11", lambda b: b * 1e-11, 1e-11),
    ("scale 1e200", lambda b: b * 1e200, 1e200),
    ("1e-320", lambda b: np.full_like(b, 1e-320), None),
    ("one 1e-320", lambda b: np.r_[1e-320, b[1:]], None),
    ("zero", lambda b: np.r_[0.0, b[1:]], None),
    ("negative", lambda b: np.r_[-b[0], b[1:]], None),
    ("nan", lambda b: np.r_[np.nan, b[1:]], None),
    ("inf", lambda b: np.r_[np.inf, b[1:]], None),
    ("1e308 overflows the makespan", lambda b: np.full_like(b, 1.7e308), None),
]


@pytest.mark.parametrize("suffix", ["json", "npz"])
@pytest.mark.parametrize("backend", ["highs", "pulp"])
@pytest.mark.parametrize(
    "label, change, factor", FUZZED_WORK, ids=[case[0] for case in FUZZED_WORK]
)
def test_cli_on_fuzzed_work_is_right_or_one_line(
    tmp_path, capsys, base, suffix, backend, label, change, factor
):
    instance, reference = base
    path = tmp_path / f"instance.{suffix}"
    work = change(instance.work.copy())
    if suffix == "json":
        document = instance_to_json(instance) | {"work": work.tolist()}
        path.write_text(json.dumps(document, allow_nan=True))
    else:
        np.savez(
            path,
            work=work,
            combinations=instance.combinations,
            speeds=instance.speeds,
            tasks=np.asarray(instance.tasks),
        )
    code, out, err = cli(capsys, "opt", path, "--backend", backend, "--json")
    if factor is None:
        assert code == 2 and out == "" and err.count("\n") == 1, err
        assert str(path) in err and "field 'work'" in err and "Traceback" not in err
        return
    assert code == 0 and err == "", err
    document = json.loads(out)
    assert document["makespan"] == pytest.approx(factor * reference, rel=SCALE_AGREEMENT)
    done = np.zeros(instance.n)
    for step in document["schedule"]:
        done += instance.column(sum(1 << i for i in step["combination"])) * step["time"]
    assert np.all(np.abs(done - work) <= VERIFY_TOLERANCE * work)


def test_python_m_cosched_opt_on_scaled_work(tmp_path):
    instance = random_instance(6, seed=4)
    reference = solve_opt(instance).makespan
    tiny, subnormal = tmp_path / "tiny.json", tmp_path / "subnormal.json"
    save_instance(scaled(instance, 1e-11), tiny)
    subnormal.write_text(json.dumps(instance_to_json(instance) | {"work": [1e-320] * instance.n}))
    ok = subprocess.run(
        [sys.executable, "-m", "cosched", "opt", str(tiny), "--backend", "pulp", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ok.returncode == 0 and ok.stderr == ""
    assert json.loads(ok.stdout)["makespan"] == pytest.approx(
        1e-11 * reference, rel=SCALE_AGREEMENT
    )
    refused = subprocess.run(
        [sys.executable, "-m", "cosched", "opt", str(subnormal)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert refused.returncode == 2 and refused.stdout == ""
    assert (
        refused.stderr.count("\n") == 1
        and str(subnormal) in refused.stderr
        and "field 'work'" in refused.stderr
    )
