"""Slurm's multifactor priority (cosched.simulator.schedulers.multifactor): hand-computed worked
examples, and the property that the queue order follows the formula."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cosched.cli import main
from cosched.errors import InputError
from cosched.simulator.platform import Platform
from cosched.simulator.schedulers import make_scheduler
from cosched.simulator.schedulers.multifactor import (
    USAGE_TIE_TOLERANCE,
    WEIGHT_PRESETS,
    MultifactorPriority,
    MultifactorWeights,
    fair_tree_factors,
    load_weights,
)
from cosched.simulator.simulation import simulate
from cosched.simulator.workload import make_workload, read_swf

SLURM_EXAMPLE = WEIGHT_PRESETS["slurm-example"]  # weights 1000, 10000, 1000, 1000

# Slurm's priority is an integer (the weighted sum truncated): an independent float computation may
# land on the other side of a whole number
PRIORITY_TOLERANCE = 1.0

SWF_LINE = "{id} {submit} -1 {run} {procs} -1 -1 {procs} {run} -1 1 {user} {group} -1 1 -1 -1 -1\n"


def swf(tmp_path, rows) -> str:
    """An SWF file of (submit, run, processors, user) rows; group = 10 x user."""
    path = tmp_path / "jobs.swf"
    path.write_text(
        "".join(
            SWF_LINE.format(id=i + 1, submit=s, run=r, procs=p, user=u, group=10 * u)
            for i, (s, r, p, u) in enumerate(rows)
        )
    )
    return str(path)


class Recorder:
    """Wraps a priority: keeps (now, waiting jobs, keys) of every call."""

    def __init__(self, priority):
        self.priority, self.calls = priority, []

    def __call__(self, engine, waiting):
        key = self.priority(engine, waiting)
        self.calls.append((engine.now, waiting.tolist(), key.tolist()))
        return key


def recorded_run(workload, platform, scheduler_name, priority):
    scheduler = make_scheduler(scheduler_name, priority=priority)
    recorder = scheduler.priority = Recorder(scheduler.priority)
    return simulate(workload, platform, scheduler), recorder.calls


def test_worked_example_decayed_fairshare_reorders_the_queue(tmp_path):
    # Classic fair-share (PriorityFlags=NO_FAIR_TREE). One 1-core node, half-life H = 100 s,
    # fair-share weight 10000 only. User 1 ran on [0, 100], user 2 on [100, 200]. At t = 200, usage
    # (core-seconds decayed to t = 200):
    #   user 1: (H / ln 2)(2^-1 - 2^-2) = 0.25 H / ln 2; user 2: (H / ln 2)(1 - 2^-1) = 0.5 H / ln 2
    #   U = 1/3 and 2/3; S = 1/2 (two users); F = 2^(-U/S) = 2^(-2/3) = 0.62996, 2^(-4/3) = 0.39685
    #   priorities: floor(6299.6) = 6299 (user 1), floor(3968.5) = 3968 (user 2)
    # so user 1's job (submitted at 160) starts before user 2's (submitted at 150).
    workload = read_swf(
        swf(tmp_path, [(0, 100, 1, 1), (0, 100, 1, 2), (150, 10, 1, 2), (160, 10, 1, 1)])
    )
    weights = MultifactorWeights(
        age=0, fairshare=10000, job_size=0, partition=0, decay_half_life=100, fair_tree=False
    )
    result, calls = recorded_run(workload, Platform(1), "easy", MultifactorPriority(weights))
    assert (200.0, [2, 3], [3968.0, 6299.0]) in calls
    assert result.start.tolist() == [0, 100, 210, 200]
    fcfs = simulate(workload, Platform(1), "easy")
    assert fcfs.start.tolist() == [0, 100, 200, 210]


def test_worked_example_all_four_factors(tmp_path):
    # 4 one-core nodes, Slurm's example weights (age 1000, fair-share 10000, job size 1000,
    # partition 1000), PriorityMaxAge 1000 s, no decay, classic fair-share. Job 1 (user 1) holds the
    # 4 nodes on [0, 100]. At t = 100 (U = 1 for user 1, 0 for user 2; S = 1/2):
    #   job 2 (user 1, 4 nodes, waited 90 s): 1000 x 0.09 + 10000 x 2^-2 + 1000 x 4/4 + 1000 = 4590
    #   job 3 (user 2, 1 node, waited 50 s):  1000 x 0.05 + 10000 x 2^0 + 1000 x 1/4 + 1000 = 11300
    # job 3 starts first; job 2 then waits for it (EASY shadow time 110).
    workload = read_swf(swf(tmp_path, [(0, 100, 4, 1), (10, 10, 4, 1), (50, 10, 1, 2)]))
    weights = replace(SLURM_EXAMPLE, max_age=1000, decay_half_life=0, fair_tree=False)
    result, calls = recorded_run(workload, Platform(4), "easy", MultifactorPriority(weights))
    assert (100.0, [1, 2], [4590.0, 11300.0]) in calls
    assert result.start.tolist() == [0, 110, 100]
    assert simulate(workload, Platform(4), "easy").start.tolist() == [0, 100, 110]


def test_worked_example_fair_tree(tmp_path):
    # The example above under Fair Tree, Slurm's default (fair_tree.html): level fairshare S/U is
    # infinite for user 2 (no usage) and 1/2 for user 1, so user 2 ranks 2 and user 1 ranks 1 of 2
    # accounts: F = 2/2 and 1/2.
    #   job 2: 1000 x 0.09 + 10000 x 1/2 + 1000 x 4/4 + 1000 = 7090
    #   job 3: 1000 x 0.05 + 10000 x 2/2 + 1000 x 1/4 + 1000 = 11300
    workload = read_swf(swf(tmp_path, [(0, 100, 4, 1), (10, 10, 4, 1), (50, 10, 1, 2)]))
    weights = replace(SLURM_EXAMPLE, max_age=1000, decay_half_life=0)
    result, calls = recorded_run(workload, Platform(4), "easy", MultifactorPriority(weights))
    assert (100.0, [1, 2], [7090.0, 11300.0]) in calls
    assert result.start.tolist() == [0, 110, 100]


def test_fair_tree_ranks_least_used_first_and_ties_share_a_rank():
    # usage 0, 0, 3, 3, 5: ranks 5, 5, 3, 3, 1 of 5 (fair_tree.c: a tie keeps its first's rank)
    factors = fair_tree_factors(np.array([5.0, 0.0, 3.0, 3.0, 0.0]))
    assert factors.tolist() == [0.2, 1.0, 0.6, 0.6, 1.0]
    # equal usage summed two ways differs by rounding: still a tie
    assert fair_tree_factors(np.array([0.3, 0.1 + 0.2, 1.0])).tolist() == [1.0, 1.0, 1 / 3]


def test_groups_are_accounts_with_fairshare_by_group(tmp_path):
    # users 1 and 2 share no group (10, 20): as accounts, groups give the same factors as users
    workload = read_swf(swf(tmp_path, [(0, 100, 4, 1), (10, 10, 4, 1), (50, 10, 1, 2)]))
    weights = replace(SLURM_EXAMPLE, max_age=1000, decay_half_life=0, fairshare_by="group")
    _, calls = recorded_run(workload, Platform(4), "easy", MultifactorPriority(weights))
    assert (100.0, [1, 2], [7090.0, 11300.0]) in calls


def reference_priority(job, now, result, accounts, weights, platform):
    """The formula recomputed from the finished schedule (no state shared with the scheduler)."""
    w = result.workload
    half_life = weights.decay_half_life
    usage = {}
    for other in range(len(w)):
        start, end = result.start[other], result.end[other]
        if not start < now:
            continue
        until = min(end, now)
        cores = result.nodes[other].size * platform.cores_per_node
        if half_life > 0:
            decayed = (
                half_life
                / math.log(2)
                * (2 ** (-(now - until) / half_life) - 2 ** (-(now - start) / half_life))
            )
        else:
            decayed = until - start
        usage[accounts[other]] = usage.get(accounts[other], 0.0) + cores * decayed
    total = sum(usage.values())
    names = sorted(set(accounts))
    mine = usage.get(accounts[job], 0.0)
    if total <= 0:
        fairshare = 1.0
    elif weights.fair_tree:  # rank: accounts minus those less used (beyond a tie), over accounts
        tie = USAGE_TIE_TOLERANCE * total
        fairshare = (len(names) - sum(usage.get(a, 0.0) < mine - tie for a in names)) / len(names)
    else:
        fairshare = 2 ** (-(mine / total) * len(names))
    age = min((now - w.submit[job]) / weights.max_age, 1.0)
    nodes = -(-int(w.cores[job]) // platform.cores_per_node)
    size = 1 - (nodes - 1) / platform.nodes if weights.favor_small else nodes / platform.nodes
    return (
        weights.age * age
        + weights.fairshare * fairshare
        + weights.job_size * size
        + weights.partition * 1.0
    )


@st.composite
def prioritised_runs(draw):
    nodes = draw(st.integers(1, 5))
    jobs = draw(st.integers(2, 25))
    submit = draw(st.lists(st.integers(0, 200), min_size=jobs, max_size=jobs))
    run_time = draw(st.lists(st.integers(1, 60), min_size=jobs, max_size=jobs))
    sizes = draw(st.lists(st.integers(1, nodes), min_size=jobs, max_size=jobs))
    users = draw(st.lists(st.integers(0, 3), min_size=jobs, max_size=jobs))
    workload = make_workload(range(jobs), submit, run_time, sizes)
    accounts = np.asarray(users)[np.argsort(submit, kind="stable")]
    weights = MultifactorWeights(
        age=draw(st.sampled_from([0, 1000])),
        fairshare=draw(st.sampled_from([0, 10000])),
        job_size=draw(st.sampled_from([0, 1000])),
        max_age=draw(st.sampled_from([50.0, 1000.0])),
        decay_half_life=draw(st.sampled_from([0.0, 30.0, 1000.0])),
        favor_small=draw(st.booleans()),
        fair_tree=draw(st.booleans()),
    )
    return nodes, workload, accounts, weights


@settings(max_examples=60, deadline=None)
@given(prioritised_runs(), st.sampled_from(["fcfs", "easy", "conservative"]))
def test_the_queue_order_follows_the_multifactor_formula(case, scheduler_name):
    nodes, workload, accounts, weights = case
    platform = Platform(nodes)
    scheduler = make_scheduler(
        scheduler_name, priority=MultifactorPriority(weights, accounts=accounts)
    )
    orders = []
    ordered = scheduler.order

    def order(engine, limit=None):  # the order the scheduler uses, pass by pass
        jobs = ordered(engine, limit)
        orders.append((engine.now, jobs))
        return jobs

    scheduler.order = order
    result = simulate(workload, platform, scheduler)
    assert orders
    for now, jobs in orders:
        keys = [reference_priority(job, now, result, accounts, weights, platform) for job in jobs]
        for before, after in zip(keys, keys[1:]):
            assert before >= after - PRIORITY_TOLERANCE


@pytest.mark.parametrize("name", ["sjf", "ljf", "easy"])
def test_a_pass_is_not_skipped_as_unchanged_under_the_multifactor_priority(name):
    # its age factor grows with the clock: a queue that started nothing may be ordered otherwise
    # later with nothing else changed, whatever the class's own priority reads
    scheduler = make_scheduler(name, priority="multifactor")
    assert not scheduler.decides_the_same(3, 3)


def test_weights_from_text_and_json(tmp_path):
    assert load_weights("age=5, fairshare_by=group, favor_small=yes") == MultifactorWeights(
        age=5, fairshare_by="group", favor_small=True
    )
    path = tmp_path / "weights.json"
    path.write_text(json.dumps({"job_size": 0, "decay_half_life": 3600}))
    assert load_weights(str(path)) == MultifactorWeights(job_size=0, decay_half_life=3600)
    assert load_weights("slurm-example, max_age=1000") == replace(SLURM_EXAMPLE, max_age=1000)
    assert load_weights("fair_tree=no") == MultifactorWeights(fair_tree=False)
    with pytest.raises(InputError, match="unknown priority weight") as error:
        load_weights("agee=5")
    assert error.value.field == "agee"
    with pytest.raises(InputError) as error:
        load_weights("age=-1")
    assert error.value.field == "age"


@pytest.mark.parametrize(
    ("argv", "needles"),
    [
        (["--priority", "multifactor", "--priority-weights", "agee=1"], ["field 'agee'"]),
        (["--priority-weights", "age=1"], ["field '--priority-weights'"]),
        (["--priority", "multifactor", "--scheduler", "drf"], ["field '--priority'"]),
    ],
)
def test_bad_priority_options_are_one_line_exit_2(tmp_path, capsys, argv, needles):
    workload = swf(tmp_path, [(0, 10, 1, 1)])
    out = tmp_path / "out"
    code = main(
        ["simulate", "--workload", workload, "--platform", "kth-sp2", "--out", str(out), *argv]
    )
    _, err = capsys.readouterr()
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    for needle in needles:
        assert needle in err
    assert not out.exists()


@pytest.mark.parametrize("scheduler", ["easy-co", "filler"])
def test_a_co_scheduler_refuses_the_multifactor_priority_in_one_line(tmp_path, capsys, scheduler):
    # co-schedulers order by their own keys: refused as for a scheduler without a queue
    workload = swf(tmp_path, [(0, 10, 2, 1)])
    out = tmp_path / "out"
    argv = ["--workload", workload, "--platform", "aris", "--out", str(out), "--scheduler"]
    code = main(["simulate", *argv, scheduler, "--priority", "multifactor"])
    _, err = capsys.readouterr()
    assert code == 2 and err.count("\n") == 1 and "field '--priority'" in err
    assert not out.exists()


def test_cli_priority_multifactor_writes_its_weights(tmp_path, capsys):
    workload = swf(tmp_path, [(0, 100, 4, 1), (10, 10, 4, 1), (50, 10, 1, 2)])
    out = tmp_path / "out"
    code = main(
        [
            "simulate",
            "--workload",
            workload,
            "--platform",
            "kth-sp2",
            "--out",
            str(out),
            "--priority",
            "multifactor",
            "--priority-weights",
            "max_age=1000",
            "--quiet",
        ]
    )
    assert code == 0, capsys.readouterr().err
    summary = json.loads((out / "summary.json").read_text())
    assert summary["priority"] == "multifactor"
    assert summary["priority_weights"]["max_age"] == 1000


def test_slurm_defaults_weigh_nothing_keep_submit_order_and_warn(tmp_path, capsys):
    # slurm.conf: every PriorityWeight* defaults to 0, so every priority is 0 and the queue keeps
    # submit order (the worked example's job 2 first, at 100); the CLI says so in one warning line
    assert not MultifactorWeights().weighted and SLURM_EXAMPLE.weighted
    workload = swf(tmp_path, [(0, 100, 4, 1), (10, 10, 4, 1), (50, 10, 1, 2)])
    platform = tmp_path / "platform.json"
    platform.write_text(json.dumps({"nodes": 4, "cores_per_socket": 1}))
    out = tmp_path / "out"
    argv = ["simulate", "--workload", workload, "--platform", str(platform), "--quiet"]
    code = main([*argv, "--out", str(out), "--priority", "multifactor"])
    err = capsys.readouterr().err
    assert code == 0 and err.count("\n") == 1 and "every multifactor weight is 0" in err
    starts = [line.split(",")[2] for line in (out / "jobs.csv").read_text().splitlines()[1:]]
    assert starts == ["0.0", "100.0", "110.0"]
    code = main(
        [
            *argv,
            "--out",
            str(out / "x"),
            "--priority",
            "multifactor",
            "--priority-weights",
            "slurm-example,max_age=1000,decay_half_life=0",
        ]
    )
    assert code == 0 and "warning" not in capsys.readouterr().err
    starts = [line.split(",")[2] for line in (out / "x" / "jobs.csv").read_text().splitlines()[1:]]
    assert starts == ["0.0", "110.0", "100.0"]  # the worked example's order
