"""The simulated schedule as a Standard Workload Format file (the Parallel Workloads Archive's 18
fields), so that cosched (`workload.read_swf`) and other tools read a run back.

Fields written per job: 1 job number (the input's id), 2 submit time, 3 wait time (start - submit),
4 run time (end - start), 5 allocated processors (the job's cores), 8 requested processors (the
same), 9 requested time (the estimate), 11 status (1 completed; 0 killed, e.g. at its walltime); 12
user, 13 group, 15 queue and 16 partition as the input SWF gave them
(`cosched.simulator.job_attributes`), so partitions and fair-share priorities read the schedule as
they read its trace; every other field -1 (unknown), as the format says. A job that never started
(killed while waiting) has wait and run time -1. The header carries the format version, the platform
(MaxNodes, MaxProcs), the input's UnixStartTime and TimeZoneString when it had them, and a note
naming the run.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np

from cosched.simulator.job_attributes import ATTRIBUTE_FIELDS, job_attributes

__all__ = ["swf_text", "write_swf"]

SWF_VERSION = "2.2"
COMPLETED, KILLED = 1, 0  # SWF status codes (field 11)


def _number(value: float) -> str:
    """A time as the archive writes it: whole seconds as integers, -1 when unknown."""
    if math.isnan(value):
        return "-1"
    return str(int(value)) if value == int(value) else repr(float(value))


def swf_text(result) -> str:
    """The SWF text of a run (module docstring)."""
    w, platform = result.workload, result.platform
    start, end = result.start, result.end
    killed = np.zeros(len(w), dtype=bool)
    if result.lifecycle is not None:
        killed = np.array([state == "killed" for state in result.lifecycle["state"]], dtype=bool)
    lines = [
        f"; Version: {SWF_VERSION}",
        "; Computer: cosched simulation",
        f"; Note: schedule simulated by cosched under {result.scheduler} on {platform.name}",
        f"; Note: from {w.source or 'a workload'}; status 1 completed, 0 killed",
        f"; MaxJobs: {len(w)}",
        f"; MaxRecords: {len(w)}",
        f"; MaxNodes: {platform.nodes}",
        f"; MaxProcs: {platform.total_cores}",
    ]
    for key in ("UnixStartTime", "TimeZoneString"):
        if key in w.header:
            lines.append(f"; {key}: {w.header[key]}")
    attributes = job_attributes(w)
    user, group, queue, partition = (attributes.field(name) for name in ATTRIBUTE_FIELDS)
    for job in range(len(w)):
        began = start[job]
        wait = began - w.submit[job] if began == began else math.nan
        run = end[job] - began if began == began else math.nan
        cores = int(w.cores[job])
        status = KILLED if killed[job] else COMPLETED
        lines.append(
            f"{int(w.job_id[job])} {_number(w.submit[job])} {_number(wait)} {_number(run)} "
            f"{cores} -1 -1 {cores} {_number(w.estimate[job])} -1 {status} "
            f"{user[job]} {group[job]} -1 {queue[job]} {partition[job]} -1 -1"
        )
    return "\n".join(lines) + "\n"


def write_swf(result, path: str | os.PathLike) -> Path:
    """Write the run as SWF to `path` atomically (nothing is left behind on failure); gzipped when
    the name ends in .gz."""
    from cosched.outputs import atomic_path

    data = swf_text(result).encode()
    if str(path).lower().endswith(".gz"):
        import gzip

        data = gzip.compress(data, mtime=0)
    with atomic_path(path) as target:
        target.write_bytes(data)
    return Path(path)
