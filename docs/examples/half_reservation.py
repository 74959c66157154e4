"""A hybrid mechanism of your own: CUA that holds only half of an announced job's nodes before it
arrives (fewer idle nodes wait for a job that may come late); PAA makes room for the rest."""

from cosched.simulator.hybrid.arrival import PreemptOnArrival
from cosched.simulator.hybrid.mechanisms import Hybrid
from cosched.simulator.hybrid.notice import CollectUntilArrival


class CollectHalf(CollectUntilArrival):
    name = "half"

    def wanted(self, od: int) -> int:
        return -(-self.mechanism.n_max[od] // 2)  # half its nodes, rounded up


class HalfPaa(Hybrid):
    notice_policy = CollectHalf
    arrival_policy = PreemptOnArrival
