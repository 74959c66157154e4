"""The six hybrid mechanisms of 004 §III-B, {N, CUA, CUP} x {PAA, SPAA}, around any queue scheduler.

The site policy (EASY by default) orders the waiting jobs; `Hybrid` acts on the four events of an
on-demand job and on running jobs, only through the engine's actions (start, resize, preempt,
reserve, release, at):

- advance notice (CUA, CUP): reserve the idle nodes. CUA then keeps reserving the nodes that become
  idle until the actual arrival (competing jobs served earliest notice first). CUP earmarks the
  running jobs whose estimated end comes before the estimated arrival t_est (their nodes are
  reserved when they end) and, if still short, plans preemptions by ascending overhead: a rigid job
  right after its next checkpoint if that completes by t_est, else at once; [impl] a malleable job
  at t_est (its two-minute warning loses nothing). Reserved nodes run waiting jobs expected to end
  by t_est, then malleable jobs; all of them are preempted at the arrival.
- actual arrival: start on the reserved and idle nodes if they suffice; else SPAA shrinks the
  running malleable jobs as evenly as possible if they can supply the missing nodes, and PAA (or
  SPAA when they cannot) preempts running rigid and malleable jobs by ascending overhead (malleable:
  its setup; rigid: the work since its last checkpoint plus its setup). If even all of them are too
  few, the job waits at the front of the queue: [impl] it reserves every node that becomes idle
  until it can start.
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
from itertools import islice

import numpy as np

from cosched.errors import InputError
from cosched.names import resolve_name
from cosched.simulator.hybrid.workload import HybridWorkload
from cosched.simulator.jobs import JobKind, JobState
from cosched.simulator.schedulers.base import Scheduler

__all__ = [
    "Hybrid",
    "MECHANISMS",
    "MECHANISM_OPTIONS",
    "RIGID_OVERHEADS",
    "REGROW",
    "WARNING",
    "NOTICE_POLICIES",
    "ARRIVAL_POLICIES",
    "parse_mechanism",
    "water_fill",
    "check_site_policy",
    "RELEASE_AFTER",
    "CHECKPOINT_SLACK",
]

NOTICE_POLICIES = ("n", "cua", "cup")
ARRIVAL_POLICIES = ("paa", "spaa")
MECHANISMS = ("baseline",) + tuple(f"{n}-{a}" for n in NOTICE_POLICIES for a in ARRIVAL_POLICIES)
RIGID_OVERHEADS = ("elapsed", "lost-work")  # preemption cost of a rigid job without checkpoints
REGROW = ("n_max", "pre-shrink")  # how far a shrunk lender grows back when its on-demand job ends
MECHANISM_OPTIONS = ("rigid_overhead", "warning", "regrow")  # keyword options of `Hybrid`
WARNING = 120.0  # 004 §III-A: seconds from a malleable job's warning to its shrink or preemption
RELEASE_AFTER = 600.0  # 004 §IV-B: reservation released 10 min after the estimated arrival
# seconds after a checkpoint completes: a preemption then keeps it despite rounding
CHECKPOINT_SLACK = 1e-3
PREEMPTED, SHRUNK = "preempted", "shrunk"
WAITING, RUNNING = int(JobState.WAITING), int(JobState.RUNNING)


def parse_mechanism(name: str) -> tuple[str, str] | None:
    """(notice policy, arrival policy) of a mechanism name; None for the baseline."""
    key = resolve_name(name.strip().replace("&", "-"), MECHANISMS, "mechanism", field="hybrid")
    if key == "baseline":
        return None
    notice, arrival = key.split("-")
    return notice, arrival


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


def water_fill(caps: list[int], need: int) -> list[int]:
    """Nodes to take from each job, as evenly as possible within `caps`, summing to `need` (004
    §III-B, SPAA).

    [impl] Equal shares, the jobs with the smallest caps first; caps must sum to at least `need`.
    """
    amounts = [0] * len(caps)
    left = need
    order = sorted(range(len(caps)), key=caps.__getitem__)
    for rank, index in enumerate(order):
        share = -(-left // (len(caps) - rank))
        amounts[index] = taken = min(caps[index], share)
        left -= taken
    return amounts


class Hybrid(Scheduler):
    """A hybrid mechanism (notice policy n/cua/cup, arrival policy paa/spaa) around the queue
    scheduler `inner`.

    periods: seconds of run between completed checkpoints per job (NaN: none), from
    `checkpoint_periods`. After the run: ``shrinks`` per job, the decision times ``decisions``
    (seconds) and, with `log_reservations`, ``reservation_log`` (time, on-demand job, +nodes
    reserved / -nodes released).
    """

    def __init__(
        self,
        inner: Scheduler,
        hybrid: HybridWorkload,
        periods: np.ndarray,
        notice: str = "cua",
        arrival: str = "paa",
        log_reservations: bool = False,
        *,
        rigid_overhead: str = "elapsed",
        warning: float = WARNING,
        regrow: str = "n_max",
    ):
        if notice not in NOTICE_POLICIES or arrival not in ARRIVAL_POLICIES:
            raise InputError(
                f"unknown mechanism {notice}-{arrival}; use {', '.join(MECHANISMS[1:])}",
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
        self.inner, self.notice, self.arrival = inner, notice, arrival
        self.name = f"{notice}-{arrival}"
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
        self.held: dict[int, list] = {}  # on-demand job -> its reservations
        self.reserved: dict[int, int] = {}  # on-demand job -> nodes in its reservations
        self.collecting: dict[int, None] = {}  # noticed, not arrived, not released: in notice order
        self.borrowers: dict[int, set] = {}  # on-demand job -> jobs running on its reserved nodes
        self.borrower_of: dict[int, int] = {}
        # CUP: running job -> {announced job: nodes it gets at the job's end}
        self.earmark: dict[int, dict[int, int]] = {}
        self.doomed: dict[int, int] = {}  # CUP: job with a planned preemption -> announced job
        # CUP: announced job -> {earmarked or doomed job: nodes promised}
        self.promises: dict[int, dict[int, int]] = {}
        self.cup_warned: set[int] = set()  # doomed malleable jobs whose CUP warning is pending
        self.plan_of: dict[int, int] = {}  # doomed job -> the number of the plan its timer serves
        self._plans = 0
        # announced jobs that lost a promise: re-planned before the site policy's pass
        self.replans: dict[int, None] = {}
        # (time, job, seconds of a checkpoint write a preemption interrupted): not lost work
        self.interrupted_writes: list[tuple[float, int, float]] = []
        self._lost_seen = [0.0] * len(hybrid)
        self.lenders: dict[int, list] = {}  # on-demand job -> [(job, nodes, how, size before)]
        self.arrivals: list[int] = []
        self.blocked: dict[int, None] = {}  # arrived on-demand jobs waiting at the queue front
        # CUA: collecting jobs still short of nodes, in notice order
        self.hungry: dict[int, None] = {}
        # on-demand job -> [(malleable job, nodes to give up, start, PREEMPTED or SHRUNK)]
        self.warned: dict[int, list] = {}
        self.victim_of: dict[int, int] = {}  # warned malleable job -> its on-demand job
        # on-demand jobs started by their arrival's decision (after a warning)
        self.instant: set[int] = set()
        self._window_seen: set[int] = set()
        # on-demand jobs whose reservation grew since the last lending pass
        self._grew: set[int] = set()
        # arrivals and preemptions so far (the queue's other change is a start)
        self._queue_changes = 0
        self._window_key: tuple[int, int] | None = None

    # --- plumbing ---------------------------------------------------------------------------------
    def make_allocator(self, platform, placement=None):
        return self.inner.make_allocator(platform, placement=placement)

    def attach(self, engine) -> None:
        self.inner.attach(engine)
        # the engine's checkpoint period per job (interval + write), NaN for none: the same float it
        # uses
        models = engine.models
        self._every = (
            list(self.period)
            if models is None
            else [math.nan if m.checkpoint.period is None else m.checkpoint.period for m in models]
        )
        if self.notice == "n":
            return
        on_demand = JobKind.ON_DEMAND
        for job, when in enumerate(self.notice_time):
            if self.type[job] is on_demand and not math.isnan(when):  # noticed (NaN: no notice)
                engine.at(when, lambda e, o=job: self._timed(self._notice, e, o))
                engine.at(
                    self.t_est[job] + RELEASE_AFTER,
                    lambda e, o=job: self._timed(self._timeout, e, o),
                )

    def _timed(self, decision, engine, *args) -> None:
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

    def on_arrival(self, engine, job: int) -> None:
        self.inner.on_arrival(engine, job)
        self._queue_changes += 1
        if self.type[job] is JobKind.ON_DEMAND:
            self.arrivals.append(job)

    def on_preempt(self, engine, job: int) -> None:
        self.inner.on_preempt(engine, job)
        self._queue_changes += 1
        self._note_interrupted_write(engine, job)
        owner = self.borrower_of.pop(job, None)
        if owner is not None:
            self.borrowers[owner].discard(job)
            self._replan_later(owner)
        self._unpromise(engine, job)
        self.victim_of.pop(job, None)
        if self.type[job] is JobKind.ON_DEMAND:
            # [impl] only a node failure stops one: it restarts as a new arrival
            self.arrivals.append(job)

    def _note_interrupted_write(self, engine, job: int) -> None:
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

    def on_revoke(self, engine, reservation, rest) -> None:
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
                    self._hunger(od)
                    return

    def on_finish(self, engine, job: int) -> None:
        self.inner.on_finish(engine, job)
        nodes = engine.allocation[job].nodes
        owner = self.victim_of.pop(job, None)
        if owner is not None:  # a warned job ended in its warning: its arrived job gets its nodes
            self._take(
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
            self._take(engine, owner, min(nodes.size, self._need(engine, owner)), nodes)
            nodes = nodes[engine.is_idle(nodes)]
        # CUP: a job earmarked (or doomed) for announced jobs ended: each gets what it was promised
        for od, count in self._unpromise(engine, job, replan=False).items():
            nodes = nodes[engine.is_idle(nodes)]
            self._take(engine, od, min(nodes.size, count, self._need(engine, od)), nodes)
        if job in self.lenders:
            self._timed(self._give_back, engine, job)

    # --- reservations -----------------------------------------------------------------------------
    def _hunger(self, od: int) -> None:
        """CUA: `od` lost lent nodes; it collects again (the short ones stay in notice order)."""
        if self.notice == "cua" and od in self.collecting and od not in self.hungry:
            self.hungry[od] = None
            self.hungry = dict.fromkeys(sorted(self.hungry, key=self.notice_time.__getitem__))

    def _replan_later(self, od: int) -> None:
        """Announced `od` lost nodes it was promised: CUA collects again, CUP plans again (in the
        next pass, once the decision at hand is over)."""
        if od not in self.collecting:
            return
        if self.notice == "cup":
            self.replans[od] = None
        else:
            self._hunger(od)

    def _arrived_short(self) -> int:
        """Nodes the arrived on-demand jobs still lack (in their warning or waiting first)."""
        reserved, size = self.reserved, self.n_max
        return sum(
            max(size[od] - reserved.get(od, 0), 0)
            for group in (self.warned, self.blocked)
            for od in group
        )

    def _take(self, engine, od: int, count: int, nodes=None, why: str = "collect") -> int:
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

    def _release_all(self, engine, od: int, why: str) -> np.ndarray:
        """Release every reservation of `od`; their node ids."""
        held = self.held.pop(od, [])
        for reservation in held:
            engine.release(reservation, reason=f"{why}:{od}")
        count = self.reserved.pop(od, 0)
        if count and self.reservation_log is not None:
            self.reservation_log.append((engine.now, od, -count))
        return np.concatenate([r.nodes for r in held]) if held else np.zeros(0, dtype=np.int64)

    def _need(self, engine, od: int) -> int:
        """Nodes `od` still lacks: its size less its reserved nodes and the nodes lent to running
        jobs."""
        borrowers = self.borrowers.get(od)
        lent = sum(engine.allocation[job].nodes.size for job in borrowers) if borrowers else 0
        return self.n_max[od] - self.reserved.get(od, 0) - lent

    # --- advance notice, estimated arrival --------------------------------------------------------
    def _notice(self, engine, od: int) -> None:
        """004 §III-B.1: reserve the idle nodes; CUP also earmarks and plans preemptions."""
        self.collecting[od] = None
        self.borrowers[od] = set()
        self.lenders.setdefault(od, [])
        self._take(engine, od, min(engine.free_nodes(), self.n_max[od]), why="notice")
        if self._need(engine, od) > 0:
            if self.notice == "cup":
                self._plan(engine, od)
            else:
                self.hungry[od] = None

    def _plan(self, engine, od: int) -> None:
        """CUP: earmark the jobs estimated to end by t_est, then plan preemptions by ascending
        overhead, for what `od` lacks beyond the nodes already promised to it.

        A releaser's nodes count against all open announced needs together: a job promised in
        part to one announced job gives the rest to the next. Jobs promised to an arrived job
        (warned) or lent another one's reserved nodes are not taken: one promise per node.
        """
        need = self._need(engine, od) - self._promised(od)
        t_est, now = self.t_est[od], engine.now
        kind, allocation = self.type, engine.allocation
        on_demand = JobKind.ON_DEMAND
        earmark, doomed, victim_of, borrower_of = (
            self.earmark,
            self.doomed,
            self.victim_of,
            self.borrower_of,
        )
        # 004 §III-B: every job expected to release nodes by t_est
        for predicted, job in engine.by_end:
            if predicted > t_est or need <= 0:
                break
            if job in doomed or job in victim_of or job in borrower_of:
                continue
            marks = earmark.get(job)
            spare = allocation[job].nodes.size - (sum(marks.values()) if marks else 0)
            if spare > 0 and not (marks and od in marks):
                self._promise(od, job, min(spare, need), doomed=False)
                need -= min(spare, need)
        if need <= 0 or now >= t_est:  # past t_est the arrival rule makes up the difference
            return
        candidates = [
            job
            for job in engine.running
            if kind[job] is not on_demand
            and job not in earmark
            and job not in doomed
            and job not in victim_of
            and job not in borrower_of
        ]
        candidates = self._by_overhead(engine, candidates)
        for job in candidates:
            if need <= 0:
                break
            when = now
            if kind[job] is JobKind.MALLEABLE:
                # warned so that its nodes are free at t_est (004 §III-A)
                when = max(now, t_est - self.warning)
            else:
                checkpoint = self._next_checkpoint(engine, job)
                if checkpoint is not None and checkpoint <= t_est:
                    when = checkpoint + CHECKPOINT_SLACK  # 004 §III-B: right after its checkpoint
            size = allocation[job].nodes.size
            self._promise(od, job, min(size, need), doomed=True)
            need -= size
            self._plans += 1
            self.plan_of[job] = plan = self._plans
            if when <= now:
                self._cup_preempt(engine, od, job, plan)
            else:
                engine.at(
                    when,
                    lambda e, o=od, j=job, p=plan: self._timed(self._cup_preempt, e, o, j, p),
                )

    def _promise(self, od: int, job: int, count: int, doomed: bool) -> None:
        """CUP: `count` of running `job`'s nodes go to announced `od` at its end (earmark) or at its
        planned preemption (doomed)."""
        self.promises.setdefault(od, {})[job] = count
        if doomed:
            self.doomed[job] = od
        else:
            self.earmark.setdefault(job, {})[od] = count

    def _promised(self, od: int) -> int:
        """Nodes earmarked or doomed for announced `od`, not yet reserved."""
        promised = self.promises.get(od)
        return sum(promised.values()) if promised else 0

    def _unpromise(self, engine, job: int, replan: bool = True) -> dict[int, int]:
        """Withdraw the announced jobs' promises on `job` ({announced job: nodes}): it ended, was
        preempted or an arrived job took it. A pending CUP warning is withdrawn in the log; with
        `replan`, the announced jobs plan again for what they lost."""
        withdrawn = self.earmark.pop(job, None) or {}
        od = self.doomed.pop(job, None)
        if od is not None:
            del self.plan_of[job]
            withdrawn = {od: self.promises[od][job]}
            if job in self.cup_warned:
                self.cup_warned.discard(job)
                engine.note("unwarn", job, f"cup:{od}")
        for od in withdrawn:
            self.promises[od].pop(job, None)
            if replan:
                self._replan_later(od)
        return withdrawn

    def _drop_plans(self, engine, od: int) -> None:
        """`od` arrived or timed out: its earmarks and planned preemptions end (a pending CUP
        warning is withdrawn in the log)."""
        for job in self.promises.pop(od, {}):
            if self.doomed.get(job) == od:
                del self.doomed[job], self.plan_of[job]
                if job in self.cup_warned:
                    self.cup_warned.discard(job)
                    engine.note("unwarn", job, f"cup:{od}")
            else:
                marks = self.earmark[job]
                del marks[od]
                if not marks:
                    del self.earmark[job]
        self.replans.pop(od, None)

    def _cup_preempt(self, engine, od: int, job: int, plan: int, warned: bool = False) -> None:
        """CUP's planned preemption `plan` of `job` for announced `od` (a malleable job is warned
        first); withdrawn if `od` needs its nodes no more."""
        if self.plan_of.get(job) != plan or self.doomed.get(job) != od:
            return  # the plan changed: the promise was withdrawn
        if self.type[job] is JobKind.MALLEABLE and self.warning and not warned:
            # 004 §III-A: two-minute warning
            self.cup_warned.add(job)
            engine.note("warn", job, f"cup:{od}")
            engine.at(
                engine.now + self.warning,
                lambda e: self._timed(self._cup_preempt, e, od, job, plan, True),
            )
            return
        need = self._need(engine, od)
        if need <= 0:
            self._unpromise(engine, job, replan=False)
            return
        del self.doomed[job], self.plan_of[job]
        self.promises[od].pop(job, None)
        self.cup_warned.discard(job)
        nodes = engine.allocation[job].nodes
        engine.preempt(job, reason=f"cup:{od}")
        taken = self._take(engine, od, min(need, nodes.size), nodes, why="cup")
        self.lenders[od].append((job, taken, PREEMPTED, nodes.size))

    def _timeout(self, engine, od: int) -> None:
        """004 §III-B.3: not arrived 10 min after t_est: release the reservation."""
        if od not in self.collecting:
            return
        del self.collecting[od]
        self.hungry.pop(od, None)
        self._drop_plans(engine, od)
        self._release_all(engine, od, "timeout")
        for job in self.borrowers.pop(od, ()):
            del self.borrower_of[job]

    # --- arrival ----------------------------------------------------------------------------------
    def _arrive(self, engine, od: int) -> None:
        """004 §III-B.2: start on reserved + idle nodes, else shrink (SPAA) or preempt (PAA), else
        wait first."""
        self.collecting.pop(od, None)
        self.hungry.pop(od, None)
        self._drop_plans(engine, od)
        self.lenders.setdefault(od, [])
        for job in self.borrowers.pop(od, ()):  # jobs on its reserved nodes are preempted at once
            del self.borrower_of[job]
            engine.preempt(job, reason=f"arrival:{od}")
        own = self._release_all(engine, od, "arrival")
        need = self.n_max[od] - engine.free_nodes()
        if need > 0 and not self._make_room(engine, od, need):
            self._unreserve_announced(engine, need)
            need = self.n_max[od] - engine.free_nodes()
            if need > 0 and not self._make_room(engine, od, need):
                # behind the on-demand jobs already waiting: it collects after them
                self.blocked[od] = None
                return
        if od in self.warned:  # 004 §III-A: malleable jobs get their two-minute warning first
            self._take(engine, od, min(own.size, self.n_max[od]), own, why="warning")
            self._take(
                engine,
                od,
                min(engine.free_nodes(), self.n_max[od] - self.reserved.get(od, 0)),
                why="warning",
            )
            engine.at(engine.now + self.warning, lambda e: self._timed(self._after_warning, e, od))
            return
        self._start(engine, od, own, "arrival")

    def _make_room(self, engine, od: int, need: int) -> bool:
        """SPAA shrinks if the malleable jobs can supply `need` nodes, else (and PAA) preempts;
        False if even that cannot."""
        return (self.arrival == "spaa" and self._shrink(engine, od, need)) or self._preempt_for(
            engine, od, need
        )

    def _claim(self, engine, od: int, job: int) -> None:
        """Arrived `od` takes running `job`: the promises of its nodes to announced jobs (CUP's
        earmark or planned preemption, lent reserved nodes) are withdrawn and those jobs plan
        again. One promise per node: an arrived job comes first."""
        self._unpromise(engine, job)
        owner = self.borrower_of.pop(job, None)
        if owner is not None:
            self.borrowers[owner].discard(job)
            self._replan_later(owner)

    def _act(self, engine, od: int, job: int, keep: int) -> None:
        """Shrink malleable `job` to `keep` nodes (0: preempt it) for `od`: at once, or after the
        warning."""
        self._claim(engine, od, job)
        if self.warning and self.type[job] is JobKind.MALLEABLE:
            size = engine.allocation[job].nodes.size
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

    def _after_warning(self, engine, od: int) -> None:
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
            size = engine.allocation[job].nodes.size
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

    def _unreserve_announced(self, engine, need: int) -> None:
        """[impl] An arrived job short of nodes frees those held for announced ones, latest t_est
        first."""
        for other in sorted(self.collecting, key=self.t_est.__getitem__, reverse=True):
            if need <= 0:
                break
            held = self._release_all(engine, other, "yield")
            need -= held.size
            self._hunger(other)  # CUA collects again; CUP's arrival rule makes up the rest

    def _start(self, engine, od: int, own: np.ndarray, why: str) -> None:
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

    def _shrink(self, engine, od: int, need: int) -> bool:
        """SPAA: shrink the running malleable jobs as evenly as possible if they can supply `need`
        nodes."""
        kind, malleable, warned = self.type, JobKind.MALLEABLE, self.victim_of
        jobs = [job for job in engine.running if kind[job] is malleable and job not in warned]
        sizes = [engine.allocation[job].nodes.size for job in jobs]
        caps = [size - self.n_min[job] for job, size in zip(jobs, sizes)]
        if sum(caps) < need:
            return False
        for job, size, amount in zip(jobs, sizes, water_fill(caps, need)):
            if amount:
                self._act(engine, od, job, size - amount)
                self.lenders[od].append((job, amount, SHRUNK, size))
        return True

    def _preempt_for(self, engine, od: int, need: int) -> bool:
        """PAA: preempt running rigid and malleable jobs by ascending overhead until `need` nodes
        are free."""
        kind, allocation, warned = self.type, engine.allocation, self.victim_of
        on_demand = JobKind.ON_DEMAND
        jobs = [job for job in engine.running if kind[job] is not on_demand and job not in warned]
        if sum(allocation[job].nodes.size for job in jobs) < need:
            return False
        jobs = self._by_overhead(engine, jobs)
        for job in jobs:
            if need <= 0:
                break
            size = allocation[job].nodes.size
            self._act(engine, od, job, 0)
            self.lenders[od].append((job, min(size, need), PREEMPTED, size))
            need -= size
        return True

    def _overhead(self, engine, job: int) -> float:
        """004 §III-B, PAA: the preemption overhead in wall seconds.

        malleable: its setup (004 Obs. 8); rigid with checkpoints: the work since its last completed
        checkpoint + its setup; rigid without: its elapsed time since it (re)started (``elapsed``,
        the paper's), or the work it would lose + its setup (``lost-work``). Checkpoint progress is
        the engine's exact count, so a job that has just resumed costs only its setup.
        """
        if self.type[job] is JobKind.MALLEABLE:
            return self.setup[job]
        if math.isnan(self.period[job]) and self.rigid_overhead == "elapsed":
            return engine.now - engine.started[job]  # 004 §III-B: t_now - t_start
        since = max(engine.work_done(job) - engine.checkpointed_work(job), 0.0)
        return since + self.setup[job]  # 004 §III-B: (t_now - t_last_ckpt) + t_setup

    def _by_overhead(self, engine, jobs: list[int]) -> list[int]:
        """`jobs` sorted by ascending `_overhead`, ties by index: the same numbers, computed in
        one loop (a PAA decision ranks every running job)."""
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
                else:  # as engine.work_done and engine.checkpointed_work compute them
                    done = work[job] - (remaining[job] - max(0.0, now - updated[job]) * rate[job])
                    kept = max(checkpoints[job], math.floor(done / every), 0) * every
                # 004 §III-B: (t_now - t_last_ckpt) + t_setup
                cost = max(done - kept, 0.0) + setup[job]
            keyed.append((cost, job))
        keyed.sort()
        return [job for _, job in keyed]

    def _next_checkpoint(self, engine, job: int) -> float | None:
        """When the running rigid job completes its next checkpoint; None if it takes none before
        its end."""
        period = self.period[job]
        if math.isnan(period):
            return None
        kept = engine.checkpointed_work(job)
        position = kept + period
        if position >= engine.work[job]:
            return None
        done = max(engine.work_done(job), kept)
        return max(engine.now, engine.updated[job]) + (position - done) / engine.rate[job]

    # --- completion -------------------------------------------------------------------------------
    def _give_back(self, engine, od: int) -> None:
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
                current = engine.allocation[job].nodes.size
                # 004 §III-B.4 "expanded to its original size": n_max, the size it asked for
                # (pre-shrink: the size it had before this shrink)
                target = min(self.n_max[job] if self.regrow == "n_max" else size, current + idle)
                if target > current:
                    engine.resize(job, target, reason=f"give-back:{od}")

    # --- the pass ---------------------------------------------------------------------------------
    def schedule(self, engine) -> None:
        if self.arrivals:
            arrivals, self.arrivals = self.arrivals, []
            for od in arrivals:
                self._timed(self._arrive, engine, od)
        if self.replans:  # before the arrived jobs collect: a re-plan may free nodes now
            replans, self.replans = self.replans, {}
            for od in replans:
                if od in self.collecting:
                    self._timed(self._plan, engine, od)
        if self.warned:
            self._collect_warned(engine)
        if self.blocked:
            self._collect_blocked(engine)
        if self.notice == "cua" and self.hungry:
            self._collect_hungry(engine)
        self.inner.schedule(engine)
        while self._start_head_malleable(engine):
            self.inner.schedule(engine)
        self._lend_reserved(engine)

    def _collect_warned(self, engine) -> None:
        """On-demand jobs that warned malleable jobs on arrival collect idle nodes and start early
        if these suffice (the warned jobs then keep running as they are)."""
        for od in list(self.warned):
            short = self.n_max[od] - self.reserved.get(od, 0)
            if short > 0:
                self._take(engine, od, min(engine.free_nodes(), short), why="warning")
            if self.reserved.get(od, 0) >= self.n_max[od]:
                for job, *_ in self.warned.pop(od):
                    if self.victim_of.pop(job, None) is not None and engine.state[job] == RUNNING:
                        engine.note("unwarn", job, f"warning:{od}")
                self._start(engine, od, self._release_all(engine, od, "warning"), "warning")

    def _collect_blocked(self, engine) -> None:
        """On-demand jobs waiting at the queue front collect idle nodes until they fit."""
        for od in list(self.blocked):
            short = self.n_max[od] - self.reserved.get(od, 0)
            self._take(engine, od, min(engine.free_nodes(), short), why="front")
            if self.reserved.get(od, 0) >= self.n_max[od]:
                del self.blocked[od]
                self._start(engine, od, self._release_all(engine, od, "front"), "front")

    def _collect_hungry(self, engine) -> None:
        """CUA (004 §III-B.1): nodes freed before the arrival go to the short reservations, earliest
        notice first."""
        free = engine.free_nodes
        for od in list(self.hungry):
            if not free():
                break
            self._take(engine, od, min(free(), self._need(engine, od)))
            if self._need(engine, od) <= 0:
                del self.hungry[od]

    def _start_head_malleable(self, engine) -> bool:
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
        return engine.start(head, idle, reason="head-malleable")

    def _lend_reserved(self, engine) -> None:
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

    def _lend(self, engine, od: int, job: int, size: int) -> None:
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
        self._take(engine, od, nodes.size - size, nodes[size:], why="lend")
        self.borrowers[od].add(job)
        self.borrower_of[job] = od
