"""Hybrid workload construction (Fan et al. §IV-A/B): typing by project, on-demand timing, CSV
round trip; the job types are the JobKind members."""

import gzip

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cosched.errors import InputError
from cosched.simulator.compare import load_inputs
from cosched.simulator.hybrid.models import checkpoint_periods, daly_interval
from cosched.simulator.hybrid.workload import (
    EARLY,
    LATE,
    NO_NOTICE,
    TYPES,
    HybridWorkload,
    build_hybrid,
    job_kinds,
    notice_mix,
    parse_shares,
    read_hybrid_csv,
    trace_projects,
    write_hybrid_csv,
)
from cosched.simulator.jobs import JobKind

DALY_TOLERANCE = 1.0  # seconds: the spec's worked values are rounded to the second


@pytest.fixture(scope="module")
def kth():
    platform, workload = load_inputs("kth-sp2", "kth-sp2", limit=3000)
    projects = trace_projects(workload.source, workload.job_id, "group")
    return (
        platform,
        workload,
        projects,
        build_hybrid(workload, platform.cores_per_node, projects, seed=3),
    )


def test_jobs_of_one_project_share_a_type_except_retyped_single_node_malleable_jobs(kth):
    platform, workload, projects, hybrid = kth
    order = np.argsort(hybrid.workload.job_id)
    by_id = dict(zip(workload.job_id.tolist(), projects.tolist()))
    project = np.array([by_id[j] for j in hybrid.workload.job_id.tolist()])
    multi = hybrid.n_max > 1
    for name in np.unique(project[multi]):
        assert np.unique(hybrid.job_type[multi & (project == name)]).size == 1
    assert not np.any((hybrid.job_type == JobKind.MALLEABLE) & (hybrid.n_max == 1))
    assert order.size == len(workload)


def test_on_demand_timing_follows_the_notice_kinds(kth):
    hybrid = kth[3]
    od = hybrid.job_type == JobKind.ON_DEMAND
    arrival, t_est, notice = hybrid.workload.submit, hybrid.estimated_arrival, hybrid.notice_time
    kind = hybrid.notice_kind
    noticed = od & (kind != NO_NOTICE)
    assert np.all((t_est - notice)[noticed] >= 900) and np.all((t_est - notice)[noticed] <= 1800)
    assert np.all(np.isnan(notice[od & (kind == NO_NOTICE)]))
    early, late = od & (kind == EARLY), od & (kind == LATE)
    assert np.all((arrival[early] >= notice[early]) & (arrival[early] <= t_est[early]))
    assert np.all((arrival[late] >= t_est[late]) & (arrival[late] <= t_est[late] + 1800))
    assert np.all(np.diff(arrival) >= 0)  # sorted by arrival


def test_setups_and_malleable_bounds(kth):
    hybrid = kth[3]
    run = hybrid.workload.run
    rigid, malleable = hybrid.job_type == JobKind.RIGID, hybrid.job_type == JobKind.MALLEABLE
    assert np.all(hybrid.setup[rigid] >= 0.05 * run[rigid]) and np.all(
        hybrid.setup[rigid] <= 0.10 * run[rigid]
    )
    assert np.all(hybrid.setup[malleable] <= 0.05 * run[malleable])
    assert np.array_equal(
        hybrid.n_min[malleable], np.ceil(0.2 * hybrid.n_max[malleable]).astype(int)
    )
    assert np.all(hybrid.n_min[~malleable] == hybrid.n_max[~malleable])


def test_same_seed_same_workload_and_the_csv_round_trips(kth, tmp_path):
    platform, workload, projects, hybrid = kth
    again = build_hybrid(workload, platform.cores_per_node, projects, seed=3)
    assert hybrid.frame().equals(again.frame())
    write_hybrid_csv(hybrid, tmp_path / "w.csv")
    back = read_hybrid_csv(tmp_path / "w.csv", platform.cores_per_node)
    assert back.frame().equals(hybrid.frame())


def test_daly_interval_matches_the_worked_values():
    for cost, hours, expected in (
        (600, 5, 4256),
        (1200, 5, 5797),
        (600, 50, 14300),
        (1200, 50, 19992),
    ):
        assert abs(daly_interval(cost, hours * 3600) - expected) <= DALY_TOLERANCE


def test_checkpoints_only_when_the_interval_is_shorter_than_the_work(kth):
    hybrid = kth[3]
    periods = checkpoint_periods(hybrid, 5.0)
    assert np.all(np.isnan(periods[hybrid.job_type != JobKind.RIGID]))
    has = np.isfinite(periods)
    assert np.all(periods[has] - 600 < (hybrid.workload.run - hybrid.setup)[has])


def test_bad_shares_and_mixes():
    with pytest.raises(InputError, match="sum to 1"):
        parse_shares("on-demand=0.5,rigid=0.6", ("on-demand", "rigid", "malleable"), "job_types")
    with pytest.raises(InputError, match="NAME=SHARE"):
        parse_shares("batch=1", ("on-demand", "rigid", "malleable"), "job_types")
    with pytest.raises(InputError, match="unknown notice mix"):
        notice_mix("w9")
    assert notice_mix("no-notice=1") == (1.0, 0.0, 0.0, 0.0)


def test_a_trace_without_group_ids_is_refused_with_the_fallback_named(tmp_path):
    path = tmp_path / "t.swf.gz"
    lines = [
        f"{i} {i * 10} 0 100 4 -1 -1 4 200 -1 1 {i % 3} -1 -1 -1 -1 -1 -1" for i in range(1, 6)
    ]
    path.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    platform, workload = load_inputs(path, "kth-sp2")
    with pytest.raises(InputError, match="--type-by user"):
        trace_projects(path, workload.job_id, "group")
    assert np.unique(trace_projects(path, workload.job_id, "user")).size == 3


@pytest.mark.parametrize(
    "column, value, message",
    [
        ("n_min", "99", "n_min must be <= n_max"),
        ("job_type", "urgent", "unknown job_type"),
        ("setup", "-1", "setup"),
        ("notice", "soon", "unknown notice"),
    ],
)
def test_bad_hybrid_csv_names_line_and_column(kth, tmp_path, column, value, message):
    platform, hybrid = kth[0], kth[3]
    frame = hybrid.head(20).frame()
    row = (
        int(np.flatnonzero(hybrid.job_type[:20] == JobKind.ON_DEMAND)[0])
        if column == "notice"
        else 3
    )
    frame[column] = frame[column].astype(object)
    frame.loc[row, column] = value
    frame.to_csv(tmp_path / "bad.csv", index=False)
    with pytest.raises(InputError, match=message) as error:
        read_hybrid_csv(tmp_path / "bad.csv", platform.cores_per_node)
    assert error.value.field == column and error.value.line == row + 2


def test_the_job_types_are_the_job_kinds_of_the_engine(kth):
    hybrid = kth[3]
    assert TYPES == (JobKind.ON_DEMAND, JobKind.RIGID, JobKind.MALLEABLE)
    assert {type(kind) for kind in hybrid.job_type.tolist()} == {JobKind}
    assert set(hybrid.job_type.tolist()) == set(TYPES)  # the trace has all three
    assert set(hybrid.frame()["job_type"]) == {"on-demand", "rigid", "malleable"}


@given(st.lists(st.sampled_from([*TYPES, *(kind.value for kind in TYPES)]), max_size=30))
def test_members_and_spellings_become_the_same_members(values):
    kinds = job_kinds(np.array(values, dtype=object))
    assert kinds.dtype == object and len(kinds) == len(values)
    assert all(kind is JobKind(value) for kind, value in zip(kinds.tolist(), values))


@pytest.mark.parametrize("value", ["moldable", "batch", 1.5])
def test_a_job_type_that_is_not_hybrid_is_refused(value):
    with pytest.raises(InputError, match="unknown job type") as error:
        job_kinds(np.array(["rigid", value], dtype=object))
    assert error.value.field == "job_type"


def test_the_integer_codes_before_0_3_0_still_work_with_a_warning(kth):
    hybrid = kth[3].head(30)
    codes = np.array([TYPES.index(kind) for kind in hybrid.job_type.tolist()], dtype=np.int8)
    arrays = [hybrid.notice_kind, hybrid.notice_time, hybrid.estimated_arrival]
    arrays += [hybrid.n_min, hybrid.n_max, hybrid.setup]
    with pytest.warns(DeprecationWarning, match=r"JobKind.*removed in 0\.4\.0"):
        old = HybridWorkload(hybrid.workload, codes, *arrays)
    assert old.job_type.tolist() == hybrid.job_type.tolist()
    with pytest.warns(DeprecationWarning), pytest.raises(InputError, match="0 to 2"):
        HybridWorkload(hybrid.workload, np.full(30, 3), *arrays)


@pytest.mark.parametrize("name", ["ON_DEMAND", "RIGID", "MALLEABLE"])
def test_the_old_module_constants_warn_and_give_the_job_kind(name):
    from cosched.simulator.hybrid import workload

    with pytest.warns(DeprecationWarning, match=rf"use cosched\.simulator\.jobs\.JobKind\.{name}"):
        assert getattr(workload, name) is JobKind[name]
    assert name not in workload.__all__
