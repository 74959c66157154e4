"""A malleable scheduler in a page.

EASY for the queue, then running malleable jobs grow into idle nodes."""

from cosched.simulator.schedulers.easy import EASY


class ExpandIntoIdle(EASY):
    """EASY backfilling; then each running malleable job expands onto idle nodes.

    A job grows up to its maximum."""

    name = "expand-into-idle"

    def schedule(self, engine):
        super().schedule(engine)  # start what EASY starts
        for job in list(engine.running):
            model = engine.model(job)
            if model.kind != "malleable":
                continue
            size = engine.allocation[job].nodes.size
            largest = model.bounds(engine.requested_nodes(job))[1]
            idle = engine.free_units()
            if idle and size < largest:
                engine.resize(job, min(largest, size + idle))
