"""A plug-in allocator (a subclass of `Allocator` that keeps the base's node state) runs on the
engine: its choice of nodes is what the jobs get, and the one node state follows every start and
end."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from cosched.simulator.allocators import EMPTY, Allocation, Allocator
from cosched.simulator.engine import Engine
from cosched.simulator.platform import Platform
from cosched.simulator.schedulers import make_scheduler
from cosched.simulator.workload import make_workload

PLATFORM = Platform(6, 1, 4, "six")  # 6 nodes x 4 cores


class HighestIdleFirst(Allocator):
    """Whole nodes, the highest idle ids first: a plug-in that reads only the base's node state."""

    slots = 1

    @property
    def total_units(self) -> int:
        return self.platform.nodes

    def units(self, engine, job: int) -> int:
        return -(-engine.cores[job] // self.platform.cores_per_node)

    def free_units(self) -> int:
        return self.state.idle

    def find(self, engine, job: int) -> Allocation | None:
        count = self.units(engine, job)
        if count > self.state.idle:
            return None
        return Allocation(self.state.idle_ids[-count:], self.platform.cores_per_node)


class _Checked(HighestIdleFirst):
    """Checks at every start and end that the node state is what the running jobs hold."""

    def __init__(self, platform: Platform):
        super().__init__(platform)
        self.held: dict[int, list[int]] = {}

    def commit(self, job: int, allocation: Allocation) -> None:
        assert allocation.node_ids == self.state.idle_ids[-allocation.size :]
        super().commit(job, allocation)
        self.held[job] = allocation.node_ids
        self._check()

    def release(self, job: int, allocation: Allocation) -> None:
        super().release(job, allocation)
        del self.held[job]
        self._check()

    def _check(self) -> None:
        expected = [EMPTY] * self.platform.nodes
        for job, nodes in self.held.items():
            for node in nodes:
                expected[node] = job
        state = self.state
        assert state.occupants[:, 0].tolist() == expected
        assert state.idle_ids == [node for node, job in enumerate(expected) if job == EMPTY]
        assert state.used.tolist() == [0 if job == EMPTY else 4 for job in expected]
        assert self.free_cores() == 4 * len(state.idle_ids)


@settings(max_examples=30, deadline=None)
@given(
    jobs=st.lists(
        st.tuples(st.integers(0, 20), st.integers(1, 30), st.integers(1, 24)),
        min_size=1,
        max_size=12,
    )
)
def test_a_plug_in_allocator_places_jobs_and_the_node_state_follows(jobs):
    submit, run, cores = (np.array(column) for column in zip(*jobs))  # cores: 1 to 6 nodes
    workload = make_workload(np.arange(len(jobs)), submit, run, cores)
    allocator = _Checked(PLATFORM)
    result = Engine(workload, PLATFORM, make_scheduler("easy"), allocator=allocator).run()
    compact = Engine(workload, PLATFORM, make_scheduler("easy")).run()
    assert result.start.tolist() == compact.start.tolist()  # same units: the same schedule
    assert allocator.held == {} and allocator.state.idle == PLATFORM.nodes
    assert [len(nodes) for nodes in result.nodes] == (-(-workload.cores // 4)).tolist()
