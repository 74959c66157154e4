"""ElastiSim platforms: the SimGrid XML subset ElastiSim examples use, and an equivalent small JSON
form.

What is read (001 §5; SimGrid platform syntax): `<cluster>` (prefix, radical, suffix, speed, bw,
lat) whose hosts
are the compute nodes, with ElastiSim's node properties (`<prop>`: node-local burst buffer, GPUs);
`<host>` with
the `batch_system` or `pfs_host` property; `<link>`; `<zoneRoute>` / `<route>` with `<link_ctn>`,
which give the
PFS read route (PFS → compute) and write route (compute → PFS). The flow model needs per node:
speed, link
bandwidth and latency, burst-buffer bandwidths, GPUs; and per PFS direction: the bottleneck
bandwidth and the
route latency. Node ids follow the lexicographic order of host names, as in ElastiSim.
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from cosched.deprecation import module_aliases
from cosched.errors import InputError
from cosched.inputs import MAX_NODES, parse_json, read_text

__all__ = [
    "ElastiSimPlatform",
    "RouteLink",
    "NodeType",
    "parse_quantity",
    "load_elastisim_platform",
    "platform_from_dict",
]

_PREFIXES = {
    "": 1.0,
    "k": 1e3,
    "K": 1e3,
    "M": 1e6,
    "G": 1e9,
    "T": 1e12,
    "P": 1e15,
    "E": 1e18,
    "Z": 1e21,
    "Y": 1e24,
    "Ki": 2.0**10,
    "Mi": 2.0**20,
    "Gi": 2.0**30,
    "Ti": 2.0**40,
    "Pi": 2.0**50,
    "Ei": 2.0**60,
}
_TIME = {
    "s": 1.0,
    "ms": 1e-3,
    "us": 1e-6,
    "ns": 1e-9,
    "ps": 1e-12,
    "m": 60.0,
    "h": 3600.0,
    "d": 86400.0,
    "w": 604800.0,
}
MAX_GPUS_PER_NODE = 1024
_NUMBER = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*([A-Za-z]*)\s*$")


class NodeType:
    """Compute node kinds of the scheduling interface (ElastiSim's NodeType values)."""

    COMPUTE_NODE, COMPUTE_NODE_WITH_BB, COMPUTE_NODE_WIDE_STRIPED_BB = 0, 1, 2


def _unit_factor(kind: str, unit: str) -> float | None:
    if kind == "time":
        return _TIME.get(unit or "s")
    if kind == "speed":
        for suffix in ("flops", "f"):
            if unit.endswith(suffix) and unit[: -len(suffix)] in _PREFIXES:
                return _PREFIXES[unit[: -len(suffix)]]
        return 1.0 if unit == "" else None
    if kind == "bandwidth":
        if unit == "":
            return 1.0
        for suffix, scale in (("Bps", 1.0), ("bps", 0.125)):
            if unit.endswith(suffix) and unit[: -len(suffix)] in _PREFIXES:
                return _PREFIXES[unit[: -len(suffix)]] * scale
        return None
    if kind == "count":
        return 1.0 if unit == "" else None
    raise ValueError(kind)


def parse_quantity(text, kind: str, *, source: str, field: str, positive: bool = False) -> float:
    """A SimGrid quantity (`100Gf`, `100Gbps`, `80GBps`, `50us`, or a plain number) in flop/s, B/s
    or s;
    `positive`: 0 is refused too (a speed or bandwidth of 0 would stall every task that uses it)."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        value, factor = float(text), 1.0
    else:
        match = _NUMBER.match(str(text)) if isinstance(text, str) else None
        unit = None if match is None else _unit_factor(kind, match.group(2))
        if match is None or unit is None:
            raise InputError(
                f"not a {kind} (SimGrid units such as 100Gf, 100Gbps, 80GBps, 50us): {text!r}",
                source=source,
                field=field,
            )
        value, factor = float(match.group(1)), unit
    value *= factor
    if not math.isfinite(value) or value < 0:
        raise InputError(
            f"must be a finite non-negative {kind}, got {text!r}", source=source, field=field
        )
    if positive and value == 0:
        raise InputError(
            f"must be a positive {kind}, got {text!r} (nothing would ever finish)",
            source=source,
            field=field,
        )
    return value


@dataclass(frozen=True)
class RouteLink:
    """One link of a route between clusters: its SimGrid resource (the link id, with `_UP` or
    `_DOWN` for one direction of a split-duplex link), bandwidth in B/s, latency in s, and whether
    it is a FATPIPE (each flow gets the whole bandwidth) rather than SHARED."""

    key: str
    bandwidth: float
    latency: float
    fatpipe: bool = False


_Route = tuple[str, float, float]  # (bottleneck link id, its bandwidth, the route's latency)


@dataclass(frozen=True, eq=False)
class ElastiSimPlatform:
    """Compute nodes (arrays indexed by node id) and the PFS routes, in flop/s, B/s and s."""

    names: tuple[str, ...]
    speed: np.ndarray
    bandwidth: np.ndarray
    latency: np.ndarray
    node_type: np.ndarray
    bb_read: np.ndarray
    bb_write: np.ndarray
    flops_per_byte: np.ndarray
    gpus: np.ndarray
    gpu_speed: np.ndarray
    gpu_bandwidth: np.ndarray
    pfs_read: tuple[str, float, float] | None  # (bottleneck link id, bandwidth, route latency)
    pfs_write: tuple[str, float, float] | None
    source: str = ""
    # per node: the index of its cluster (into `cluster_names`); per ordered pair of cluster
    # indices the links of the route between them (`RouteLink`s, from the source cluster's router
    # to the destination's); None (the JSON form): clusters are joined directly, without links
    cluster: np.ndarray | None = None
    cluster_names: tuple[str, ...] = ()
    routes: dict[tuple[int, int], tuple[RouteLink, ...]] | None = None
    link_ids: frozenset[str] | None = None  # the XML form's <link> ids (None: the JSON form)
    # per cluster index, its own (PFS read route, PFS write route), each as `pfs_read` or None
    # (no such route); None when one read and one write route (`pfs_read`, `pfs_write`) serve
    # every cluster
    pfs_routes: tuple[tuple[_Route | None, _Route | None], ...] | None = None
    # per node, from the XML form only (None otherwise): SimGrid's `core` count of its cluster and
    # the cluster's `memory_mib` property (0: not given); cosched's own simulator reads them
    cores: np.ndarray | None = None
    memory: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.names)

    def pfs_route(self, direction: str, node: int) -> tuple[str, float, float] | None:
        """The PFS route (bottleneck link id, bandwidth, route latency) a node's flows in
        `direction` ("pfs_read" or "pfs_write") take, or None when its cluster has none."""
        if self.pfs_routes is None:
            return self.pfs_read if direction == "pfs_read" else self.pfs_write
        assert self.cluster is not None  # per-cluster routes come from the XML form
        routes = self.pfs_routes[int(self.cluster[node])]
        return routes[0] if direction == "pfs_read" else routes[1]

    def pfs_route_list(self, direction: str) -> list[tuple[str, float, float]]:
        """Every distinct PFS route in `direction`, in cluster order."""
        if self.pfs_routes is None:
            route = self.pfs_read if direction == "pfs_read" else self.pfs_write
            return [] if route is None else [route]
        index = 0 if direction == "pfs_read" else 1
        found: dict[tuple[str, float, float], None] = {}
        for routes in self.pfs_routes:
            route = routes[index]
            if route is not None:
                found[route] = None
        return list(found)


def _properties(element) -> dict[str, str]:
    return {prop.get("id"): prop.get("value") for prop in element.findall("prop")}


def _radical(text: str, *, source: str, field: str) -> list[int]:
    ranges = []
    for part in text.split(","):
        bounds = part.strip().split("-")
        try:
            low, high = int(bounds[0]), int(bounds[-1])
            valid = len(bounds) <= 2 and low <= high
        except ValueError:
            low, high, valid = 0, -1, False
        if not valid:
            raise InputError(
                f"radical must be ranges like 100-227 or 1,3,5, got {text!r}",
                source=source,
                field=field,
            )
        ranges.append(range(low, high + 1))
        count = sum(len(numbers) for numbers in ranges)  # counted before any list is built
        if count > MAX_NODES.value:
            raise InputError(
                f"{count:,} hosts, above the limit of {MAX_NODES.value:,} compute nodes",
                source=source,
                field=field,
            )
    return [number for numbers in ranges for number in numbers]


def _node_record(
    name: str,
    cluster: str,
    speed: float,
    bandwidth: float,
    latency: float,
    props: dict,
    *,
    source: str,
    where: str,
) -> dict:
    def flag(key):
        return str(props.get(key, "false")).strip().lower() in ("true", "1", "yes")

    def quantity(key, kind, default=None):
        if key not in props:
            if default is None:
                raise InputError(
                    f"property {key} is required here", source=source, field=f"{where}: {key}"
                )
            return default
        return parse_quantity(
            props[key], kind, source=source, field=f"{where}: {key}", positive=kind != "count"
        )

    bb = flag("node_local_bb")
    gpus = quantity("num_gpus", "count", 0.0)
    if gpus != int(gpus) or gpus > MAX_GPUS_PER_NODE:
        raise InputError(
            f"must be a whole number of GPUs up to {MAX_GPUS_PER_NODE}, got {props['num_gpus']!r}",
            source=source,
            field=f"{where}: num_gpus",
        )
    gpus = int(gpus)
    return {
        "name": name,
        "cluster": cluster,
        "speed": speed,
        "bandwidth": bandwidth,
        "latency": latency,
        "type": (
            NodeType.COMPUTE_NODE_WIDE_STRIPED_BB
            if flag("wide_striping")
            else NodeType.COMPUTE_NODE_WITH_BB
        )
        if bb
        else NodeType.COMPUTE_NODE,
        "bb_read": quantity("bb_read_bw", "bandwidth") if bb else 0.0,
        "bb_write": quantity("bb_write_bw", "bandwidth") if bb else 0.0,
        "flops_per_byte": quantity("flops_per_byte", "count", 0.0),
        "gpus": gpus,
        "gpu_speed": quantity("flops_per_gpu", "speed") if gpus else 0.0,
        "gpu_bandwidth": quantity("gpu_to_gpu_bw", "bandwidth") if gpus > 1 else math.inf,
    }


def _build(
    records: list[dict],
    pfs_read,
    pfs_write,
    source: str,
    routes: dict[tuple[str, str], tuple[RouteLink, ...]] | None = None,
) -> ElastiSimPlatform:
    if not records:
        raise InputError("the platform has no compute nodes (no <cluster> hosts)", source=source)
    if len(records) > MAX_NODES.value:
        raise InputError(
            f"{len(records)} compute nodes, above the limit {MAX_NODES}", source=source
        )
    records.sort(key=lambda record: record["name"])
    names = [record["name"] for record in records]
    if len(set(names)) != len(names):
        repeated = next(name for name in names if names.count(name) > 1)
        raise InputError(f"host {repeated!r} defined twice", source=source)

    def column(key, dtype=np.float64):
        return np.array([record[key] for record in records], dtype=dtype)

    clusters = list(dict.fromkeys(record["cluster"] for record in records))
    index = {name: number for number, name in enumerate(clusters)}
    by_index = (
        None
        if routes is None
        else {
            (index[src], index[dst]): links
            for (src, dst), links in routes.items()
            if src in index and dst in index and src != dst
        }
    )

    return ElastiSimPlatform(
        tuple(names),
        column("speed"),
        column("bandwidth"),
        column("latency"),
        column("type", np.int64),
        column("bb_read"),
        column("bb_write"),
        column("flops_per_byte"),
        column("gpus", np.int64),
        column("gpu_speed"),
        column("gpu_bandwidth"),
        pfs_read,
        pfs_write,
        source,
        np.array([index[record["cluster"]] for record in records], dtype=np.int64),
        tuple(clusters),
        by_index,
        cores=column("cores", np.int64) if "cores" in records[0] else None,
        memory=column("memory") if "memory" in records[0] else None,
    )


_POLICIES = ("SHARED", "SPLITDUPLEX", "FATPIPE")


def _cluster_route(route, links: dict, between: dict, *, source: str) -> None:
    """A `<zoneRoute>` between two clusters: its links in order (SimGrid's route from the source
    cluster's router to the destination's), and, unless `symmetrical="NO"`, the same links in
    reverse order (the other direction of a split-duplex link) from destination to source (SimGrid's
    FullZone::add_route)."""
    src, dst = str(route.get("src")), str(route.get("dst"))
    hops = []
    for ctn in route.findall("link_ctn"):
        bandwidth, latency, policy = links[ctn.get("id")]
        direction = (ctn.get("direction") or "UP").upper()
        if policy == "SPLITDUPLEX" and direction not in ("UP", "DOWN"):
            raise InputError(
                f"direction must be UP or DOWN on a split-duplex link, got {direction!r}",
                source=source,
                field=f"<{route.tag} src={src!r} dst={dst!r}>: link_ctn {ctn.get('id')!r}",
            )
        hops.append((ctn.get("id"), bandwidth, latency, policy, direction))

    def links_of(hops, reverse: bool) -> tuple[RouteLink, ...]:
        chosen = []
        for link, bandwidth, latency, policy, direction in hops:
            key = link
            if policy == "SPLITDUPLEX":
                if reverse:
                    direction = "DOWN" if direction == "UP" else "UP"
                key = f"{link}_{direction}"
            chosen.append(RouteLink(key, bandwidth, latency, policy == "FATPIPE"))
        return tuple(chosen)

    directions = [((src, dst), links_of(hops, False))]
    if route.get("symmetrical", "YES").upper() != "NO":
        directions.append(((dst, src), links_of(hops[::-1], True)))
    for pair, chosen in directions:
        if pair in between:  # SimGrid refuses it too
            raise InputError(
                f"the route from {pair[0]!r} to {pair[1]!r} is given twice (routes are "
                'symmetrical unless symmetrical="NO")',
                source=source,
                field=f"<{route.tag} src={src!r} dst={dst!r}>",
            )
        between[pair] = chosen


def _cluster_records(child, path: str) -> list[dict]:
    """The compute nodes of a `<cluster>`."""
    where = f"<{child.tag} id={child.get('id')!r}>"
    props = _properties(child)
    speed = parse_quantity(
        child.get("speed"), "speed", source=path, field=f"{where}: speed", positive=True
    )
    bandwidth = parse_quantity(
        child.get("bw"), "bandwidth", source=path, field=f"{where}: bw", positive=True
    )
    latency = parse_quantity(child.get("lat", "0"), "time", source=path, field=f"{where}: lat")
    # read for cosched's own simulator (node types): SimGrid's cores per host, memory in MiB
    cores = parse_quantity(child.get("core", "1"), "count", source=path, field=f"{where}: core")
    if cores != int(cores) or cores < 1:
        raise InputError(
            f"must be a whole number of cores, at least 1, got {child.get('core')!r}",
            source=path,
            field=f"{where}: core",
        )
    memory = parse_quantity(
        props.get("memory_mib", "0"), "count", source=path, field=f"{where}: memory_mib"
    )
    return [
        {
            **_node_record(
                f"{child.get('prefix', '')}{number}{child.get('suffix', '')}",
                str(child.get("id")),
                speed,
                bandwidth,
                latency,
                props,
                source=path,
                where=where,
            ),
            "cores": int(cores),
            "memory": memory,
        }
        for number in _radical(child.get("radical", ""), source=path, field=f"{where}: radical")
    ]


def _link(child, path: str) -> tuple[float, float, str]:
    """A `<link>`: (bandwidth, latency, sharing policy)."""
    where = f"<{child.tag} id={child.get('id')!r}>"
    policy = child.get("sharing_policy", "SHARED").upper()
    if policy not in _POLICIES:
        raise InputError(
            f"sharing_policy must be one of {', '.join(_POLICIES)}, got {policy!r}",
            source=path,
            field=f"{where}: sharing_policy",
        )
    bandwidth = parse_quantity(
        child.get("bandwidth"),
        "bandwidth",
        source=path,
        field=f"{where}: bandwidth",
        positive=True,
    )
    latency = parse_quantity(
        child.get("latency", "0"), "time", source=path, field=f"{where}: latency"
    )
    return bandwidth, latency, policy


def _is_pfs_host(child, path: str) -> bool:
    """A standalone `<host>`: the PFS (True) or the batch system (False); others are refused."""
    props = _properties(child)
    if props.get("pfs_host", "").lower() == "true":
        return True
    if props.get("batch_system", "").lower() != "true":
        raise InputError(
            "compute hosts outside a <cluster> are not read (no link bandwidth); put them in a "
            "<cluster> or use the JSON platform form",
            source=path,
            field=f"<{child.tag} id={child.get('id')!r}>",
        )
    return False


def _read_routes(routes, links: dict, clusters: set, pfs: set, members: dict, path: str):
    """(per cluster id its PFS (read, write) routes, routes between clusters) from the route
    elements; `pfs`: the PFS hosts and the zones that hold them; `members`: every zone, cluster
    and host name of the platform with the clusters it holds. A route naming a zone or host the
    platform does not have is refused, as SimGrid refuses it."""
    per_cluster: dict[str, dict[str, tuple]] = {}
    between: dict[tuple[str, str], tuple[RouteLink, ...]] = {}
    for route in routes:
        src, dst = route.get("src"), route.get("dst")
        where = f"<{route.tag} src={src!r} dst={dst!r}>"
        for end in (src, dst):
            if end not in members:
                raise InputError(
                    f"names the zone or host {end!r}, which this platform does not have",
                    source=path,
                    field=where,
                )
        ids = [ctn.get("id") for ctn in route.findall("link_ctn")]
        missing = [link for link in ids if link not in links]
        if missing:
            raise InputError(
                f"route uses the undefined link {missing[0]!r}", source=path, field=where
            )
        if not ids:
            continue
        if src in clusters and dst in clusters:
            _cluster_route(route, links, between, source=path)
            continue
        bottleneck = min(ids, key=lambda link: links[link][0])
        entry = (bottleneck, links[bottleneck][0], sum(links[link][1] for link in ids))
        symmetrical = route.get("symmetrical", "YES").upper() != "NO"
        for direction, other, used in (
            ("read", dst, src in pfs),
            ("write", src, dst in pfs),
            ("read", src, dst in pfs and symmetrical),
            ("write", dst, src in pfs and symmetrical),
        ):
            if not used or other in pfs:
                continue
            for cluster in sorted(members[other]):
                before = per_cluster.setdefault(cluster, {}).get(direction)
                if before is not None and before != entry:  # SimGrid: the route already exists
                    raise InputError(
                        f"a second PFS {direction} route for cluster {cluster!r} with another "
                        "bottleneck or latency",
                        source=path,
                        field=where,
                    )
                per_cluster[cluster][direction] = entry
    return per_cluster, between


def _members(root, records: list[dict]) -> dict[str, set[str]]:
    """Every zone, cluster and host name of the platform, each with the clusters it holds (a
    cluster host: its own cluster)."""
    members: dict[str, set[str]] = {}

    def visit(element) -> set[str]:
        held: set[str] = set()
        for child in element:
            if child.tag == "cluster":
                cluster = str(child.get("id"))
                members[cluster] = {cluster}
                held.add(cluster)
            elif child.tag in ("zone", "AS"):
                held |= visit(child)
            elif child.tag == "host":
                members.setdefault(str(child.get("id")), set())
        if element.get("id") is not None:
            members[str(element.get("id"))] = held
        return held

    visit(root)
    for record in records:
        members.setdefault(record["name"], {record["cluster"]})
    return members


def _load_xml(path: str) -> ElastiSimPlatform:
    try:
        root = ElementTree.fromstring(read_text(path))
    except ElementTree.ParseError as error:
        raise InputError(f"not valid XML: {error}", source=path, line=error.position[0]) from None
    if root.tag != "platform":
        raise InputError(f"the root element must be <platform>, got <{root.tag}>", source=path)
    records: list[dict] = []
    links: dict = {}
    pfs: set = set()
    routes: list = []
    clusters: set[str] = set()
    hosts: set[str] = set()
    targets: list[tuple[str, str]] = []  # (cluster id, its pfs_targets property)
    for zone in root.iter():
        if zone.tag not in ("zone", "AS", "platform"):
            continue
        for child in zone:
            if child.tag == "cluster":
                clusters.add(str(child.get("id")))
                records.extend(_cluster_records(child, path))
                if "pfs_targets" in (props := _properties(child)):
                    targets.append((str(child.get("id")), props["pfs_targets"]))
            elif child.tag == "host":
                hosts.add(str(child.get("id")))
                if _is_pfs_host(child, path):
                    pfs.update((child.get("id"), zone.get("id")))
            elif child.tag == "link":
                links[child.get("id")] = _link(child, path)
            elif child.tag in ("zoneRoute", "route", "ASroute"):
                routes.append(child)
    _check_pfs_targets(targets, hosts | {record["name"] for record in records}, path)
    members = _members(root, records)
    per_cluster, between = _read_routes(routes, links, clusters, pfs, members, path)
    return _with_pfs_routes(_build(records, None, None, path, between), per_cluster, links)


def _with_pfs_routes(platform: ElastiSimPlatform, per_cluster: dict, links: dict):
    """`platform` with its PFS routes: one read and one write route if every cluster has the
    same, else each cluster's own."""
    pairs = [
        (per_cluster.get(name, {}).get("read"), per_cluster.get(name, {}).get("write"))
        for name in platform.cluster_names
    ]
    if len(set(pairs)) == 1:  # one read and one write route serve every cluster
        pfs_read, pfs_write = pairs[0]
        return replace(platform, pfs_read=pfs_read, pfs_write=pfs_write, link_ids=_link_ids(links))
    return replace(platform, pfs_routes=tuple(pairs), link_ids=_link_ids(links))


def _link_ids(links: dict) -> frozenset[str]:
    return frozenset(str(link) for link in links)


def _check_pfs_targets(targets: list[tuple[str, str]], hosts: set[str], path: str) -> None:
    """Every host a cluster's `pfs_targets` names exists (ElastiSim looks each up and stops if
    one is missing); cosched models one PFS route per direction and does not use them otherwise."""
    for cluster, value in targets:
        missing = [name for name in value.split(",") if name not in hosts]
        if missing:
            raise InputError(
                f"names the host {missing[0]!r}, which this platform does not have",
                source=path,
                field=f"<cluster id={cluster!r}>: pfs_targets",
            )


def _json_cluster(index: int, cluster, source: str) -> list[dict]:
    """The compute nodes of one cluster of the JSON form."""
    where = f"clusters[{index}]"
    if not isinstance(cluster, dict):
        raise InputError("must be an object", source=source, field=where)
    for key in ("radical", "speed", "bw"):
        if key not in cluster:
            raise InputError("missing", source=source, field=f"{where}: {key}")
    speed = parse_quantity(
        cluster["speed"], "speed", source=source, field=f"{where}: speed", positive=True
    )
    bandwidth = parse_quantity(
        cluster["bw"], "bandwidth", source=source, field=f"{where}: bw", positive=True
    )
    latency = parse_quantity(cluster.get("lat", 0), "time", source=source, field=f"{where}: lat")
    properties = cluster.get("properties") or {}
    if not isinstance(properties, dict):
        raise InputError(
            "must be an object of node properties", source=source, field=f"{where}: properties"
        )
    for key in ("prefix", "suffix"):
        if not isinstance(cluster.get(key, ""), str):
            raise InputError("must be a string", source=source, field=f"{where}: {key}")
    props = {
        key: str(value).lower() if isinstance(value, bool) else str(value)
        for key, value in properties.items()
    }
    return [
        _node_record(
            f"{cluster.get('prefix', '')}{number}{cluster.get('suffix', '')}",
            where,
            speed,
            bandwidth,
            latency,
            props,
            source=source,
            where=where,
        )
        for number in _radical(str(cluster["radical"]), source=source, field=f"{where}: radical")
    ]


def _json_pfs(pfs, source: str):
    """(PFS read route, PFS write route) of the JSON form's `pfs` object."""
    if not isinstance(pfs, dict):
        raise InputError("must be an object", source=source, field="pfs")
    latency = parse_quantity(pfs.get("latency", 0), "time", source=source, field="pfs: latency")
    for key in ("read_bw", "write_bw"):
        if key not in pfs:
            raise InputError("missing", source=source, field=f"pfs: {key}")
    return tuple(
        (
            link,
            parse_quantity(
                pfs[key], "bandwidth", source=source, field=f"pfs: {key}", positive=True
            ),
            latency,
        )
        for link, key in (("PFS_read", "read_bw"), ("PFS_write", "write_bw"))
    )


def platform_from_dict(document, source: str = "<platform>") -> ElastiSimPlatform:
    """The JSON form: {"clusters": [{prefix, radical, suffix, speed, bw, lat, properties}], "pfs":
    {read_bw, write_bw, latency}}, with the units and property names of the XML form."""
    if not isinstance(document, dict) or not isinstance(document.get("clusters"), list):
        raise InputError(
            "a JSON platform is an object with a list 'clusters'", source=source, field="clusters"
        )
    records = [
        record
        for index, cluster in enumerate(document["clusters"])
        for record in _json_cluster(index, cluster, source)
    ]
    pfs = document.get("pfs")
    pfs_read, pfs_write = (None, None) if pfs is None else _json_pfs(pfs, source)
    return _build(records, pfs_read, pfs_write, source)


def load_elastisim_platform(path: str | Path) -> ElastiSimPlatform:
    """A platform file: SimGrid XML (`.xml`) or the JSON form (`.json`)."""
    path = str(path)
    if path.lower().endswith(".json"):
        return platform_from_dict(parse_json(path), path)
    return _load_xml(path)


# the names before they were made unique, importable for one release
__getattr__ = module_aliases(
    __name__,
    {"Platform": "ElastiSimPlatform", "load_platform": "load_elastisim_platform"},
    globals(),
)
