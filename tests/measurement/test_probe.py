"""Formula (30) of 002 §6 on recorded samples, and the measured matrix -> instance step."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cosched.errors import InputError
from cosched.measurement.counters import ThreadReading as R
from cosched.measurement.matrix import cap_monotone, compress_masks, measured_instance
from cosched.measurement.probe import interval_speeds, readings_frame, thread_speed, window_speeds
from cosched.theory.instance import complete_instance, monotonicity_violations, validate


def test_thread_speed_is_ipc_times_cputime_share():
    assert thread_speed(300, 200, 0.5, 1.0) == pytest.approx(0.75)
    # cputime backend: no IPC factor
    assert thread_speed(np.nan, np.nan, 0.25, 0.5) == pytest.approx(0.5)
    assert thread_speed(10, 0, 0.1, 1.0) == 0.0


@given(
    ipc=st.floats(0.05, 4),
    shares=st.lists(st.floats(0.01, 1), min_size=1, max_size=6),
    dt=st.floats(0.05, 5),
)
def test_task_speed_is_mean_over_threads_of_ipc_times_share(ipc, shares, dt):
    before = [R(10.0, "t", 1, tid, 1.0, 1e6, 2e6) for tid in range(len(shares))]
    after = [
        R(10.0 + dt, "t", 1, tid, 1.0 + s * dt, 1e6 + ipc * 1e9 * s * dt, 2e6 + 1e9 * s * dt)
        for tid, s in enumerate(shares)
    ]
    assert window_speeds(before, after)["t"] == pytest.approx(ipc * np.mean(shares), rel=1e-6)


def test_threads_that_did_not_run_or_appeared_late_are_left_out():
    before = [R(0, "a", 1, 1, 0.0), R(0, "a", 1, 2, 3.0), R(0, "b", 5, 5, 1.0)]
    after = [R(1, "a", 1, 1, 0.5), R(1, "a", 1, 2, 3.0), R(1, "a", 1, 3, 0.9), R(1, "b", 5, 5, 1.0)]
    speeds = interval_speeds(readings_frame(before + after)).set_index("task")
    assert speeds.loc["a", "speed"] == pytest.approx(0.5) and speeds.loc["a", "threads"] == 1
    assert speeds.loc["b", "speed"] == 0.0 and speeds.loc["b", "threads"] == 0  # stopped all window


def test_interval_speeds_cover_every_consecutive_pair_of_readings():
    readings = [R(t, "a", 1, 1, 0.5 * t) for t in range(5)] + [
        R(t, "b", 2, 2, 0.25 * t) for t in range(3)
    ]
    table = interval_speeds(readings_frame(readings))
    assert len(table) == 4 + 2
    assert np.allclose(table.loc[table["task"] == "a", "speed"], 0.5)
    assert np.allclose(table.loc[table["task"] == "b", "speed"], 0.25)


def _table(rows):
    return pd.DataFrame(rows, columns=["combination", "task", "speed"])


def test_measured_instance_normalises_by_speed_alone_and_clips_noise_above_one():
    matrix = measured_instance(
        ["a", "b"], _table([(1, "a", 2.0), (2, "b", 0.5), (3, "a", 1.0), (3, "b", 0.6)])
    )
    inst = matrix.instance
    assert inst.column(1).tolist() == [1.0, 0.0] and inst.column(2).tolist() == [0.0, 1.0]
    assert inst.column(3).tolist() == [0.5, 1.0] and matrix.clipped == 1
    assert matrix.ideal_speeds == {"a": 2.0, "b": 0.5}
    validate(inst, monotone=False)


def test_task_that_never_ran_is_dropped_with_its_combinations_and_bits_renumbered():
    matrix = measured_instance(
        ["a", "dead", "c"],
        _table(
            [
                (1, "a", 1.0),
                (2, "dead", 0.0),
                (4, "c", 2.0),
                (3, "a", 0.5),
                (3, "dead", 0.0),
                (5, "a", 0.8),
                (5, "c", 1.0),
                (6, "dead", np.nan),
                (6, "c", 1.0),
            ]
        ),
    )
    assert matrix.dropped_tasks == {"dead": "speed 0 alone (never ran)"}
    assert matrix.instance.tasks == ("a", "c")
    assert matrix.instance.combinations.tolist() == [1, 2, 3]
    assert matrix.instance.column(3).tolist() == [0.8, 0.5]


def test_no_task_measured_alone_is_an_input_error():
    with pytest.raises(InputError, match="nothing to normalise"):
        measured_instance(["a"], _table([(1, "a", np.nan)]))


@given(
    masks=st.lists(st.integers(1, 255), min_size=1, max_size=20),
    keep=st.lists(st.integers(0, 7), min_size=1, max_size=8, unique=True),
)
def test_compress_masks_keeps_exactly_the_kept_bits_in_order(masks, keep):
    keep = sorted(keep)
    out = compress_masks(np.array(masks), np.array(keep))
    for mask, new in zip(masks, out):
        assert [k for k, old in enumerate(keep) if mask >> old & 1] == [
            b for b in range(8) if new >> b & 1
        ]


@given(n=st.integers(2, 5), seed=st.integers(0, 10_000))
def test_monotone_projection_removes_every_violation_and_never_raises_a_speed(n, seed):
    rng = np.random.default_rng(seed)
    noisy = complete_instance(
        np.ones(n), lambda i, mask: 1.0 if mask == 1 << i else float(rng.uniform(0.2, 1))
    )
    projected = cap_monotone(noisy)
    assert monotonicity_violations(projected) == []
    assert (projected.speeds <= noisy.speeds + 1e-12).all()
    validate(projected)
