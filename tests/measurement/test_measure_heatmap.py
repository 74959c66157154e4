"""measure-heatmap: inputs, the experiment design, short local runs with fake launchers."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cosched.cli import main
from cosched.errors import InputError
from cosched.measurement.heatmap_plan import (
    build_plan,
    place,
    plan_size,
    plan_summary,
    usable_cores,
)
from cosched.measurement.heatmap_spec import (
    Application,
    PoolNode,
    expand_nodelist,
    load_apps,
    parse_cpus_per_node,
    parse_nodes,
    read_hostfile,
    read_pairs,
)
from cosched.theory.heatmap import read_heatmap
from cosched.theory.heatmap_spread import read_spread

SLEEP = "sleep 0.05"


def _apps_file(tmp_path: Path, apps: list[dict], name: str = "apps.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps({"applications": apps}))
    return path


def _hosts(tmp_path: Path, count: int, slots: int = 2) -> Path:
    path = tmp_path / "hosts.txt"
    path.write_text("".join(f"h{i} slots={slots}\n" for i in range(count)))
    return path


# --- inputs -----------------------------------------------------------------------------------


def test_expand_nodelist_like_scontrol():
    assert expand_nodelist("node[01-03,07],gpu[1-2]-ib,login") == [
        "node01",
        "node02",
        "node03",
        "node07",
        "gpu1-ib",
        "gpu2-ib",
        "login",
    ]
    assert expand_nodelist("r[1-2]n[8-9]") == ["r1n8", "r1n9", "r2n8", "r2n9"]
    for bad in ("node[1-", "node[3-1]", "a,,b", "node[x]"):
        with pytest.raises(ValueError):
            expand_nodelist(bad)


@settings(max_examples=50)
@given(
    prefix=st.text("abcxyz", min_size=1, max_size=5),
    ranges=st.lists(st.tuples(st.integers(0, 300), st.integers(0, 20)), min_size=1, max_size=4),
    width=st.integers(1, 4),
)
def test_expanded_nodelist_names_every_host_of_each_range_once(prefix, ranges, width):
    text = (
        prefix
        + "["
        + ",".join(f"{low:0{width}d}-{low + extra:0{width}d}" for low, extra in ranges)
        + "]"
    )
    expected = [
        f"{prefix}{number:0{width}d}"
        for low, extra in ranges
        for number in range(low, low + extra + 1)
    ]
    assert expand_nodelist(text) == expected


def test_slurm_nodes_from_the_environment():
    nodes = parse_nodes(
        "slurm", {"SLURM_JOB_NODELIST": "c[1-3]", "SLURM_JOB_CPUS_PER_NODE": "4(x2),2"}
    )
    assert [(node.host, node.cores) for node in nodes] == [("c1", 4), ("c2", 4), ("c3", 2)]
    assert parse_cpus_per_node("36(x2),32", 3) == [36, 36, 32]
    with pytest.raises(InputError, match="SLURM_JOB_NODELIST"):
        parse_nodes("slurm", {})


def test_hostfile_forms_and_errors(tmp_path):
    path = tmp_path / "hosts"
    path.write_text("# cluster\na slots=4\nb:2\nc   # one slot\n")
    assert [(node.host, node.cores) for node in read_hostfile(path)] == [
        ("a", 4),
        ("b", 2),
        ("c", 1),
    ]
    path.write_text("a slots=4\na slots=2\n")
    with pytest.raises(InputError, match="line 2"):
        read_hostfile(path)
    path.write_text("a slots=x\n")
    with pytest.raises(InputError, match="slots"):
        read_hostfile(path)


def test_local_nodes_are_disjoint_cpu_sets():
    nodes = parse_nodes("local:1")
    assert nodes[0].local and nodes[0].cores >= 1
    with pytest.raises(InputError, match="local:100000"):
        parse_nodes("local:100000")


@pytest.mark.parametrize(
    "record, field",
    [
        ({"name": "a", "np": 2, "command": "run {nope}"}, "applications[0].command"),
        ({"name": "a", "np": 0, "command": "run"}, "applications[0].np"),
        ({"name": "a b", "np": 1, "command": "run"}, "applications[0].name"),
        ({"name": "a", "command": "run"}, "applications[0].np"),
        ({"name": "a", "np": 1, "command": "run", "timout": 3}, "applications[0].timout"),
        ({"name": "a", "np": 1, "command": ["run", "{np"]}, "applications[0].command[1]"),
    ],
)
def test_bad_apps_name_the_field(tmp_path, record, field):
    with pytest.raises(InputError) as error:
        load_apps(_apps_file(tmp_path, [record]))
    assert error.value.field == field and error.value.source.endswith("apps.json")


def test_pairs_file(tmp_path):
    path = tmp_path / "pairs"
    path.write_text("b,a\na a\n# c\nb, a\n")
    assert read_pairs(path, ["a", "b"]) == [("a", "b"), ("a", "a")]
    path.write_text("a,zz\n")
    with pytest.raises(InputError, match="zz"):
        read_pairs(path, ["a", "b"])


@pytest.mark.parametrize(
    "args, message",
    [
        (["--nodes", "local:x"], "--nodes"),
        (["--nodes", "cluster"], "--nodes"),
        (["--nodes", "hosts:/no/such/file"], "/no/such/file"),
        (["--nodes", "local:1", "--pairs", "/no/pairs"], "/no/pairs"),
    ],
)
def test_bad_input_exits_2_and_writes_nothing(tmp_path, capsys, args, message):
    apps = _apps_file(tmp_path, [{"name": "a", "np": 1, "command": SLEEP}])
    out = tmp_path / "out"
    assert main(["measure-heatmap", "--apps", str(apps), "--out", str(out), *args]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1 and not out.exists()


def test_unknown_placeholder_exits_2_naming_file_and_field(tmp_path, capsys):
    apps = _apps_file(tmp_path, [{"name": "a", "np": 1, "command": "mpirun -np {procs} ./a"}])
    out = tmp_path / "out"
    assert (
        main(["measure-heatmap", "--apps", str(apps), "--nodes", "local:1", "--out", str(out)]) == 2
    )
    err = capsys.readouterr().err
    assert (
        "apps.json" in err
        and "applications[0].command" in err
        and "{procs}" in err
        and not out.exists()
    )


@pytest.mark.parametrize(
    "record, field, message",
    [
        ({"cwd": "missing"}, "applications[0].cwd", "does not exist"),
        ({"cwd": "afile"}, "applications[0].cwd", "is a file"),
        ({"command": ["no-such-program-here", "{np}"]}, "command[0]", "not on the PATH"),
        ({"command": ["./afile"]}, "command[0]", "not an executable file"),
        ({"command": "run {np:s}"}, "applications[0].command", "cannot be filled in"),
    ],
)
def test_an_application_that_cannot_launch_exits_2_before_anything_runs(
    tmp_path, capsys, record, field, message
):
    (tmp_path / "afile").write_text("")
    apps = _apps_file(tmp_path, [{"name": "a", "np": 1, "command": SLEEP, **record}])
    out = tmp_path / "out"
    for extra in (["--out", str(out)], ["--dry-run"]):
        code = main(["measure-heatmap", "--apps", str(apps), "--nodes", "local:1", *extra])
        err = capsys.readouterr().err
        assert code == 2 and len(err.strip().splitlines()) == 1, err
        assert "apps.json" in err and field in err and message in err
    assert not out.exists()


@pytest.mark.parametrize(
    "repeats, field",
    [("1000000000", "argument --repeats"), ("40000", "field '--repeats'")],
)
def test_a_plan_beyond_the_run_limit_is_refused_before_it_is_built(
    tmp_path, capsys, repeats, field
):
    apps = _apps_file(tmp_path, [{"name": "a", "np": 1, "command": SLEEP}])
    command = ["measure-heatmap", "--apps", str(apps), "--nodes", "local:1", "--dry-run"]
    try:
        code = main([*command, "--repeats", repeats])
    except SystemExit as exit_:  # argparse refuses the flag's value
        code = exit_.code
    err = capsys.readouterr().err
    assert code == 2 and field in err and "MAX_MEASURED_RUNS" in err
    assert "Traceback" not in err


def test_plan_size_counts_the_runs_build_plan_builds():
    apps = [_app(f"a{i}", 1 + i) for i in range(4)]
    pairs = [("a0", "a1"), ("a2", "a2")]
    for chosen in (None, pairs):
        for repeats in (1, 3):
            plan = build_plan(apps, 4, repeats, chosen, seed=1)
            assert plan_size(apps, repeats, chosen) == len(plan)


@pytest.mark.parametrize("value", ["0(x4)", "4(x0)", "4(x99999999999999)", "70000(x4)", "0,4(x3)"])
def test_slurm_cpus_of_zero_or_beyond_a_node_are_refused(value):
    with pytest.raises(ValueError):
        parse_cpus_per_node(value, 4)


# --- the experiment ---------------------------------------------------------------------------


def _app(name: str, np_: int, estimate: float | None = 10.0) -> Application:
    return Application(name, np_, "run {name}", estimate=estimate)


def test_plan_counts_and_the_33_application_case():
    apps = [_app(f"a{i}", 16) for i in range(33)]
    plan = build_plan(apps, 16, 3, None, 0)
    assert sum(run.mode == "pair" for run in plan) == 3 * 561
    assert len(plan) == 3 * (33 + 33 + 561) and len({run.run for run in plan}) == len(plan)
    assert [run.run for run in plan] == [run.run for run in build_plan(apps, 16, 3, None, 0)]
    assert [run.run for run in plan] != [run.run for run in build_plan(apps, 16, 3, None, 1)]
    summary = plan_summary(plan, {app.name: 10.0 for app in apps}, 8)
    assert summary["node_hours"] == pytest.approx(3 * (33 * 10 + 33 * 20 + 561 * 20) / 3600)
    assert summary["wall_hours_at_least"] == pytest.approx(summary["node_hours"] / 8)


@settings(max_examples=60, deadline=None)
@given(
    cores=st.sampled_from([1, 2, 4, 6, 8, 16]),
    procs=st.lists(st.integers(1, 40), min_size=2, max_size=3),
    seed=st.integers(0, 5),
)
def test_placement_binds_each_run_inside_its_nodes_and_the_two_halves_apart(cores, procs, seed):
    apps = [_app(f"x{i}", n) for i, n in enumerate(procs)]
    by_name = {app.name: app for app in apps}
    for run in build_plan(apps, cores, 1, None, seed):
        nodes = [PoolNode(f"n{i}", tuple(range(cores))) for i in range(run.nodes)]
        roles = place(run, by_name, nodes, cores)
        used: dict[str, set] = {}
        for role in roles:
            values = role["values"]
            cpus = [int(cpu) for cpu in values["cpus"].split(",")]
            assert set(role["hosts"]) <= {node.host for node in nodes}
            assert values["ppn"] * values["nodes"] >= values["np"]  # every process placed
            assert values["ppn"] <= len(cpus)  # never more processes than bound cores on a node
            for host in role["hosts"]:
                assert not used.setdefault(host, set()) & set(cpus), "two applications on one core"
                used[host] |= set(cpus)
        if run.mode == "spread" and cores > 1:
            assert len(cpus) == cores // 2


def test_usable_cores_even_halves():
    assert usable_cores([PoolNode("a", tuple(range(7))), PoolNode("b", tuple(range(8)))]) == 6
    assert usable_cores([PoolNode("a", (0,))]) == 1


# --- short local runs -------------------------------------------------------------------------


def _run(args: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "cosched", "measure-heatmap", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def _simulate_on(heatmap: Path, tmp_path: Path) -> None:
    """`simulate --heatmap` runs on a measured heatmap (a workload drawn from its applications)."""
    workload = tmp_path / "w.csv"
    generate = [
        "generate-workload",
        "--heatmap",
        str(heatmap),
        "--jobs",
        "12",
        "--out",
        str(workload),
        "--quiet",
    ]
    assert main(generate) == 0
    simulate = [
        "simulate",
        "--workload",
        str(workload),
        "--platform",
        "marconi",
        "--scheduler",
        "filler",
        "--heatmap",
        str(heatmap),
        "--out",
        str(tmp_path / "sim"),
        "--quiet",
    ]
    assert main(simulate) == 0
    assert (tmp_path / "sim" / "jobs.csv").exists()


def test_local_run_writes_a_heatmap_that_loads_resumes_and_refuses_another_configuration(
    tmp_path, capsys
):
    apps = _apps_file(
        tmp_path,
        [
            {"name": "a", "np": 2, "command": SLEEP},
            {"name": "b", "np": 2, "command": ["sh", "-c", "sleep 0.05; echo {hosts}"]},
        ],
    )
    hosts = _hosts(tmp_path, 4)
    out = tmp_path / "out"
    args = [
        "measure-heatmap",
        "--apps",
        str(apps),
        "--nodes",
        f"hosts:{hosts}",
        "--out",
        str(out),
        "--repeats",
        "2",
        "--quiet",
        "--no-plots",
    ]
    assert main([*args, "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert (
        summary["done"] == summary["runs"] == 2 * (2 + 2 + 3)
        and summary["attempts"] == summary["runs"]
    )
    heatmap = read_heatmap(out / "heatmap.csv")
    assert set(heatmap.applications) == {"a", "b"} and not np.isnan(heatmap.measured).any()
    table = pd.read_csv(out / "heatmap.csv")
    assert {"co_A_B_std", "speedup_A_B", "runs"} <= set(table.columns)
    runs = pd.read_csv(out / "runs.csv")
    assert (runs["status"] == "ok").all()
    from cosched.containment import cosched_cgroups

    mine = [
        group for group in cosched_cgroups() if group.name.startswith(f"cosched-{os.getpid()}-")
    ]
    assert not mine, "the command left its containment open"
    spread = read_spread(out / "heatmap.csv", heatmap)
    assert spread is not None and np.isfinite(spread).all() and (spread >= 0).all()
    assert (
        main(["heatmap", str(out / "heatmap.csv"), "--plots", str(tmp_path / "h.png"), "--quiet"])
        == 0
    )
    capsys.readouterr()
    assert main([*args, "--json"]) == 0  # resumes: nothing left to run
    again = json.loads(capsys.readouterr().out)
    assert again["done_before"] == again["runs"] and again["attempts"] == 0
    assert len(pd.read_csv(out / "runs.csv")) == len(runs)
    assert main([*args, "--repeats", "3"]) == 2
    assert "different measure-heatmap run" in capsys.readouterr().err


def test_failed_launches_are_logged_retried_and_rerun_later(tmp_path, capsys):
    flag = tmp_path / "fixed"
    command = "test -e " + str(flag) + " || {{ echo broken {name}; exit 3; }}"
    apps = _apps_file(
        tmp_path,
        [{"name": "a", "np": 1, "command": SLEEP}, {"name": "bad", "np": 1, "command": command}],
    )
    out = tmp_path / "out"
    args = [
        "measure-heatmap",
        "--apps",
        str(apps),
        "--nodes",
        f"hosts:{_hosts(tmp_path, 2, 1)}",
        "--out",
        str(out),
        "--repeats",
        "1",
        "--retries",
        "1",
        "--quiet",
        "--json",
        "--no-plots",
    ]
    assert main(args) == 1
    summary = json.loads(capsys.readouterr().out)
    runs = pd.read_csv(out / "runs.csv")
    failed = runs[runs["status"] == "failed"]
    assert set(failed["attempt"]) == {0, 1} and failed["message"].str.contains("broken bad").all()
    assert len(summary["failed_runs"]) == 4  # compact, spread, pair with a, self-pair
    assert all(
        (out / "logs" / f"{run}.{attempt}.txt").exists()
        for run, attempt in zip(failed.run, failed.attempt)
    )
    assert read_heatmap(out / "heatmap.csv").applications == ("a",)
    flag.touch()
    assert main(args) == 0  # a rerun tries the failed runs again
    assert json.loads(capsys.readouterr().out)["done"] == summary["runs"]
    assert set(read_heatmap(out / "heatmap.csv").applications) == {"a", "bad"}


def test_a_host_named_by_a_failing_launcher_leaves_the_pool(tmp_path, capsys):
    command = (
        "case {hosts} in *h3*) echo 'ssh: connect to host h3 port 22: No route to host'; "
        "exit 255;; "
        "esac; sleep 0.02"
    )
    apps = _apps_file(tmp_path, [{"name": "a", "np": 2, "command": command}])
    out = tmp_path / "out"
    assert (
        main(
            [
                "measure-heatmap",
                "--apps",
                str(apps),
                "--nodes",
                f"hosts:{_hosts(tmp_path, 4)}",
                "--out",
                str(out),
                "--repeats",
                "3",
                "--json",
                "--no-plots",
                "--quiet",
            ]
        )
        == 0
    )
    summary = json.loads(capsys.readouterr().out)
    assert summary["hosts_left"] == ["h3"] and summary["done"] == summary["runs"]
    runs = pd.read_csv(out / "runs.csv")
    assert runs.loc[runs["status"] == "ok", "hosts"].str.contains("h3").sum() == 0


def test_dry_run_prints_the_plan_and_writes_nothing(tmp_path, capsys):
    apps = _apps_file(
        tmp_path, [{"name": f"a{i}", "np": 4, "command": SLEEP, "estimate": 60} for i in range(3)]
    )
    out = tmp_path / "out"
    assert (
        main(
            [
                "measure-heatmap",
                "--apps",
                str(apps),
                "--nodes",
                f"hosts:{_hosts(tmp_path, 4, 4)}",
                "--out",
                str(out),
                "--dry-run",
                "--json",
            ]
        )
        == 0
    )
    plan = json.loads(capsys.readouterr().out)
    assert plan["runs"] == 3 * (3 + 3 + 6) and plan["pool_nodes"] == 4 and not out.exists()
    assert plan["node_hours"] == pytest.approx(3 * (3 * 60 + 3 * 120 + 6 * 120) / 3600)


@pytest.mark.slow  # two command starts and a signal: about ten seconds on two busy cores
def test_ctrl_c_stops_every_launch_and_the_rerun_completes(tmp_path):
    marker = tmp_path / "alive"
    marker.mkdir()
    command = f"touch {marker}/$$; sleep 0.4; rm {marker}/$$"
    apps = _apps_file(
        tmp_path,
        [{"name": "a", "np": 1, "command": command}, {"name": "b", "np": 1, "command": command}],
    )
    out = tmp_path / "out"
    args = [
        "--apps",
        str(apps),
        "--nodes",
        f"hosts:{_hosts(tmp_path, 2, 1)}",
        "--out",
        str(out),
        "--repeats",
        "1",
        "--quiet",
        "--no-plots",
    ]
    process = subprocess.Popen(
        [sys.executable, "-m", "cosched", "measure-heatmap", *args],
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while (
        time.monotonic() < deadline
        and not (out / "runs.done").exists()
        or (out / "runs.done").read_text().count("\n") < 2
    ):
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    assert process.wait(30) == 130
    # a surviving sleep would have removed its marker by now; a killed one leaves it
    time.sleep(0.6)
    survivors = [path for path in marker.iterdir() if Path(f"/proc/{path.name}").exists()]
    assert not survivors
    rerun = _run(args)
    assert rerun.returncode == 0, rerun.stderr
    runs = pd.read_csv(out / "runs.csv")
    assert (
        runs.loc[runs["status"] == "ok", "run"].nunique() == 7
        and runs["run"].value_counts().max() == 1
    )


def test_spread_of_a_speedup_is_the_propagated_spread_of_its_times(tmp_path):
    path = tmp_path / "h.csv"
    path.write_text(
        "name_A,procs_A,compact_A,name_B,procs_B,compact_B,co_A_B,co_B_A,compact_A_std,"
        "compact_B_std,co_A_B_std,co_B_A_std\n"
        "a,1,10,b,1,20,20,10,1,0,2,0\n"
    )
    heatmap = read_heatmap(path)
    spread = read_spread(path, heatmap)
    a, b = heatmap.index("a"), heatmap.index("b")
    assert spread[a, b] == pytest.approx(0.5 * math.sqrt(0.1**2 + 0.1**2))
    assert spread[b, a] == 0 and np.isnan(spread[a, a])
    assert read_spread("aris-nas", read_heatmap("aris-nas")) is None


KERNEL_WORK = 60  # work units of a bundled kernel in the local comparison (about 2 s alone)
NOISE_SIGMAS = 3  # how many standard deviations of our repeats a speedup may differ by
NOISE_FLOOR = 0.05  # speedup difference left to timer and start-up noise


@pytest.mark.slow  # two `measure` runs and a 36-run heatmap: about two minutes
def test_kernels_on_local_2_match_cosched_measure(tmp_path, capsys):
    """The speedups of the bundled kernels measured as a heatmap (wall times of whole runs) agree
    with the speed ratios `cosched measure` gives (CPU-time windows), within the noise both show:
    the spread of our repeats, and the difference between two `measure` runs."""

    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("needs two CPUs")
    code = (
        "import os, sys; os.sched_setaffinity(0, set(map(int, sys.argv[1].split(',')))); "
        "from cosched.measurement.kernels import main; sys.exit(main(sys.argv[2:]))"
    )
    kernels = ("compute", "memory", "cache")
    apps = _apps_file(
        tmp_path,
        [
            {
                "name": name,
                "np": 1,
                "command": [sys.executable, "-c", code, "{cpus}", name, "--work", str(KERNEL_WORK)],
            }
            for name in kernels
        ],
    )
    out = tmp_path / "heatmap"
    assert (
        main(
            [
                "measure-heatmap",
                "--apps",
                str(apps),
                "--nodes",
                "local:2",
                "--out",
                str(out),
                "--quiet",
                "--no-plots",
            ]
        )
        == 0
    )
    theirs = []
    for index in range(2):
        folder = tmp_path / f"measure{index}"
        assert (
            main(
                [
                    "measure",
                    "--kernels",
                    ",".join(kernels),
                    "--out",
                    str(folder),
                    "--quiet",
                    "--no-plots",
                ]
            )
            == 0
        )
        theirs.append(read_heatmap(folder / "heatmap.csv"))
    capsys.readouterr()
    _simulate_on(out / "heatmap.csv", tmp_path)
    ours = read_heatmap(out / "heatmap.csv")
    spread = read_spread(out / "heatmap.csv", ours)
    for a in kernels:
        for b in kernels:
            if a == b:
                continue
            mine = ours.speedup(a, b)
            first, second = (heatmap.speedup(a, b) for heatmap in theirs)
            sigma = spread[ours.index(a), ours.index(b)]
            allowed = NOISE_SIGMAS * sigma + abs(first - second) + NOISE_FLOOR
            assert abs(mine - (first + second) / 2) <= allowed, (a, b, mine, first, second, sigma)


def test_launches_without_the_containment_module_run_in_a_session_of_their_own(tmp_path):
    """Without `cosched.containment` a launch still runs, is timed and is killed as a group."""
    code = (
        "import sys, time; sys.modules['cosched.containment'] = None\n"
        "from cosched.measurement import heatmap_launch as h\n"
        "role = {'app': 'x', 'command': 'sleep 0.05; echo done', 'values': {'ppn': 1}, 'cwd': None,"
        " 'env': {}, 'timeout': None, 'hosts': ['h0']}\n"
        "ok = h.run_measurement({'run': 'r', 'roles': [role]})\n"
        "late = dict(role, command='sleep 30', timeout=0.2)\n"
        "late = h.run_measurement({'run': 'r', 'roles': [late]})\n"
        "timed = 0.05 <= ok['times'][0] < 5\n"
        "print(type(h._open()).__name__, ok['status'], timed, late['status'])\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.stdout.split() == ["_Sessions", "ok", "True", "timeout"], result.stderr


def test_the_shepherd_containment_times_and_reports_its_launches(tmp_path, capsys):
    apps = _apps_file(tmp_path, [{"name": "a", "np": 1, "command": SLEEP}])
    out = tmp_path / "out"
    command = [
        "measure-heatmap",
        "--apps",
        str(apps),
        "--nodes",
        f"hosts:{_hosts(tmp_path, 2, 1)}",
        "--out",
        str(out),
        "--repeats",
        "1",
        "--containment",
        "pgroup",
        "--quiet",
        "--json",
        "--no-plots",
    ]
    assert main(command) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["containment"] == ["pgroup"] and summary["done"] == 3
    assert (pd.read_csv(out / "runs.csv")["time_a"] >= 0.05).all()


@pytest.mark.parametrize(
    "text, message",
    [
        ('{"applications": [', "not valid JSON"),
        ('{"applications": [], "x": 1}', "field 'x'"),
        ('{"applications": [{"name": "a", "np": 4, "command": "run"}]}', "needs 8 nodes"),
    ],
)
def test_bad_apps_or_a_pool_too_small_exit_2_and_write_nothing(tmp_path, capsys, text, message):
    apps = tmp_path / "apps.json"
    apps.write_text(text)
    out = tmp_path / "out"
    command = [
        "measure-heatmap",
        "--apps",
        str(apps),
        "--nodes",
        f"hosts:{_hosts(tmp_path, 3, 1)}",
        "--out",
        str(out),
    ]
    assert main(command) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1 and not out.exists()
