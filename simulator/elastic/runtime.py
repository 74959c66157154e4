"""The ElastiSim batch system in process: job lifecycle, scheduling protocol and the flow model's event loop.

Protocol (001 §5.4-5.5, ElastiSim's scheduler): the algorithm is invoked on job submission, completion, walltime
kill, scheduling points and periodically, as the configuration's keys say, and on every evolving request; an
invocation less than `min_scheduling_interval` after the previous one is dropped, not deferred. When it returns:
kills apply at once; a pending job with nodes starts at once (`on_init` first); a changed running job becomes
PENDING_RECONFIGURATION, its new nodes RESERVED, and the change applies at its next scheduling point, after the
invocation that point triggers. Then `on_reconfiguration` runs on all nodes (state IN_RECONFIGURATION) and
`on_expansion` on the new ones. Malleable, evolving and adaptive jobs reach a scheduling point after every phase
iteration (unless the model switches it off), never after the last one; evolving and adaptive jobs send their
phase's `evolving_request` at the start of each iteration (clipped to [min, max] with `clip_evolving_requests`).
A job with a walltime is killed at start + walltime.

Why a loop of its own rather than `cosched.simulator.engine`: that engine advances jobs as amounts of work at a
rate on a node count the scheduler picks; here a job is a chain of phases whose I/O shares the PFS with every
other job's I/O, the algorithm picks node ids, and decisions are deferred to per-job scheduling points. The loop
is one heap of timed events (submissions, task ends, PFS flow ends, walltimes, periodic invocations); each job is
a generator that yields what it waits for.
"""
from __future__ import annotations

import heapq
import time
from dataclasses import dataclass, field
from itertools import count

import numpy as np

from cosched.errors import InputError
from cosched.simulator.elastic import compat
from cosched.simulator.elastic.compat import GpuState, InvocationType, JobState, NodeState
from cosched.simulator.elastic.config import Configuration
from cosched.simulator.elastic.expressions import Expressions, argument_value
from cosched.simulator.elastic.flow import PfsTransfer, SharedLink, Transfer, task_cost
from cosched.simulator.elastic.platform import Platform
from cosched.simulator.elastic.workload import ELASTIC_TYPES, JobSpec

__all__ = ["AlgorithmError", "Simulation", "simulate", "TIME_EPSILON"]

TIME_EPSILON = 1e-9  # ElastiSim's EPSILON in the minimum-interval test
_SUBMIT, _RESUME, _LINK, _WALLTIME, _PERIODIC = range(5)
_EVOLVE, _POINT, _WAIT = "evolve", "point", "wait"


class AlgorithmError(InputError):
    """The algorithm asked for something the batch system refuses (a busy node, a size outside the bounds)."""


@dataclass(eq=False)
class Run:
    """The runtime state of one job."""

    spec: JobSpec
    view: compat.Job
    state: JobState = JobState.PENDING
    nodes: list = field(default_factory=list)  # executing node ids, in rank order
    target: list | None = None  # node ids of a pending reconfiguration
    gpus: int = 0
    start: float = -1.0
    end: float = -1.0
    status: str = "pending"
    token: int = 0  # bumped when the job stops: stale events are skipped
    program: object = None
    completed_phases: int = 0
    expanded: list = field(default_factory=list)  # new nodes of the last reconfiguration, for on_expansion
    reconfigured: bool = False
    plans: dict = field(default_factory=dict)
    async_transfers: int = 0
    async_until: float = 0.0
    waiting_async: bool = False
    transfers: set = field(default_factory=set)  # live PFS transfers, synchronous and asynchronous
    history: list = field(default_factory=list)  # (time, node count) whenever the configuration changes
    io_since: float = -1.0  # since when the job waits for PFS or asynchronous I/O (-1: it does not)
    reconfigurations: int = 0


class Simulation:
    """One ElastiSim scenario under one algorithm `schedule(jobs, nodes, system)`."""

    def __init__(self, configuration: Configuration, platform: Platform, jobs: list[JobSpec], algorithm,
                 *, expressions: Expressions | None = None, algorithm_name: str = "algorithm"):
        if configuration.allow_oversubscription:
            raise InputError("allow_oversubscription=true is not supported by cosched's flow model",
                             source=configuration.source, field="allow_oversubscription")
        self.config, self.platform, self.algorithm, self.algorithm_name = configuration, platform, algorithm, \
            algorithm_name
        self.expressions = expressions or Expressions()
        for spec in jobs:
            if spec.num_nodes_min > len(platform):
                raise InputError(f"job {spec.position} needs at least {spec.num_nodes_min} nodes, the platform has "
                                 f"{len(platform)}", source=configuration.jobs_file,
                                 field=f"jobs[{spec.position}]: num_nodes")
        self.modified: dict[int, compat.Job] = {}
        self.runs = [Run(spec, compat.Job(spec, self.modified)) for spec in jobs]
        self.node_views = [compat.Node(i, int(platform.node_type[i]), int(platform.gpus[i]))
                           for i in range(len(platform))]
        self.running: list[set] = [set() for _ in range(len(platform))]
        self.expected: list[set] = [set() for _ in range(len(platform))]
        self.views: list[compat.Job] = []
        links: dict[str, SharedLink] = {}  # by link id: a symmetrical route shares one link for both directions
        self.routes: dict[str, SharedLink] = {}
        for kind, route in (("pfs_read", platform.pfs_read), ("pfs_write", platform.pfs_write)):
            if route is not None:
                self.routes[kind] = links.setdefault(route[0], SharedLink(route[1]))
        self.now = 0.0
        self.last_invocation = 0.0
        self.invocations = 0
        self.dropped = 0
        self.wall_seconds = 0.0
        self.node_log: list[tuple] = []
        self.pfs_log: list[tuple] = []  # (time, read B/s, write B/s) after every change
        self.io_log: list[tuple] = []  # (job, start, end, its nodes) of every wait for I/O: the CPUs idle
        self._heap: list = []
        self._sequence = count()
        self._unfinished = len(jobs)
        self._future = len(jobs)
        self._starts = 0
        self._active = 0  # jobs started and not ended
        self._uses_iteration: dict[int, bool] = {}
        self._estimates: dict[tuple[int, int], tuple[float, list]] = {}
        if hasattr(algorithm, "bind"):  # built-in policies estimate run times with the flow model
            algorithm.bind(self.estimate)

    # --- event heap ---------------------------------------------------------------------------------------
    def _push(self, when: float, kind: int, target, stamp=0) -> None:
        heapq.heappush(self._heap, (when, next(self._sequence), kind, target, stamp))

    def run(self) -> "Simulation":
        """Simulate until every job has ended (or nothing more can happen)."""
        started = time.perf_counter()
        for run in self.runs:
            self._push(run.spec.submit_time, _SUBMIT, run)
        if self.config.scheduling_interval > 0:
            self._push(self.config.scheduling_interval, _PERIODIC, None)
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
            elif kind == _SUBMIT:
                self._submit(target)
            elif kind == _WALLTIME:
                if stamp == target.token:
                    self._kill(target, walltime=True)
            elif self._unfinished:
                self._periodic()
        self.wall_seconds = time.perf_counter() - started
        return self

    # --- job lifecycle --------------------------------------------------------------------------------------
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
        self._push(self.now + self.config.scheduling_interval, _PERIODIC, None)

    def _start(self, run: Run, nodes: list) -> None:
        spec = run.spec
        self._check_size(run, len(nodes), "start")
        self._check_free(run, nodes)
        run.state, run.start, run.status = JobState.RUNNING, self.now, "running"
        run.nodes = list(nodes)
        gpus = run.view.assigned_num_gpus_per_node
        run.gpus = gpus if gpus > 0 else spec.num_gpus_per_node_min
        run.history.append((self.now, len(nodes)))
        for node in nodes:
            self._set_node(node, running_add=run)
        view = run.view
        view.state, view.start_time, view.wait_time = JobState.RUNNING, self.now, self.now - spec.submit_time
        view.assigned_num_gpus_per_node = run.gpus
        self._starts += 1
        self._active += 1
        run.program = self._program(run)
        if spec.walltime > 0:  # ElastiSim's WalltimeMonitor: killed at start + walltime + job_kill_grace_period
            self._push(self.now + spec.walltime + self.config.job_kill_grace_period, _WALLTIME, run, run.token)
        self._push(self.now, _RESUME, run, run.token)

    def _finish(self, run: Run, state: JobState) -> None:
        run.token += 1
        if run.io_since >= 0:
            self._io_done(run)
        run.state, run.end = state, self.now
        run.status = "completed" if state == JobState.COMPLETED else "killed"
        for node in run.nodes:
            self._set_node(node, running_remove=run)
        self._drop_target(run)
        run.program = None  # before cancelling: a transfer that ends now must not resume the job
        for transfer in list(run.transfers):
            self._cancel_transfer(transfer)
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

    # --- nodes ----------------------------------------------------------------------------------------------
    def _set_node(self, node: int, *, running_add=None, running_remove=None, expected_add=None,
                  expected_remove=None) -> None:
        running, expected = self.running[node], self.expected[node]
        if running_add is not None:
            running.add(running_add.spec.identifier)
        if running_remove is not None:
            running.discard(running_remove.spec.identifier)
        if expected_add is not None:
            expected.add(expected_add.spec.identifier)
        if expected_remove is not None:
            expected.discard(expected_remove.spec.identifier)
        view = self.node_views[node]
        view.state = NodeState.ALLOCATED if running else NodeState.RESERVED if expected else NodeState.FREE
        jobs = running | expected
        view.assigned_job_ids = jobs
        view.assigned_jobs = [self.runs[job].view for job in (sorted(jobs) if len(jobs) > 1 else jobs)]
        if view.gpus:
            used = sum(self.runs[job].gpus for job in running)
            for gpu in view.gpus:
                gpu.state = GpuState.ALLOCATED if gpu.identifier < used else GpuState.FREE
        self.node_log.append((self.now, node, view.state, tuple(running), tuple(expected)))

    def _check_free(self, run: Run, nodes) -> None:
        for node in nodes:
            if not 0 <= node < len(self.platform):
                raise self._refuse(run, f"assigned node {node}, which does not exist")
            others = (self.running[node] | self.expected[node]) - {run.spec.identifier}
            if others and node not in run.nodes:
                raise self._refuse(run, f"assigned node {node} ({self.platform.names[node]}), which is "
                                        f"{self.node_views[node].state.name} for job {min(others)} "
                                        f"(oversubscription is off)")

    def _check_size(self, run: Run, size: int, action: str) -> None:
        spec = run.spec
        if not spec.num_nodes_min <= size <= spec.num_nodes_max:
            bounds = f"exactly {spec.num_nodes_min}" if spec.type == "rigid" else \
                f"{spec.num_nodes_min} to {spec.num_nodes_max}"
            raise self._refuse(run, f"cannot {action} on {size} nodes: a {spec.type} job takes {bounds}")

    def _refuse(self, run: Run, reason: str) -> AlgorithmError:
        return AlgorithmError(f"at time {self.now:g}, job {run.spec.identifier} (jobs[{run.spec.position}]) {reason}",
                              source=self.algorithm_name)

    def _drop_target(self, run: Run) -> None:
        if run.target is not None:
            for node in set(run.target) - set(run.nodes):
                self._set_node(node, expected_remove=run)
            run.target = None

    # --- the protocol ---------------------------------------------------------------------------------------
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
            for direction, key in (("pfs_read", "read"), ("pfs_write", "write")):
                link = self.routes.get(direction)
                system[f"pfs_{key}_bw"] = 0.0 if link is None else link.capacity
                system[f"pfs_{key}_utilization"] = 0.0 if link is None else link.throughput
        try:
            self.algorithm(self.views, self.node_views, system)
        except InputError:
            raise
        except Exception as error:  # user code: report it as one line naming the file and the moment
            raise AlgorithmError(f"schedule() raised {type(error).__name__}: {error} (time {self.now:g}, "
                                 f"{kind.name})", source=self.algorithm_name) from None
        self._apply()

    def _apply(self) -> None:
        modified = sorted(self.modified.values(), key=lambda view: (not view.kill_flag, view.identifier))
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
            wanted = sorted(view.assigned_node_ids)
            if run.state == JobState.PENDING:
                if wanted:
                    self._start(run, wanted)
            elif set(wanted) != set(run.nodes):
                self._reconfigure_later(run, wanted)
            else:
                self._drop_target(run)
                if run.state == JobState.PENDING_RECONFIGURATION:
                    run.state = view.state = JobState.RUNNING

    def _reconfigure_later(self, run: Run, wanted: list) -> None:
        if run.spec.type in ("rigid", "moldable"):
            raise self._refuse(run, "was reconfigured while running, but a rigid or moldable job has no scheduling "
                                    "points")
        self._check_size(run, len(wanted), "reconfigure")
        self._check_free(run, wanted)
        self._drop_target(run)
        run.target = wanted
        for node in set(wanted) - set(run.nodes):
            self._set_node(node, expected_add=run)
        run.state = run.view.state = JobState.PENDING_RECONFIGURATION

    def _scheduling_point(self, run: Run) -> None:
        run.view.completed_phases = run.completed_phases  # ElastiSim reports progress at scheduling points
        if self.config.schedule_on_scheduling_point:
            self._invoke(InvocationType.INVOKE_SCHEDULING_POINT, run)
        if run.state != JobState.PENDING_RECONFIGURATION:
            return
        before, after = set(run.nodes), set(run.target)
        new = [node for node in run.target if node not in before]
        for node in before - after:
            self._set_node(node, running_remove=run)
        for node in new:
            self.expected[node].discard(run.spec.identifier)
            self._set_node(node, running_add=run)
        run.nodes, run.target, run.expanded = list(run.target), None, new
        run.reconfigured, run.reconfigurations = True, run.reconfigurations + 1
        run.plans.clear()
        run.history.append((self.now, len(run.nodes)))
        run.state = run.view.state = JobState.IN_RECONFIGURATION
        if self.config.schedule_on_reconfiguration and not self.config.schedule_on_scheduling_point:
            self._invoke(InvocationType.INVOKE_RECONFIGURATION, run)  # ElastiSim's Scheduler::handleSchedulingPoint

    # --- run-time estimates for built-in policies -------------------------------------------------------------
    def estimate(self, identifier: int, nodes: int, completed_phases: int = 0) -> float:
        """Seconds job `identifier` needs on `nodes` nodes from `completed_phases` on, without contention: PFS
        transfers at the rate they would get alone, `on_init` included before the job has started."""
        run = self.runs[identifier]
        key = (identifier, nodes)
        cached = self._estimates.get(key)
        if cached is None:
            spec, saved = run.spec, run.gpus
            run.gpus = run.gpus or spec.num_gpus_per_node_min
            ids, scratch = list(range(nodes)), {}
            per_phase = [self._plan_seconds(self._plan(run, phase, ids, 0, scratch)) for phase in spec.model.phases]
            init = 0.0 if spec.model.on_init is None else int(spec.model.on_init.iterations) * \
                self._plan_seconds(self._plan(run, spec.model.on_init, ids, 0, scratch))
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
            if item.__class__ is float:
                seconds += item
            elif item.__class__ is PfsTransfer:
                capacity = self.routes[item.direction].capacity
                flows = sum(group[0] for group in item.groups)
                seconds += max(amount / min(cap, capacity / flows) for _, amount, cap in item.groups) + item.latency
        return seconds

    # --- the application, as a generator of what it waits for ----------------------------------------------
    def _variables(self, run: Run, nodes: int, iteration: int = 0) -> dict:
        variables = dict(run.spec.variables)
        variables.update(num_nodes=float(nodes), num_gpus_per_node=float(run.gpus), num_gpus=float(nodes * run.gpus),
                         phase_iteration=float(iteration))
        for key, value in run.view.runtime_arguments.items():
            number = argument_value(value)
            if number is None:
                raise self._refuse(run, f"set the runtime argument {key} to {value!r}, which is not a number")
            variables[key] = number
        return variables

    def _plan(self, run: Run, phase, nodes: list, iteration: int, cache: dict | None = None) -> list:
        """One iteration of a phase on `nodes`: fixed delays merged, PFS transfers, async markers."""
        cache = run.plans if cache is None else cache
        uses_iteration = self._uses_iteration.get(id(phase))
        if uses_iteration is None:
            uses_iteration = self._uses_iteration[id(phase)] = "phase_iteration" in repr(phase.tasks)
        key = (id(phase), len(nodes), iteration if uses_iteration else 0)
        plan = cache.get(key)
        if plan is not None:
            return plan
        plan, pending = [], 0.0
        variables = self._variables(run, len(nodes), iteration)
        node_ids = np.asarray(nodes)
        source = run.spec.model.source

        def evaluate(value, where):
            if isinstance(value, str):
                return self.expressions.evaluate(value, variables, where=f"{where} (job {run.spec.position})",
                                                 source=source)
            return value

        def walk(tasks):
            nonlocal pending
            for task in tasks:
                repeat = int(evaluate(task.iterations, f"{task.where}: iterations"))
                if task.kind == "sequence":
                    for _ in range(repeat):
                        walk(task.tasks)
                    continue
                values = {key: evaluate(getattr(task, key), f"{task.where}: {key}")
                          for key in ("flops", "bytes", "delay") if getattr(task, key) is not None}
                try:
                    cost = task_cost(task, values, node_ids, run.gpus, self.platform)
                except InputError as error:
                    raise error.naming(source) from None
                for _ in range(repeat):
                    if isinstance(cost, PfsTransfer):
                        if pending:
                            plan.append(pending)
                            pending = 0.0
                        plan.append(cost)
                    elif task.asynchronous:
                        plan.append(("async", cost))
                    else:
                        pending += cost

        walk(phase.tasks)
        if pending:
            plan.append(pending)
        cache[key] = plan
        return plan

    def _program(self, run: Run):
        spec, model = run.spec, run.spec.model
        if model.on_init is not None:
            yield from self._one_time(run, model.on_init, run.nodes)
        elastic, evolving = spec.type in ELASTIC_TYPES, spec.type in ("evolving", "adaptive")
        remaining = sum(spec.phase_iterations)
        for phase, iterations in zip(model.phases, spec.phase_iterations):
            for iteration in range(iterations):
                if evolving and phase.evolving_request is not None:
                    yield _EVOLVE, self._evolving_request(run, phase, iteration)
                yield from self._plan(run, phase, run.nodes, iteration)
                remaining -= 1
                run.completed_phases += 1
                if remaining == 0:
                    break
                if elastic and phase.scheduling_point and (iteration < iterations - 1 or phase.final_scheduling_point):
                    yield _WAIT, None
                    yield _POINT, None
                    if run.reconfigured:
                        run.reconfigured = False
                        if model.on_reconfiguration is not None:
                            yield from self._one_time(run, model.on_reconfiguration, run.nodes)
                        if run.state == JobState.IN_RECONFIGURATION:
                            run.state = run.view.state = JobState.RUNNING
                        if model.on_expansion is not None and run.expanded:
                            yield from self._one_time(run, model.on_expansion, run.expanded)
        yield _WAIT, None

    def _one_time(self, run: Run, phase, nodes: list):
        for _ in range(int(phase.iterations)):
            yield from self._plan(run, phase, nodes, 0)
        yield _WAIT, None

    def _evolving_request(self, run: Run, phase, iteration: int) -> int:
        value = self.expressions.evaluate(phase.evolving_request, self._variables(run, len(run.nodes), iteration),
                                          where=f"{phase.where}: evolving_request (job {run.spec.position})",
                                          source=run.spec.model.source)
        request = int(value)
        if self.config.clip_evolving_requests:
            request = min(max(request, run.spec.num_nodes_min), run.spec.num_nodes_max)
        return request

    def _step(self, run: Run) -> None:
        """Advance a job's program until it waits for time, a PFS transfer or its async I/O; or ends."""
        token = run.token
        program = run.program
        if run.io_since >= 0:
            self._io_done(run)
        while True:
            try:
                item = next(program)
            except StopIteration:
                self._finish(run, JobState.COMPLETED)
                if self.config.schedule_on_job_finalize:
                    self._invoke(InvocationType.INVOKE_JOB_COMPLETED, run)
                return
            if item.__class__ is float:
                self._push(self.now + item, _RESUME, run, token)
                return
            if item.__class__ is PfsTransfer:
                transfer = Transfer(item.groups, (run, item))
                run.transfers.add(transfer)
                self._start_transfer(item.direction, transfer)
                if item.asynchronous:
                    run.async_transfers += 1
                    continue
                run.io_since = self.now
                return
            kind, value = item
            if kind == "async":
                run.async_until = max(run.async_until, self.now + value)
            elif kind == _WAIT:
                if run.async_transfers:
                    run.waiting_async = True
                    run.io_since = self.now
                    return
                if run.async_until > self.now:
                    self._push(run.async_until, _RESUME, run, token)
                    run.io_since = self.now
                    return
            elif kind == _POINT:
                self._scheduling_point(run)
                if run.token != token:
                    return
            elif kind == _EVOLVE:
                self._invoke(InvocationType.INVOKE_EVOLVING_REQUEST, run, value)
                if run.token != token:
                    return

    def _io_done(self, run: Run) -> None:
        if self.now > run.io_since:
            self.io_log.append((run.spec.identifier, run.io_since, self.now, run.nodes))
        run.io_since = -1.0

    # --- PFS transfers ----------------------------------------------------------------------------------------
    def _start_transfer(self, direction: str, transfer: Transfer) -> None:
        link = self.routes[direction]
        self._settle(link)
        link.transfers[transfer] = None
        self._reshare(link)

    def _cancel_transfer(self, transfer: Transfer) -> None:
        run, item = transfer.owner
        link = self.routes[item.direction]
        self._settle(link)
        link.transfers.pop(transfer, None)
        run.transfers.discard(transfer)
        self._reshare(link)

    def _settle(self, link: SharedLink) -> None:
        for transfer in link.advance(self.now):
            run, item = transfer.owner
            run.transfers.discard(transfer)
            if run.program is None:  # the job stopped while the transfer ended
                continue
            done = self.now + item.latency
            if item.asynchronous:
                run.async_transfers -= 1
                run.async_until = max(run.async_until, done)
                if run.waiting_async and not run.async_transfers:
                    run.waiting_async = False
                    self._push(max(done, run.async_until), _RESUME, run, run.token)
            else:
                self._push(done, _RESUME, run, run.token)

    def _reshare(self, link: SharedLink) -> None:
        if link.transfers:
            self._push(link.share(), _LINK, link, link.version)
        else:
            link.share()
        read, write = self.routes.get("pfs_read"), self.routes.get("pfs_write")
        self.pfs_log.append((self.now, read.throughput if read else 0.0, write.throughput if write else 0.0))

    def _link_event(self, link: SharedLink) -> None:
        self._settle(link)
        self._reshare(link)


def simulate(configuration: Configuration, platform: Platform, jobs: list[JobSpec], algorithm, *,
             expressions: Expressions | None = None, algorithm_name: str = "algorithm") -> Simulation:
    """Run one scenario; the finished `Simulation` holds the per-job runs and the logs."""
    return Simulation(configuration, platform, jobs, algorithm, expressions=expressions,
                      algorithm_name=algorithm_name).run()
