"""The simulated cluster: nodes x sockets per node x cores per socket (000 §3.1), presets and JSON
files."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from cosched.errors import InputError
from cosched.inputs import MAX_CORES_PER_NODE, MAX_NODES, check_number, parse_json, shown
from cosched.names import did_you_mean

__all__ = ["Platform", "PRESETS", "load_platform"]


@dataclass(frozen=True)
class Platform:
    """A homogeneous cluster; jobs get whole nodes (compact) or half nodes (co-location)."""

    nodes: int
    sockets_per_node: int = 1
    cores_per_socket: int = 1
    name: str = "custom"

    @property
    def cores_per_node(self) -> int:
        return self.sockets_per_node * self.cores_per_socket

    @property
    def total_cores(self) -> int:
        return self.nodes * self.cores_per_node

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "nodes": self.nodes,
            "sockets_per_node": self.sockets_per_node,
            "cores_per_socket": self.cores_per_socket,
        }


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


def load_platform(spec: str | os.PathLike) -> Platform:
    """A preset name (`aris`, `sdsc-sp2`, ...) or a JSON file {"nodes", "sockets_per_node",
    "cores_per_socket"}.

    The counts are whole numbers, at least 1, nodes at most `MAX_NODES` and cores per node at most
    `MAX_CORES_PER_NODE` (`cosched.inputs`); an optional "name" is a string.
    """
    key = str(spec).lower()
    if key in PRESETS:
        return PRESETS[key]
    path = Path(spec)
    if not path.exists():
        raise InputError(
            f"not a platform preset ({', '.join(PRESETS)}) nor an existing JSON file"
            + did_you_mean(str(spec), PRESETS),
            source=str(spec),
        )
    source = str(path)
    data = parse_json(path)
    if not isinstance(data, dict):
        raise InputError("expected a JSON object", source=source)
    unknown = set(data) - set(_FIELDS) - {"name"}
    if unknown:
        raise InputError(
            f"unknown fields {sorted(unknown)}", source=source, field=sorted(unknown)[0]
        )
    if "nodes" not in data:
        raise InputError("missing", source=source, field="nodes")
    values = {
        name: check_number(
            data.get(name, 1),
            source=source,
            field=name,
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
            field="cores_per_socket",
        )
    name = data.get("name", path.stem)
    if not isinstance(name, str):
        raise InputError(f"must be a string, got {shown(name)}", source=source, field="name")
    return Platform(name=name, **values)
