"""An independent replay of a hybrid run's action log (``cosched simulate --hybrid M --log-actions
CSV``).

It reads only files a third party has: the action log, the hybrid workload CSV the run wrote and its
jobs.csv, plus the checkpoint period per job (Daly's rule, 004 §IV-B) for the preemption overheads.
It does not look at engine or mechanism objects. `violations` returns a list of findings, empty when
the run is consistent:

- nodes: a job starts, grows or a reservation is made only on free nodes; a preemption, finish or
  release gives back exactly the nodes held; sizes within the job's bounds; every job finishes
  exactly once; start and end times as jobs.csv reports them.
- on-demand jobs: never preempted nor resized but by a failure; started only by their arrival's
  decision (at once or after the warning) or at the queue front; the instant-start column as the log
  implies it.
- PAA (004 §III-B): each decision preempts (or warns) the running rigid and malleable jobs by
  ascending overhead, and no more of them than it needs; warned jobs stop or shrink exactly one
  warning later.
- CUA/CUP: reservations for an announced job are made after its notice and released by its arrival
  or 10 min after its estimated arrival; jobs lent its reserved nodes are preempted at its arrival
  unless they ended or an arrived job took them; CUP preempts only before the arrival; rigid ones
  lent the nodes end by the estimated arrival.
- promises (`promise_violations`): a job warned for an on-demand job is warned for no other until
  its warning ends or is withdrawn (``unwarn``), and no other on-demand job stops or shrinks it; a
  job lent an announced job's reserved nodes is taken only by an arrived job; every warning ends in
  a preemption, a shrink, the job's end or a withdrawal within the warning; and no node goes to an
  announced job's reservation while an arrived on-demand job waits short of nodes.
"""

from __future__ import annotations

import csv
import math
from collections import defaultdict

import pandas as pd

OVERHEAD_TOLERANCE = (
    1e-6  # seconds: overheads computed here and in the engine may differ by rounding
)
TIME_TOLERANCE = 1e-6  # seconds
RELEASE_AFTER = 600.0  # 004 §IV-B: reservation released 10 min after the estimated arrival
# the arrival's decision started the on-demand job (instant)
ARRIVAL_STARTS = ("arrival", "warning")
# the prefixes of `promise_violations`'s findings, one per property
ONE_PROMISE, ARRIVED_FIRST = "one promise per node: ", "arrived first: "
# reasons of the rows an arrived on-demand job's own decisions write
ARRIVAL_DECISIONS = ("arrival", "paa", "spaa", "warning", "front")
# reasons of the reservations that collect nodes for an announced job
ANNOUNCED_COLLECTS = ("notice", "collect", "cup")


class Replay:
    def __init__(self, workload: pd.DataFrame, periods, warning: float):
        self.ids = workload["job_id"].tolist()
        self.index = {job_id: k for k, job_id in enumerate(self.ids)}
        self.kind = workload["job_type"].tolist()
        self.submit = workload["submit_time"].tolist()
        self.n_min, self.n_max = workload["n_min"].tolist(), workload["n_max"].tolist()
        self.setup = workload["setup"].tolist()
        self.notice = workload["notice_time"].tolist()
        self.t_est = workload["estimated_arrival"].tolist()
        self.period = list(periods)
        self.warning = warning
        self.problems: list[str] = []
        self.owner: dict[int, tuple] = {}
        self.nodes: dict[int, set] = {}
        self.reserved: dict[int, set] = {}
        self.reservation_of: dict[
            int, tuple[int | None, float]
        ] = {}  # key -> (on-demand job, made at)
        self.last_start: dict[int, float] = {}
        self.first: dict[int, tuple[float, str]] = {}
        self.finished: dict[int, float] = {}
        # rigid: work kept at its checkpoints (checkpoint writes included)
        self.kept = defaultdict(float)
        self.count = defaultdict(int)
        self.warned: dict[
            int, tuple[int, float]
        ] = {}  # job -> (on-demand job, warned at) by PAA or SPAA
        self.cup_warned: dict[
            int, tuple[int, float]
        ] = {}  # by CUP (a PAA decision may still choose it)
        self.lending: dict[
            int, tuple[int, float]
        ] = {}  # job running on reserved nodes -> (owner, since)
        self.lent: list[
            tuple[int, int, float, float, str]
        ] = []  # (owner, job, start, end, how it ended)
        self.group: list | None = None

    def fail(self, text: str) -> None:
        if len(self.problems) < 50:
            self.problems.append(text)

    # --- overheads (004 §III-B, PAA) --------------------------------------------------------------
    def overhead(self, job: int, now: float, rigid_overhead: str) -> float:
        if self.kind[job] == "malleable":
            return self.setup[job]
        period = self.period[job]
        elapsed = now - self.last_start[job]
        if math.isnan(period) and rigid_overhead == "elapsed":
            return elapsed
        done = self.kept[job] + max(0.0, elapsed - self.setup[job])
        count = (
            self.count[job]
            if math.isnan(period)
            else max(self.count[job], math.floor(done / period))
        )
        kept = 0.0 if math.isnan(period) else count * period
        return max(done - kept, 0.0) + self.setup[job]

    def preempted(self, job: int, now: float) -> None:
        period = self.period[job]
        if self.kind[job] != "rigid":
            return
        done = self.kept[job] + max(0.0, now - self.last_start[job] - self.setup[job])
        if math.isnan(period):
            self.kept[job] = 0.0
            return
        self.count[job] = max(self.count[job], math.floor(done / period))
        self.kept[job] = self.count[job] * period

    def close_group(self, rigid_overhead: str) -> None:
        """A PAA decision ended: its victims are the cheapest candidates, and no more than it
        needed."""
        group, self.group = self.group, None
        if group is None:
            return
        now, od, candidates, free, victims = group
        need = self.n_max[od] - free
        costs = {job: self.overhead(job, now, rigid_overhead) for job in candidates}
        spared = [costs[job] for job in candidates if job not in victims]
        chosen = sorted(victims, key=lambda job: (costs[job], job))
        if spared and max(costs[job] for job in chosen) > min(spared) + OVERHEAD_TOLERANCE:
            self.fail(
                f"PAA at {now} for job {self.ids[od]}: preempted overheads "
                f"{sorted(costs[j] for j in chosen)[-3:]} above a spared {min(spared)}"
            )
        sizes = [candidates[job] for job in chosen]
        # the last job taken is one of those tied (within rounding) with the costliest: any of them
        # may be it
        top = costs[chosen[-1]]
        last = max(candidates[job] for job in chosen if costs[job] >= top - OVERHEAD_TOLERANCE)
        if sum(sizes) < need or sum(sizes) - last >= need:
            self.fail(
                f"PAA at {now} for job {self.ids[od]}: took {sizes} nodes for a need of {need}"
            )

    # --- the log ----------------------------------------------------------------------------------
    def free_count(self, total: int) -> int:
        return total - len(self.owner)

    def take(self, nodes: list[int], who: tuple, what: str) -> None:
        busy = [n for n in nodes if n in self.owner]
        if busy or len(set(nodes)) != len(nodes):
            self.fail(f"{what}: nodes {busy[:5] or 'repeated'} are not free")
        for n in nodes:
            self.owner[n] = who

    def give(self, nodes: set, who: tuple, what: str) -> None:
        for n in nodes:
            if self.owner.get(n) != who:
                self.fail(f"{what}: node {n} is not held by {who}")
            self.owner.pop(n, None)


def promise_violations(
    rows: list[dict], workload: pd.DataFrame, warning: float, nodes: int
) -> list[str]:
    """The promises an action log made (rows as `csv.DictReader` reads them): one on-demand job per
    promised job or node at a time, every warning kept or withdrawn within the warning, and an
    arrived on-demand job served before an announced one (docs/hybrid.md)."""
    ids = workload["job_id"].tolist()
    index = {job_id: k for k, job_id in enumerate(ids)}
    kind, submit, size, t_est = (
        workload["job_type"].tolist(),
        workload["submit_time"].tolist(),
        workload["n_max"].tolist(),
        workload["estimated_arrival"].tolist(),
    )

    def lender(job: int) -> int | None:
        """The announced job whose reserved nodes `job` runs on, until it arrives or times out."""
        owner = lent.get(job)
        if owner is None or owner in started or now > t_est[owner] + RELEASE_AFTER:
            return None
        return owner

    problems: list[str] = []
    warned: dict[int, tuple[int, float]] = {}  # job -> (on-demand job, warned at): pending
    lent: dict[int, int] = {}  # job running on reserved nodes -> the announced job they are for
    reserved_for: dict[int, int] = {}  # reservation key -> on-demand job
    reserved: dict[int, int] = defaultdict(int)  # on-demand job -> nodes reserved for it
    # on-demand jobs past their arrival (or whose arrival the log showed), not started yet
    waiting: dict[int, None] = {}
    started: set[int] = set()
    held: dict[int, int] = {}  # running job -> its node count
    busy = 0  # nodes held by jobs and reservations
    on_demand = sorted((submit[k], k) for k in range(len(ids)) if kind[k] == "on-demand")
    next_arrival = 0

    def broken(text: str) -> None:
        if len(problems) < 50:
            problems.append(ONE_PROMISE + text)

    def late(text: str) -> None:
        if len(problems) < 50:
            problems.append(ARRIVED_FIRST + text)

    for row in rows:
        now, action, reason = float(row["time"]), row["action"], row["reason"]
        job = index[int(row["job_id"])] if row["job_id"] else None
        od = index[int(row["on_demand_job_id"])] if row["on_demand_job_id"] else None
        while next_arrival < len(on_demand) and on_demand[next_arrival][0] < now - TIME_TOLERANCE:
            arrived = on_demand[next_arrival][1]
            if arrived not in started:
                waiting[arrived] = None
            next_arrival += 1
        if od is not None and od not in started and reason in ARRIVAL_DECISIONS:
            waiting[od] = None
        for other, (owner, when) in list(warned.items()):
            if when + warning < now - TIME_TOLERANCE:
                broken(
                    f"job {ids[other]} warned at {when} for job {ids[owner]} was neither "
                    f"stopped, shrunk nor withdrawn by {when + warning}"
                )
                del warned[other]
        if action == "warn":
            if job in warned:
                broken(
                    f"job {ids[job]} warned at {now} for job {ids[od]} while promised "
                    f"to job "
                    f"{ids[warned[job][0]]}"
                )
            if reason == "cup" and lender(job) not in (None, od):
                broken(f"CUP warned job {ids[job]} for job {ids[od]}: it holds another's nodes")
            warned[job] = (od, now)
            if reason != "cup":
                lent.pop(job, None)  # an arrived job took it: it comes first
        elif action == "unwarn":
            warned.pop(job, None)
        count = len(row["nodes"].split(";")) if row["nodes"] else 0
        if action == "start":
            held[job] = count
            busy += count
        elif action == "resize":
            busy += count - held[job]
            held[job] = count
        elif action in ("preempt", "finish", "kill") and job in held:
            busy -= held.pop(job)
        elif action == "reserve":
            busy += count
        elif action == "release":
            busy -= count
        if action in ("preempt", "resize", "finish", "kill"):
            ends = action != "resize" or reason == "spaa"
            promised = warned.pop(job, None) if ends else None
            if promised is not None and reason in ("paa", "spaa", "cup") and promised[0] != od:
                broken(
                    f"job {ids[job]} promised to job {ids[promised[0]]} was stopped or shrunk at "
                    f"{now} for job {ids[od]}"
                )
            if reason == "cup" and lender(job) not in (None, od):
                broken(f"CUP preempted job {ids[job]} for job {ids[od]}: it holds another's nodes")
            if ends:
                lent.pop(job, None)
        elif action == "start":
            if reason == "lend":
                lent[job] = od
            if job is not None and kind[job] == "on-demand":
                started.add(job)
                waiting.pop(job, None)
        elif action == "reserve" and od is not None:
            reserved_for[int(row["reservation"])] = od
            reserved[od] += count
            if reason in ANNOUNCED_COLLECTS and od not in waiting:
                # the nodes left idle must cover what the arrived jobs waiting still lack
                short = sum(max(size[other] - reserved[other], 0) for other in waiting)
                if short > nodes - busy:
                    first = next(o for o in waiting if reserved[o] < size[o])
                    late(
                        f"{count} nodes reserved at {now} for announced job {ids[od]} while "
                        f"arrived job {ids[first]} waits with {reserved[first]} of {size[first]}"
                    )
        elif action == "release":
            owner = reserved_for.pop(int(row["reservation"]), None)
            if owner is not None:
                reserved[owner] -= count

    for other, (owner, when) in warned.items():
        if when + warning < float(rows[-1]["time"]) - TIME_TOLERANCE:
            broken(f"job {ids[other]} warned at {when} for job {ids[owner]}: never resolved")
    return problems


def violations(
    actions_path,
    workload_path,
    jobs_path,
    periods,
    *,
    nodes: int,
    mechanism: str,
    warning: float = 120.0,
    rigid_overhead: str = "elapsed",
) -> list[str]:
    """Findings of the replay (empty: consistent). periods: seconds of run between completed
    checkpoints per job in workload order (NaN: none)."""
    workload = pd.read_csv(workload_path)
    jobs = pd.read_csv(jobs_path)
    r = Replay(workload, periods, warning)
    hybrid = mechanism != "baseline"
    paa = mechanism.endswith("paa") or mechanism.endswith("spaa")
    with open(actions_path, newline="") as handle:
        rows = list(csv.DictReader(handle))
    for row in rows:
        now, action, reason = float(row["time"]), row["action"], row["reason"]
        job = r.index[int(row["job_id"])] if row["job_id"] else None
        od = r.index[int(row["on_demand_job_id"])] if row["on_demand_job_id"] else None
        listed = [int(n) for n in row["nodes"].split(";")] if row["nodes"] else []
        if (
            r.group is not None
            and not (
                (
                    reason == "paa"
                    and od == r.group[1]
                    and action in ("preempt", "warn")
                    and job not in r.warned
                )
                or (reason == "cup" and action == "unwarn")  # CUP's promise withdrawn for PAA
            )
            or (r.group is not None and now != r.group[0])
        ):
            r.close_group(rigid_overhead)
        name = "" if job is None else f"job {r.ids[job]}"
        if (
            job is not None
            and r.kind[job] == "on-demand"
            and action in ("preempt", "resize", "warn")
            and reason != "failure"
        ):
            r.fail(f"{name} (on-demand) {action} at {now} by {reason}")
        if action == "start":
            if job in r.nodes:
                r.fail(f"{name} starts twice")
            if now < r.submit[job] - TIME_TOLERANCE:
                r.fail(f"{name} starts at {now} before it arrives")
            low, high = (
                (r.n_min[job], r.n_max[job])
                if hybrid and r.kind[job] == "malleable"
                else (r.n_max[job], r.n_max[job])
            )
            if not low <= len(listed) <= high:
                r.fail(f"{name} starts on {len(listed)} nodes, not in [{low}, {high}]")
            r.take(listed, ("job", job), f"start of {name} at {now}")
            r.nodes[job] = set(listed)
            r.last_start[job] = now
            r.first.setdefault(job, (now, reason))
            if (
                hybrid
                and r.kind[job] == "on-demand"
                and reason not in ("arrival", "warning", "front")
            ):
                r.fail(f"{name} (on-demand) started by {reason or 'the site policy'} at {now}")
            if reason == "lend":
                r.lending[job] = (od, now)
        elif action == "resize":
            held = r.nodes.get(job)
            if held is None or r.kind[job] != "malleable":
                r.fail(f"{name} resized at {now} but it is not a running malleable job")
                continue
            if reason == "spaa" and job in r.lending and r.lending[job][0] != od:
                owner, since = r.lending.pop(job)  # an arrived job took it (it comes first)
                r.lent.append((owner, job, since, now, f"taken {reason}:{od}"))
            new = set(listed)
            r.give(held - new, ("job", job), f"shrink of {name}")
            r.take(sorted(new - held), ("job", job), f"growth of {name}")
            r.nodes[job] = new
            if not r.n_min[job] <= len(new) <= r.n_max[job]:
                r.fail(f"{name} resized to {len(new)} nodes")
            if job in r.warned and reason == "spaa":
                warned_od, when = r.warned.pop(job)
                if abs(now - when - warning) > TIME_TOLERANCE:
                    r.fail(f"{name} shrunk at {now}, warned at {when}")
        elif action in ("preempt", "finish", "kill"):
            held = r.nodes.pop(job, None)
            if held is None:
                r.fail(f"{name} {action} at {now} but it is not running")
                continue
            if set(listed) != held:
                r.fail(f"{name} {action} at {now} gives back {sorted(listed)[:5]}, not its nodes")
            r.give(held, ("job", job), f"{action} of {name}")
            if job in r.lending:
                owner, since = r.lending.pop(job)
                r.lent.append((owner, job, since, now, f"{action} {reason}:{od}"))
            if action == "finish":
                if job in r.finished:
                    r.fail(f"{name} finishes twice")
                r.finished[job] = now
                r.warned.pop(job, None)
                r.cup_warned.pop(job, None)
            elif action == "preempt":
                if reason == "paa" and job not in r.warned and paa:
                    if r.group is None:
                        running = {
                            j: len(n)
                            for j, n in r.nodes.items()
                            if r.kind[j] != "on-demand" and j not in r.warned
                        }
                        running[job] = len(held)
                        r.group = [now, od, running, r.free_count(nodes) - len(held), []]
                    r.group[4].append(job)
                warned = r.warned if reason == "paa" else r.cup_warned
                if job in warned and reason in ("paa", "cup"):
                    warned_od, when = warned.pop(job)
                    if abs(now - when - warning) > TIME_TOLERANCE:
                        r.fail(f"{name} preempted at {now}, warned at {when}")
                r.warned.pop(job, None)
                r.cup_warned.pop(job, None)
                r.preempted(job, now)
                if reason == "cup":
                    if od in r.first and r.first[od][0] <= now:
                        r.fail(f"CUP preempted {name} at {now}, after job {r.ids[od]} started")
                    if r.kind[job] == "rigid" and now > r.t_est[od] + 1e-3 + TIME_TOLERANCE:
                        r.fail(f"CUP preempted rigid {name} at {now}, after t_est {r.t_est[od]}")
        elif action == "warn":
            if job not in r.nodes or r.kind[job] != "malleable":
                r.fail(f"{name} warned at {now} but it is not a running malleable job")
            if reason in ("paa", "spaa") and job in r.lending and r.lending[job][0] != od:
                owner, since = r.lending.pop(job)  # an arrived job took it (it comes first)
                r.lent.append((owner, job, since, now, f"taken {reason}:{od}"))
            if reason == "paa":
                if r.group is None:
                    running = {
                        j: len(n)
                        for j, n in r.nodes.items()
                        if r.kind[j] != "on-demand" and j not in r.warned
                    }
                    r.group = [now, od, running, r.free_count(nodes), []]
                r.group[4].append(job)
            (r.cup_warned if reason == "cup" else r.warned)[job] = (od, now)
        elif action == "unwarn":  # withdrawn: its on-demand job needs it no more
            (r.cup_warned if reason == "cup" else r.warned).pop(job, None)
        elif action == "reserve":
            key = int(row["reservation"])
            r.take(listed, ("reserved", key), f"reservation {key} at {now}")
            r.reserved[key] = set(listed)
            r.reservation_of[key] = (od, now)
            if (
                od is not None
                and reason in ("notice", "collect", "cup", "lend")
                and not math.isnan(r.notice[od])
                and now < r.notice[od] - TIME_TOLERANCE
            ):
                r.fail(
                    f"reservation for job {r.ids[od]} at {now}, before its notice {r.notice[od]}"
                )
        elif action == "release":
            key = int(row["reservation"])
            held = r.reserved.pop(key, None)
            if held is None or set(listed) != held:
                r.fail(f"release of reservation {key} at {now}: not held as listed")
                continue
            r.give(held, ("reserved", key), f"release of {key}")
            owner, made = r.reservation_of.pop(key)
            if (
                owner is not None
                and made < r.submit[owner]
                and reason in ("notice", "collect", "cup", "lend")
                and now > min(r.submit[owner], r.t_est[owner] + RELEASE_AFTER) + TIME_TOLERANCE
            ):
                r.fail(f"reservation for job {r.ids[owner]} held until {now}")
        if (
            reason == "timeout"
            and od is not None
            and now < r.t_est[od] + RELEASE_AFTER - TIME_TOLERANCE
        ):
            r.fail(f"job {r.ids[od]}'s reservation released at {now}, before t_est + 10 min")
    r.close_group(rigid_overhead)
    r.problems += promise_violations(rows, workload, warning, nodes)
    # after the run: ends, starts, instant starts, the lent nodes
    for job in range(len(r.ids)):
        if job not in r.finished:
            r.fail(f"job {r.ids[job]} never finishes")
    start, end = jobs["start_time"].tolist(), jobs["end_time"].tolist()
    for job, when in r.finished.items():
        if (
            abs(end[job] - when) > TIME_TOLERANCE
            or abs(start[job] - r.first[job][0]) > TIME_TOLERANCE
        ):
            r.fail(
                f"job {r.ids[job]}: jobs.csv says {start[job]}..{end[job]}, the log "
                f"{r.first[job][0]}..{when}"
            )
    if r.owner:
        r.fail(f"{len(r.owner)} nodes still held at the end")
    if hybrid:
        instant = jobs["instant_start"].tolist()
        for job, kind in enumerate(r.kind):
            if kind == "on-demand":
                first_time, first_reason = r.first[job]
                expected = (
                    first_reason in ARRIVAL_STARTS
                    or abs(first_time - r.submit[job]) <= TIME_TOLERANCE
                )
                if bool(instant[job]) != expected:
                    r.fail(
                        f"job {r.ids[job]}: instant_start {instant[job]}, the log says {expected}"
                    )
        for (
            od,
            job,
            since,
            until,
            how,
        ) in r.lent:  # jobs lent reserved nodes give them back at the arrival
            arrival = r.submit[od]
            if arrival > r.t_est[od] + RELEASE_AFTER:
                # the reservation had been released: a late arrival is handled as without notice
                continue
            if since < arrival and until > arrival + TIME_TOLERANCE:
                r.fail(
                    f"job {r.ids[job]} ran on job {r.ids[od]}'s reserved nodes until {until} "
                    f"({how}), past its arrival at {arrival}"
                )
    return r.problems
