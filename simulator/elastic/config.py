"""The ElastiSim configuration file: inputs, invocation triggers, sensing and output paths (001
§5.4-5.5).

Keys and defaults follow ElastiSim's configuration page; `zmq_url` is accepted and unused (the
algorithm runs in
process), `task_times` is recorded but not written. Paths resolve against the working directory.
ElastiSim's own keys outside its configuration page are read with ElastiSim's meaning (its
Scheduler.cpp and
SimulationEngine.cpp): `schedule_on_reconfiguration` (invoke the algorithm after a reconfiguration
is applied
at a scheduling point, when `schedule_on_scheduling_point` is off), `job_kill_grace_period`
(seconds past the
walltime before a job is killed, default 0) and `show_progress_bar` (ElastiSim's console progress
bar; cosched
prints none, so it changes nothing).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from cosched.errors import InputError
from cosched.inputs import MAX_SECONDS, check_number, parse_json

__all__ = ["Configuration", "load_configuration", "OUTPUT_KEYS", "SENSING_KEYS"]

OUTPUT_KEYS = ("job_statistics", "node_utilization")
SENSING_KEYS = ("cpu_utilization", "pfs_utilization", "network_activity", "gpu_utilization")
_BOOLEANS = (
    "schedule_on_job_submit",
    "schedule_on_job_finalize",
    "schedule_on_scheduling_point",
    "allow_oversubscription",
    "clip_evolving_requests",
    "forward_io_information",
    "sensing",
    "log_task_times",
    "schedule_on_reconfiguration",
    "show_progress_bar",
)
_DEFAULT_TRUE = ("show_progress_bar", "clip_evolving_requests")  # ElastiSim's defaults when absent
_KNOWN = {
    "jobs_file",
    "platform_file",
    "zmq_url",
    "scheduling_interval",
    "min_scheduling_interval",
    "job_kill_grace_period",
    "sensing_interval",
    "pfs_read_links",
    "pfs_write_links",
    "task_times",
    *_BOOLEANS,
    *OUTPUT_KEYS,
    *SENSING_KEYS,
}


@dataclass(frozen=True)
class Configuration:
    """A validated configuration; `outputs` maps each output key to its path."""

    source: str
    jobs_file: str
    platform_file: str
    scheduling_interval: float = 0.0
    min_scheduling_interval: float = 0.0
    schedule_on_job_submit: bool = False
    schedule_on_job_finalize: bool = False
    schedule_on_scheduling_point: bool = False
    allow_oversubscription: bool = False
    clip_evolving_requests: bool = True  # ElastiSim's default (Job.cpp): clip unless set to false
    forward_io_information: bool = False
    sensing: bool = False
    sensing_interval: float = 0.0
    log_task_times: bool = False
    outputs: dict = field(default_factory=dict)
    schedule_on_reconfiguration: bool = False
    show_progress_bar: bool = True
    job_kill_grace_period: float = 0.0
    # pfs_read_links / pfs_write_links: link ids of the platform (ElastiSim looks each up)
    pfs_links: dict = field(default_factory=dict)


def _check_input_files(raw: dict, source: str) -> None:
    """The jobs and platform files exist (relative to the working directory, as in ElastiSim)."""
    for key in ("jobs_file", "platform_file"):
        if not isinstance(raw.get(key), str) or not raw[key]:
            raise InputError("missing or not a path", source=source, field=key)
        if not os.path.isfile(raw[key]):
            raise InputError(
                f"no such file: {raw[key]} (relative paths resolve against the working directory "
                f"{os.getcwd()}, as in ElastiSim)",
                source=source,
                field=key,
            )


def _flags(raw: dict, source: str) -> dict[str, bool]:
    """The true/false keys, with ElastiSim's defaults."""
    flags = {}
    for key in _BOOLEANS:
        value = raw.get(key, key in _DEFAULT_TRUE)
        if not isinstance(value, bool):
            raise InputError(f"must be true or false, got {value!r}", source=source, field=key)
        flags[key] = value
    return flags


def load_configuration(path: str | os.PathLike) -> Configuration:
    """Read and check a configuration file (the triggers must invoke the algorithm, as ElastiSim
    requires)."""
    source = os.fspath(path)
    raw = parse_json(source)
    if not isinstance(raw, dict):
        raise InputError("a configuration is a JSON object", source=source)
    unknown = sorted(set(raw) - _KNOWN)
    if unknown:
        raise InputError(
            f"unknown key; known: {', '.join(sorted(_KNOWN))}", source=source, field=unknown[0]
        )
    _check_input_files(raw, source)
    flags = _flags(raw, source)
    interval = check_number(
        raw.get("scheduling_interval", 0),
        source=source,
        field="scheduling_interval",
        minimum=0,
        limit=MAX_SECONDS,
        text=False,
    )
    minimum = check_number(
        raw.get("min_scheduling_interval", 0),
        source=source,
        field="min_scheduling_interval",
        minimum=0,
        limit=MAX_SECONDS,
        text=False,
    )
    if interval == 0 and not (
        flags["schedule_on_job_submit"] and flags["schedule_on_job_finalize"]
    ):
        raise InputError(
            "the algorithm must be invoked periodically (scheduling_interval > 0) or on both job "
            "submit "
            "and job finalize",
            source=source,
            field="scheduling_interval",
        )
    grace = check_number(
        raw.get("job_kill_grace_period", 0),
        source=source,
        field="job_kill_grace_period",
        minimum=0,
        limit=MAX_SECONDS,
        text=False,
    )
    sensing_interval = 0.0
    if flags["sensing"]:
        sensing_interval = check_number(
            raw.get("sensing_interval"),
            source=source,
            field="sensing_interval",
            minimum=0,
            exclusive_minimum=True,
            limit=MAX_SECONDS,
            text=False,
        )
    outputs = {}
    for key in (*OUTPUT_KEYS, *SENSING_KEYS, "task_times"):
        value = raw.get(key)
        if value is not None and (not isinstance(value, str) or not value):
            raise InputError("must be a path", source=source, field=key)
        wanted = (
            flags["log_task_times"]
            if key == "task_times"
            else key in OUTPUT_KEYS or flags["sensing"]
        )
        if value is not None and wanted:
            outputs[key] = value
    return Configuration(
        source,
        raw["jobs_file"],
        raw["platform_file"],
        float(interval),
        float(minimum),
        sensing_interval=float(sensing_interval),
        outputs=outputs,
        job_kill_grace_period=float(grace),
        pfs_links=_pfs_links(raw, source),
        **{key: value for key, value in flags.items()},
    )


def _pfs_links(raw: dict, source: str) -> dict[str, tuple[str, ...]]:
    """pfs_read_links / pfs_write_links: a list of link ids, or one id (ElastiSim iterates the
    JSON value, so a single string is one link)."""
    links = {}
    for key in ("pfs_read_links", "pfs_write_links"):
        value = raw.get(key)
        if value is None:
            continue
        names = [value] if isinstance(value, str) else value
        if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
            raise InputError(f"must be a list of link ids, got {value!r}", source=source, field=key)
        links[key] = tuple(names)
    return links
