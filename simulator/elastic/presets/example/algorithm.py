"""An FCFS algorithm written for elastisim-python, as an ElastiSim user writes it (cosched's, not
ElastiSim's).

The algorithm of the `example` preset (`cosched elastic example --out DIR`); it runs unchanged in
ElastiSim too.

Rigid jobs start in arrival order when enough nodes are free; moldable and malleable jobs start on
as many free nodes as they may use; running malleable jobs grow into free nodes; evolving requests
are granted as far as free nodes allow (shrinks always).
"""

from elastisim_python import InvocationType, JobState, JobType, NodeState, pass_algorithm


def schedule(jobs, nodes, system):
    free_nodes = [node for node in nodes if node.state == NodeState.FREE]

    if system["invocation_type"] == InvocationType.INVOKE_EVOLVING_REQUEST:
        job = system["job"]
        if job.state == JobState.RUNNING:
            wanted = system["evolving_request"]
            current = len(job.assigned_nodes)
            if wanted < current:
                job.remove(job.assigned_nodes[wanted:])
            elif wanted > current and free_nodes:
                grow = min(wanted - current, len(free_nodes))
                job.assign(free_nodes[:grow])
                del free_nodes[:grow]

    for job in jobs:
        if job.state != JobState.PENDING:
            if job.type == JobType.MALLEABLE and job.state == JobState.RUNNING:
                grow = min(len(free_nodes), job.num_nodes_max - len(job.assigned_nodes))
                if grow > 0:
                    job.assign(free_nodes[:grow])
                    del free_nodes[:grow]
            continue
        if job.type == JobType.RIGID:
            if job.num_nodes > len(free_nodes):
                break
            job.assign(free_nodes[: job.num_nodes])
            del free_nodes[: job.num_nodes]
        else:
            size = min(len(free_nodes), job.num_nodes_max)
            if size < job.num_nodes_min:
                break
            job.assign(free_nodes[:size])
            del free_nodes[:size]


if __name__ == "__main__":
    url = "ipc:///tmp/elastisim.ipc"
    pass_algorithm(schedule, url)
