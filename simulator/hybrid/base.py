"""What every hybrid mechanism of 004 §III-B shares, around any queue scheduler: `Hybrid`, and the
interfaces of the two policies it is composed of (`NoticePolicy`, `ArrivalPolicy`).

The site policy (EASY by default) orders the waiting jobs; `Hybrid` acts on the four events of an
on-demand job and on running jobs, only through the engine's actions (start, resize, preempt,
reserve, release, at). What varies is composed in: a notice policy (`cosched.simulator.hybrid.
notice`: N, CUA, CUP) says what an advance notice does, an arrival policy (`cosched.simulator.
hybrid.arrival`: PAA, SPAA) how an arrived job short of nodes makes room. The rest is here:

- advance notice: reserve the idle nodes (the notice policy then collects or plans what is
  missing). Reserved nodes run waiting jobs expected to end by t_est, then malleable jobs; all of
  them are preempted at the arrival.
- actual arrival: start on the reserved and idle nodes if they suffice; else the arrival policy
  makes room. If even that cannot, the job waits at the front of the queue: [impl] it reserves every
  node that becomes idle until it can start.
- 10 min after t_est without an arrival: release the reservation (a later arrival is handled as no
  notice).
- completion: lenders get their nodes back: a preempted job still waiting starts if it fits now, a
  shrunk job still running grows back to its size before the shrink as far as idle nodes allow.

[impl] One promise per node: a job or node promised to an on-demand job (reserved, earmarked or
planned for preemption by CUP, warned, lent its reserved nodes) goes to no other until that job
starts or gives it up. An arrived job comes before an announced one (it is there; the announced one
may not come): it may take a job promised to an announced job, which then plans again, and while it
waits the nodes that become free go to it before announced reservations and lenders.

[impl] The queue head, if malleable and too big for the idle nodes, starts on them when they reach
n_min (004 Obs. 6). Preemption overheads compare in wall seconds. A preempted job returns to the
queue at its submit position and its estimate shrinks by the work it kept (the engine's rule).
"""

from __future__ import annotations

import gc
import math
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from itertools import islice
from typing import TYPE_CHECKING, Any, ClassVar, cast

import numpy as np

from cosched.errors import InputError
from cosched.simulator.hybrid.workload import HybridWorkload
from cosched.simulator.jobs import JobKind, JobState
from cosched.simulator.schedulers.base import Scheduler

if TYPE_CHECKING:
    from cosched.simulator.allocators import Allocation, Allocator
    from cosched.simulator.platform import Platform
    from cosched.simulator.view import SchedulerView

__all__ = [
    "Hybrid",
    "NoticePolicy",
    "ArrivalPolicy",
    "MECHANISM_OPTIONS",
    "RIGID_OVERHEADS",
    "REGROW",
    "WARNING",
    "RELEASE_AFTER",
    "PREEMPTED",
    "SHRUNK",
    "check_site_policy",
    "allocations",
]

RIGID_OVERHEADS = ("elapsed", "lost-work")  # preemption cost of a rigid job without checkpoints
REGROW = ("n_max", "pre-shrink")  # how far a shrunk lender grows back when its on-demand job ends
MECHANISM_OPTIONS = ("rigid_overhead", "warning", "regrow")  # keyword options of `Hybrid`
WARNING = 120.0  # 004 §III-A: seconds from a malleable job's warning to its shrink or preemption
RELEASE_AFTER = 600.0  # 004 §IV-B: reservation released 10 min after the estimated arrival
PREEMPTED, SHRUNK = "preempted", "shrunk"  # how a lender gave its nodes (see `Hybrid.lenders`)
WAITING, RUNNING = int(JobState.WAITING), int(JobState.RUNNING)


def allocations(engine: SchedulerView) -> list[Allocation]:
    """The engine's allocation per job, as the mechanisms read it: only for running jobs, which
    hold one (no check per read: PAA and CUP read every running job's)."""
    return cast("list[Allocation]", engine.allocation)


def check_site_policy(inner: Scheduler) -> None:
    """InputError for a queue scheduler that cannot share the machine with a mechanism
    (Conservative, or a co-scheduler: jobs must hold whole nodes to be shrunk)."""
    if getattr(inner, "co_located", False):
        raise InputError(
            f"{inner.name} shares nodes between jobs; the hybrid mechanisms need whole nodes: use "
            "easy, fcfs, sjf or ljf",
            field="scheduler",
        )
    if getattr(inner, "backfill", None) == "conservative":
        raise InputError(
            "conservative backfilling books every job it starts in its own profile, so it cannot "
            "run beside a mechanism that starts and preempts jobs; use easy, fcfs, sjf or ljf",
            field="scheduler",
        )


class NoticePolicy:
    """What a mechanism does for an announced on-demand job before it arrives; the hooks default to
    doing nothing. ``mechanism`` is the `Hybrid` it serves: its bookkeeping and actions."""

    name: ClassVar[str] = "notice"  # the first half of a mechanism's name (``cua`` in cua-paa)
    announced: ClassVar[bool] = True  # False: notices are not even scheduled (N)

    def __init__(self, mechanism: Hybrid) -> None:
        self.mechanism = mechanism

    def wanted(self, od: int) -> int:
        """Nodes to hold for announced `od` before it arrives: its size."""
        return int(self.mechanism.n_max[od])

    def short(self, engine: SchedulerView, od: int) -> None:
        """Announced `od` holds the idle nodes and still lacks some (`Hybrid.need`)."""

    def reserved_lost(self, od: int) -> None:
        """`od` lost reserved nodes (a failure, or an arrived job took them)."""

    def promise_lost(self, od: int) -> None:
        """`od` lost nodes it was promised (its borrower or promised job went to an arrived job, or
        was stopped)."""

    def withdraw(self, engine: SchedulerView, job: int, replan: bool = True) -> dict[int, int]:
        """Withdraw the announced jobs' promises on running `job` ({announced job: nodes}): it
        ended, was preempted or an arrived job took it; with `replan`, they plan again."""
        return {}

    def drop(self, engine: SchedulerView, od: int) -> None:
        """`od` arrived or timed out: its plans end."""

    def replan(self, engine: SchedulerView) -> None:
        """In the pass, before the arrived jobs collect idle nodes."""

    def collect(self, engine: SchedulerView) -> None:
        """In the pass, after the arrived jobs collected idle nodes, before the site policy."""


class ArrivalPolicy(ABC):
    """How arrived on-demand jobs make room; ``mechanism`` is the `Hybrid` it serves. A policy
    must say how (`make_room`): a class without it cannot be built."""

    name: ClassVar[str] = "arrival"  # the second half of a mechanism's name (``paa`` in cua-paa)

    def __init__(self, mechanism: Hybrid) -> None:
        self.mechanism = mechanism

    @abstractmethod
    def make_room(self, engine: SchedulerView, od: int, need: int) -> bool:
        """Free (or plan to free, after a warning) `need` nodes for arrived `od` through
        `Hybrid.act`, recording each lender in ``mechanism.lenders[od]``; False if it cannot."""


class Hybrid(Scheduler):
    """A hybrid mechanism around the queue scheduler `inner`: the notice policy `notice_policy`
    and the arrival policy `arrival_policy` (class attributes a mechanism class sets) over the
    bookkeeping every mechanism shares.

    periods: seconds of run between completed checkpoints per job (NaN: none), from
    `checkpoint_periods`. After the run: ``shrinks`` per job, the decision times ``decisions``
    (seconds) and, with `log_reservations`, ``reservation_log`` (time, on-demand job, +nodes
    reserved / -nodes released). ``notice`` and ``arrival`` are the policies' instances.
    """

    notice_policy: ClassVar[type[NoticePolicy] | None] = None
    arrival_policy: ClassVar[type[ArrivalPolicy] | None] = None

    def __init__(
        self,
        inner: Scheduler,
        hybrid: HybridWorkload,
        periods: np.ndarray,
        log_reservations: bool = False,
        *,
        rigid_overhead: str = "elapsed",
        warning: float = WARNING,
        regrow: str = "n_max",
    ) -> None:
        if self.notice_policy is None or self.arrival_policy is None:
            raise InputError(
                f"{type(self).__name__} is no mechanism: it sets no notice_policy or no "
                "arrival_policy",
                field="hybrid",
            )
        if rigid_overhead not in RIGID_OVERHEADS:
            raise InputError(
                f"unknown rigid_overhead {rigid_overhead!r}; known: {', '.join(RIGID_OVERHEADS)}",
                field="rigid_overhead",
            )
        if regrow not in REGROW:
            raise InputError(
                f"unknown regrow {regrow!r}; known: {', '.join(REGROW)}", field="regrow"
            )
        if not (math.isfinite(warning) and warning >= 0):
            raise InputError(
                f"the preemption warning must be >= 0 seconds, got {warning}", field="warning"
            )
        self.rigid_overhead, self.warning, self.regrow = rigid_overhead, float(warning), regrow
        check_site_policy(inner)
        self.inner = inner
        self.depth = getattr(inner, "depth", 100)
        self.type = hybrid.job_type.tolist()
        self.n_min, self.n_max = hybrid.n_min.tolist(), hybrid.n_max.tolist()
        self.setup, self.period = hybrid.setup.tolist(), periods.tolist()
        self.t_est = hybrid.estimated_arrival.tolist()
        self.notice_time = hybrid.notice_time.tolist()
        jobs = len(hybrid)
        self.shrinks = [0] * jobs
        self.decisions: list[float] = []
        self.reservation_log: list[tuple[float, int, int]] | None = [] if log_reservations else None
        self.held: dict[int, list[Any]] = {}  # on-demand job -> its reservations
        self.reserved: dict[int, int] = {}  # on-demand job -> nodes in its reservations
        self.collecting: dict[int, None] = {}  # noticed, not arrived, not released: in notice order
        self.borrowers: dict[
            int, set[int]
        ] = {}  # on-demand job -> jobs running on its reserved nodes
        self.borrower_of: dict[int, int] = {}
        # (time, job, seconds of a checkpoint write a preemption interrupted): not lost work
        self.interrupted_writes: list[tuple[float, int, float]] = []
        self._lost_seen = [0.0] * len(hybrid)
        # on-demand job -> [(job, nodes, PREEMPTED or SHRUNK, size before)]
        self.lenders: dict[int, list[tuple[int, int, str, int]]] = {}
        self.arrivals: list[int] = []
        self.blocked: dict[int, None] = {}  # arrived on-demand jobs waiting at the queue front
        # on-demand job -> [(malleable job, nodes to give up, start, PREEMPTED or SHRUNK)]
        self.warned: dict[int, list[tuple[int, int, float, str]]] = {}
        self.victim_of: dict[int, int] = {}  # warned malleable job -> its on-demand job
        # on-demand jobs started by their arrival's decision (after a warning)
        self.instant: set[int] = set()
        self._window_seen: set[int] = set()
        # on-demand jobs whose reservation grew since the last lending pass
        self._grew: set[int] = set()
        # arrivals and preemptions so far (the queue's other change is a start)
        self._queue_changes = 0
        self._window_key: tuple[int, int] | None = None
        self.notice = self.notice_policy(self)
        self.arrival = self.arrival_policy(self)
        self.name = f"{self.notice.name}-{self.arrival.name}"

    # --- plumbing ---------------------------------------------------------------------------------
    def make_allocator(self, platform: Platform, placement: str | None = None) -> Allocator:
        return self.inner.make_allocator(platform, placement=placement)

    def attach(self, engine: SchedulerView) -> None:
        self.inner.attach(engine)
        # the engine's checkpoint period per job (interval + write), NaN for none: the same float it
        # uses
        models = engine.models
        self._every = (
            list(self.period)
            if models is None
            else [math.nan if m.checkpoint.period is None else m.checkpoint.period for m in models]
        )
        if not self.notice.announced:
            return
        on_demand = JobKind.ON_DEMAND
        for job, when in enumerate(self.notice_time):
            if self.type[job] is on_demand and not math.isnan(when):  # noticed (NaN: no notice)
                self.later(engine, when, self._notice, job)
                self.later(engine, self.t_est[job] + RELEASE_AFTER, self._timeout, job)

    def later(
        self, engine: SchedulerView, when: float, decision: Callable[..., None], *args: Any
    ) -> None:
        """Make the decision `decision(engine, *args)` at `when` (`timed`)."""
        engine.at(when, lambda e: self.timed(decision, e, *args))

    def timed(self, decision: Callable[..., None], engine: SchedulerView, *args: Any) -> None:
        """Make the decision `decision(engine, *args)`, adding its time to ``decisions``."""
        # CPU time: a decision descheduled on a shared machine costs no more. The garbage collector
        # waits until the decision is over: a full collection scans the whole simulation's heap
        # (tens of ms on a whole trace), work that is not the decision's own
        collecting = gc.isenabled()
        gc.disable()
        clock = time.thread_time()
        try:
            decision(engine, *args)
        finally:
            self.decisions.append(time.thread_time() - clock)
            if collecting:
                gc.enable()

    def on_arrival(self, engine: SchedulerView, job: int) -> None:
        self.inner.on_arrival(engine, job)
        self._queue_changes += 1
        if self.type[job] is JobKind.ON_DEMAND:
            self.arrivals.append(job)

    def on_preempt(self, engine: SchedulerView, job: int) -> None:
        self.inner.on_preempt(engine, job)
        self._queue_changes += 1
        self._note_interrupted_write(engine, job)
        owner = self.borrower_of.pop(job, None)
        if owner is not None:
            self.borrowers[owner].discard(job)
            self.notice.promise_lost(owner)
        self.notice.withdraw(engine, job)
        self.victim_of.pop(job, None)
        if self.type[job] is JobKind.ON_DEMAND:
            # [impl] only a node failure stops one: it restarts as a new arrival
            self.arrivals.append(job)

    def _note_interrupted_write(self, engine: SchedulerView, job: int) -> None:
        """Record the part of the work a preemption lost that was a checkpoint write in progress:
        it is not redone as work (the lost work counts only the work redone)."""
        lost = engine.lost[job] - self._lost_seen[job]
        self._lost_seen[job] = engine.lost[job]
        checkpoint = engine.model(job).checkpoint
        if checkpoint.interval is not None and checkpoint.cost > 0:
            # a period is `interval` of work, then a write of `cost`: the run since the last
            # completed checkpoint passed into the write by lost - interval
            writing = lost - checkpoint.interval
            if writing > 0:
                self.interrupted_writes.append((engine.now, job, writing))

    def on_revoke(self, engine: SchedulerView, reservation: Any, rest: Any) -> None:
        """A reserved node was taken back (a failure): it leaves its on-demand job's reservation."""
        key = reservation.key
        for od, held in self.held.items():
            for index, mine in enumerate(held):
                if mine.key == key:
                    if rest is not None:
                        held[index] = rest
                    else:
                        del held[index]
                    self.reserved[od] -= 1
                    if self.reservation_log is not None:
                        self.reservation_log.append((engine.now, od, -1))
                    self.notice.reserved_lost(od)
                    return

    def on_finish(self, engine: SchedulerView, job: int) -> None:
        self.inner.on_finish(engine, job)
        nodes = allocations(engine)[job].nodes
        owner = self.victim_of.pop(job, None)
        if owner is not None:  # a warned job ended in its warning: its arrived job gets its nodes
            self.take(
                engine,
                owner,
                min(nodes.size, self.n_max[owner] - self.reserved.get(owner, 0)),
                nodes,
                why="warning",
            )
            nodes = nodes[engine.is_idle(nodes)]
        owner = self.borrower_of.pop(job, None)
        if owner is not None:  # a job on reserved nodes ended: the nodes go back to the reservation
            self.borrowers[owner].discard(job)
            self.take(engine, owner, min(nodes.size, self.need(engine, owner)), nodes)
            nodes = nodes[engine.is_idle(nodes)]
        # CUP: a job earmarked (or doomed) for announced jobs ended: each gets what it was promised
        for od, count in self.notice.withdraw(engine, job, replan=False).items():
            nodes = nodes[engine.is_idle(nodes)]
            self.take(engine, od, min(nodes.size, count, self.need(engine, od)), nodes)
        if job in self.lenders:
            self.timed(self._give_back, engine, job)

    # --- reservations -----------------------------------------------------------------------------
    def _arrived_short(self) -> int:
        """Nodes the arrived on-demand jobs still lack (in their warning or waiting first)."""
        reserved, size = self.reserved, self.n_max
        return sum(
            max(size[od] - reserved.get(od, 0), 0)
            for group in (self.warned, self.blocked)
            for od in group
        )

    def take(
        self,
        engine: SchedulerView,
        od: int,
        count: int,
        nodes: np.ndarray | None = None,
        why: str = "collect",
    ) -> int:
        """Reserve `count` nodes for `od`: the first of `nodes` (idle), or the lowest idle ones.

        An announced job takes only what the arrived ones waiting do not need: an arrived job
        comes first (it is there; the announced one may not come). Returns the count reserved.
        """
        if od in self.collecting and why != "lend" and count > 0 and (self.warned or self.blocked):
            count = min(count, engine.free_nodes() - self._arrived_short())
        if count <= 0:
            return 0
        reservation = engine.reserve(
            count if nodes is None else nodes[:count], reason=f"{why}:{od}"
        )
        self.held.setdefault(od, []).append(reservation)
        self.reserved[od] = self.reserved.get(od, 0) + count
        if why != "lend":  # lending gives back less than it took: not a growth
            self._grew.add(od)
        if self.reservation_log is not None:
            self.reservation_log.append((engine.now, od, count))
        return count

    def _release_all(self, engine: SchedulerView, od: int, why: str) -> np.ndarray:
        """Release every reservation of `od`; their node ids."""
        held = self.held.pop(od, [])
        for reservation in held:
            engine.release(reservation, reason=f"{why}:{od}")
        count = self.reserved.pop(od, 0)
        if count and self.reservation_log is not None:
            self.reservation_log.append((engine.now, od, -count))
        return np.concatenate([r.nodes for r in held]) if held else np.zeros(0, dtype=np.int64)

    def need(self, engine: SchedulerView, od: int) -> int:
        """Nodes announced `od` still lacks: what its notice policy wants held, less its reserved
        nodes and the nodes lent to running jobs."""
        borrowers, allocation = self.borrowers.get(od), allocations(engine)
        lent = sum(allocation[job].nodes.size for job in borrowers) if borrowers else 0
        return self.notice.wanted(od) - self.reserved.get(od, 0) - lent

    # --- advance notice, estimated arrival --------------------------------------------------------
    def _notice(self, engine: SchedulerView, od: int) -> None:
        """004 §III-B.1: reserve the idle nodes; the notice policy handles what is missing."""
        self.collecting[od] = None
        self.borrowers[od] = set()
        self.lenders.setdefault(od, [])
        self.take(engine, od, min(engine.free_nodes(), self.notice.wanted(od)), why="notice")
        if self.need(engine, od) > 0:
            self.notice.short(engine, od)

    def _timeout(self, engine: SchedulerView, od: int) -> None:
        """004 §III-B.3: not arrived 10 min after t_est: release the reservation."""
        if od not in self.collecting:
            return
        del self.collecting[od]
        self.notice.drop(engine, od)
        self._release_all(engine, od, "timeout")
        for job in self.borrowers.pop(od, ()):
            del self.borrower_of[job]

    # --- arrival ----------------------------------------------------------------------------------
    def _arrive(self, engine: SchedulerView, od: int) -> None:
        """004 §III-B.2: start on reserved + idle nodes, else the arrival policy makes room, else
        wait first."""
        self.collecting.pop(od, None)
        self.notice.drop(engine, od)
        self.lenders.setdefault(od, [])
        for job in self.borrowers.pop(od, ()):  # jobs on its reserved nodes are preempted at once
            del self.borrower_of[job]
            engine.preempt(job, reason=f"arrival:{od}")
        own = self._release_all(engine, od, "arrival")
        need = self.n_max[od] - engine.free_nodes()
        make_room = self.arrival.make_room
        if need > 0 and not make_room(engine, od, need):
            self._unreserve_announced(engine, need)
            need = self.n_max[od] - engine.free_nodes()
            if need > 0 and not make_room(engine, od, need):
                # behind the on-demand jobs already waiting: it collects after them
                self.blocked[od] = None
                return
        if od in self.warned:  # 004 §III-A: malleable jobs get their two-minute warning first
            self.take(engine, od, min(own.size, self.n_max[od]), own, why="warning")
            self.take(
                engine,
                od,
                min(engine.free_nodes(), self.n_max[od] - self.reserved.get(od, 0)),
                why="warning",
            )
            self.later(engine, engine.now + self.warning, self._after_warning, od)
            return
        self._start(engine, od, own, "arrival")

    def _unreserve_announced(self, engine: SchedulerView, need: int) -> None:
        """[impl] An arrived job short of nodes frees those held for announced ones, latest t_est
        first."""
        for other in sorted(self.collecting, key=self.t_est.__getitem__, reverse=True):
            if need <= 0:
                break
            held = self._release_all(engine, other, "yield")
            need -= held.size
            self.notice.reserved_lost(other)  # CUA collects again; CUP's arrival rule makes up

    def _start(self, engine: SchedulerView, od: int, own: np.ndarray, why: str) -> None:
        """Start `od` now on its own (just released) nodes first, then the lowest idle ones."""
        want = self.n_max[od] - own.size
        if want > 0:
            others = engine.idle_nodes(want + own.size)
            others = others[~np.isin(others, own)][:want]
            nodes = np.concatenate([own, others])
        else:
            nodes = own[: self.n_max[od]]
        if why in ("arrival", "warning") and engine.first_start[od] != engine.first_start[od]:
            self.instant.add(od)  # its arrival's decision started it (after the warning: 004 §IV-D)
        engine.start(od, np.sort(nodes), reason=f"{why}:{od}")

    def act(self, engine: SchedulerView, od: int, job: int, keep: int) -> None:
        """Shrink malleable `job` to `keep` nodes (0: preempt it) for arrived `od`: at once, or
        after the warning. The promises of its nodes to announced jobs (CUP's earmark or planned
        preemption, lent reserved nodes) are withdrawn and those jobs plan again: one promise per
        node, an arrived job comes first."""
        self.notice.withdraw(engine, job)
        owner = self.borrower_of.pop(job, None)
        if owner is not None:
            self.borrowers[owner].discard(job)
            self.notice.promise_lost(owner)
        if self.warning and self.type[job] is JobKind.MALLEABLE:
            size = allocations(engine)[job].nodes.size
            how = SHRUNK if keep else PREEMPTED
            self.warned.setdefault(od, []).append((job, size - keep, engine.started[job], how))
            self.victim_of[job] = od
            engine.note("warn", job, f"{'spaa' if keep else 'paa'}:{od}")
        elif keep:
            # the engine rescales its remaining time (linear speed-up)
            engine.resize(job, keep, reason=f"spaa:{od}")
            self.shrinks[job] += 1
        else:
            engine.preempt(job, reason=f"paa:{od}")

    def _after_warning(self, engine: SchedulerView, od: int) -> None:
        """The warning is over: the warned jobs shrink or stop, `od` starts on its nodes (else waits
        first). The nodes freed now are idle until the start, in this same decision: nobody else
        acts in between, so they are not reserved on the way."""
        if od not in self.warned:
            return  # it started earlier: jobs that ended during the warning gave it all its nodes
        for job, amount, started, how in self.warned.pop(od):
            self.victim_of.pop(job, None)
            if engine.state[job] != RUNNING or engine.started[job] != started:
                continue  # it ended (its nodes were reserved then) or was stopped by a failure
            if how == PREEMPTED:
                engine.preempt(job, reason=f"paa:{od}")
                continue
            # the shrink re-planned from its size now: it may have grown back meanwhile
            size = allocations(engine)[job].nodes.size
            keep = max(size - amount, self.n_min[job])
            if keep >= size:
                engine.note("unwarn", job, f"warning:{od}")
                continue
            engine.resize(job, keep, reason=f"spaa:{od}")  # the engine picks the nodes to free
            self.shrinks[job] += 1
        if self.reserved.get(od, 0) + engine.free_nodes() >= self.n_max[od]:
            self._start(engine, od, self._release_all(engine, od, "warning"), "warning")
        else:
            # too few (a failure, or waiting on-demand jobs took nodes): it waits behind those
            # waiting; only the first waiting job may hold nodes (no deadlock)
            self._release_all(engine, od, "front")
            self.blocked[od] = None

    def by_overhead(self, engine: SchedulerView, jobs: list[int]) -> list[int]:
        """`jobs` sorted by ascending preemption overhead in wall seconds (004 §III-B, PAA), ties
        by index.

        malleable: its setup (004 Obs. 8); rigid with checkpoints: the work since its last completed
        checkpoint + its setup; rigid without: its elapsed time since it (re)started (``elapsed``,
        the paper's), or the work it would lose + its setup (``lost-work``). Checkpoint progress is
        the engine's exact count (as `engine.work_done` and `engine.checkpointed_work` compute it,
        in one loop: a PAA decision ranks every running job), so a job that has just resumed costs
        only its setup.
        """
        now, kinds, setup, period = engine.now, self.type, self.setup, self._every
        started, updated, rate = engine.started, engine.updated, engine.rate
        work, remaining, checkpoints = engine.work, engine.remaining, engine.checkpoints
        elapsed_reading = self.rigid_overhead == "elapsed"
        malleable = JobKind.MALLEABLE
        keyed = []
        for job in jobs:
            if kinds[job] is malleable:
                cost = setup[job]
            else:
                every = period[job]
                if every != every:  # NaN: no checkpoints
                    if elapsed_reading:
                        keyed.append((now - started[job], job))  # 004 §III-B: t_now - t_start
                        continue
                    kept = 0.0
                    done = work[job] - (remaining[job] - max(0.0, now - updated[job]) * rate[job])
                else:
                    done = work[job] - (remaining[job] - max(0.0, now - updated[job]) * rate[job])
                    kept = max(checkpoints[job], math.floor(done / every), 0) * every
                # 004 §III-B: (t_now - t_last_ckpt) + t_setup
                cost = max(done - kept, 0.0) + setup[job]
            keyed.append((cost, job))
        keyed.sort()
        return [job for _, job in keyed]

    # --- completion -------------------------------------------------------------------------------
    def _give_back(self, engine: SchedulerView, od: int) -> None:
        """004 §III-B.4: a preempted lender still waiting resumes if it fits; a shrunk one grows
        back. [impl] Arrived on-demand jobs still waiting come first: lenders get only the idle
        nodes those do not need."""
        for job, _, how, size in self.lenders.pop(od):
            idle = engine.free_nodes()
            if self.warned or self.blocked:
                idle -= self._arrived_short()
            if how == PREEMPTED and engine.state[job] == WAITING:
                if self.type[job] is JobKind.MALLEABLE:
                    if idle >= self.n_min[job]:
                        engine.start(job, min(idle, self.n_max[job]), reason=f"give-back:{od}")
                else:
                    engine.start(job, reason=f"give-back:{od}")
            elif how == SHRUNK and engine.state[job] == RUNNING:
                current = allocations(engine)[job].nodes.size
                # 004 §III-B.4 "expanded to its original size": n_max, the size it asked for
                # (pre-shrink: the size it had before this shrink)
                target = min(self.n_max[job] if self.regrow == "n_max" else size, current + idle)
                if target > current:
                    engine.resize(job, target, reason=f"give-back:{od}")

    # --- the pass ---------------------------------------------------------------------------------
    def schedule(self, engine: SchedulerView) -> None:
        if self.arrivals:
            arrivals, self.arrivals = self.arrivals, []
            for od in arrivals:
                self.timed(self._arrive, engine, od)
        self.notice.replan(engine)  # before the arrived jobs collect: a re-plan may free nodes now
        if self.warned:
            self._collect_warned(engine)
        if self.blocked:
            self._collect_blocked(engine)
        self.notice.collect(engine)
        self.inner.schedule(engine)
        while self._start_head_malleable(engine):
            self.inner.schedule(engine)
        self._lend_reserved(engine)

    def _collect_warned(self, engine: SchedulerView) -> None:
        """On-demand jobs that warned malleable jobs on arrival collect idle nodes and start early
        if these suffice (the warned jobs then keep running as they are)."""
        for od in list(self.warned):
            short = self.n_max[od] - self.reserved.get(od, 0)
            if short > 0:
                self.take(engine, od, min(engine.free_nodes(), short), why="warning")
            if self.reserved.get(od, 0) >= self.n_max[od]:
                for job, *_ in self.warned.pop(od):
                    if self.victim_of.pop(job, None) is not None and engine.state[job] == RUNNING:
                        engine.note("unwarn", job, f"warning:{od}")
                self._start(engine, od, self._release_all(engine, od, "warning"), "warning")

    def _collect_blocked(self, engine: SchedulerView) -> None:
        """On-demand jobs waiting at the queue front collect idle nodes until they fit."""
        for od in list(self.blocked):
            short = self.n_max[od] - self.reserved.get(od, 0)
            self.take(engine, od, min(engine.free_nodes(), short), why="front")
            if self.reserved.get(od, 0) >= self.n_max[od]:
                del self.blocked[od]
                self._start(engine, od, self._release_all(engine, od, "front"), "front")

    def _start_head_malleable(self, engine: SchedulerView) -> bool:
        """[impl] The queue head, malleable and too big for the idle nodes, starts on them if they
        are at least n_min."""
        if not engine.waiting:
            return False
        head = next(iter(engine.waiting))
        idle = engine.free_nodes()
        if (
            self.type[head] is not JobKind.MALLEABLE
            or not self.n_min[head] <= idle < self.n_max[head]
        ):
            return False
        return bool(engine.start(head, idle, reason="head-malleable"))

    def _lend_reserved(self, engine: SchedulerView) -> None:
        """004 §III-B.1: reserved nodes run waiting jobs expected to end by t_est, then malleable
        jobs.

        Incremental: a job that did not fit keeps not fitting as time passes, so only jobs new to
        the window are checked, and the whole window only for a reservation that grew.
        """
        if not self.collecting:
            self._grew.clear()
            return
        # the queue changes only by arrivals, preemptions and starts (which shorten it): if none
        # happened since the last pass and no reservation grew, nothing new can fit (no rescan of
        # the queue)
        key = (len(engine.waiting), self._queue_changes)
        if not self._grew and key == self._window_key:
            return
        kind, state = self.type, engine.state
        on_demand, malleable = JobKind.ON_DEMAND, JobKind.MALLEABLE
        window = [
            job for job in islice(engine.waiting, self.depth + 1) if kind[job] is not on_demand
        ]
        seen = self._window_seen
        fresh = [job for job in window if job not in seen]
        self._window_seen = set(window)
        reserved = self.reserved
        grown = {od for od in self._grew if od in self.collecting and reserved.get(od)}
        self._grew = set()
        if fresh or grown:
            spares = {od: count for od in self.collecting if (count := reserved.get(od))}
            now, duration = engine.now, engine.queued_duration
            ends: dict[int, float] = {}  # job -> its expected end if started now
            for od, spare in spares.items():
                jobs = window if od in grown else fresh
                if not jobs:
                    continue
                t_est = self.t_est[od]
                for job in jobs:  # first the jobs expected to end by t_est
                    size = self.n_max[job]
                    if size > spare or state[job] != WAITING:
                        continue
                    end = ends.get(job)
                    if end is None:  # setup and checkpoint writes included
                        ends[job] = end = now + duration[job]
                    if end <= t_est:
                        self._lend(engine, od, job, size)
                        spare -= size
                for job in jobs:  # then malleable jobs, preempted at the arrival
                    if (
                        kind[job] is malleable
                        and self.n_min[job] <= spare
                        and state[job] == WAITING
                    ):
                        size = min(spare, self.n_max[job])
                        self._lend(engine, od, job, size)
                        spare -= size
        self._grew.clear()  # lending re-reserves the rest of what it took: not a growth either
        self._window_key = (len(engine.waiting), self._queue_changes)

    def _lend(self, engine: SchedulerView, od: int, job: int, size: int) -> None:
        """Start `job` on `size` of the nodes reserved for `od`."""
        held = self.held[od]
        pieces: list[np.ndarray] = []
        while sum(n.size for n in pieces) < size:
            reservation = held.pop()
            engine.release(reservation, reason=f"lend:{od}")
            pieces.append(reservation.nodes)
        nodes = np.concatenate(pieces)
        engine.start(job, np.sort(nodes[:size]), reason=f"lend:{od}")
        self.reserved[od] -= nodes.size
        if self.reservation_log is not None:
            self.reservation_log.append((engine.now, od, -nodes.size))
        self.take(engine, od, nodes.size - size, nodes[size:], why="lend")
        self.borrowers[od].add(job)
        self.borrower_of[job] = od
