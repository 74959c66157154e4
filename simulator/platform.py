"""The simulated cluster: nodes x sockets per node x cores per socket (000 §3.1), optionally with
memory and GPUs per node and several node types (groups); presets, JSON and SimGrid XML files.

Node ids run group by group, in the order the groups are given. Memory is counted in MiB per node,
GPUs in whole devices per node; a platform that gives neither models cores only, as before.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from cosched.errors import InputError
from cosched.inputs import MAX_CORES_PER_NODE, MAX_NODES, check_number, parse_json_object, shown
from cosched.names import did_you_mean

__all__ = ["Platform", "NodeGroup", "PRESETS", "load_platform", "MAX_GPUS_PER_NODE"]

MAX_GPUS_PER_NODE = 1024  # GPUs of one node (the limit of ElastiSim's reader too)
MAX_MEMORY_MIB = 2.0**40  # MiB of one node (1 EiB): finite, exact in float64


@dataclass(frozen=True)
class NodeGroup:
    """Nodes of one type: how many, their cores, their memory (MiB, None: not modelled) and
    GPUs."""

    nodes: int
    sockets_per_node: int = 1
    cores_per_socket: int = 1
    memory_per_node: float | None = None
    gpus_per_node: int = 0
    name: str = "nodes"

    @property
    def cores_per_node(self) -> int:
        return self.sockets_per_node * self.cores_per_socket

    def to_dict(self) -> dict:
        return _node_fields(self)


@dataclass(frozen=True)
class Platform:
    """A cluster; jobs get whole nodes (compact) or half nodes (co-location).

    One node type by default (`nodes` x `sockets_per_node` x `cores_per_socket`, with optional
    `memory_per_node` and `gpus_per_node`); `groups` gives several (build it with `of_groups`): then
    `nodes` is their total and the per-node fields are the first group's.
    """

    nodes: int
    sockets_per_node: int = 1
    cores_per_socket: int = 1
    name: str = "custom"
    memory_per_node: float | None = None
    gpus_per_node: int = 0
    groups: tuple[NodeGroup, ...] = field(default=())

    def __post_init__(self) -> None:
        if self.groups and not isinstance(self.groups[0], NodeGroup):  # read back from to_dict
            object.__setattr__(self, "groups", tuple(NodeGroup(**g) for g in self.groups))

    @classmethod
    def of_groups(cls, groups, name: str = "custom") -> Platform:
        """A platform of several node types; one group gives the plain one-type platform."""
        groups = tuple(groups)
        first = groups[0]
        if len(groups) == 1:
            return cls(
                first.nodes,
                first.sockets_per_node,
                first.cores_per_socket,
                name,
                first.memory_per_node,
                first.gpus_per_node,
            )
        return cls(
            sum(group.nodes for group in groups),
            first.sockets_per_node,
            first.cores_per_socket,
            name,
            first.memory_per_node,
            first.gpus_per_node,
            groups,
        )

    @property
    def node_groups(self) -> tuple[NodeGroup, ...]:
        """The node types in node-id order (one for a one-type platform)."""
        if self.groups:
            return self.groups
        return (
            NodeGroup(
                self.nodes,
                self.sockets_per_node,
                self.cores_per_socket,
                self.memory_per_node,
                self.gpus_per_node,
                self.name,
            ),
        )

    @property
    def uniform(self) -> bool:
        """One node type."""
        return not self.groups

    @property
    def plain(self) -> bool:
        """One node type with cores only (no memory, no GPUs): the platform of the thesis."""
        return not self.groups and self.memory_per_node is None and not self.gpus_per_node

    @property
    def cores_per_node(self) -> int:
        return self.sockets_per_node * self.cores_per_socket

    @property
    def total_cores(self) -> int:
        if self.groups:
            return sum(group.nodes * group.cores_per_node for group in self.groups)
        return self.nodes * self.cores_per_node

    @property
    def max_job_cores(self) -> int:
        """Cores of the largest node type: the most one job can use (it runs on one type)."""
        return max(group.nodes * group.cores_per_node for group in self.node_groups)

    def to_dict(self) -> dict:
        data = _node_fields(self)
        if self.groups:
            data["groups"] = [group.to_dict() for group in self.groups]
        return data


# 000 §4.1 Table 1 (ARIS, Marconi, Grid5000-Grvingt) and the machines of the bundled SWF traces
# (MaxNodes / MaxProcs of their headers). Marconi: the 100-node partition of 000 §4.3;
# Grvingt: the 8-node validation sub-cluster of 000 §4.2; Curie: 93,312 cores as uniform 16-core
# nodes.
PRESETS: dict[str, Platform] = {
    p.name: p
    for p in (
        Platform(420, 2, 10, "aris"),
        Platform(100, 2, 24, "marconi"),
        Platform(8, 2, 16, "grvingt"),
        Platform(128, 1, 1, "sdsc-sp2"),
        Platform(5832, 2, 8, "curie"),
        Platform(1024, 2, 4, "ricc"),
        Platform(338, 1, 1, "ctc-sp2"),
        Platform(100, 1, 1, "kth-sp2"),
        Platform(240, 1, 1, "hpc2n"),
        Platform(1024, 1, 1, "lanl-cm5"),
        Platform(1002, 4, 1, "llnl-thunder"),
        Platform(128, 1, 1, "nasa-ipsc"),
        Platform(144, 8, 1, "sdsc-blue"),
    )
}

_FIELDS = ("nodes", "sockets_per_node", "cores_per_socket")
_RESOURCES = ("memory_per_node", "gpus_per_node")


def load_platform(spec: str | os.PathLike) -> Platform:
    """A preset name (`aris`, `sdsc-sp2`, ...), a JSON file, or a SimGrid XML platform (`.xml`).

    JSON: {"nodes", "sockets_per_node", "cores_per_socket", optional "memory_per_node" (MiB) and
    "gpus_per_node"}, or {"groups": [{"name", "nodes", ...the same fields}, ...]} for several node
    types. The counts are whole numbers, at least 1, nodes at most `MAX_NODES` and cores per node at
    most `MAX_CORES_PER_NODE` (`cosched.inputs`); memory is positive, GPUs whole and at least 0; an
    optional "name" is a string. XML: one group per `<cluster>`, read by the ElastiSim platform
    reader (`cosched.simulator.elastic.platform`): its hosts, SimGrid's `core` attribute (cores per
    node, default 1), the `num_gpus` property and a `memory_mib` property.
    """
    key = str(spec).lower()
    if key in PRESETS:
        return PRESETS[key]
    path = Path(spec)
    if not path.exists():
        raise InputError(
            f"not a platform preset ({', '.join(PRESETS)}) nor an existing JSON or XML file"
            + did_you_mean(str(spec), PRESETS),
            source=str(spec),
        )
    if key.endswith(".xml"):
        return _from_simgrid(path)
    source = str(path)
    data = parse_json_object(path)
    name = data.get("name", path.stem)
    if not isinstance(name, str):
        raise InputError(f"must be a string, got {shown(name)}", source=source, field="name")
    if "groups" in data:
        unknown = set(data) - {"groups", "name"}
        if unknown:
            raise InputError(
                f"unknown fields {sorted(unknown)} beside groups",
                source=source,
                field=sorted(unknown)[0],
            )
        groups = data["groups"]
        if not isinstance(groups, list) or not groups:
            raise InputError(
                "must be a non-empty list of node groups", source=source, field="groups"
            )
        parsed = [_group(entry, source, f"groups[{i}]") for i, entry in enumerate(groups)]
        names = [group.name for group in parsed]
        repeated = next((n for n in names if names.count(n) > 1), None)
        if repeated is not None:
            raise InputError(f"group name {repeated!r} given twice", source=source, field="groups")
        total = sum(group.nodes for group in parsed)
        if total > MAX_NODES.value:
            raise InputError(
                f"{total} nodes in all, above the limit {MAX_NODES}", source=source, field="groups"
            )
        return Platform.of_groups(parsed, name)
    group = _group({**data, "name": name}, source, "")
    return Platform.of_groups([group], name)


def _group(data, source: str, where: str) -> NodeGroup:
    """One node type from its JSON object; `where` prefixes the field names of errors."""

    def at(name: str) -> str:
        return f"{where}.{name}" if where else name

    if not isinstance(data, dict):
        raise InputError("expected a JSON object", source=source, field=where or None)
    unknown = set(data) - set(_FIELDS) - set(_RESOURCES) - {"name"}
    if unknown:
        raise InputError(
            f"unknown fields {sorted(unknown)}", source=source, field=at(sorted(unknown)[0])
        )
    if "nodes" not in data:
        raise InputError("missing", source=source, field=at("nodes"))
    values = {
        name: check_number(
            data.get(name, 1),
            source=source,
            field=at(name),
            integer=True,
            minimum=1,
            text=False,
            limit=MAX_NODES if name == "nodes" else MAX_CORES_PER_NODE,
        )
        for name in _FIELDS
    }
    if values["sockets_per_node"] * values["cores_per_socket"] > MAX_CORES_PER_NODE.value:
        raise InputError(
            f"sockets_per_node x cores_per_socket = {values['sockets_per_node']} x "
            f"{values['cores_per_socket']} is above the limit {MAX_CORES_PER_NODE}",
            source=source,
            field=at("cores_per_socket"),
        )
    memory = data.get("memory_per_node")
    if memory is not None:
        memory = float(
            check_number(
                memory,
                source=source,
                field=at("memory_per_node"),
                text=False,
                minimum=0,
                exclusive_minimum=True,
                maximum=MAX_MEMORY_MIB,
            )
        )
    gpus = check_number(
        data.get("gpus_per_node", 0),
        source=source,
        field=at("gpus_per_node"),
        integer=True,
        minimum=0,
        text=False,
        maximum=MAX_GPUS_PER_NODE,
    )
    name = data.get("name", where or "nodes")
    if not isinstance(name, str):
        raise InputError(f"must be a string, got {shown(name)}", source=source, field=at("name"))
    return NodeGroup(name=name, memory_per_node=memory, gpus_per_node=int(gpus), **values)


def _from_simgrid(path: Path) -> Platform:
    """One node group per `<cluster>` of a SimGrid XML platform, read by ElastiSim's reader."""
    from cosched.simulator.elastic.platform import load_elastisim_platform

    nodes = load_elastisim_platform(path)
    assert nodes.cluster is not None  # the XML form names each node's cluster
    groups = []
    for index, cluster in enumerate(nodes.cluster_names):
        members = nodes.cluster == index
        first = int(members.argmax())
        memory = None if nodes.memory is None else float(nodes.memory[first])
        groups.append(
            NodeGroup(
                int(members.sum()),
                1,
                1 if nodes.cores is None else int(nodes.cores[first]),
                memory if memory and memory > 0 else None,
                int(nodes.gpus[first]),
                cluster,
            )
        )
    return Platform.of_groups(groups, path.stem)


def _node_fields(nodes: NodeGroup | Platform) -> dict:
    """A node group's or a platform's fields as JSON, memory and GPUs only when set (so the digests
    of platforms without them do not change)."""
    data: dict = {
        "name": nodes.name,
        "nodes": nodes.nodes,
        "sockets_per_node": nodes.sockets_per_node,
        "cores_per_socket": nodes.cores_per_socket,
    }
    if nodes.memory_per_node is not None:
        data["memory_per_node"] = nodes.memory_per_node
    if nodes.gpus_per_node:
        data["gpus_per_node"] = nodes.gpus_per_node
    return data
