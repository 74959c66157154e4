"""Measured speeds -> the theory `Instance`: normalise by the ideal (alone) speed, report what is
not a model.

002 §3 takes the speed of a task alone as 1, so a_ij = speed in S_j / speed alone. Measured values
break the model's constraints through noise: a co-run speed above the ideal one is clipped to 1 (and
counted), broken monotonicity (constraint (1)) is reported, and optionally removed by capping each
speed at the minimum over its one-task-smaller sub-combinations (the construction of the §8
generator), which yields a monotone matrix.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from cosched.errors import InputError
from cosched.measurement.probe import MIN_ALONE_SPEED
from cosched.theory.instance import VIOLATION_LIMIT, Instance, Violation, monotonicity_violations
from cosched.theory.lattice import membership, popcount

__all__ = ["MeasuredMatrix", "measured_instance", "cap_monotone", "compress_masks"]


@dataclass(frozen=True)
class MeasuredMatrix:
    """The normalised instance plus what normalising had to do to the measured numbers."""

    instance: Instance
    ideal_speeds: dict[str, float]
    dropped_tasks: dict[str, str]
    clipped: int
    violations: list[Violation] = field(default_factory=list)
    projected: bool = False

    def report(self) -> dict:
        names = self.instance.names
        return {
            "ideal_speeds": self.ideal_speeds,
            "dropped_tasks": self.dropped_tasks,
            "speeds_clipped_to_1": self.clipped,
            "monotone_projection": self.projected,
            "monotonicity_violations": [
                {
                    "task": self.instance.tasks[v.task],
                    "subset": names(v.subset),
                    "superset": names(v.superset),
                    "subset_speed": v.subset_speed,
                    "superset_speed": v.superset_speed,
                }
                for v in self.violations
            ],
        }


def compress_masks(masks: np.ndarray, keep: Sequence[int] | np.ndarray) -> np.ndarray:
    """Renumber bitmasks over the kept task indices (bit of the k-th kept task becomes bit k)."""
    masks = np.asarray(masks, dtype=np.int64)
    out = np.zeros_like(masks)
    for new_bit, old_bit in enumerate(np.asarray(keep, dtype=np.int64)):
        out |= ((masks >> old_bit) & 1) << new_bit
    return out


def cap_monotone(instance: Instance) -> Instance:
    """a_iS <- min(a_iS, a_iS' for every present S' = S minus one other task), by increasing size:
    monotone."""
    speeds = instance.speeds.copy()
    member = membership(instance.combinations, instance.n)
    sizes = instance.sizes
    for size in range(2, int(sizes.max()) + 1 if sizes.size else 0):
        columns = np.flatnonzero(sizes == size)
        for bit in range(instance.n):
            has = columns[(instance.combinations[columns] >> bit) & 1 == 1]
            sub = instance.index(instance.combinations[has] ^ (1 << bit))
            present = sub >= 0
            has, sub = has[present], sub[present]
            speeds[:, has] = np.where(
                member[:, sub], np.minimum(speeds[:, has], speeds[:, sub]), speeds[:, has]
            )
    return Instance(instance.work, instance.combinations, speeds, instance.tasks)


def measured_instance(
    names: Sequence[str],
    table,
    work: Sequence[float] | np.ndarray | None = None,
    project: bool = False,
) -> MeasuredMatrix:
    """Instance of the combinations whose members all have a finite measured speed.

    `table` has columns combination (bitmask over `names`), task, speed (absolute). Tasks without a
    positive speed alone are dropped (named with the reason), with every combination containing
    them.
    """
    names = list(names)
    n = len(names)
    valid = table[np.isfinite(table["speed"].to_numpy(dtype=float))]
    complete = valid.groupby("combination")["task"].count()
    masks = complete.index.to_numpy(dtype=np.int64)
    masks = masks[popcount(masks) == complete.to_numpy()]
    valid = valid[valid["combination"].isin(masks)]
    position = {name: i for i, name in enumerate(names)}
    speeds = np.zeros((n, masks.size))
    column = np.searchsorted(masks, valid["combination"].to_numpy(dtype=np.int64))
    speeds[[position[t] for t in valid["task"]], column] = valid["speed"].to_numpy(dtype=float)
    alone = np.searchsorted(masks, 1 << np.arange(n, dtype=np.int64))
    has_alone = (
        (alone < masks.size) & (masks[np.minimum(alone, masks.size - 1)] == 1 << np.arange(n))
        if masks.size
        else np.zeros(n, dtype=bool)
    )
    ideal = np.where(
        has_alone,
        speeds[np.arange(n), np.minimum(alone, max(masks.size - 1, 0))] if masks.size else 0.0,
        0.0,
    )
    # no divisor: a speed near 0 alone would inflate every other speed
    unusable = ideal < MIN_ALONE_SPEED
    dropped = {
        names[i]: (
            "not measured alone"
            if not has_alone[i]
            else "speed 0 alone (never ran)"
            if ideal[i] <= 0
            else f"speed {ideal[i]:.3g} alone, below {MIN_ALONE_SPEED} (it hardly "
            "computed while measured: waiting for input, I/O or a process outside it)"
        )
        for i in range(n)
        if unusable[i]
    }
    keep = np.flatnonzero(~unusable)
    if keep.size == 0:
        raise InputError(
            f"no task has a measured speed alone of at least {MIN_ALONE_SPEED}: nothing to "
            "normalise",
            field="speeds",
        )
    dropped_bits = np.int64(sum(1 << int(i) for i in range(n) if unusable[i]))
    columns = np.flatnonzero((masks & dropped_bits) == 0)
    speeds = speeds[np.ix_(keep, columns)] / ideal[keep, None]  # 002 §3: speed alone = 1
    clipped = int((speeds > 1).sum())
    work_vector = np.ones(keep.size) if work is None else np.asarray(work, dtype=float)[keep]
    instance = Instance(
        work_vector,
        compress_masks(masks[columns], keep),
        np.minimum(speeds, 1.0),
        tuple(names[i] for i in keep),
    )
    if project:
        instance = cap_monotone(instance)
    return MeasuredMatrix(
        instance,
        {names[i]: float(ideal[i]) for i in keep},
        dropped,
        clipped,
        monotonicity_violations(instance, limit=VIOLATION_LIMIT),
        project,
    )
