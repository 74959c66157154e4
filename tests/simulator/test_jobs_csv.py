"""The pandas-free jobs.csv (`cosched.simulator.jobs_csv`) is byte for byte the file pandas writes
from `SimulationResult.jobs_frame()`, on real runs and on generated columns."""

from __future__ import annotations

import io

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from cosched.simulator import jobs_csv
from cosched.simulator.jobs_csv import (
    integer_words,
    jobs_csv_blocks,
    jobs_csv_text,
    node_cells,
    whole_numbers,
)
from cosched.simulator.platform import PRESETS
from cosched.simulator.result import SimulationResult
from cosched.simulator.workload import Workload

HEADER = "name_A,procs_A,compact_A,name_B,procs_B,compact_B,co_A_B,co_B_A\n"
INT64 = st.integers(-(2**63), 2**63 - 1)


def _pandas_text(result) -> str:
    expected = io.StringIO()
    result.jobs_frame().to_csv(expected, index=False)
    return expected.getvalue()


def _results(tmp_path):
    from cosched.simulator.compare import load_inputs
    from cosched.simulator.simulation import simulate
    from cosched.theory.heatmap import read_heatmap

    workload = tmp_path / "w.csv"
    workload.write_text(
        "job_id,submit_time,run_time,cores,estimate,app\n"
        + "".join(
            f"{i},{i * 7 % 50},{5 + i % 13 + 0.25},{2 + 2 * (i % 3)},{20 + i % 13},{'ab'[i % 2]}\n"
            for i in range(30)
        )
    )
    heatmap = tmp_path / "h.csv"
    heatmap.write_text(HEADER + "a,2,10,a,2,10,12,12\na,2,10,b,2,20,13,25\nb,2,20,b,2,20,22,22\n")
    platform, jobs = load_inputs(workload, "grvingt")
    yield simulate(jobs, platform, "easy")
    yield simulate(jobs.head(7), platform, "conservative")
    yield simulate(jobs.head(0), platform, "easy")
    yield simulate(jobs, platform, "sjf-co", heatmap=read_heatmap(heatmap))
    platform, jobs = load_inputs("kth-sp2", "kth-sp2", limit=200)
    yield simulate(jobs, platform, "easy")


def test_pandas_free_jobs_csv_is_pandas_file_byte_for_byte(tmp_path):
    for result in _results(tmp_path):
        assert jobs_csv_text(result) == _pandas_text(result)


def test_blocks_of_rows_join_to_the_pandas_file(tmp_path, monkeypatch):
    monkeypatch.setattr(jobs_csv, "BLOCK_ROWS", 4)  # several blocks, the last one short
    for result in _results(tmp_path):
        blocks = list(jobs_csv_blocks(result))
        assert len(blocks) == 1 + -(-len(result.start) // 4)  # the header, then the blocks
        assert b"".join(blocks).decode() == _pandas_text(result)


FLOAT = st.one_of(
    st.floats(),
    st.integers(-(10**17), 10**17).map(float),
    st.sampled_from([0.0, -0.0, 1e16, -1e16, 1e16 - 2, 0.5, -2.0]),
)
APP = st.text(alphabet="ab ,\"'\n;é", max_size=3)


@settings(max_examples=40, deadline=None)
@given(
    data=st.data(),
    jobs=st.integers(0, 12),
    whole=st.booleans(),
    co_scheduled=st.booleans(),
)
def test_generated_columns_are_written_as_pandas_writes_them(data, jobs, whole, co_scheduled):
    """Any mix of whole and fractional floats (NaN, -0.0, exponents), negative ids, empty node
    lists and app names pandas quotes: the same bytes as pandas, or None and pandas writes."""
    floats = st.integers(-(10**9), 10**9).map(float) if whole else FLOAT
    column = lambda values: np.array(data.draw(st.lists(values, min_size=jobs, max_size=jobs)))  # noqa: E731
    optional = lambda values: column(values) if data.draw(st.booleans()) else None  # noqa: E731
    workload = Workload(
        job_id=column(INT64).astype(np.int64),
        submit=column(floats).astype(np.float64),
        run=column(floats).astype(np.float64),
        cores=column(st.integers(1, 10**6)).astype(np.int64),
        estimate=column(floats).astype(np.float64),
        app=optional(APP),
        memory=optional(floats),
        gpus=optional(st.integers(0, 8)),
    )
    if workload.app is not None:
        workload = Workload(**{**vars(workload), "app": workload.app.astype(object)})
    nodes = [
        np.array(ids, dtype=np.int64)
        for ids in data.draw(
            st.lists(st.lists(st.integers(0, 3000), max_size=5), min_size=jobs, max_size=jobs)
        )
    ]
    result = SimulationResult(
        workload,
        PRESETS["kth-sp2"],
        "easy",
        column(floats).astype(np.float64),
        column(floats).astype(np.float64),
        nodes,
        0.0,
        co_scheduled=co_scheduled,
    )
    with np.errstate(all="ignore"):
        text = jobs_csv_text(result)
        expected = _pandas_text(result)
    if text is None:  # only where a cell needs pandas' quoting
        assert workload.app is not None and any(
            c in name for name in workload.app.tolist() for c in ',"\n'
        )
    else:
        assert text == expected


def _texts(cells: np.ndarray) -> list[str]:
    """Each row of a byte matrix as text, its zero bytes deleted (as jobs.csv's are)."""
    return [row.tobytes().replace(b"\0", b"").decode() for row in cells]


@settings(max_examples=80, deadline=None)
@given(st.lists(INT64, min_size=1, max_size=20), st.sampled_from(["", ",", ".0,", ".0\n"]))
def test_integer_words_are_each_value_in_decimal_and_the_suffix(values, suffix):
    words = integer_words(np.array(values, dtype=np.int64), suffix.encode())
    assert _texts(words.view(np.uint8)) == [f"{value}{suffix}" for value in values]


@settings(max_examples=100, deadline=None)
@given(st.lists(FLOAT, min_size=1, max_size=30))
def test_whole_numbers_are_the_floats_repr_writes_as_integers(values):
    found = whole_numbers(np.array(values, dtype=np.float64))
    whole = all(repr(x).endswith(".0") and "e" not in repr(x) and repr(x) != "-0.0" for x in values)
    if whole:
        assert found is not None and [f"{v}.0" for v in found.tolist()] == list(map(repr, values))
    else:
        assert found is None


def _joined_node_texts(jobs: list[list[int]]) -> list[str]:
    flat = np.array([node for ids in jobs for node in ids], dtype=np.int64)
    counts = np.array([len(ids) for ids in jobs], dtype=np.int64)
    texts = _texts(node_cells(flat, counts))
    return ["".join(texts.pop(0) for _ in ids) for ids in jobs]


@settings(max_examples=100, deadline=None)
@given(
    st.sampled_from([9, 99, 2000, 20_000]).flatmap(
        lambda top: st.lists(st.lists(st.integers(0, top), max_size=12), max_size=20)
    )
)
def test_node_ids_join_as_jobs_frame_joins_them(jobs):
    assert _joined_node_texts(jobs) == [";".join(map(str, ids)) for ids in jobs]


def test_node_ids_of_every_width_join_as_jobs_frame_joins_them():
    """More ids than the largest id (each id's text looked up), of 1 to 4 digits."""
    jobs = [list(range(start, start + 7)) for start in range(0, 1200, 7)]
    assert _joined_node_texts(jobs) == [";".join(map(str, ids)) for ids in jobs]


def test_names_pandas_would_quote_go_through_pandas(tmp_path):
    result = next(_results(tmp_path))
    object.__setattr__(
        result.workload, "app", np.array(["a,b"] * len(result.workload), dtype=object)
    )
    assert jobs_csv_text(result) is None
