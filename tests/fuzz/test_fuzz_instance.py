"""Fuzzing the instance readers through `cosched opt`: hypothesis mutates a valid JSON or NPZ
instance file (types, huge/NaN/inf/negative/subnormal numbers, shapes, missing keys, duplicate
names, n = 100, bitmasks out of range, non-UTF-8 bytes, truncated or corrupted archives) and every
run must end in

* exit 0 with output that is right: the file loads, and the printed schedule does the work b of
  every task within VERIFY_TOLERANCE, or
* exit 2 with exactly one stderr line naming the file (and a field, for a mutation of one field),

never a traceback and never a warning on stderr. Each format is one test run in the two campaigns of
`conftest.py`: the default suite runs 120 examples per format (`[quick]`, ~5 s);
`pytest -m fuzz tests/fuzz/test_fuzz_instance.py` runs 3000 per format (`[long]`, a few minutes).
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import tempfile
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given
from hypothesis import strategies as st

from cosched.cli import main
from cosched.theory.generators import random_instance
from cosched.theory.instance import instance_to_json, load_instance
from cosched.theory.opt import VERIFY_TOLERANCE

CAMPAIGN_EXAMPLES = {"quick": 120, "long": 3000}  # read by the `campaign` fixture (conftest.py)
SUPPRESSED_HEALTH_CHECKS = list(HealthCheck)

# 6 combinations, all singletons present
BASE = random_instance(3, alpha=(0.5, 0.9), seed=7, max_size=2)
BASE_DOCUMENT = instance_to_json(BASE)
BASE_ARRAYS = {
    "work": BASE.work,
    "combinations": BASE.combinations,
    "speeds": BASE.speeds,
    "tasks": np.asarray(BASE.tasks),
}

# --- values ---------------------------------------------------------------------------------------

NUMBERS = st.one_of(
    st.sampled_from(
        [
            0,
            -1,
            1,
            0.0,
            -0.0,
            -1e-3,
            1e-320,
            5e-324,
            2.2250738585072014e-308,
            1e-11,
            1e200,
            1e308,
            1.7976931348623157e308,
            math.inf,
            -math.inf,
            math.nan,
            10**400,
            -(10**400),
            2**63,
            2**64,
            62,
            63,
            64,
            100,
        ]
    ),
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(min_value=-(2**70), max_value=2**70),
)
SCALARS = st.one_of(
    NUMBERS,
    st.none(),
    st.booleans(),
    st.text(max_size=8),
    st.sampled_from(["", "\n", "T1", "a\x00b", "\ud800", "é", "work"]),
)
JSON_VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
FIELDS = ("work", "combinations", "speeds", "tasks")


# --- running the real CLI -------------------------------------------------------------------------


def run_opt(path: Path, *options: str):
    """`cosched opt FILE [options]` in-process: (exit code, stdout, stderr, warnings raised)."""
    out, err = io.StringIO(), io.StringIO()
    with (
        warnings.catch_warnings(record=True) as caught,
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
    ):
        warnings.simplefilter("always")
        # any exception escaping here is the traceback we hunt
        code = main(["opt", str(path), *options])
    return code, out.getvalue(), err.getvalue(), caught


def check_outcome(path: Path, options: tuple, mutated_field: str | None):
    code, out, err, caught = run_opt(path, *options)
    assert not [str(w.message) for w in caught], "a warning would reach stderr"
    if code == 2:
        lines = err.splitlines()
        assert len(lines) == 1 and err.endswith("\n"), err
        assert str(path) in lines[0], err
        assert "Traceback" not in err and out == ""
        if mutated_field is not None:
            assert "field '" in lines[0], err
        return "error"
    assert code == 0, (code, err)
    assert err == ""
    instance = load_instance(
        path, monotone="--allow-nonmonotone" not in options, normalize="--normalize" in options
    )
    if "--json" not in options:
        assert out.startswith("OPT makespan")
        return "solved"
    document = json.loads(out)
    assert math.isfinite(document["makespan"]) and document["makespan"] > 0
    done = np.zeros(instance.n)
    for step in document["schedule"]:
        members = step["combination"]
        assert (
            all(0 <= i < instance.n for i in members)
            and math.isfinite(step["time"])
            and step["time"] > 0
        )
        column = int(instance.index(sum(1 << i for i in members)))
        assert column >= 0
        done += instance.speeds[:, column] * step["time"]
    assert np.all(np.abs(done - instance.work) <= VERIFY_TOLERANCE * instance.work), (
        done,
        instance.work,
    )
    assert document["makespan"] == pytest.approx(
        sum(step["time"] for step in document["schedule"]), rel=1e-12
    )
    return "solved"


OPTIONS = st.sampled_from(
    [
        ("--json",),
        ("--json", "--allow-nonmonotone"),
        ("--json", "--normalize"),
        ("--json", "--method", "colgen"),
        (),
    ]
)


# --- JSON mutations -------------------------------------------------------------------------------


@st.composite
def json_mutations(draw):
    """(file bytes, the field mutated or None): one or two structured edits, or raw byte damage."""
    document = json.loads(json.dumps(BASE_DOCUMENT))
    kind = draw(
        st.sampled_from(
            [
                "replace",
                "element",
                "delete",
                "many tasks",
                "duplicate names",
                "scale",
                "bitmask",
                "bytes",
                "truncate",
                "document",
            ]
        )
    )
    target = draw(st.sampled_from(FIELDS))
    if kind == "replace":
        document[target] = draw(JSON_VALUES)
    elif kind == "element":
        values = document[target]
        i = draw(st.integers(0, len(values) - 1))
        if target in ("combinations", "speeds") and draw(st.booleans()):
            inner = list(values[i])
            inner[draw(st.integers(0, len(inner) - 1))] = draw(JSON_VALUES)
            values[i] = inner
        else:
            values[i] = draw(JSON_VALUES)
    elif kind == "delete":
        del document[target]
    # n = 100 (past MAX_TASKS), optionally with a combination using task 99
    elif kind == "many tasks":
        target = "work"
        n = draw(st.sampled_from([62, 63, 64, 100]))
        document["work"] = [1.0] * n
        document["tasks"] = [f"t{i}" for i in range(n)]
        document["combinations"] = [[i] for i in range(n)]
        document["speeds"] = [[1.0] for _ in range(n)]
    elif kind == "duplicate names":
        target = "tasks"
        document["tasks"][draw(st.integers(1, 2))] = document["tasks"][0]
    # all work scaled by a power of ten: must be solved or refused, never wrong
    elif kind == "scale":
        target = "work"
        factor = 10.0 ** draw(st.integers(-330, 308))
        document["work"] = [b * factor for b in document["work"]]
    elif kind == "bitmask":
        target = "combinations"
        document["combinations"][draw(st.integers(0, 5))] = [draw(st.integers(-3, 70))]
    elif kind == "document":
        target = None
        document = draw(JSON_VALUES)
    raw = json.dumps(document, allow_nan=True).encode()
    if kind == "bytes":
        target = None
        position = draw(st.integers(0, len(raw)))
        junk = draw(
            st.sampled_from(
                [
                    b"\xff",
                    b"\xc3",
                    b"\x00",
                    b"\xef\xbb\xbf",
                    b"\xed\xa0\x80",
                    b"{",
                    b"]",
                    b"NaN",
                    b"1e999",
                    b"9" * 5000,
                    b"[" * 100_000,
                ]
            )
        )
        raw = raw[:position] + junk + raw[position:]
    elif kind == "truncate":
        target = None
        raw = raw[: draw(st.integers(0, len(raw) - 1))]
    return raw, target


def check_mutant(suffix: str, raw_and_field, options):
    """Write the mutant to a fresh `instance<suffix>` and check what `cosched opt` makes of it."""
    raw, mutated_field = raw_and_field
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"instance{suffix}"
        path.write_bytes(raw)
        check_outcome(path, options, mutated_field)


def test_mutated_json_instance_is_solved_or_refused_in_one_line(campaign):
    campaign(
        given(json_mutations(), OPTIONS)(
            lambda raw_and_field, options: check_mutant(".json", raw_and_field, options)
        )
    )()


# --- NPZ mutations --------------------------------------------------------------------------------

DTYPES = st.sampled_from(
    [
        np.float64,
        np.float32,
        np.float16,
        np.longdouble,
        np.int64,
        np.uint64,
        np.int8,
        bool,
        np.complex128,
        "U3",
        "S3",
        "M8[s]",
    ]
)


@st.composite
def arrays(draw):
    """An array of a random dtype and shape, with hostile values where the dtype allows them."""
    dtype = np.dtype(draw(DTYPES))
    shape = draw(
        st.sampled_from([(), (0,), (1,), (3,), (6,), (3, 6), (6, 3), (2, 2, 2), (100,), (3, 0)])
    )
    size = int(np.prod(shape))
    if dtype.kind in "US":
        values = draw(st.lists(st.text(max_size=3), min_size=size, max_size=size))
        if dtype.kind == "S":
            values = [v.encode("utf-8", "replace")[:3] for v in values]
        return np.array(values, dtype=dtype).reshape(shape)
    if dtype.kind == "M":
        return np.zeros(shape, dtype=dtype)
    values = draw(
        st.lists(
            NUMBERS.filter(lambda v: not isinstance(v, int) or abs(v) < 2**63),
            min_size=size,
            max_size=size,
        )
    )
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return np.array(values, dtype=np.float64).astype(dtype).reshape(shape)
        except (OverflowError, ValueError):
            return np.zeros(shape, dtype=dtype)


def _zip_bytes(arrays_by_name: dict, compressed: bool) -> bytes:
    buffer = io.BytesIO()
    (np.savez_compressed if compressed else np.savez)(buffer, **arrays_by_name)
    return buffer.getvalue()


@st.composite
def npz_mutations(draw):
    """(file bytes, the field mutated or None)."""
    contents = {key: value.copy() for key, value in BASE_ARRAYS.items()}
    kind = draw(
        st.sampled_from(
            [
                "replace",
                "element",
                "delete",
                "many tasks",
                "duplicate names",
                "scale",
                "bitmask",
                "truncate",
                "flip",
                "raw member",
                "not a zip",
            ]
        )
    )
    target = draw(st.sampled_from(FIELDS))
    compressed = draw(st.booleans())
    if kind == "replace":
        contents[target] = draw(arrays())
    elif kind == "element":
        flat = (
            contents[target].astype(object).ravel()
            if target == "tasks"
            else contents[target].ravel()
        )
        i = draw(st.integers(0, flat.size - 1))
        if target == "tasks":
            flat[i] = draw(st.sampled_from(["", "\n", "a b", "T2", "é", "x" * 100]))
            contents[target] = flat.astype(str).reshape(contents[target].shape)
        else:
            value = draw(NUMBERS.filter(lambda v: not isinstance(v, int) or abs(v) < 2**63))
            with np.errstate(all="ignore"):
                flat = flat.astype(np.float64) if target != "combinations" else flat
                try:
                    flat[i] = value
                except (OverflowError, ValueError):
                    flat[i] = 0
            contents[target] = flat.reshape(contents[target].shape)
    elif kind == "delete":
        del contents[target]
    elif kind == "many tasks":
        target = "work"
        n = draw(st.sampled_from([62, 63, 64, 100]))
        contents = {
            "work": np.ones(n),
            "combinations": (np.int64(1) << np.arange(min(n, 63), dtype=np.int64)),
            "tasks": np.array([f"t{i}" for i in range(n)]),
        }
        contents["speeds"] = np.eye(n)[:, : contents["combinations"].size]
    elif kind == "duplicate names":
        target = "tasks"
        contents["tasks"] = np.array(["a", "b", "a"])
    elif kind == "scale":
        target = "work"
        with np.errstate(over="ignore"):
            contents["work"] = contents["work"] * 10.0 ** draw(st.integers(-330, 308))
    elif kind == "bitmask":
        target = "combinations"
        contents["combinations"] = contents["combinations"].copy()
        contents["combinations"][draw(st.integers(0, 5))] = draw(
            st.sampled_from([0, -1, 8, 1 << 40, 2**63 - 1])
        )
    raw = _zip_bytes(contents, compressed)
    if kind == "truncate":
        target = None
        raw = raw[: draw(st.integers(0, len(raw) - 1))]
    elif kind == "flip":
        target = None
        data = bytearray(raw)
        for _ in range(draw(st.integers(1, 4))):
            data[draw(st.integers(0, len(data) - 1))] ^= draw(st.integers(1, 255))
        raw = bytes(data)
    elif kind == "raw member":  # a member that is not a .npy file: np.load hands back its bytes
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as archive:
            for key, value in contents.items():
                if key == target:
                    archive.writestr(f"{key}.npy", draw(st.binary(max_size=64)))
                else:
                    with archive.open(f"{key}.npy", "w") as member:
                        np.lib.format.write_array(member, value, allow_pickle=False)
        raw = buffer.getvalue()
    elif kind == "not a zip":
        target = None
        raw = draw(
            st.sampled_from(
                [
                    b"",
                    b"PK",
                    b"\x93NUMPY",
                    json.dumps(BASE_DOCUMENT).encode(),
                    b"PK\x05\x06" + b"\x00" * 18,
                ]
            )
        )
    return raw, target


def test_mutated_npz_instance_is_solved_or_refused_in_one_line(campaign):
    campaign(
        given(npz_mutations(), OPTIONS)(
            lambda raw_and_field, options: check_mutant(".npz", raw_and_field, options)
        )
    )()


# --- the cases the issue names, pinned ------------------------------------------------------------


def _write_json(folder: Path, **changes) -> Path:
    path = folder / "instance.json"
    path.write_text(json.dumps({**BASE_DOCUMENT, **changes}, allow_nan=True))
    return path


def _write_npz(folder: Path, **changes) -> Path:
    path = folder / "instance.npz"
    path.write_bytes(_zip_bytes({**BASE_ARRAYS, **changes}, compressed=False))
    return path


def test_n100_json_is_one_line_naming_file_field_and_max_tasks(tmp_path):
    path = _write_json(
        tmp_path,
        work=[1.0] * 100,
        tasks=[f"t{i}" for i in range(100)],
        combinations=[[i] for i in range(100)],
        speeds=[[1.0]] * 100,
    )
    code, out, err, _ = run_opt(path)
    assert code == 2 and err.count("\n") == 1
    assert str(path) in err and "field 'work'" in err and "MAX_TASKS = 62" in err


@pytest.mark.parametrize("writer", [_write_json, _write_npz])
def test_duplicate_task_names_are_refused_by_both_readers_alike(tmp_path, writer):
    tasks = ["a", "b", "a"]
    path = writer(tmp_path, tasks=tasks if writer is _write_json else np.array(tasks))
    code, _, err, _ = run_opt(path)
    assert code == 2 and err.count("\n") == 1 and str(path) in err
    assert "field 'tasks'" in err and "'a' is given twice" in err


def test_truncated_npz_is_one_line(tmp_path):
    path = _write_npz(tmp_path)
    raw = path.read_bytes()
    for cut in (len(raw) // 3, len(raw) - 10):
        path.write_bytes(raw[:cut])
        code, _, err, _ = run_opt(path)
        assert code == 2 and err.count("\n") == 1 and str(path) in err


def test_non_npy_member_is_named(tmp_path):
    path = tmp_path / "instance.npz"
    with zipfile.ZipFile(path, "w") as archive:
        for key, value in BASE_ARRAYS.items():
            with archive.open(f"{key}.npy", "w") as member:
                if key == "speeds":
                    member.write(b"not an array")
                else:
                    np.lib.format.write_array(member, value)
    code, _, err, _ = run_opt(path)
    assert code == 2 and "field 'speeds'" in err and err.count("\n") == 1


def test_npz_member_flagged_encrypted_is_one_line(tmp_path):
    path = _write_npz(tmp_path)
    raw = bytearray(path.read_bytes())
    local, central = raw.find(b"PK\x03\x04"), raw.find(b"PK\x01\x02")
    raw[local + 6] |= 1  # general-purpose flag bit 0: encrypted (zipfile raises RuntimeError)
    raw[central + 8] |= 1
    path.write_bytes(bytes(raw))
    code, _, err, _ = run_opt(path)
    assert code == 2 and err.count("\n") == 1 and "encrypted" in err and str(path) in err


def test_normalize_with_an_infinite_speed_alone_is_one_line(tmp_path):
    speeds = [list(values) for values in BASE_DOCUMENT["speeds"]]
    speeds[0] = [10**400]  # the singleton {T1}: inf once read as a float
    path = _write_json(tmp_path, speeds=speeds)
    code, _, err, _ = run_opt(path, "--normalize")
    assert code == 2 and err.count("\n") == 1 and "field 'speeds'" in err and "not finite" in err
