"""Schedulers by name: the CLI, experiments and users build them through `make_scheduler`.

A name may also be a plug-in: ``FILE.py:Class`` (a scheduler class in a Python file) or an entry
point of the group ``cosched.schedulers`` (see `cosched.registry.plugin`).

`SCHEDULERS` maps a CLI name to "module:factory" (or a factory); the co-scheduling package adds its
own entries. A factory's class attribute `OPTIONS` lists the keyword options it takes
(backfill, depth, ...).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from cosched.errors import InputError
from cosched.registry import build, plugin

__all__ = [
    "SCHEDULERS",
    "make_scheduler",
    "register_scheduler",
    "CLASSIC",
    "COSCHEDULERS",
    "ELASTIC",
    "PRIORITIES",
]

SCHEDULERS: dict[str, str | Callable] = {
    "fcfs": "cosched.simulator.schedulers.fcfs:FCFS",
    "easy": "cosched.simulator.schedulers.easy:EASY",
    "conservative": "cosched.simulator.schedulers.easy:Conservative",
    "sjf": "cosched.simulator.schedulers.ordering:SJF",
    "ljf": "cosched.simulator.schedulers.ordering:LJF",
}
CLASSIC = ("fcfs", "easy", "conservative", "sjf", "ljf")
SCHEDULERS.update(
    {  # co-schedulers (003 ch. 5): `simulate` gives them the co-location speed model
        "easy-co": "cosched.simulator.schedulers.coscheduling:EasyCo",
        "sjf-co": "cosched.simulator.schedulers.coscheduling:SJFCo",
        "ljf-co": "cosched.simulator.schedulers.coscheduling:LJFCo",
        "laf-co": "cosched.simulator.schedulers.coscheduling:LAFCo",
        "popularity": "cosched.simulator.schedulers.popularity:Popularity",
        "filler": "cosched.simulator.schedulers.filler:Filler",
        "sjf-filler": "cosched.simulator.schedulers.filler:SJFFiller",
        "pop-filler": "cosched.simulator.schedulers.filler:PopFiller",
        "matching": "cosched.simulator.schedulers.matching:Matching",
    }
)
COSCHEDULERS = (
    "easy-co",
    "sjf-co",
    "ljf-co",
    "laf-co",
    "popularity",
    "filler",
    "sjf-filler",
    "pop-filler",
    "matching",
)
SCHEDULERS.update(
    {  # the rigid and malleable policies of ElastiSim's study (001 §6.3)
        "fcfs-rigid": "cosched.simulator.schedulers.elastic:FCFSRigid",
        "fcfs-malleable": "cosched.simulator.schedulers.elastic:FCFSMalleable",
        "sjf-rigid": "cosched.simulator.schedulers.elastic:SJFRigid",
        "sjf-malleable": "cosched.simulator.schedulers.elastic:SJFMalleable",
        "drf": "cosched.simulator.schedulers.elastic:DRF",
        "srtf": "cosched.simulator.schedulers.elastic:SRTF",
        # the other reading of the rigid policies (greedy first fit, no reservation), under names of
        # their own
        "fcfs-rigid-greedy": "cosched.simulator.schedulers.elastic:FCFSRigidGreedy",
        "sjf-rigid-greedy": "cosched.simulator.schedulers.elastic:SJFRigidGreedy",
    }
)
# the queue orders `QueueScheduler(priority=...)` takes (`schedulers.multifactor`), named here so
# that the CLI's choices do not import the multifactor module
PRIORITIES = ("multifactor",)
ELASTIC = ("fcfs-rigid", "fcfs-malleable", "sjf-rigid", "sjf-malleable", "drf", "srtf")


def register_scheduler(name: str, factory: str | Callable) -> None:
    """Make a scheduler available by name (to the CLI and `make_scheduler`)."""
    SCHEDULERS[name] = factory


def make_scheduler(name: str, **options: Any) -> Any:
    """Build the scheduler called `name` with keyword `options`.

    An option no registered scheduler takes (a misspelling such as ``depht``) is an InputError
    naming the options this one takes. An option of other schedulers that this one does not take
    (``depth`` for a policy without a backfilling window) is ignored, so one set of options can go
    to any scheduler.
    """
    factory = SCHEDULERS.get(name)
    if factory is None and options:
        factory = plugin(name, "scheduler")
    if factory is not None and options:
        factory = _load(factory)
        accepted = getattr(factory, "OPTIONS", None)
        if accepted is not None:
            foreign = [key for key in options if key not in accepted]
            unknown = [key for key in foreign if key not in _every_option()]
            if unknown:
                raise InputError(
                    f"unknown option {unknown[0]!r} of scheduler {name!r}; it takes: "
                    f"{', '.join(accepted) or 'no options'}",
                    field=unknown[0],
                )
    return build(SCHEDULERS, name, "scheduler", **options)


def _load(factory: str | Callable) -> Callable:
    if isinstance(factory, str):
        module, attribute = factory.split(":")
        return getattr(importlib.import_module(module), attribute)
    return factory


def _every_option() -> set[str]:
    """The options some registered scheduler takes (imports every scheduler module: the error path
    only)."""
    known: set[str] = set()
    for factory in SCHEDULERS.values():
        known.update(getattr(_load(factory), "OPTIONS", ()) or ())
    return known
