"""Heatmap CSV (003 Table 4.1): reading, writing, fallbacks, plots and the theory Instance
bridge.
"""

import math
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cosched.errors import InputError
from cosched.outputs import pyplot
from cosched.theory.heatmap import (
    COLUMNS,
    Heatmap,
    MissingPairsWarning,
    heatmap_figure,
    heatmap_from_instance,
    heatmap_from_speedups,
    instance_from_heatmap,
    plot_heatmap,
    read_heatmap,
    write_heatmap,
)
from cosched.theory.instance import complete_instance

TABLE_4_1 = """name_A,procs_A,compact_A,name_B,procs_B,compact_B,co_A_B,co_B_A
bt.D.256,256,123.97,bt.D.256,256,123.97,119.62,119.40
bt.D.256,256,123.97,bt.D.512,484,60.04,121.29,57.94
bt.D.256,256,123.97,bt.E.2048,2025,224.97,,
bt.D.256,256,123.97,cg.D.128,128,93.29,122.38,92.36
bt.D.512,484,60.04,cg.D.128,128,93.29,,90.0
"""


@pytest.fixture
def table(tmp_path):
    path = tmp_path / "heatmap.csv"
    path.write_text(TABLE_4_1)
    return path


def test_speedup_is_compact_over_co_time(table):
    heatmap = read_heatmap(table)
    assert heatmap.applications == ("bt.D.256", "bt.D.512", "bt.E.2048", "cg.D.128")
    assert heatmap.speedup("bt.D.256", "cg.D.128") == pytest.approx(123.97 / 122.38)
    assert heatmap.speedup("cg.D.128", "bt.D.256") == pytest.approx(93.29 / 92.36)
    assert heatmap.speedup("bt.D.256", "bt.D.256") == pytest.approx(
        123.97 / ((119.62 + 119.40) / 2)
    )
    assert list(heatmap.procs) == [256, 484, 2025, 128]


def test_missing_pair_falls_back_to_mirrored_then_default_then_error(table):
    heatmap = read_heatmap(table)
    with pytest.warns(MissingPairsWarning, match="mirrored"):
        assert heatmap.speedup("bt.D.512", "cg.D.128") == pytest.approx(93.29 / 90.0)
    with pytest.raises(InputError, match="bt.D.256\\|bt.E.2048"):
        heatmap.speedup("bt.D.256", "bt.E.2048")
    with warnings.catch_warnings():  # the default speedup was asked for: no warning about it
        warnings.simplefilter("error", MissingPairsWarning)
        assert heatmap.with_default(0.9).speedup("bt.D.256", "bt.E.2048") == 0.9
    with pytest.warns(MissingPairsWarning) as record:
        matrix = read_heatmap(table, default=1.0).speedup_matrix()
    assert len(record) == 1 and "default" not in str(record[0].message)
    assert np.isfinite(matrix).all()


def test_unknown_application_raises_input_error(table):
    with pytest.raises(InputError, match="unknown application"):
        read_heatmap(table).speedup("bt.D.256", "nope")


@pytest.mark.parametrize(
    "text, line, field",
    [
        ("name_A,procs_A,compact_A,name_B,procs_B,compact_B,co_A_B\n", 1, "co_B_A"),
        (TABLE_4_1 + "x,abc,1,y,1,1,1,1\n", 7, "procs_A"),
        (TABLE_4_1 + "x,2,-1,y,1,1,1,1\n", 7, "compact_A"),
        (TABLE_4_1 + "x,2,1,y,1,1,0,1\n", 7, "co_A_B"),
        (TABLE_4_1 + "bt.D.256,256,99,z,1,1,1,1\n", 7, "compact_A"),
        (TABLE_4_1 + "cg.D.128,128,93.29,bt.D.256,256,123.97,1,1\n", 7, "name_B"),
        (TABLE_4_1 + ",1,1,y,1,1,1,1\n", 7, "name_A"),
    ],
)
def test_bad_file_names_line_and_column(tmp_path, text, line, field):
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(InputError) as error:
        read_heatmap(path)
    assert (error.value.line, error.value.field, error.value.source) == (line, field, str(path))


def test_missing_file_raises_input_error(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        read_heatmap(tmp_path / "absent.csv")


def test_spread_row_gives_per_application_spread_speedup(tmp_path):
    path = tmp_path / "spread.csv"
    path.write_text(TABLE_4_1 + "cg.D.128,128,93.29,,,,80.0,\n")
    heatmap = read_heatmap(path)
    spread = heatmap.spread_speedups(default=1.0)
    assert spread[heatmap.index("cg.D.128")] == pytest.approx(93.29 / 80.0)
    assert spread[heatmap.index("bt.D.256")] == 1.0
    write_heatmap(heatmap, tmp_path / "again.csv")
    assert read_heatmap(tmp_path / "again.csv") == heatmap


def test_frame_has_table_4_1_layout_and_from_records_round_trips(table):
    heatmap = read_heatmap(table)
    frame = heatmap.frame
    assert tuple(frame.columns) == COLUMNS
    assert Heatmap.from_records(frame.to_dict("records")) == heatmap
    frame.loc[0, "co_A_B"] = 1.0  # the frame is a copy: the heatmap stays as it was
    assert heatmap.frame.loc[0, "co_A_B"] != 1.0


app_names = st.lists(
    st.text("abcdefgh.", min_size=1, max_size=6), min_size=1, max_size=6, unique=True
)


@st.composite
def heatmaps(draw):
    names = draw(app_names)
    k = len(names)
    compact = draw(st.lists(st.floats(1, 1e4), min_size=k, max_size=k))
    procs = draw(st.lists(st.integers(1, 4096), min_size=k, max_size=k))
    speed = draw(
        st.lists(st.one_of(st.none(), st.floats(0.5, 2.0)), min_size=k * k, max_size=k * k)
    )
    matrix = np.array([np.nan if s is None else s for s in speed]).reshape(k, k)
    # self-pairs are averaged over both copies, so keep them out here
    np.fill_diagonal(matrix, np.nan)
    return heatmap_from_speedups(names, matrix, compact, procs)


@given(heatmaps())
def test_write_then_read_returns_the_same_heatmap(tmp_path_factory, heatmap):
    path = tmp_path_factory.mktemp("hm") / "h.csv"
    write_heatmap(heatmap, path)
    assert read_heatmap(path) == heatmap


@given(heatmaps())
def test_speedup_matrix_never_changes_measured_values(heatmap):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingPairsWarning)
        filled = heatmap.with_default(1.0).speedup_matrix()
    measured = heatmap.measured
    known = ~np.isnan(measured)
    assert np.allclose(filled[known], measured[known]) and np.isfinite(filled).all()
    mirrored = ~known & ~np.isnan(measured.T)
    assert np.allclose(filled[mirrored], measured.T[mirrored])


def test_instance_round_trip_keeps_pair_speedups():
    instance = complete_instance(
        [3.0, 5.0, 7.0], lambda i, mask: 1.0 if mask == 1 << i else 0.6 + 0.1 * i
    )
    instance = instance.restrict(max_size=2)
    heatmap = heatmap_from_instance(instance, procs=[4, 8, 16])
    assert heatmap.speedup("T2", "T3") == pytest.approx(0.7)
    assert list(heatmap.compact_times) == [3.0, 5.0, 7.0]
    back = instance_from_heatmap(heatmap)
    assert np.array_equal(back.combinations, instance.combinations)
    assert np.allclose(back.speeds, instance.speeds) and np.allclose(back.work, instance.work)


def test_real_elise_heatmaps_load_through_the_same_reader():
    """The bundled ELiSE heatmaps (10 columns: Table 4.1 + 2 speedup columns the reader ignores)."""
    for preset, k in [("aris-nas", 33), ("aris-spec", 8), ("g5k-nas", 13)]:
        assert len(read_heatmap(preset)) == k
    heatmap = read_heatmap("aris-nas")
    assert heatmap.speedup("bt.D.256", "bt.D.64") == pytest.approx(1.0 * 123.965 / 138.96)
    assert math.isclose(heatmap.speedup("bt.D.64", "bt.D.256"), 486.25 / 443.08)


def test_plot_writes_png(table, tmp_path):
    out = plot_heatmap(read_heatmap(table), tmp_path / "h.png")
    assert out.read_bytes()[:4] == b"\x89PNG"


def test_llnl_co_run_table_converts_to_the_table_4_1_layout(shared_data):
    # no licence: not bundled
    path = shared_data("heatmaps/coScheduling/derived_slowdown_pairs.csv")
    import pandas as pd

    rows = pd.read_csv(path)
    records = [
        dict(
            name_A=f"{r.app_A}.{r.num_nodes}n",
            procs_A=56 * r.num_nodes,
            compact_A=r.isolated_A_median_s,
            name_B=f"{r.app_B}.{r.num_nodes}n",
            procs_B=56 * r.num_nodes,
            compact_B=r.isolated_B_median_s,
            co_A_B=r.co_A_median_s,
            co_B_A=r.co_B_median_s,
        )
        for r in rows.itertuples()
    ]
    heatmap = Heatmap.from_records(records)
    first = rows.iloc[1]
    a, b = f"{first.app_A}.{first.num_nodes}n", f"{first.app_B}.{first.num_nodes}n"
    assert heatmap.speedup(a, b) == pytest.approx(1 / first.slowdown_A, rel=1e-3)


@pytest.mark.parametrize("count", [2, 3, 8, 30])
@pytest.mark.parametrize("name", ["cg.D.32", "634.hpgmgfv_application_s.1024"])
def test_plot_labels_neither_overlap_nor_leave_the_figure(count, name):
    # long names on few applications overlapped the axis label and left the figure
    names = [f"{index}{name}" for index in range(count)]
    speedups = np.random.default_rng(count).uniform(0.7, 1.5, (count, count))
    figure = heatmap_figure(heatmap_from_speedups(names, speedups, np.ones(count), np.ones(count)))
    renderer = figure.canvas.get_renderer()
    figure.draw(renderer)
    inside = figure.bbox
    boxes = []
    for axes in figure.axes:
        texts = [axes.title, axes.xaxis.label, axes.yaxis.label]
        texts += axes.get_xticklabels() + axes.get_yticklabels()
        shown = [text for text in texts if text.get_text() and text.get_visible()]
        boxes += [text.get_window_extent(renderer) for text in shown]
    boxes.append(figure.axes[0].get_window_extent(renderer))
    boxes = [box for box in boxes if np.isfinite(box.extents).all()]
    for box in boxes:
        assert inside.x0 - 1 <= box.x0 and box.x1 <= inside.x1 + 1, box
        assert inside.y0 - 1 <= box.y0 and box.y1 <= inside.y1 + 1, box
    for first in range(len(boxes)):
        for second in range(first + 1, len(boxes)):
            a, b = boxes[first], boxes[second]
            overlap_x = min(a.x1, b.x1) - max(a.x0, b.x0)
            overlap_y = min(a.y1, b.y1) - max(a.y0, b.y0)
            assert min(overlap_x, overlap_y) <= 1, (a, b)
    pyplot().close(figure)
