"""Notice policies of 004 §III-B.1: what a hybrid mechanism does when an on-demand job is announced.

`Hybrid` reserves the idle nodes at the notice; the policy decides what happens when they are too
few, and when nodes promised to the announced job are lost:

- N (`NoNotice`): notices are ignored; the job is handled at its arrival alone.
- CUA (`CollectUntilArrival`): keep reserving the nodes that become idle until the actual arrival
  (competing jobs served earliest notice first).
- CUP (`CollectUntilPreemption`): earmark the running jobs whose estimated end comes before the
  estimated arrival t_est (their nodes are reserved when they end) and, if still short, plan
  preemptions by ascending overhead: a rigid job right after its next checkpoint if that completes
  by t_est, else at once; [impl] a malleable job at t_est (its two-minute warning loses nothing).

A new notice policy is a subclass of `NoticePolicy` that overrides the hooks it needs.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from cosched.simulator.hybrid.base import PREEMPTED, Hybrid, NoticePolicy, allocations
from cosched.simulator.jobs import JobKind

if TYPE_CHECKING:
    from cosched.simulator.view import SchedulerView

__all__ = [
    "NoticePolicy",
    "NoNotice",
    "CollectUntilArrival",
    "CollectUntilPreemption",
    "CHECKPOINT_SLACK",
]

# seconds after a checkpoint completes: a preemption then keeps it despite rounding
CHECKPOINT_SLACK = 1e-3


class NoNotice(NoticePolicy):
    """N (004 §III-B): the advance notice is ignored."""

    name = "n"
    announced = False


class CollectUntilArrival(NoticePolicy):
    """CUA (004 §III-B.1): nodes freed before the arrival go to the short reservations, earliest
    notice first."""

    name = "cua"

    def __init__(self, mechanism: Hybrid) -> None:
        super().__init__(mechanism)
        self.hungry: dict[int, None] = {}  # collecting jobs still short of nodes, in notice order

    def short(self, engine: SchedulerView, od: int) -> None:
        self.hungry[od] = None

    def reserved_lost(self, od: int) -> None:
        """`od` collects again (the short ones stay in notice order)."""
        if od in self.mechanism.collecting and od not in self.hungry:
            self.hungry[od] = None
            self.hungry = dict.fromkeys(
                sorted(self.hungry, key=self.mechanism.notice_time.__getitem__)
            )

    promise_lost = reserved_lost

    def drop(self, engine: SchedulerView, od: int) -> None:
        self.hungry.pop(od, None)

    def collect(self, engine: SchedulerView) -> None:
        if not self.hungry:
            return
        mechanism, free = self.mechanism, engine.free_nodes
        for od in list(self.hungry):
            if not free():
                break
            mechanism.take(engine, od, min(free(), mechanism.need(engine, od)))
            if mechanism.need(engine, od) <= 0:
                del self.hungry[od]


class CollectUntilPreemption(NoticePolicy):
    """CUP (004 §III-B.1): earmark the jobs estimated to end by t_est, then plan preemptions.

    ``earmark``: running job -> {announced job: nodes it gets at the job's end}; ``doomed``: job
    with a planned preemption -> announced job; ``promises``: announced job -> {earmarked or
    doomed job: nodes promised}; ``cup_warned``: doomed malleable jobs whose warning is pending.
    """

    name = "cup"

    def __init__(self, mechanism: Hybrid) -> None:
        super().__init__(mechanism)
        self.earmark: dict[int, dict[int, int]] = {}
        self.doomed: dict[int, int] = {}
        self.promises: dict[int, dict[int, int]] = {}
        self.cup_warned: set[int] = set()
        self.plan_of: dict[int, int] = {}  # doomed job -> the number of the plan its timer serves
        self._plans = 0
        # announced jobs that lost a promise: re-planned before the site policy's pass
        self.replans: dict[int, None] = {}

    def short(self, engine: SchedulerView, od: int) -> None:
        self.plan(engine, od)

    def promise_lost(self, od: int) -> None:
        """`od` plans again in the next pass, once the decision at hand is over."""
        if od in self.mechanism.collecting:
            self.replans[od] = None

    def replan(self, engine: SchedulerView) -> None:
        if not self.replans:
            return
        mechanism = self.mechanism
        replans, self.replans = self.replans, {}
        for od in replans:
            if od in mechanism.collecting:
                mechanism.timed(self.plan, engine, od)

    def plan(self, engine: SchedulerView, od: int) -> None:
        """Earmark the jobs estimated to end by t_est, then plan preemptions by ascending overhead,
        for what `od` lacks beyond the nodes already promised to it.

        A releaser's nodes count against all open announced needs together: a job promised in
        part to one announced job gives the rest to the next. Jobs promised to an arrived job
        (warned) or lent another one's reserved nodes are not taken: one promise per node.
        """
        mechanism = self.mechanism
        need = mechanism.need(engine, od) - self._promised(od)
        t_est, now = mechanism.t_est[od], engine.now
        kind, allocation = mechanism.type, allocations(engine)
        on_demand = JobKind.ON_DEMAND
        earmark, doomed, victim_of, borrower_of = (
            self.earmark,
            self.doomed,
            mechanism.victim_of,
            mechanism.borrower_of,
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
        candidates = mechanism.by_overhead(engine, candidates)
        for job in candidates:
            if need <= 0:
                break
            when = now
            if kind[job] is JobKind.MALLEABLE:
                # warned so that its nodes are free at t_est (004 §III-A)
                when = max(now, t_est - mechanism.warning)
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
                self._preempt(engine, od, job, plan)
            else:
                mechanism.later(engine, when, self._preempt, od, job, plan)

    def _next_checkpoint(self, engine: SchedulerView, job: int) -> float | None:
        """When the running rigid job completes its next checkpoint; None if it takes none before
        its end."""
        period = self.mechanism.period[job]
        if math.isnan(period):
            return None
        kept = engine.checkpointed_work(job)
        position = kept + period
        if position >= engine.work[job]:
            return None
        done = max(engine.work_done(job), kept)
        return max(engine.now, engine.updated[job]) + (position - done) / engine.rate[job]

    def _promise(self, od: int, job: int, count: int, doomed: bool) -> None:
        """`count` of running `job`'s nodes go to announced `od` at its end (earmark) or at its
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

    def withdraw(self, engine: SchedulerView, job: int, replan: bool = True) -> dict[int, int]:
        """A pending CUP warning is withdrawn in the log."""
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
                self.promise_lost(od)
        return withdrawn

    def drop(self, engine: SchedulerView, od: int) -> None:
        """Its earmarks and planned preemptions end (a pending CUP warning is withdrawn in the
        log)."""
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

    def _preempt(
        self, engine: SchedulerView, od: int, job: int, plan: int, warned: bool = False
    ) -> None:
        """The planned preemption `plan` of `job` for announced `od` (a malleable job is warned
        first); withdrawn if `od` needs its nodes no more."""
        if self.plan_of.get(job) != plan or self.doomed.get(job) != od:
            return  # the plan changed: the promise was withdrawn
        mechanism = self.mechanism
        if mechanism.type[job] is JobKind.MALLEABLE and mechanism.warning and not warned:
            # 004 §III-A: two-minute warning
            self.cup_warned.add(job)
            engine.note("warn", job, f"cup:{od}")
            mechanism.later(
                engine, engine.now + mechanism.warning, self._preempt, od, job, plan, True
            )
            return
        need = mechanism.need(engine, od)
        if need <= 0:
            self.withdraw(engine, job, replan=False)
            return
        del self.doomed[job], self.plan_of[job]
        self.promises[od].pop(job, None)
        self.cup_warned.discard(job)
        nodes = allocations(engine)[job].nodes
        engine.preempt(job, reason=f"cup:{od}")
        taken = mechanism.take(engine, od, min(need, nodes.size), nodes, why="cup")
        mechanism.lenders[od].append((job, taken, PREEMPTED, nodes.size))
