"""The three classic passes: in-order (FCFS), EASY and Conservative backfilling (thesis §5.1.1-5.1.3).

EASY (aggressive): the first job that does not fit (the head) gets a reservation at the shadow time, the
earliest predicted end of running jobs that frees enough units for it; a later job (up to `depth`) may start
now if it fits and ends by the shadow time or uses only the extra units left at the shadow time.
Conservative: every job in the first `depth` of the queue holds a reservation in a profile of free units
over time; when a running job ends before its predicted end, reservations are compressed in queue order
(each job re-placed at its earliest slot, never later than before), so no job is delayed.
"""
from __future__ import annotations

import bisect
import math

__all__ = ["fcfs_pass", "easy_pass", "Profile", "ConservativeBackfill"]

INF = math.inf


def fcfs_pass(engine, order: list[int]) -> bool:
    """Start jobs in `order` until one does not fit (003 §5.1.1); True if all of them started."""
    start_job = engine.start_job
    for job in order:
        if not start_job(job):
            return False
    return True


def easy_pass(engine, order: list[int], reservations: dict | None = None) -> None:
    """Backfill `order[1:]` behind the blocked head `order[0]` without delaying it (003 §5.1.2)."""
    allocator = engine.allocator
    free = allocator.free_units()
    if free == 0 and reservations is None:
        return
    head, table = order[0], engine.units_table
    need = table[head] if table is not None else allocator.units(engine, head)
    available, shadow, extra, held = free, INF, 0, engine.held
    for predicted, job in engine.by_end:
        available += held[job]
        if available >= need:
            shadow, extra = predicted, available - need
            break
    if reservations is not None and head not in reservations:
        reservations[head] = shadow
    if free == 0:
        return
    now, estimate, units, start_job = engine.now, engine.estimate, allocator.units, engine.start_job
    for job in order[1:]:
        size = table[job] if table is not None else units(engine, job)
        if size > free:
            continue
        short = now + estimate[job] <= shadow
        if not short and size > extra:
            continue
        if start_job(job):
            free = allocator.free_units()
            if not short:
                extra -= size
            if free == 0:
                return


class Profile:
    """Free units over time as a step function: free[k] units on [times[k], times[k+1]), last one forever."""

    __slots__ = ("times", "free")

    def __init__(self, total: int, now: float):
        self.times = [now]
        self.free = [total]

    def advance(self, now: float) -> None:
        """Forget the past before `now`."""
        times = self.times
        index = bisect.bisect_right(times, now) - 1
        if index > 0:
            del times[:index]
            del self.free[:index]
        times[0] = now

    def _split(self, when: float) -> int:
        times = self.times
        index = bisect.bisect_left(times, when)
        if index < len(times) and times[index] == when:
            return index
        times.insert(index, when)
        self.free.insert(index, self.free[index - 1])
        return index

    def add(self, begin: float, end: float, delta: int) -> None:
        """Add `delta` free units on [begin, end) (negative to reserve)."""
        begin = max(begin, self.times[0])
        if begin >= end:
            return
        first = self._split(begin)
        last = self._split(end) if end < INF else len(self.times)
        free, times = self.free, self.times
        for k in range(first, last):
            free[k] += delta
        if last < len(times) and free[last] == free[last - 1]:
            del times[last], free[last]
        if first > 0 and free[first] == free[first - 1]:
            del times[first], free[first]

    def earliest(self, duration: float, units: int) -> float:
        """The earliest start from now with `units` free during `duration`."""
        times, free = self.times, self.free
        size, k = len(times), 0
        while True:
            while free[k] < units:
                k += 1
            begin = times[k]
            end = begin + duration
            m = k + 1
            while m < size and times[m] < end:
                if free[m] < units:
                    break
                m += 1
            else:
                return begin
            k = m + 1

    def earlier(self, duration: float, units: int, begin: float, end: float) -> float | None:
        """The earliest start before `begin` for a job holding `units` on [begin, end), or None."""
        times, free = self.times, self.free
        size, k = len(times), 0
        while True:
            while k < size and times[k] < begin and free[k] < units:
                k += 1
            if k == size or times[k] >= begin:
                return None
            start = times[k]
            stop = start + duration
            m = k + 1
            while m < size and times[m] < stop:
                if free[m] + (units if begin <= times[m] < end else 0) < units:
                    break
                m += 1
            else:
                return start
            k = m + 1


class ConservativeBackfill:
    """Reservations for the first `depth` waiting jobs in a free-unit profile, compressed on early ends."""

    def __init__(self, engine, depth: int, first_reservations: dict | None = None):
        self.engine = engine
        self.depth = max(depth, 1)
        self.profile = Profile(engine.allocator.total_units, engine.now)
        self.slot: dict[int, tuple[float, float, int]] = {}  # waiting job -> (start, end, units) reserved
        self.booked: dict[int, tuple[float, int]] = {}  # running job -> (predicted end, units) in the profile
        self.first = first_reservations
        self.dirty = False  # capacity appeared before some reservations: compress them
        self.pending = True  # jobs without a reservation may be in the window
        self.next_begin = INF  # earliest reservation start

    def arrived(self) -> None:
        self.pending = True

    def finished(self, job: int) -> None:
        end, units = self.booked.pop(job)
        if end > self.engine.now:
            self.profile.add(self.engine.now, end, units)
            self.dirty = True

    def schedule(self, order: list[int]) -> int:
        """Place/compress reservations, start the jobs due now; returns how many started."""
        engine, profile, slot = self.engine, self.profile, self.slot
        now = engine.now
        if not self.dirty and not self.pending and now < self.next_begin:
            return 0
        profile.advance(now)
        window = order[:self.depth]
        members = set(window)
        stale = [job for job in slot if job not in members]
        for job in stale:
            begin, end, units = slot.pop(job)
            profile.add(begin, end, units)
        estimate, units_of, table = engine.estimate, engine.allocator.units, engine.units_table
        dirty, first = self.dirty or bool(stale), self.first
        due, next_begin = [], INF
        for job in window:
            reserved = slot.get(job)
            if reserved is not None:
                begin, end, units = reserved
                if begin <= now:
                    due.append(job)
                    continue
                moved = profile.earlier(estimate[job], units, begin, end) if dirty else None
                if moved is None:
                    if begin < next_begin:
                        next_begin = begin
                    continue
                profile.add(begin, end, units)
            else:
                units = table[job] if table is not None else units_of(engine, job)
            begin = profile.earliest(estimate[job], units)
            end = begin + estimate[job]
            profile.add(begin, end, -units)
            slot[job] = (begin, end, units)
            if first is not None and job not in first:
                first[job] = begin
            if begin <= now:
                due.append(job)
                continue
            if begin < next_begin:
                next_begin = begin
            if not reserved or begin != reserved[0]:
                engine.request_wakeup(begin)
        self.dirty = self.pending = False
        started = 0
        for job in due:
            begin, end, units = slot.pop(job)
            if engine.start_job(job):
                self.booked[job] = (engine.predicted_end[job], units)
                started += 1
            else:
                profile.add(begin, end, units)
                self.pending = True
        self.next_begin = next_begin
        return started
