"""The ElastiSim batch system in process: job lifecycle, scheduling protocol and the event loop.

Protocol (001 §5.4-5.5; ElastiSim's Scheduler.cpp, Application.cpp, Job.cpp): the algorithm is
invoked on job submission, completion, walltime kill, scheduling points and periodically, as the
configuration's keys say, and on every evolving request; an invocation less than
`min_scheduling_interval` after the previous one is dropped, not deferred. When it returns: kills
apply at once; a pending job with nodes starts at once (`on_init` first); a changed running job
becomes PENDING_RECONFIGURATION, its new nodes RESERVED, and the change applies at its next
scheduling point or evolving request, after the invocation that point triggers: `on_reconfiguration`
runs on all nodes (state IN_RECONFIGURATION), `on_expansion` on the new ones. Scheduling points and
evolving requests come at the start of an iteration, never the first after a (re)start, once the
job's asynchronous I/O has ended and its nodes have met: malleable jobs have points, adaptive jobs
have them in phases without an evolving request, evolving jobs send a request only when it differs
from their size. When a start-up or reconfiguration step ends, the job is set RUNNING, as ElastiSim
does. A job with a walltime is killed at start + walltime.

Execution: a job is ElastiSim's application actor for all its nodes at once, with one clock per
node; fixed-length work moves the clocks without events, nodes meet where ElastiSim's ranks meet
(parallel tasks, synchronized tasks, phase barriers), and PFS flows are events on the shared links,
as are parallel tasks that cross links between clusters.

Why a loop of its own rather than `cosched.simulator.engine`: that engine advances jobs as amounts
of work at a rate on a node count the scheduler picks; here a job is a chain of phases whose I/O
shares the PFS with every other job's I/O, the algorithm picks node ids, and decisions are deferred
to per-job scheduling points. The loop is one heap of timed events (submissions, PFS flow starts
and ends, the moments a job's nodes meet, walltimes, periodic invocations); each job is a generator
that yields what it does and waits for.
"""

from __future__ import annotations

import heapq
import math
import time
from collections.abc import Iterator
from itertools import count
from typing import Any, cast

import numpy as np

from cosched.deprecation import module_aliases
from cosched.errors import InputError
from cosched.simulator.elastic import compat
from cosched.simulator.elastic.compat import GpuState, InvocationType, JobState, NodeState
from cosched.simulator.elastic.config import Configuration
from cosched.simulator.elastic.expressions import Expressions, argument_value
from cosched.simulator.elastic.flow import (
    SYNC,
    AsyncWork,
    ClusterLinks,
    Comm,
    CrossComm,
    Crossing,
    PfsTransfer,
    SharedLink,
    Transfer,
    node_links,
    task_cost,
)
from cosched.simulator.elastic.platform import ElastiSimPlatform
from cosched.simulator.elastic.workload import JobSpec, Phase

__all__ = ["AlgorithmError", "Simulation", "simulate_project", "TIME_EPSILON"]

# s: ElastiSim accepts an invocation this much before `min_scheduling_interval` has passed
# (Scheduler.h: `#define EPSILON 0.001`, used only in that test, Scheduler.cpp)
TIME_EPSILON = 0.001
COUPLING_ROUNDS = 8  # re-shares of node links between a job's flows and its task (2 settle it)
_DIRECT_FIRST = 1 << 62  # subtracted from the push order of `Simulation._push_direct`'s events
_SUBMIT, _RESUME, _LINK, _WALLTIME, _PERIODIC, _FLOW, _CROSS, _NET = range(8)
_EVOLVE, _POINT, _WAIT, _AT, _RUNNING, _SELECT = (
    "evolve",
    "point",
    "wait",
    "at",
    "running",
    "select",
)

# the wait for the job's asynchronous I/O, then the meeting of its nodes (`SYNC`)
_BARRIER = ((_WAIT, None), SYNC)
# the system entries of forward_io_information: (link, bandwidth key, utilization key)
_IO_KEYS = (
    ("pfs_read", "pfs_read_bw", "pfs_read_utilization"),
    ("pfs_write", "pfs_write_bw", "pfs_write_utilization"),
)


def _leave_barrier(run: Run, local, select, clock: np.ndarray, met: float) -> None:
    """The nodes of `run` (those at `select`; `clock` their clocks) leave a barrier at `met`, each
    later if its own work `local` (seconds from its clock) ends later."""
    if local is None and select is None:
        clock.fill(met)  # every node leaves the barrier at once
        run.even = True
        return
    run.even = False
    clock = np.full(len(clock), met) if local is None else np.maximum(clock + local, met)
    if select is None:
        run.clock = clock
    else:
        run.clock[select] = clock


def _one_time_count(phase: Phase) -> int:
    """How often a one-time phase (on_init, on_reconfiguration, on_expansion) runs: a number, not an
    expression (cosched.simulator.elastic.workload refuses one)."""
    return int(cast(float, phase.iterations))


def _latest_of(run: Run) -> float:
    """The latest clock of a job's nodes."""
    return run.clock.item(0) if run.even else _latest(run.clock)


_NO_NODES = np.zeros(0)  # the clocks of a job before it starts (never written)


def _latest(clock: np.ndarray) -> float:
    """The latest of a job's node clocks."""
    return float(clock.max())


class AlgorithmError(InputError):
    """The algorithm asked for something the batch system refuses (a busy node, a size outside the
    bounds)."""


class Run:
    """The runtime state of one job (slots: the event loop reads and writes it all the time)."""

    __slots__ = (
        "spec",
        "view",
        "state",
        "nodes",
        "target",
        "gpus",
        "start",
        "end",
        "status",
        "token",
        "program",
        "completed_phases",
        "expanded",
        "initializing",
        "reconfiguring",
        "plans",
        "clock",
        "even",
        "async_end",
        "select",
        "busy",
        "queues",
        "held",
        "async_transfers",
        "waiting_async",
        "transfers",
        "expecting",
        "history",
        "io_since",
        "reconfigurations",
        "crossing",
    )

    def __init__(self, spec: JobSpec, view: compat.Job) -> None:
        self.spec = spec
        self.view = view
        self.state = JobState.PENDING
        self.nodes: list[int] = []  # executing node ids, in rank order
        self.target: list[int] | None = None  # node ids of a pending reconfiguration
        self.gpus = 0
        self.start = -1.0
        self.end = -1.0
        self.status = "pending"
        self.token = 0  # bumped when the job stops: stale events are skipped
        self.program: Iterator[Any] | None = None  # `Simulation._program` while the job runs
        self.completed_phases = 0
        self.expanded: list[int] = []  # new positions of the last reconfiguration (on_expansion)
        self.initializing = True  # on_init still to run (ElastiSim's Node::isInitializing)
        self.reconfiguring = False  # on_reconfiguration to run when the job continues
        self.plans: dict[tuple, Any] = {}  # `Simulation._plan` by (phase, nodes, iteration)
        self.clock = _NO_NODES  # per node (rank order): where it has got to
        self.even = True  # every node's clock is known to be the same (after a barrier)
        self.async_end = _NO_NODES  # per node: its asynchronous work ends
        # positions the one-time phase being run covers (on_expansion), None: all nodes
        self.select: np.ndarray | None = None
        self.busy: set[int] = set()  # positions whose synchronous PFS flow has not ended
        # position: work it does once its flow ends (delays, flows)
        self.queues: dict[int, list] = {}
        self.held: Any = None  # the program's item the job waits to run until its nodes are done
        self.async_transfers = 0
        self.waiting_async = False
        self.transfers: set[Transfer] = set()  # live PFS transfers, synchronous and asynchronous
        self.expecting: set[int] = set()  # nodes that list the job as expected (expectJob)
        self.history: list[tuple[float, int]] = []  # (time, node count) at every change
        self.io_since = -1.0  # since when the job waits for PFS or asynchronous I/O (-1: not)
        self.reconfigurations = 0
        self.crossing: Crossing | None = None  # its parallel task on links between clusters


class Simulation:
    """One ElastiSim scenario under one algorithm `schedule(jobs, nodes, system)`."""

    def __init__(
        self,
        configuration: Configuration,
        platform: ElastiSimPlatform,
        jobs: list[JobSpec],
        algorithm,
        *,
        expressions: Expressions | None = None,
        algorithm_name: str = "algorithm",
    ):
        if configuration.allow_oversubscription:
            raise InputError(
                "allow_oversubscription=true is not supported by cosched's flow model",
                source=configuration.source,
                field="allow_oversubscription",
            )
        self.config, self.platform, self.algorithm, self.algorithm_name = (
            configuration,
            platform,
            algorithm,
            algorithm_name,
        )
        self.expressions = expressions or Expressions()
        for spec in jobs:
            if spec.num_nodes_min > len(platform):
                raise InputError(
                    f"job {spec.position} needs at least {spec.num_nodes_min} nodes, the "
                    f"platform has {len(platform)}",
                    source=configuration.jobs_file,
                    field=f"jobs[{spec.position}]: num_nodes",
                )
        self.modified: dict[int, compat.Job] = {}
        self.runs = [Run(spec, compat.Job(spec, self.modified)) for spec in jobs]
        self.node_views = [
            compat.Node(i, int(platform.node_type[i]), int(platform.gpus[i]))
            for i in range(len(platform))
        ]
        self.running: list[set] = [set() for _ in range(len(platform))]
        self.expected: list[set] = [set() for _ in range(len(platform))]
        self.views: list[compat.Job] = []
        links: dict[
            str, SharedLink
        ] = {}  # by link id: a symmetrical route shares one link for both directions
        # the one PFS read and write route of every cluster (empty when clusters have their own)
        self.routes: dict[str, SharedLink] = {}
        for kind, route in (("pfs_read", platform.pfs_read), ("pfs_write", platform.pfs_write)):
            if route is not None:
                self.routes[kind] = links.setdefault(route[0], SharedLink(route[1]))
        # per direction, the link of each cluster's own route (None: no route), if they differ
        self._cluster_links: dict[str, list[SharedLink | None]] | None = None
        if platform.pfs_routes is not None:
            self._cluster_links = {
                kind: [
                    None if route is None else links.setdefault(route[0], SharedLink(route[1]))
                    for route in (pair[index] for pair in platform.pfs_routes)
                ]
                for index, kind in enumerate(("pfs_read", "pfs_write"))
            }
            assert platform.cluster is not None
            self._node_cluster = platform.cluster.tolist()
        # per direction, every distinct PFS link (the sensing series and the algorithm's view sum
        # over them)
        self.pfs_links: dict[str, list[SharedLink]] = {
            kind: list(
                dict.fromkeys(
                    [self.routes[kind]]
                    if kind in self.routes
                    else [link for link in (self._cluster_links or {}).get(kind, []) if link]
                )
            )
            for kind in ("pfs_read", "pfs_write")
        }
        self.network = ClusterLinks()  # the shared links between clusters
        self.now = 0.0
        self.last_invocation = 0.0
        self.invocations = 0
        self.dropped = 0
        self.wall_seconds = 0.0
        # ElastiSim's node_utilization.csv starts with a row per node at t = 0
        self.node_log: list[tuple] = [
            (0.0, node, NodeState.FREE, (), ()) for node in range(len(platform))
        ]
        self.pfs_log: list[tuple] = []  # (time, read B/s, write B/s) after every change
        self.io_log: list[
            tuple
        ] = []  # (job, start, end, its nodes) of every wait for I/O: the CPUs idle
        self._heap: list = []
        self._sequence = count()
        self._unfinished = len(jobs)
        self._future = len(jobs)
        self._starts = 0
        self._active = 0  # jobs started and not ended
        self._uses_iteration: dict[int, bool] = {}
        self._estimates: dict[tuple[int, int], tuple[float, list]] = {}
        self._bandwidth = platform.bandwidth.tolist()  # node link B/s as floats (hot in _start_pfs)
        self._flow_groups: dict[int, tuple] = {}  # id(PfsTransfer): (it, its nodes, its groups)
        # a live parallel task sharing node links with its job's PFS flows: those node links
        self._node_tasks: dict[Crossing, list] = {}
        self._coupling = 0  # nested re-shares of node links between PFS flows and parallel tasks
        if hasattr(algorithm, "bind"):  # built-in policies estimate run times with the flow model
            algorithm.bind(self.estimate)

    # --- event heap -------------------------------------------------------------------------------
    def _push(self, when: float, kind: int, target, stamp=0) -> None:
        heapq.heappush(self._heap, (when, next(self._sequence), kind, target, stamp))

    def _push_direct(self, when: float, kind: int, target, stamp=0) -> None:
        """An event of an actor that messages ElastiSim's scheduler directly (the periodic invoker,
        a walltime monitor): at one instant it comes before the submissions, which reach the
        scheduler through the simulation engine's mailbox first (JobSubmitter.cpp,
        SimulationEngine.cpp), and in push order among its kind."""
        order = next(self._sequence) - _DIRECT_FIRST
        heapq.heappush(self._heap, (when, order, kind, target, stamp))

    # the event loop: one branch per event kind, inline (a call per event would cost more than the
    # branches; tens of thousands of events per run)
    def run(self) -> Simulation:
        """Simulate until every job has ended (or nothing more can happen)."""
        started = time.perf_counter()
        self._loop()
        self.wall_seconds = time.perf_counter() - started
        return self

    def _loop(self) -> None:  # noqa: C901
        for run in self.runs:
            self._push(run.spec.submit_time, _SUBMIT, run)
        if self.config.scheduling_interval > 0:
            self._push_direct(self.config.scheduling_interval, _PERIODIC, None)
        heap = self._heap
        while heap:
            when, _, kind, target, stamp = heapq.heappop(heap)
            self.now = when
            if kind == _RESUME:
                if stamp == target.token:
                    self._step(target)
            elif kind == _LINK:
                if stamp == target.version:
                    self._link_event(target)
            elif kind == _FLOW:
                run = target.owner[0]
                if target.owner[2] == run.token and run.program is not None:
                    self._start_transfer(target)
            elif kind == _SUBMIT:
                self._submit(target)
            elif kind == _WALLTIME:
                if stamp == target.token:
                    self._kill(target, walltime=True)
            elif kind == _NET:
                if stamp == target.version:
                    self._settle_crossings()
                    self._reshare_crossings()
            elif kind == _CROSS:
                run = target.owner[0]
                if target.owner[2] == run.token and run.program is not None:
                    self._start_crossing(target)
            elif self._unfinished:
                self._periodic()

    # --- job lifecycle ----------------------------------------------------------------------------
    def _submit(self, run: Run) -> None:
        self._future -= 1
        self.views.append(run.view)
        if self.config.schedule_on_job_submit:
            self._invoke(InvocationType.INVOKE_JOB_SUBMIT, run)

    def _periodic(self) -> None:
        idle = self._future == 0 and self._active == 0
        before = self._starts
        self._invoke(InvocationType.INVOKE_PERIODIC, None)
        if idle and self._starts == before:
            return  # nothing runs, nothing will arrive, and the algorithm started nothing: stop
        self._push_direct(self.now + self.config.scheduling_interval, _PERIODIC, None)

    def _start(self, run: Run, nodes: list) -> None:
        spec = run.spec
        self._check_size(run, len(nodes), "start")
        self._check_free(run, nodes)
        run.state, run.start, run.status = JobState.RUNNING, self.now, "running"
        run.nodes = list(
            nodes
        )  # rank order: as the algorithm assigned them (ElastiSim's executing nodes)
        run.clock = np.full(len(nodes), self.now)
        run.async_end = np.full(len(nodes), self.now)
        run.even = True
        gpus = self._assigned_gpus(run)
        run.gpus = gpus if gpus > 0 else spec.num_gpus_per_node_min
        run.history.append((self.now, len(nodes)))
        self._occupy(run, nodes, True)
        view = run.view
        view.state, view.start_time, view.wait_time = (
            JobState.RUNNING,
            self.now,
            self.now - spec.submit_time,
        )
        view.assigned_num_gpus_per_node = run.gpus
        self._refresh(run)
        self._starts += 1
        self._active += 1
        run.program = self._program(run)
        if spec.walltime > 0:  # ElastiSim's WalltimeMonitor: a kill at start + walltime + grace
            grace = self.config.job_kill_grace_period
            self._push_direct(self.now + spec.walltime + grace, _WALLTIME, run, run.token)
        self._push(self.now, _RESUME, run, run.token)

    def _refresh(self, run: Run) -> None:
        """The job as elastisim-python rebuilds it from ElastiSim's message after a state change:
        its assigned nodes in the iteration order of a Python set of their ids."""
        ids = run.target if run.target is not None else run.nodes
        view = run.view
        view.assigned_node_ids = set(ids)
        view.assigned_nodes = [self.node_views[node] for node in view.assigned_node_ids]

    def _finish(self, run: Run, state: JobState) -> None:
        run.token += 1
        if run.io_since >= 0:
            self._io_done(run)
        run.state, run.end = state, self.now
        run.status = "completed" if state == JobState.COMPLETED else "killed"
        self._occupy(run, run.nodes, False)
        self._expect(run, ())
        run.target = None
        run.program = None  # before cancelling: a transfer that ends now must not resume the job
        run.busy, run.queues, run.held = set(), {}, None
        for transfer in list(run.transfers):
            self._cancel_transfer(transfer)
        if run.crossing is not None:
            self._cancel_crossing(run.crossing)
        if run.start >= 0:
            run.history.append((self.now, 0))
            self._active -= 1
        self._unfinished -= 1
        view = run.view
        view.state, view.end_time = state, self.now
        view.turnaround_time = self.now - run.spec.submit_time
        if run.start >= 0:
            view.makespan = self.now - run.start
        if state == JobState.COMPLETED:
            run.completed_phases = view.completed_phases = view.total_phase_count

    def _kill(self, run: Run, *, walltime: bool) -> None:
        if run.state in (JobState.COMPLETED, JobState.KILLED):
            return
        self._finish(run, JobState.KILLED)
        if walltime and self.config.schedule_on_job_finalize:
            self._invoke(InvocationType.INVOKE_JOB_KILLED, run)

    # --- nodes ------------------------------------------------------------------------------------
    def _occupy(self, run: Run, nodes, joining: bool) -> None:
        """`run` is placed on (`joining`) or leaves each of `nodes`, with ElastiSim's transitions
        (Node.cpp): a job placed on a node makes it ALLOCATED, the last one leaving makes it FREE
        (also when another job still expects it). A row of node_utilization.csv is written for
        each, as ElastiSim writes it."""
        identifier, now, log, runs = run.spec.identifier, self.now, self.node_log, self.runs
        for node in nodes:
            running, view = self.running[node], self.node_views[node]
            if joining:
                running.add(identifier)
                view.state = NodeState.ALLOCATED
            else:
                running.discard(identifier)
                if not running:
                    view.state = NodeState.FREE
            view.assigned_job_ids = set(running)  # elastisim-python: the jobs running on the node
            view.assigned_jobs = [runs[job].view for job in sorted(running)]
            used = sum(runs[job].gpus for job in running)
            for gpu in view.gpus:
                gpu.state = GpuState.ALLOCATED if gpu.identifier < used else GpuState.FREE
            expected = self.expected[node]
            log.append((now, node, view.state, tuple(running), tuple(sorted(expected))))

    def _set_node(self, node: int, *, expected_add=None, expected_remove=None) -> None:
        """A node's expecting jobs and state, with ElastiSim's transitions (Node.cpp): an expecting
        job makes a FREE node RESERVED, the last one to stop expecting makes a RESERVED node FREE
        (no row of node_utilization.csv, as in ElastiSim)."""
        expected = self.expected[node]
        view = self.node_views[node]
        if expected_add is not None:
            expected.add(expected_add.spec.identifier)
            if view.state == NodeState.FREE:
                view.state = NodeState.RESERVED
        if expected_remove is not None:
            expected.discard(expected_remove.spec.identifier)
            if not expected and view.state == NodeState.RESERVED:
                view.state = NodeState.FREE

    def _expect(self, run: Run, nodes) -> None:
        """The nodes that list `run` as expected become `nodes` (ElastiSim's clearAssignedNodes +
        assignNode)."""
        wanted = set(nodes)
        for node in run.expecting - wanted:
            self._set_node(node, expected_remove=run)
        for node in wanted - run.expecting:
            self._set_node(node, expected_add=run)
        run.expecting = wanted

    def _check_free(self, run: Run, nodes) -> None:
        size, running, expected = len(self.platform), self.running, self.expected
        for node in nodes:
            if not 0 <= node < size:
                raise self._refuse(run, f"assigned node {node}, which does not exist")
            others = (running[node] | expected[node]) - {run.spec.identifier}
            if others and node not in run.nodes:
                raise self._refuse(
                    run,
                    f"assigned node {node} ({self.platform.names[node]}), which is "
                    f"{self.node_views[node].state.name} for job {min(others)} "
                    f"(oversubscription is off)",
                )

    def _assigned_gpus(self, run: Run) -> int:
        """The GPUs per node the algorithm assigned a job; ElastiSim ignores them for rigid jobs
        and refuses a count outside the job's bounds (Job::checkConfigurationValidity)."""
        spec, gpus = run.spec, run.view.assigned_num_gpus_per_node
        if spec.type == "rigid" or not gpus:
            return 0
        try:
            whole = float(gpus).is_integer()
        except (TypeError, ValueError):
            whole = False
        if not whole or not spec.num_gpus_per_node_min <= gpus <= spec.num_gpus_per_node_max:
            raise self._refuse(
                run,
                f"was assigned {gpus!r} GPUs per node: a {spec.type} job takes a whole number "
                f"from {spec.num_gpus_per_node_min} to {spec.num_gpus_per_node_max}",
            )
        return int(gpus)

    def _check_size(self, run: Run, size: int, action: str) -> None:
        spec = run.spec
        if not spec.num_nodes_min <= size <= spec.num_nodes_max:
            bounds = (
                f"exactly {spec.num_nodes_min}"
                if spec.type == "rigid"
                else f"{spec.num_nodes_min} to {spec.num_nodes_max}"
            )
            raise self._refuse(
                run,
                f"cannot {action} on {size} nodes: {'an' if spec.type[0] in 'ae' else 'a'} "
                f"{spec.type} job takes {bounds}",
            )

    def _refuse(self, run: Run, reason: str) -> AlgorithmError:
        return AlgorithmError(
            f"at time {self.now:g}, job {run.spec.identifier} (jobs[{run.spec.position}]) {reason}",
            source=self.algorithm_name,
        )

    # --- the protocol -----------------------------------------------------------------------------
    def _invoke(self, kind: InvocationType, run: Run | None, request: int | None = None) -> None:
        minimum = self.config.min_scheduling_interval
        if minimum > 0 and self.now - self.last_invocation < minimum - TIME_EPSILON:
            self.dropped += 1
            return
        self.last_invocation = self.now
        self.invocations += 1
        system = {"time": self.now, "invocation_type": kind}
        if run is not None:
            system["job"] = run.view
        if request is not None:
            system["evolving_request"] = request
        if self.config.forward_io_information:
            for direction, bandwidth, utilization in _IO_KEYS:
                links = self.pfs_links[direction]
                system[bandwidth] = sum(link.capacity for link in links) if links else 0.0
                system[utilization] = sum(link.throughput for link in links) if links else 0.0
        try:
            self.algorithm(self.views, self.node_views, system)
        except InputError:
            raise
        except (
            Exception
        ) as error:  # user code: report it as one line naming the file and the moment
            raise AlgorithmError(
                f"schedule() raised {type(error).__name__}: {error} (time {self.now:g}, "
                f"{kind.name})",
                source=self.algorithm_name,
            ) from None
        self._apply()

    def _apply(self) -> None:
        modified = sorted(
            self.modified.values(), key=lambda view: (not view.kill_flag, view.identifier)
        )
        self.modified.clear()
        for view in modified:
            view.modified = False
            run = self.runs[view.identifier]
            if run.state in (JobState.COMPLETED, JobState.KILLED):
                continue
            if view.modified_runtime_args:
                view.modified_runtime_args = False
                run.plans.clear()
            if view.kill_flag:
                self._kill(run, walltime=False)
                continue
            wanted = list(
                dict.fromkeys(node.identifier for node in view.assigned_nodes)
            )  # the order sent
            if set(wanted) != set(view.assigned_node_ids):
                wanted = sorted(view.assigned_node_ids)
            if run.state == JobState.PENDING:
                if wanted:
                    self._start(run, wanted)
            elif set(wanted) != set(run.nodes):
                self._reconfigure_later(run, wanted)
            else:
                self._expect(
                    run, wanted
                )  # ElastiSim: a running job expects every node it was assigned
                run.target = None
                if run.state == JobState.PENDING_RECONFIGURATION:
                    run.state = view.state = JobState.RUNNING
                    self._refresh(run)

    def _reconfigure_later(self, run: Run, wanted: list) -> None:
        if run.spec.type in ("rigid", "moldable"):
            raise self._refuse(
                run,
                "was reconfigured while running, but a rigid or moldable job has no scheduling "
                "points",
            )
        self._check_size(run, len(wanted), "reconfigure")
        self._check_free(run, wanted)
        self._expect(run, wanted)
        run.target = wanted
        # ElastiSim's Job::updateState: only a RUNNING job becomes PENDING_RECONFIGURATION; a job in
        # its start-up or reconfiguration step keeps its state (and is reset to RUNNING when that
        # step ends)
        if run.state in (JobState.RUNNING, JobState.PENDING_RECONFIGURATION):
            run.state = run.view.state = JobState.PENDING_RECONFIGURATION
        self._refresh(run)

    def _scheduling_point(self, run: Run, request: int | None = None) -> None:
        """ElastiSim's Scheduler on a scheduling point or an evolving request: invoke the algorithm,
        then apply a pending reconfiguration of the job at once or let it continue."""
        run.view.completed_phases = (
            run.completed_phases
        )  # ElastiSim reports progress at scheduling points
        if request is not None:
            self._invoke(InvocationType.INVOKE_EVOLVING_REQUEST, run, request)
        elif self.config.schedule_on_scheduling_point:
            self._invoke(InvocationType.INVOKE_SCHEDULING_POINT, run)
        if run.state != JobState.PENDING_RECONFIGURATION:
            return
        assert run.target is not None  # a pending reconfiguration has its nodes
        before, after = set(run.nodes), list(run.target)
        self._expect(run, ())  # ElastiSim's IN_RECONFIGURATION: the assigned nodes are taken over
        self._occupy(run, [node for node in after if node not in before], True)
        staying = set(after)
        self._occupy(run, [node for node in run.nodes if node not in staying], False)
        run.nodes, run.target = after, None
        run.expanded = [position for position, node in enumerate(after) if node not in before]
        run.reconfiguring, run.reconfigurations = True, run.reconfigurations + 1
        run.clock = np.full(len(after), self.now)
        run.async_end = np.full(len(after), self.now)
        run.even = True
        run.plans.clear()
        run.history.append((self.now, len(run.nodes)))
        run.state = run.view.state = JobState.IN_RECONFIGURATION
        self._refresh(run)
        if (
            request is None
            and not self.config.schedule_on_scheduling_point
            and self.config.schedule_on_reconfiguration
        ):
            self._invoke(InvocationType.INVOKE_RECONFIGURATION, run)

    # --- run-time estimates for built-in policies -------------------------------------------------
    def estimate(self, identifier: int, nodes: int, completed_phases: int = 0) -> float:
        """Seconds job `identifier` needs on `nodes` nodes from `completed_phases` on, without
        contention: PFS transfers at the rate they would get alone, `on_init` included before the
        job has started."""
        run = self.runs[identifier]
        key = (identifier, nodes)
        cached = self._estimates.get(key)
        if cached is None:
            spec, saved = run.spec, run.gpus
            run.gpus = run.gpus or spec.num_gpus_per_node_min
            ids = list(range(nodes))
            scratch: dict[tuple, Any] = {}
            per_phase = [
                self._plan_seconds(self._plan(run, phase, ids, 0, scratch))
                for phase in spec.model.phases
            ]
            init = (
                0.0
                if spec.model.on_init is None
                else _one_time_count(spec.model.on_init)
                * self._plan_seconds(self._plan(run, spec.model.on_init, ids, 0, scratch))
            )
            run.gpus = saved
            cached = self._estimates[key] = (init, per_phase)
        init, per_phase = cached
        seconds = init if run.state == JobState.PENDING else 0.0
        skip = completed_phases
        for phase_seconds, iterations in zip(per_phase, run.spec.phase_iterations):
            left = max(iterations - skip, 0)
            skip = max(skip - iterations, 0)
            seconds += left * phase_seconds
        return seconds

    def _plan_seconds(self, plan: list) -> float:
        seconds = 0.0
        for item in plan:
            kind = item.__class__
            if kind is np.ndarray:
                seconds += float(item.max()) if len(item) else 0.0
            elif kind is Comm or kind is CrossComm:
                seconds += max(
                    item.duration, 0.0 if item.local is None else float(item.local.max())
                )
            elif kind is PfsTransfer and not item.asynchronous and item.sizes:
                capacity = min(link.capacity for link in self.pfs_links[item.direction])
                share = capacity / len(item.sizes)
                seconds += max(
                    size / min(cap, share) for size, cap in zip(item.sizes, item.caps)
                ) + max(item.latencies)
        return seconds

    # --- the application, as a generator of what it waits for -------------------------------------
    def _variables(self, run: Run, nodes: int, iteration: int = 0) -> dict:
        variables = dict(run.spec.variables)
        variables.update(
            num_nodes=float(nodes),
            num_gpus_per_node=float(run.gpus),
            num_gpus=float(nodes * run.gpus),
            phase_iteration=float(iteration),
        )
        for key, value in run.view.runtime_arguments.items():
            number = argument_value(value)
            if number is None:
                raise self._refuse(
                    run, f"set the runtime argument {key} to {value!r}, which is not a number"
                )
            variables[key] = number
        return variables

    def _plan(
        self, run: Run, phase, nodes: list, iteration: int, cache: dict | None = None
    ) -> list:
        """One iteration of a phase on `nodes`: per-node seconds (consecutive ones merged), barriers
        with parallel tasks (`Comm`), PFS transfers, asynchronous work and waits for it."""
        cache = run.plans if cache is None else cache
        uses_iteration = self._uses_iteration.get(id(phase))
        if uses_iteration is None:
            uses_iteration = self._uses_iteration[id(phase)] = "phase_iteration" in repr(
                phase.tasks
            )
        key = (id(phase), tuple(nodes), iteration if uses_iteration else 0)
        plan = cache.get(key)
        if plan is None:
            plan = []
            variables = self._variables(run, len(nodes), iteration)
            self._walk(run, phase.tasks, variables, np.asarray(nodes), plan)
            cache[key] = plan
        return plan

    def _evaluate(self, run: Run, value, variables: dict, where: str, key: str):
        """A payload `key` of a task of `run`: its number, or its expression's value with
        `variables`."""
        if isinstance(value, str):
            return self.expressions.evaluate(
                value,
                variables,
                where=f"{where}: {key} (job {run.spec.position})",
                source=run.spec.model.source,
            )
        return value

    def _walk(self, run: Run, tasks, variables: dict, node_ids: np.ndarray, plan: list) -> bool:
        """Add what `tasks` do on `node_ids` to `plan`; True if some of them is asynchronous."""
        asynchronous = False
        for task in tasks:
            repeat = int(self._evaluate(run, task.iterations, variables, task.where, "iterations"))
            if task.kind == "sequence":
                for _ in range(repeat):
                    if task.synchronized:
                        plan.append(SYNC)
                    # ElastiSim's SequenceTask waits for its asynchronous I/O at its end
                    if self._walk(run, task.tasks, variables, node_ids, plan):
                        plan.append((_WAIT, None))
                continue
            values = {}
            for key in ("flops", "bytes", "delay"):
                value = getattr(task, key)
                if value is not None:
                    values[key] = self._evaluate(run, value, variables, task.where, key)
            try:
                cost = task_cost(task, values, node_ids, run.gpus, self.platform)
            except InputError as error:
                raise error.naming(run.spec.model.source) from None
            asynchronous = asynchronous or task.asynchronous
            for _ in range(repeat):
                if task.synchronized:
                    plan.append(SYNC)
                if cost.__class__ is np.ndarray and plan and plan[-1].__class__ is np.ndarray:
                    plan[-1] = plan[-1] + cost  # consecutive per-node seconds: one item
                else:
                    plan.append(cost)
        return asynchronous

    def _program(self, run: Run):
        """ElastiSim's Application actor (all ranks of the job at once, each with its own clock):
        start-up or reconfiguration step, then phase iterations until a scheduling point, an
        evolving request or the end. A scheduling point or evolving request comes at the start of an
        iteration (not the first after the job starts or resumes), after the job has waited for its
        asynchronous I/O and its ranks have met."""
        spec, model = run.spec, run.spec.model
        phases = [
            (phase, iterations)
            for phase, iterations in zip(model.phases, spec.phase_iterations)
            if iterations > 0
        ]
        if not phases:
            yield from _BARRIER
            yield _AT, None
            return
        index, remaining = 0, phases[0][1]
        phase_start = (
            True  # the next iteration is the first of its phase (for final_scheduling_point)
        )
        previous = None  # the phase before the current one
        while True:  # one life of the application actor
            yield from self._life_start(run)
            initial = True
            while True:
                phase, iterations = phases[index]
                if not initial:
                    # after a phase without a final scheduling point, its next has none at first
                    unpointed = (
                        phase_start and previous is not None and not previous.final_scheduling_point
                    )
                    stop = self._stop(run, phase, iterations - remaining, unpointed)
                    if stop is not None:
                        yield from _BARRIER
                        yield _AT, None
                        yield stop
                        break
                if phase.barrier:
                    yield from _BARRIER
                yield from self._plan(run, phase, run.nodes, iterations - remaining)
                remaining -= 1
                run.completed_phases += 1
                initial, phase_start = False, False
                if remaining == 0:
                    index += 1
                    if index == len(phases):
                        yield from _BARRIER
                        yield _AT, None
                        return
                    previous, remaining, phase_start = phase, phases[index][1], True

    def _life_start(self, run: Run):
        """The start of one life of the application actor: its start-up or reconfiguration step,
        the meeting of its ranks, then `on_expansion` on the new nodes."""
        model = run.spec.model
        if run.initializing:
            run.initializing = False
            yield from self._one_time(run, model.on_init, run.nodes)
        if run.reconfiguring:
            run.reconfiguring = False
            yield from self._one_time(run, model.on_reconfiguration, run.nodes)
        yield SYNC
        yield _AT, None
        yield _RUNNING, None  # rank 0 sets the job RUNNING once its ranks have met
        if run.expanded:
            expanded, run.expanded = run.expanded, []
            if model.on_expansion is not None:
                yield _SELECT, np.asarray(expanded)
                yield from self._one_time(run, model.on_expansion, [run.nodes[i] for i in expanded])
                yield _SELECT, None

    def _stop(self, run: Run, phase, iteration: int, unpointed: bool) -> tuple | None:
        """What the job stops for before iteration `iteration` of `phase` (not the first after a
        (re)start): an evolving request that differs from its size (evolving and adaptive jobs in a
        phase with a request), a scheduling point (malleable jobs, adaptive ones in a phase without
        a request, unless `unpointed`), or nothing (None)."""
        kind = run.spec.type
        if kind in ("evolving", "adaptive") and phase.evolving_request is not None:
            request = self._evolving_request(run, phase, iteration)
            return (_EVOLVE, request) if request != len(run.nodes) else None
        if kind in ("malleable", "adaptive") and phase.scheduling_point and not unpointed:
            return _POINT, None
        return None

    def _one_time(self, run: Run, phase, nodes: list):
        if phase is None:
            return
        for _ in range(_one_time_count(phase)):
            yield from self._plan(run, phase, nodes, 0)
        yield _WAIT, None

    def _evolving_request(self, run: Run, phase, iteration: int) -> int:
        variables = self._variables(run, len(run.nodes), iteration)
        # ElastiSim's Job::calculateEvolvingRequest also knows the job's bounds
        variables.update(
            num_nodes_min=float(run.spec.num_nodes_min), num_nodes_max=float(run.spec.num_nodes_max)
        )
        value = self.expressions.evaluate(
            phase.evolving_request,
            variables,
            where=f"{phase.where}: evolving_request (job {run.spec.position})",
            source=run.spec.model.source,
        )
        request, low, high = int(value), run.spec.num_nodes_min, run.spec.num_nodes_max
        if self.config.clip_evolving_requests:
            request = min(max(request, low), high)
        elif not low <= request <= high:  # ElastiSim's Job::calculateEvolvingRequest stops too
            raise InputError(
                f"gives {request} nodes, outside the job's {low} to {high} "
                f"(clip_evolving_requests is false)",
                source=run.spec.model.source,
                field=f"{phase.where}: evolving_request (job {run.spec.position})",
            )
        return request

    # the inner loop of every job: one branch per kind of item, inline (called for every event of
    # every job; splitting it into calls per item would cost more than the branches)
    def _step(self, run: Run) -> None:  # noqa: C901
        """Advance a job's program until it waits for a time, a PFS transfer or its async I/O; or
        ends."""
        token = run.token
        program = run.program
        assert program is not None  # a job is stepped only while it runs
        if run.io_since >= 0:
            self._io_done(run)
        while True:
            if run.held is not None:
                item, run.held = run.held, None
            else:
                try:
                    item = next(program)
                except StopIteration:
                    self._finish(run, JobState.COMPLETED)
                    if self.config.schedule_on_job_finalize:
                        self._invoke(InvocationType.INVOKE_JOB_COMPLETED, run)
                    return
            kind = item.__class__
            select = run.select
            if run.busy or run.queues:
                # some nodes still transfer: their later fixed-length work and PFS flows queue up
                # behind the transfer; anything else waits until every node is done (ElastiSim's
                # ranks run on their own)
                if select is None and kind in (np.ndarray, PfsTransfer, AsyncWork):
                    self._defer(run, item)
                    continue
                run.held = item
                run.io_since = max(_latest_of(run), self.now)
                return
            if kind is np.ndarray:
                run.even = False
                if select is None:
                    run.clock += item
                else:
                    run.clock[select] += item
            elif kind is Comm:
                shared = self._node_comm(run, item)
                if shared is not None:  # its asynchronous PFS flows share node links with it
                    self._cross(run, *shared)
                    return
                if select is None and item.local is None and run.even:
                    # every node is at one time already: the barrier is passed at once
                    if item.duration:
                        run.clock.fill(run.clock.item(0) + item.duration)
                    continue
                clock = run.clock if select is None else run.clock[select]
                met = _latest(clock) + item.duration if len(clock) else self.now
                _leave_barrier(run, item.local, select, clock, met)
            elif kind is PfsTransfer:
                self._start_pfs(run, item)
            elif kind is AsyncWork:
                positions = slice(None) if select is None else select
                run.async_end[positions] = np.maximum(
                    run.async_end[positions], run.clock[positions] + item.seconds
                )
            elif kind is CrossComm:
                # the job goes on when its parallel task ends
                shared = self._node_comm(run, item)
                self._cross(run, *(shared or (item, [])))
                return
            else:
                kind, value = item
                if kind == _WAIT:
                    if self._await_async(run):
                        return
                elif kind == _AT:
                    met = _latest_of(run)
                    if met > self.now:
                        self._push(met, _RESUME, run, token)
                        return
                elif kind == _RUNNING:
                    if run.state in (JobState.IN_RECONFIGURATION, JobState.PENDING_RECONFIGURATION):
                        run.state = run.view.state = JobState.RUNNING
                        self._refresh(run)
                elif kind == _POINT:
                    self._scheduling_point(run)
                    if run.token != token:
                        return
                elif kind == _EVOLVE:
                    self._scheduling_point(run, value)
                    if run.token != token:
                        return
                elif kind == _SELECT:
                    run.select = value

    def _await_async(self, run: Run) -> bool:
        """Whether the job must wait for its asynchronous PFS transfers (it then stops until they
        end); else each node's clock moves past its asynchronous work."""
        if run.async_transfers:
            run.waiting_async = True
            run.io_since = max(_latest_of(run), self.now)
            return True
        np.maximum(run.clock, run.async_end, out=run.clock)
        run.even = False
        return False

    def _io_done(self, run: Run) -> None:
        if self.now > run.io_since:
            self.io_log.append((run.spec.identifier, run.io_since, self.now, run.nodes))
        run.io_since = -1.0

    # --- PFS transfers ----------------------------------------------------------------------------
    def _defer(self, run: Run, item) -> None:
        """Per-node work (delays, a PFS task, asynchronous node-local work) while some nodes still
        transfer: the free nodes do it now, the busy ones queue it."""
        waiting = run.busy | run.queues.keys()
        kind = item.__class__
        if kind is np.ndarray or kind is AsyncWork:
            values = item if kind is np.ndarray else item.seconds
            for position in waiting:
                run.queues.setdefault(position, []).append(
                    float(values[position])
                    if kind is np.ndarray
                    else ("async", float(values[position]))
                )
            run.even = False
            free = np.ones(len(run.clock), dtype=bool)
            free[list(waiting)] = False
            if kind is np.ndarray:
                run.clock[free] += item[free]
            else:
                run.async_end[free] = np.maximum(
                    run.async_end[free], run.clock[free] + values[free]
                )
            return
        now = [index for index, position in enumerate(item.positions) if position not in waiting]
        for index, position in enumerate(item.positions):
            if position in waiting:
                run.queues.setdefault(position, []).append((item, index))
        self._start_pfs(run, item, now)

    def _drain(self, run: Run, position: int) -> None:
        """A node's transfer ended: it does the work it queued meanwhile, up to its next flow."""
        queue = run.queues.get(position)
        while queue:
            entry = queue.pop(0)
            if entry.__class__ is float:
                run.clock[position] += entry
                run.even = False
            elif entry[0] == "async":
                run.async_end[position] = max(
                    run.async_end[position], run.clock[position] + entry[1]
                )
            else:
                self._start_pfs(run, entry[0], [entry[1]])
                if not entry[0].asynchronous:
                    break
        if not queue:
            run.queues.pop(position, None)

    def _start_pfs(self, run: Run, item: PfsTransfer, indices=None) -> bool:
        """Start one flow per node with bytes (or the flows `indices` of the task), each after its
        route latency from the node's clock (SimGrid's L07 model pays the latency first); False when
        none starts."""
        if indices is None and run.select is None and item.positions:
            cached = self._flow_groups.get(id(item))
            if cached is None or cached[0] is not item or cached[1] is not run.nodes:
                cached = self._flow_groups[id(item)] = self._groups(run, item)
            latency = cached[3]
            when = None if latency is None else self._together(run, item, latency)
            if when is not None and cached[4] is not None:
                # every flow starts at one moment on one link: one transfer, groups as made
                groups = cached[2]
                transfer = Transfer((), (run, item, run.token), item.direction, cached[4])
                transfer.groups = [
                    [count, size, cap, 0.0, size, positions, nodes, bandwidths]
                    for count, size, cap, positions, nodes, bandwidths in groups
                ]
                transfer.left = len(groups)
                if not item.asynchronous:
                    run.busy.update(item.positions)
                self._launch(run, item, transfer, when)
                return True
        return self._start_flows(run, item, indices)

    def _start_flows(self, run: Run, item: PfsTransfer, indices) -> bool:
        """`_start_pfs` flow by flow: one transfer per start moment and PFS link."""
        select = run.select
        starts: dict[tuple, list] = {}
        bandwidth, clock, nodes, now = self._bandwidth, run.clock.tolist(), run.nodes, self.now
        positions, latencies, sizes, caps = item.positions, item.latencies, item.sizes, item.caps
        direction = item.direction
        link = self.routes.get(direction)
        for index in range(len(positions)) if indices is None else indices:
            position = positions[index]
            if select is not None:
                position = int(select[position])
            when = max(clock[position] + latencies[index], now)
            node = nodes[position]
            if self._cluster_links is not None:
                link = self._cluster_links[direction][self._node_cluster[node]]
            flows = starts.get((when, link))
            if flows is None:
                flows = starts[when, link] = []
            flows.append((position, sizes[index], caps[index], node, bandwidth[node]))
            if not item.asynchronous:
                run.busy.add(position)
        for (when, link), flows in starts.items():
            transfer = Transfer(flows, (run, item, run.token), direction, link)
            self._launch(run, item, transfer, when)
        return bool(starts)

    def _together(self, run: Run, item: PfsTransfer, latency: float) -> float | None:
        """The one moment every flow of `item` starts at, when its nodes' clocks are equal (their
        route latencies are: `latency`), else None."""
        if run.even:
            return max(run.clock.item(0) + latency, self.now)
        clock = run.clock.tolist()
        first = clock[item.positions[0]]
        for position in item.positions:
            if clock[position] != first:
                return None
        return max(first + latency, self.now)

    def _groups(self, run: Run, item: PfsTransfer) -> tuple:
        """(`item`, the job's node list, the flows of `item` on those nodes grouped as `Transfer`
        groups them (equal bytes and cap), the route latency of every flow or None if they
        differ, the PFS link of every flow or None if they differ)."""
        grouped: dict[tuple[float, float], list] = {}
        for position, size, cap in zip(item.positions, item.sizes, item.caps):
            node = run.nodes[position]
            group = grouped.get((size, cap))
            if group is None:
                group = grouped[size, cap] = [0, size, cap, [], [], []]
            group[0] += 1
            group[3].append(position)
            group[4].append(node)
            group[5].append(self._bandwidth[node])
        latency = item.latencies[0] if len(set(item.latencies)) == 1 else None
        link = self.routes.get(item.direction)
        if self._cluster_links is not None:
            per_cluster = self._cluster_links[item.direction]
            used = {id(per_cluster[self._node_cluster[run.nodes[p]]]) for p in item.positions}
            link = per_cluster[self._node_cluster[run.nodes[item.positions[0]]]]
            if len(used) > 1:
                link = None
        return item, run.nodes, [tuple(group) for group in grouped.values()], latency, link

    def _launch(self, run: Run, item: PfsTransfer, transfer: Transfer, when: float) -> None:
        run.transfers.add(transfer)
        if item.asynchronous:
            run.async_transfers += 1
        if when <= self.now:
            self._start_transfer(transfer)
        else:
            self._push(when, _FLOW, transfer)

    def _start_transfer(self, transfer: Transfer) -> None:
        link = transfer.link
        self._settle(link)
        link.add(transfer)
        self._reshare(link)

    def _cancel_transfer(self, transfer: Transfer) -> None:
        run = transfer.owner[0]
        link = transfer.link
        if transfer in link.transfers:
            self._settle(link)
            link.remove(transfer)
            self._reshare(link)
        run.transfers.discard(transfer)

    def _settle(self, link: SharedLink) -> None:
        for transfer, group in link.advance(self.now):
            run, item, token = transfer.owner
            if (
                run.program is None or token != run.token
            ):  # the job stopped while the transfer ended
                continue
            positions = group[5]
            if item.asynchronous:
                run.async_end[positions] = np.maximum(run.async_end[positions], self.now)
            else:
                if len(positions) == len(run.clock):  # every node: its clocks are even again
                    run.clock.fill(self.now)
                    run.even = True
                else:
                    run.clock[positions] = self.now
                    run.even = False
                for position in positions:
                    run.busy.discard(position)
                    self._drain(run, position)
                if run.held is not None and not run.busy and not run.queues:
                    self._push(
                        self.now, _RESUME, run, run.token
                    )  # every node is done: the job goes on
            if transfer.left:
                continue
            run.transfers.discard(transfer)
            if item.asynchronous:
                run.async_transfers -= 1
                if run.waiting_async and not run.async_transfers:
                    run.waiting_async = False
                    np.maximum(run.clock, run.async_end, out=run.clock)  # the wait it was in ends
                    run.even = False
                    self._push(self.now, _RESUME, run, run.token)

    def _reshare(self, link: SharedLink) -> None:
        when = link.share()
        if link.transfers:
            self._push(when, _LINK, link, link.version)
        self._node_rates(link)
        self.pfs_log.append(
            (
                self.now,
                sum(link.throughput for link in self.pfs_links["pfs_read"]),
                sum(link.throughput for link in self.pfs_links["pfs_write"]),
            )
        )

    def _pfs_link(self, direction: str, node: int) -> SharedLink:
        """The PFS link a node's flows in `direction` run on."""
        if self._cluster_links is None:
            return self.routes[direction]
        link = self._cluster_links[direction][self._node_cluster[node]]
        assert link is not None  # a flow without a route was refused when it was planned
        return link

    def pfs_capacity(self, direction: str) -> float:
        """The bandwidth of every PFS link in `direction` together (B/s; NaN: none)."""
        links = self.pfs_links[direction]
        return sum(link.capacity for link in links) if links else math.nan

    def _link_event(self, link: SharedLink) -> None:
        self._settle(link)
        self._reshare(link)

    # --- parallel tasks across links between clusters -------------------------------------------
    def _node_comm(self, run: Run, item: Comm) -> tuple[CrossComm, list] | None:
        """The job's parallel task `item` on its node links shared with the job's asynchronous PFS
        transfers not yet ended (`node_links`), or None when it loads none of those links."""
        if item.ptask is None:
            return None
        directions = sorted(
            {
                transfer.direction
                for transfer in run.transfers
                if transfer.owner[1].asynchronous and transfer.left
            }
        )
        if not directions:
            return None
        select = run.select
        nodes = run.nodes if select is None else [run.nodes[int(p)] for p in select]
        shared, used = node_links(item, nodes, self._bandwidth, directions)
        return (shared, used) if used else None

    def _cross(self, run: Run, item: CrossComm, used: list) -> None:
        """The job's nodes meet, then its parallel task starts after the route latency (SimGrid's
        L07 model pays the latency first) on the links between clusters it shares with other
        jobs, and on the node links `used` it shares with its own PFS flows."""
        select = run.select
        clock = run.clock if select is None else run.clock[select]
        met = _latest(clock) if len(clock) else self.now
        task = Crossing(item, (run, item, run.token, select), met)
        if used:
            self._node_tasks[task] = used
        run.crossing = task
        when = max(met + item.latency, self.now)
        if when <= self.now:
            self._start_crossing(task)
        else:
            self._push(when, _CROSS, task)

    def _start_crossing(self, task: Crossing) -> None:
        self._settle_crossings()
        self.network.add(task)
        if task in self._node_tasks:
            self._occupy_links(task, 1)
            self._node_bandwidth(task)
        self._reshare_crossings()

    def _cancel_crossing(self, task: Crossing) -> None:
        task.owner[0].crossing = None
        started = task in self.network.tasks
        if started:
            self._settle_crossings()
            self.network.remove(task)
            self._reshare_crossings()
        if task in self._node_tasks:  # (a task still in its latency holds no node link yet)
            if started:
                self._occupy_links(task, -1)
            else:
                del self._node_tasks[task]

    # --- a job's parallel task and its own PFS flows on its node links ----------------------------
    def _occupy_links(self, task: Crossing, step: int) -> None:
        """The task starts (1) or ends (-1) on its node links: the job's PFS flows on them get
        their share of each link (SimGrid L07: one resource per node link and direction)."""
        used = self._node_tasks[task] if step > 0 else self._node_tasks.pop(task)
        by_link: dict[tuple[str, SharedLink], list[int]] = {}
        for direction, node, _, _ in used:
            by_link.setdefault((direction, self._pfs_link(direction, node)), []).append(node)
        for (direction, link), nodes in by_link.items():
            self._settle(link)
            link.occupy(direction, nodes, step)
            self._reshare(link)

    def _node_bandwidth(self, task: Crossing) -> None:
        """The task's part of each of its node links: what its job's PFS flows on the link leave
        (SimGrid's fair-bottleneck rounds: each gets an equal offer, and a flow held below it
        elsewhere leaves the rest to the task), at least an equal share of the link."""
        bandwidth = self.network.bandwidth
        transfers = task.owner[0].transfers
        for direction, node, key, capacity in self._node_tasks[task]:
            link = self._pfs_link(direction, node)
            flows = link.flows(direction, node)
            taken = 0.0
            for transfer in transfers:
                if transfer.direction == direction and transfer in link.transfers:
                    for group in transfer.groups:
                        if group[1] > 0 and node in group[6]:
                            taken += group[3]
            # 001 §5.2.1: the node link is shared by the flows and the task on it
            bandwidth[key] = max(capacity - taken, capacity / max(flows, 1))

    def _node_rates(self, link: SharedLink) -> None:
        """The PFS flows on `link` have new rates: the parallel tasks sharing node links with them
        get their new parts."""
        tasks = [
            task
            for task, used in self._node_tasks.items()
            if task in self.network.tasks
            and any(self._pfs_link(entry[0], entry[1]) is link for entry in used)
        ]
        if tasks:
            self._settle_crossings()
            for task in tasks:
                if task in self._node_tasks:
                    self._node_bandwidth(task)
            self._reshare_crossings()

    def _settle_crossings(self) -> None:
        """Move the tasks on the links between clusters on to now; the jobs whose task ended go
        on: each node at the later of the task's end and its own work (`local`)."""
        # a task beside which its ranks computed (`local`) lets them go on one SimGrid scheduling
        # round later (each waits for its finished computation too): the others' events first
        ended = sorted(
            self.network.advance(self.now), key=lambda task: task.owner[1].local is not None
        )
        for task in ended:
            if task in self._node_tasks:
                self._occupy_links(task, -1)
            run, item, token, select = task.owner
            if run.program is None or token != run.token:
                continue
            run.crossing = None
            clock = run.clock if select is None else run.clock[select]
            _leave_barrier(run, item.local, select, clock, self.now)
            self._push(self.now, _RESUME, run, run.token)

    def _reshare_crossings(self) -> None:
        network = self.network
        if network.tasks:
            self._push(network.share(), _NET, network, network.version)
        else:
            network.share()
        if self._node_tasks and self._coupling < COUPLING_ROUNDS:
            self._coupling += 1
            try:
                self._node_caps()
            finally:
                self._coupling -= 1

    def _node_caps(self) -> None:
        """The parallel tasks sharing node links have new rates: each of those links offers its
        job's PFS flows what the task leaves, split evenly among them, and at least an equal share
        (SimGrid's fair-bottleneck rounds, 001 §5.2: a task held below its offer elsewhere leaves
        the rest of the link to the flows)."""
        wanted: dict = {}
        for task, used in self._node_tasks.items():
            if task not in self.network.tasks:
                continue
            loads = {key: load for key, load, _ in task.links}
            for direction, node, key, capacity in used:
                link = self._pfs_link(direction, node)
                flows = link.flows(direction, node)
                caps = wanted.setdefault(link, {})
                if flows > 1:
                    spare = (capacity - task.rate * loads[key]) / (flows - 1)
                    caps.setdefault(direction, {})[node] = max(capacity / flows, spare)
        for link, caps in wanted.items():
            if link.node_caps != caps:
                self._settle(link)
                link.node_caps = caps
                self._reshare(link)


def simulate_project(
    configuration: Configuration,
    platform: ElastiSimPlatform,
    jobs: list[JobSpec],
    algorithm,
    *,
    expressions: Expressions | None = None,
    algorithm_name: str = "algorithm",
) -> Simulation:
    """Run one scenario; the finished `Simulation` holds the per-job runs and the logs."""
    return Simulation(
        configuration,
        platform,
        jobs,
        algorithm,
        expressions=expressions,
        algorithm_name=algorithm_name,
    ).run()


__getattr__ = module_aliases(__name__, {"simulate": "simulate_project"}, globals())  # until 0.4.0
