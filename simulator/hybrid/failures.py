"""Node failures (004 §V-C): system-wide failures at one per MTBF, a node down time, jobs resumed or
shrunk.

An event source on the engine: it reads who holds the failed node and acts only through the engine's
actions (preempt, resize, reserve, release, at):

- [impl] Failures hit the whole system at exponential intervals with mean MTBF (004 §V-C: "one
  failure per MTBF"), each on one node drawn uniformly among the nodes that are up (idle, busy or
  reserved alike). The node stays down for an exponential time with mean ``down_hours`` (004 §V-C:
  T_d, mean 6 h), held by an engine reservation, so no allocator, scheduler or mechanism sees it
  until it is repaired.
- A rigid job on the failed node is interrupted like a preemption (004 §III-A): it keeps its work up
  to its last checkpoint, pays its setup again and returns to the queue with its original submit
  time.
- A malleable job gives up the failed node and keeps running if it is still at or above n_min (004
  Obs. 14); otherwise it is interrupted like a preemption. [impl] It loses no work either way: it
  recovers the failed node's share as it does at a shrink.
- [impl] An on-demand job has no checkpoints: it restarts from scratch. The mechanisms never preempt
  it, but a failure is not a mechanism; the mechanism handles its restart as a new arrival.
- A node reserved by the mechanism for an on-demand job leaves the reservation (``engine.revoke``;
  the scheduler hears of it through its ``on_revoke`` hook); the reservation collects another one
  the way it collects any missing node.

Draws come from their own seeded stream and depend only on which nodes are down, so the same seed
gives the same failures whatever the mechanism does, until the jobs run out.

[impl] Each failure is an event, and failures can keep jobs from ever finishing (nodes down faster
than they are repaired, a job interrupted more often than it checkpoints), so a run draws at most
MAX_FAILURES of them: `check_failure_options` refuses an MTBF whose failures over the trace's span
alone exceed it, and a run that reaches it with jobs left stops with an InputError naming the MTBF.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

import numpy as np

from cosched.errors import InputError
from cosched.simulator.allocators import EMPTY
from cosched.simulator.jobs import JobKind, JobState

if TYPE_CHECKING:
    from cosched.simulator.engine import Reservation
    from cosched.simulator.view import SchedulerView

__all__ = ["NodeFailures", "check_failure_options", "DOWN_HOURS", "FAILURE_STREAM", "MAX_FAILURES"]

DOWN_HOURS = 6.0  # 004 §V-C: mean node down time T_d
FAILURE_STREAM = 4  # seed stream of the failure draws, apart from the typing's
SECONDS_PER_HOUR = 3600.0
# failures a run may draw (events); expected over the trace's span, the MTBF is refused up front
MAX_FAILURES = 100_000
FUTURE = int(JobState.FUTURE)
FINISHED, KILLED = int(JobState.FINISHED), int(JobState.KILLED)


def check_failure_options(
    mtbf_hours: float | None, down_hours: float, span_seconds: float | None = None
) -> None:
    """InputError for an MTBF or a down time that is not a positive finite number of hours, or
    for an MTBF so small that the failures expected over `span_seconds` (the trace's length)
    exceed MAX_FAILURES: each failure is an event, and their number would make the run take
    hours."""
    for value, field in ((mtbf_hours, "mtbf"), (down_hours, "down_hours")):
        if value is not None and not (math.isfinite(value) and value > 0):
            raise InputError(f"must be a positive number of hours, got {value:g}", field=field)
    if mtbf_hours is not None and span_seconds:
        expected = span_seconds / (mtbf_hours * SECONDS_PER_HOUR)
        if expected > MAX_FAILURES:
            least = span_seconds / (MAX_FAILURES * SECONDS_PER_HOUR)
            raise InputError(
                f"an MTBF of {mtbf_hours:g} h means about {expected:,.0f} failures over the "
                f"trace's {span_seconds / SECONDS_PER_HOUR:,.0f} h; the limit is "
                f"{MAX_FAILURES:,}: use an MTBF of at least {least:.3g} h",
                field="mtbf",
            )


class NodeFailures:
    """Failures drawn from the system MTBF (hours), or given as (time, node, down seconds) in
    `schedule`.

    A failure of a node that is already down is ignored. After the run: ``failures`` and
    ``lost_node_seconds`` per job, ``interruptions`` per job (the failures that preempted it rather
    than shrank it), ``hits`` [(time, node, job, "preempt" | "shrink", the job's nodes before)] and
    ``down_log`` [(time, node, +1 down | -1 repaired)].
    """

    def __init__(
        self,
        mtbf_hours: float | None = None,
        down_hours: float = DOWN_HOURS,
        seed: int = 0,
        *,
        schedule: Iterable[tuple[float, int, float]] | None = None,
    ) -> None:
        if (mtbf_hours is None) == (schedule is None):
            raise InputError("give an MTBF or a failure schedule", field="mtbf")
        check_failure_options(mtbf_hours, down_hours)
        self.mtbf, self.down_mean = mtbf_hours, down_hours
        self.schedule = (
            None
            if schedule is None
            else sorted((float(t), int(n), float(d)) for t, n, d in schedule)
        )
        self.rng = np.random.default_rng(np.random.SeedSequence([seed, FAILURE_STREAM]))
        self.drawn = 0  # failures drawn from the MTBF so far (on nodes up or down)
        self.hits: list[tuple[float, int, int, str, int]] = []
        self.down_log: list[tuple[float, int, int]] = []

    def attach(self, engine: SchedulerView) -> None:
        jobs = len(engine.run_time)
        self.failures, self.interruptions, self.lost_node_seconds = (
            [0] * jobs,
            [0] * jobs,
            [0.0] * jobs,
        )
        self.down = np.zeros(engine.platform.nodes, dtype=bool)
        if self.schedule is not None:
            for when, node, down in self.schedule:
                engine.at(when, self._failure_at(node, down))
        else:
            engine.at(engine.now + self._interval(), self._drawn)

    def _failure_at(self, node: int, down: float) -> Callable[[SchedulerView], None]:
        """The event of the scheduled failure of `node`, down `down` seconds."""
        return lambda engine: self._fail(engine, node, down)

    def _interval(self) -> float:
        assert self.mtbf is not None  # drawn failures: the source was given an MTBF
        return float(self.rng.exponential(self.mtbf * SECONDS_PER_HOUR))

    def _drawn(self, engine: SchedulerView) -> None:
        """A drawn failure; the next one is posted only while jobs remain, and the run stops at
        MAX_FAILURES (the run must end)."""
        if not (engine.waiting or engine.running or (engine.state and engine.state[-1] == FUTURE)):
            return
        self.drawn += 1
        if self.drawn > MAX_FAILURES:
            self._refuse(engine)
        up = np.flatnonzero(~self.down)
        pick, down = (
            self.rng.random(),
            float(self.rng.exponential(self.down_mean * SECONDS_PER_HOUR)),
        )
        if up.size:
            self._fail(engine, int(up[int(pick * up.size)]), down)
        engine.at(engine.now + self._interval(), self._drawn)

    def _refuse(self, engine: SchedulerView) -> None:
        """InputError: the failures of this MTBF keep the jobs from finishing within MAX_FAILURES
        failures."""
        assert self.mtbf is not None  # drawn failures: the source was given an MTBF
        left = sum(state not in (FINISHED, KILLED) for state in engine.state)
        # Little's law: failures arrive at 1 / MTBF and each keeps its node down for T_d on average
        down = min(self.down_mean / self.mtbf, engine.platform.nodes)
        raise InputError(
            f"an MTBF of {self.mtbf:g} h drew {MAX_FAILURES:,} failures (the limit of a run) in "
            f"{engine.now / SECONDS_PER_HOUR:,.0f} simulated hours and {left:,} of "
            f"{len(engine.state):,} jobs have not finished; with nodes down {self.down_mean:g} h "
            f"on average, about {down:,.3g} of the {engine.platform.nodes:,} nodes are down at a "
            "time: use a larger MTBF or a shorter down time",
            field="mtbf",
        )

    def _fail(self, engine: SchedulerView, node: int, down: float) -> None:
        if self.down[node]:
            return
        occupant = engine.occupant(node)
        if occupant >= 0:
            self._hit(engine, occupant, node)
        elif occupant != EMPTY:
            # a reservation (its key is below EMPTY) gives the node up; its holder is told
            engine.revoke(node, reason="failure")
        reservation = engine.reserve(np.array([node]), reason="down")
        self.down[node] = True
        self.down_log.append((engine.now, node, 1))
        engine.at(engine.now + down, lambda e: self._repair(e, reservation))

    def _repair(self, engine: SchedulerView, reservation: Reservation) -> None:
        engine.release(reservation, reason="repair")
        node = int(reservation.nodes[0])
        self.down[node] = False
        self.down_log.append((engine.now, node, -1))

    def _hit(self, engine: SchedulerView, job: int, node: int) -> None:
        """The failed node runs `job`: a malleable job shrinks around it if it can, any other is
        interrupted."""
        self.failures[job] += 1
        allocation = engine.allocation[job]
        assert allocation is not None  # the failed node runs it
        size, model = allocation.nodes.size, engine.model(job)
        requested = engine.requested_nodes(job)
        if model.kind == JobKind.MALLEABLE and size - 1 >= model.bounds(requested)[0]:
            engine.resize(job, size - 1, release=[node], reason="failure")
            self.hits.append((engine.now, node, job, "shrink", size))
            return
        lost, setup = engine.lost[job], engine.lost_setup[job]
        engine.preempt(job, reason="failure")
        self.interruptions[job] += 1
        # 004 §IV-D: work redone at the requested size plus the setup the run spent (as for a
        # preemption)
        self.lost_node_seconds[job] += (
            (engine.lost[job] - lost) * requested + engine.lost_setup[job] - setup
        )
        self.hits.append((engine.now, node, job, "preempt", size))
