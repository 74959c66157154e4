"""Routes between clusters: the SimGrid `<zoneRoute>`s between `<cluster>` zones are read (links in
order, symmetrical or not, split-duplex directions, fat pipes) and a parallel task between nodes of
different clusters pays the route's latency and is held by its links. The micro projects
x12-x14 check the times against the real ElastiSim; these tests check the reading and the
model's invariants."""

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cosched.errors import InputError
from cosched.simulator.elastic.flow import TCP_GAMMA, _parallel_task, pair_matrix, task_cost
from cosched.simulator.elastic.platform import RouteLink, load_elastisim_platform

RELATIVE = 1e-12  # float rounding of one parallel task's time

HEADER = """<?xml version='1.0'?>
<platform version="4.1">
  <zone id="Site" routing="Full">
    <cluster id="A" prefix="a-" radical="0-1" suffix="" speed="100Gf" bw="80Gbps" lat="50us"/>
    <cluster id="B" prefix="b-" radical="0-1" suffix="" speed="100Gf" bw="80Gbps" lat="50us"/>
    <cluster id="C" prefix="c-" radical="0-0" suffix="" speed="100Gf" bw="80Gbps" lat="50us"/>
"""


def platform_with(tmp_path, body: str):
    path = tmp_path / "platform.xml"
    path.write_text(HEADER + body + "\n  </zone>\n</platform>\n")
    return load_elastisim_platform(path)


def route_keys(platform, src: str, dst: str):
    names = platform.cluster_names
    return [hop.key for hop in platform.routes[names.index(src), names.index(dst)]]


def test_routes_are_read_in_order_and_reversed_when_symmetrical(tmp_path):
    platform = platform_with(
        tmp_path,
        """
    <link id="L1" bandwidth="1GBps" latency="1ms"/>
    <link id="L2" bandwidth="2GBps" latency="2ms" sharing_policy="SPLITDUPLEX"/>
    <link id="L3" bandwidth="3GBps" latency="3ms" sharing_policy="FATPIPE"/>
    <link id="L4" bandwidth="4GBps" latency="4ms"/>
    <zoneRoute src="A" dst="B" gw_src="a-A_router" gw_dst="b-B_router">
      <link_ctn id="L1"/><link_ctn id="L2" direction="UP"/><link_ctn id="L3"/>
    </zoneRoute>
    <zoneRoute src="B" dst="C" gw_src="b-B_router" gw_dst="c-C_router" symmetrical="NO">
      <link_ctn id="L4"/>
    </zoneRoute>""",
    )
    assert platform.cluster_names == ("A", "B", "C")
    assert platform.cluster.tolist() == [0, 0, 1, 1, 2]
    assert route_keys(platform, "A", "B") == ["L1", "L2_UP", "L3"]
    assert route_keys(platform, "B", "A") == ["L3", "L2_DOWN", "L1"]
    assert route_keys(platform, "B", "C") == ["L4"]
    assert (2, 1) not in platform.routes and (0, 2) not in platform.routes
    fat = platform.routes[0, 1][2]
    assert fat == RouteLink("L3", 3e9, pytest.approx(3e-3), True)


@pytest.mark.parametrize(
    "body, message",
    [
        (
            """<link id="L" bandwidth="1GBps" sharing_policy="WIFI"/>""",
            "sharing_policy must be one of",
        ),
        (
            """<link id="L" bandwidth="1GBps"/>
    <zoneRoute src="A" dst="B" gw_src="a-A_router" gw_dst="b-B_router">
      <link_ctn id="L"/></zoneRoute>
    <zoneRoute src="B" dst="A" gw_src="b-B_router" gw_dst="a-A_router">
      <link_ctn id="L"/></zoneRoute>
""",
            "given twice",
        ),
        (
            """<link id="L" bandwidth="1GBps" sharing_policy="SPLITDUPLEX"/>
    <zoneRoute src="A" dst="B" gw_src="a-A_router" gw_dst="b-B_router">
      <link_ctn id="L" direction="NONE"/></zoneRoute>""",
            "direction must be UP or DOWN",
        ),
    ],
)
def test_bad_routes_are_refused_naming_the_element(tmp_path, body, message):
    with pytest.raises(InputError, match=message):
        platform_with(tmp_path, body)


PFS = """
    <zone id="PFS_zone" routing="Full">
      <host id="PFS" speed="0Gf"><prop id="pfs_host" value="true"/></host>
    </zone>
    <link id="R1" bandwidth="80GBps" latency="500us"/>
    <link id="R2" bandwidth="40GBps" latency="500us"/>
    <zoneRoute src="PFS_zone" dst="A" gw_src="PFS" gw_dst="a-A_router" symmetrical="NO">
      <link_ctn id="R1"/></zoneRoute>
    <zoneRoute src="PFS_zone" dst="B" gw_src="PFS" gw_dst="b-B_router" symmetrical="NO">
      <link_ctn id="LINK"/></zoneRoute>
"""


def test_each_cluster_takes_its_own_pfs_route(tmp_path):
    platform = platform_with(tmp_path, PFS.replace("LINK", "R2"))
    assert platform.pfs_read is None and platform.pfs_routes is not None
    read = [platform.pfs_route("pfs_read", node) for node in range(len(platform))]
    assert [route and route[0] for route in read] == ["R1", "R1", "R2", "R2", None]
    assert all(platform.pfs_route("pfs_write", node) is None for node in range(len(platform)))
    assert platform.pfs_route_list("pfs_read") == [read[0], read[2]]


def test_one_route_for_every_cluster_keeps_the_single_route_form(tmp_path):
    body = PFS.replace("LINK", "R1") + (
        '<zoneRoute src="PFS_zone" dst="C" gw_src="PFS" gw_dst="c-C_router" symmetrical="NO">'
        '<link_ctn id="R1"/></zoneRoute>'
    )
    platform = platform_with(tmp_path, body)
    assert platform.pfs_routes is None
    assert platform.pfs_read == ("R1", 80e9, pytest.approx(500e-6)) and platform.pfs_write is None


def test_pfs_io_from_a_cluster_without_a_route_is_refused_naming_it(tmp_path):
    """SimGrid stops where a node has no route to the PFS; no other cluster's route is used."""
    platform = platform_with(tmp_path, PFS.replace("LINK", "R1"))
    task = dataclasses.make_dataclass("Task", ["kind", "pattern", "asynchronous", "where"])(
        "pfs_read", "all_ranks", False, "phases[0].tasks[0]"
    )
    assert task_cost(task, {"bytes": 1e9}, np.array([0, 2]), 0, platform).sizes == (5e8, 5e8)
    with pytest.raises(InputError, match="no route from the PFS to cluster 'C'"):
        task_cost(task, {"bytes": 1e9}, np.array([0, 4]), 0, platform)


@pytest.mark.parametrize(
    "route",
    [
        '<zoneRoute src="PFS_zone" dst="D" gw_src="PFS" gw_dst="d-D_router"><link_ctn id="R1"/>'
        "</zoneRoute>",
        '<zoneRoute src="A" dst="Nowhere" gw_src="a-A_router" gw_dst="x"><link_ctn id="R1"/>'
        "</zoneRoute>",
    ],
)
def test_a_route_to_a_zone_that_does_not_exist_is_refused_naming_the_route(tmp_path, route):
    with pytest.raises(InputError, match=r"<zoneRoute src=.* does not have"):
        platform_with(tmp_path, PFS.replace("LINK", "R1") + route)


def test_two_different_pfs_routes_for_one_cluster_are_refused(tmp_path):
    body = PFS.replace("LINK", "R1") + (
        '<zoneRoute src="PFS_zone" dst="Site" gw_src="PFS" gw_dst="x" symmetrical="NO">'
        '<link_ctn id="R2"/></zoneRoute>'
    )
    with pytest.raises(InputError, match="a second PFS read route for cluster 'A'"):
        platform_with(tmp_path, body)


def test_communication_without_a_route_is_refused(tmp_path):
    platform = platform_with(tmp_path, "")
    sizes = pair_matrix(1e9, "all_to_all", 2)
    for inside in ([0, 1], [2, 3]):  # inside cluster A, inside cluster B
        assert _parallel_task(sizes, np.array(inside), platform) > 0
    with pytest.raises(InputError, match="no route from cluster 'A' to cluster 'B'"):
        _parallel_task(sizes, np.array([1, 2]), platform)


@pytest.fixture(scope="module")
def two_clusters(tmp_path_factory):
    return platform_with(
        tmp_path_factory.mktemp("routes"),
        """
    <link id="L" bandwidth="1GBps" latency="0us"/>
    <zoneRoute src="A" dst="B" gw_src="a-A_router" gw_dst="b-B_router">
      <link_ctn id="L"/></zoneRoute>
""",
    )


def with_link(platform, bandwidth: float, latency: float, policy: str):
    fatpipe = policy == "FATPIPE"
    forward = (RouteLink("L", bandwidth, latency, fatpipe),)
    backward = forward if policy != "SPLITDUPLEX" else (RouteLink("L_DOWN", bandwidth, latency),)
    if policy == "SPLITDUPLEX":
        forward = (RouteLink("L_UP", bandwidth, latency),)
    return dataclasses.replace(platform, routes={(0, 1): forward, (1, 0): backward})


patterns = st.sampled_from(["all_to_all", "gather", "scatter", "ring", "ring_clockwise"])
orders = st.permutations([0, 1, 2, 3])


@settings(max_examples=60, deadline=None)
@given(
    pattern=patterns,
    order=orders,
    size=st.floats(1e6, 1e12),
    bandwidth=st.floats(1e8, 1e13),
    latency=st.floats(0, 1e-2),
    policy=st.sampled_from(["SHARED", "SPLITDUPLEX", "FATPIPE"]),
)
def test_a_route_between_clusters_only_slows_a_task_by_its_links(
    two_clusters, pattern, order, size, bandwidth, latency, policy
):
    nodes = np.array(order)
    sizes = pair_matrix(size, pattern, 4)
    direct = _parallel_task(sizes, nodes, dataclasses.replace(two_clusters, routes=None))
    routed = with_link(two_clusters, bandwidth, latency, policy)
    seconds = _parallel_task(sizes, nodes, routed)
    cluster = two_clusters.cluster[nodes]
    crossing = sizes[cluster[:, None] != cluster[None, :]]
    if not crossing.any():
        assert seconds == direct
        return
    assert seconds >= direct * (1 - RELATIVE)
    # 001 §5.2 (SimGrid L07): the link is busy for the bytes it carries; a fat pipe for the largest
    # pair's, a split-duplex link per direction
    if policy == "FATPIPE":
        least = crossing.max() / bandwidth
    elif policy == "SPLITDUPLEX":
        up = sizes[np.ix_(cluster == 0, cluster == 1)].sum()
        down = sizes[np.ix_(cluster == 1, cluster == 0)].sum()
        least = max(up, down) / bandwidth
    else:
        least = crossing.sum() / bandwidth
    assert seconds >= least + latency
    # nothing else slows it: the slower of the route link and the task without the link, plus the
    # latency, plus the TCP window over the longer routes
    window = 2.0 * (2 * 50e-6 + latency) * sizes.max() / TCP_GAMMA
    hop = 2 * 50e-6  # the two private links
    assert seconds <= (max(direct, least + hop, window + hop) + latency) * (1 + RELATIVE)


@settings(max_examples=40, deadline=None)
@given(pattern=patterns, order=orders, size=st.floats(1e6, 1e12), slow=st.floats(1e8, 1e12))
def test_a_slower_link_between_clusters_never_speeds_a_task_up(
    two_clusters, pattern, order, size, slow
):
    nodes, sizes = np.array(order), pair_matrix(size, pattern, 4)
    fast = _parallel_task(sizes, nodes, with_link(two_clusters, slow * 10, 1e-4, "SHARED"))
    assert _parallel_task(sizes, nodes, with_link(two_clusters, slow, 1e-4, "SHARED")) >= fast
