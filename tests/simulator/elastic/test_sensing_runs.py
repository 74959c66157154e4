"""The CPU series written from runs of equal rows is what formatting each cell on its own writes,
and the summary's medians are numpy's."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from cosched.simulator.elastic import sensing
from cosched.simulator.elastic.results import _median

_stay = st.tuples(
    st.integers(0, 4),
    st.sampled_from([0.0, 0.5, 1.0, 1.25, 2.0, 3.7, 9.0, 1 / 3, 6.999999]),
    st.sampled_from([0.0, 0.25, 1.0, 2.5, 1e-7]),
)


def _reference(header, times, columns) -> str:
    """Each cell formatted alone: times `%.10g`, values `%.6g` (ElastiSim's 6 digits)."""
    lines = [",".join(header)]
    for row, when in enumerate(times.tolist()):
        lines.append(",".join([f"{when:.10g}"] + [f"{column[row]:.6g}" for column in columns]))
    return "\n".join(lines) + "\n"


@settings(max_examples=60, deadline=None)
@given(
    busy=st.lists(_stay, max_size=10),
    idle=st.lists(_stay, max_size=10),
    rows=st.integers(1, 14),
    interval=st.sampled_from([1.0, 0.5, 2.0, 0.1]),
    block=st.integers(1, 9),
)
def test_cpu_series_from_runs_matches_cell_by_cell(
    tmp_path_factory, busy, idle, rows, interval, block
):
    # stays (node, start, length) make a node busy, waits for I/O inside them make it idle
    count = 5
    events = [(node, start, 1) for node, start, _ in busy]
    events += [(node, start + length, -1) for node, start, length in busy]
    events += [(node, start, -1) for node, start, _ in idle]
    events += [(node, start + length, 1) for node, start, length in idle]
    nodes = np.array([event[0] for event in events], dtype=np.int64)
    times = np.array([event[1] for event in events], dtype=np.float64)
    steps = np.array([event[2] for event in events], dtype=np.int64)
    columns = []
    for node in range(count):  # node by node, as `busy_shares` computes one column
        mine = sorted((when, step) for owner, when, step in events if owner == node)
        level = (np.cumsum([step for _, step in mine]) > 0).astype(np.float64)
        base, odd, values = sensing.busy_shares(
            np.array([when for when, _ in mine]), level, rows, interval
        )
        column = base.astype(np.float64)
        column[odd] = values
        columns.append(column)
    samples = np.arange(1, rows + 1) * interval
    header = ["Time", *(f"n{node}" for node in range(count))]
    path = tmp_path_factory.mktemp("runs") / "cpu.csv"
    old = sensing.ROWS_PER_BLOCK
    sensing.ROWS_PER_BLOCK = block  # several blocks even on small inputs
    try:
        runs = sensing.node_runs(nodes, times, steps, count, rows, interval)
        sensing.write_runs(path, header, samples, runs)
    finally:
        sensing.ROWS_PER_BLOCK = old
    assert path.read_text() == _reference(header, samples, columns)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.floats(min_value=-1e12, max_value=1e12, allow_nan=False, allow_infinity=False),
        min_size=1,
        max_size=40,
    )
)
def test_summary_median_is_numpys(values):
    assert _median(values) == float(np.median(values))
