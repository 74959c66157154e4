"""The flow-level execution model that replaces SimGrid: how long a task takes on a configuration.

Per task on n nodes (001 §4.2, §5.2; approximations documented in docs/elastisim.md):

- compute: flops of each node (vector pattern) / node speed; GPU: / (GPUs per node x GPU speed);
- communication: bytes each node sends and receives (matrix pattern, ElastiSim's payload split) over the node's
  private link, sending and receiving independently (split duplex), plus the two link latencies of a route;
- a compute task with both payloads takes max(compute, communication) (they overlap); every task ends on the
  slowest node, so `coupled` and uncoupled tasks take the same time here;
- delays (`idle`, `busy_wait`) per node by the vector pattern;
- burst buffers: node-local bytes / the node's read or write bandwidth; wide striping also moves the
  (n-1)/n share of the data over the node link and costs `flops_per_byte`;
- PFS I/O: one flow per node with bytes, capped by the node's link, all flows of all jobs sharing the PFS read
  (or write) bottleneck link max-min fairly; `SharedLink` re-shares whenever a flow starts or ends.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from cosched.errors import InputError

__all__ = ["PfsTransfer", "task_cost", "distribute", "traffic", "SharedLink", "Transfer", "RATE_TOLERANCE"]

RATE_TOLERANCE = 1e-9  # relative: bytes left below this share of a flow's size count as transferred


@dataclass(frozen=True)
class PfsTransfer:
    """A PFS read or write: flow groups (count, bytes per flow, cap in B/s) and the route latency."""

    direction: str
    groups: tuple[tuple[int, float, float], ...]
    latency: float
    asynchronous: bool


def distribute(size, pattern: str, n: int) -> np.ndarray:
    """A payload per resource by ElastiSim's vector patterns (explicit vectors pass through); 001 §4.2.1."""
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


def traffic(size, pattern: str, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Bytes each of n resources sends and receives under a matrix pattern (ElastiSim's payload split); 001 §4.2.1."""
    sent, received = np.zeros(n), np.zeros(n)
    if n == 1:
        return sent, received
    if pattern == "matrix":
        matrix = np.asarray(size, dtype=np.float64).reshape(n, n).copy()
        np.fill_diagonal(matrix, 0.0)
        return matrix.sum(axis=1), matrix.sum(axis=0)
    if pattern in ("all_to_all", "ring", "ring_clockwise", "ring_counter_clockwise"):
        sent[:] = received[:] = size / n
    elif pattern == "gather":
        sent[1:] = size / n
        received[0] = size * (n - 1) / n
    elif pattern == "scatter":
        sent[0] = size * (n - 1) / n
        received[1:] = size / n
    elif pattern == "master_worker":
        per_worker = size / ((n - 1) / 2)
        sent[1:] = received[1:] = per_worker
        sent[0] = received[0] = per_worker * (n - 1)
    return sent, received


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


def _communication(size, pattern, nodes, platform) -> float:
    n = len(nodes)
    sent, received = traffic(size, pattern, n)
    volume = np.maximum(sent, received)
    if not volume.any():
        return 0.0
    # 001 §4.2: bytes over the node's link (split duplex) plus the latencies of the two links of a route
    return float((volume / platform.bandwidth[nodes]).max() + 2 * platform.latency[nodes].max())


def task_cost(task, values: dict, nodes: np.ndarray, gpus: int, platform):
    """Seconds (a float) for a task on `nodes`, or a `PfsTransfer`; `values` holds the evaluated payloads."""
    n = len(nodes)
    kind = task.kind
    if kind == "cpu":
        seconds = 0.0
        if task.flops is not None:  # 001 §4.2: flops per node / node speed; the slowest node ends the task
            seconds = float((distribute(values["flops"], task.computation_pattern, n) / platform.speed[nodes]).max())
        if task.bytes is not None:  # 001 §4.2: computation and communication overlap
            seconds = max(seconds, _communication(values["bytes"], task.communication_pattern, nodes, platform))
        return seconds
    if kind == "gpu":
        if gpus == 0 or not platform.gpus[nodes].all():
            raise InputError("a GPU task runs on a configuration without GPUs", field=task.where)
        seconds = 0.0
        if task.flops is not None:
            per_node = distribute(values["flops"], task.computation_pattern, n)
            seconds = float((per_node / (gpus * platform.gpu_speed[nodes])).max())
        if task.bytes is not None:
            intra, inter = _gpu_split(values["bytes"], task.communication_pattern, n, gpus)
            inside = traffic(intra, task.communication_pattern, gpus)[0].max() / platform.gpu_bandwidth[nodes].min() \
                if gpus > 1 else 0.0
            seconds = max(seconds, inside, _communication(inter, task.communication_pattern, nodes, platform))
        return seconds
    if kind in ("idle", "busy_wait"):
        return float(distribute(values["delay"], task.pattern, n).max())
    size = distribute(values["bytes"], task.pattern, n)
    if kind in ("bb_read", "bb_write"):
        bandwidth = platform.bb_read[nodes] if kind == "bb_read" else platform.bb_write[nodes]
        if not bandwidth.all():
            raise InputError("burst-buffer I/O on a node without a node-local burst buffer", field=task.where)
        seconds = size / bandwidth
        striped = platform.node_type[nodes] == 2
        if striped.any() and n > 1:
            spread = size.sum() / n / bandwidth
            network = size * (n - 1) / n / platform.bandwidth[nodes]
            seconds = np.where(striped, np.maximum(spread, network) +
                               platform.flops_per_byte[nodes] * size / platform.speed[nodes], seconds)
        return float(seconds.max())
    route = platform.pfs_read if kind == "pfs_read" else platform.pfs_write
    if route is None:
        raise InputError(f"{kind} on a platform without a PFS route", field=task.where)
    caps = platform.bandwidth[nodes]
    groups: dict[tuple[float, float], int] = {}
    for amount, cap in zip(size.tolist(), caps.tolist()):
        if amount > 0:
            groups[(amount, cap)] = groups.get((amount, cap), 0) + 1
    if not groups:  # no byte to move: no flow on the link (an empty transfer never ended)
        return 0.0
    return PfsTransfer(kind, tuple((count, amount, cap) for (amount, cap), count in groups.items()),
                       float(platform.latency[nodes].max() + route[2]), bool(task.asynchronous))


class Transfer:
    """The live state of one PFS transfer on a shared link: flow groups [count, bytes left, cap, rate]."""

    __slots__ = ("groups", "owner", "left")

    def __init__(self, groups, owner):
        self.groups = [[count, amount, cap, 0.0, amount] for count, amount, cap in groups]
        self.owner = owner
        self.left = len(self.groups)


class SharedLink:
    """A PFS bottleneck link shared max-min fairly by every flow of every running transfer (001 §5.2.1)."""

    def __init__(self, capacity: float):
        self.capacity = capacity
        self.transfers: dict[Transfer, None] = {}
        self.updated = 0.0
        self.version = 0
        self.throughput = 0.0

    def advance(self, now: float) -> list[Transfer]:
        """Move every flow on to `now`; return the transfers that finished."""
        elapsed = now - self.updated
        self.updated = now
        finished = []
        for transfer in self.transfers:
            for group in transfer.groups:
                if group[1] > 0:
                    group[1] -= group[3] * elapsed
                    if group[1] <= RATE_TOLERANCE * group[4]:
                        group[1] = 0.0
                        transfer.left -= 1
            if transfer.left == 0:
                finished.append(transfer)
        for transfer in finished:
            del self.transfers[transfer]
        return finished

    def share(self) -> float:
        """Max-min fair rates (water-filling over the flow caps); the time of the next flow completion."""
        active = [group for transfer in self.transfers for group in transfer.groups if group[1] > 0]
        active.sort(key=lambda group: group[2])
        capacity, flows = self.capacity, sum(group[0] for group in active)
        self.throughput = 0.0
        soonest = math.inf
        for group in active:  # 001 §5.2.1: the PFS link is shared max-min fairly (water-filling)
            level = capacity / flows
            rate = group[2] if group[2] <= level else level
            group[3] = rate
            capacity -= rate * group[0]
            flows -= group[0]
            self.throughput += rate * group[0]
            soonest = min(soonest, group[1] / rate)
        self.version += 1
        # at least one representable step: at late times (1e10 s and beyond) a short remainder would add
        # nothing to the clock and the link would reschedule itself at the same moment for ever
        return max(self.updated + soonest, math.nextafter(self.updated, math.inf))
