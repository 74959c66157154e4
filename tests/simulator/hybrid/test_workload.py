"""Hybrid workload construction (Fan et al. §IV-A/B): typing by project, on-demand timing, CSV round trip."""

import gzip

import numpy as np
import pytest

from cosched.errors import InputError
from cosched.simulator.compare import load_inputs
from cosched.simulator.hybrid.models import checkpoint_periods, daly_interval
from cosched.simulator.hybrid.workload import (
    EARLY,
    LATE,
    MALLEABLE,
    NO_NOTICE,
    ON_DEMAND,
    RIGID,
    build_hybrid,
    notice_mix,
    parse_shares,
    read_hybrid_csv,
    trace_projects,
    write_hybrid_csv,
)

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
    assert not np.any((hybrid.job_type == MALLEABLE) & (hybrid.n_max == 1))
    assert order.size == len(workload)


def test_on_demand_timing_follows_the_notice_kinds(kth):
    hybrid = kth[3]
    od = hybrid.job_type == ON_DEMAND
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
    rigid, malleable = hybrid.job_type == RIGID, hybrid.job_type == MALLEABLE
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
    assert np.all(np.isnan(periods[hybrid.job_type != RIGID]))
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
    row = int(np.flatnonzero(hybrid.job_type[:20] == ON_DEMAND)[0]) if column == "notice" else 3
    frame[column] = frame[column].astype(object)
    frame.loc[row, column] = value
    frame.to_csv(tmp_path / "bad.csv", index=False)
    with pytest.raises(InputError, match=message) as error:
        read_hybrid_csv(tmp_path / "bad.csv", platform.cores_per_node)
    assert error.value.field == column and error.value.line == row + 2
