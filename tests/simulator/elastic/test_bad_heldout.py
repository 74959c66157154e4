"""Bad projects and algorithm files written the way ElastiSim users get them wrong (a held-out style
audit of `cosched elastic`): one line naming the file, the job/task and the field (or the
algorithm's mistake), exit 2, nothing written, --json stdout empty; interrupts end the run at once.

The cases that must run in a real process (a crash at interpreter exit, `os._exit`, signals) start
`python -m cosched`; the others call the CLI in process.
"""

import gc
import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cosched.cli import main

from .scenario import write_scenario

RIGID = {
    "type": "rigid",
    "submit_time": 0,
    "num_nodes": 2,
    "arguments": {"iterations": 2, "flops": 1e9},
}
MALLEABLE = {
    "type": "malleable",
    "submit_time": 0,
    "num_nodes_min": 2,
    "num_nodes_max": 4,
    "arguments": {"iterations": 2, "flops": 1e9},
}
HEADER = "from elastisim_python import JobState, JobType, Node, NodeState\n"
START_ALL = (
    "def schedule(jobs, nodes, system):\n"
    "    free = [node for node in nodes if node.state == NodeState.FREE]\n"
    "    for job in jobs:\n"
    "        if job.state == JobState.PENDING:\n"
    "            size = job.num_nodes if job.type == JobType.RIGID else job.num_nodes_min\n"
    "            if size > len(free):\n"
    "                break\n"
    "            job.assign(free[:size])\n"
    "            del free[:size]\n"
)
INTERRUPT_SECONDS = 2.0  # Ctrl-C / SIGTERM end a run within this (docs/guarantees.md)
PROCESS_SECONDS = 60.0  # the longest a refused run in a subprocess may take (a loaded machine)
# ElastiSim's example configuration senses and names outputs cosched does not write (a warning
# after a run)
UNWRITTEN = {"network_activity": "out/network_activity.csv", "task_times": "out/task_times.csv"}
SENSING = {"sensing": True, "sensing_interval": 1}


def _config(tmp_path, jobs, model=None, *, config=None, nodes=8, properties=None):
    return write_scenario(
        tmp_path,
        jobs,
        model,
        nodes=nodes,
        properties=properties,
        config={
            **SENSING,
            **{key: str(tmp_path / path) for key, path in UNWRITTEN.items()},
            **(config or {}),
        },
    )


def _refused(tmp_path, capsys, config, *extra, algorithm=None):
    """Run in process with --json; the one error line (asserted: exit 2, nothing written)."""
    chosen = ["--algorithm", str(algorithm)] if algorithm else ["--scheduler", "fcfs-rigid"]
    code = main(["elastic", str(config), *chosen, "--out", str(tmp_path / "out"), "--json", *extra])
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert code == 2 and len(lines) == 1, (code, lines)
    assert lines[0].startswith("cosched elastic: error: "), lines
    assert captured.out == "" and not (tmp_path / "out").exists()
    return lines[0]


def _model(task):
    return {"phases": [{"iterations": "iterations", "tasks": [task]}]}


@pytest.mark.parametrize("name", ["exp", "log", "clamp", "if", "and", "max"])
def test_argument_named_like_an_exprtk_function_or_keyword(tmp_path, capsys, name):
    job = {**RIGID, "arguments": {**RIGID["arguments"], name: 3}}
    line = _refused(tmp_path, capsys, _config(tmp_path, [job]))
    assert f"jobs.json, field 'jobs[0]: arguments.{name}': argument name '{name}' is an ExprTk" in (
        line
    )


@pytest.mark.parametrize("name", ["", "größe", "2alpha", "model-size"])
def test_argument_name_that_is_no_variable_name(tmp_path, capsys, name):
    job = {**RIGID, "arguments": {**RIGID["arguments"], name: 3}}
    line = _refused(tmp_path, capsys, _config(tmp_path, [job]))
    assert f"field 'jobs[0]: arguments.{name}': argument name {name!r} is not an ExprTk" in line


NAME_EXAMPLES = 40  # argument names tried per run (each run takes a few milliseconds)
EXPRTK_WORDS = ["sin", "exp", "log10", "clamp", "if", "while", "and", "true", "pi", "e", "inf"]


@settings(
    max_examples=NAME_EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    name=st.one_of(
        st.sampled_from(EXPRTK_WORDS),
        st.text(min_size=0, max_size=12),
        st.from_regex(r"[A-Za-z][A-Za-z0-9_]{0,10}", fullmatch=True),
    )
)
def test_any_argument_name_runs_or_is_refused_naming_it(tmp_path_factory, capsys, name):
    """Whatever a job's argument is called: the run completes, or one line names
    `arguments.<name>` in jobs.json (never a crash, a traceback or a second line; this found
    names with a line break, which split the error line)."""
    folder = tmp_path_factory.mktemp("name")
    job = {**RIGID, "arguments": {**RIGID["arguments"], name: 3}}
    config = _config(folder, [job])
    argv = ["elastic", str(config), "--scheduler", "fcfs-rigid", "--out", str(folder / "out")]
    code = main([*argv, "--json"])
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    if code == 0:
        assert json.loads(captured.out)["completed"] == 1
        return
    assert code == 2 and len(lines) == 1, (code, lines)
    # control characters (a line break in the name) are written as escapes: still one line
    shown = "".join(char if char.isprintable() else repr(char)[1:-1] for char in name)
    assert f"jobs.json, field 'jobs[0]: arguments.{shown}': argument name" in lines[0], lines
    assert captured.out == "" and not (folder / "out").exists()


def test_the_unwritten_outputs_warning_never_precedes_an_error(tmp_path, capsys):
    """A configuration naming network_activity/task_times (as ElastiSim's example does) and a
    broken job: the error line alone (the warning used to come first, making two lines)."""
    line = _refused(tmp_path, capsys, _config(tmp_path, [{**RIGID, "wall_time": 5}]))
    assert "field 'jobs[0]: wall_time': unknown key 'wall_time'" in line


def test_the_unwritten_outputs_warning_follows_a_run(tmp_path, capsys):
    config = _config(tmp_path, [dict(RIGID)])
    assert main(["elastic", str(config), "--scheduler", "fcfs-rigid", "--quiet"]) == 0
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "warning: network_activity" in lines[0] and "not written" in lines[0]


def _xml_platform(tmp_path, config, targets="pfs_host"):
    """The configuration `config` on a small XML platform with one PFS link, `PFS`."""
    (tmp_path / "platform.xml").write_text(
        '<?xml version="1.0"?><platform version="4.1"><zone id="AS0" routing="Full">'
        '<cluster id="c" prefix="n" radical="0-3" suffix="" speed="1Gf" bw="1GBps" lat="0us">'
        f'<prop id="pfs_targets" value="{targets}"/></cluster>'
        '<zone id="pfs" routing="None"><host id="pfs_host" speed="1Gf"><prop id="pfs_host" '
        'value="true"/></host></zone><link id="PFS" bandwidth="1GBps" latency="0us"/>'
        '<zoneRoute src="c" dst="pfs" gw_src="n0" gw_dst="pfs_host"><link_ctn id="PFS"/>'
        "</zoneRoute></zone></platform>"
    )
    settings = json.loads(config.read_text())
    settings["platform_file"] = str(tmp_path / "platform.xml")
    config.write_text(json.dumps(settings))
    return config


def test_pfs_targets_naming_a_missing_host(tmp_path, capsys):
    config = _xml_platform(tmp_path, _config(tmp_path, [dict(RIGID)]), "pfs_host,pfs_typo")
    line = _refused(tmp_path, capsys, config)
    assert (
        "platform.xml, field '<cluster id='c'>: pfs_targets': names the host 'pfs_typo', which "
        "this platform does not have" in line
    )


@pytest.mark.parametrize(
    "links, message",
    [
        (
            {"pfs_read_links": ["PFS", "PFS_read"]},
            "configuration.json, field 'pfs_read_links': names the link 'PFS_read', which ",
        ),
        (
            {"pfs_write_links": 3},
            "configuration.json, field 'pfs_write_links': must be a list of link ids, got 3",
        ),
    ],
    ids=["missing-link", "not-a-list"],
)
def test_pfs_links_of_the_configuration(tmp_path, capsys, links, message):
    config = _xml_platform(tmp_path, _config(tmp_path, [dict(RIGID)], config=links))
    assert message in _refused(tmp_path, capsys, config)


def _algorithm(tmp_path, body):
    path = tmp_path / "algo.py"
    path.write_text(HEADER + body)
    return path


@pytest.mark.parametrize(
    "body, message",
    [
        (
            "raise KeyboardInterrupt\n",
            "algo.py: loading the algorithm raised KeyboardInterrupt itself (no Ctrl-C was "
            "pressed)",
        ),
        (
            "def schedule(jobs, nodes, system):\n"
            "    raise ValueError('first line\\nsecond line')\n",
            "algo.py: schedule() raised ValueError: first line | second line (time 0, "
            "INVOKE_JOB_SUBMIT)",
        ),
        (
            "raise RuntimeError('no config\\n  found')\n",
            "algo.py: loading the algorithm failed: RuntimeError: no config | found",
        ),
        (
            "while True:\n    pass\n",
            "algo.py: loading the algorithm took longer than the time limit of 0.2 s (raise it "
            "with --algorithm-time-limit)",
        ),
        (
            START_ALL.replace(
                "job.assign(free[:size])",
                "job.assign(free[:size])\n            job.assign_num_gpus_per_node(0.5)",
            ),
            "at time 0, job 0 (jobs[0]) was assigned 0.5 GPUs per node: a malleable job takes a "
            "whole number from 0 to 0",
        ),
        (
            START_ALL.replace("free[:size]", "free[:size + 3]"),
            "at time 0, job 0 (jobs[0]) cannot start on 5 nodes: a malleable job takes 2 to 4",
        ),
    ],
    ids=[
        "own-keyboard-interrupt-on-import",
        "multi-line-exception",
        "multi-line-exception-on-import",
        "loops-on-import",
        "fractional-gpus-assigned",
        "too-many-nodes",
    ],
)
def test_algorithm_mistake_is_one_line(tmp_path, capsys, body, message):
    config = _config(tmp_path, [dict(MALLEABLE)])
    algorithm = _algorithm(tmp_path, body)
    line = _refused(tmp_path, capsys, config, "--algorithm-time-limit", "0.2", algorithm=algorithm)
    assert line.startswith(f"cosched elastic: error: {algorithm}"), line
    assert message in line, line


def test_gpus_assigned_to_a_rigid_job_are_ignored_as_in_elastisim(tmp_path, capsys):
    body = START_ALL.replace(
        "job.assign(free[:size])",
        "job.assign(free[:size])\n            job.assign_num_gpus_per_node(3)",
    )
    config = _config(tmp_path, [dict(RIGID)])
    algorithm = _algorithm(tmp_path, body)
    argv = ["elastic", str(config), "--algorithm", str(algorithm), "--json"]
    assert main([*argv, "--out", str(tmp_path / "out")]) == 0
    assert json.loads(capsys.readouterr().out)["completed"] == 1


def _cosched(tmp_path, config, *extra, algorithm=None):
    chosen = ["--algorithm", str(algorithm)] if algorithm else ["--scheduler", "fcfs-rigid"]
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "cosched",
            "elastic",
            str(config),
            *chosen,
            "--json",
            "--out",
            str(tmp_path / "out"),
            *extra,
        ],  # fmt: skip
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _refused_in_a_process(tmp_path, config, algorithm=None) -> str:
    process = _cosched(tmp_path, config, algorithm=algorithm)
    out, err = process.communicate(timeout=PROCESS_SECONDS)
    lines = err.strip().splitlines()
    assert process.returncode == 2 and len(lines) == 1, (process.returncode, lines)
    assert out == "" and not (tmp_path / "out").exists()
    return lines[0]


@pytest.mark.parametrize(
    "job, task, field",
    [
        (dict(RIGID), {"type": "cpu", "flops": "-flops"}, "flops (job 0)"),
        ({**RIGID, "arguments": {"iterations": 2, "flops": float("nan")}}, {}, "flops (job 0)"),
        (dict(RIGID), {"type": "idle", "delay": "1 - num_nodes"}, "delay (job 0)"),
    ],
    ids=["negative-flops", "nan-argument", "negative-delay"],
)
def test_an_expression_error_exits_2_not_with_a_crash(tmp_path, job, task, field):
    """cexprtk's objects must never be freed by the cycle collector: after the error line the
    interpreter's exit used to corrupt the heap (SIGSEGV, exit -11/139 instead of 2)."""
    task = {"type": "cpu", "flops": "flops", "computation_pattern": "uniform", **task}
    if task["type"] == "idle":
        del task["flops"], task["computation_pattern"]
    line = _refused_in_a_process(tmp_path, _config(tmp_path, [job], _model(task)))
    assert re.search(rf"model\.json, field 'phases\[0\]\.tasks\[0\]: {re.escape(field)}'", line)


def test_no_exprtk_object_is_left_to_the_cycle_collector(tmp_path, capsys):
    """The cause of that crash, deterministically: a refused run leaves its simulation (and the
    compiled expressions it holds) to the cycle collector, and cexprtk's objects must never be
    freed by it. DEBUG_SAVEALL keeps what the collector finds instead of freeing it, so a
    regression fails here rather than crashing the test process."""
    task = {"type": "cpu", "flops": "-flops", "computation_pattern": "uniform"}
    _refused(tmp_path, capsys, _config(tmp_path, [dict(RIGID)], _model(task)))
    found = len(gc.garbage)
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        gc.collect()
    finally:
        gc.set_debug(0)
    kinds = {type(thing).__module__ for thing in gc.garbage[found:]}
    assert not any(kind.startswith("cexprtk") for kind in kinds), sorted(kinds)
    del gc.garbage[found:]  # nothing of cexprtk's (a failure keeps them): safe to free


@pytest.mark.parametrize(
    "body, message",
    [
        ("import os\nos._exit(0)\n", "loading the algorithm called os._exit(0)"),
        (
            "import os\ndef schedule(jobs, nodes, system):\n    os._exit(3)\n",
            "schedule() called os._exit(3); an algorithm returns instead (time 0, "
            "INVOKE_JOB_SUBMIT)",
        ),
    ],
    ids=["on-import", "in-schedule"],
)
def test_os_exit_is_a_mistake_not_a_silent_exit(tmp_path, body, message):
    config = _config(tmp_path, [dict(RIGID)])
    line = _refused_in_a_process(tmp_path, config, algorithm=_algorithm(tmp_path, body))
    assert line == f"cosched elastic: error: {tmp_path / 'algo.py'}: {message}"


SWALLOWING = (  # a loop that catches every exception, the interrupt's too
    "while True:\n    try:\n        sum(range(1000))\n    except BaseException:\n        pass\n"
)
LOOPING = "print('looping', flush=True)\n"


def _indented(text: str) -> str:
    return "".join(f"    {line}" for line in text.splitlines(keepends=True))


@pytest.mark.parametrize(
    "body, sig",
    [
        (LOOPING + "while True:\n    pass\n", signal.SIGINT),
        (LOOPING + SWALLOWING, signal.SIGINT),
        ("def schedule(jobs, nodes, system):\n" + _indented(LOOPING + SWALLOWING), signal.SIGTERM),
        (LOOPING + SWALLOWING, signal.SIGTERM),
    ],
    ids=[
        "ctrl-c-import-loop",
        "ctrl-c-import-swallowing",
        "sigterm-schedule-swallowing",
        "sigterm-import-swallowing",
    ],
)
def test_interrupts_end_a_looping_algorithm_at_once(tmp_path, body, sig):
    config = _config(tmp_path, [dict(RIGID)])
    process = _cosched(tmp_path, config, algorithm=_algorithm(tmp_path, body))
    try:
        assert process.stderr.readline().strip() == "looping"
        sent = time.monotonic()
        process.send_signal(sig)
        process.wait(timeout=PROCESS_SECONDS)
        elapsed = time.monotonic() - sent
    finally:
        process.kill()
        out, _ = process.communicate()
    assert process.returncode == 128 + sig
    assert elapsed < INTERRUPT_SECONDS, elapsed
    assert out == "" and not (tmp_path / "out").exists()
    assert os.path.exists(tmp_path / "algo.py")
