"""An elastisim-python algorithm whose main block must not run when cosched loads it (test
fixture)."""

from elastisim_python import JobState, NodeState, pass_algorithm


def schedule(jobs, nodes, system):
    free = [node for node in nodes if node.state == NodeState.FREE]
    for job in jobs:
        if job.state == JobState.PENDING and job.num_nodes <= len(free):
            job.assign(free[: job.num_nodes])
            del free[: job.num_nodes]


if __name__ == "__main__":
    pass_algorithm(schedule, "ipc:///tmp/elastisim.ipc")
    raise SystemExit("the main block ran")
