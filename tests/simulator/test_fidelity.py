"""The co-scheduling choices the papers leave open, as options: missing pairs, alone speedup,
Popularity's compact rule, the backfill reservation, utilization spans, workload draws, and the
paper presets."""

import json
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cosched.cli import main
from cosched.errors import InputError
from cosched.simulator.colocation import alone_speedup_value, co_context
from cosched.simulator.elise_table2 import (
    ELISE_TABLE2,
    SUBSET_TOLERANCE,
    mean_pair_speedup,
    run_elise_table2,
    sub_heatmap,
    table2_subsets,
)
from cosched.simulator.experiment import experiment_workload, preset_spec, run_experiment
from cosched.simulator.metrics import busy_core_utilization
from cosched.simulator.platform import Platform
from cosched.simulator.schedulers import make_scheduler
from cosched.simulator.simulation import simulate
from cosched.simulator.thesis_tables import (
    THESIS_METRICS,
    THESIS_TABLE,
    thesis_comparison,
    thesis_gaps,
)
from cosched.simulator.workload import make_workload
from cosched.theory.heatmap import MissingPairsWarning, heatmap_from_speedups, read_heatmap

SPEEDUP_TOLERANCE = 1e-9  # float slack on speedups computed two ways
TIME_TOLERANCE = 1e-6  # seconds


def workload_of(apps, cores, compact):
    n = len(apps)
    return make_workload(
        np.arange(n), np.zeros(n), compact, cores, compact, np.array(apps, dtype=object)
    )


def gapped_heatmap():
    """a|c measured in neither direction; a's measured speedups are 1.2 (a|a) and 1.5 (a|b)."""
    nan = np.nan
    speedups = [[1.2, 1.5, nan], [0.9, 1.0, 1.1], [nan, 0.8, 1.3]]
    return heatmap_from_speedups(("a", "b", "c"), speedups, [10.0, 20.0, 30.0], [2, 2, 2])


def test_missing_pair_mean_takes_the_jobs_mean_measured_speedup_and_ranks_skip_it():
    workload = workload_of(["a", "b", "c"], [2, 2, 2], [10.0, 20.0, 30.0])
    with pytest.warns(MissingPairsWarning):
        context = co_context(workload, gapped_heatmap(), missing_pair="mean")
    assert context.speedups[0, 2] == pytest.approx((1.2 + 1.5) / 2)
    assert context.speedups[2, 0] == pytest.approx((0.8 + 1.3) / 2)
    assert not context.known[0, 2] and context.known[0, 1]
    from cosched.simulator.schedulers.co_ordering import popularity_ranks

    ranks = popularity_ranks(np.array([0, 2]), context.speedups, 1.0, context.known)
    assert ranks.tolist() == [0, 0]  # a|c averages above 1.0 once filled, but was never measured


def test_missing_pair_default_is_the_heatmaps_fallback():
    workload = workload_of(["a", "c"], [2, 2], [10.0, 30.0])
    with pytest.raises(InputError):
        co_context(workload, gapped_heatmap())
    with warnings.catch_warnings():  # the default was asked for: no warning about it
        warnings.simplefilter("error", MissingPairsWarning)
        context = co_context(workload, gapped_heatmap().with_default(0.9))
    assert context.speedups[0, 2] == 0.9


@given(
    st.lists(st.floats(0.5, 2.0), min_size=16, max_size=16),
    st.lists(st.booleans(), min_size=16, max_size=16),
)
@settings(max_examples=60, deadline=None)
def test_mean_filled_pairs_lie_within_their_rows_measured_range_and_measured_pairs_stay(
    values, holes
):
    speedups = np.array(values).reshape(4, 4)
    gapped = np.where(
        np.array(holes).reshape(4, 4) & np.array(holes).reshape(4, 4).T, np.nan, speedups
    )
    np.fill_diagonal(gapped, np.diag(speedups))  # every application keeps one measured pair
    heatmap = heatmap_from_speedups(tuple("abcd"), gapped, [1.0] * 4, [2] * 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingPairsWarning)
        context = co_context(
            workload_of(list("abcd"), [2] * 4, [1.0] * 4), heatmap, missing_pair="mean"
        )
    measured = ~np.isnan(gapped)
    assert np.allclose(context.speedups[measured], gapped[measured])
    low, high = np.nanmin(gapped, axis=1), np.nanmax(gapped, axis=1)
    filled = context.speedups
    assert (
        (filled >= low[:, None] - SPEEDUP_TOLERANCE) & (filled <= high[:, None] + SPEEDUP_TOLERANCE)
    ).all()


def test_alone_speedup_one_max_or_a_value():
    workload = workload_of(["a", "b", "c"], [2, 2, 2], [10.0, 20.0, 30.0])
    heatmap = gapped_heatmap().with_default(1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingPairsWarning)
        assert co_context(workload, heatmap, "max").spread.tolist() == pytest.approx(
            [1.5, 1.1, 1.3]
        )
        assert co_context(workload, heatmap, "one").spread.tolist() == [1.0, 1.0, 1.0]
        assert co_context(workload, heatmap, "1.25").spread.tolist() == [1.25] * 3
    for bad in ("fast", "0", "-1", "nan"):
        with pytest.raises(InputError):
            alone_speedup_value(bad)


def test_alone_max_speeds_up_a_job_alone_on_spread_nodes():
    heatmap = heatmap_from_speedups(("a",), [[1.25]], [100.0], [2])
    result = simulate(
        workload_of(["a"], [2], [100.0]),
        Platform(2, 2, 2),
        "easy-co",
        heatmap=heatmap,
        alone_speedup="max",
    )
    assert result.end[0] == pytest.approx(100 / 1.25)


def popularity_run(compact_below):
    heatmap = heatmap_from_speedups(("good", "bad"), [[1.2, 0.7], [0.7, 0.7]], [10.0, 10.0], [4, 4])
    workload = workload_of(
        ["good"] * 4 + ["bad"], [4] * 5, [10.0] * 5
    )  # spread: 2 nodes, compact: 1
    return simulate(
        workload,
        Platform(8, 2, 2),
        make_scheduler("popularity", compact_below=compact_below),
        heatmap=heatmap,
        alone_speedup=1.0,
    )


def test_popularity_deploys_compact_below_rank_3_by_default():
    # ranks among 5 waiting jobs: each good job has 3 good partners, the bad job none: only it goes
    # compact
    assert [n.size for n in popularity_run(3).nodes] == [2, 2, 2, 2, 1]
    # with rank < 4 every job is compact; with 0 none is
    assert [n.size for n in popularity_run(4).nodes] == [1] * 5
    assert [n.size for n in popularity_run(0).nodes] == [2] * 5


def test_reserve_oldest_gives_the_reservation_to_the_oldest_waiting_job():
    seed = read_heatmap("g5k-nas")
    from cosched.simulator.generate import ApplicationSeed, generate_workload

    workload = generate_workload(ApplicationSeed.from_heatmap(seed), 80, rng_seed=3)
    platform = Platform(8, 2, 16)
    for reserve in ("head", "oldest"):
        scheduler = make_scheduler("sjf-co", reserve=reserve, record_reservations=True)
        result = simulate(workload, platform, scheduler, heatmap=seed)
        assert (result.start >= workload.submit - TIME_TOLERANCE).all() and np.isfinite(
            result.end
        ).all()
        holders = list(scheduler.reservations)
        if reserve == "oldest":  # batch arrivals: the oldest waiting job's index only grows
            assert holders == sorted(holders)
    with pytest.raises(InputError):
        make_scheduler("sjf-co", reserve="youngest")


def test_easy_co_is_the_same_under_both_reservation_rules():
    seed = read_heatmap("g5k-nas")
    from cosched.simulator.generate import ApplicationSeed, generate_workload

    workload = generate_workload(ApplicationSeed.from_heatmap(seed), 60, rng_seed=1)
    runs = [
        simulate(workload, Platform(8, 2, 16), make_scheduler("easy-co", reserve=r), heatmap=seed)
        for r in ("head", "oldest")
    ]
    assert np.array_equal(runs[0].end, runs[1].end)


@given(
    st.lists(
        st.tuples(st.integers(0, 20), st.integers(1, 30), st.integers(1, 4)),
        min_size=1,
        max_size=12,
    )
)
@settings(max_examples=60, deadline=None)
def test_utilization_spans_stay_in_0_1_and_queue_empty_stops_at_the_last_start(jobs):
    submit, run, cores = (np.array(column, dtype=float) for column in zip(*jobs))
    workload = make_workload(np.arange(len(jobs)), submit, run, cores.astype(int), run)
    result = simulate(workload, Platform(2, 1, 2), "easy")
    for until in ("last-end", "queue-empty"):
        assert 0.0 <= busy_core_utilization(result, until) <= 1.0 + SPEEDUP_TOLERANCE
    stop, first = result.start.max(), result.workload.submit.min()
    if stop > first:
        busy = (
            result.workload.cores * np.clip(np.minimum(result.end, stop) - result.start, 0, None)
        ).sum()
        expected = busy / (4 * (stop - first))
        assert busy_core_utilization(result, "queue-empty") == pytest.approx(expected)


SMALL = dict(jobs=60, experiments=2, schedulers=["easy", "easy-co", "popularity"])


def test_draw_gives_each_experiment_its_own_workload_and_shuffle_the_same_jobs():
    drawn, shuffled = (
        preset_spec("thesis", **SMALL),
        preset_spec("thesis", workloads="shuffle", **SMALL),
    )
    assert (
        drawn.workloads == "draw" and drawn.missing_pair == "mean" and drawn.alone_speedup == "max"
    )
    assert sorted(experiment_workload(drawn, 0).app) != sorted(experiment_workload(drawn, 1).app)
    assert sorted(experiment_workload(shuffled, 0).app) == sorted(
        experiment_workload(shuffled, 1).app
    )
    with pytest.raises(InputError):
        preset_spec("thesis", workloads="resample", **SMALL)


def test_thesis_preset_writes_spread_and_the_thesis_table(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingPairsWarning)
        summary = run_experiment(
            preset_spec("thesis", **SMALL), tmp_path, workers=1, progress=False, plots=False
        )
    runs = pd.read_csv(tmp_path / "runs.csv")
    for scheduler, group in runs.groupby("scheduler"):
        assert summary.loc[scheduler, "mean_slowdown_min"] == group["mean_slowdown"].min()
        assert summary.loc[scheduler, "mean_slowdown_max"] == group["mean_slowdown"].max()
        assert summary.loc[scheduler, "mean_slowdown_std"] == pytest.approx(
            group["mean_slowdown"].std()
        )
    assert " ± " in (tmp_path / "tables.md").read_text()
    comparison = pd.read_csv(tmp_path / "thesis.csv")
    assert set(comparison["scheduler"]) == {"easy", "easy-co", "popularity", "conservative"}
    assert set(comparison["metric"]) == set(THESIS_METRICS)
    assert np.allclose(comparison["difference"], comparison["ours"] - comparison["thesis"])
    assert "EASY-Co mean job speedup" in (tmp_path / "thesis.md").read_text()
    with warnings.catch_warnings():  # the same spec resumes in a folder holding thesis.md
        warnings.simplefilter("ignore", MissingPairsWarning)
        again = run_experiment(
            preset_spec("thesis", **SMALL), tmp_path, workers=1, progress=False, plots=False
        )
    pd.testing.assert_frame_equal(again, summary)


def test_thesis_gaps_are_zero_for_the_thesis_own_numbers():
    summary = pd.DataFrame(THESIS_TABLE, index=THESIS_METRICS).T
    gaps = thesis_gaps(thesis_comparison(summary))
    assert gaps["coschedulers"] == 8 and gaps["mean_slowdown_relative_gap"] == 0.0
    assert gaps["slowdown_target_met"] and gaps["speedup_target_met"] and gaps["easy_co_target_met"]


def test_table2_subsets_match_the_published_mean_speedups():
    heatmap = read_heatmap("marconi-fig2")
    assert mean_pair_speedup(heatmap) == pytest.approx(
        1.12, abs=0.005
    )  # 000 §2.2: "average speedup of 1.12"
    subsets = table2_subsets(heatmap)
    assert len(subsets[2]) == len(heatmap)  # 1.12: the whole heatmap
    for (target, _), names in zip(ELISE_TABLE2, subsets):
        assert abs(mean_pair_speedup(sub_heatmap(heatmap, names)) - target) <= SUBSET_TOLERANCE
    with pytest.raises(InputError):
        table2_subsets(
            read_heatmap("aris-nas", default=1.0)
        )  # 33 applications: too many sets to search


def test_elise_table2_preset_writes_its_table(tmp_path):
    spec = preset_spec("elise-table2", jobs=36, experiments=1)
    table = run_elise_table2(spec, tmp_path, workers=1, progress=False)
    assert len(table) == 4 and (tmp_path / "elise_table2.md").exists()
    assert table["table2_improvement_pct"].tolist() == [p for _, p in ELISE_TABLE2]
    assert np.allclose(
        table["difference"], table["improvement_pct"] - table["table2_improvement_pct"]
    )


def test_simulate_takes_the_fidelity_options(tmp_path, capsys):
    workload = tmp_path / "w.csv"
    assert (
        main(
            [
                "generate-workload",
                "--heatmap",
                "g5k-nas",
                "--jobs",
                "30",
                "--out",
                str(workload),
                "--quiet",
            ]
        )
        == 0
    )
    capsys.readouterr()
    code = main(
        [
            "simulate",
            "--workload",
            str(workload),
            "--platform",
            "grvingt",
            "--scheduler",
            "popularity",
            "--heatmap",
            "g5k-nas",
            "--missing-pair",
            "mean",
            "--alone-speedup",
            "max",
            "--reserve",
            "oldest",
            "--compact-below",
            "2",
            "--utilization",
            "queue-empty",
            "--json",
            "--quiet",
        ]
    )
    assert code == 0 and 0 < json.loads(capsys.readouterr().out)["utilization"] <= 1
    assert (
        main(
            [
                "simulate",
                "--workload",
                str(workload),
                "--platform",
                "grvingt",
                "--scheduler",
                "easy-co",
                "--heatmap",
                "g5k-nas",
                "--alone-speedup",
                "fast",
                "--quiet",
            ]
        )
        == 2
    )
    assert "alone speedup" in capsys.readouterr().err


@pytest.mark.slow
def test_thesis_preset_meets_the_reproduction_targets(tmp_path):
    """The full thesis preset (10 x 1,000 jobs x 13 schedulers on ARIS): the gaps
    docs/reproducing.md reports."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingPairsWarning)
        summary = run_experiment(
            preset_spec("thesis"), tmp_path, workers=2, progress=False, plots=False
        )
    gaps = thesis_gaps(thesis_comparison(summary))
    assert gaps["speedup_target_met"] and gaps["easy_co_target_met"]
    assert gaps["slowdown_target_met"]


@pytest.mark.slow
def test_elise_table2_preset_keeps_the_published_trend(tmp_path):
    table = run_elise_table2(preset_spec("elise-table2"), tmp_path, workers=2, progress=False)
    assert table["improvement_pct"].iloc[-1] > table["improvement_pct"].iloc[0]
