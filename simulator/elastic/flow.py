"""The execution model that replaces SimGrid: what each task does on a job's nodes.

ElastiSim runs a job as one actor per node on SimGrid's `ptask_L07` host model (001 §4.2, §5.2;
ElastiSim's task classes). Per task on n nodes:

- compute: each node's flops (vector pattern) / its speed, on the node's own clock; GPU flops /
  (GPUs per node x GPU speed), the GPU link busy for the busiest GPU pair's bytes;
- communication: the nodes meet, then one SimGrid parallel task (`Comm`): the largest route latency,
  then the rate of its tightest resource (node CPU, a node's private up or down link, the TCP window
  of its largest transfer); a `coupled` task puts its flops in that parallel task, an uncoupled one
  computes on each node meanwhile; a parallel task that crosses a SHARED link between clusters
  shares it with the other jobs' parallel tasks on it (`ClusterLinks`, SimGrid's fair-bottleneck
  solver); a job's asynchronous PFS flows running meanwhile share its nodes' links with it
  (`node_links`; the runtime re-shares both sides);
- delays (`idle`, `busy_wait`) per node by the vector pattern;
- burst buffers: node-local bytes / the node's read or write bandwidth; wide striping spreads the
  bytes over every node's disk, overlapped with a parallel task of `flops_per_byte` compute and the
  network transfer;
- PFS I/O: one flow per node with bytes after the route latency, capped by the node's link and the
  TCP window over the route, all flows of all jobs sharing the PFS read (or write) link max-min
  fairly (`SharedLink` re-shares whenever a flow starts or ends).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from operator import itemgetter
from typing import cast

import numpy as np

from cosched.errors import InputError

__all__ = [
    "PfsTransfer",
    "task_cost",
    "distribute",
    "traffic",
    "SharedLink",
    "Transfer",
    "RATE_TOLERANCE",
    "CrossComm",
    "ClusterLinks",
    "Crossing",
    "fair_bottleneck",
    "node_links",
]

RATE_TOLERANCE = 1e-9  # relative: bytes left below this share of a flow's size count as transferred
# s: a route without latency puts no TCP window bound on its flows (the bound becomes huge, not 1/0)
MIN_WINDOW_DELAY = 1e-300


TCP_GAMMA = 4194304.0  # SimGrid's network/TCP-gamma default (bytes): the TCP window of every flow


@dataclass(frozen=True)
class PfsTransfer:
    """A PFS read or write: one flow per node with bytes (its position in the job's node list, its
    bytes, its rate cap in B/s, its route latency in s), started on each node after the latency
    (SimGrid's L07 model)."""

    direction: str
    positions: tuple[int, ...]
    sizes: tuple[float, ...]
    caps: tuple[float, ...]
    latencies: tuple[float, ...]
    asynchronous: bool


@dataclass(frozen=True)
class Comm:
    """A barrier of the job's nodes, then a SimGrid parallel task of `duration` s; each node ends at
    max(its clock + `local`, barrier + `duration`) (`local`: work it started before the barrier, or
    None). `ptask`: (its route latency, the seconds its own resources need, the bytes each node
    sends, the bytes each node receives) when it moves bytes, for sharing node links with the job's
    asynchronous PFS flows (`node_links`)."""

    local: np.ndarray | None
    duration: float
    ptask: tuple | None = field(default=None, kw_only=True)


@dataclass(frozen=True)
class AsyncWork:
    """Node-local asynchronous work (burst-buffer I/O): per node seconds from its clock on."""

    seconds: np.ndarray


@dataclass(frozen=True)
class CrossComm(Comm):
    """A `Comm` whose parallel task crosses SHARED links between clusters: after the barrier and
    `latency` s it progresses at a rate set with the other jobs' parallel tasks on those links
    (`ClusterLinks`); `duration` is its length alone, `own` the seconds its own resources (CPUs,
    node links, FATPIPEs, TCP window) need, `links` the (link, bytes, bandwidth) it crosses."""

    latency: float
    own: float
    links: tuple[tuple[str, float, float], ...]


SYNC = Comm(None, 0.0)  # a plain barrier


def distribute(size, pattern: str, n: int) -> np.ndarray:
    """A payload per resource by ElastiSim's vector patterns (explicit vectors pass through); 001
    §4.2.1."""
    if pattern == "vector":
        return np.asarray(size, dtype=np.float64)
    values = np.zeros(n)
    if pattern == "uniform":
        values[:] = size
    elif pattern == "all_ranks":
        values[:] = size / n
    elif pattern == "root_only":
        values[0] = size
    elif pattern == "even_ranks":
        values[0::2] = size / ((n + 1) // 2)
    elif pattern == "odd_ranks" and n > 1:
        values[1::2] = size / (n // 2)
    return values


def pair_matrix(size, pattern: str, n: int) -> np.ndarray:
    """Bytes from rank i to rank j (n x n) as ElastiSim's createMatrix lays a payload out; 001
    §4.2.1."""
    sizes = np.zeros((n, n))
    if n == 1:
        return sizes
    if pattern == "matrix":
        sizes = np.asarray(size, dtype=np.float64).reshape(n, n).copy()
        np.fill_diagonal(sizes, 0.0)
        return sizes
    ranks = np.arange(n)
    if pattern == "all_to_all":
        sizes[:] = size / (n * n - n)
        np.fill_diagonal(sizes, 0.0)
    elif pattern == "gather":
        sizes[1:, 0] = size / n
    elif pattern == "scatter":
        sizes[0, 1:] = size / n
    elif pattern == "ring":
        np.add.at(sizes, (ranks, (ranks - 1) % n), size / (2 * n))
        np.add.at(sizes, (ranks, (ranks + 1) % n), size / (2 * n))
    elif pattern == "ring_clockwise":
        np.add.at(sizes, (ranks, (ranks + 1) % n), size / n)
    elif pattern == "ring_counter_clockwise":
        np.add.at(sizes, (ranks, (ranks - 1) % n), size / n)
    elif pattern == "master_worker":
        sizes[0, 1:] = sizes[1:, 0] = size / ((n - 1) / 2)
    return sizes


def traffic(size, pattern: str, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Bytes each of n resources sends and receives under a matrix pattern (ElastiSim's payload
    split); 001 §4.2.1."""
    sizes = pair_matrix(size, pattern, n)
    return sizes.sum(axis=1), sizes.sum(axis=0)


def _gpu_split(size: float, pattern: str, nodes: int, gpus: int) -> tuple[float, float]:
    """(intra-node, inter-node) payloads of a GPU communication, as ElastiSim splits them."""
    total = nodes * gpus
    if gpus == 1:
        return 0.0, size
    if pattern == "all_to_all":
        pair = size / (total * (total - 1))
        return total * (gpus - 1) * pair / nodes, total * (total - gpus) * pair
    if pattern == "ring":
        pair = size / (total * 2)
        return (pair * gpus * 2, 0.0) if nodes == 1 else (pair * (gpus - 1) * 2, pair * nodes * 2)
    if pattern in ("ring_clockwise", "ring_counter_clockwise"):
        pair = size / total
        return (pair * gpus, 0.0) if nodes == 1 else (pair * (gpus - 1), pair * nodes)
    raise InputError(f"the {pattern} pattern is not available to GPU communication")


def _between_clusters(sizes: np.ndarray, nodes, platform, pair_latency: np.ndarray) -> dict:
    """The links between clusters on a parallel task's routes: adds each route's latency to its
    pairs' `pair_latency` (in place) and returns, per link, (the bytes crossing it, its bandwidth,
    whether it is a FATPIPE) (SimGrid L07: every pair's bytes load each link of its route, a FATPIPE
    link only by the largest pair)."""
    routes = platform.routes
    cluster = platform.cluster[nodes]
    present = np.unique(cluster)
    if len(present) < 2:
        return {}
    load: dict[str, float] = {}
    capacity: dict[str, tuple[float, bool]] = {}
    masks = {int(index): cluster == index for index in present}
    for src, sending in masks.items():
        for dst, receiving in masks.items():
            if src == dst:
                continue
            block = np.ix_(sending, receiving)
            crossing = sizes[block]
            if not crossing.any():
                continue
            hops = routes.get((src, dst))
            if hops is None:
                names = platform.cluster_names
                raise InputError(
                    f"no route from cluster {names[src]!r} to cluster {names[dst]!r}, and a job "
                    "communicates between them (SimGrid stops here too): add a <zoneRoute>",
                    source=platform.source,
                )
            pair_latency[block] += sum(hop.latency for hop in hops)
            for hop in hops:
                before = load.get(hop.key, 0.0)
                # 001 §5.2 (SimGrid L07): a link carries the sum of its pairs' bytes
                load[hop.key] = (
                    max(before, float(crossing.max()))
                    if hop.fatpipe
                    else before + float(crossing.sum())
                )
                capacity[hop.key] = (hop.bandwidth, hop.fatpipe)
    return {key: (load[key], *capacity[key]) for key in load}


def _ptask(sizes: np.ndarray, nodes, platform, flops: np.ndarray | None = None) -> tuple:
    """One SimGrid L07 parallel task over the job's nodes: (its seconds alone, its route latency,
    the seconds its own resources need, the shared links between clusters it crosses as (link,
    bytes, bandwidth)). Alone it takes the route latency, then progresses at the rate its tightest
    resource allows: a node's CPU (flops), a node link (bytes over its private up or down link,
    split duplex), a link of a route between clusters, or the TCP window of the largest transfer
    (gamma / (2 x latency x bytes)). A job's nodes, their links and a FATPIPE are its own; a SHARED
    link between clusters is shared with the other jobs' parallel tasks on it (`ClusterLinks`).
    Last, `Comm.ptask`: (route latency, own seconds, bytes each node sends, bytes it receives)."""
    seconds = 0.0 if flops is None else float((flops / platform.speed[nodes]).max())
    if not sizes.any():
        return seconds, 0.0, seconds, (), None
    latency = platform.latency[nodes]
    pair_latency = latency[:, None] + latency[None, :]  # a crossbar route: the two private links
    used = sizes > 0
    sent, received = sizes.sum(axis=1), sizes.sum(axis=0)
    bandwidth = platform.bandwidth[nodes]
    links = own = max(float((sent / bandwidth).max()), float((received / bandwidth).max()))
    shared: tuple = ()
    if platform.routes is not None and len(platform.cluster_names) > 1:
        crossing = _between_clusters(sizes, nodes, platform, pair_latency)
        for load, bandwidth, fatpipe in crossing.values():
            links = max(links, load / bandwidth)
            if fatpipe:
                own = max(own, load / bandwidth)
        shared = tuple(
            (key, load, bandwidth)
            for key, (load, bandwidth, fatpipe) in crossing.items()
            if not fatpipe
        )
    # 001 §5.2 (SimGrid L07): TCP window bound gamma / (2 x latency x bytes) of the largest transfer
    window = 2.0 * float((pair_latency * sizes).max()) / TCP_GAMMA
    start = float(pair_latency[used].max())
    # 001 §5.2 (SimGrid L07): the latency first, then the tightest of CPU, links and window
    own = max(seconds, own, window)
    return start + max(seconds, links, window), start, own, shared, (start, own, sent, received)


def _parallel_task(sizes: np.ndarray, nodes, platform, flops: np.ndarray | None = None) -> float:
    """Seconds of one SimGrid L07 parallel task over the job's nodes alone (`_ptask`)."""
    return _ptask(sizes, nodes, platform, flops)[0]


def _comm(local, sizes: np.ndarray, nodes, platform, flops: np.ndarray | None = None) -> Comm:
    """A barrier and a parallel task: a `Comm` of fixed length, or a `CrossComm` when the task
    crosses a shared link between clusters."""
    duration, latency, own, shared, ptask = _ptask(sizes, nodes, platform, flops)
    if shared:
        return CrossComm(local, duration, latency, own, shared, ptask=ptask)
    return Comm(local, duration, ptask=ptask)


NODE_LINK = {"pfs_write": "up", "pfs_read": "down"}  # the node link a PFS flow of a node uses


def node_links(item: Comm, nodes: list, bandwidth: list, directions) -> tuple[CrossComm, list]:
    """`item` as a parallel task that also shares its nodes' links with the job's asynchronous PFS
    flows in `directions` (SimGrid L07: a node's private link, split duplex, is one resource for
    every action on it; a PFS write uses the up link, a read the down link): a `CrossComm` whose
    links include each such node link it loads, and those node links as (direction, node, link,
    bandwidth). `nodes`: the node id of each of its positions."""
    assert item.ptask is not None  # a parallel task that moves bytes
    latency, own, sent, received = item.ptask
    shared = list(item.links) if isinstance(item, CrossComm) else []
    used = []
    for direction in directions:
        loads = sent if NODE_LINK[direction] == "up" else received
        for position, load in enumerate(loads.tolist()):
            if load > 0:
                node = nodes[position]
                key = f"node {node} {NODE_LINK[direction]}"
                shared.append((key, load, bandwidth[node]))
                used.append((direction, node, key, bandwidth[node]))
    task = CrossComm(item.local, item.duration, latency, own, tuple(shared), ptask=item.ptask)
    return task, used


def task_cost(task, values: dict, nodes: np.ndarray, gpus: int, platform):
    """What a task does on `nodes` (001 §4.2, as ElastiSim's task classes run it): a per-node vector
    of seconds, a `Comm` (barrier + parallel task), a `PfsTransfer`, or an `AsyncWork`; `values` are
    the evaluated payloads."""
    kind = task.kind
    if kind == "cpu":
        return _cpu_cost(task, values, nodes, platform)
    if kind == "gpu":
        return _gpu_cost(task, values, nodes, gpus, platform)
    if kind in ("idle", "busy_wait"):
        return distribute(values["delay"], task.pattern, len(nodes))
    size = distribute(values["bytes"], task.pattern, len(nodes))
    if kind in ("bb_read", "bb_write"):
        return _burst_buffer_cost(task, size, nodes, platform)
    return _pfs_cost(task, size, nodes, platform)


def _cpu_cost(task, values: dict, nodes: np.ndarray, platform):
    n = len(nodes)
    flops = None
    if task.flops is not None:
        flops = distribute(values["flops"], task.computation_pattern, n)
    if task.bytes is None:
        return np.zeros(n) if flops is None else flops / platform.speed[nodes]
    sizes = pair_matrix(values["bytes"], task.communication_pattern, n)
    if task.coupled and flops is not None:  # one parallel task of flops and bytes after a barrier
        return _comm(None, sizes, nodes, platform, flops)
    local = None if flops is None else flops / platform.speed[nodes]
    return _comm(local, sizes, nodes, platform)


def _gpu_cost(task, values: dict, nodes: np.ndarray, gpus: int, platform):
    n = len(nodes)
    if gpus == 0 or not platform.gpus[nodes].all():
        raise InputError("a GPU task runs on a configuration without GPUs", field=task.where)
    local = np.zeros(n)
    if task.flops is not None:
        per_node = distribute(values["flops"], task.computation_pattern, n)
        local = per_node / (gpus * platform.gpu_speed[nodes])  # 001 §4.2: flops over GPUs
    if task.bytes is None:
        return local
    intra, inter = _gpu_split(values["bytes"], task.communication_pattern, n, gpus)
    if gpus > 1:  # the GPU link of a node is busy for the busiest GPU pair's bytes, both ways
        pairs = pair_matrix(intra, task.communication_pattern, gpus)
        local = np.maximum(local, (pairs + pairs.T).max() / platform.gpu_bandwidth[nodes])
    return _comm(local, pair_matrix(inter, task.communication_pattern, n), nodes, platform)


def _burst_buffer_cost(task, size: np.ndarray, nodes: np.ndarray, platform):
    kind = task.kind
    bandwidth = platform.bb_read[nodes] if kind == "bb_read" else platform.bb_write[nodes]
    if not bandwidth.all():
        raise InputError(
            "burst-buffer I/O on a node without a node-local burst buffer", field=task.where
        )
    striped = platform.node_type[nodes] == 2
    if not striped.any():
        seconds = size / bandwidth
    else:
        seconds = _striped_seconds(kind, size, striped, nodes, platform, bandwidth)
    if task.asynchronous:
        return AsyncWork(seconds)
    return seconds


def _striped_seconds(kind, size, striped, nodes, platform, bandwidth) -> np.ndarray:
    """Per rank, the seconds of a burst-buffer task on a job with wide-striped nodes (ElastiSim's
    BurstBufferWriteTask.cpp, BurstBufferReadTask.cpp): a rank on a node-local node moves its bytes
    on its own disk; a rank on a wide-striped node puts 1/n of its bytes on every node's disk and
    runs one parallel task (`flops_per_byte` on every node, its bytes over the links), and waits for
    those alone. Every disk is shared max-min by the transfers on it (SimGrid's disk_s19), taken
    as starting together; the striped ranks' parallel tasks are timed as one."""
    n = len(size)
    share = np.where(striped, size / n, 0.0)
    seconds = np.where(striped, 0.0, size / bandwidth)
    for disk in range(n):
        amounts = share.tolist()
        if not striped[disk]:
            amounts[disk] = size[disk]
        ends = _processor_sharing(amounts, float(bandwidth[disk]))
        seconds[striped] = np.maximum(seconds[striped], ends[striped])
        if not striped[disk]:
            seconds[disk] = ends[disk]
    pairs = np.outer(np.ones(n), share) if kind == "bb_read" else np.outer(share, np.ones(n))
    np.fill_diagonal(pairs, 0.0)
    flops = platform.flops_per_byte[nodes] * share.sum()
    parallel = _parallel_task(pairs, nodes, platform, flops)
    return np.where(striped, np.maximum(seconds, parallel), seconds)


def _processor_sharing(amounts: list, bandwidth: float) -> np.ndarray:
    """When each of `amounts` (bytes, started together on one resource of `bandwidth` B/s shared
    equally among the transfers still running) ends; 0 for an empty one."""
    order = sorted((amount, index) for index, amount in enumerate(amounts) if amount > 0)
    ends = np.zeros(len(amounts))
    done, remaining = 0.0, len(order)
    for amount, index in order:
        ends[index] = (done + remaining * amount) / bandwidth
        done += amount
        remaining -= 1
    return ends


def _pfs_cost(task, size: np.ndarray, nodes: np.ndarray, platform) -> PfsTransfer:
    kind = task.kind
    # plain floats: a job has a few flows, numpy's per-call overhead would outweigh the work
    amounts = size.tolist()
    positions = [position for position, amount in enumerate(amounts) if amount > 0]
    if platform.pfs_routes is not None:
        return _pfs_cost_per_cluster(task, amounts, positions, nodes, platform)
    route = platform.pfs_read if kind == "pfs_read" else platform.pfs_write
    if route is None:
        raise InputError(f"{kind} on a platform without a PFS route", field=task.where)
    ids = nodes.tolist() if isinstance(nodes, np.ndarray) else list(nodes)
    latency, bandwidth, route_latency = platform.latency, platform.bandwidth, route[2]
    latencies = [latency.item(ids[position]) + route_latency for position in positions]
    caps = [
        _flow_cap(bandwidth.item(ids[position]), delay)
        for position, delay in zip(positions, latencies)
    ]
    return _transfer(task, amounts, positions, caps, latencies)


def _pfs_cost_per_cluster(task, amounts: list, positions: list, nodes, platform) -> PfsTransfer:
    """A PFS task on a platform whose clusters reach the PFS over routes of their own: each flow
    takes its node's cluster's route (its latency, its TCP window); a node whose cluster has no
    route in that direction stops the run, as SimGrid stops there."""
    kind = task.kind
    ids = nodes.tolist() if isinstance(nodes, np.ndarray) else list(nodes)
    latencies, caps = [], []
    for position in positions:
        node = ids[position]
        route = platform.pfs_route(kind, node)
        if route is None:
            cluster = platform.cluster_names[int(platform.cluster[node])]
            direction = "from the PFS to" if kind == "pfs_read" else "to the PFS from"
            raise InputError(
                f"{kind} on node {platform.names[node]!r}: the platform has no route "
                f"{direction} cluster {cluster!r}",
                field=task.where,
            )
        delay = platform.latency.item(node) + route[2]
        latencies.append(delay)
        caps.append(_flow_cap(platform.bandwidth.item(node), delay))
    return _transfer(task, amounts, positions, caps, latencies)


def _flow_cap(bandwidth: float, delay: float) -> float:
    """001 §5.2 (SimGrid L07): a flow's rate is at most its node link's `bandwidth` and the TCP
    window over its route's `delay`."""
    return min(bandwidth, TCP_GAMMA / (2.0 * max(delay, MIN_WINDOW_DELAY)))


def _transfer(task, amounts: list, positions: list, caps: list, latencies: list) -> PfsTransfer:
    """The flows of a PFS task: one per node position with bytes to move."""
    return PfsTransfer(
        task.kind,
        tuple(positions),
        tuple([amounts[position] for position in positions]),
        tuple(caps),
        tuple(latencies),
        bool(task.asynchronous),
    )


class Transfer:
    """The live state of flows that start together on a shared link: groups [count, bytes left, cap,
    rate, bytes, positions, nodes, node link bandwidths] of equal flows (equal flows get equal
    rates, so a group ends at one instant)."""

    __slots__ = ("groups", "owner", "left", "direction", "link")

    def __init__(self, flows, owner, direction: str = "", link: SharedLink | None = None):
        grouped: dict[tuple[float, float], list] = {}
        for position, amount, cap, node, bandwidth in flows:
            group = grouped.get((amount, cap))
            if group is None:
                group = grouped[amount, cap] = [0, amount, cap, 0.0, amount, [], [], []]
            group[0] += 1
            group[5].append(position)
            group[6].append(node)
            group[7].append(bandwidth)
        self.groups = list(grouped.values())
        self.owner = owner
        self.left = len(self.groups)
        self.direction = direction
        self.link = cast("SharedLink", link)  # the PFS link it runs on (set before it starts)


_first = itemgetter(0)


class SharedLink:
    """A PFS bottleneck link shared max-min fairly by every flow of every running transfer (001
    §5.2.1).

    Flows of one node in one direction also share that node's link: while a node has several (an
    asynchronous write still running when the next one starts), each of them is capped at the node
    link's bandwidth divided by their number."""

    def __init__(self, capacity: float):
        self.capacity = capacity
        self.transfers: dict[Transfer, None] = {}
        self.updated = 0.0
        self.version = 0
        self.throughput = 0.0
        # direction: the nodes with a flow on this link in that direction, and {node: its flows
        # beyond the first}
        self.node_flows: dict[str, set[int]] = {}
        self.extra_flows: dict[str, dict[int, int]] = {}
        self.crowded = 0  # (node, direction) pairs with more than one flow
        # direction: {node: the cap of its flows there} while a job's parallel task shares them
        self.node_caps: dict[str, dict[int, float]] = {}

    def _count(self, transfer: Transfer, group: list, step: int) -> None:
        direction = transfer.direction
        occupied = self.node_flows.get(direction)
        if occupied is None:
            occupied = self.node_flows[direction] = set()
            self.extra_flows[direction] = {}
        extra = self.extra_flows[direction]
        change = self._join if step > 0 else self._leave
        for node in group[6]:
            change(occupied, extra, node)

    def _join(self, occupied: set, extra: dict, node: int) -> None:
        """One more flow of `node`: the first marks it occupied, later ones count as extra."""
        if node in occupied:
            before = extra.get(node, 0)
            extra[node] = before + 1
            if not before:
                self.crowded += 1
        else:
            occupied.add(node)

    def _leave(self, occupied: set, extra: dict, node: int) -> None:
        """One flow of `node` fewer (`_join` undone)."""
        before = extra.get(node, 0)
        if before == 1:
            del extra[node]
            self.crowded -= 1
        elif before:
            extra[node] = before - 1
        else:
            occupied.discard(node)

    def add(self, transfer: Transfer) -> None:
        self.transfers[transfer] = None
        for group in transfer.groups:
            self._count(transfer, group, 1)

    def occupy(self, direction: str, nodes, step: int) -> None:
        """A parallel task of a job on these nodes' links in `direction` starts (step 1) or ends
        (-1): each of the nodes' PFS flows in that direction gets its share of the node link (the
        task counts as one more flow of the node)."""
        occupied = self.node_flows.setdefault(direction, set())
        extra = self.extra_flows.setdefault(direction, {})
        caps = self.node_caps.get(direction, {})
        for node in nodes:
            if step > 0:
                self._join(occupied, extra, node)
            else:
                caps.pop(node, None)
                self._leave(occupied, extra, node)
        if not caps:
            self.node_caps.pop(direction, None)

    def flows(self, direction: str, node: int) -> int:
        """The flows (and parallel tasks, `occupy`) of `node` on this link in `direction`."""
        occupied = node in self.node_flows.get(direction, ())
        return int(occupied) + self.extra_flows.get(direction, {}).get(node, 0)

    def _capped(self) -> list:
        """The active flows with their caps while flows share their nodes' links, with each other
        or with a job's parallel task: `node_caps` where set, else the node link over its flows."""
        active = []
        for transfer in self.transfers:
            extra = self.extra_flows.get(transfer.direction, {})
            caps = self.node_caps.get(transfer.direction, {})
            for group in transfer.groups:
                if group[1] > 0:
                    cap = group[2]
                    for node, bandwidth in zip(group[6], group[7]):
                        cap = min(cap, caps.get(node, bandwidth / (1 + extra.get(node, 0))))
                    active.append((cap, group))
        return active

    def remove(self, transfer: Transfer) -> None:
        if transfer in self.transfers:
            del self.transfers[transfer]
            for group in transfer.groups:
                if group[1] > 0:
                    self._count(transfer, group, -1)

    def advance(self, now: float) -> list[tuple[Transfer, list]]:
        """Move every flow on to `now`; return the (transfer, group) pairs whose flows finished."""
        elapsed = now - self.updated
        self.updated = now
        finished, done = [], []
        for transfer in self.transfers:
            for group in transfer.groups:
                if group[1] > 0:
                    group[1] -= group[3] * elapsed
                    if group[1] <= RATE_TOLERANCE * group[4]:
                        group[1] = 0.0
                        transfer.left -= 1
                        finished.append((transfer, group))
                        self._count(transfer, group, -1)
            if transfer.left == 0:
                done.append(transfer)
        for transfer in done:
            del self.transfers[transfer]
        return finished

    def share(self) -> float:
        """Max-min fair rates (water-filling over the flow caps); the time of the next flow
        completion."""
        if self.node_caps or self.crowded:  # flows share their nodes' links: `_capped`
            active = self._capped()
        else:
            active = [
                (group[2], group)
                for transfer in self.transfers
                for group in transfer.groups
                if group[1] > 0
            ]
        active.sort(key=_first)
        capacity, flows = self.capacity, 0
        for _, group in active:
            flows += group[0]
        throughput = 0.0
        soonest = math.inf
        # 001 §5.2.1: the PFS link is shared max-min fairly (water-filling)
        for cap, group in active:
            level = capacity / flows
            rate = cap if cap <= level else level
            group[3] = rate
            share = rate * group[0]
            capacity -= share
            flows -= group[0]
            throughput += share
            remaining = group[1] / rate
            if remaining < soonest:
                soonest = remaining
        self.throughput = throughput
        self.version += 1
        # at least one representable step: at late times (1e10 s and beyond) a short remainder would
        # add nothing to the clock and the link would reschedule itself at the same moment for ever
        return max(self.updated + soonest, math.nextafter(self.updated, math.inf))


MAXMIN_PRECISION = 1e-5  # SimGrid's maxmin/precision default (B/s): a link with less left is full
STEADY_TOLERANCE = 1e-12  # relative: a rate this close to a task's rate alone leaves it unslowed
BOTTLENECK_ROUNDS = 10_000  # rounds of the fair-bottleneck solver before it stops (SimGrid: none)


class Crossing:
    """A live parallel task on shared links between clusters (one SimGrid L07 action): its share
    left (1 at the start), its rate (shares/s), its bound (1 / the seconds its own resources need)
    and the moment it ends. While it has always run as fast as alone (`steady`) it ends at
    `origin` + its length alone, the same number a `Comm` of that length gives."""

    __slots__ = ("owner", "links", "bound", "alone", "left", "rate", "end", "steady", "value", "mu")

    def __init__(self, item: CrossComm, owner, origin: float):
        self.owner = owner
        self.links = item.links
        self.bound = 1.0 / item.own if item.own > 0 else math.inf
        # 001 §5.2 (SimGrid L07): alone, the tightest of its own bound and each link's bandwidth
        self.alone = min(self.bound, min(bandwidth / load for _, load, bandwidth in item.links))
        self.left = 1.0
        self.rate = 0.0
        self.end = origin + item.duration
        self.steady = True
        self.value = self.mu = 0.0  # the solver's working values


def fair_bottleneck(tasks, bandwidth: dict[str, float]) -> None:
    """Set every task's `value` (its rate) as SimGrid's FairBottleneck solver does (the default
    solver of the L07 model ElastiSim uses; 001 §5.2): in rounds, every link offers its remaining
    bandwidth split evenly among its unsaturated tasks, each task takes the smallest offer (over its
    bytes on that link) up to its bound, and a full link or a task at its bound leaves the rounds.
    As in SimGrid, a full link subtracts what its tasks took in their last round again in the
    rounds after they left (tasks can end below their max-min share)."""
    elements: dict[str, list] = {}  # link: its (task, bytes)
    for task in tasks:
        task.value = task.mu = 0.0
        for key, load, _ in task.links:
            elements.setdefault(key, []).append((task, load))
    remaining = {key: bandwidth[key] for key in elements}
    active = dict.fromkeys(tasks)
    for _ in range(BOTTLENECK_ROUNDS):
        if not active:
            break
        _take(active, _offers(elements, remaining, active))
        _saturate(elements, remaining, active)


def _offers(elements: dict, remaining: dict, active: dict) -> dict[str, float]:
    """A round's offer of every link: its remaining bandwidth over its unsaturated tasks (a link
    without any leaves the rounds)."""
    usage = {}
    for key in list(remaining):
        users = sum(1 for task, _ in elements[key] if task in active)
        if users == 0:
            del remaining[key]
        else:
            usage[key] = remaining[key] / users
    return usage


def _take(active: dict, usage: dict[str, float]) -> None:
    """Every unsaturated task takes the smallest offer of its links, up to its bound."""
    for task in list(active):
        increment = task.bound - task.value
        for key, load, _ in task.links:
            increment = min(increment, usage[key] / load)
        task.mu = increment
        task.value += increment
        if task.value == task.bound:
            del active[task]


def _saturate(elements: dict, remaining: dict, active: dict) -> None:
    """Each link loses what its tasks took (SimGrid's double_update at maxmin/precision); a full
    link takes its tasks out of the rounds."""
    for key in list(remaining):
        left = remaining[key]
        for task, load in elements[key]:
            left -= load * task.mu
            if left < MAXMIN_PRECISION:
                left = 0.0
        if left <= 0.0:
            del remaining[key]
            for task, _ in elements[key]:
                active.pop(task, None)
        else:
            remaining[key] = left


class ClusterLinks:
    """The SHARED links between clusters and the parallel tasks on them (SimGrid's L07 actions
    whose routes cross them): rates are re-solved whenever a task starts or ends."""

    def __init__(self) -> None:
        self.tasks: dict[Crossing, None] = {}
        self.bandwidth: dict[str, float] = {}
        self.updated = 0.0
        self.version = 0

    def add(self, task: Crossing) -> None:
        self.tasks[task] = None
        for key, _, bandwidth in task.links:
            self.bandwidth[key] = bandwidth

    def remove(self, task: Crossing) -> None:
        self.tasks.pop(task, None)

    def advance(self, now: float) -> list[Crossing]:
        """Move every task on to `now`; return (and remove) those that ended."""
        elapsed = now - self.updated
        self.updated = now
        finished = []
        for task in self.tasks:
            task.left -= task.rate * elapsed
            if task.end <= now or task.left <= RATE_TOLERANCE:
                finished.append(task)
        for task in finished:
            del self.tasks[task]
        return finished

    def share(self) -> float:
        """New rates for every task; the time of the next task's end."""
        fair_bottleneck(self.tasks, self.bandwidth)
        soonest = math.inf
        for task in self.tasks:
            task.rate = task.value
            if task.steady and task.rate < task.alone * (1.0 - STEADY_TOLERANCE):
                task.steady = False
            if not task.steady:
                task.end = self.updated + task.left / task.rate if task.rate > 0 else math.inf
            soonest = min(soonest, task.end)
        self.version += 1
        return max(soonest, math.nextafter(self.updated, math.inf))
