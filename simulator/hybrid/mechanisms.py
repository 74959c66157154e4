"""The hybrid mechanisms of 004 §III-B by name: {N, CUA, CUP} x {PAA, SPAA} and the plug-ins.

A mechanism is a class: a `Hybrid` that names its notice policy (`cosched.simulator.hybrid.notice`)
and its arrival policy (`cosched.simulator.hybrid.arrival`). The six of the paper are registered
here under the names users type (``cua-paa``; ``cua&paa`` and other cases work too); a plug-in is
named ``FILE.py:Class`` or by an entry point of the group ``cosched.hybrid_mechanisms``. The
baseline (004 Table III) is no mechanism: the site policy alone (`cosched.simulator.hybrid.run`).
"""

from __future__ import annotations

import inspect

from cosched.errors import InputError
from cosched.names import canonical, is_plugin, unknown_name
from cosched.registry import plugin
from cosched.simulator.hybrid.arrival import (
    ArrivalPolicy,
    PreemptOnArrival,
    ShrinkOnArrival,
    water_fill,
)
from cosched.simulator.hybrid.base import (
    MECHANISM_OPTIONS,
    REGROW,
    RELEASE_AFTER,
    RIGID_OVERHEADS,
    WARNING,
    Hybrid,
    check_site_policy,
)
from cosched.simulator.hybrid.notice import (
    CHECKPOINT_SLACK,
    CollectUntilArrival,
    CollectUntilPreemption,
    NoNotice,
    NoticePolicy,
)

__all__ = [
    "Hybrid",
    "MECHANISMS",
    "MECHANISM_CLASSES",
    "MECHANISM_OPTIONS",
    "RIGID_OVERHEADS",
    "REGROW",
    "WARNING",
    "NOTICE_POLICIES",
    "ARRIVAL_POLICIES",
    "mechanism_class",
    "mechanism_name",
    "water_fill",
    "check_site_policy",
    "RELEASE_AFTER",
    "CHECKPOINT_SLACK",
    "NPaa",
    "NSpaa",
    "CuaPaa",
    "CuaSpaa",
    "CupPaa",
    "CupSpaa",
]


class NPaa(Hybrid):
    """No notice handling; preemption at the arrival."""

    notice_policy = NoNotice
    arrival_policy = PreemptOnArrival


class NSpaa(Hybrid):
    """No notice handling; shrink (else preempt) at the arrival."""

    notice_policy = NoNotice
    arrival_policy = ShrinkOnArrival


class CuaPaa(Hybrid):
    """Collect until the arrival; preemption at the arrival."""

    notice_policy = CollectUntilArrival
    arrival_policy = PreemptOnArrival


class CuaSpaa(Hybrid):
    """Collect until the arrival; shrink (else preempt) at the arrival."""

    notice_policy = CollectUntilArrival
    arrival_policy = ShrinkOnArrival


class CupPaa(Hybrid):
    """Collect and plan preemptions until the arrival; preemption at the arrival."""

    notice_policy = CollectUntilPreemption
    arrival_policy = PreemptOnArrival


class CupSpaa(Hybrid):
    """Collect and plan preemptions until the arrival; shrink (else preempt) at the arrival."""

    notice_policy = CollectUntilPreemption
    arrival_policy = ShrinkOnArrival


def mechanism_name(mechanism: type[Hybrid]) -> str:
    """``notice-arrival``: the name of a mechanism class (``cua-paa``)."""
    notice, arrival = mechanism.notice_policy, mechanism.arrival_policy
    if notice is None or arrival is None:
        raise InputError(
            f"{mechanism.__name__} is no mechanism: it sets no notice_policy or no arrival_policy",
            field="hybrid",
        )
    return f"{notice.name}-{arrival.name}"


NOTICE_POLICIES: dict[str, type[NoticePolicy]] = {
    policy.name: policy for policy in (NoNotice, CollectUntilArrival, CollectUntilPreemption)
}
ARRIVAL_POLICIES: dict[str, type[ArrivalPolicy]] = {
    policy.name: policy for policy in (PreemptOnArrival, ShrinkOnArrival)
}
MECHANISM_CLASSES: dict[str, type[Hybrid]] = {
    mechanism_name(mechanism): mechanism
    for mechanism in (NPaa, NSpaa, CuaPaa, CuaSpaa, CupPaa, CupSpaa)
}
MECHANISMS = ("baseline", *MECHANISM_CLASSES)


def mechanism_class(name: str, *, field: str = "hybrid") -> type[Hybrid] | None:
    """The mechanism class `name` stands for; None for the baseline.

    A registered name (any case, ``&`` for ``-``), a plug-in ``FILE.py:Class`` or the name of an
    entry point of ``cosched.hybrid_mechanisms``; anything else is an InputError naming `field`
    (the flag that gave the name) and offering the closest registered name.
    """
    key = name.strip()
    if not is_plugin(key):
        key = key.replace("&", "-")
        known = canonical(key, MECHANISMS)
        if known in MECHANISMS:
            return MECHANISM_CLASSES.get(known)
    found = plugin(key, "mechanism")
    if found is None:
        raise InputError(unknown_name(key, MECHANISMS, "mechanism"), field=field)
    if (
        not (isinstance(found, type) and issubclass(found, Hybrid))
        or found.notice_policy is None
        or found.arrival_policy is None
    ):
        raise InputError(
            f"{key} is no hybrid mechanism: a mechanism is a subclass of "
            "cosched.simulator.hybrid.mechanisms.Hybrid that sets notice_policy and arrival_policy",
            field=field,
        )
    if inspect.isabstract(found.arrival_policy):
        raise InputError(
            f"{key}: its arrival policy {found.arrival_policy.__name__} does not say how arrived "
            "jobs make room (define make_room)",
            field=field,
        )
    return found
