"""What a finished simulation writes: ElastiSim's CSV files and cosched's own jobs.csv and summary.

ElastiSim's files keep its columns (its "Simulation results" page): `job_statistics.csv` (ID,
Type, Submit Time, Start Time, End Time, Wait Time, Makespan, Turnaround Time, Status; -1 where a
time is unknown), `node_utilization.csv` (a row per node state change) and, with sensing on,
`pfs_utilization.csv` (read and write throughput averaged over each sensing interval, absolute and
relative to the link bandwidth) and `cpu_utilization.csv` (per node, the share of each sensing
interval its CPU was busy: a job runs there and does not wait for I/O). cosched's `jobs.csv` adds
per job its size bounds, reconfigurations, node-seconds and its node count over time.
"""

from __future__ import annotations

import csv
import io
import itertools
import operator
from pathlib import Path

import numpy as np

from cosched.errors import InputError
from cosched.outputs import atomic_path
from cosched.simulator.elastic.runtime import Simulation
from cosched.simulator.elastic.sensing import node_runs, write_runs_into, write_series

__all__ = [
    "JOB_STATISTICS_COLUMNS",
    "NODE_UTILIZATION_COLUMNS",
    "PFS_UTILIZATION_COLUMNS",
    "JOBS_COLUMNS",
    "job_rows",
    "stays",
    "write_job_statistics",
    "write_node_utilization",
    "write_pfs_utilization",
    "write_cpu_utilization",
    "write_cpu_series",
    "write_jobs",
    "summary",
]

JOB_STATISTICS_COLUMNS = (
    "ID",
    "Type",
    "Submit Time",
    "Start Time",
    "End Time",
    "Wait Time",
    "Makespan",
    "Turnaround Time",
    "Status",
)
NODE_UTILIZATION_COLUMNS = ("Time", "Node", "State", "Running jobs", "Expected jobs")
PFS_UTILIZATION_COLUMNS = ("Time", "Read", "Write", "Read (rel.)", "Write (rel.)")
JOBS_COLUMNS = (
    "job_id",
    "position",
    "type",
    "submit_time",
    "start_time",
    "end_time",
    "wait_time",
    "run_time",
    "turnaround_time",
    "status",
    "num_nodes_min",
    "num_nodes_max",
    "first_nodes",
    "last_nodes",
    "max_nodes",
    "reconfigurations",
    "node_seconds",
    "node_counts",
)


def _time(value: float) -> str:
    return repr(float(value))


def job_rows(sim: Simulation) -> list[dict]:
    """One dict per job (ElastiSim id order) with times (-1 when unknown), status and the node-count
    history."""
    rows = []
    for run in sim.runs:
        spec, started, ended = run.spec, run.start >= 0, run.end >= 0
        history = run.history
        node_seconds = sum(
            (after[0] - before[0]) * before[1] for before, after in zip(history, history[1:])
        )
        counts = [count for _, count in history if count]
        rows.append(
            {
                "job_id": spec.identifier,
                "position": spec.position,
                "type": spec.type,
                "submit_time": spec.submit_time,
                "start_time": run.start,
                "end_time": run.end,
                "wait_time": run.start - spec.submit_time if started else -1.0,
                "run_time": run.end - run.start if started and ended else -1.0,
                "turnaround_time": run.end - spec.submit_time if ended else -1.0,
                "status": run.status,
                "num_nodes_min": spec.num_nodes_min,
                "num_nodes_max": spec.num_nodes_max,
                "first_nodes": counts[0] if counts else 0,
                "last_nodes": counts[-1] if counts else 0,
                "max_nodes": max(counts, default=0),
                "reconfigurations": run.reconfigurations,
                "node_seconds": node_seconds,
                "node_counts": ";".join(f"{when:g}:{count}" for when, count in history),
            }
        )
    return rows


def write_job_statistics(rows: list[dict], path: str | Path) -> Path:
    with atomic_path(path) as tmp, open(tmp, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(JOB_STATISTICS_COLUMNS)
        for row in rows:
            started = row["start_time"] >= 0
            writer.writerow(
                (
                    row["job_id"],
                    row["type"],
                    _time(row["submit_time"]),
                    _time(row["start_time"]),
                    _time(row["end_time"]),
                    _time(row["wait_time"]),
                    _time(row["run_time"]) if started else "-1.0",
                    _time(row["turnaround_time"]),
                    row["status"],
                )
            )
    return Path(path)


def write_node_utilization(sim: Simulation, path: str | Path) -> Path:
    """A row per node state change, as `csv.writer` writes it (names quoted where they need it,
    CRLF line ends), each time's and job list's text made once: times are floats (`repr`), job
    lists integers."""
    names = [_csv_field(name) for name in sim.platform.names]
    labels = {state: state.name.lower() for state in {entry[2] for entry in sim.node_log}}
    jobs = {(): "none"}  # the text of each job list, made once
    lines = []
    last, stamp = None, ""
    for when, node, state, running, expected in sim.node_log:
        if when != last or not when:  # rows of one time share its text (0.0 and -0.0 do not)
            last, stamp = when, _time(when)
        ran = jobs.get(running)
        if ran is None:
            ran = jobs[running] = ";".join(map(str, running))
        wait = jobs.get(expected)
        if wait is None:
            wait = jobs[expected] = ";".join(map(str, expected))
        lines.append(f"{stamp},{names[node]},{labels[state]},{ran},{wait}\r\n")
    with atomic_path(path) as tmp, open(tmp, "w", newline="") as handle:
        handle.write(",".join(map(_csv_field, NODE_UTILIZATION_COLUMNS)) + "\r\n")
        handle.write("".join(lines))
    return Path(path)


def _csv_field(text: str) -> str:
    """`text` as one field of a `csv.writer` row of several (quoted if it holds a comma, quote or
    line end; empty as nothing, which a row of this one field would quote)."""
    buffer = io.StringIO()
    csv.writer(buffer).writerow(("", text))  # the default dialect, as write_job_statistics
    return buffer.getvalue()[1:-2]  # without the empty first field's comma and the line end


def stays(sim: Simulation):
    """(node, job, start, end) for every stay of a job on a node, from the node log."""
    open_stays: dict[int, dict[int, float]] = {}
    for when, node, _, running, _ in sim.node_log:
        current = open_stays.setdefault(node, {})
        for job in [job for job in current if job not in running]:
            yield node, job, current.pop(job), when
        for job in running:
            current.setdefault(job, when)


def _samples(sim: Simulation, interval: float) -> np.ndarray:
    """The ends of the sensing intervals up to the last job end."""
    end = max((run.end for run in sim.runs), default=0.0)
    return np.arange(interval, end + interval, interval) if end > 0 else np.zeros(0)


def _per_interval(
    times: np.ndarray, levels: np.ndarray, samples: np.ndarray, interval: float
) -> np.ndarray:
    """The means of step functions (column k: `levels[i, k]` from `times[i]` on, 0 before) over
    each interval ending at `samples` (a row each): their integrals at the samples, differenced."""
    if not len(times):
        return np.zeros((len(samples), levels.shape[1]))
    integral = np.concatenate(
        (np.zeros((1, levels.shape[1])), np.cumsum(levels[:-1] * np.diff(times)[:, None], axis=0))
    )
    at = np.searchsorted(times, samples, side="right") - 1
    before = at < 0  # samples before the first step: integral 0
    clipped = np.maximum(at, 0, out=at)
    # the same operations as integral[clipped] + levels[clipped] * elapsed, 0 before the first
    # step, then differenced; in place: fewer fresh arrays (page faults in a fresh process)
    rise = levels[clipped]
    rise *= (samples - times[clipped])[:, None]
    total = integral[clipped]
    total += rise
    total[before] = 0.0
    means = np.empty_like(total)
    means[:1] = total[:1]
    np.subtract(total[1:], total[:-1], out=means[1:])
    means /= interval
    return means


def _write_table(path, header, table: np.ndarray) -> Path:
    """A CSV of a time column and value columns (cosched.simulator.elastic.sensing.write_series)."""
    return write_series(
        path, header, table[:, 0], [table[:, column] for column in range(1, table.shape[1])]
    )


def write_pfs_utilization(sim: Simulation, path: str | Path, interval: float) -> Path:
    """PFS throughput averaged over each sensing interval up to the last job end."""
    samples = _samples(sim, interval)
    log = np.asarray(sim.pfs_log, dtype=np.float64).reshape(-1, 3)
    means = _per_interval(log[:, 0], log[:, 1:], samples, interval)
    read, write = means[:, 0], means[:, 1]
    capacities = [sim.pfs_capacity(key) for key in ("pfs_read", "pfs_write")]
    return _write_table(
        path,
        PFS_UTILIZATION_COLUMNS,
        np.column_stack([samples, read, write, read / capacities[0], write / capacities[1]]),
    )


def write_cpu_utilization(sim: Simulation, path: str | Path, interval: float) -> Path:
    """Per node, the busy share of each sensing interval: a job runs on the node and does not wait
    for I/O. A failed write (a full disk) is an InputError naming the file."""
    with atomic_path(path) as tmp:
        try:
            write_cpu_series(sim, tmp, interval)
        except OSError as error:
            reason = error.strerror or str(error)
            raise InputError(f"cannot write the output: {reason}", source=str(path)) from None
    return Path(path)


def write_cpu_series(sim: Simulation, path: str | Path, interval: float) -> None:
    """`write_cpu_utilization` straight into `path` (not atomic: for a caller that moves it)."""
    samples = _samples(sim, interval)
    nodes: list[int] = []
    times: list[float] = []
    for node, _, start, end in stays(sim):
        nodes += (node, node)
        times += (start, end)
    log = sim.io_log  # (job, start, end, nodes): the nodes wait for I/O from start to end
    sizes = [len(entry[3]) for entry in log]
    waits = sum(sizes)
    io_nodes = np.fromiter(
        itertools.chain.from_iterable([entry[3] for entry in log]), dtype=np.int64, count=waits
    )
    io_starts = np.repeat(np.fromiter((entry[1] for entry in log), np.float64, len(log)), sizes)
    io_ends = np.repeat(np.fromiter((entry[2] for entry in log), np.float64, len(log)), sizes)
    runs = node_runs(
        np.concatenate([np.array(nodes, dtype=np.int64), io_nodes, io_nodes]),
        np.concatenate([np.array(times, dtype=np.float64), io_starts, io_ends]),
        np.concatenate(
            [
                np.tile(np.array([1, -1], dtype=np.int64), len(nodes) // 2),  # a stay's start, end
                np.full(waits, -1, dtype=np.int64),
                np.ones(waits, dtype=np.int64),
            ]
        ),
        len(sim.platform),
        len(samples),
        interval,
    )
    with open(path, "wb") as handle:
        write_runs_into(handle, ("Time", *sim.platform.names), samples, runs)


def write_jobs(rows: list[dict], path: str | Path) -> Path:
    """cosched's jobs.csv: a `job_rows` row per job, its JOBS_COLUMNS in order (what
    `csv.DictWriter` writes, without its per-row checks: the rows hold exactly these keys)."""
    columns = operator.itemgetter(*JOBS_COLUMNS)
    with atomic_path(path) as tmp, open(tmp, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(JOBS_COLUMNS)
        writer.writerows(map(columns, rows))
    return Path(path)


def _median(values: list[float]) -> float:
    """`numpy.median` of a list (the same number: the mean of the two middle values of an even
    count is their sum halved), without the `numpy.ma` import it costs."""
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return float(ordered[middle])
    return (float(ordered[middle - 1]) + float(ordered[middle])) / 2


def summary(sim: Simulation, rows: list[dict]) -> dict:
    """Makespan, waits and turnarounds overall and per job type, node utilisation, protocol
    counters."""

    def stats(selected):
        waits = [row["wait_time"] for row in selected if row["start_time"] >= 0]
        turnarounds = [row["turnaround_time"] for row in selected if row["status"] == "completed"]
        return {
            "jobs": len(selected),
            "mean_wait": float(np.mean(waits)) if waits else None,
            "median_wait": _median(waits) if waits else None,
            "mean_turnaround": float(np.mean(turnarounds)) if turnarounds else None,
            "median_turnaround": _median(turnarounds) if turnarounds else None,
        }

    ends = [row["end_time"] for row in rows if row["end_time"] >= 0]
    first = min(row["submit_time"] for row in rows)
    makespan = max(ends) - first if ends else 0.0
    node_seconds = sum(row["node_seconds"] for row in rows)
    result = {
        "algorithm": sim.algorithm_name,
        "nodes": len(sim.platform),
        "completed": sum(row["status"] == "completed" for row in rows),
        "killed": sum(row["status"] == "killed" for row in rows),
        "never_started": sum(row["start_time"] < 0 for row in rows),
        "makespan": makespan,  # 001 §6.3 (Fig. 6): last end minus first submission
        "utilization": node_seconds / (len(sim.platform) * makespan) if makespan else 0.0,
        **stats(rows),
        "by_type": {
            kind: stats([row for row in rows if row["type"] == kind])
            for kind in dict.fromkeys(row["type"] for row in rows)
        },
        "reconfigurations": sum(row["reconfigurations"] for row in rows),
        "invocations": sim.invocations,
        "dropped_invocations": sim.dropped,
        "wall_seconds": sim.wall_seconds,
    }
    return result
