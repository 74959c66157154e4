"""Broken ElastiSim projects: one line naming the file, the job or task and the field, exit 2,
nothing written."""

import json
import re
import time

import pytest

from cosched.cli import main

from .scenario import RIGID, write_scenario

QUICK_SECONDS = (
    5.0  # a refusal comes at once, never after simulating (generous for a loaded 2-core machine)
)


def _run(config, capsys, tmp_path, *extra):
    started = time.perf_counter()
    code = main(
        [
            "elastic",
            str(config),
            "--scheduler",
            "fcfs-rigid",
            "--out",
            str(tmp_path / "out"),
            "--quiet",
            *extra,
        ]
    )
    elapsed = time.perf_counter() - started
    lines = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(lines) == 1, lines
    assert lines[0].startswith("cosched elastic: error: ")
    assert not (tmp_path / "out").exists()
    assert elapsed < QUICK_SECONDS
    return lines[0]


def _nested(depth):
    task = {"type": "idle", "delay": 1}
    for _ in range(depth):
        task = {"type": "sequence", "tasks": [task]}
    return task


def _chain(terms):
    return "+".join(["flops"] * terms)


@pytest.mark.parametrize(
    "task, pattern",
    [
        (
            _nested(40),
            r"model\.json, field 'phases\[0\]\.tasks\[0\](\.tasks\[0\]){33}': sequences nested "
            r"more than 32",
        ),
        (
            {"type": "cpu", "flops": "-flops", "computation_pattern": "uniform"},
            r"model\.json, field 'phases\[0\]\.tasks\[0\]: flops \(job 0\)': expression '-flops' "
            r"evaluates to -1e\+09 "
            r"\(negative\)",
        ),
        (
            {"type": "idle", "delay": "1 - num_nodes"},
            r"field 'phases\[0\]\.tasks\[0\]: delay \(job 0\)': expression '1 - num_nodes' "
            r"evaluates to -1 \(negative\)",
        ),
        (
            {"type": "idle", "delay": 1, "iterations": "1 - num_nodes"},
            r"field 'phases\[0\]\.tasks\[0\]: iterations \(job 0\)'.* \(negative\)",
        ),
        (
            {"type": "idle", "delay": 1, "iterations": 1e10},
            r"jobs\.json, field 'jobs\[0\]: application_model': job 0 implies 2e\+10 task "
            r"executions .*limit of 1e\+07",
        ),
        (
            {"type": "cpu", "flops": _chain(150_000), "computation_pattern": "uniform"},
            r"field 'phases\[0\]\.tasks\[0\]: flops \(job 0\)': expression .flops\+.*\.\.\. "
            r"\(899,999 characters\) is "
            r"longer than 20,000 characters",
        ),
        (
            {
                "type": "cpu",
                "flops": "(" * 3000 + "flops" + ")" * 3000,
                "computation_pattern": "uniform",
            },
            r"field 'phases\[0\]\.tasks\[0\]: flops \(job 0\)': expression .* nests brackets "
            r"3,000 deep, above the limit",
        ),
        (
            {"type": "cpu", "flops": "flops", "computation_pattern": "uniform", "flop": 3},
            r"model\.json, field 'phases\[0\]\.tasks\[0\]: flop': unknown key 'flop'",
        ),
    ],
    ids=[
        "nested",
        "negative-flops",
        "negative-delay",
        "negative-iterations",
        "1e10-iterations",
        "150000-terms",
        "3000-deep",
        "unknown-task-key",
    ],
)
def test_broken_model(tmp_path, capsys, task, pattern):
    model = {"phases": [{"iterations": "iterations", "tasks": [task]}]}
    line = _run(write_scenario(tmp_path, [dict(RIGID)], model), capsys, tmp_path)
    assert re.search(pattern, line), line


@pytest.mark.parametrize(
    "change, pattern",
    [
        ({"wall_time": 100}, r"jobs\.json, field 'jobs\[0\]: wall_time': unknown key 'wall_time'"),
        (
            {"arguments": {"iterations": 2, "flops": 1e9, "sin": 3}},
            r"jobs\.json, field 'jobs\[0\]: arguments\.sin': argument name 'sin' is an ExprTk "
            r"function",
        ),
        (
            {"arguments": {"iterations": 2, "flops": 1e9, "two words": 3}},
            r"jobs\.json, field 'jobs\[0\]: arguments\.two words': argument name 'two words' is "
            r"not an ExprTk",
        ),
        (
            {"num_gpus_per_node": 1},
            r"jobs\.json, field 'jobs\[0\]: num_gpus_per_node': job 0 asks for 1 GPU\(s\) per "
            r"node on 2 node\(s\); the platform .* has no GPUs",
        ),
    ],
    ids=["unknown-job-key", "function-name", "space", "gpus-without-gpus"],
)
def test_broken_job(tmp_path, capsys, change, pattern):
    line = _run(write_scenario(tmp_path, [{**RIGID, **change}]), capsys, tmp_path)
    assert re.search(pattern, line), line


@pytest.mark.parametrize(
    "cluster, pfs, pattern",
    [
        (
            {"radical": "0-999999999"},
            None,
            r"platform\.json, field 'clusters\[0\]: radical': 1,000,000,000 hosts, "
            r"above the limit",
        ),
        ({"speed": 0}, None, r"field 'clusters\[0\]: speed': must be a positive speed"),
        ({"bw": "0Gbps"}, None, r"field 'clusters\[0\]: bw': must be a positive bandwidth"),
        (
            {"properties": {"num_gpus": "2.5", "flops_per_gpu": "1Tf", "gpu_to_gpu_bw": "1GBps"}},
            None,
            r"field 'clusters\[0\]: num_gpus': must be a whole number of GPUs",
        ),
        (
            {},
            {"read_bw": 0, "write_bw": 1e9},
            r"platform\.json, field 'pfs: read_bw': must be a positive bandwidth",
        ),
    ],
    ids=["1e9-radical", "speed-0", "bw-0", "fractional-gpus", "pfs-bw-0"],
)
def test_broken_platform(tmp_path, capsys, cluster, pfs, pattern):
    model = {"phases": [{"tasks": [{"type": "pfs_read", "bytes": 1e9, "pattern": "all_ranks"}]}]}
    config = write_scenario(tmp_path, [dict(RIGID)], model)
    platform = tmp_path / "platform.json"
    document = json.loads(platform.read_text())
    document["clusters"][0].update(cluster)
    if pfs is not None:
        document["pfs"] = pfs
    platform.write_text(json.dumps(document))
    line = _run(config, capsys, tmp_path)
    assert re.search(pattern, line), line


def test_broken_xml_platform_link(tmp_path, capsys):
    config = write_scenario(tmp_path, [dict(RIGID)])
    (tmp_path / "platform.xml").write_text(
        '<?xml version="1.0"?><platform version="4.1"><zone id="AS0" routing="Full">'
        '<cluster id="c" prefix="n" radical="0-3" suffix="" speed="1Gf" bw="1GBps" lat="0us"/>'
        '<zone id="pfs" routing="None"><host id="pfs_host" speed="1Gf"><prop id="pfs_host" '
        'value="true"/></host>'
        '</zone><link id="PFS" bandwidth="0GBps" latency="0us"/>'
        '<zoneRoute src="c" dst="pfs" gw_src="n0" gw_dst="pfs_host"><link_ctn '
        'id="PFS"/></zoneRoute>'
        "</zone></platform>"
    )
    settings = json.loads(config.read_text())
    settings["platform_file"] = str(tmp_path / "platform.xml")
    config.write_text(json.dumps(settings))
    line = _run(config, capsys, tmp_path)
    assert "platform.xml, field '<link id='PFS'>: bandwidth': must be a positive bandwidth" in line


@pytest.mark.parametrize(
    "outputs, field",
    [
        ({"node_utilization": "job_statistics.csv"}, "node_utilization"),
        ({"node_utilization": "jobs.csv"}, "node_utilization"),
        (
            {"sensing": True, "sensing_interval": 1, "cpu_utilization": "summary.json"},
            "cpu_utilization",
        ),
    ],
    ids=["two-on-one", "on-jobs-csv", "on-summary"],
)
def test_colliding_output_paths(tmp_path, capsys, outputs, field):
    config = write_scenario(tmp_path, [dict(RIGID)])
    settings = json.loads(config.read_text())
    settings["job_statistics"] = str(tmp_path / "out" / "job_statistics.csv")
    settings.update(
        {
            key: str(tmp_path / "out" / value)
            if key.endswith(("utilization", "statistics"))
            else value
            for key, value in outputs.items()
        }
    )
    config.write_text(json.dumps(settings))
    code = main(["elastic", str(config), "--scheduler", "fcfs-rigid", "--quiet"])
    lines = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(lines) == 1
    assert (
        f"configuration.json, field '{field}': " in lines[0] and "is also the output of" in lines[0]
    )
    assert not (tmp_path / "out").exists()


def test_evolving_requests_see_the_job_bounds(tmp_path, capsys):
    job = {
        "type": "evolving",
        "submit_time": 0,
        "num_nodes_min": 2,
        "num_nodes_max": 4,
        "arguments": {"iterations": 3, "flops": 1e9},
    }
    model = {
        "phases": [
            {
                "iterations": "iterations",
                "evolving_request": "num_nodes_max",
                "tasks": [{"type": "cpu", "flops": "flops", "computation_pattern": "all_ranks"}],
            }
        ]
    }
    config = write_scenario(tmp_path, [job], model)
    assert (
        main(
            [
                "elastic",
                str(config),
                "--algorithm",
                "fcfs-malleable",
                "--out",
                str(tmp_path / "out"),
                "--quiet",
                "--json",
            ]
        )
        == 0
    )
    assert json.loads(capsys.readouterr().out)["completed"] == 1
    model["phases"][0]["tasks"][0]["flops"] = (
        "flops * num_nodes_max"  # tasks do not see them (as in ElastiSim)
    )
    (tmp_path / "tasks").mkdir()
    job.pop("application_model")
    config = write_scenario(tmp_path / "tasks", [job], model)
    line = _run(config, capsys, tmp_path / "tasks")
    assert (
        "field 'phases[0].tasks[0]: flops (job 0)': expression 'flops * num_nodes_max' does not "
        "compile" in line
    )


def test_elastisim_configuration_keys_keep_their_meaning(tmp_path):
    from cosched.simulator.elastic.algorithms import make_algorithm
    from cosched.simulator.elastic.compat import InvocationType, JobState

    from .scenario import compute_model, run_scenario

    job = {
        "type": "rigid",
        "submit_time": 0,
        "num_nodes": 2,
        "walltime": 1,
        "arguments": {"iterations": 3, "flops": 1e9},
    }
    for grace, status in ((0, "killed"), (5, "completed")):
        folder = tmp_path / f"grace{grace}"
        folder.mkdir()
        sim = run_scenario(
            write_scenario(
                folder,
                [dict(job)],
                config={"job_kill_grace_period": grace, "show_progress_bar": False},
            ),
            make_algorithm("fcfs-rigid"),
        )
        assert sim.runs[0].status == status
    seen = []

    def schedule(jobs, nodes, system):
        seen.append(system["invocation_type"])
        for view in jobs:
            if view.state == JobState.PENDING:
                view.assign(nodes[:2])
            elif view.state == JobState.RUNNING and len(view.assigned_nodes) == 2:
                view.assign(nodes[2:4])

    folder = tmp_path / "reconfiguration"
    folder.mkdir()
    malleable = {
        "type": "malleable",
        "submit_time": 0,
        "num_nodes_min": 2,
        "num_nodes_max": 4,
        "arguments": {"iterations": 3, "flops": 1e9},
    }
    config = write_scenario(
        folder,
        [malleable],
        compute_model(),
        config={
            "schedule_on_scheduling_point": False,
            "schedule_on_reconfiguration": True,
            "scheduling_interval": 0.25,
        },
    )
    run_scenario(config, schedule)
    assert InvocationType.INVOKE_RECONFIGURATION in seen


def test_late_clocks_and_empty_transfers_finish(tmp_path, capsys):
    """Regressions found by the fuzz target: both used to loop for ever at one moment."""
    model = {
        "phases": [
            {
                "tasks": [
                    {"type": "pfs_read", "bytes": 0, "pattern": "all_ranks"},
                    {"type": "pfs_write", "bytes": 1e6, "pattern": "all_ranks"},
                ]
            }
        ]
    }
    config = write_scenario(tmp_path, [{**RIGID, "submit_time": 1e10}], model)
    assert (
        main(
            [
                "elastic",
                str(config),
                "--scheduler",
                "fcfs-rigid",
                "--out",
                str(tmp_path / "out"),
                "--quiet",
                "--json",
            ]
        )
        == 0
    )
    summary = json.loads(capsys.readouterr().out)
    assert summary["completed"] == 1
