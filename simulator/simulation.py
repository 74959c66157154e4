"""One simulation from names: the scheduler (a registered name, a plug-in, an object or a function),
its allocator and its speed model, then the engine's run.

It sits above the engine and the schedulers, so the engine knows no scheduler family: it runs any
object with a ``schedule(view)`` method (`cosched.simulator.view`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cosched.collector import rare_collections
from cosched.deprecation import UNSET, renamed_keyword
from cosched.simulator.engine import Engine
from cosched.simulator.platform import Platform
from cosched.simulator.result import SimulationResult
from cosched.simulator.schedulers import make_scheduler
from cosched.simulator.schedulers.base import Scheduler
from cosched.simulator.view import SchedulerView
from cosched.simulator.workload import Workload

__all__ = ["simulate", "FunctionScheduler"]


class FunctionScheduler(Scheduler):
    """A plain function `schedule(view)` as a scheduler (the base class's hooks do nothing)."""

    def __init__(self, function: Callable[[SchedulerView], None]):
        # the function is the scheduling pass
        self.schedule = function  # type: ignore[method-assign, assignment]
        self.name = getattr(function, "__name__", "function")


def simulate(
    workload: Workload,
    platform: Platform,
    scheduler: Scheduler | str | Callable[[SchedulerView], None],
    *,
    heatmap: Any = None,
    alone_speedup: float | str | None = None,
    placement: str | None = None,
    scheduler_options: dict | None = None,
    spread_speedup: Any = UNSET,
    partitions: Any = None,
    **options: Any,
) -> SimulationResult:
    """Run one simulation of any scheduler: an object, a registered name or a function(engine).

    The scheduler declares what it needs: its allocator (`make_allocator`, given `placement`) and
    its speed model (`make_speed_model`, given the heatmap and the speedup of a job alone on spread
    nodes, `alone_speedup`; co-schedulers use the heatmap co-location model of 000 §3.5). `options`
    go to the `Engine` (job_models, sources, use_run_times, log_events, progress). The keyword
    ``spread_speedup`` is the deprecated spelling of `alone_speedup` (removed in 0.4.0).
    `partitions` (a `cosched.simulator.partitions.Assignment`) confines each job to its partition's
    nodes and runs the queue per partition; it simulates the jobs its partitions accepted.
    """
    alone_speedup = renamed_keyword(
        alone_speedup, spread_speedup, old="spread_speedup", new="alone_speedup"
    )
    chosen: Scheduler
    if isinstance(scheduler, str):
        chosen = make_scheduler(scheduler, **(scheduler_options or {}))
    elif isinstance(scheduler, Scheduler) or hasattr(scheduler, "schedule"):
        chosen = scheduler  # type: ignore[assignment]  # a plug-in need not subclass Scheduler
    else:
        chosen = FunctionScheduler(scheduler)
    if partitions is not None:
        workload = partitions.workload
        options["allocator"] = partitions.allocator(platform, chosen)
    allocator = options.pop("allocator", None) or chosen.make_allocator(
        platform, placement=placement
    )
    speed_model = options.pop("speed_model", None) or chosen.make_speed_model(
        workload, heatmap=heatmap, spread_speedup=alone_speedup
    )
    with rare_collections():  # no young pass walks the engine's new per-job lists (collector.py)
        engine = Engine(
            workload, platform, chosen, allocator=allocator, speed_model=speed_model, **options
        )
    return engine.run()
