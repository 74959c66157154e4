"""The fast sensing-series writer writes what formatting each cell on its own writes."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from cosched.simulator.elastic import sensing


def _reference(header, times, columns) -> str:
    """Each cell formatted alone: times `%.10g`, values `%.6g` (ElastiSim's 6 digits)."""
    lines = [",".join(header)]
    for row, when in enumerate(times.tolist()):
        lines.append(",".join([f"{when:.10g}"] + [f"{column[row]:.6g}" for column in columns]))
    return "\n".join(lines) + "\n"


_cell = st.sampled_from([0.0, 1.0, 0.0, 1.0, 0.5, 0.25, 1 / 3, 0.999999])


@settings(max_examples=40, deadline=None)
@given(
    rows=st.integers(1, 40),
    width=st.integers(1, 12),
    interval=st.sampled_from([1.0, 0.5, 0.1, 7.0, 3e8]),
    data=st.data(),
)
def test_write_series_matches_cell_by_cell(tmp_path_factory, rows, width, interval, data):
    times = np.arange(1, rows + 1) * interval
    columns = [
        np.array(data.draw(st.lists(_cell, min_size=rows, max_size=rows))) for _ in range(width)
    ]
    header = ["Time", *(f"n{index}" for index in range(width))]
    path = tmp_path_factory.mktemp("series") / "s.csv"
    old = sensing.ROWS_PER_BLOCK
    sensing.ROWS_PER_BLOCK = 7  # several blocks even on small inputs
    try:
        sensing.write_series(path, header, times, columns)
    finally:
        sensing.ROWS_PER_BLOCK = old
    assert path.read_text() == _reference(header, times, columns)


_value = st.one_of(
    st.sampled_from([0.0, -0.0, 1.0, float("nan"), float("inf"), -float("inf"), 1e300, 5e-324]),
    st.floats(allow_nan=True, allow_infinity=True),
)


@settings(max_examples=60, deadline=None)
@given(
    distinct=st.lists(st.lists(_value, min_size=4, max_size=4), min_size=1, max_size=6),
    repeats=st.lists(st.tuples(st.integers(0, 5), st.integers(1, 9)), min_size=1, max_size=12),
)
def test_dense_series_with_any_floats_matches_cell_by_cell(tmp_path_factory, distinct, repeats):
    """The PFS-like series (few columns, runs of equal rows, every value its own text: -0.0,
    NaN, infinities, subnormals) is each cell formatted alone, across blocks."""
    rows = [distinct[pick % len(distinct)] for pick, count in repeats for _ in range(count)]
    times = np.arange(1, len(rows) + 1, dtype=np.float64)
    columns = [np.array([row[column] for row in rows]) for column in range(4)]
    header = ["Time", "Read", "Write", "Read (rel.)", "Write (rel.)"]
    path = tmp_path_factory.mktemp("dense") / "s.csv"
    old = sensing.ROWS_PER_BLOCK
    sensing.ROWS_PER_BLOCK = 5  # runs cross block ends
    try:
        sensing.write_series(path, header, times, columns)
    finally:
        sensing.ROWS_PER_BLOCK = old
    assert path.read_text() == _reference(header, times, columns)


_stay = st.tuples(
    st.integers(0, 3),
    st.sampled_from([0.0, 0.5, 1.0, 1.25, 2.0, 3.7, 9.0]),
    st.sampled_from([0.0, 0.25, 1.0, 2.5]),
)


@settings(max_examples=60, deadline=None)
@given(
    busy=st.lists(_stay, max_size=8),
    idle=st.lists(_stay, max_size=8),
    rows=st.integers(0, 12),
    interval=st.sampled_from([1.0, 0.5, 2.0]),
)
def test_busy_shares_of_all_nodes_match_node_by_node(busy, idle, rows, interval):
    # stays (node, start, length) make a node busy, waits for I/O inside them make it idle
    count = 4
    events = [(node, start, 1) for node, start, _ in busy]
    events += [(node, start + length, -1) for node, start, length in busy]
    events += [(node, start, -1) for node, start, _ in idle]
    events += [(node, start + length, 1) for node, start, length in idle]
    nodes = np.array([event[0] for event in events], dtype=np.int64)
    times = np.array([event[1] for event in events], dtype=np.float64)
    steps = np.array([event[2] for event in events], dtype=np.int64)
    together = sensing.busy_shares_by_node(nodes, times, steps, count, rows, interval)
    for node in range(count):
        mine = sorted((when, step) for owner, when, step in events if owner == node)
        level = (np.cumsum([step for _, step in mine]) > 0).astype(np.float64)
        alone = sensing.busy_shares(np.array([when for when, _ in mine]), level, rows, interval)
        assert len(together[node][0]) == rows
        for left, right in zip(together[node], alone):
            assert np.array_equal(left, right)


def _plain_means(times, levels, samples, interval):
    """The PFS series' interval means as one expression (results._per_interval computes them in
    place)."""
    if not len(times):
        return np.zeros((len(samples), levels.shape[1]))
    integral = np.concatenate(
        (np.zeros((1, levels.shape[1])), np.cumsum(levels[:-1] * np.diff(times)[:, None], axis=0))
    )
    at = np.searchsorted(times, samples, side="right") - 1
    clipped = np.maximum(at, 0)
    total = np.where(
        (at >= 0)[:, None],
        integral[clipped] + levels[clipped] * (samples - times[clipped])[:, None],
        0.0,
    )
    return np.diff(total, axis=0, prepend=0.0) / interval


_level = st.sampled_from([0.0, -0.0, 1e9, 3.3e8, 1 / 3, 2.5e-7, float("inf"), float("nan")])


@settings(max_examples=60, deadline=None)
@given(
    steps=st.lists(
        st.tuples(st.sampled_from([0.0, 0.25, 0.5, 1.0, 2.5, 3.0, 7.75]), _level, _level),
        max_size=30,
    ),
    rows=st.integers(0, 40),
    interval=st.sampled_from([1.0, 0.5, 3.0]),
)
def test_pfs_interval_means_are_the_plain_expressions_bit_for_bit(steps, rows, interval):
    from cosched.simulator.elastic import results

    log = np.array(sorted(steps, key=lambda step: step[0]), dtype=np.float64).reshape(-1, 3)
    samples = np.arange(1, rows + 1) * interval
    with np.errstate(invalid="ignore"):
        got = results._per_interval(log[:, 0], log[:, 1:], samples, interval)
        want = _plain_means(log[:, 0], log[:, 1:], samples, interval)
    assert got.shape == want.shape and got.tobytes() == want.tobytes()


def _node_utilization_reference(names, log) -> bytes:
    """node_utilization.csv as csv.writer writes it, row by row."""
    import csv
    import io

    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer)
    writer.writerow(("Time", "Node", "State", "Running jobs", "Expected jobs"))
    for when, node, state, running, expected in log:
        writer.writerow(
            (
                repr(float(when)),
                names[node],
                state.name.lower(),
                ";".join(map(str, running)) or "none",
                ";".join(map(str, expected)) or "none",
            )
        )
    return buffer.getvalue().encode()


@settings(max_examples=40, deadline=None)
@given(
    names=st.lists(st.text(max_size=6), min_size=1, max_size=4),
    entries=st.lists(
        st.tuples(
            st.sampled_from([0.0, -0.0, 0.5, 1.0, 1e-7, 3.25e9]),
            st.integers(0, 3),
            st.sampled_from(["FREE", "ALLOCATED", "RESERVED"]),
            st.lists(st.integers(0, 20), max_size=3).map(tuple),
            st.lists(st.integers(0, 20), max_size=2).map(tuple),
        ),
        max_size=25,
    ),
)
def test_node_utilization_is_what_csv_writer_writes(tmp_path_factory, names, entries):
    """Any node names (commas, quotes, line ends, empty), times, states and job lists."""
    from types import SimpleNamespace

    from cosched.simulator.elastic import results
    from cosched.simulator.elastic.compat import NodeState

    log = [
        (when, node % len(names), NodeState[state], running, expected)
        for when, node, state, running, expected in entries
    ]
    sim = SimpleNamespace(platform=SimpleNamespace(names=names), node_log=log)
    path = tmp_path_factory.mktemp("nodes") / "node_utilization.csv"
    results.write_node_utilization(sim, path)
    assert path.read_bytes() == _node_utilization_reference(names, log)
