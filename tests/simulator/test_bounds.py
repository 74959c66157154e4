"""The makespan lower bound: below every scheduler's makespan, below the exact optimum on tiny
workloads, and never crediting a job less than the co-location model lets it run."""

import bisect
import json
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cosched.cli import main
from cosched.errors import InputError
from cosched.simulator.bounds import bound_for, colocation_speed_model, makespan_bound
from cosched.simulator.platform import Platform
from cosched.simulator.schedulers import SCHEDULERS, make_scheduler
from cosched.simulator.simulation import simulate
from cosched.simulator.workload import make_workload
from cosched.theory.heatmap import MissingPairsWarning, heatmap_from_speedups

BOUND_TOLERANCE = 1e-9  # relative: the bound is a dual LP value, exact up to float rounding
SPEED_TOLERANCE = 1e-12  # a job's speed against the best speed the bound credits it
SEARCH_TOLERANCE = 1e-9  # remaining work below this (seconds) is finished in the exhaustive search
SPEEDUPS = st.floats(0.5, 1.5)  # measured-like heatmap speedups


@st.composite
def cases(draw, max_jobs=12, max_nodes=4, tiny=False):
    """(workload, platform, heatmap, options): a random heatmap (some pairs unmeasured) and workload
    on it."""
    k = draw(st.integers(1, 3))
    names = [f"a{i}" for i in range(k)]
    speedups = np.array(draw(st.lists(SPEEDUPS, min_size=k * k, max_size=k * k))).reshape(k, k)
    unmeasured = np.array(draw(st.lists(st.booleans(), min_size=k * k, max_size=k * k))).reshape(
        k, k
    )
    speedups[unmeasured & ~np.eye(k, dtype=bool)] = np.nan
    default = draw(st.one_of(st.none(), SPEEDUPS))
    heatmap = heatmap_from_speedups(
        names,
        speedups,
        np.ones(k),
        np.ones(k, dtype=int),
        default=1.0 if default is None else default,
    )
    nodes = draw(st.integers(1, 2 if tiny else max_nodes))
    platform = Platform(nodes, 2, draw(st.sampled_from([1, 2])))
    n = draw(st.integers(3 if tiny else 2, 5 if tiny and nodes > 1 else 6 if tiny else max_jobs))
    submit = np.sort(
        np.array(draw(st.lists(st.sampled_from([0.0, 0.0, 3.0, 10.0]), min_size=n, max_size=n)))
    )
    run = np.array(draw(st.lists(st.floats(1.0, 40.0), min_size=n, max_size=n)))
    cores = np.array(draw(st.lists(st.integers(1, platform.total_cores), min_size=n, max_size=n)))
    app = np.array(draw(st.lists(st.sampled_from(names), min_size=n, max_size=n)))
    workload = make_workload(np.arange(n), submit, run, cores, run if tiny else run * 1.5, app)
    options = {
        "spread_speedup": draw(st.sampled_from([None, "one", "max", 0.7, 1.8, 2.6])),
        "missing_pair": draw(st.sampled_from(["default", "mean"])),
    }
    return workload, platform, heatmap, options


def _runs(workload, platform, heatmap, options):
    """Every registered scheduler on the workload, with the co-location options."""
    results = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingPairsWarning)
        for name in SCHEDULERS:
            scheduler = make_scheduler(name, missing_pair=options["missing_pair"])
            results[name] = simulate(
                workload,
                platform,
                scheduler,
                heatmap=heatmap,
                alone_speedup=options["spread_speedup"],
            )
    return results


def _bound(workload, platform, heatmap, options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingPairsWarning)
        return bound_for(
            workload,
            platform,
            heatmap,
            scheduler_options={"missing_pair": options["missing_pair"]},
            alone_speedup=options["spread_speedup"],
        )


@settings(max_examples=30)
@given(cases())
def test_bound_never_exceeds_any_schedulers_makespan(case):
    workload, platform, heatmap, options = case
    bound = _bound(workload, platform, heatmap, options)
    classic = makespan_bound(workload, platform)
    assert bound.bound <= classic.bound * (
        1 + BOUND_TOLERANCE
    )  # co-location only adds configurations
    for name, result in _runs(workload, platform, heatmap, options).items():
        assert bound.bound <= result.makespan * (1 + BOUND_TOLERANCE), name
        if result.speed_model is None:
            assert classic.bound <= result.makespan * (1 + BOUND_TOLERANCE), name


@settings(max_examples=20)
@given(cases())
def test_no_job_runs_faster_than_the_bound_credits(case):
    workload, platform, heatmap, options = case
    bound = _bound(workload, platform, heatmap, options)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingPairsWarning)
        model = colocation_speed_model(
            workload,
            heatmap,
            scheduler_options={"missing_pair": options["missing_pair"]},
            spread_speedup=options["spread_speedup"],
        )
    task = np.searchsorted(np.unique(model.app), model.app)
    for name in ("easy-co", "filler", "popularity"):
        scheduler = make_scheduler(name, missing_pair=options["missing_pair"])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MissingPairsWarning)
            result = simulate(
                workload,
                platform,
                scheduler,
                heatmap=heatmap,
                alone_speedup=options["spread_speedup"],
                log_events=True,
            )
        for _, event, job, speed in result.log:
            if event == "speed":
                assert speed <= bound.best_speeds[task[job]] + SPEED_TOLERANCE, (name, job)


def test_without_heatmap_it_is_the_area_and_release_date_bound():
    platform = Platform(2, 1, 4)  # 2 nodes of 4 cores: units are half nodes of 2 cores
    workload = make_workload(
        np.arange(3),
        np.array([0.0, 0.0, 50.0]),
        np.array([10.0, 20.0, 30.0]),
        np.array([4, 2, 8]),
        np.array([10.0, 20.0, 30.0]),
    )
    result = makespan_bound(workload, platform)
    area = (10 * 2 + 20 * 1 + 30 * 4) / 4  # units x run time / units of the cluster
    assert result.fluid == pytest.approx(area)
    assert result.bound == pytest.approx(
        50 + 30
    )  # the last job: submitted at 50, 30 s on the whole cluster
    assert not result.co_located


def test_the_pair_configurations_are_credited_at_half_speed_each():
    heatmap = heatmap_from_speedups(
        ["a", "b"], np.array([[1.0, 1.5], [1.5, 1.0]]), np.ones(2), np.ones(2, int)
    )
    platform = Platform(1, 1, 2)
    workload = make_workload(
        np.arange(2),
        np.zeros(2),
        np.array([30.0, 30.0]),
        np.array([1, 1]),
        np.array([30.0, 30.0]),
        np.array(["a", "b"]),
    )
    result = bound_for(workload, platform, heatmap)
    # each job needs 1 of the 2 halves for 30 s at speed 1: b = 15 each; the pair {a, b} does 0.75
    # of each per s
    assert result.fluid == pytest.approx(20.0)
    assert result.bound == pytest.approx(20.0)
    assert result.co_located
    best = min(
        simulate(workload, platform, name, heatmap=heatmap).makespan
        for name in ("easy-co", "filler")
    )
    assert best == pytest.approx(
        20.0
    )  # the two jobs side by side at speedup 1.5: the bound is reached


def test_release_dates_use_duals_valid_for_every_date():
    rng = np.random.default_rng(3)
    names = np.array(["a", "b", "c"])
    heatmap = heatmap_from_speedups(
        names, rng.uniform(0.5, 1.5, (3, 3)), np.ones(3), np.ones(3, int)
    )
    n = 300
    submit = np.sort(rng.uniform(0, 2000, n)).round()
    run = rng.uniform(10, 400, n)
    workload = make_workload(
        np.arange(n), submit, run, rng.integers(1, 9, n), run, names[rng.integers(0, 3, n)]
    )
    platform = Platform(4, 2, 2)
    result = bound_for(workload, platform, heatmap)
    assert result.solves < np.unique(submit).size  # not one LP per release date
    for name in ("easy", "easy-co", "sjf-co", "filler"):
        assert result.bound <= simulate(workload, platform, name, heatmap=heatmap).makespan * (
            1 + BOUND_TOLERANCE
        )


# --- exact optimum of tiny workloads --------------------------------------------------------------
# The exact model: the schedules of the simulator's co-location model (000 §3.5) whose jobs start at
# decision times only: a submit time, a completion, or a time in a given finite set E. At each
# decision time any set of waiting jobs starts, each compact on any idle whole nodes or spread on
# any ceil(cores / half) distinct nodes with a free half, the others wait; speeds as the
# simulator's: the minimum pair speedup over the job's neighbours, else the spread speedup alone,
# else 1. Every such schedule is a co-location schedule, so the bound is below the optimum. With
# E = the start times of the heuristics' runs that are no event (a scheduler's wake-up, e.g. a
# reservation computed before the speeds changed), every run is one of these schedules, so the
# optimum is below the best heuristic.


def _exact_makespan(workload, platform, model, extra=()) -> float:
    """Smallest makespan over the schedules of the co-location model whose jobs start at events or
    at the `extra` times (depth-first search with pruning)."""
    n, nodes, cpn = len(workload), platform.nodes, platform.cores_per_node
    half = cpn // 2
    submit, run, cores = workload.submit.tolist(), workload.run.tolist(), workload.cores.tolist()
    app = np.asarray(model.app)
    speedups, spread_speed = model.speedups, model.spread
    best = [math.inf]
    fastest = np.maximum(1.0, np.maximum(spread_speed, speedups.max(axis=1)))

    def placements(job, used):
        """(nodes, compact) choices of `job` on nodes with `used` halves (a tuple per node)."""
        from itertools import combinations

        whole = -(-cores[job] // cpn)
        idle = [v for v in range(nodes) if used[v] == 0]
        for chosen in combinations(idle, whole) if whole <= len(idle) else ():
            yield chosen, True
        count = -(-cores[job] // half) if half else nodes + 1
        if count <= nodes:
            free = [v for v in range(nodes) if used[v] < 2]
            for chosen in combinations(free, count) if count <= len(free) else ():
                yield chosen, False

    def speeds(running):
        out = {}
        for job, (where, compact, _) in running.items():
            neighbours = [
                other
                for other, (shared, _, _) in running.items()
                if other != job and set(where) & set(shared)
            ]
            if neighbours:
                out[job] = float(min(speedups[app[job], app[other]] for other in neighbours))
            else:
                out[job] = 1.0 if compact else float(spread_speed[app[job]])
        return out

    def starts(waiting, used, running):
        """Every set of waiting jobs (with placements) that can start together now."""
        if not waiting:
            yield running
            return
        job, rest = waiting[0], waiting[1:]
        yield from starts(rest, used, running)
        for where, compact in placements(job, used):
            taken = list(used)
            for v in where:
                taken[v] += 2 if compact else 1
            yield from starts(rest, tuple(taken), {**running, job: (where, compact, run[job])})

    def search(now, arrived, running, done):
        if done == n:
            best[0] = min(best[0], now)
            return
        left = [
            running[j][2] if j in running else run[j] for j in range(n) if j not in finished_set[0]
        ]
        jobs = [j for j in range(n) if j not in finished_set[0]]
        if now + max(w / fastest[app[j]] for w, j in zip(left, jobs)) >= best[0]:
            return  # some job cannot finish in time even at its best speed
        waiting = [j for j in range(arrived) if j not in running and j not in finished_set[0]]
        used = [0] * nodes
        for where, compact, _ in running.values():
            for v in where:
                used[v] += 2 if compact else 1
        for chosen in starts(waiting, tuple(used), running):
            next_arrival = submit[arrived] if arrived < n else math.inf
            later_time = (
                extra[bisect.bisect_right(extra, now)]
                if bisect.bisect_right(extra, now) < len(extra)
                else math.inf
            )
            next_arrival = min(next_arrival, later_time)  # the next decision that is no completion
            if not chosen and next_arrival == math.inf:
                continue  # nothing runs and nothing will arrive: a dead end
            rate = speeds(chosen)
            ends = {job: now + left / rate[job] for job, (_, _, left) in chosen.items()}
            step = min([next_arrival, *ends.values()])
            later = {
                job: (where, compact, left - (step - now) * rate[job])
                for job, (where, compact, left) in chosen.items()
            }
            ended = [
                job
                for job, (_, _, left) in later.items()
                if left <= SEARCH_TOLERANCE or ends[job] <= step
            ]
            for job in ended:
                del later[job]
                finished_set[0].add(job)
            count = arrived
            while count < n and submit[count] <= step:
                count += 1
            search(step, count, later, done + len(ended))
            for job in ended:
                finished_set[0].discard(job)

    finished_set = [set()]
    first = 0
    while first < n and submit[first] <= submit[0]:
        first += 1
    search(submit[0], first, {}, 0)
    return best[0] - submit[0]


@settings(max_examples=25)
@given(cases(tiny=True))
def test_exact_optimum_sits_between_the_bound_and_the_best_heuristic(case):
    workload, platform, heatmap, options = case
    bound = _bound(workload, platform, heatmap, options)
    runs = _runs(workload, platform, heatmap, options)
    events, starts = set(workload.submit.tolist()), set()
    for result in runs.values():
        events |= set(result.end.tolist())
        starts |= set(result.start.tolist())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingPairsWarning)
        model = colocation_speed_model(
            workload,
            heatmap,
            scheduler_options={"missing_pair": options["missing_pair"]},
            spread_speedup=options["spread_speedup"],
        )
    exact = _exact_makespan(workload, platform, model, sorted(starts - events))
    heuristic = min(result.makespan for result in runs.values())
    assert bound.bound <= exact * (1 + BOUND_TOLERANCE)
    assert exact <= heuristic * (1 + BOUND_TOLERANCE)


# --- command line ---------------------------------------------------------------------------------


def test_bound_command_prints_json_for_the_bundled_trace(capsys):
    assert (
        main(
            ["bound", "--workload", "kth-sp2", "--platform", "kth-sp2", "--limit", "2000", "--json"]
        )
        == 0
    )
    document = json.loads(capsys.readouterr().out)
    assert document["jobs"] == 2000 and not document["co_located"]
    assert document["bound"] >= document["fluid"] > 0


def test_bound_command_follows_the_co_location_options(tmp_path, capsys):
    path = tmp_path / "w.csv"
    assert (
        main(
            [
                "generate-workload",
                "--heatmap",
                "aris-spec",
                "--jobs",
                "60",
                "--out",
                str(path),
                "--quiet",
            ]
        )
        == 0
    )
    capsys.readouterr()
    values = []
    for extra in ([], ["--alone-speedup", "3"]):
        assert (
            main(
                [
                    "bound",
                    "--workload",
                    str(path),
                    "--platform",
                    "aris",
                    "--heatmap",
                    "aris-spec",
                    "--default-speedup",
                    "1",
                    "--json",
                    *extra,
                ]
            )
            == 0
        )
        values.append(json.loads(capsys.readouterr().out))
    assert values[0]["co_located"]
    assert (
        values[1]["fluid"] < values[0]["fluid"]
    )  # alone at 3.0, a spread job does 1.5 per half node


def test_bound_rejects_another_speed_model():
    workload = make_workload(np.arange(1), np.zeros(1), np.ones(1), np.ones(1, int), np.ones(1))
    with pytest.raises(InputError, match="co-location speed model"):
        makespan_bound(workload, Platform(1, 1, 2), speed_model=object())


# --- the columns beside every run -----------------------------------------------------------------


def test_compare_puts_one_bound_beside_every_scheduler():
    from cosched.simulator.compare import compare

    heatmap = heatmap_from_speedups(
        ["a", "b"], np.array([[0.9, 1.4], [1.2, 0.8]]), np.ones(2), np.ones(2, int)
    )
    rng = np.random.default_rng(5)
    run = rng.uniform(5, 60, 40)
    workload = make_workload(
        np.arange(40),
        np.sort(rng.uniform(0, 100, 40)).round(),
        run,
        rng.integers(1, 9, 40),
        run,
        np.array(["a", "b"])[rng.integers(0, 2, 40)],
    )
    frame = compare(workload, Platform(4, 2, 2), ["easy", "easy-co", "filler"], heatmap=heatmap)
    assert frame["bound"].nunique() == 1
    assert (frame["makespan_over_bound"] >= 1 - BOUND_TOLERANCE).all()
    assert frame["makespan_over_bound"].to_numpy() == pytest.approx(
        (frame["makespan"] / frame["bound"]).to_numpy()
    )


def test_experiment_tables_give_makespan_over_bound(tmp_path):
    import pandas as pd

    from cosched.simulator.experiment import preset_spec, run_experiment

    spec = preset_spec("example-small", jobs=40, experiments=2, schedulers=("easy", "easy-co"))
    summary = run_experiment(spec, tmp_path, workers=1, progress=False, plots=False)
    runs = pd.read_csv(tmp_path / "runs.csv")
    assert (runs["makespan_over_bound"] >= 1 - BOUND_TOLERANCE).all()
    assert runs.groupby("experiment")["bound"].nunique().eq(1).all()
    assert "makespan_over_bound" in summary
    assert "makespan / bound" in (tmp_path / "tables.md").read_text()


def test_simulate_summary_has_the_bound_when_asked(capsys):
    base = [
        "simulate",
        "--workload",
        "kth-sp2",
        "--platform",
        "kth-sp2",
        "--limit",
        "300",
        "--quiet",
        "--json",
    ]
    assert main(base) == 0
    assert "bound" not in json.loads(
        capsys.readouterr().out
    )  # on request: the LPs cost half a simulation
    assert main([*base, "--bound"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["makespan_over_bound"] == pytest.approx(summary["makespan"] / summary["bound"])
    assert summary["makespan_over_bound"] >= 1 - BOUND_TOLERANCE
