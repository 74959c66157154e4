"""Smallest area first: the waiting job asking for the fewest core-seconds (cores x estimate)
starts first; EASY backfilling behind the first job that does not fit."""

from cosched.simulator.schedulers.base import QueueScheduler


class SmallestAreaFirst(QueueScheduler):
    name = "smallest-area-first"
    fixed_priority = True  # a job's area never changes: the queue is kept in its order

    def priority(self, view, waiting):
        return -(self.cores[waiting] * self.estimate[waiting])  # the queue runs largest first
