"""Which nodes a job gets: the node state and the replaceable allocator (000 §3.3, thesis §5.1).

Interface (what a new allocator, e.g. the co-location one of 000 §3.5, implements):

- ``NodeState``, the one node state of every allocator: ``used[node]`` cores in use and
  ``occupants[node, slot]`` job indices on each node (read-only arrays; -1 = empty slot, ``slots``
  jobs per node at most, 2 by default so two jobs can share a node), ``idle`` = number of nodes
  with no job, ``idle_ids`` and ``partly_used_ids`` the idle and the partly used nodes (ascending
  lists). ``occupy``/``vacate`` (a job's cores on some nodes) and ``take``/``give_back`` (whole
  nodes) keep these consistent; ``jobs_on(nodes)`` lists the distinct jobs on some nodes,
  ``neighbours(job)`` the jobs sharing a node with a job (what a speed model looks at). Nodes may
  have different core counts (node types). Occupant ids below -1 are the engine's node
  reservations.
- ``Allocation(nodes, cores)``: the node ids (int array) and the cores used on each of them (int).
- ``Allocator`` (subclass it):
    * ``find(engine, job) -> Allocation | None``: the nodes the job would use now, or None; no side
      effect. ``allocate(engine, job)``: find and commit (what the engine calls to start a job).
    * ``units(engine, job) -> int`` and ``free_units() -> int``, ``total_units``: the resource count
      that backfilling reasons with (reservations, shadow time, extra units). Compact: whole nodes.
      ``static_units(cores)``: the units of every job as a table, when they follow from its cores
      and placement hint (None by default).
      ``units_of(allocation)``: the units an allocation holds.
    * ``free_cores() -> int``: cores bound to no job (the Filler keys of 003 read it).
    * ``idle_nodes(limit) -> array``: the ids of the nodes nobody uses, ascending (at most `limit`).
    * ``resize(engine, job, allocation, nodes) -> Allocation | None``: grow or shrink a running
      job's
      allocation to `nodes` nodes (committed), None if too few nodes are idle; only where jobs get
      whole nodes.
    * ``commit(job, allocation)`` / ``release(job, allocation)``: update the node state; the engine
      calls
      them when a job starts and finishes. Override to keep extra counters, calling ``super()``.
    * ``bind(workload)``: called once by the engine before the first event; sets ``needs``
      (`cosched.simulator.resources.Needs`: the nodes each job needs on each node type) when the
      platform has memory, GPUs or several node types or jobs ask for GPUs, else None (cores only).
      ``needs`` is where a job's eligible nodes are decided: allocators choose only among them.
    * ``eligibility``: None when every job may use every free unit of the scheduler's scope (one
      node type; with partitions, one node type per partition), else an object (`Eligibility`)
      that splits the nodes into pools (one node type, within one partition) and says which pools
      a job may use: what EASY's reservation is computed on.
"""

from __future__ import annotations

import bisect
from abc import ABC, abstractmethod
from array import array
from typing import Protocol

try:  # Cython's pure-Python mode: the types below compile to C, and do nothing in plain Python
    import cython

    if not cython.compiled:  # plain Python: the light stand-in, not Cython's slower shadow
        raise ModuleNotFoundError
except ModuleNotFoundError:
    from cosched import _pure_cython as cython

if cython.compiled:  # C's memchr, for `NodeState._lowest`
    from cython.cimports.libc.string import memchr

import numpy as np

from cosched.simulator.bisection import int_position
from cosched.simulator.platform import Platform
from cosched.simulator.resources import Needs

__all__ = ["NodeState", "Allocation", "Allocator", "CompactAllocator", "Eligibility"]

EMPTY = -1  # marks a free slot in NodeState.occupants
BULK_NODES = (
    16  # above this many nodes, the compact allocator rebuilds its idle list instead of editing it
)
# idle nodes a release moves down into the stale room before the compact allocator's idle list
# at most; above, a slice insertion (its fixed cost: about as many item moves) is cheaper
FRONT_MERGE = cython.declare(cython.Py_ssize_t, 16)
NO_ENTRY = cython.declare(cython.Py_ssize_t, -1)  # the end of a job's neighbour entries (`_share`)
# a node's kind, from its cores in use: idle (none), partly used (some) or full (all)
IDLE = cython.declare(cython.Py_ssize_t, 0)
PARTLY = cython.declare(cython.Py_ssize_t, 1)
FULL = cython.declare(cython.Py_ssize_t, 2)
WRITE_BEHIND = 1024  # changes the compact allocator keeps for its node arrays; beyond: rebuild
# changes a read replays; beyond, it rebuilds (a rebuild costs about as much as replaying a few
# dozen changes, so one read never replays a thousand of them inside a scheduling decision)
REPLAY_AT_MOST = 32


@cython.cclass
class NodeState:
    """Per node: the cores in use and the occupant of each slot, as `array('q')`s (compiled:
    written through typed memoryviews); each node's kind (idle, partly used: some cores free, some
    used, or full), a byte per node kept node by node as its cores in use change, so that the idle
    and the partly used nodes are listed (ascending) when read, by a search of those bytes, with
    no list edit per change; and which jobs share nodes.

    The one node state of every allocator. A start or an end touches a few nodes, where item edits
    cost less than numpy calls on small arrays; the numpy arrays `used` and `occupants` are copied
    from the storage at the first read after a change (read-only: change the state through
    `occupy`, `vacate`, `take` and `give_back`). Nodes may have different core counts (node types)
    and any number of slots. Compiled, an extension type (fields and C methods declared in
    ``allocators.pxd``): its own edits and the compiled co-location allocator read the fields as C
    fields and call `occupy`, `vacate`, `neighbours`, `lowest_idle`, `idle_into` and
    `partly_used_into` in C; in plain Python an ordinary class."""

    def __init__(self, platform: Platform, slots: int = 2):
        nodes = platform.nodes
        per_node = None if platform.uniform else _cores_of_nodes(platform)
        self.cores_per_node: int | np.ndarray = (
            platform.cores_per_node if per_node is None else per_node
        )
        cores = [platform.cores_per_node] * nodes if per_node is None else per_node.tolist()
        self._cores = array("q", cores)
        self.slots = slots
        self._arrays: tuple[np.ndarray, np.ndarray] | None = None
        self._node_ids = list(range(nodes))  # made once: a list of nodes takes references
        self._empty(nodes)

    def _empty(self, nodes: int) -> None:
        """Every node idle: no core in use, every slot free, no job beside another."""
        self._used = array("q", bytes(8 * nodes))
        self._occupants = array("q", [EMPTY]) * (nodes * self.slots)  # slot s of node n: n*slots+s
        self._kinds = bytearray([IDLE]) * nodes  # per node its kind: IDLE, PARTLY or FULL
        self.idle, self._partly = nodes, 0
        self._forget_sharing()

    @property
    def used(self) -> np.ndarray:
        """Cores in use per node (read-only)."""
        return self._built()[0]

    @property
    def occupants(self) -> np.ndarray:
        """Occupant of each slot per node, shape (nodes, slots): EMPTY, a job, or a reservation key
        below -1 (read-only)."""
        return self._built()[1]

    @property
    def free(self) -> np.ndarray:
        """Free cores per node."""
        return self.cores_per_node - self.used

    def used_cores(self) -> int:
        """Cores in use on all nodes."""
        return int(self.used.sum())

    def _built(self) -> tuple[np.ndarray, np.ndarray]:
        """The arrays of the per-node storage, built at the first read after a change."""
        if self._arrays is None:
            used = np.array(self._used, dtype=np.int64)
            occupants = np.array(self._occupants, dtype=np.int64).reshape(used.size, self.slots)
            used.flags.writeable = occupants.flags.writeable = False
            self._arrays = used, occupants
        return self._arrays

    @property
    def idle_ids(self) -> list[int]:
        """The idle nodes, ascending (made at each read)."""
        return self._lowest(IDLE, self.idle)

    @property
    def partly_used_ids(self) -> list[int]:
        """The partly used nodes (some cores free, some used), ascending (made at each read)."""
        return self._lowest(PARTLY, self._partly)

    def lowest_idle(self, count: int) -> list[int]:
        """The lowest `count` idle nodes, ascending (every idle node if fewer are)."""
        return self._lowest(IDLE, count)

    def idle_into(self, chosen: list[int], at: int) -> int:
        """Write the lowest idle nodes, ascending, over ``chosen[at:]`` (as many as fit there and
        exist) and return how many: a caller fills one list from several kinds of node."""
        return self._lowest_into(IDLE, chosen, at)

    def partly_used_into(self, chosen: list[int], at: int) -> int:
        """`idle_into` for the partly used nodes."""
        return self._lowest_into(PARTLY, chosen, at)

    @cython.locals(chosen=list)
    def _lowest(self, kind: int, count: int) -> list[int]:
        """The lowest `count` nodes of `kind` (IDLE or PARTLY), ascending, as many as there are."""
        chosen = [0] * min(count, self.idle if kind == IDLE else self._partly)
        self._lowest_into(kind, chosen, 0)
        return chosen

    @cython.boundscheck(False)  # the nodes found exist: `count` of that kind at most
    @cython.wraparound(False)
    @cython.initializedcheck(False)  # `_empty` sets every buffer
    @cython.locals(
        kinds=cython.uchar[::1],
        ids=list,
        count=cython.Py_ssize_t,
        found=cython.Py_ssize_t,
        node=cython.Py_ssize_t,
        nodes=cython.Py_ssize_t,
        mark=cython.uchar,
    )
    def _lowest_into(self, kind: int, chosen: list[int], at: int) -> int:
        """`idle_into` for the nodes of `kind` (IDLE or PARTLY): each found by a search of the node
        kinds for the next byte `kind` (C's memchr compiled, `bytearray.find` in plain Python: the
        same search), skipping the others many at a time."""
        kinds, ids, found, node, mark = self._kinds, self._node_ids, 0, 0, kind
        nodes = len(kinds)
        count = min(len(chosen) - at, self.idle if kind == IDLE else self._partly)
        while found < count:  # a node of `kind` lies at `node` or after: `count` are left at least
            if kinds[node] != mark:  # else the next node is one (idle nodes come in runs)
                if cython.compiled:
                    node = cython.cast(
                        cython.p_uchar, memchr(cython.address(kinds[node]), mark, nodes - node)
                    ) - cython.address(kinds[0])
                else:
                    node = self._kinds.find(mark, node)
            chosen[at + found] = ids[node]  # compiled: in place, no append, no int made
            found, node = found + 1, node + 1
        return found

    @cython.boundscheck(False)  # `node` is a node of the state
    @cython.wraparound(False)
    @cython.initializedcheck(False)  # `_empty` sets every buffer
    @cython.locals(in_use=cython.longlong, kind=cython.Py_ssize_t, was=cython.Py_ssize_t)
    def _file(self, node: int) -> None:
        """Count node `node` as idle, partly used or full from its cores in use, after a change."""
        in_use = self._used[node]
        kind = IDLE if in_use == 0 else PARTLY if in_use < self._cores[node] else FULL
        was = self._kinds[node]
        if kind == was:
            return
        self._kinds[node] = kind
        if was == IDLE:
            self.idle -= 1
        elif was == PARTLY:
            self._partly -= 1
        if kind == IDLE:
            self.idle += 1
        elif kind == PARTLY:
            self._partly += 1

    @cython.boundscheck(False)  # each node checked once below: its slots and counts exist
    @cython.wraparound(False)
    @cython.locals(
        node=cython.Py_ssize_t,
        count=cython.Py_ssize_t,
        used=cython.longlong[::1],
        occupants=cython.longlong[::1],
        ids=list,
        placed=cython.bint,
        step=cython.Py_ssize_t,
        mine=cython.longlong,
        width=cython.Py_ssize_t,
        at=cython.Py_ssize_t,
        other=cython.longlong,
        beside=cython.longlong,
        empty=cython.longlong,
        run=cython.Py_ssize_t,
    )
    def occupy(self, job: int, nodes: np.ndarray | list[int], cores: int) -> None:
        """`job` (or a reservation key) takes `cores` cores and a free slot on each of `nodes`."""
        ids = nodes if isinstance(nodes, list) else nodes.tolist()
        self._arrays = None
        used, occupants, width, count = self._used, self._occupants, self.slots, len(self._used)
        step, mine, empty = cores, job, EMPTY  # compiled: C integers, compared without objects
        beside, run = empty, 0  # a neighbour usually holds a run of the nodes: counted once per run
        for item in ids:
            node = item
            if not 0 <= node < count:
                raise IndexError(f"node {node} is not a node of the platform ({count} nodes)")
            used[node] += step
            self._file(node)
            placed = False
            for at in range(node * width, node * width + width):
                other = occupants[at]
                if other >= 0:  # a job (EMPTY and reservation keys are negative)
                    if other != beside:
                        if run and mine >= 0:  # a reservation counts no neighbour
                            self._share(job, beside, run)
                        beside, run = other, 0
                    run += 1
                elif other == empty and not placed:
                    occupants[at] = mine
                    placed = True
        if run and mine >= 0:
            self._share(job, beside, run)

    @cython.boundscheck(False)  # each node checked once below: its slots and counts exist
    @cython.wraparound(False)
    @cython.locals(
        node=cython.Py_ssize_t,
        count=cython.Py_ssize_t,
        used=cython.longlong[::1],
        occupants=cython.longlong[::1],
        step=cython.Py_ssize_t,
        mine=cython.longlong,
        width=cython.Py_ssize_t,
        ids=list,
        at=cython.Py_ssize_t,
        empty=cython.longlong,
    )
    def vacate(self, job: int, nodes: np.ndarray | list[int], cores: int) -> None:
        """`job` (or a reservation key) gives back its `cores` cores and its slot on `nodes`, every
        node it holds: it shares none with another job afterwards."""
        used, occupants, width, count = self._used, self._occupants, self.slots, len(self._used)
        self._arrays = None
        step, mine, empty = cores, job, EMPTY  # compiled: C integers, compared without objects
        ids = nodes if isinstance(nodes, list) else nodes.tolist()
        for item in ids:
            node = item
            if not 0 <= node < count:
                raise IndexError(f"node {node} is not a node of the platform ({count} nodes)")
            used[node] -= step
            self._file(node)
            for at in range(node * width, node * width + width):
                if occupants[at] == mine:
                    occupants[at] = empty
                    break
        self._unshare(job)

    @cython.locals(
        used=cython.longlong[::1],
        full=cython.longlong[::1],
        occupants=cython.longlong[::1],
        node=cython.Py_ssize_t,
        width=cython.Py_ssize_t,
    )
    def take(self, owner: int, ids: list[int]) -> None:
        """`owner` (a job or a reservation key) takes every core of the idle nodes `ids` (in slot
        0): the whole-node allocators' update."""
        used, full, occupants, width = self._used, self._cores, self._occupants, self.slots
        self._arrays = None
        for node in ids:
            used[node], occupants[node * width] = full[node], owner
            self._file(node)

    @cython.locals(
        used=cython.longlong[::1],
        occupants=cython.longlong[::1],
        node=cython.Py_ssize_t,
        width=cython.Py_ssize_t,
    )
    def give_back(self, ids: list[int]) -> None:
        """The nodes `ids`, each held whole by one owner (`take`), become idle."""
        used, occupants, width = self._used, self._occupants, self.slots
        self._arrays = None
        for node in ids:
            used[node], occupants[node * width] = 0, EMPTY
            self._file(node)

    @cython.locals(
        used=cython.longlong[::1],
        full=cython.longlong[::1],
        occupants=cython.longlong[::1],
        node=cython.Py_ssize_t,
        width=cython.Py_ssize_t,
    )
    def hold_whole(self, holders: dict[int, list[int]]) -> None:
        """Start over from `holders`: each owner holds every core of its nodes (slot 0), the other
        nodes are idle (a whole-node allocator's rebuild)."""
        full, width = self._cores, self.slots
        self._arrays = None
        self._empty(len(self._used))
        used, occupants = self._used, self._occupants
        for owner, ids in holders.items():
            for node in ids:
                used[node], occupants[node * width] = full[node], owner
                self._file(node)

    def _forget_sharing(self) -> None:
        """No job shares a node: the neighbour table empty (a first room for 32 pairs)."""
        # per job (by index): its first neighbour entry, or NO_ENTRY; per entry: the neighbour, the
        # nodes they share and the job's next entry (or NO_ENTRY); a job's entries in the order its
        # neighbours came; the free entries chained from `_free_entry` (`_share`, `_unshare`)
        self._heads = array("q", [NO_ENTRY]) * 64
        self._others, self._counts = array("q", [NO_ENTRY]) * 64, array("q", [NO_ENTRY]) * 64
        self._next, self._gathered = array("q", range(1, 65)), array("q", [NO_ENTRY]) * 64
        self._next[63], self._free_entry = NO_ENTRY, 0

    @property
    def shared(self) -> dict[int, dict[int, int]]:
        """Per job that shares nodes: {neighbour job: nodes they share} (made at each read)."""
        heads = self._heads
        return {job: self.sharing(job) for job in range(len(heads)) if heads[job] != NO_ENTRY}

    def _share(self, job: int, other: int, run: int) -> None:
        """Count `job` and `other` (jobs, not reservations) in as sharing `run` more nodes."""
        if max(job, other) >= len(self._heads):  # room for both, at least doubled
            self._heads = _grown(self._heads, max(job + 1, other + 1, 2 * len(self._heads)))
        self._count_in(job, other, run)
        self._count_in(other, job, run)

    @cython.initializedcheck(False)  # the table is made in `__init__`
    @cython.boundscheck(False)  # `_share` made room for both jobs; entries are within the table
    @cython.wraparound(False)
    @cython.locals(entry=cython.Py_ssize_t, last=cython.Py_ssize_t, size=cython.Py_ssize_t)
    @cython.locals(free=cython.Py_ssize_t)
    def _count_in(self, job: int, other: int, run: int) -> None:
        """`job` shares `run` more nodes with `other` (a new neighbour: an entry after its last)."""
        entry, last = self._heads[job], NO_ENTRY
        while entry != NO_ENTRY:
            if self._others[entry] == other:
                self._counts[entry] += run
                return
            last, entry = entry, self._next[entry]
        entry = self._free_entry
        if entry == NO_ENTRY:  # every entry taken: twice the room, the new entries free
            entry = size = len(self._next)
            self._others = _grown(self._others, 2 * size)
            self._counts = _grown(self._counts, 2 * size)
            self._gathered = _grown(self._gathered, 2 * size)
            self._next = _grown(self._next, 2 * size)
            for free in range(entry, 2 * size - 1):
                self._next[free] = free + 1
        self._free_entry = self._next[entry]
        self._others[entry], self._counts[entry], self._next[entry] = other, run, NO_ENTRY
        if last == NO_ENTRY:
            self._heads[job] = entry
        else:
            self._next[last] = entry

    @cython.initializedcheck(False)  # the table is made in `__init__`
    @cython.boundscheck(False)  # the jobs are within the table (checked), so are their entries
    @cython.wraparound(False)
    @cython.locals(entry=cython.Py_ssize_t, following=cython.Py_ssize_t)
    def _unshare(self, job: int) -> None:
        """Count `job` out of every node: it left them all (`vacate`)."""
        if not 0 <= job < len(self._heads):  # a reservation, or never beside another job
            return
        entry = self._heads[job]
        self._heads[job] = NO_ENTRY
        while entry != NO_ENTRY:
            self._count_out(self._others[entry], job)
            following = self._next[entry]
            self._next[entry], self._free_entry = self._free_entry, entry
            entry = following

    @cython.initializedcheck(False)  # the table is made in `__init__`
    @cython.boundscheck(False)  # `_unshare`'s neighbours, in the table
    @cython.wraparound(False)
    @cython.locals(entry=cython.Py_ssize_t, last=cython.Py_ssize_t)
    def _count_out(self, job: int, other: int) -> None:
        """`job` no longer shares a node with `other` (a neighbour): its entry freed."""
        entry, last = self._heads[job], NO_ENTRY
        while self._others[entry] != other:  # `job` counts `other` in
            last, entry = entry, self._next[entry]
        if last == NO_ENTRY:
            self._heads[job] = self._next[entry]
        else:
            self._next[last] = self._next[entry]
        self._next[entry], self._free_entry = self._free_entry, entry

    @cython.initializedcheck(False)  # the table is made in `__init__`
    @cython.boundscheck(False)  # entries are within the table, which `_gathered` is as long as
    @cython.wraparound(False)
    @cython.locals(entry=cython.Py_ssize_t, count=cython.Py_ssize_t)
    def _gather(self, job: int) -> int:
        """Write the jobs sharing a node with `job` to the start of `_gathered` (in the order they
        came); return their count."""
        if not 0 <= job < len(self._heads):  # a reservation, or never beside another job
            return 0
        entry, count = self._heads[job], 0
        while entry != NO_ENTRY:
            self._gathered[count] = self._others[entry]
            entry, count = self._next[entry], count + 1
        return count

    @cython.locals(count=cython.Py_ssize_t, at=cython.Py_ssize_t)
    def neighbours(self, job: int) -> list[int]:
        """The jobs sharing at least one node with `job` (in no particular order)."""
        count = self._gather(job)
        return [self._gathered[at] for at in range(count)]

    @cython.locals(index=cython.Py_ssize_t, entry=cython.Py_ssize_t, counts=dict)
    def sharing(self, job: int) -> dict[int, int] | None:
        """Per job sharing nodes with `job`, how many (None: none); made at each read."""
        index = job
        if not 0 <= index < len(self._heads) or self._heads[index] == NO_ENTRY:
            return None
        entry, counts = self._heads[index], {}
        while entry != NO_ENTRY:
            counts[self._others[entry]] = self._counts[entry]
            entry = self._next[entry]
        return counts

    @cython.locals(
        occupants=cython.longlong[::1],
        width=cython.Py_ssize_t,
        node=cython.Py_ssize_t,
        at=cython.Py_ssize_t,
        other=cython.longlong,
        jobs=set,
    )
    def jobs_on(self, nodes: np.ndarray | list[int]) -> np.ndarray:
        """The distinct jobs on these nodes (ascending; a node may be listed more than once)."""
        occupants, width, jobs = self._occupants, self.slots, set()
        for node in nodes if isinstance(nodes, list) else nodes.tolist():
            for at in range(node * width, node * width + width):
                other = occupants[at]
                if other >= 0:  # a job (EMPTY and reservation keys are negative)
                    jobs.add(other)
        return np.array(sorted(jobs), dtype=np.int64)


@cython.cfunc
@cython.locals(values=cython.longlong[::1], grown=cython.longlong[::1], at=cython.Py_ssize_t)
def _grown(values, size: int):
    """A copy of `values` (an ``array("q")``) `size` items long, NO_ENTRY after them."""
    copy = array("q", [NO_ENTRY]) * size
    grown = copy
    for at in range(len(values)):
        grown[at] = values[at]
    return copy


def _cores_of_nodes(platform: Platform) -> np.ndarray:
    """Cores of each node, by node id (node types in platform order)."""
    return np.repeat(
        [group.cores_per_node for group in platform.node_groups],
        [group.nodes for group in platform.node_groups],
    ).astype(np.int64)


@cython.no_gc  # its fields (node ids, an int array, a count) can hold no reference cycle
@cython.cclass
class Allocation:
    """The node ids a job uses and the cores it uses on each of them (read-only).

    `nodes` is an int array; an allocator that keeps node ids in a list (the compact one) passes the
    list, and the array is built when `nodes` is first read (in a plain run: by the result). The
    compact allocator describes a run of consecutive ids by its first id and count alone (`_run`):
    no list is kept while the job runs and after, and `nodes` or `node_ids` are made when read.
    Compiled, an extension type the garbage collector does not track: one is made per start, and
    its fields are read at every end."""

    # the fields (allocators.pxd), for type checkers
    _nodes: np.ndarray | None
    _ids: list[int] | None
    _cores: int
    _sorted: bool  # the ids are known to ascend (an allocator's slice)
    _first: int  # a run's first node id (`_run`), else EMPTY
    _count: int  # a run's node count

    def __init__(self, nodes: np.ndarray | list[int], cores: int):
        if isinstance(nodes, list):
            self._nodes, self._ids = None, nodes
        else:
            self._nodes, self._ids = nodes, None
        self._cores = cores
        self._sorted = False
        self._first, self._count = EMPTY, 0

    @cython.cfunc
    @cython.returns(cython.bint)
    def _is_run(self) -> bool:
        """Held as a run of consecutive node ids (`_run`): its first id and count, no list."""
        return self._first >= 0  # a node id, not EMPTY (compiled: C integers, no global read)

    @property
    def nodes(self) -> np.ndarray:
        """The node ids, ascending for the built-in allocators."""
        if self._nodes is None:
            if self._is_run():
                self._nodes = np.arange(self._first, self._first + self._count, dtype=np.int64)
            else:
                self._nodes = np.array(self._ids, dtype=np.int64)
        return self._nodes

    @property
    def node_ids(self) -> list[int]:
        """The node ids as a list."""
        if self._is_run():  # made at each read, kept nowhere
            return list(range(self._first, self._first + self._count))
        if self._ids is None:
            self._ids = self.nodes.tolist()
        return self._ids

    @property
    def cores(self) -> int:
        """Cores used on each node."""
        return self._cores

    @property
    def size(self) -> int:
        """How many nodes."""
        return self._size()

    def _size(self) -> int:  # a C method (allocators.pxd)
        if self._is_run():
            return self._count
        return len(self._ids) if self._ids is not None else int(self.nodes.size)

    def __repr__(self) -> str:
        return f"Allocation(nodes={self.node_ids}, cores={self._cores})"


@cython.ccall
@cython.locals(made=Allocation, cores=cython.Py_ssize_t, ascending=cython.bint)
def _listed(ids: list[int], cores: int, ascending: bool = True) -> Allocation:
    """``Allocation(ids, cores)`` for a list of node ids (`ascending`: known to ascend, as a slice
    of an idle list), made without the call of a class: compiled, a C function that fills the
    fields (one allocation per start)."""
    made = Allocation.__new__(Allocation)
    made._nodes, made._ids, made._cores = None, ids, cores
    made._sorted = ascending
    made._first, made._count = EMPTY, 0
    return made


@cython.cfunc
@cython.locals(
    made=Allocation, first=cython.Py_ssize_t, count=cython.Py_ssize_t, cores=cython.Py_ssize_t
)
def _run(first: int, count: int, cores: int) -> Allocation:
    """The allocation of the `count` consecutive nodes from `first` on, held as these two numbers
    (no list of ids per job)."""
    made = Allocation.__new__(Allocation)
    made._nodes, made._ids, made._cores = None, None, cores
    made._sorted = True
    made._first, made._count = first, count
    return made


class Eligibility(Protocol):
    """Where a job may run, as disjoint pools of whole nodes (each of one node type, within one
    partition): the one notion that node types, memory and GPU fit and partitions go through."""

    def pools_of(self, job: int) -> list[tuple[int, int]]:
        """(pool, whole nodes the job needs there) of every pool that can run `job`, in the order
        the allocator tries them."""
        ...

    def free_in(self, pool: int) -> int:
        """Idle nodes of `pool`."""
        ...

    def pool_of_node(self, node: int) -> int:
        """The pool of `node` (-1: none, a node of no partition)."""
        ...

    def pool_now(self, job: int) -> tuple[int, int] | None:
        """(pool, nodes) the allocator would give `job` now, or None if it does not fit."""
        ...

    @property
    def pool_sizes(self) -> list[int]:
        """Per pool: its nodes."""
        ...

    def pool_allocation(self, pool: int, count: int) -> Allocation | None:
        """The lowest `count` idle nodes of `pool`, or None if fewer are idle."""
        ...


class Allocator(ABC):
    """Base allocator: owns the node state; subclasses choose the nodes and the backfilling unit."""

    slots = 2
    eligibility: Eligibility | None = None  # None: every job may use every free unit

    def __init__(self, platform: Platform):
        self.platform = platform
        self.state = NodeState(platform, self.slots)
        self.needs: Needs | None = None

    def bind(self, workload) -> None:
        """The run's jobs, before the first event: their `Needs` where resources or node types
        matter (None when every job needs ceil(cores / cores per node) nodes, as on the thesis'
        platforms)."""
        gpus = workload.gpus
        if self.platform.plain and (gpus is None or not gpus.any()):
            self.needs = None
            return
        needs = Needs(workload, self.platform)
        # on nodes no two jobs share, the node counts are all that resources change
        alike = self.slots == 1 and needs.same_as_cores_only(self.platform, workload.cores)
        self.needs = None if alike else needs

    def admits(self, job: int, nodes: np.ndarray) -> bool:
        """True if the job may run on these whole nodes (every resource fits; `Needs.admits`)."""
        return self.needs is None or self.needs.admits(job, np.sort(nodes))

    @property
    @abstractmethod
    def total_units(self) -> int:
        """Units of the whole platform."""

    @abstractmethod
    def units(self, engine, job: int) -> int:
        """Units the job holds while it runs."""

    @abstractmethod
    def free_units(self) -> int:
        """Units free now."""

    @abstractmethod
    def find(self, engine, job: int) -> Allocation | None:
        """The allocation the job would get now, or None if it does not fit; changes nothing."""

    def allocate(self, engine, job: int) -> Allocation | None:
        """`find`, then `commit` what it found: the engine's way to start a job on the allocator's
        choice."""
        allocation = self.find(engine, job)
        if allocation is not None:
            self.commit(job, allocation)
        return allocation

    def static_units(self, cores: np.ndarray) -> np.ndarray | None:
        """Units per job when they depend on the job's cores and placement hint only (lets
        schedulers use a table), for jobs without a hint, else None; the engine asks `units` again
        for a job whose hint changes."""
        return None

    def units_of(self, allocation: Allocation) -> int:
        """Units an allocation holds: whole nodes."""
        return allocation.size

    def direct_entry(self, engine) -> bool:
        """Called by `engine` when its run begins: True if the allocator lets `start_job` and
        `end_job` skip its Python methods from now on (the compact one may); this one does not."""
        return False

    def free_cores(self) -> int:
        """Cores bound to no job."""
        return int(self.platform.total_cores - self.state.used_cores())

    def idle_nodes(self, limit: int | None = None) -> np.ndarray:
        """The ids of nodes no job or reservation uses, ascending (the lowest `limit` of them)."""
        return np.array(self.state.idle_ids[:limit], dtype=np.int64)

    def resize(self, engine, job: int, allocation: Allocation, nodes: int) -> Allocation | None:
        """Grow onto the lowest idle nodes or shrink off the job's highest nodes; None if too few
        are idle."""
        current = allocation.nodes
        if nodes > current.size:
            idle = np.array(self.state.idle_ids, dtype=np.int64)
            if nodes - current.size > idle.size:
                return None
            added = Allocation(idle[: nodes - current.size], allocation.cores)
            self.commit(job, added)
            return Allocation(np.sort(np.concatenate([current, added.nodes])), allocation.cores)
        removed = Allocation(current[nodes:], allocation.cores)
        self.release(job, removed)
        return Allocation(current[:nodes], allocation.cores)

    def commit(self, job: int, allocation: Allocation) -> None:
        self.state.occupy(job, allocation.node_ids, allocation.cores)

    def release(self, job: int, allocation: Allocation) -> None:
        self.state.vacate(job, allocation.node_ids, allocation.cores)


@cython.cclass
class _Units:
    """The base of the built-in allocators (`_WholeNodes`, the co-location allocator's
    `_HalfNodes`): their free units as one count, and their start and end of a job as C methods,
    which `start_job` and `end_job` call where the allocator's `direct_entry` allowed it (its
    `allocate` and `release` not overridden in Python). In plain Python an ordinary base class."""

    # the fields (allocators.pxd), for type checkers
    _free: int  # free units
    _direct: bool  # `start_job` and `end_job` call `allocate_cores` and `release_nodes`

    def allocate_cores(self, engine, job: int, cores: int) -> Allocation | None:
        """`allocate(engine, job)` of a job of `cores` cores, a C method: the built-in allocators
        give their own; here, the allocator's `allocate`."""
        return self.allocate(engine, job)  # type: ignore[attr-defined]  # the Allocator's

    def release_nodes(self, job: int, allocation: Allocation) -> None:
        """`release(job, allocation)`, a C method: the built-in allocators give their own; here,
        the allocator's `release`."""
        self.release(job, allocation)  # type: ignore[attr-defined]  # the Allocator's

    @cython.ccall
    def free_units(self) -> int:
        """`Allocator.free_units`: a C method, cheap to call from the passes at every start (which
        read the count in C, `view.Starter`)."""
        return self._free


@cython.cclass
class _WholeNodes(_Units):
    """What a whole-node allocator updates at every start and end (`CompactAllocator`): the idle
    list, the free count, the holders and the changes not yet in the node state, with the updates
    themselves. Compiled, typed fields and C-callable methods (declared in ``allocators.pxd``):
    the engine starts and ends jobs through `allocate_cores` and `release_nodes` in C where
    `CompactAllocator.direct_entry` allows it; then the engine's running jobs and their
    allocations (`_running`, `_allocations`) say who holds the nodes those calls hand out, and
    `_holders` lists only the others (reservations, nodes a scheduler chose). In plain Python an
    ordinary base class."""

    # the fields (allocators.pxd), for type checkers
    _cpn: int
    _idle: list[int]
    _node_ids: list[int]
    _lo: int
    _holders: dict[int, list[int]]
    _changes: list[tuple[int, list[int]]] | None
    _state: NodeState
    needs: Needs | None
    _running: dict[int, None] | None
    _allocations: list[Allocation] | None

    @cython.locals(
        per_node=cython.Py_ssize_t,
        count=cython.Py_ssize_t,
        lo=cython.Py_ssize_t,
        first=cython.Py_ssize_t,
        last=cython.Py_ssize_t,
        idle=list,
    )
    def allocate_cores(self, engine, job: int, cores: int) -> Allocation | None:
        """`allocate` of a job that needs its cores only: the lowest ceil(cores / cores per node)
        idle nodes (thesis §5.1), or None if fewer are idle. Through `start_job`, consecutive
        nodes are handed out as a run (`_run`): no list, and no holder entry."""
        per_node = self._cpn
        count = -(-cores // per_node)  # thesis §5.1: whole nodes, ceil(cores / cores per node)
        if count > self._free:
            return None
        if self._running is not None and count:
            idle, lo = self._idle, self._lo
            first, last = idle[lo], idle[lo + count - 1]
            if last - first == count - 1:  # ascending distinct ids: consecutive
                self._lo = lo + count
                self._free -= count
                if self._changes is not None:
                    self._changed(job, self._node_ids[first : last + 1])
                return _run(first, count, self._cpn)
        return _listed(self._take(job, count), self._cpn)

    @cython.locals(first=cython.Py_ssize_t, count=cython.Py_ssize_t, ids=list, holders=dict)
    def release_nodes(self, job: int, allocation: Allocation) -> None:
        """`release`: the nodes of `allocation` become idle (those of `allocate_cores`, held by
        the engine alone, with no holder entry to drop; a run straight from its two numbers)."""
        ids, holders = allocation._ids, self._holders
        if holders and job in holders:
            self._give_back(job, allocation.node_ids if ids is None else ids, allocation._sorted)
            return
        if allocation._is_run():
            first, count = allocation._first, allocation._count
            self._return_idle(self._node_ids, first, count, True)
            if self._changes is not None:
                self._changed(EMPTY, self._node_ids[first : first + count])
        else:
            if ids is None:
                ids = allocation.node_ids
            count = len(ids)
            self._return_idle(ids, 0, count, allocation._sorted)
            if self._changes is not None:
                self._changed(EMPTY, ids)
        self._free += count

    def _hold(self, job: int, chosen: list[int]) -> None:
        """`job` (or a reservation) now holds the nodes `chosen` too: the count, holders and
        changes of every whole-node allocator."""
        self._free -= len(chosen)
        held = self._holders.setdefault(job, chosen)
        if held is not chosen:  # it held nodes already (a grow)
            self._holders[job] = sorted(held + chosen)
        self._changed(job, chosen)

    def _unhold(self, job: int, chosen: list[int]) -> None:
        """`job` gives the nodes `chosen` back (all of its nodes, or some: a shrink)."""
        self._free += len(chosen)
        held = self._holders.pop(job, None)  # None: a start through `allocate_cores`
        if held is not None and held is not chosen and len(held) != len(chosen):  # a shrink
            gone = set(chosen)
            self._holders[job] = [node for node in held if node not in gone]
        self._changed(EMPTY, chosen)

    @cython.locals(lo=cython.Py_ssize_t, end=cython.Py_ssize_t, chosen=list)
    def _take(self, job: int, count: int) -> list[int]:
        """`job` takes the lowest `count` idle nodes (as many are free): they stay in the idle list
        as stale entries before `_lo`, so a start moves no other entry of the list (deleting them
        would shift every idle node above, thousands on CEA-Curie, at every start)."""
        lo = self._lo
        end = lo + count
        chosen = self._idle[lo:end]
        self._lo = end
        if self._running is None:
            self._hold(job, chosen)
        else:  # a start through `allocate_cores`: the engine's allocation of the job holds them
            self._free -= count
            self._changed(job, chosen)
        return chosen

    def _give_back(self, job: int, chosen: list[int], ascending: bool) -> None:
        """`job` gives its nodes `chosen` back to the idle list (`ascending`: known to ascend)."""
        self._return_idle(chosen, 0, len(chosen), ascending)
        self._unhold(job, chosen)

    @cython.boundscheck(False)  # the merge below stays within the list
    @cython.wraparound(False)
    @cython.locals(
        idle=list,
        lo=cython.Py_ssize_t,
        end=cython.Py_ssize_t,
        at=cython.Py_ssize_t,
        write=cython.Py_ssize_t,
        taken=cython.Py_ssize_t,
        node=cython.Py_ssize_t,
        last=cython.Py_ssize_t,
    )
    def _return_idle(self, chosen: list[int], begin: int, count: int, ascending: bool) -> None:
        """The nodes `chosen[begin : begin + count]` join the idle list. With room for them in
        the stale entries before `_lo`, they and the idle nodes below their last (at most
        FRONT_MERGE of them) are merged down into it: the idle nodes above stay in place;
        elsewhere, `insert_nodes`, after dropping the stale entries once they outnumber the idle
        ones (so the list holds at most about twice the nodes)."""
        idle, lo = self._idle, self._lo
        if 0 < count <= lo and (ascending or _ascending(chosen)):
            last, end = chosen[begin + count - 1], lo  # end: the first idle node above them
            if end < len(idle) and cython.cast(cython.Py_ssize_t, idle[end]) < last:
                end = int_position(idle, last, lo + 1, len(idle), False)
            if end - lo <= FRONT_MERGE:
                at, write, taken = lo, lo - count, begin
                while at < end:  # compiled: the ids compared as C integers, no slice
                    node = chosen[taken]
                    if cython.cast(cython.Py_ssize_t, idle[at]) < node:
                        idle[write] = idle[at]
                        at += 1
                    else:
                        idle[write] = chosen[taken]
                        taken += 1
                    write += 1
                while write < end:  # the rest of them, above every idle node moved
                    idle[write] = chosen[taken]
                    write, taken = write + 1, taken + 1
                self._lo = lo - count
                return
        if lo and 2 * lo > len(idle):
            del idle[:lo]
            lo = self._lo = 0
        if begin or count != len(chosen):
            chosen = chosen[begin : begin + count]
        insert_nodes(idle, chosen, ascending, lo)

    def _compact(self) -> list[int]:
        """The idle list without its stale entries (for the reads and edits that index it)."""
        if self._lo:
            del self._idle[: self._lo]
            self._lo = 0
        return self._idle

    def _changed(self, owner: int, ids: list[int]) -> None:
        changes = self._changes
        if changes is not None:
            if len(changes) < WRITE_BEHIND:
                changes.append((owner, ids))
            else:
                self._changes = None


class CompactAllocator(_WholeNodes, Allocator):
    """Whole idle nodes, ceil(cores / cores_per_node) of them, lowest ids first (thesis §5.1).

    The idle node ids are a sorted list from an offset on (the lowest ids are the slice at the
    offset; a start moves the offset past them, `_take`) and each holder's node ids a list; the node
    state is brought up to date only when someone reads `state`: from the changes since the last
    read, or, after more than WRITE_BEHIND of them, rebuilt from the holders. A run nobody inspects
    node by node does no node state work per job."""

    slots = 1

    def __init__(self, platform: Platform):
        super().__init__(platform)
        self._cpn = platform.cores_per_node
        # cores of each node by id on a platform of several node types (a held node's cores)
        self._full = None if platform.uniform else _cores_of_nodes(platform)
        self._node_ids = list(range(platform.nodes))
        self._idle = list(self._node_ids)
        self._lo = 0
        self._free = platform.nodes
        self._holders: dict[int, list[int]] = {}  # job or reservation key -> its node ids
        self._direct, self._running, self._allocations = False, None, None  # `direct_entry`

    @property
    def state(self) -> NodeState:
        """The node state, with every start and end so far in its arrays."""
        if self._changes is None or self._changes:
            self._update_state()
        return self._state

    @state.setter
    def state(self, state: NodeState) -> None:
        self._state = state
        # (holder or EMPTY, node ids) since the last read, oldest first; None: rebuild on read
        self._changes: list[tuple[int, list[int]]] | None = []

    def _update_state(self) -> None:
        state, changes = self._state, self._changes
        self._changes = []
        if changes is None or len(changes) > REPLAY_AT_MOST:  # rebuild from the holders
            holders, allocations = self._holders, self._allocations
            if self._running is not None and allocations is not None:  # + `allocate_cores` jobs
                holders = dict(holders)
                for job in self._running:
                    holders.setdefault(job, allocations[job].node_ids)
            state.hold_whole(holders)
            return
        for owner, ids in changes:
            if owner == EMPTY:
                state.give_back(ids)
            else:
                state.take(owner, ids)

    @property
    def total_units(self) -> int:
        return self.platform.nodes

    def units(self, engine, job: int) -> int:
        if self.needs is not None:
            return int(self.needs.units[job])
        return -(-engine.cores[job] // self._cpn)

    def free_cores(self) -> int:
        if self.platform.uniform:
            return self._free * self._cpn
        idle, end, free = self._compact(), 0, 0
        for group in self.platform.node_groups:  # the idle nodes of a type: a slice of the list
            begin, end = end, end + group.nodes
            idle_here = bisect.bisect_left(idle, end) - bisect.bisect_left(idle, begin)
            free += idle_here * group.cores_per_node
        return free

    def static_units(self, cores: np.ndarray) -> np.ndarray:
        if self.needs is not None:
            return self.needs.units
        return -(-cores // self._cpn)

    def bind(self, workload) -> None:
        super().bind(workload)
        # several node types: the pools are the types (`Eligibility`)
        self.eligibility = self if self.needs is not None and not self.platform.uniform else None

    def pools_of(self, job: int) -> list[tuple[int, int]]:
        """The node types that can run `job` and the nodes it needs on each (`Eligibility`)."""
        assert self.needs is not None  # the pools exist with several node types only
        counts = self.needs.counts[job].tolist()
        return [(group, count) for group, count in enumerate(counts) if count]

    def free_in(self, pool: int) -> int:
        """Idle nodes of node type `pool`."""
        assert self.needs is not None
        idle = self._compact()
        return bisect.bisect_left(idle, int(self.needs.ends[pool])) - bisect.bisect_left(
            idle, int(self.needs.starts[pool])
        )

    @property
    def pool_sizes(self) -> list[int]:
        """Per node type: its nodes."""
        return [group.nodes for group in self.platform.node_groups]

    def pool_allocation(self, pool: int, count: int) -> Allocation | None:
        """The lowest `count` idle nodes of node type `pool`, or None if fewer are idle."""
        assert self.needs is not None
        idle = self._compact()
        first = bisect.bisect_left(idle, int(self.needs.starts[pool]))
        end = first + count
        if end > len(idle) or idle[end - 1] >= int(self.needs.ends[pool]):
            return None
        return Allocation(idle[first:end], self.platform.node_groups[pool].cores_per_node)

    def pool_of_node(self, node: int) -> int:
        """The node type of `node`."""
        assert self.needs is not None
        return bisect.bisect_right(self.needs.ends, node)

    def pool_now(self, job: int) -> tuple[int, int] | None:
        """(node type, nodes) `find` would give `job` now, or None."""
        found = self._eligible(job)
        if found is None:
            return None
        return self.pool_of_node(self._idle[found[0]]), found[1] - found[0]

    def _eligible(self, job: int) -> tuple[int, int, int] | None:
        """Where in the idle list the job's nodes are, and their cores per node: the lowest idle
        nodes of the first node type that can run the job and has enough of them idle
        (`cosched.simulator.resources`); None if no type has."""
        assert self.needs is not None  # called only where resources matter
        idle = self._compact()
        for low, high, count, cores in self.needs.options[job]:
            first = bisect.bisect_left(idle, low)
            end = first + count
            if end <= len(idle) and idle[end - 1] < high:
                return first, end, cores
        return None

    def find(self, engine, job: int) -> Allocation | None:
        if self.needs is not None:
            found = self._eligible(job)
            return None if found is None else Allocation(self._idle[found[0] : found[1]], found[2])
        count = -(-engine.cores[job] // self._cpn)
        if count > self._free:
            return None
        return Allocation(self._idle[self._lo : self._lo + count], self._cpn)

    @cython.locals(self=_WholeNodes, first=cython.Py_ssize_t, end=cython.Py_ssize_t, idle=list)
    def allocate(self, engine, job: int) -> Allocation | None:
        if self.needs is None:
            return self.allocate_cores(engine, job, engine.cores[job])
        found = self._eligible(job)
        if found is None:
            return None
        first, end, cores = found
        idle = self._idle
        chosen = idle[first:end]
        del idle[first:end]
        self._hold(job, chosen)
        return _listed(chosen, cores)

    def idle_nodes(self, limit: int | None = None) -> np.ndarray:
        lo = self._lo
        return np.array(self._idle[lo : None if limit is None else lo + limit], dtype=np.int64)

    def commit(self, job: int, allocation: Allocation) -> None:
        idle, chosen = self._compact(), allocation.node_ids
        first = bisect.bisect_left(idle, chosen[0]) if chosen else 0
        if idle[first : first + len(chosen)] == chosen:  # a run of idle nodes (the usual choice)
            del idle[first : first + len(chosen)]
        elif len(chosen) > BULK_NODES:  # one pass over the list beats many deletions in its middle
            taken = set(chosen)
            idle[:] = [node for node in idle if node not in taken]
        else:
            for node in chosen:
                del idle[bisect.bisect_left(idle, node)]
        self._hold(job, chosen)

    @cython.locals(self=_WholeNodes)
    def release(self, job: int, allocation: Allocation) -> None:
        self.release_nodes(job, allocation)

    def direct_entry(self, engine) -> bool:
        """True if `start_job` and `end_job` call `allocate_cores` and `release_nodes` (in C when
        compiled) for `engine` from now on if jobs need their cores only, `allocate` and `release`
        are this class's (not overridden) and no job changes its nodes or speed while it runs;
        then the engine's running jobs and their allocations hold the nodes those calls hand out
        (no `_holders` entry per start)."""
        kind = type(self)
        direct = (
            self.needs is None
            and kind.allocate is CompactAllocator.allocate
            and kind.release is CompactAllocator.release
            and engine.models is None
            and engine.speed_model is None
        )
        self._direct = direct
        self._running = engine.running if direct else None
        self._allocations = engine.allocation if direct else None
        return direct


@cython.locals(units=_Units)
def start_job(allocator: Allocator, engine, job: int, cores: int) -> Allocation | None:
    """`allocator.allocate(engine, job)` of a job of `cores` cores: compiled, a C call into a
    built-in allocator where its `direct_entry` allowed it."""
    if isinstance(allocator, _Units):
        units = allocator
        if units._direct:
            return units.allocate_cores(engine, job, cores)
    return allocator.allocate(engine, job)


@cython.locals(units=_Units)
def end_job(allocator: Allocator, job: int, allocation: Allocation) -> None:
    """`allocator.release(job, allocation)` when `job` ends: compiled, a C call into a built-in
    allocator where its `direct_entry` allowed it."""
    if isinstance(allocator, _Units):
        units = allocator
        if units._direct:
            units.release_nodes(job, allocation)
            return
    allocator.release(job, allocation)


@cython.ccall
@cython.boundscheck(False)  # every index below is within the list: no check per item moved
@cython.wraparound(False)
@cython.locals(
    idle=list,
    chosen=list,
    first=cython.Py_ssize_t,
    end=cython.Py_ssize_t,
    ascending=cython.bint,
    at=cython.Py_ssize_t,
    taken=cython.Py_ssize_t,
    write=cython.Py_ssize_t,
    node=cython.Py_ssize_t,
    back=cython.Py_ssize_t,
    last=cython.Py_ssize_t,
    lo=cython.Py_ssize_t,
)
def insert_nodes(idle: list[int], chosen: list[int], ascending: bool = False, lo: int = 0) -> None:
    """Insert the node ids `chosen` (none of them in the list) into the ascending list `idle[lo:]`:
    the one insertion into a list of node ids, the compact allocator's idle nodes when a job gives
    its nodes back (also a partition's pools'), and the node state's idle and partly used nodes.
    `ascending`: the caller knows `chosen` ascends (else it is checked, node by node)."""
    if not chosen:
        return
    if not (ascending or _ascending(chosen)):
        chosen = sorted(chosen)
    last = chosen[len(chosen) - 1]
    first = int_position(idle, chosen[0], lo, len(idle), False)
    if first == len(idle) or idle[first] > last:
        idle[first:first] = chosen  # no idle node among them (the usual case): one insertion
    else:  # idle nodes among them: room after that stretch, then the two merged from the back
        end = int_position(idle, last, first, len(idle), True)
        idle[end:end] = chosen
        at, taken, write = end - 1, len(chosen) - 1, end + len(chosen) - 1
        while taken >= 0:  # compiled: the ids compared as C integers, the items moved as they are
            node, back = idle[at] if at >= first else EMPTY, chosen[taken]
            if node > back:
                idle[write] = idle[at]
                at -= 1
            else:
                idle[write] = chosen[taken]
                taken -= 1
            write -= 1


@cython.cfunc
@cython.locals(ids=list, index=cython.Py_ssize_t)
def _ascending(ids: list[int]) -> bool:
    """True if the node ids are in ascending order (a scheduler may hand out ids in any order)."""
    for index in range(1, len(ids)):  # noqa: SIM110  (compiled: a C loop, no generator)
        if ids[index - 1] > ids[index]:
            return False
    return True
