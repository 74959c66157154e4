"""The combination model of 002 §3: n tasks with work b, combinations S_j as bitmasks, speeds A (n x
m).

An `Instance` is an immutable value that the rest of the toolkit reads. Loaders validate at the
boundary and raise `InputError` naming the file and field; inner code trusts the instance.
"""

from __future__ import annotations

import json
import lzma
import math
import os
import struct
import zipfile
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import NamedTuple

import numpy as np

from cosched.errors import InputError
from cosched.outputs import atomic_path
from cosched.theory.lattice import (
    MAX_TASKS,
    all_combinations,
    is_downward_closed,
    mask_of,
    membership,
    popcount,
    tasks_of,
)

__all__ = [
    "Instance",
    "Violation",
    "monotonicity_violations",
    "validate",
    "load_instance",
    "save_instance",
    "instance_from_json",
    "instance_to_json",
    "complete_instance",
    "work_problem",
    "SPEED_TOLERANCE",
    "VIOLATION_LIMIT",
    "WORK_MIN",
]

# absolute slack when checking 0 <= a_ij <= 1, singleton = 1 and monotonicity
SPEED_TOLERANCE = 1e-9
VIOLATION_LIMIT = 1000  # monotonicity violations collected for a report before the search stops
# smallest normal float64 (2.2e-308): below it b_i has lost precision
WORK_MIN = float(np.finfo(np.float64).tiny)


def work_problem(work: np.ndarray, tasks: Sequence[str] = ()) -> str | None:
    """Why a work vector b is unusable (002 §3: b_i > 0), or None: one rule for the readers and
    `solve_opt`.

    Subnormal b_i (below WORK_MIN) are refused: they carry too few significant bits for any answer
    to be exact. Large finite b_i are fine: OPT scales the LP (theory/opt.py) and reports an
    overflowing makespan itself.
    """
    work = np.asarray(work, dtype=np.float64)
    bad = np.flatnonzero(~np.isfinite(work) | (work < WORK_MIN))
    if bad.size == 0:
        return None
    i = int(bad[0])
    name = tasks[i] if i < len(tasks) else f"T{i + 1}"
    if np.isfinite(work[i]) and work[i] > 0:
        return (
            f"work {work[i]:g} of task {name} is below WORK_MIN = {WORK_MIN:g}, the smallest "
            "normal float64; express work in smaller units"
        )
    return f"work must be finite and positive for every task (task {name} has {work[i]:g})"


def _check_task_count(n: int) -> None:
    """n <= MAX_TASKS: task i is bit i of an int64 bitmask."""
    if n > MAX_TASKS:
        raise InputError(
            f"{n} tasks exceed the limit MAX_TASKS = {MAX_TASKS} (combinations are int64 bitmasks)",
            field="work",
        )


def _check_task_names(tasks: tuple, n: int) -> None:
    """n distinct, non-empty, printable names (they appear in one-line error messages and
    tables)."""
    if len(tasks) != n:
        raise InputError(f"{len(tasks)} task names for {n} tasks", field="tasks")
    for name in tasks:
        if not isinstance(name, str) or not name or not name.isprintable():
            raise InputError(
                f"task names must be non-empty printable strings, got {_shown(name)}", field="tasks"
            )
    if len(set(tasks)) != n:
        repeated = next(name for name in tasks if tasks.count(name) > 1)
        raise InputError(
            f"task name {_shown(repeated)} is given twice; names must be distinct", field="tasks"
        )
    spelled = [
        " ".join(name.split()) for name in tasks
    ]  # names that differ only by whitespace read the same
    if len(set(spelled)) != n:
        twins = [name for name, plain in zip(tasks, spelled) if spelled.count(plain) > 1]
        raise InputError(
            f"task names {_shown(twins[0])} and {_shown(twins[1])} differ only by whitespace; "
            "names must be distinct",
            field="tasks",
        )


def _shown(value, width: int = 40) -> str:
    """`repr` of a value for a one-line error message, cut to `width` characters."""
    text = ascii(value)
    return text if len(text) <= width else text[: width - 3] + "..."


@dataclass(frozen=True, eq=False)
class Instance:
    """n tasks, work vector b (n,), combination bitmasks (m,) ascending, speed matrix A (n, m)."""

    work: np.ndarray
    combinations: np.ndarray
    speeds: np.ndarray
    tasks: tuple[str, ...] = field(default=())

    def __post_init__(self):
        # float128 or huge integers become inf here; `validate` names them
        with np.errstate(all="ignore"):
            work = np.array(self.work, dtype=np.float64, copy=True)
            combinations = np.array(self.combinations, dtype=np.int64, copy=True)
            speeds = np.array(self.speeds, dtype=np.float64, copy=True)
        n = work.shape[0] if work.ndim == 1 else -1
        if work.ndim != 1 or n == 0:
            raise InputError(
                f"work must be a non-empty vector, got shape {work.shape}", field="work"
            )
        _check_task_count(n)
        if combinations.ndim != 1 or combinations.size == 0:
            raise InputError(
                "combinations must be a non-empty vector of bitmasks", field="combinations"
            )
        if speeds.shape != (n, combinations.size):
            raise InputError(
                f"speeds must have shape (n, m) = ({n}, {combinations.size}), got {speeds.shape}",
                field="speeds",
            )
        if (combinations <= 0).any() or (combinations >> n).any():
            raise InputError(
                f"combination bitmasks must be in [1, 2^{n}); a task index is out of range",
                field="combinations",
            )
        if combinations.size > 1 and not (np.diff(combinations) > 0).all():
            order = np.argsort(combinations, kind="stable")
            combinations, speeds = combinations[order], speeds[:, order]
            if not (np.diff(combinations) > 0).all():
                raise InputError("a combination is listed twice", field="combinations")
        tasks = tuple(self.tasks) if len(self.tasks) else tuple(f"T{i + 1}" for i in range(n))
        _check_task_names(tasks, n)
        for array in (work, combinations, speeds):
            array.flags.writeable = False
        object.__setattr__(self, "work", work)
        object.__setattr__(self, "combinations", combinations)
        object.__setattr__(self, "speeds", speeds)
        object.__setattr__(self, "tasks", tasks)

    @property
    def n(self) -> int:
        return self.work.shape[0]

    @property
    def m(self) -> int:
        return self.combinations.shape[0]

    @cached_property
    def is_complete(self) -> bool:
        """All 2^n - 1 combinations are present (then column j holds bitmask j + 1)."""
        return self.m == (1 << self.n) - 1

    @cached_property
    def combination_speeds(self) -> np.ndarray:
        """a_j = sum_i a_ij, the speed of each combination (002 §3)."""
        speeds = self.speeds.sum(axis=0)
        speeds.flags.writeable = False
        return speeds

    @cached_property
    def sizes(self) -> np.ndarray:
        """|S_j| for each combination."""
        return popcount(self.combinations)

    def index(self, masks) -> np.ndarray:
        """Column index of each bitmask, -1 where the combination is not in the instance."""
        masks = np.asarray(masks, dtype=np.int64)
        if self.is_complete:
            return np.where((masks > 0) & (masks < (1 << self.n)), masks - 1, -1)
        position = np.searchsorted(self.combinations, masks)
        position = np.minimum(position, self.m - 1)
        return np.where(self.combinations[position] == masks, position, -1)

    def column(self, mask: int) -> np.ndarray:
        """Speeds a_{., j} of all tasks in the combination with this bitmask."""
        j = int(self.index(mask))
        if j < 0:
            raise KeyError(f"combination {tasks_of(mask)} is not in the instance")
        return self.speeds[:, j]

    def names(self, mask: int) -> list[str]:
        """Names of the tasks of a combination bitmask."""
        return [self.tasks[i] for i in tasks_of(mask)]

    def restrict(
        self, max_size: int | None = None, combinations: Sequence[int] | None = None
    ) -> Instance:
        """The same tasks with fewer combinations (sizes <= max_size and/or an explicit bitmask
        list), 002 §9."""
        keep = np.ones(self.m, dtype=bool)
        if max_size is not None:
            keep &= self.sizes <= max_size
        if combinations is not None:
            keep &= np.isin(self.combinations, np.asarray(combinations, dtype=np.int64))
        return Instance(self.work, self.combinations[keep], self.speeds[:, keep], self.tasks)

    def normalized(self) -> Instance:
        """Divide each task's speeds and work by its speed alone, so singleton speeds are 1 (002
        §3)."""
        alone = self.index(1 << np.arange(self.n, dtype=np.int64))
        if (alone < 0).any():
            missing = [self.tasks[i] for i in np.flatnonzero(alone < 0)]
            raise InputError(
                f"cannot normalise: no singleton combination for tasks {missing}",
                field="combinations",
            )
        ideal = self.speeds[np.arange(self.n), alone]
        if not np.isfinite(ideal).all():
            bad = [self.tasks[i] for i in np.flatnonzero(~np.isfinite(ideal))]
            raise InputError(
                f"cannot normalise: tasks {bad} have a speed alone that is not finite",
                field="speeds",
            )
        if (ideal <= 0).any():
            bad = [self.tasks[i] for i in np.flatnonzero(ideal <= 0)]
            raise InputError(f"cannot normalise: tasks {bad} have speed 0 alone", field="speeds")
        # a tiny speed alone overflows work to inf: `validate` names it
        with np.errstate(all="ignore"):
            return Instance(
                self.work / ideal, self.combinations, self.speeds / ideal[:, None], self.tasks
            )

    def to_frame(self):
        """Long table: one row per (combination, member task) with its speed."""
        import pandas as pd

        member = membership(self.combinations, self.n)
        task_index, column = np.nonzero(member)
        return pd.DataFrame(
            {
                "combination": self.combinations[column],
                "size": self.sizes[column],
                "task": np.asarray(self.tasks, dtype=object)[task_index],
                "task_index": task_index,
                "speed": self.speeds[task_index, column],
            }
        ).sort_values(["combination", "task_index"], ignore_index=True)

    def __repr__(self) -> str:
        return (
            f"Instance(n={self.n}, m={self.m}, work=[{self.work.min():.4g}..{self.work.max():.4g}])"
        )


class Violation(NamedTuple):
    """Monotonicity constraint (1) of 002 §3 broken: a_{task, subset} < a_{task, superset}."""

    task: int
    subset: int
    superset: int
    subset_speed: float
    superset_speed: float


def monotonicity_violations(
    instance: Instance, tolerance: float = SPEED_TOLERANCE, limit: int | None = None
) -> list[Violation]:
    """All pairs S_p subset of S_q present in the instance with a_ip < a_iq - tolerance (constraint
    (1)).

    Assumes speeds are zero outside their combinations (checked first by `validate`).
    """
    if instance.is_complete:
        pairs = _complete_lattice_pairs(instance, tolerance)
    elif is_downward_closed(instance.combinations):
        pairs = _one_step_pairs(instance)  # by transitivity one-task steps cover every pair
    else:
        pairs = _all_subset_pairs(instance)
    found: list[Violation] = []
    for subset_col, superset_col, rows in pairs:
        lower = instance.speeds[rows, subset_col]
        upper = instance.speeds[rows, superset_col]
        in_subset = membership(instance.combinations[subset_col], instance.n)[rows]
        bad_row, bad_pair = np.nonzero(in_subset & (lower < upper - tolerance))
        for row, k in zip(bad_row, bad_pair):
            task = row + (rows.start or 0)
            found.append(
                Violation(
                    int(task),
                    int(instance.combinations[subset_col[k]]),
                    int(instance.combinations[superset_col[k]]),
                    float(lower[row, k]),
                    float(upper[row, k]),
                )
            )
            if limit is not None and len(found) >= limit:
                return found
    return found


def _member_lattice(row: np.ndarray, task: int) -> np.ndarray:
    """Speeds of `task` over the combinations containing it, indexed by the bitmask without its bit
    (n-1 bits).

    Column j of a complete instance is bitmask j + 1, so after prepending the empty set the row is a
    2 x ... x 2 cube and the halves with and without a bit are reshape views, not gathers.
    """
    padded = np.empty(row.size + 1)
    padded[0] = 0.0
    padded[1:] = row
    return padded.reshape(-1, 2, 1 << task)[:, 1, :].reshape(-1)


def _complete_lattice_pairs(instance: Instance, tolerance: float):
    """(subset, superset, [task]) column pairs one task apart where the task breaks constraint
    (1)."""
    for task in range(instance.n):
        lattice = _member_lattice(instance.speeds[task], task)
        for bit in range(instance.n - 1):
            cube = lattice.reshape(-1, 2, 1 << bit)
            # a_{i,S+k} - a_{i,S}: positive breaks 002 §3, (1)
            excess = cube[:, 1, :] - cube[:, 0, :]
            if excess.max() <= tolerance:
                continue
            high, low = np.nonzero(excess > tolerance)
            compressed = (high << (bit + 1)) | low  # index of the subset in the (n-1)-bit lattice
            subset = (
                ((compressed >> task) << (task + 1))
                | (1 << task)
                | (compressed & ((1 << task) - 1))
            )
            superset = subset | (1 << (bit + (bit >= task)))
            yield subset - 1, superset - 1, slice(task, task + 1)


def _one_step_pairs(instance: Instance):
    for bit in range(instance.n):
        superset_col = np.flatnonzero((instance.combinations >> bit) & 1)
        subset_col = instance.index(instance.combinations[superset_col] ^ (1 << bit))
        present = subset_col >= 0
        if present.any():
            yield subset_col[present], superset_col[present], slice(None)


def _all_subset_pairs(instance: Instance, cells: int = 1 << 22):
    masks = instance.combinations
    chunk = max(1, cells // masks.size)
    for start in range(0, masks.size, chunk):
        supersets = masks[start : start + chunk]
        is_proper_subset = ((masks[:, None] & ~supersets[None, :]) == 0) & (
            masks[:, None] != supersets[None, :]
        )
        subset_col, k = np.nonzero(is_proper_subset)
        yield subset_col, start + k, slice(None)


def _outside_speeds_are_zero(instance: Instance) -> bool:
    """a_ij = 0 whenever T_i is not in S_j (002 §3)."""
    if instance.is_complete:
        for task in range(instance.n):
            row = instance.speeds[task]
            # bitmask j + 1 lacks the task's bit for columns j = q * 2^(task+1) + r - 1, r < 2^task
            first = row[: (1 << task) - 1]
            rest = row[(1 << (task + 1)) - 1 :].reshape(-1, 1 << (task + 1))[:, : 1 << task]
            if first.any() or rest.any():
                return False
        return True
    return not (instance.speeds[~membership(instance.combinations, instance.n)] != 0).any()


def validate(
    instance: Instance,
    *,
    monotone: bool = True,
    unit_singletons: bool = True,
    tolerance: float = SPEED_TOLERANCE,
    source: str | None = None,
) -> Instance:
    """Check the constraints of 002 §3 and raise one InputError naming the field; returns the
    instance."""
    problem = work_problem(instance.work, instance.tasks)
    if problem:
        raise InputError(problem, source=source, field="work")
    speeds = instance.speeds
    low, high = float(speeds.min()), float(speeds.max())
    if not (np.isfinite(low) and np.isfinite(high)):
        raise InputError("speeds must be finite", source=source, field="speeds")
    if not _outside_speeds_are_zero(instance):
        raise InputError(
            "a task has a non-zero speed in a combination it is not part of",
            source=source,
            field="speeds",
        )
    if low < -tolerance:
        raise InputError(
            f"speeds must be non-negative (found {low:.6g})", source=source, field="speeds"
        )
    # a_ij <= a_i,{i} = 1 is constraint (1) against the singleton
    if monotone and high > 1 + tolerance:
        raise InputError(
            f"speeds must be at most 1 (found {high:.6g}); normalise by the speed alone "
            "(--normalize) or accept measured data with --allow-nonmonotone",
            source=source,
            field="speeds",
        )
    if unit_singletons:
        alone = instance.index(1 << np.arange(instance.n, dtype=np.int64))
        present = np.flatnonzero(alone >= 0)
        off = present[np.abs(speeds[present, alone[present]] - 1) > tolerance]
        if off.size:
            raise InputError(
                f"the speed of task {instance.tasks[off[0]]} alone is "
                f"{speeds[off[0], alone[off[0]]]:.6g}, not 1; normalise it (--normalize)",
                source=source,
                field="speeds",
            )
    if monotone:
        violations = monotonicity_violations(instance, tolerance, limit=VIOLATION_LIMIT)
        if violations:
            shown = "; ".join(
                f"task {instance.tasks[v.task]}: {v.subset_speed:.6g} in "
                f"{instance.names(v.subset)} < {v.superset_speed:.6g} in "
                f"{instance.names(v.superset)}"
                for v in violations[:3]
            )
            more = (
                f" (and {len(violations) - 3}"
                f"{'+' if len(violations) == VIOLATION_LIMIT else ''} more)"
                if len(violations) > 3
                else ""
            )
            raise InputError(
                f"speeds are not monotone (constraint (1) of 002 §3): {shown}{more}; "
                "accept measured data with --allow-nonmonotone",
                source=source,
                field="speeds",
            )
    return instance


INSTANCE_KEYS = ("tasks", "work", "combinations", "speeds")  # the keys of the JSON instance format
FREE_KEYS = ("comment", "description")  # free text a file may carry besides keys starting with "_"


def instance_from_json(document, source: str | None = None) -> Instance:
    """Build an instance from the JSON document layout (see README: instance file format).

    Only the layout is checked here (types, lists, task references); the structure shared with NPZ
    (task count, names, bitmasks, shapes) is checked once by `Instance`, and the numbers by
    `validate`.
    """

    def fail(message, field_name):
        raise InputError(message, source=source, field=field_name)

    if not isinstance(document, dict):
        fail("the document must be a JSON object", None)
    _check_known_keys(document, fail)
    for key in ("work", "combinations", "speeds"):
        if key not in document:
            fail("missing", key)
    work = document["work"]
    if not isinstance(work, list) or not work or not all(_is_number(b) for b in work):
        fail("must be a non-empty list of numbers", "work")
    n = len(work)
    _check_task_count(n)  # before any bitmask is built
    tasks = document.get("tasks")
    if tasks is not None and (
        not isinstance(tasks, list) or not all(isinstance(t, str) for t in tasks)
    ):
        fail(f"must be a list of {n} distinct task names", "tasks")
    names = {name: i for i, name in enumerate(tasks or [])}
    combinations, speeds = document["combinations"], document["speeds"]
    if not isinstance(combinations, list) or not combinations:
        fail("must be a non-empty list of task lists", "combinations")
    if not isinstance(speeds, list) or len(speeds) != len(combinations):
        fail(f"must be a list with one entry per combination ({len(combinations)})", "speeds")
    masks = np.zeros(len(combinations), dtype=np.int64)
    matrix = np.zeros((n, len(combinations)))
    for j, (members, values) in enumerate(zip(combinations, speeds)):
        indices = _json_combination(j, members, values, names, n, fail)
        masks[j] = mask_of(indices)
        matrix[indices, j] = _floats(values)
    if len(np.unique(masks)) != masks.size:
        fail("a combination is listed twice", "combinations")
    return Instance(_floats(work), masks, matrix, tuple(tasks) if tasks is not None else ())


def _check_known_keys(document: dict, fail) -> None:
    """Every key is a key of the format or free text: a misspelt key would be silently ignored
    ("speed" for "speeds")."""
    for key in document:
        if key not in INSTANCE_KEYS and not str(key).startswith("_") and key not in FREE_KEYS:
            import difflib

            close = difflib.get_close_matches(str(key), INSTANCE_KEYS, n=1)
            fail(
                f"unknown key {_shown(key)}"
                + (f"; did you mean {close[0]!r}?" if close else "")
                + f' (known: {", ".join(INSTANCE_KEYS)}; free text under "_..." or "comment")',
                key if key.isprintable() else key.encode("unicode_escape").decode("ascii"),
            )


def _json_combination(j: int, members, values, names: dict, n: int, fail) -> list[int]:
    """The task indices of combination `j` of a JSON document, its speeds checked for layout."""
    if not isinstance(members, list) or not members:
        fail("must be a non-empty list of task indices or names", f"combinations[{j}]")
    indices = [names.get(t, -1) if isinstance(t, str) else t for t in members]
    if not all(isinstance(i, int) and not isinstance(i, bool) and 0 <= i < n for i in indices):
        fail(
            f"task {_shown(members)} out of range 0..{n - 1} (or unknown name)",
            f"combinations[{j}]",
        )
    if len(set(indices)) != len(indices):
        fail("a task is listed twice", f"combinations[{j}]")
    if (
        not isinstance(values, list)
        or len(values) != len(indices)
        or not all(_is_number(v) for v in values)
    ):
        fail(
            f"must be a list of numbers, one per task of combination {_shown(members)} "
            f"({len(indices)})",
            f"speeds[{j}]",
        )
    return indices


def _floats(values: list) -> np.ndarray:
    """JSON numbers as float64; an integer beyond the float range becomes +-inf (then `validate`
    names it)."""
    try:
        return np.asarray(values, dtype=np.float64)
    except OverflowError:
        return np.array([_float(v) for v in values])


def _float(value) -> float:
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def instance_to_json(instance: Instance) -> dict:
    """The JSON document of an instance (tasks, work, combinations as task lists, member speeds)."""
    member = membership(instance.combinations, instance.n)
    combinations = [np.flatnonzero(member[:, j]).tolist() for j in range(instance.m)]
    return {
        "tasks": list(instance.tasks),
        "work": instance.work.tolist(),
        "combinations": combinations,
        "speeds": [instance.speeds[c, j].tolist() for j, c in enumerate(combinations)],
    }


def load_instance(
    path: str | os.PathLike,
    *,
    monotone: bool = True,
    normalize: bool = False,
    unit_singletons: bool = True,
) -> Instance:
    """Read an instance from `.json` or `.npz` and validate it (monotone=False accepts measured
    data).

    Both formats take one path: the reader turns the file into arrays (format errors only),
    `Instance` checks the structure (task count, names, bitmasks, shapes), `validate` the numbers;
    each raises one InputError naming the file and the field.
    """
    path = Path(path)
    source = str(path)
    try:
        if path.suffix.lower() == ".npz":
            instance = _load_npz(path, source)
        else:
            instance = instance_from_json(_read_json(path, source), source)
        if normalize:
            instance = instance.normalized()
    except FileNotFoundError:
        raise InputError("no such file", source=source) from None
    except IsADirectoryError:
        raise InputError("is a directory, not an instance file", source=source) from None
    except PermissionError:
        raise InputError("permission denied", source=source) from None
    except OSError as error:
        raise InputError(
            f"cannot read: {error.strerror or _one_line(error)}", source=source
        ) from None
    except InputError as error:
        raise error.naming(source) from None
    return validate(instance, monotone=monotone, unit_singletons=unit_singletons, source=source)


def _read_json(path: Path, source: str):
    """The JSON document of a UTF-8 file (a UTF-8 byte-order mark is allowed)."""
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise InputError(
            f"not a UTF-8 text (JSON) file: byte 0x{raw[error.start]:02x} at offset {error.start}",
            source=source,
        ) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise InputError(f"not valid JSON: {error.msg}", source=source, line=error.lineno) from None
    except RecursionError:
        raise InputError("not valid JSON: nested too deeply", source=source) from None
    except ValueError as error:  # e.g. an integer literal beyond Python's digit limit
        raise InputError(f"not valid JSON: {_one_line(error)}", source=source) from None


def _one_line(error: BaseException, width: int = 160) -> str:
    """An exception's message on one line, cut to `width` characters (errors are one stderr
    line)."""
    text = " ".join(str(error).split()) or type(error).__name__
    return text if len(text) <= width else text[: width - 3] + "..."


NPZ_ARRAYS = ("work", "combinations", "speeds", "tasks")
# what a corrupt archive makes zipfile (a flipped flag: "encrypted" RuntimeError, unknown
# compression
# NotImplementedError), its decompressors and numpy's .npy header parser raise
_ARCHIVE_ERRORS = (
    ValueError,
    OSError,
    EOFError,
    RuntimeError,
    NotImplementedError,
    OverflowError,
    struct.error,
    zipfile.BadZipFile,
    zipfile.LargeZipFile,
    zlib.error,
    lzma.LZMAError,
)


def _load_npz(path: Path, source: str) -> Instance:
    """The arrays of a `.npz` archive (format checks only: dtypes); the rest is checked by
    `Instance`."""
    # np.load would return a bare array or try pickle
    if path.is_file() and not zipfile.is_zipfile(path):
        raise InputError(
            "not a .npz archive (expected a zip of the arrays work, combinations, speeds)",
            source=source,
        )
    arrays = {}
    # np.load gets an open file: on a corrupt archive it would leave a file it opened itself
    # unclosed
    try:
        with open(path, "rb") as handle, np.load(handle, allow_pickle=False) as archive:
            for key in NPZ_ARRAYS[:3]:
                if key not in archive.files:
                    raise InputError("missing array", source=source, field=key)
            for key in NPZ_ARRAYS:
                if key in archive.files:
                    arrays[key] = archive[key]
                    # np.load returns the raw bytes of a non-.npy member
                    if not isinstance(arrays[key], np.ndarray):
                        raise InputError("not a .npy array", source=source, field=key)
    except (InputError, FileNotFoundError, IsADirectoryError, PermissionError):
        raise  # load_instance names these
    except MemoryError:
        raise InputError("an array is too large to load", source=source) from None
    except _ARCHIVE_ERRORS as error:
        raise InputError(
            f"not a readable .npz archive ({_one_line(error)})", source=source
        ) from None
    return _npz_instance(arrays, source)


def _npz_instance(arrays: dict, source: str) -> Instance:
    """The instance of the arrays of a `.npz` archive, their dtypes checked."""
    for key in ("work", "speeds"):
        if not (
            np.issubdtype(arrays[key].dtype, np.floating)
            or np.issubdtype(arrays[key].dtype, np.integer)
        ):
            raise InputError(
                f"must be a numeric array, got dtype {arrays[key].dtype}", source=source, field=key
            )
    if not np.issubdtype(arrays["combinations"].dtype, np.integer):
        raise InputError("must be integer bitmasks", source=source, field="combinations")
    tasks: tuple[str, ...] = ()
    if "tasks" in arrays:
        names = arrays["tasks"]
        if names.dtype.kind != "U" or names.ndim > 1:
            raise InputError(
                f"must be a vector of task names (strings), got dtype {names.dtype} and shape "
                f"{names.shape}",
                source=source,
                field="tasks",
            )
        tasks = tuple(str(t) for t in np.atleast_1d(names))
    return Instance(arrays["work"], arrays["combinations"], arrays["speeds"], tasks)


def save_instance(instance: Instance, path: str | os.PathLike) -> Path:
    """Write `.npz` (compact arrays) or JSON, chosen by the extension; the file appears whole or not
    at all."""
    path = Path(path)
    with atomic_path(path) as tmp:
        if path.suffix.lower() == ".npz":
            with open(tmp, "wb") as handle:
                np.savez(
                    handle,
                    work=instance.work,
                    combinations=instance.combinations,
                    speeds=instance.speeds,
                    tasks=np.asarray(instance.tasks, dtype=str),
                )
        else:
            tmp.write_text(json.dumps(instance_to_json(instance)))
    return path


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def complete_instance(work, speed_of) -> Instance:
    """Instance over all 2^n - 1 combinations with a_ij = speed_of(i, mask) (handy for small
    examples)."""
    work = np.asarray(work, dtype=float)
    masks = all_combinations(work.size)
    member = membership(masks, work.size)
    speeds = np.zeros(member.shape)
    for i, j in zip(*np.nonzero(member)):
        speeds[i, j] = speed_of(int(i), int(masks[j]))
    return Instance(work, masks, speeds)
