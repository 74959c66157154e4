"""The SWF fields the workload loader does not keep: user (12), group (13), queue (15) and
partition (16), per job of a loaded workload.

Partitions and fair-share priorities read them; they are read from the workload's SWF file on demand
(matched by job number, which is unique), so plain runs pay nothing for them. Jobs of a CSV
workload, or built in memory, have none: every value is -1, as the SWF writes an unknown field.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from cosched.inputs import read_text
from cosched.simulator.workload import SWF_FIELDS, Workload, _swf_values

__all__ = ["JobAttributes", "ATTRIBUTE_FIELDS", "job_attributes"]

ATTRIBUTE_FIELDS = ("user_id", "group_id", "queue", "partition")
UNKNOWN = -1  # the SWF's value for a field it does not know


@dataclass(frozen=True, eq=False)
class JobAttributes:
    """Per job, in workload order: SWF user, group, queue and partition numbers (-1: unknown)."""

    user_id: np.ndarray
    group_id: np.ndarray
    queue: np.ndarray
    partition: np.ndarray

    @classmethod
    def unknown(cls, jobs: int) -> JobAttributes:
        """Every field unknown (-1) for `jobs` jobs."""
        return cls(*(np.full(jobs, UNKNOWN, dtype=np.int64) for _ in ATTRIBUTE_FIELDS))

    def field(self, name: str) -> np.ndarray:
        """The column of the SWF field `name` (one of ATTRIBUTE_FIELDS)."""
        return getattr(self, name)


def job_attributes(workload: Workload) -> JobAttributes:
    """The attributes of `workload`'s jobs, from its SWF source file (all -1 for other sources)."""
    source = workload.source
    if not source or not source.lower().endswith((".swf", ".swf.gz")) or not Path(source).exists():
        return JobAttributes.unknown(len(workload))
    data, _ = _swf_values(read_text(Path(source), comment=";"), source)
    ids = data[:, SWF_FIELDS.index("job_number")].astype(np.int64)
    # positions of the workload's jobs among the file's records (job numbers are unique)
    by_id = np.argsort(ids, kind="stable")
    rows = by_id[np.searchsorted(ids, workload.job_id, sorter=by_id)]
    columns = [
        np.rint(data[rows, SWF_FIELDS.index(name)]).astype(np.int64) for name in ATTRIBUTE_FIELDS
    ]
    return JobAttributes(*columns)
