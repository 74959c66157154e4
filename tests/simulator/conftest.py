"""Shared helpers for the simulator tests: small generated workloads and platforms."""

from hypothesis import strategies as st

from cosched.simulator.partitions import Partition, Partitions
from cosched.simulator.platform import Platform
from cosched.simulator.workload import make_workload


@st.composite
def platforms_and_workloads(draw, max_jobs: int = 25, one_core: bool = False):
    """A small platform and a workload fitting it.

    Estimates are sometimes above, sometimes below run times."""
    platform = Platform(draw(st.integers(1, 6)), draw(st.integers(1, 2)), draw(st.integers(1, 3)))
    count = draw(st.integers(1, max_jobs))
    submit = draw(st.lists(st.integers(0, 60), min_size=count, max_size=count))
    run = draw(st.lists(st.integers(1, 30), min_size=count, max_size=count))
    cores = (
        [1] * count
        if one_core
        else draw(st.lists(st.integers(1, platform.total_cores), min_size=count, max_size=count))
    )
    slack = draw(st.lists(st.integers(-5, 40), min_size=count, max_size=count))
    estimate = [r + s for r, s in zip(run, slack)]
    return platform, make_workload(list(range(count)), submit, run, cores, estimate)


def contiguous_partitions(draw, nodes: int) -> Partitions:
    """1..3 partitions over `nodes` nodes as contiguous ranges, SWF partition numbers 0, 1, ..."""
    count = draw(st.integers(1, min(3, nodes)))
    cuts = sorted(
        draw(st.sets(st.integers(1, max(1, nodes - 1)), min_size=count - 1, max_size=count - 1))
    )
    bounds = [0, *cuts, nodes]
    return Partitions(
        tuple(
            Partition(
                f"p{p}",
                tuple(range(bounds[p], bounds[p + 1])),
                bounds[p + 1] - bounds[p],
                swf_ids=(p,),
            )
            for p in range(count)
        )
    )
