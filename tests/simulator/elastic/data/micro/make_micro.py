"""Write the ElastiSim micro projects (inputs) into DEST/NAME/: `python make_micro.py DEST` writes
the x* projects cosched matches. Run each in the real ElastiSim
(../shared/peers/elastisim/run_elastisim.sh PROJECT RUN) and copy RUN/data/output/*.csv into
PROJECT/expected/."""

import json
import shutil
import sys
from pathlib import Path

DEST = Path(sys.argv[1])
HERE = Path(__file__).resolve().parent
# read before any project is rewritten (DEST may be this folder)
PEER_ALGO = (HERE / "x1_coupled_latency" / "algorithm.py").read_text()  # the peer projects' one
FCFS_ALGO = (HERE / "x3_running_reset" / "algorithm.py").read_text()  # an FCFS algorithm file
BASE_CONF = json.loads(
    (HERE / "x1_coupled_latency" / "data" / "input" / "configuration.json").read_text()
)
BASE_CONF["log_task_times"] = True


def platform(clusters, pfs_lat="500us", read_bw="80GBps", write_bw="50GBps"):
    body = "\n".join(clusters)
    return f"""<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
    <zone id="Site" routing="Full">
        <zone id="Batch-system_zone" routing="Full">
            <host id="Batch_system" speed="0Gf">
                <prop id="batch_system" value="true"/>
            </host>
        </zone>
{body}
        <zone id="PFS_zone" routing="Full">
            <host id="PFS" speed="0Gf">
                <prop id="pfs_host" value="true"/>
            </host>
        </zone>
        <link id="PFS_read" bandwidth="{read_bw}" latency="{pfs_lat}"/>
        <link id="PFS_write" bandwidth="{write_bw}" latency="{pfs_lat}"/>
ROUTES
    </zone>
</platform>
"""


def cluster(cid, prefix, radical, speed="100Gf", bw="100Gbps", lat="50us", props=""):
    return (
        (
            f'        <cluster id="{cid}" prefix="{prefix}" radical="{radical}" suffix="" '
            f'speed="{speed}" bw="{bw}" lat="{lat}">'
        )
        + f"""
            <prop id="node_local_bb" value="false"/>{props}
        </cluster>"""
    )


def routes(prefixes_ids, inter_bw="10TBps", inter_lat="0us", chain=True, pfs_routes=True):
    """`pfs_routes`: False when the project writes its own PFS routes (in `extra`)."""
    out = []
    for (pa, a), (pb, b) in zip(prefixes_ids, prefixes_ids[1:]) if chain else ():
        link = f'<link id="Inter_{a}_{b}" bandwidth="{inter_bw}" latency="{inter_lat}"/>'
        out.append(f"""        {link}
        <zoneRoute src="{a}" dst="{b}" gw_src="{pa}{a}_router" gw_dst="{pb}{b}_router">
            <link_ctn id="Inter_{a}_{b}"/>
        </zoneRoute>""")
    for prefix, cid in prefixes_ids if pfs_routes else ():
        out.append(
            f'        <zoneRoute src="PFS_zone" dst="{cid}" gw_src="PFS" '
            f'gw_dst="{prefix}{cid}_router" symmetrical="NO">'
            + f"""
            <link_ctn id="PFS_read"/>
        </zoneRoute>
        <zoneRoute src="{cid}" dst="PFS_zone" gw_src="{prefix}{cid}_router" gw_dst="PFS" \
symmetrical="NO">
            <link_ctn id="PFS_write"/>
        </zoneRoute>"""
        )
    return "\n".join(out)


def project(
    name,
    jobs,
    models,
    algorithm=PEER_ALGO,
    clusters=None,
    conf=None,
    pfs=None,
    inter=None,
    extra="",
):
    """`inter`: bandwidth and latency of the links between consecutive clusters; `extra`: more
    links and routes between clusters, written as given."""
    root = DEST / name
    if root.exists():
        shutil.rmtree(root)
    (root / "data/input/models").mkdir(parents=True)
    clusters = clusters or [("mc-", "Crossbar", cluster("Crossbar", "mc-", "0-11"))]
    xml = platform([c for _, _, c in clusters], **(pfs or {})).replace(
        "ROUTES", extra + routes([(p, i) for p, i, _ in clusters], **(inter or {}))
    )
    (root / "data/input/platform.xml").write_text(xml)
    c = dict(BASE_CONF, **(conf or {}))
    (root / "data/input/configuration.json").write_text(json.dumps(c, indent=2) + "\n")
    for job in jobs:
        job["application_model"] = f"data/input/models/{job['application_model']}"
    (root / "data/input/jobs.json").write_text(json.dumps({"jobs": jobs}, indent=1) + "\n")
    for mname, model in models.items():
        (root / "data/input/models" / mname).write_text(json.dumps(model, indent=1) + "\n")
    text = algorithm.read_text() if isinstance(algorithm, Path) else algorithm
    (root / "algorithm.py").write_text(text)


# x1: coupled compute+communication pays the route latency before the compute; uncoupled overlaps
# per node
project(
    "x1_coupled_latency",
    [
        {
            "type": "rigid",
            "submit_time": 0,
            "num_nodes": 2,
            "application_model": "coupled.json",
            "arguments": {},
        },
        {
            "type": "rigid",
            "submit_time": 0,
            "num_nodes": 4,
            "application_model": "uncoupled.json",
            "arguments": {},
        },
    ],
    {
        "coupled.json": {
            "phases": [
                {
                    "iterations": 100,
                    "tasks": [
                        {
                            "type": "cpu",
                            "name": "Coupled",
                            "flops": 1e11,
                            "computation_pattern": "uniform",
                            "bytes": 2e9,
                            "communication_pattern": "all_to_all",
                            "coupled": True,
                        }
                    ],
                }
            ]
        },
        "uncoupled.json": {
            "phases": [
                {
                    "iterations": 50,
                    "tasks": [
                        {
                            "type": "cpu",
                            "name": "Root",
                            "flops": 2e11,
                            "computation_pattern": "root_only",
                        },
                        {
                            "type": "cpu",
                            "name": "Overlap",
                            "flops": 1e11,
                            "computation_pattern": "odd_ranks",
                            "bytes": 4e10,
                            "communication_pattern": "gather",
                        },
                    ],
                }
            ]
        },
    },
)

# x2: adaptive job: no scheduling point in a phase with an evolving request that equals the size;
# points elsewhere
project(
    "x2_adaptive",
    [
        {
            "type": "rigid",
            "submit_time": 0,
            "num_nodes": 6,
            "application_model": "blocker.json",
            "arguments": {},
        },
        {
            "type": "adaptive",
            "submit_time": 1,
            "num_nodes_min": 2,
            "num_nodes_max": 10,
            "application_model": "adaptive.json",
            "arguments": {"work": 4e13},
        },
    ],
    {
        "blocker.json": {
            "phases": [
                {
                    "iterations": 1,
                    "tasks": [
                        {"type": "idle", "name": "Block", "delay": 120, "pattern": "uniform"}
                    ],
                }
            ]
        },
        "adaptive.json": {
            "phases": [
                {
                    "iterations": 3,
                    "evolving_request": "num_nodes",
                    "tasks": [
                        {
                            "type": "cpu",
                            "name": "Same",
                            "flops": "work/num_nodes",
                            "computation_pattern": "uniform",
                        }
                    ],
                },
                {
                    "iterations": 3,
                    "tasks": [
                        {
                            "type": "cpu",
                            "name": "Points",
                            "flops": "work/num_nodes",
                            "computation_pattern": "uniform",
                        }
                    ],
                },
                {
                    "iterations": 3,
                    "evolving_request": "num_nodes - 2",
                    "tasks": [
                        {
                            "type": "cpu",
                            "name": "Shrink",
                            "flops": "work/num_nodes",
                            "computation_pattern": "uniform",
                        }
                    ],
                },
            ]
        },
    },
)

# x3: an expansion ordered while the job is in its start-up step is overwritten by ElastiSim's
# RUNNING reset
project(
    "x3_running_reset",
    [
        {
            "type": "rigid",
            "submit_time": 0,
            "num_nodes": 4,
            "application_model": "short.json",
            "arguments": {},
        },
        {
            "type": "malleable",
            "submit_time": 0,
            "num_nodes_min": 2,
            "num_nodes_max": 12,
            "application_model": "slow_init.json",
            "arguments": {},
        },
        {
            "type": "malleable",
            "submit_time": 0,
            "num_nodes_min": 2,
            "num_nodes_max": 4,
            "application_model": "fast_init.json",
            "arguments": {},
        },
    ],
    {
        "short.json": {
            "phases": [
                {
                    "iterations": 1,
                    "tasks": [{"type": "idle", "name": "Short", "delay": 30, "pattern": "uniform"}],
                }
            ]
        },
        "slow_init.json": {
            "on_init": {
                "tasks": [{"type": "idle", "name": "Init", "delay": 60, "pattern": "uniform"}]
            },
            "phases": [
                {
                    "iterations": 4,
                    "tasks": [
                        {
                            "type": "cpu",
                            "name": "Work",
                            "flops": "4e13/num_nodes",
                            "computation_pattern": "uniform",
                        }
                    ],
                }
            ],
        },
        "fast_init.json": {
            "phases": [
                {
                    "iterations": 3,
                    "tasks": [{"type": "idle", "name": "Wait", "delay": 20, "pattern": "uniform"}],
                }
            ]
        },
    },
    algorithm=FCFS_ALGO,
)

# x4: rank order follows the algorithm's assignment: root_only work lands on the first assigned
# (slow) node
REVERSED = PEER_ALGO.replace(
    "    free_nodes = [node for node in nodes if node.state == NodeState.FREE]",
    "    free_nodes = [node for node in nodes if node.state == NodeState.FREE][::-1]",
)
assert PEER_ALGO != REVERSED
project(
    "x4_rank_order",
    [
        {
            "type": "rigid",
            "submit_time": 0,
            "num_nodes": 3,
            "application_model": "root.json",
            "arguments": {},
        }
    ],
    {
        "root.json": {
            "phases": [
                {
                    "iterations": 2,
                    "tasks": [
                        {
                            "type": "cpu",
                            "name": "Root",
                            "flops": 1e12,
                            "computation_pattern": "root_only",
                        },
                        {
                            "type": "cpu",
                            "name": "Gather",
                            "bytes": 3e10,
                            "communication_pattern": "gather",
                        },
                    ],
                }
            ]
        }
    },
    algorithm=REVERSED,
    clusters=[
        ("fast-", "Fast", cluster("Fast", "fast-", "0-1", speed="100Gf")),
        ("slow-", "Slow", cluster("Slow", "slow-", "0-1", speed="25Gf", bw="25Gbps")),
    ],
)

# x5: a phase without barrier waits for its asynchronous I/O only at the end; per-node delays drift
# apart
project(
    "x5_no_barrier",
    [
        {
            "type": "rigid",
            "submit_time": 0,
            "num_nodes": 2,
            "application_model": "nobarrier.json",
            "arguments": {},
        }
    ],
    {
        "nobarrier.json": {
            "phases": [
                {
                    "iterations": 4,
                    "barrier": False,
                    "tasks": [
                        {"type": "idle", "name": "Root", "delay": 10, "pattern": "root_only"},
                        {
                            "type": "pfs_write",
                            "name": "Async",
                            "bytes": 4e10,
                            "pattern": "all_ranks",
                            "async": True,
                        },
                    ],
                }
            ]
        }
    },
)

# x6: GPU ring over 2 nodes x 2 GPUs (intra- and inter-node parts), and a synchronized task
project(
    "x6_gpu_ring_sync",
    [
        {
            "type": "rigid",
            "submit_time": 0,
            "num_nodes": 2,
            "num_gpus_per_node": 2,
            "application_model": "gpu.json",
            "arguments": {},
        }
    ],
    {
        "gpu.json": {
            "phases": [
                {
                    "iterations": 10,
                    "tasks": [
                        {
                            "type": "gpu",
                            "name": "Ring",
                            "flops": 1e13,
                            "computation_pattern": "uniform",
                            "bytes": 2e11,
                            "communication_pattern": "ring",
                        },
                        {"type": "idle", "name": "Odd", "delay": 2, "pattern": "odd_ranks"},
                        {
                            "type": "idle",
                            "name": "Sync",
                            "delay": 1,
                            "pattern": "uniform",
                            "synchronized": True,
                        },
                    ],
                }
            ]
        }
    },
    clusters=[
        (
            "gc-",
            "Gpu",
            cluster(
                "Gpu",
                "gc-",
                "0-3",
                props="""
            <prop id="num_gpus" value="2"/>
            <prop id="flops_per_gpu" value="10Tf"/>
            <prop id="gpu_to_gpu_bw" value="50GBps"/>""",
            ),
        )
    ],
)

# x7: two asynchronous PFS writes of one node share its link (a short route: no TCP-window cap)
project(
    "x7_node_link_shared",
    [
        {
            "type": "rigid",
            "submit_time": 0,
            "num_nodes": 1,
            "application_model": "twice.json",
            "arguments": {},
        }
    ],
    {
        "twice.json": {
            "phases": [
                {
                    "iterations": 1,
                    "tasks": [
                        {
                            "type": "pfs_write",
                            "name": "First",
                            "bytes": 5e10,
                            "pattern": "root_only",
                            "async": True,
                        },
                        {
                            "type": "pfs_write",
                            "name": "Second",
                            "bytes": 5e10,
                            "pattern": "root_only",
                            "async": True,
                        },
                    ],
                }
            ]
        }
    },
    clusters=[("mc-", "Crossbar", cluster("Crossbar", "mc-", "0-3", lat="1us"))],
    pfs={"pfs_lat": "1us"},
)

# x8: a node's asynchronous and synchronous writes share its link while another job's flows share
# the PFS link
project(
    "x8_node_link_contention",
    [
        {
            "type": "rigid",
            "submit_time": 0,
            "num_nodes": 1,
            "application_model": "mixed.json",
            "arguments": {},
        },
        {
            "type": "rigid",
            "submit_time": 0,
            "num_nodes": 4,
            "application_model": "wide.json",
            "arguments": {},
        },
    ],
    {
        "mixed.json": {
            "phases": [
                {
                    "iterations": 2,
                    "tasks": [
                        {
                            "type": "pfs_write",
                            "name": "Async",
                            "bytes": 6e10,
                            "pattern": "root_only",
                            "async": True,
                        },
                        {"type": "idle", "name": "Pause", "delay": 1, "pattern": "uniform"},
                        {
                            "type": "pfs_write",
                            "name": "Sync",
                            "bytes": 2e10,
                            "pattern": "root_only",
                        },
                    ],
                }
            ]
        },
        "wide.json": {
            "phases": [
                {
                    "iterations": 3,
                    "tasks": [
                        {"type": "idle", "name": "Think", "delay": 2, "pattern": "uniform"},
                        {
                            "type": "pfs_write",
                            "name": "Write",
                            "bytes": 1.2e11,
                            "pattern": "all_ranks",
                        },
                    ],
                }
            ]
        },
    },
    clusters=[("mc-", "Crossbar", cluster("Crossbar", "mc-", "0-7", lat="1us"))],
    pfs={"pfs_lat": "1us", "write_bw": "30GBps"},
)
# x9: a node that finished its part of a PFS task early starts its next PFS flow at once
project(
    "x9_pfs_ahead",
    [
        {
            "type": "rigid",
            "submit_time": 0,
            "num_nodes": 2,
            "application_model": "behind.json",
            "arguments": {},
        }
    ],
    {
        "behind.json": {
            "phases": [
                {
                    "iterations": 1,
                    "tasks": [
                        {
                            "type": "pfs_read",
                            "name": "Root read",
                            "bytes": 4e10,
                            "pattern": "root_only",
                        },
                        {
                            "type": "pfs_write",
                            "name": "All write",
                            "bytes": 8e10,
                            "pattern": "all_ranks",
                        },
                    ],
                }
            ]
        }
    },
    pfs={"write_bw": "4GBps"},
)

# x10: nodes run ahead through delays and PFS flows of different sizes while another job shares the
# PFS link
project(
    "x10_pfs_ahead_contention",
    [
        {
            "type": "rigid",
            "submit_time": 0,
            "num_nodes": 3,
            "application_model": "ahead.json",
            "arguments": {},
        },
        {
            "type": "rigid",
            "submit_time": 0,
            "num_nodes": 2,
            "application_model": "steady.json",
            "arguments": {},
        },
    ],
    {
        "ahead.json": {
            "phases": [
                {
                    "iterations": 2,
                    "tasks": [
                        {
                            "type": "pfs_read",
                            "name": "Root read",
                            "bytes": 3e10,
                            "pattern": "root_only",
                        },
                        {"type": "idle", "name": "Odd idle", "delay": 3, "pattern": "odd_ranks"},
                        {
                            "type": "pfs_write",
                            "name": "Even write",
                            "bytes": 4e10,
                            "pattern": "even_ranks",
                        },
                        {
                            "type": "pfs_read",
                            "name": "All read",
                            "bytes": 3e10,
                            "pattern": "all_ranks",
                        },
                    ],
                }
            ]
        },
        "steady.json": {
            "phases": [
                {
                    "iterations": 4,
                    "tasks": [
                        {"type": "pfs_read", "name": "Read", "bytes": 2e10, "pattern": "all_ranks"},
                        {"type": "idle", "name": "Think", "delay": 1, "pattern": "uniform"},
                    ],
                }
            ]
        },
    },
    pfs={"read_bw": "6GBps", "write_bw": "4GBps"},
)
# x11: a node ahead of the others reaches an asynchronous PFS task and starts its flow at once
project(
    "x11_async_ahead",
    [
        {
            "type": "rigid",
            "submit_time": 0,
            "num_nodes": 2,
            "application_model": "async_ahead.json",
            "arguments": {},
        }
    ],
    {
        "async_ahead.json": {
            "phases": [
                {
                    "iterations": 1,
                    "tasks": [
                        {
                            "type": "pfs_read",
                            "name": "Root read",
                            "bytes": 4e10,
                            "pattern": "root_only",
                        },
                        {
                            "type": "pfs_write",
                            "name": "Async write",
                            "bytes": 8e10,
                            "pattern": "all_ranks",
                            "async": True,
                        },
                    ],
                }
            ]
        }
    },
    pfs={"write_bw": "4GBps"},
)

# x12: all-to-all between two clusters joined by a 1 ms link: the route latency and the TCP window
# of the longest route
project(
    "x12_inter_cluster_latency",
    [
        {
            "type": "rigid",
            "submit_time": 0,
            "num_nodes": 4,
            "application_model": "a2a.json",
            "arguments": {},
        }
    ],
    {
        "a2a.json": {
            "phases": [
                {
                    "iterations": 100,
                    "tasks": [
                        {
                            "type": "cpu",
                            "name": "A2A",
                            "bytes": 1e9,
                            "communication_pattern": "all_to_all",
                        }
                    ],
                }
            ]
        }
    },
    clusters=[("a-", "A", cluster("A", "a-", "0-1")), ("b-", "B", cluster("B", "b-", "0-1"))],
    inter={"inter_lat": "1ms"},
)

# x13: a gather to a fast cluster's node from a slow cluster through a 2 GB/s link between them
project(
    "x13_inter_cluster_gather",
    [
        {
            "type": "rigid",
            "submit_time": 0,
            "num_nodes": 4,
            "application_model": "gather.json",
            "arguments": {},
        }
    ],
    {
        "gather.json": {
            "phases": [
                {
                    "iterations": 3,
                    "tasks": [
                        {
                            "type": "cpu",
                            "name": "Root",
                            "flops": 1e11,
                            "computation_pattern": "root_only",
                        },
                        {
                            "type": "cpu",
                            "name": "Gather",
                            "flops": 1e11,
                            "computation_pattern": "uniform",
                            "bytes": 4e10,
                            "communication_pattern": "gather",
                        },
                    ],
                }
            ]
        }
    },
    clusters=[
        ("a-", "Fast", cluster("Fast", "a-", "0-1")),
        ("b-", "Slow", cluster("Slow", "b-", "0-1", bw="10Gbps", lat="20us")),
    ],
    inter={"inter_bw": "2GBps", "inter_lat": "200us"},
)

# x14: three clusters: a route of two links (shared by both directions), one direction per route
# (symmetrical="NO") with different latencies, and a split-duplex link with a fat pipe
THREE_ROUTES = """
        <link id="AB_lat" bandwidth="100GBps" latency="2ms"/>
        <link id="AB_slow" bandwidth="2.5GBps" latency="100us"/>
        <link id="BC" bandwidth="4GBps" latency="50us"/>
        <link id="CB" bandwidth="1.6GBps" latency="5ms"/>
        <link id="AC" bandwidth="1GBps" latency="300us" sharing_policy="SPLITDUPLEX"/>
        <link id="AC_fat" bandwidth="1.2GBps" latency="0us" sharing_policy="FATPIPE"/>
        <zoneRoute src="A" dst="B" gw_src="a-A_router" gw_dst="b-B_router">
            <link_ctn id="AB_lat"/>
            <link_ctn id="AB_slow"/>
        </zoneRoute>
        <zoneRoute src="B" dst="C" gw_src="b-B_router" gw_dst="c-C_router" symmetrical="NO">
            <link_ctn id="BC"/>
        </zoneRoute>
        <zoneRoute src="C" dst="B" gw_src="c-C_router" gw_dst="b-B_router" symmetrical="NO">
            <link_ctn id="CB"/>
        </zoneRoute>
        <zoneRoute src="A" dst="C" gw_src="a-A_router" gw_dst="c-C_router">
            <link_ctn id="AC" direction="UP"/>
            <link_ctn id="AC_fat"/>
        </zoneRoute>"""


def comm_task(name, pattern, size=1.2e10):
    return {"type": "cpu", "name": name, "bytes": size, "communication_pattern": pattern}


project(
    "x14_inter_cluster_routes",
    [
        {
            "type": "rigid",
            "submit_time": 0,
            "num_nodes": 6,
            "application_model": "routes.json",
            "arguments": {},
        }
    ],
    {
        "routes.json": {
            "phases": [
                {
                    "iterations": 2,
                    "tasks": [
                        comm_task("Ring", "ring"),
                        comm_task("Counter", "ring_counter_clockwise"),
                        comm_task("All", "all_to_all"),
                        comm_task("Gather", "gather"),
                    ],
                }
            ]
        }
    },
    clusters=[
        ("a-", "A", cluster("A", "a-", "0-1")),
        ("b-", "B", cluster("B", "b-", "0-1", bw="40Gbps")),
        ("c-", "C", cluster("C", "c-", "0-1", lat="10us")),
    ],
    inter={"chain": False},
    extra=THREE_ROUTES,
)

# jobs get the first free node and the last free ones: on two clusters the root lands in the
# first cluster and the other ranks in the second (a job crosses the link between them)
INTERLEAVED = PEER_ALGO.replace(
    "job.assign(free_nodes[: job.num_nodes])\n                    del free_nodes[: job.num_nodes]",
    "chosen = free_nodes[:1] + free_nodes[len(free_nodes) - job.num_nodes + 1 :]\n"
    "                    job.assign(chosen)\n"
    "                    free_nodes = [node for node in free_nodes if node not in chosen]",
)
assert PEER_ALGO != INTERLEAVED


def rigid(nodes, model, submit=0):
    return {
        "type": "rigid",
        "submit_time": submit,
        "num_nodes": nodes,
        "application_model": model,
        "arguments": {},
    }


def phases(iterations, *tasks):
    return {"phases": [{"iterations": iterations, "tasks": list(tasks)}]}


# x15: two jobs gather across the same 2 GB/s link between two clusters at once: they share it
project(
    "x15_inter_cluster_sharing",
    [rigid(2, "gather.json"), rigid(2, "gather.json")],
    {"gather.json": phases(3, comm_task("Gather", "gather", 2e10))},
    algorithm=INTERLEAVED,
    clusters=[("a-", "A", cluster("A", "a-", "0-1")), ("b-", "B", cluster("B", "b-", "0-1"))],
    inter={"inter_bw": "2GBps"},
)

# x16: a second job starts crossing the link while the first crosses it; their bytes differ and
# the second cluster's node links are slower than the link (SimGrid's fair-bottleneck sharing)
project(
    "x16_inter_cluster_staggered",
    [rigid(2, "small.json"), rigid(2, "large.json", submit=5)],
    {
        "small.json": phases(3, comm_task("Gather", "gather", 2e10)),
        "large.json": phases(2, comm_task("Gather", "gather", 3e10)),
    },
    algorithm=INTERLEAVED,
    clusters=[
        ("a-", "A", cluster("A", "a-", "0-1")),
        ("b-", "B", cluster("B", "b-", "0-1", bw="10Gbps")),
    ],
    inter={"inter_bw": "2GBps", "inter_lat": "100us"},
)

# x17: three jobs of 2, 3 and 4 nodes cross one link with a gather, a coupled all-to-all (CPU
# bound) and a ring, starting and ending at different times
project(
    "x17_inter_cluster_three_jobs",
    [rigid(2, "gather.json"), rigid(3, "coupled.json"), rigid(4, "ring.json", submit=2)],
    {
        "gather.json": phases(4, comm_task("Gather", "gather", 2e10)),
        "coupled.json": phases(
            3,
            dict(
                comm_task("Coupled", "all_to_all", 3e10),
                flops=5e11,
                computation_pattern="uniform",
                coupled=True,
            ),
        ),
        "ring.json": phases(
            2,
            {"type": "idle", "name": "Think", "delay": 1, "pattern": "uniform"},
            comm_task("Ring", "ring", 4e10),
        ),
    },
    algorithm=INTERLEAVED,
    clusters=[
        ("a-", "A", cluster("A", "a-", "0-4")),
        ("b-", "B", cluster("B", "b-", "0-4", bw="40Gbps")),
    ],
    inter={"inter_bw": "3GBps", "inter_lat": "50us"},
)

# x18: a job crosses the link and writes to the PFS while a job inside one cluster reads, writes and
# communicates: only the PFS link is shared between them
project(
    "x18_inter_cluster_pfs",
    [rigid(4, "crossing.json"), rigid(2, "local.json")],
    {
        "crossing.json": phases(
            3,
            comm_task("Gather", "gather", 3e10),
            {"type": "pfs_write", "name": "Write", "bytes": 2e10, "pattern": "all_ranks"},
        ),
        "local.json": phases(
            4,
            {"type": "pfs_read", "name": "Read", "bytes": 3e10, "pattern": "all_ranks"},
            comm_task("A2A", "all_to_all", 1e10),
            {"type": "pfs_write", "name": "Write", "bytes": 1e10, "pattern": "all_ranks"},
        ),
    },
    algorithm=INTERLEAVED,
    clusters=[("a-", "A", cluster("A", "a-", "0-2")), ("b-", "B", cluster("B", "b-", "0-2"))],
    inter={"inter_bw": "2GBps", "inter_lat": "100us"},
    pfs={"read_bw": "5GBps", "write_bw": "4GBps"},
)

# x19: three jobs on one 3 GB/s link, two of them held by their CPUs (coupled flops) at 0.2 and
# 1.25 GB/s: SimGrid's fair-bottleneck rounds leave the third at 1.4 GB/s (max-min: 1.55 GB/s)


def coupled_gather(flops):
    return dict(
        comm_task("Gather", "gather", 2e10),
        flops=flops,
        computation_pattern="uniform",
        coupled=True,
    )


project(
    "x19_inter_cluster_rounds",
    [rigid(2, "slow.json"), rigid(2, "medium.json"), rigid(2, "free.json")],
    {
        "slow.json": phases(1, coupled_gather(5e12)),
        "medium.json": phases(2, coupled_gather(8e11)),
        "free.json": phases(4, comm_task("Gather", "gather", 2e10)),
    },
    algorithm=INTERLEAVED,
    clusters=[("a-", "A", cluster("A", "a-", "0-2")), ("b-", "B", cluster("B", "b-", "0-2"))],
    inter={"inter_bw": "3GBps"},
)

# x20: an uncoupled gather (the sender computes meanwhile) shares the link with a malleable job
# that gathers from two nodes across it and takes a freed node at a scheduling point
project(
    "x20_inter_cluster_malleable",
    [
        rigid(2, "overlap.json"),
        {
            "type": "malleable",
            "submit_time": 0,
            "num_nodes_min": 2,
            "num_nodes_max": 5,
            "application_model": "grow.json",
            "arguments": {},
        },
    ],
    {
        "overlap.json": phases(
            3,
            dict(
                comm_task("Gather", "gather", 4e10), flops=1.2e12, computation_pattern="odd_ranks"
            ),
        ),
        "grow.json": phases(6, comm_task("Gather", "gather", 4.4e10)),
    },
    algorithm=INTERLEAVED,
    clusters=[("a-", "A", cluster("A", "a-", "0-2")), ("b-", "B", cluster("B", "b-", "0-2"))],
    inter={"inter_bw": "2GBps", "inter_lat": "20us"},
)

# x21: d6 without the first job's compute: its end and the malleable job's scheduling point fall on
# one instant and ElastiSim handles the end first (the freed node is taken at once)
project(
    "x21_simultaneous_end_first",
    [
        rigid(2, "overlap.json"),
        {
            "type": "malleable",
            "submit_time": 0,
            "num_nodes_min": 2,
            "num_nodes_max": 5,
            "application_model": "grow.json",
            "arguments": {},
        },
    ],
    {
        "overlap.json": phases(3, comm_task("Gather", "gather", 4e10)),
        "grow.json": phases(6, comm_task("Gather", "gather", 4e10)),
    },
    algorithm=INTERLEAVED,
    clusters=[("a-", "A", cluster("A", "a-", "0-2")), ("b-", "B", cluster("B", "b-", "0-2"))],
    inter={"inter_bw": "2GBps", "inter_lat": "20us"},
)

# x22: two GPU jobs (2 nodes x 2 GPUs) whose rings cross the link between two GPU clusters at once
GPU_PROPS = """
            <prop id="num_gpus" value="2"/>
            <prop id="flops_per_gpu" value="10Tf"/>
            <prop id="gpu_to_gpu_bw" value="50GBps"/>"""


def gpu_job(model, submit=0):
    return dict(rigid(2, model, submit), num_gpus_per_node=2)


project(
    "x22_inter_cluster_gpu",
    [gpu_job("ring.json"), gpu_job("ring.json", submit=3)],
    {
        "ring.json": phases(
            3,
            {
                "type": "gpu",
                "name": "Ring",
                "flops": 2e13,
                "computation_pattern": "uniform",
                "bytes": 8e10,
                "communication_pattern": "ring",
            },
        )
    },
    algorithm=INTERLEAVED,
    clusters=[
        ("a-", "A", cluster("A", "a-", "0-1", props=GPU_PROPS)),
        ("b-", "B", cluster("B", "b-", "0-1", props=GPU_PROPS)),
    ],
    inter={"inter_bw": "2GBps", "inter_lat": "10us"},
)

# x23: a malleable job takes two freed nodes, one in each cluster; its on_expansion gathers between
# them across the link while the job's other nodes wait
project(
    "x23_inter_cluster_expansion",
    [
        rigid(2, "hold.json"),
        {
            "type": "malleable",
            "submit_time": 0,
            "num_nodes_min": 2,
            "num_nodes_max": 4,
            "application_model": "expand.json",
            "arguments": {},
        },
    ],
    {
        "hold.json": phases(1, {"type": "idle", "name": "Hold", "delay": 10, "pattern": "uniform"}),
        "expand.json": {
            "on_expansion": {"tasks": [comm_task("Welcome", "gather", 2e10)]},
            "phases": [
                {
                    "iterations": 4,
                    "tasks": [
                        {"type": "idle", "name": "Think", "delay": 4, "pattern": "uniform"},
                        comm_task("Gather", "gather", 1.2e10),
                    ],
                }
            ],
        },
    },
    algorithm=INTERLEAVED,
    clusters=[("a-", "A", cluster("A", "a-", "0-1")), ("b-", "B", cluster("B", "b-", "0-1"))],
    inter={"inter_bw": "2GBps", "inter_lat": "30us"},
)

# x24-x27: a job's asynchronous PFS flows share its nodes' links with its own parallel task (one
# SimGrid resource per node link and direction, split duplex: writes use the up link, reads the down
# link). x24: in one cluster, an asynchronous write of 10 GB per node while the two nodes exchange
# 10 GB each (all-to-all) over 1.25 GB/s node links: both halve the up links and end together


def async_io(kind, size):
    return {"type": kind, "name": "Async", "bytes": size, "pattern": "all_ranks", "async": True}


SLOW_PAIR = [("mc-", "Crossbar", cluster("Crossbar", "mc-", "0-3", bw="10Gbps"))]
project(
    "x24_async_write_all_to_all",
    [rigid(2, "overlap.json")],
    {"overlap.json": phases(3, async_io("pfs_write", 2e10), comm_task("A2A", "all_to_all", 2e10))},
    clusters=SLOW_PAIR,
)

# x25: the PFS flows end while the parallel task still runs (5 GB written per node): the task then
# has the node links to itself
project(
    "x25_async_write_ends_first",
    [rigid(2, "overlap.json")],
    {"overlap.json": phases(3, async_io("pfs_write", 1e10), comm_task("A2A", "all_to_all", 2e10))},
    clusters=SLOW_PAIR,
)

# x26: the parallel task ends first: an asynchronous read of 30 GB per node shares the root's down
# link with a gather of 10 GB; the root's read then speeds up, the other node's read never slowed
project(
    "x26_async_read_outlives_gather",
    [rigid(2, "overlap.json")],
    {
        "overlap.json": phases(
            2,
            async_io("pfs_read", 6e10),
            comm_task("Gather", "gather", 2e10),
            {"type": "idle", "name": "Think", "delay": 1, "pattern": "uniform"},
        )
    },
    clusters=SLOW_PAIR,
)

# x27: a 2-node job writes 10 GB per node asynchronously while it gathers 10 GB across a 2 GB/s
# link between clusters from the node with a 1.25 GB/s link: they share that node's up link
project(
    "x27_inter_cluster_async_io",
    [rigid(2, "overlap.json")],
    {"overlap.json": phases(3, async_io("pfs_write", 2e10), comm_task("Gather", "gather", 2e10))},
    algorithm=INTERLEAVED,
    clusters=[
        ("a-", "A", cluster("A", "a-", "0-1")),
        ("b-", "B", cluster("B", "b-", "0-1", bw="10Gbps")),
    ],
    inter={"inter_bw": "2GBps"},
)

# x28: the PFS write link (1 GB/s) holds the two flows below their half of the node links: the
# all-to-all takes what they leave (0.75 GB/s), then the whole links once the writes end
project(
    "x28_async_write_pfs_bound",
    [rigid(2, "overlap.json")],
    {"overlap.json": phases(2, async_io("pfs_write", 2e10), comm_task("A2A", "all_to_all", 4e10))},
    clusters=SLOW_PAIR,
    pfs={"write_bw": "1GBps"},
)

# x29: the parallel task is held elsewhere (a 0.25 GB/s link between clusters) below its half of the
# node link it shares with the job's asynchronous write: the write takes the rest of the node link
project(
    "x29_async_write_beside_slow_task",
    [rigid(2, "overlap.json")],
    {"overlap.json": phases(2, async_io("pfs_write", 1e11), comm_task("Gather", "gather", 2e10))},
    algorithm=INTERLEAVED,
    clusters=[
        ("a-", "A", cluster("A", "a-", "0-1")),
        ("b-", "B", cluster("B", "b-", "0-1", bw="10Gbps")),
    ],
    inter={"inter_bw": "0.25GBps"},
)

# x30: x28's job beside a second job whose synchronous writes come and go on the 2.5 GB/s PFS
# write link: the first job's writes are held by the PFS link at some times and by their node
# links at others, and its all-to-all takes what they leave
project(
    "x30_async_write_pfs_contention",
    [rigid(2, "overlap.json"), rigid(4, "writer.json", submit=2)],
    {
        "overlap.json": phases(
            3, async_io("pfs_write", 2e10), comm_task("A2A", "all_to_all", 3e10)
        ),
        "writer.json": phases(
            3,
            {"type": "idle", "name": "Think", "delay": 3, "pattern": "uniform"},
            {"type": "pfs_write", "name": "Write", "bytes": 2e10, "pattern": "all_ranks"},
        ),
    },
    clusters=[("mc-", "Crossbar", cluster("Crossbar", "mc-", "0-7", bw="10Gbps"))],
    pfs={"write_bw": "2.5GBps"},
)

# x31: x27's job beside a second job that gathers 15 GB per iteration across the same link between
# the clusters (1.5 GB/s here): the first job's gather is held by the node link it shares with its
# write, the second's by the link between clusters (SimGrid's fair-bottleneck rounds)
project(
    "x31_inter_cluster_async_io_shared",
    [rigid(2, "overlap.json"), rigid(2, "gather.json", submit=1)],
    {
        "overlap.json": phases(3, async_io("pfs_write", 2e10), comm_task("Gather", "gather", 2e10)),
        "gather.json": phases(3, comm_task("Gather", "gather", 3e10)),
    },
    algorithm=INTERLEAVED,
    clusters=[
        ("a-", "A", cluster("A", "a-", "0-1")),
        ("b-", "B", cluster("B", "b-", "0-1", bw="10Gbps")),
    ],
    inter={"inter_bw": "1.5GBps"},
)

# x32: two asynchronous writes of the root (5 and 15 GB) and an all-to-all of 10 GB per node: three
# actions on the root's up link until the first write ends, then two, then the second write alone
project(
    "x32_two_writes_and_all_to_all",
    [rigid(2, "overlap.json")],
    {
        "overlap.json": phases(
            2,
            dict(async_io("pfs_write", 5e9), name="First", pattern="root_only"),
            dict(async_io("pfs_write", 1.5e10), name="Second", pattern="root_only"),
            comm_task("A2A", "all_to_all", 2e10),
        )
    },
    clusters=SLOW_PAIR,
)

# x33: each cluster reaches the PFS over links of its own behind the common PFS links: A over a
# 4 GB/s read and a 2 GB/s write link (0.5 ms), B over one symmetrical 1.5 GB/s link (2 ms: its
# flows' TCP window is 1.02 GB/s) that its reads and writes share; a job on A, one on a node of
# each cluster (its flows on both clusters' links) and one on B read and write at once
OWN_PFS = """        <link id="A_read" bandwidth="4GBps" latency="500us"/>
        <link id="A_write" bandwidth="2GBps" latency="500us"/>
        <link id="B_pfs" bandwidth="1.5GBps" latency="2ms"/>
        <link id="Inter_A_B" bandwidth="10TBps" latency="0us"/>
        <zoneRoute src="A" dst="B" gw_src="a-A_router" gw_dst="b-B_router">
            <link_ctn id="Inter_A_B"/>
        </zoneRoute>
        <zoneRoute src="PFS_zone" dst="A" gw_src="PFS" gw_dst="a-A_router" symmetrical="NO">
            <link_ctn id="PFS_read"/><link_ctn id="A_read"/>
        </zoneRoute>
        <zoneRoute src="A" dst="PFS_zone" gw_src="a-A_router" gw_dst="PFS" symmetrical="NO">
            <link_ctn id="A_write"/><link_ctn id="PFS_write"/>
        </zoneRoute>
        <zoneRoute src="B" dst="PFS_zone" gw_src="b-B_router" gw_dst="PFS">
            <link_ctn id="B_pfs"/>
        </zoneRoute>
"""


def pfs_io(read, write):
    return phases(
        2,
        {"type": "pfs_read", "name": "Read", "bytes": read, "pattern": "all_ranks"},
        {"type": "idle", "name": "Think", "delay": 1, "pattern": "uniform"},
        {"type": "pfs_write", "name": "Write", "bytes": write, "pattern": "all_ranks"},
    )


project(
    "x33_pfs_routes_per_cluster",
    [rigid(2, "a.json"), rigid(2, "both.json"), rigid(2, "b.json")],
    {"a.json": pfs_io(1.2e10, 6e9), "both.json": pfs_io(8e9, 8e9), "b.json": pfs_io(6e9, 1e10)},
    clusters=[("a-", "A", cluster("A", "a-", "0-2")), ("b-", "B", cluster("B", "b-", "0-2"))],
    inter={"pfs_routes": False, "chain": False},
    extra=OWN_PFS,
)

# x34: x20 with equal gathers and flops on the first job's odd ranks beside its gather: its end and
# the malleable job's scheduling point fall on one instant; the first job's ranks wait for their
# finished computations one SimGrid round longer, so ElastiSim handles the scheduling point first
# (the freed node is not yet free)
project(
    "x34_end_after_local_compute",
    [
        rigid(2, "overlap.json"),
        {
            "type": "malleable",
            "submit_time": 0,
            "num_nodes_min": 2,
            "num_nodes_max": 5,
            "application_model": "grow.json",
            "arguments": {},
        },
    ],
    {
        "overlap.json": phases(
            3,
            dict(
                comm_task("Gather", "gather", 4e10),
                flops=1.2e12,
                computation_pattern="odd_ranks",
            ),
        ),
        "grow.json": phases(6, comm_task("Gather", "gather", 4e10)),
    },
    algorithm=INTERLEAVED,
    clusters=[("a-", "A", cluster("A", "a-", "0-2")), ("b-", "B", cluster("B", "b-", "0-2"))],
    inter={"inter_bw": "2GBps", "inter_lat": "20us"},
)

print("written", sorted(p.name for p in DEST.iterdir()))
