"""The PFS link's short paths for none, one or two transfers of equal flows give, bit for bit, the
rates, throughput and next completion time of its general max-min water-filling."""

from hypothesis import given
from hypothesis import strategies as st

from cosched.simulator.elastic.flow import SharedLink, Transfer

rates = st.floats(min_value=1e3, max_value=1e12, allow_nan=False, allow_infinity=False)
caps = st.one_of(st.sampled_from([1e8, 3e9, 7e9]), rates)  # equal caps too (their order matters)
transfer_specs = st.lists(
    st.tuples(st.integers(1, 16), st.floats(1.0, 1e13), caps),  # flows, bytes each, cap
    min_size=0,
    max_size=2,
)


def _link(capacity: float, specs, now: float) -> tuple[SharedLink, list]:
    link = SharedLink(capacity)
    link.updated = now
    groups = []
    node = 0
    for count, size, cap in specs:
        flows = []
        for position in range(count):
            flows.append((position, size, cap, node, cap))
            node += 1  # every flow on a node of its own: no node link is crowded
        transfer = Transfer(flows, None, "pfs_write")
        link.add(transfer)
        groups.extend(transfer.groups)
    return link, groups


@given(
    capacity=st.one_of(st.sampled_from([1e9, 1e10]), rates),
    specs=transfer_specs,
    now=st.floats(0.0, 1e9),
)
def test_short_paths_equal_the_general_water_filling(capacity, specs, now):
    short, short_groups = _link(capacity, specs, now)
    general, general_groups = _link(capacity, specs, now)
    assert short.share() == general._share()
    assert short.throughput == general.throughput
    assert short.version == general.version == 1
    assert [group[3] for group in short_groups] == [group[3] for group in general_groups]
