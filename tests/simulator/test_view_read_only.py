"""The per-job state the scheduler's view hands out is read-only at run time: a plug-in that writes
into a column (``view.predicted_end[j] = 0``) gets a clear ``TypeError`` and the engine's state
stays as it was; reading a column behaves as reading the engine's list."""

from bisect import insort

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cosched.simulator.engine import Engine
from cosched.simulator.jobs import malleable
from cosched.simulator.platform import Platform
from cosched.simulator.simulation import simulate
from cosched.simulator.view import (
    VIEW_MEMBERS,
    SortedColumn,
    WaitingJobs,
    insert_sorted,
    read_only,
    remove_sorted,
)
from cosched.simulator.workload import make_workload

# every column of per-job state the engine updates during a run (the view's module docstring)
PER_JOB_COLUMNS = (
    "state",
    "first_start",
    "started",
    "end",
    "allocation",
    "held",
    "speed",
    "rate",
    "remaining",
    "updated",
    "version",
    "checkpoints",
    "lost",
    "lost_setup",
    "preemptions",
    "predicted_end",
    "queued_duration",
    "by_end",
    "placement",
    "units_table",
    "waiting_units",
    "queue",
)


class WritesIntoTheView:
    """A plug-in that, at its first pass with a running job and a waiting one, tries to change each
    column in place, then schedules first come, first served."""

    name = "writes-into-the-view"

    def __init__(self) -> None:
        self.refused: dict[str, list[str]] = {}
        self.unchanged: dict[str, bool] = {}
        self.tried = False

    def schedule(self, view) -> None:
        if not self.tried and view.running and view.waiting:
            self.tried = True
            for name in PER_JOB_COLUMNS:
                self.try_writes(view, name)
        while view.waiting and view.start(next(iter(view.waiting))):
            pass

    def try_writes(self, view, name: str) -> None:
        column = getattr(view, name)
        before = list(column)
        refused = []
        for write in (
            lambda: column.__setitem__(0, column[0]),
            lambda: column.__setitem__(slice(0, 1), column[:1]),
            lambda: column.__delitem__(0),
        ):
            try:
                write()
            except TypeError as error:
                refused.append(str(error))
        mutators = ("append", "insert", "pop", "sort", "clear")
        refused.extend(f"no {method}" for method in mutators if not hasattr(column, method))
        self.refused[name] = refused
        after = list(column)  # the times are an array: its NaNs are new floats at each read
        self.unchanged[name] = len(after) == len(before) and all(
            a == b or a != a and b != b for a, b in zip(after, before)
        )


def test_a_plug_in_writing_into_any_per_job_column_gets_a_clear_type_error():
    # three 2-node jobs on 3 nodes, malleable (a job model for each: queued_duration is a column)
    workload = make_workload([1, 2, 3], [0, 1, 2], [10, 10, 10], [2, 2, 2], [10, 10, 10])
    plug_in = WritesIntoTheView()
    result = Engine(workload, Platform(3), plug_in, job_models=[malleable(1, 2)] * 3).run()
    assert plug_in.tried
    for name in PER_JOB_COLUMNS:
        messages = plug_in.refused[name]
        assert len(messages) == 8, (name, messages)  # 3 writes refused, 5 list mutators absent
        assert all("read-only" in message and f"{name}[" in message for message in messages[:3]), (
            messages
        )
        assert plug_in.unchanged[name], name
    assert result.start.tolist() == [0.0, 10.0, 20.0]  # the run went on, unaffected


def test_every_list_the_view_hands_out_is_read_only():
    workload = make_workload([1, 2], [0, 5], [10, 10], [1, 1], [10, 10])
    seen = []

    def scheduler(view):
        seen.append(sorted(name for name in VIEW_MEMBERS if isinstance(getattr(view, name), list)))
        while view.waiting and view.start(next(iter(view.waiting))):
            pass

    simulate(workload, Platform(2), scheduler)
    assert seen and all(names == [] for names in seen)


@given(
    st.lists(st.integers(-3, 3), max_size=8),
    st.integers(-10, 10),
    st.integers(-10, 10),
    st.integers(-3, 3),
)
def test_a_column_reads_as_its_list_and_sees_every_change(items, index, stop, value):
    column = read_only(items, "column")
    assert len(column) == len(items) and list(column) == items and column == items
    assert list(reversed(column)) == items[::-1] and column[index:stop] == items[index:stop]
    assert (value in column) == (value in items) and column.count(value) == items.count(value)
    if -len(items) <= index < len(items):
        assert column[index] == items[index]
    else:
        with pytest.raises(IndexError):
            column[index]
    if value in items:
        assert column.index(value) == items.index(value)
    items.append(value)  # the engine's list grows (an arrival): the column sees it
    assert column[-1] == value and len(column) == len(items)
    with pytest.raises(TypeError, match=r"read-only \(cannot change column\[0\]\)"):
        column[0] = value


@given(
    st.lists(st.tuples(st.booleans(), st.integers(0, 40)), max_size=150),
    st.booleans(),
    st.integers(-45, 45),
    st.integers(-45, 45),
    st.sampled_from([None, 1, 2, -1, -3]),
    st.integers(-2, 42),
    st.booleans(),
)
def test_a_sorted_column_reads_as_the_sorted_list_of_its_values_after_any_changes(
    changes, distinct, index, stop, step, value, counted
):
    """The engine's ascending columns (the queue: distinct job indices; the waiting units: equal
    values too), kept with a gap in front or `counted`, read as the sorted list of the values that
    entered and have not left, after every change; the head the compiled passes read is the
    smallest."""
    column, values = SortedColumn("queue", counted=counted), []
    for enters, number in changes:
        if enters and not (distinct and number in values):
            insert_sorted(column, number)
            insort(values, number)
        elif not enters and values:
            leaving = values[number % len(values)]
            remove_sorted(column, leaving)
            values.remove(leaving)
        assert len(column) == len(values) and column == values and bool(column) == bool(values)
        assert [column[at] for at in range(-len(values), len(values))] == values + values
        if values and hasattr(column, "_items"):  # plain Python: the fields read
            assert column._items[column._head] == values[0]
    assert list(column) == values and list(reversed(column)) == values[::-1]
    assert column[index:stop] == values[index:stop]
    assert column[index:stop:step] == values[index:stop:step]
    assert (value in column) == (value in values) and column.count(value) == values.count(value)
    if value in values:
        assert column.index(value) == values.index(value)
    if -len(values) <= index < len(values):
        assert column[index] == values[index]
    else:
        with pytest.raises(IndexError):
            column[index]
    with pytest.raises(TypeError, match=r"read-only \(cannot change queue\[0\]\)"):
        column[0] = value


@given(st.lists(st.tuples(st.booleans(), st.integers(0, 40)), max_size=80), st.integers(-2, 42))
def test_the_waiting_jobs_read_as_a_mapping_over_the_queue(changes, job):
    """`view.waiting` is the queue column as a read-only mapping job -> None in queue order, as the
    ordered dict of the waiting jobs it replaces."""
    queue = SortedColumn("queue")
    waiting, expected = WaitingJobs(queue), {}
    for enters, number in changes:
        if enters and number not in expected:
            insert_sorted(queue, number)
            expected = dict.fromkeys(sorted([*expected, number]))
        elif not enters and number in expected:
            remove_sorted(queue, number)
            del expected[number]
        assert list(waiting) == list(expected) and len(waiting) == len(expected)
    assert (job in waiting) == (job in expected) and waiting.get(job, 1) == expected.get(job, 1)
    assert waiting == expected and list(waiting.items()) == list(expected.items())
    assert list(waiting.keys()) == list(expected) and "a" not in waiting
    if job in expected:
        assert waiting[job] is None
    else:
        with pytest.raises(KeyError):
            waiting[job]
    with pytest.raises(TypeError, match=r"read-only \(cannot change waiting\[0\]\)"):
        waiting[0] = None
