"""The action log of a simulation as CSV: what every scheduler, mechanism and event source did, in
order (``Engine(log_actions=True)``, ``simulate --log-actions``)."""

from __future__ import annotations

import numpy as np

__all__ = ["ACTION_COLUMNS", "write_actions"]

ACTION_COLUMNS = ("time", "action", "job_id", "reservation", "nodes", "reason", "on_demand_job_id")


def write_actions(actions: list, job_ids, path) -> None:
    """The action log as CSV (ACTION_COLUMNS): one row per start, resize, preempt, kill, finish,
    reserve, release and note (e.g. ``warn``), with the node ids involved (";"-joined: a job's nodes
    after the action; for a preemption, kill or finish the nodes it gave back) and the reason
    "who[:job index]" split into the reason and the job id it served. Reservations are named by
    their key (negative)."""
    import csv  # with an action log only: a run without one does not pay its import

    ids = np.asarray(job_ids).tolist()
    with open(path, "w", newline="") as handle:
        out = csv.writer(handle)
        out.writerow(ACTION_COLUMNS)
        for when, action, job, key, nodes, reason in actions:
            who, _, served = reason.partition(":")
            out.writerow(
                (
                    repr(float(when)),
                    action,
                    "" if job < 0 else ids[job],
                    key or "",
                    ";".join(map(str, nodes)),
                    who,
                    "" if not served else ids[int(served)],
                )
            )
