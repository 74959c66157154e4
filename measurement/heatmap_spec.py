"""Inputs of `cosched measure-heatmap`: the applications (APPS.json), the nodes (--nodes) and the
pairs.

APPS.json is ``{"applications": [APP, ...]}`` (or the list alone); each APP has

- ``name`` (text without commas or whitespace, unique), ``np`` (processes, a positive whole number),
- ``command``: the launch template, a shell command line (text) or an argument list, with
  placeholders `PLACEHOLDERS` in braces (``{{`` and ``}}`` for literal braces),
- optional ``cwd`` (folder, relative to APPS.json), ``env`` (text -> text), ``timeout`` (seconds per
  launch) and ``estimate`` (seconds of one compact run, for the plan's node-hours).

`--nodes` is ``local:K`` (this machine's CPUs in K equal node-like sets), ``hosts:FILE`` (one host a
line: ``name``, ``name slots=N`` or ``name:N``; ``#`` comments; OpenMPI's default of one slot) or
``slurm`` (the nodes of the current allocation, ``SLURM_JOB_NODELIST`` expanded like ``scontrol show
hostnames``, cores from ``SLURM_JOB_CPUS_PER_NODE``). Every reader raises `InputError` naming the
file, line and field.
"""

from __future__ import annotations

import itertools
import os
import re
import shutil
import string
from dataclasses import dataclass, field
from pathlib import Path

from cosched.errors import InputError
from cosched.inputs import (
    MAX_CORES_PER_NODE,
    MAX_PROCS,
    MAX_SECONDS,
    check_number,
    parse_json,
    read_text,
)

__all__ = [
    "Application",
    "PoolNode",
    "PLACEHOLDERS",
    "load_apps",
    "check_launchable",
    "parse_nodes",
    "expand_nodelist",
    "parse_cpus_per_node",
    "read_hostfile",
    "local_nodes",
    "read_pairs",
    "render",
]

PLACEHOLDERS = {
    "np": "processes of the application",
    "nodes": "number of nodes of this launch",
    "ppn": "processes per node",
    "hosts": "comma-separated host names",
    "hostfile": "path of a hostfile (one 'host slots=ppn' a line) written for this launch",
    "cpus": "comma-separated CPU ids the launch is bound to on each node",
    "name": "the application's name",
    "mode": "compact, spread or pair",
    "corunner": "the co-runner's name in a pair, else empty",
    "run": "the measurement's id (for file names)",
}
APP_FIELDS = ("name", "np", "command", "cwd", "env", "timeout", "estimate")
NAME_PATTERN = re.compile(r"[A-Za-z0-9_.+@-]+")
HOST_PATTERN = re.compile(r"[A-Za-z0-9_.-]+")
# hosts one --nodes may name (an expanded Slurm list larger than this is a typo)
MAX_NODES_SPEC = 100_000


@dataclass(frozen=True)
class Application:
    """One application to measure: its launch template and the optional launch settings."""

    name: str
    np: int
    command: str | tuple[str, ...]
    cwd: str | None = None
    env: tuple[tuple[str, str], ...] = ()
    timeout: float | None = None
    estimate: float | None = None

    def to_json(self) -> dict:
        command = self.command if isinstance(self.command, str) else list(self.command)
        return {
            "name": self.name,
            "np": self.np,
            "command": command,
            "cwd": self.cwd,
            "env": dict(self.env),
            "timeout": self.timeout,
            "estimate": self.estimate,
        }


@dataclass(frozen=True)
class PoolNode:
    """A node of the pool: a host name and its usable CPU ids (local sets: real ids)."""

    host: str
    cpus: tuple[int, ...] = field(default=())
    local: bool = False

    @property
    def cores(self) -> int:
        return len(self.cpus)


def _placeholders(template: str, source: str, where: str) -> None:
    try:
        names = [
            name
            for _, name, spec, conversion in string.Formatter().parse(template)
            if name is not None
        ]
    except ValueError as error:
        raise InputError(f"bad template: {error}", source=source, field=where) from None
    for name in names:
        if name not in PLACEHOLDERS:
            raise InputError(
                f"unknown placeholder {{{name}}}; known: {', '.join(PLACEHOLDERS)}",
                source=source,
                field=where,
            )


def render(command: str | tuple[str, ...], values: dict) -> str | list[str]:
    """The launch command with the placeholders filled in (checked by `load_apps`)."""
    if isinstance(command, str):
        return command.format(**values)
    return [part.format(**values) for part in command]


def _app_command(command, source: str, where: str) -> str | tuple[str, ...]:
    """An application's command: a command line (text), or a non-empty list of arguments (returned
    as a tuple)."""
    if isinstance(command, list) and command and all(isinstance(part, str) for part in command):
        for position, part in enumerate(command):
            _placeholders(part, source, f"{where}.command[{position}]")
        return tuple(command)
    if isinstance(command, str) and command.strip():
        _placeholders(command, source, f"{where}.command")
        return command
    raise InputError(
        "must be a command line (text) or a non-empty list of arguments",
        source=source,
        field=f"{where}.command",
    )


def _app(record, index: int, source: str, folder: Path) -> Application:
    where = f"applications[{index}]"
    if not isinstance(record, dict):
        raise InputError("must be an object with name, np and command", source=source, field=where)
    unknown = [key for key in record if key not in APP_FIELDS]
    if unknown:
        raise InputError(
            f"unknown field; known: {', '.join(APP_FIELDS)}",
            source=source,
            field=f"{where}.{unknown[0]}",
        )
    for key in ("name", "np", "command"):
        if key not in record:
            raise InputError("missing", source=source, field=f"{where}.{key}")
    name = record["name"]
    if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
        raise InputError(
            "must be text of letters, digits and _.+@- (no commas or spaces)",
            source=source,
            field=f"{where}.name",
        )
    np_ = check_number(
        record["np"],
        source=source,
        field=f"{where}.np",
        integer=True,
        minimum=1,
        limit=MAX_PROCS,
        text=False,
    )
    command = _app_command(record["command"], source, where)
    cwd = record.get("cwd")
    if cwd is not None:
        if not isinstance(cwd, str) or not cwd:
            raise InputError("must be a folder name", source=source, field=f"{where}.cwd")
        cwd = str(folder / cwd) if not os.path.isabs(cwd) else cwd
    env = record.get("env") or {}
    if not isinstance(env, dict) or not all(
        isinstance(k, str) and k and "=" not in k and isinstance(v, str) for k, v in env.items()
    ):
        raise InputError(
            "must be an object of text values (NAME: VALUE)", source=source, field=f"{where}.env"
        )
    numbers = {}
    for key in ("timeout", "estimate"):
        value = record.get(key)
        numbers[key] = (
            None
            if value is None
            else check_number(
                value,
                source=source,
                field=f"{where}.{key}",
                minimum=0,
                exclusive_minimum=True,
                limit=MAX_SECONDS,
                text=False,
            )
        )
    return Application(name, np_, command, cwd, tuple(sorted(env.items())), **numbers)


def load_apps(path: str | os.PathLike) -> list[Application]:
    """The applications of an APPS.json file, validated (InputError naming file and field)."""
    source = os.fspath(path)
    document = parse_json(path)
    records = document.get("applications") if isinstance(document, dict) else document
    if isinstance(document, dict) and set(document) - {"applications"}:
        extra = sorted(set(document) - {"applications"})[0]
        raise InputError(
            "unknown field; APPS.json holds 'applications'", source=source, field=extra
        )
    if not isinstance(records, list) or not records:
        raise InputError(
            "needs a non-empty list of applications", source=source, field="applications"
        )
    apps = [
        _app(record, index, source, Path(source).resolve().parent)
        for index, record in enumerate(records)
    ]
    seen: dict[str, int] = {}
    for index, app in enumerate(apps):
        if app.name in seen:
            raise InputError(
                f"name {app.name!r} given twice (first at applications[{seen[app.name]}])",
                source=source,
                field=f"applications[{index}].name",
            )
        seen[app.name] = index
    return apps


def _sample_values(app: Application) -> dict:
    """Placeholder values of the kind a launch gets (`heatmap_plan.place`), to try a template."""
    return {
        "np": app.np,
        "nodes": 1,
        "ppn": app.np,
        "hosts": "host",
        "hostfile": "hosts.txt",
        "cpus": "0",
        "name": app.name,
        "mode": "compact",
        "corunner": "",
        "run": "run",
    }


def check_launchable(apps: list[Application], path: str | os.PathLike) -> None:
    """InputError (naming APPS.json and the field) for what would fail every launch of an
    application, found before anything runs: a ``cwd`` that is no folder, a template whose
    placeholders cannot be filled in (a bad format spec), an argument-list command whose program
    is not found (on the application's PATH). For launches on this machine: a remote Dask worker
    has a file system of its own."""
    source = os.fspath(path)
    for index, app in enumerate(apps):
        where = f"applications[{index}]"
        if app.cwd is not None and not os.path.isdir(app.cwd):
            problem = "is a file" if os.path.exists(app.cwd) else "does not exist"
            raise InputError(
                f"{app.cwd!r} {problem}; give a folder", source=source, field=f"{where}.cwd"
            )
        try:
            rendered = render(app.command, _sample_values(app))
        except (ValueError, TypeError, IndexError, KeyError) as error:
            raise InputError(
                f"the placeholders cannot be filled in: {error}",
                source=source,
                field=f"{where}.command",
            ) from None
        if isinstance(rendered, list):
            _check_program(rendered[0], app, source, f"{where}.command[0]")


def _check_program(program: str, app: Application, source: str, field: str) -> None:
    """The program of an argument-list command: a path (relative to the launch's cwd) that can be
    executed, or a name found on the PATH the launch gets."""
    if "/" in program:
        found = os.path.join(app.cwd or os.getcwd(), program)
        if os.path.isfile(found) and os.access(found, os.X_OK):
            return
        raise InputError(
            f"program {program!r} is not an executable file", source=source, field=field
        )
    search = dict(app.env).get("PATH", os.environ.get("PATH", os.defpath))
    if shutil.which(program, path=search) is None:
        raise InputError(f"program {program!r} is not on the PATH", source=source, field=field)


# --- nodes ------------------------------------------------------------------------------------


def _expand_part(part: str) -> list[str]:
    """One comma-free element of a Slurm host list, its bracket groups expanded (product)."""
    pieces = re.split(r"(\[[^\]]*\])", part)
    choices = []
    for piece in pieces:
        if not (piece.startswith("[") and piece.endswith("]")):
            if "[" in piece or "]" in piece:
                raise ValueError(f"unbalanced brackets in {part!r}")
            choices.append([piece])
            continue
        values: list[str] = []
        for item in piece[1:-1].split(","):
            match = re.fullmatch(r"(\d+)(?:-(\d+))?", item)
            if not match:
                raise ValueError(f"bad range {item!r} in {part!r}")
            low, high = match.group(1), match.group(2) or match.group(1)
            if int(high) < int(low):
                raise ValueError(f"descending range {item!r} in {part!r}")
            if int(high) - int(low) >= MAX_NODES_SPEC:
                raise ValueError(f"range {item!r} names more than {MAX_NODES_SPEC} hosts")
            width = len(low)
            values.extend(str(number).zfill(width) for number in range(int(low), int(high) + 1))
        choices.append(values)
    return ["".join(combo) for combo in itertools.product(*choices)]


def expand_nodelist(text: str) -> list[str]:
    """Slurm's compressed host list (``node[01-03,07],gpu[1-2]-ib``) as host names, like `scontrol
    show hostnames`; ValueError on a malformed list."""
    parts, depth, current = [], 0, ""
    for char in text.strip():
        if char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
            if depth < 0:
                raise ValueError(f"unbalanced brackets in {text!r}")
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    if depth != 0:
        raise ValueError(f"unbalanced brackets in {text!r}")
    parts.append(current)
    hosts = []
    for part in parts:
        if not part:
            raise ValueError(f"empty host name in {text!r}")
        hosts.extend(_expand_part(part))
        if len(hosts) > MAX_NODES_SPEC:
            raise ValueError(f"names more than {MAX_NODES_SPEC} hosts")
    for host in hosts:
        if not HOST_PATTERN.fullmatch(host):
            raise ValueError(f"bad host name {host!r}")
    return hosts


def parse_cpus_per_node(text: str, count: int) -> list[int]:
    """``SLURM_JOB_CPUS_PER_NODE`` (``36(x2),32``), one number per node; ValueError if bad (CPUs
    from 1 to MAX_CORES_PER_NODE, repeats from 1, no more nodes than `count`)."""
    values: list[int] = []
    for item in text.split(","):
        match = re.fullmatch(r"\s*(\d+)(?:\(x(\d+)\))?\s*", item)
        if not match:
            raise ValueError(f"bad item {item!r}")
        cpus, repeat = int(match.group(1)), int(match.group(2) or 1)
        if not 1 <= cpus <= MAX_CORES_PER_NODE.value:
            raise ValueError(
                f"{item.strip()!r}: CPUs of a node must be from 1 to {MAX_CORES_PER_NODE}"
            )
        if not 1 <= repeat <= count:
            raise ValueError(f"{item.strip()!r}: repeats must be from 1 to the {count} nodes")
        values.extend([cpus] * repeat)
        if len(values) > count:
            break
    if len(values) != count:
        raise ValueError(f"gives {len(values)} nodes, the node list has {count}")
    return values


def _slurm_nodes(environ) -> list[PoolNode]:
    listed = environ.get("SLURM_JOB_NODELIST") or environ.get("SLURM_NODELIST")
    if not listed:
        raise InputError(
            "not inside a Slurm allocation (SLURM_JOB_NODELIST is not set)", field="--nodes"
        )
    try:
        hosts = expand_nodelist(listed)
    except ValueError as error:
        raise InputError(f"cannot read SLURM_JOB_NODELIST: {error}", field="--nodes") from None
    cpus_text = environ.get("SLURM_JOB_CPUS_PER_NODE")
    if not cpus_text:
        raise InputError(
            "SLURM_JOB_CPUS_PER_NODE is not set; cores per node unknown", field="--nodes"
        )
    try:
        cores = parse_cpus_per_node(cpus_text, len(hosts))
    except ValueError as error:
        raise InputError(f"cannot read SLURM_JOB_CPUS_PER_NODE: {error}", field="--nodes") from None
    return [PoolNode(host, tuple(range(count))) for host, count in zip(hosts, cores)]


def read_hostfile(path: str | os.PathLike) -> list[PoolNode]:
    """Hosts and slots of a hostfile (``host``, ``host slots=N``, ``host:N``; ``#`` comments)."""
    source = os.fspath(path)
    nodes: list[PoolNode] = []
    seen: dict[str, int] = {}
    for number, raw in enumerate(read_text(path).splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        match = re.fullmatch(
            r"([^\s:=]+)(?::(\S+)|\s+slots\s*=\s*(\S+))?(?:\s+max[-_]slots\s*=\s*\S+)?", line
        )
        if not match or not HOST_PATTERN.fullmatch(match.group(1)):
            raise InputError(
                "expected 'host', 'host slots=N' or 'host:N'",
                source=source,
                line=number,
                field="host",
            )
        host = match.group(1)
        slots_text = match.group(2) or match.group(3)
        slots = (
            1
            if slots_text is None
            else check_number(
                slots_text,
                source=source,
                line=number,
                field="slots",
                integer=True,
                minimum=1,
                limit=MAX_CORES_PER_NODE,
            )
        )
        if host in seen:
            raise InputError(
                f"host {host!r} listed twice (first on line {seen[host]})",
                source=source,
                line=number,
                field="host",
            )
        seen[host] = number
        nodes.append(PoolNode(host, tuple(range(slots))))
    if not nodes:
        raise InputError("no hosts", source=source)
    return nodes


def local_nodes(count: int, cpus: list[int] | None = None) -> list[PoolNode]:
    """The CPUs this process may use, split into `count` equal node-like sets."""
    cpus = sorted(os.sched_getaffinity(0)) if cpus is None else sorted(cpus)
    if count > len(cpus):
        raise InputError(
            f"local:{count} needs at least {count} CPUs, this process may use {len(cpus)}",
            field="--nodes",
        )
    size = len(cpus) // count
    return [
        PoolNode(f"local{i}", tuple(cpus[i * size : (i + 1) * size]), local=True)
        for i in range(count)
    ]


def parse_nodes(spec: str, environ=None) -> list[PoolNode]:
    """The node pool of a --nodes value: ``slurm``, ``hosts:FILE`` or ``local:K``."""
    environ = os.environ if environ is None else environ
    if spec == "slurm":
        return _slurm_nodes(environ)
    kind, _, value = spec.partition(":")
    if kind == "hosts" and value:
        return read_hostfile(value)
    if kind == "local" and value:
        count = check_number(value, field="--nodes", integer=True, minimum=1, limit=MAX_PROCS)
        return local_nodes(count)
    raise InputError(f"expected slurm, hosts:FILE or local:K, got {spec!r}", field="--nodes")


def read_pairs(path: str | os.PathLike, names: list[str]) -> list[tuple[str, str]]:
    """The pairs of a --pairs FILE: ``A,B`` (or ``A B``) a line, ``#`` comments."""
    source = os.fspath(path)
    known = set(names)
    pairs: dict[frozenset, tuple[str, str]] = {}
    for number, raw in enumerate(read_text(path).splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        parts = [part for part in re.split(r"[,\s]+", line) if part]
        if len(parts) != 2:
            raise InputError(
                "expected two application names 'A,B'", source=source, line=number, field="pair"
            )
        for part in parts:
            if part not in known:
                raise InputError(
                    f"unknown application {part!r} (not in APPS.json)",
                    source=source,
                    line=number,
                    field="pair",
                )
        a, b = sorted(parts, key=names.index)
        pairs.setdefault(frozenset((a, b)), (a, b))
    if not pairs:
        raise InputError("no pairs", source=source)
    return list(pairs.values())
