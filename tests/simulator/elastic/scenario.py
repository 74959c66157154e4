"""Small ElastiSim scenarios written into a folder, for the tests of cosched.simulator.elastic."""

import json
from pathlib import Path

SPEED = 1e9  # flop/s of every node of the test platform
BANDWIDTH = 1e9  # B/s of every node link
# a small rigid job of the compute model's two iterations
RIGID = {
    "type": "rigid",
    "submit_time": 0,
    "num_nodes": 2,
    "arguments": {"iterations": 2, "flops": 1e9},
}
PFS_READ, PFS_WRITE = 4e9, 2e9  # B/s of the PFS links


def compute_model(flops="flops", pattern="all_ranks", iterations="iterations", **extra):
    """One phase of `iterations` compute-only iterations (scheduling point after each)."""
    return {
        "phases": [
            {
                "iterations": iterations,
                "tasks": [{"type": "cpu", "flops": flops, "computation_pattern": pattern}],
            }
        ],
        **extra,
    }


def write_scenario(folder, jobs, model=None, *, nodes=8, config=None, models=None, properties=None):
    """Write model.json, jobs.json, platform.json and configuration.json into `folder`; return the
    config path."""
    folder = Path(folder)
    models = models or {"model.json": model or compute_model()}
    for name, content in models.items():
        (folder / name).write_text(json.dumps(content))
    for job in jobs:
        job.setdefault("application_model", str(folder / "model.json"))
    (folder / "jobs.json").write_text(json.dumps({"jobs": jobs}))
    (folder / "platform.json").write_text(
        json.dumps(
            {
                "clusters": [
                    {
                        "prefix": "n",
                        "radical": f"0-{nodes - 1}",
                        "speed": SPEED,
                        "bw": BANDWIDTH,
                        "lat": 0,
                        "properties": properties or {},
                    }
                ],
                "pfs": {"read_bw": PFS_READ, "write_bw": PFS_WRITE, "latency": 0},
            }
        )
    )
    configuration = {
        "jobs_file": str(folder / "jobs.json"),
        "platform_file": str(folder / "platform.json"),
        "schedule_on_job_submit": True,
        "schedule_on_job_finalize": True,
        "schedule_on_scheduling_point": True,
        "scheduling_interval": 0,
        "job_statistics": str(folder / "out" / "job_statistics.csv"),
        "node_utilization": str(folder / "out" / "node_utilization.csv"),
        **(config or {}),
    }
    path = folder / "configuration.json"
    path.write_text(json.dumps(configuration))
    return path


def run_scenario(config_path, algorithm):
    """Load and simulate; the finished Simulation."""
    from cosched.simulator.elastic.config import load_configuration
    from cosched.simulator.elastic.expressions import Expressions
    from cosched.simulator.elastic.platform import load_elastisim_platform
    from cosched.simulator.elastic.runtime import simulate_project
    from cosched.simulator.elastic.workload import load_jobs

    configuration = load_configuration(config_path)
    expressions = Expressions()
    return simulate_project(
        configuration,
        load_elastisim_platform(configuration.platform_file),
        load_jobs(configuration.jobs_file, expressions),
        algorithm,
        expressions=expressions,
    )
