"""The Instance model, its validation (002 §3) and the JSON / NPZ file formats."""

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cosched.errors import InputError
from cosched.theory.generators import random_instance
from cosched.theory.instance import (
    Instance,
    _all_subset_pairs,
    instance_from_json,
    instance_to_json,
    load_instance,
    monotonicity_violations,
    save_instance,
    validate,
)
from cosched.theory.lattice import combinations_up_to
from cosched.theory.testing import instances


def two_task_document(**changes):
    document = {
        "tasks": ["a", "b"],
        "work": [10.0, 20.0],
        "combinations": [[0], [1], [0, 1]],
        "speeds": [[1.0], [1.0], [0.8, 0.6]],
    }
    document.update(changes)
    return document


def write(tmp_path, document, name="instance.json"):
    path = tmp_path / name
    path.write_text(document if isinstance(document, str) else json.dumps(document))
    return path


def test_json_document_builds_the_speed_matrix_in_bitmask_order():
    instance = instance_from_json(
        two_task_document(combinations=[[0, 1], [1], [0]], speeds=[[0.8, 0.6], [1.0], [1.0]])
    )
    assert instance.combinations.tolist() == [1, 2, 3]
    assert instance.speeds.tolist() == [[1.0, 0.0, 0.8], [0.0, 1.0, 0.6]]
    assert instance.combination_speeds.tolist() == pytest.approx([1.0, 1.0, 1.4])


def test_task_names_may_replace_indices_in_combinations():
    instance = instance_from_json(
        two_task_document(
            combinations=[["a"], ["b"], ["b", "a"]], speeds=[[1.0], [1.0], [0.6, 0.8]]
        )
    )
    assert instance.speeds[:, 2].tolist() == [0.8, 0.6]


def test_instance_is_immutable():
    instance = random_instance(3, seed=0)
    with pytest.raises(ValueError):
        instance.speeds[0, 0] = 0.5
    with pytest.raises(AttributeError):
        instance.work = np.ones(3)


@settings(max_examples=20)
@given(instances(n=(1, 6), max_size=(1, 6)), st.sampled_from(["json", "npz"]))
def test_save_then_load_round_trips_exactly(tmp_path_factory, instance, suffix):
    path = tmp_path_factory.mktemp("roundtrip") / f"instance.{suffix}"
    save_instance(instance, path)
    loaded = load_instance(path)
    assert np.array_equal(loaded.work, instance.work)
    assert np.array_equal(loaded.combinations, instance.combinations)
    assert np.array_equal(loaded.speeds, instance.speeds)
    assert loaded.tasks == instance.tasks


@pytest.mark.parametrize(
    "document, field",
    [
        ({"work": [1.0]}, "combinations"),
        (two_task_document(work="x"), "work"),
        (two_task_document(work=[]), "work"),
        (two_task_document(tasks=["a"]), "tasks"),
        (two_task_document(tasks=["a", "a"]), "tasks"),
        (two_task_document(combinations=[[0], [1], [0, 5]]), "combinations[2]"),
        (two_task_document(combinations=[[0], [1], [0, 0]]), "combinations[2]"),
        (two_task_document(combinations=[[0], [1], []]), "combinations[2]"),
        (two_task_document(speeds=[[1.0], [1.0], [0.8]]), "speeds[2]"),
        (two_task_document(speeds=[[1.0], [1.0]]), "speeds"),
        (
            two_task_document(combinations=[[0], [1], [1, 0]], speeds=[[1.0], [1.0], [0.8, 0.6]])
            | {"combinations": [[0], [0], [0, 1]]},
            "combinations",
        ),
        (two_task_document(work=[10.0, -1.0]), "work"),
        (two_task_document(speeds=[[1.0], [1.0], [0.8, 1.5]]), "speeds"),
        (two_task_document(speeds=[[1.0], [1.0], [0.8, -0.1]]), "speeds"),
        (two_task_document(speeds=[[0.9], [1.0], [0.8, 0.6]]), "speeds"),
    ],
)
def test_malformed_json_names_file_and_field(tmp_path, document, field):
    path = write(tmp_path, document)
    with pytest.raises(InputError) as caught:
        load_instance(path)
    assert caught.value.source == str(path) or str(path) in str(caught.value)
    assert f"field '{field}'" in str(caught.value)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("{", "not valid JSON"),
        ("[1, 2]", "JSON object"),
        (b"\xff\xfe", "UTF-8"),
    ],
)
def test_unreadable_json_is_an_input_error(tmp_path, text, expected):
    path = tmp_path / "bad.json"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(InputError, match=expected):
        load_instance(path)


def test_missing_file_and_directory_are_input_errors(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        load_instance(tmp_path / "absent.json")
    with pytest.raises(InputError, match="directory"):
        load_instance(tmp_path)


def test_malformed_npz_names_the_array(tmp_path):
    path = tmp_path / "bad.npz"
    np.savez(path, work=np.ones(2), speeds=np.ones((2, 3)))
    with pytest.raises(InputError, match="field 'combinations'"):
        load_instance(path)
    np.savez(path, work=np.ones(2), combinations=np.array([1.0, 2.0, 3.0]), speeds=np.ones((2, 3)))
    with pytest.raises(InputError, match="integer bitmasks"):
        load_instance(path)
    np.savez(
        path, work=np.array(["a", "b"]), combinations=np.array([1, 2, 3]), speeds=np.ones((2, 3))
    )
    with pytest.raises(InputError, match="field 'work'"):
        load_instance(path)
    np.savez(path, work=np.ones(2), combinations=np.array([1, 2, 3]), speeds=np.ones((3, 3)))
    with pytest.raises(InputError, match="field 'speeds'.*shape"):
        load_instance(path)
    path.write_bytes(b"not a zip archive")
    with pytest.raises(InputError, match="npz"):
        load_instance(path)


def test_non_monotone_speeds_are_listed_and_can_be_accepted(tmp_path):
    document = two_task_document(speeds=[[1.0], [1.0], [1.2, 0.6]])
    path = write(tmp_path, document)
    with pytest.raises(InputError, match="at most 1"):
        load_instance(path)
    accepted = load_instance(path, monotone=False)
    assert accepted.speeds[0, 2] == 1.2
    three = random_instance(3, seed=4)
    speeds = three.speeds.copy()
    speeds[0, 6] = speeds[0, 2] + 0.01  # T1 faster in {T1, T2, T3} than in {T1, T2}
    broken = Instance(three.work, three.combinations, speeds)
    violations = monotonicity_violations(broken)
    assert (0, 3, 7) in [(v.task, v.subset, v.superset) for v in violations]
    with pytest.raises(InputError, match="not monotone.*T1"):
        validate(broken)
    assert validate(broken, monotone=False) is broken


def test_normalize_divides_work_and_speeds_by_the_speed_alone(tmp_path):
    document = two_task_document(speeds=[[2.0], [0.5], [1.6, 0.3]])
    path = write(tmp_path, document)
    with pytest.raises(InputError, match="field 'speeds'"):
        load_instance(path)
    instance = load_instance(path, normalize=True)
    assert instance.work.tolist() == [5.0, 40.0]
    assert instance.speeds[:, 2].tolist() == pytest.approx([0.8, 0.6])


def test_restrict_keeps_sizes_and_explicit_lists():
    instance = random_instance(5, seed=2)
    small = instance.restrict(max_size=2)
    assert small.m == 15 and small.sizes.max() == 2
    chosen = instance.restrict(combinations=[1, 2, 3, 31])
    assert chosen.combinations.tolist() == [1, 2, 3, 31]
    assert np.array_equal(chosen.speeds[:, 3], instance.speeds[:, 30])


def test_nonzero_speed_outside_a_combination_is_rejected():
    for instance in (random_instance(4, seed=1), random_instance(4, seed=1, max_size=3)):
        for column in range(instance.m):
            for outsider in np.flatnonzero(instance.speeds[:, column] == 0):
                speeds = instance.speeds.copy()
                speeds[outsider, column] = 0.1
                with pytest.raises(InputError, match="not part of"):
                    validate(Instance(instance.work, instance.combinations, speeds))


@settings(max_examples=25)
@given(instances(n=(2, 6)), st.integers(0, 2**32 - 1))
def test_lattice_view_check_finds_the_same_violations_as_pairwise_check(instance, seed):
    rng = np.random.default_rng(seed)
    speeds = instance.speeds.copy()
    columns = rng.integers(0, instance.m, size=3)
    speeds[:, columns] = np.where(speeds[:, columns] > 0, speeds[:, columns] * 1.3, 0)
    broken = Instance(instance.work, instance.combinations, speeds)
    fast = {(v.task, v.subset, v.superset) for v in monotonicity_violations(broken)}
    one_step = set()
    for subset, superset, _rows in _all_subset_pairs(broken):
        step = broken.combinations[superset] & ~broken.combinations[subset]
        direct = (step & (step - 1)) == 0
        for s, q in zip(subset[direct], superset[direct]):
            for task in np.flatnonzero(broken.speeds[:, s] > 0):
                if broken.speeds[task, s] < broken.speeds[task, q] - 1e-9:
                    one_step.add(
                        (int(task), int(broken.combinations[s]), int(broken.combinations[q]))
                    )
    assert fast == one_step


def test_non_downward_closed_sets_check_every_subset_pair():
    # {T1}, {T2, T3}, {T1, T2, T3}: the one-task-smaller subsets are mostly missing
    masks = [
        1,
        6,
        7,
    ]
    speeds = np.array([[1.0, 0.0, 0.5], [0.0, 0.9, 0.5], [0.0, 0.9, 0.5]])
    assert monotonicity_violations(Instance(np.ones(3), masks, speeds)) == []
    speeds[1, 2] = 0.95  # T2 faster in {T1, T2, T3} than in {T2, T3}
    found = {
        (v.task, v.subset, v.superset)
        for v in monotonicity_violations(Instance(np.ones(3), masks, speeds))
    }
    assert found == {(1, 6, 7)}


def test_index_finds_columns_of_complete_and_restricted_instances():
    complete = random_instance(4, seed=0)
    assert complete.index([1, 15, 16, 0]).tolist() == [0, 14, -1, -1]
    restricted = complete.restrict(max_size=2)
    assert restricted.index([3, 7, 12]).tolist() == [2, -1, restricted.m - 1]
    assert np.array_equal(restricted.combinations, combinations_up_to(4, 2))


def test_n20_npz_loads_and_validates(tmp_path):
    instance = random_instance(20, seed=0, max_size=3)
    path = save_instance(instance, tmp_path / "n20.npz")
    assert load_instance(path).m == instance.m


# --- one validation path for JSON and NPZ (structure in Instance, numbers in validate) ------------


def npz_file(tmp_path, **changes):
    instance = random_instance(3, seed=1, max_size=2)
    arrays = {
        "work": instance.work,
        "combinations": instance.combinations,
        "speeds": instance.speeds,
        "tasks": np.array(["a", "b", "c"]),
    } | changes
    path = tmp_path / "instance.npz"
    np.savez(path, **{key: value for key, value in arrays.items() if value is not None})
    return path


def test_n100_json_names_the_file_the_field_and_max_tasks(tmp_path):
    path = write(
        tmp_path,
        {"work": [1.0] * 100, "combinations": [[i] for i in range(100)], "speeds": [[1.0]] * 100},
    )
    with pytest.raises(InputError, match=r"100 tasks exceed the limit MAX_TASKS = 62") as caught:
        load_instance(path)
    assert caught.value.source == str(path) and caught.value.field == "work"


@pytest.mark.parametrize(
    "tasks, expected",
    [
        (["a", "b", "a"], "'a' is given twice"),
        (["a", "", "c"], "non-empty printable"),
        (["a", "b\nc", "d"], "non-empty printable"),
        (["a", "b"], "2 task names for 3 tasks"),
    ],
)
def test_task_names_are_checked_alike_in_json_and_npz(tmp_path, tasks, expected):
    instance = random_instance(3, seed=1, max_size=2)
    json_path = write(tmp_path, json.dumps(instance_to_json(instance) | {"tasks": tasks}))
    for path in (json_path, npz_file(tmp_path, tasks=np.array(tasks))):
        with pytest.raises(InputError, match=expected) as caught:
            load_instance(path)
        assert caught.value.field == "tasks" and caught.value.source == str(path)
        assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    "work, expected",
    [
        ([10**400, 1.0], "finite and positive"),
        ([1e-320, 1.0], "WORK_MIN"),
        ([0.0, 1.0], "finite and positive"),
    ],
)
def test_unusable_work_values_name_the_field(tmp_path, work, expected):
    with pytest.raises(InputError, match=expected) as caught:
        load_instance(write(tmp_path, two_task_document(work=work)))
    assert caught.value.field == "work"


def test_huge_work_is_accepted_and_huge_integer_speeds_are_named(tmp_path):
    assert load_instance(write(tmp_path, two_task_document(work=[1e200, 3e200]))).work[1] == 3e200
    with pytest.raises(InputError, match="finite") as caught:
        load_instance(write(tmp_path, two_task_document(speeds=[[1.0], [1.0], [10**400, 0.5]])))
    assert caught.value.field == "speeds"


@pytest.mark.parametrize(
    "text, expected",
    [
        ("[" * 100_000, "nested too deeply|not valid JSON"),
        ('{"work": [' + "9" * 5000 + "]}", "not valid JSON"),
    ],
)
def test_pathological_json_is_one_input_error(tmp_path, text, expected):
    with pytest.raises(InputError, match=expected):
        load_instance(write(tmp_path, text))


def test_json_with_a_utf8_byte_order_mark_loads(tmp_path):
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(two_task_document()).encode())
    assert load_instance(path).tasks == ("a", "b")


@pytest.mark.parametrize(
    "changes, field",
    [
        ({"tasks": np.array([1, 2, 3])}, "tasks"),
        ({"tasks": np.array([["a", "b", "c"]])}, "tasks"),
        ({"combinations": np.array([1, 2, 4, 3, 5, 1 << 40])}, "combinations"),
        ({"combinations": np.array([1, 2, 4, 3, 5, 5])}, "combinations"),
        ({"work": np.array([1.0, np.nan, 1.0])}, "work"),
        ({"work": np.ones((3, 1))}, "work"),
        ({"work": np.array([True, True, True])}, "work"),
        ({"speeds": None}, "speeds"),
    ],
)
def test_malformed_npz_arrays_name_their_field(tmp_path, changes, field):
    with pytest.raises(InputError) as caught:
        load_instance(npz_file(tmp_path, **changes))
    assert caught.value.field == field and "\n" not in str(caught.value)
