"""The free-unit profile behind Conservative backfilling (thesis 003 §5.1.3) against straightforward
versions.

`ReferenceProfile` keeps the additions and sums them at each point; `ReferenceBackfill` is the plain
Conservative pass (every job re-checked against a full scan of the profile), as the simulator had it
before the profile got its faster queries. The simulator's `Profile` and `ConservativeBackfill` must
give the same answers and the same start times, value by value.
"""

import bisect
import math
from array import array

from hypothesis import given
from hypothesis import strategies as st

from cosched.simulator.platform import Platform
from cosched.simulator.schedulers import conservative, make_scheduler
from cosched.simulator.schedulers.backfilling import ConservativeBackfill, Profile
from cosched.simulator.schedulers.easy import Conservative
from cosched.simulator.simulation import simulate
from cosched.simulator.workload import make_workload

from .conftest import platforms_and_workloads

INF = math.inf


class ReferenceProfile:
    """Free units over time as `total` plus every addition (begin, end, delta) covering the
    point."""

    def __init__(self, total: int, now: float):
        self.total, self.now, self.changes = total, now, []

    def advance(self, now: float) -> None:
        self.now = now

    def add(self, begin: float, end: float, delta: int) -> None:
        self.changes.append((begin, end, delta))

    def value(self, point: float) -> int:
        return self.total + sum(delta for begin, end, delta in self.changes if begin <= point < end)

    def boundaries(self) -> list:
        points = {x for begin, end, _ in self.changes for x in (begin, end) if self.now < x < INF}
        return [self.now] + sorted(points)

    def steps(self) -> list:
        """The step function from now on, without repeated values: [(time, free units), ...]."""
        steps = []
        for point in self.boundaries():
            value = self.value(point)
            if not steps or steps[-1][1] != value:
                steps.append((point, value))
        return steps

    def _fits(self, start: float, duration: float, units: int, own=lambda point: 0) -> bool:
        stop = start + duration
        points = [start] + [x for x in self.boundaries() if start < x < stop]
        return all(self.value(x) + own(x) >= units for x in points)

    def earliest(self, duration: float, units: int) -> float:
        return next(t for t in self.boundaries() if self._fits(t, duration, units))

    def earlier(self, duration: float, units: int, begin: float, end: float):
        def own(point):
            return units if begin <= point < end else 0

        return next(
            (t for t in self.boundaries() if t < begin and self._fits(t, duration, units, own)),
            None,
        )


class ReferenceBackfill(ConservativeBackfill):
    """The plain Conservative pass: each reserved job in the window is re-placed at its earliest
    slot if that is earlier (after capacity appeared), each job of the window without a reservation
    gets its earliest slot; queries scan `free`."""

    def __init__(self, engine, depth: int, first_reservations: dict | None = None):
        super().__init__(engine, depth, first_reservations)
        self.profile = _PlainProfile(engine.total_units, engine.now)
        self.reserved = {}  # waiting job -> (begin, end, units)

    @property
    def slot(self):
        return self.reserved

    def schedule(self, order: list) -> int:
        engine, profile, slot = self.engine, self.profile, self.slot
        now = engine.now
        window = order[: self.depth]
        new_jobs = any(job not in slot for job in window)
        if not self.dirty and not self.pending and not new_jobs and now < self.next_begin:
            return 0
        profile.advance(now)
        stale = [job for job in slot if job not in set(window)]
        for job in stale:
            begin, end, units = slot.pop(job)
            profile.add(begin, end, units)
        table, dirty, first = engine.units_table, self.dirty or bool(stale), self.first
        due, next_begin = [], INF
        for job in window:
            reserved = slot.get(job)
            duration = engine.estimate[job]
            if reserved is not None:
                begin, end, units = reserved
                if begin <= now:
                    due.append(job)
                    continue
                moved = profile.earlier(duration, units, begin, end) if dirty else None
                if moved is None:
                    next_begin = min(next_begin, begin)
                    continue
                profile.add(begin, end, units)
            else:
                units = table[job] if table is not None else engine.units(job)
            begin = profile.earliest(duration, units)
            end = begin + duration
            profile.add(begin, end, -units)
            slot[job] = (begin, end, units)
            if first is not None and job not in first:
                first[job] = begin
            if begin <= now:
                due.append(job)
                continue
            next_begin = min(next_begin, begin)
            if not reserved or begin != reserved[0]:
                engine.request_wakeup(begin)
        self.dirty = self.pending = False
        started = 0
        for job in due:
            begin, end, units = slot.pop(job)
            if engine.start(job):
                self.booked[job] = (engine.predicted_end[job], units)
                started += 1
            else:
                profile.add(begin, end, units)
                self.pending = True
        self.next_begin = next_begin
        return started


class _PlainProfile:
    """Step function in two lists, every query a scan from now (the simulator's profile before it
    got faster)."""

    def __init__(self, total, now):
        self.times, self.free = [now], [total]

    def advance(self, now):
        index = bisect.bisect_right(self.times, now) - 1
        if index > 0:
            del self.times[:index], self.free[:index]
        self.times[0] = now

    def _split(self, when):
        index = bisect.bisect_left(self.times, when)
        if index < len(self.times) and self.times[index] == when:
            return index
        self.times.insert(index, when)
        self.free.insert(index, self.free[index - 1])
        return index

    def add(self, begin, end, delta):
        begin = max(begin, self.times[0])
        if begin >= end:
            return
        first = self._split(begin)
        last = self._split(end) if end < INF else len(self.times)
        times, free = self.times, self.free
        for k in range(first, last):
            free[k] += delta
        if last < len(times) and free[last] == free[last - 1]:
            del times[last], free[last]
        if first > 0 and free[first] == free[first - 1]:
            del times[first], free[first]

    def earliest(self, duration, units):
        times, free = self.times, self.free
        k = 0
        while True:
            while free[k] < units:
                k += 1
            end, m = times[k] + duration, k + 1
            while m < len(times) and times[m] < end and free[m] >= units:
                m += 1
            if m == len(times) or times[m] >= end:
                return times[k]
            k = m + 1

    def earlier(self, duration, units, begin, end):
        times, free = self.times, self.free
        k = 0
        while True:
            while k < len(times) and times[k] < begin and free[k] < units:
                k += 1
            if k == len(times) or times[k] >= begin:
                return None
            stop, m = times[k] + duration, k + 1
            while (
                m < len(times)
                and times[m] < stop
                and free[m] + (units if begin <= times[m] < end else 0) >= units
            ):
                m += 1
            if m == len(times) or times[m] >= stop:
                return times[k]
            k = m + 1


class ReferenceConservative(Conservative):
    """Conservative backfilling run by `ReferenceBackfill`."""

    def attach(self, engine) -> None:
        super().attach(engine)
        self._conservative = ReferenceBackfill(engine, self.depth, self.reservations)


# --- the profile ----------------------------------------------------------------------------------

TIMES = st.one_of(
    st.integers(0, 40).map(float),
    st.integers(0, 160).map(lambda x: x / 4),
    st.integers(0, 400).map(lambda x: x / 10),
)
DURATIONS = st.one_of(
    st.sampled_from([0.0, 2.0, 5.0, 12.0]), TIMES
)  # repeated shapes, as job arrays
OPERATIONS = st.lists(
    st.one_of(
        st.tuples(
            st.just("place"), DURATIONS, st.integers(1, 6)
        ),  # reserve the earliest slot of a new job
        st.tuples(
            st.just("release"), st.integers(0, 30)
        ),  # a reservation or running job gives its units back
        st.tuples(st.just("compress"), st.booleans()),  # re-place reservations earlier, in order
        st.tuples(st.just("advance"), TIMES),  # time passes; due reservations start running
    ),
    min_size=1,
    max_size=40,
)


@given(total=st.integers(1, 6), operations=OPERATIONS)
def test_profile_answers_like_the_reference(total, operations):
    profile, reference = Profile(total, 0.0), ReferenceProfile(total, 0.0)
    now, held = (
        0.0,
        [],
    )  # held: [begin, end, units, duration], in queue order (started ones included)
    for operation in operations:
        kind = operation[0]
        if kind == "place":
            _, duration, units = operation
            units = min(units, total)
            begin = profile.earliest(duration, units)
            assert begin == reference.earliest(duration, units)
            profile.add(begin, begin + duration, -units)
            reference.add(begin, begin + duration, -units)
            held.append([begin, begin + duration, units, duration])
        elif kind == "release" and held:
            begin, end, units, _ = held.pop(operation[1] % len(held))
            profile.add(max(begin, now), end, units)
            reference.add(max(begin, now), end, units)
        elif kind == "compress":
            for reservation in held:
                begin, end, units, duration = reservation
                if begin <= now:
                    continue
                moved = profile.earlier(duration, units, begin, end)
                assert moved == reference.earlier(duration, units, begin, end)
                if moved is not None and operation[1]:
                    profile.move(begin, end, moved, moved + duration, units)
                    reference.add(begin, end, units)
                    reference.add(moved, moved + duration, -units)
                    reservation[:2] = [moved, moved + duration]
        elif kind == "advance":
            now += operation[1]
            profile.advance(now)
            reference.advance(now)
        for duration in (0.0, 1.0, 7.5):  # queries of other shapes see the same profile
            assert profile.earliest(duration, total) == reference.earliest(duration, total)
    profile.settle()
    assert list(zip(profile.times, profile.free)) == reference.steps()
    assert min(profile.free) >= 0


@given(
    total=st.integers(1, 6), operations=OPERATIONS, sizes=st.lists(st.integers(0, 7), max_size=4)
)
def test_the_kept_first_segment_with_enough_units_is_that_of_the_lists(total, operations, sizes):
    # asked between every change (so kept answers must be dropped when the lists change): the
    # first segment with `units` free is the first one a scan of the lists finds
    profile, now, held = Profile(total, 0.0), 0.0, []
    for operation in operations:
        kind = operation[0]
        if kind == "place":
            _, duration, units = operation
            begin = profile.earliest(duration, min(units, total))
            profile.add(begin, begin + duration, -min(units, total))
            held.append([begin, begin + duration, min(units, total), duration])
        elif kind == "release" and held:
            begin, end, units, _ = held.pop(operation[1] % len(held))
            profile.add(max(begin, now), end, units)
        elif kind == "compress":
            for reservation in held:
                begin, end, units, duration = reservation
                moved = profile.earlier(duration, units, begin, end) if begin > now else None
                if moved is not None:
                    profile.move(begin, end, moved, moved + duration, units)
                    reservation[:2] = [moved, moved + duration]
        elif kind == "advance":
            now += operation[1]
            profile.advance(now)
        for units in sizes:
            scan = next(
                (k for k, free in enumerate(profile.free) if free >= units), len(profile.free)
            )
            assert profile.first_with(units) == scan


@given(
    times=st.lists(TIMES, max_size=12).map(sorted),
    when=TIMES,
    bounds=st.tuples(st.integers(0, 12), st.integers(0, 12)).map(sorted),
)
def test_the_profile_searches_find_what_bisect_finds(times, when, bounds):
    # the profile's own binary searches (typed, so that they run in C when compiled) answer as
    # `bisect` does, on any slice of a sorted list with repeated times
    low, high = min(bounds[0], len(times)), min(bounds[1], len(times))
    for after, search in ((False, bisect.bisect_left), (True, bisect.bisect_right)):
        found = conservative._first_index(array("d", times), when, low, high, after=after)
        assert found == search(times, when, low, high)


# --- whole runs -----------------------------------------------------------------------------------


def _starts(workload, platform, scheduler, use_run_times):
    """Start times of a run, or the error that stopped it (a window smaller than the queue can leave
    jobs that slid into it unplaced: both implementations must then stop the same way)."""
    try:
        return simulate(workload, platform, scheduler, use_run_times=use_run_times).start.tolist()
    except RuntimeError as error:
        return str(error)


@given(
    case=platforms_and_workloads(max_jobs=30),
    depth=st.sampled_from([1, 3, 100]),
    use_run_times=st.booleans(),
)
def test_conservative_starts_exactly_as_the_plain_pass(case, depth, use_run_times):
    platform, workload = case
    fast = make_scheduler("conservative", depth=depth, record_reservations=True)
    plain = ReferenceConservative(depth=depth, record_reservations=True)
    assert _starts(workload, platform, fast, use_run_times) == _starts(
        workload, platform, plain, use_run_times
    )
    assert fast.reservations == plain.reservations


@given(case=platforms_and_workloads(max_jobs=30))
def test_with_exact_estimates_no_job_starts_after_its_first_reservation(case):
    platform, workload = case
    scheduler = make_scheduler("conservative", depth=100, record_reservations=True)
    result = simulate(workload, platform, scheduler, use_run_times=True)
    assert set(scheduler.reservations) == set(range(len(workload)))
    for job, reservation in scheduler.reservations.items():
        assert result.start[job] <= reservation


def test_a_queue_of_identical_jobs_shifts_into_the_slots_left_free():
    # one unit; job 0 runs 0-10 but was estimated to 100: the queued jobs 1-3 (estimate 50) move up
    # together
    profile = Profile(1, 0.0)
    profile.add(0.0, 100.0, -1)
    slots = []
    for _ in range(3):
        begin = profile.earliest(50.0, 1)
        profile.add(begin, begin + 50.0, -1)
        slots.append(begin)
    assert slots == [100.0, 150.0, 200.0]
    profile.advance(10.0)
    profile.add(10.0, 100.0, 1)  # job 0 ends early
    for index, begin in enumerate(slots):
        moved = profile.earlier(50.0, 1, begin, begin + 50.0)
        assert moved == 10.0 + 50.0 * index
        profile.move(begin, begin + 50.0, moved, moved + 50.0, 1)
    assert profile.pending is not None  # the three moves merged into one pending change
    profile.settle()
    assert list(zip(profile.times, profile.free)) == [(10.0, 0), (160.0, 1)]


def test_only_a_move_of_the_same_units_into_the_slot_just_left_merges():
    profile, reference = Profile(3, 0.0), ReferenceProfile(3, 0.0)
    for begin, end, units in ((5.0, 15.0, 1), (15.0, 25.0, 2)):
        profile.add(begin, end, -units)
        reference.add(begin, end, -units)
    moves = ((5.0, 15.0, 0.0, 10.0, 1), (15.0, 25.0, 5.0, 15.0, 2))  # same duration, other units
    for begin, end, start, stop, units in moves:
        profile.move(begin, end, start, stop, units)
        reference.add(begin, end, units)
        reference.add(start, stop, -units)
    assert profile.earlier(10.0, 3, 30.0, 40.0) == reference.earlier(10.0, 3, 30.0, 40.0)
    profile.settle()
    assert list(zip(profile.times, profile.free)) == reference.steps()


def test_a_long_window_with_one_short_segment_far_in_it_does_not_fit():
    # 60 one-second segments alternating 3 and 2 free units, one of them with 1: a 45 s window
    # asking for 2 units cannot start before the short segment
    for short in (15.0, 16.0, 17.0, 18.0):
        profile, reference = Profile(3, 0.0), ReferenceProfile(3, 0.0)
        for second in range(60):
            taken = 2 if float(second) == short else 1 if second % 2 else 0
            if taken:
                profile.add(float(second), second + 1.0, -taken)
                reference.add(float(second), second + 1.0, -taken)
        assert profile.earliest(45.0, 2) == reference.earliest(45.0, 2) == short + 1.0


def test_a_job_moves_to_a_hole_that_does_not_reach_its_reservation():
    # one unit: R runs on [0, 3.5), K waits on [3.5, 6), J on [6, 9); R ends at once: J fits whole
    # in [0, 3)
    profile = Profile(1, 0.0)
    profile.add(0.0, 3.5, -1)
    for duration, expected in ((2.5, 3.5), (3.0, 6.0)):
        begin = profile.earliest(duration, 1)
        assert begin == expected
        profile.add(begin, begin + duration, -1)
    profile.add(0.0, 3.5, 1)
    assert profile.earlier(2.5, 1, 3.5, 6.0) == 0.0  # K: the run of free segments reaching it
    assert profile.earlier(3.0, 1, 6.0, 9.0) == 0.0  # J: a whole window before its reservation


def test_a_job_whose_own_units_end_before_its_window_gets_the_plain_answer():
    profile, reference = Profile(2, 0.0), ReferenceProfile(2, 0.0)
    for begin, end, delta in ((0.0, 4.0, -2), (6.0, 9.0, -1), (4.0, 6.0, -1)):
        profile.add(begin, end, delta)
        reference.add(begin, end, delta)
    for duration, units, begin, end in (
        (5.0, 1, 6.0, 8.0),
        (3.0, 1, 8.0, 9.0),
        (2.0, 2, 9.0, 10.0),
    ):
        assert profile.earlier(duration, units, begin, end) == reference.earlier(
            duration, units, begin, end
        )


class _QueueView:
    """The little of a `SchedulerView` a Conservative pass reads, on one 2-unit machine at time 0,
    with every wake-up it asks for recorded."""

    def __init__(self, estimates: list, units: list):
        self.total_units, self.now = 2, 0.0
        self.estimate, self.units_table = estimates, units
        self.predicted_end = {}
        self.wakeups = []

    def units(self, job):
        return self.units_table[job]

    def request_wakeup(self, when):
        self.wakeups.append(when)

    def start(self, job):
        self.predicted_end[job] = self.now + self.estimate[job]
        return True


def test_a_pass_asks_for_one_wakeup_at_the_earliest_reservation_start():
    # job 0 takes the machine for 10 s; jobs 1-3 are reserved at 10, 15 and 20: the engine need
    # only wake the scheduler at 10 (the pass there asks for 15), not at every reservation
    view = _QueueView([10.0, 5.0, 5.0, 5.0], [2, 2, 2, 2])
    conservative = ConservativeBackfill(view, depth=10)
    assert conservative.schedule([0, 1, 2, 3]) == 1
    assert [conservative.slot[job][0] for job in (1, 2, 3)] == [10.0, 15.0, 20.0]
    assert view.wakeups == [10.0]
    view.now = 10.0
    conservative.finished(0)
    assert conservative.schedule([1, 2, 3]) == 1
    assert view.wakeups == [10.0, 15.0]


def test_a_job_sliding_into_a_one_job_window_is_reserved_when_the_job_ahead_starts():
    # one node, a window of one job: job 0 starts at 0, job 1 slides into the window in that pass
    # and is reserved after job 0; job 2 slides in when job 1 starts
    workload = make_workload([0, 1, 2], [0, 0, 0], [10, 5, 5], [1, 1, 1], [10, 5, 5])
    scheduler = make_scheduler("conservative", depth=1, record_reservations=True)
    result = simulate(workload, Platform(1, 1, 1), scheduler)
    assert result.start.tolist() == [0, 10, 15]
    assert scheduler.reservations == {0: 0.0, 1: 10.0, 2: 15.0}


def test_a_profile_of_many_segments_grows_its_buffers_and_answers_like_the_reference():
    # 150 half-second reservations of one of two units, one a second: 300 segments, past the
    # buffers' first room (FIRST_CAPACITY); then every other one given back
    profile, reference = Profile(2, 0.0), ReferenceProfile(2, 0.0)
    for second in range(150):
        for each in (profile, reference):
            each.add(float(second), second + 0.5, -1)
    assert profile.size == 300 > conservative.FIRST_CAPACITY
    for second in range(0, 150, 2):
        for each in (profile, reference):
            each.add(float(second), second + 0.5, 1)
    assert list(zip(profile.times, profile.free)) == reference.steps()
    for duration, units in ((0.5, 2), (1.5, 2), (0.25, 1), (3.0, 2)):
        assert profile.earliest(duration, units) == reference.earliest(duration, units)


def test_the_reservations_read_as_a_mapping_and_jobs_beyond_the_first_room_are_held():
    # the view first knows 4 jobs; 2 more arrive later (indices past the arrays' first size)
    view = _QueueView([10.0, 5.0, 5.0, 5.0], [2, 2, 2, 2])
    conservative = ConservativeBackfill(view, depth=10)
    conservative.schedule([0, 1, 2, 3])
    view.estimate += [4.0, 4.0]
    view.units_table += [1, 1]
    conservative.arrived()
    conservative.schedule([1, 2, 3, 4, 5])
    assert dict(conservative.slot) == {
        1: (10.0, 15.0, 2, 5.0),
        2: (15.0, 20.0, 2, 5.0),
        3: (20.0, 25.0, 2, 5.0),
        4: (25.0, 29.0, 1, 4.0),
        5: (25.0, 29.0, 1, 4.0),
    }
    assert len(conservative.slot) == 5 and 5 in conservative.slot and 0 not in conservative.slot
    assert conservative.reservation(0) is None and conservative.reservation(99) is None
