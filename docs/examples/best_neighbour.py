"""A co-scheduler in a page: the waiting job that runs best next to the running ones goes first."""

import numpy as np

from cosched.simulator.schedulers import register_scheduler
from cosched.simulator.schedulers.coscheduling import CoScheduler


class BestNeighbourFirst(CoScheduler):
    """Co-located, EASY backfilling.

    The queue is sorted by each job's mean heatmap speedup next to the running jobs."""

    name = "best-neighbour"

    def priority(self, engine, waiting):
        model = engine.speed_model  # the heatmap co-location model every CoScheduler asks for
        running = np.fromiter(engine.running, np.int64, len(engine.running))
        if running.size == 0:
            return np.zeros(waiting.size)  # all equal: arrival order
        speedups = model.speedups[np.ix_(model.app[waiting], model.app[running])]
        return speedups.mean(axis=1)


register_scheduler("best-neighbour", BestNeighbourFirst)
