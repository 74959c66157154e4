"""Slurm's multifactor job priority: a weighted sum of age, job size, fair-share and partition
factors (https://slurm.schedmd.com/priority_multifactor.html).

The queue disciplines (FCFS, EASY, Conservative, SJF, LJF) order by it with ``priority=
"multifactor"``: the key of `QueueScheduler.priority`, largest first, ties in queue order (submit
time, as Slurm's next key). Slurm's QOS, association, TRES, site and nice factors are not modelled
(an SWF trace has none of them).

Factors, each in [0, 1] (the page's sections of the same names):
- age: time waited over ``max_age`` (PriorityMaxAge), capped at 1;
- job size: nodes requested over the platform's nodes (PriorityFavorSmall=NO), or
  1 - (nodes - 1) / platform nodes with ``favor_small`` (a one-node job gets 1);
- partition: the partition's PriorityJobFactor over the largest one (1 without partitions);
- fair-share over accounts of equal shares directly under the root; an account is an SWF user
  (field 12) or group (field 13), ``fairshare_by``. Usage is allocated cores x seconds, decayed
  with the half-life ``decay_half_life`` (PriorityDecayHalfLife; 0: no decay), charged while jobs
  run. By default Slurm's Fair Tree (https://slurm.schedmd.com/fair_tree.html, Slurm's default
  since 19.05): accounts ranked by level fairshare LF = S/U (S = 1 / accounts, U the account's
  share of all usage), highest first, ties sharing the rank of their first; F = rank / accounts,
  so the least-used account gets 1. With ``fair_tree=False`` (``PriorityFlags=NO_FAIR_TREE``) the
  classic algorithm (https://slurm.schedmd.com/classic_fair_share.html): F = 2^(-U/S).

Defaults are Slurm's documented defaults (the slurm.conf manual,
https://slurm.schedmd.com/slurm.conf.html, and the "Configuration" section of
priority_multifactor.html): every weight 0 (so the queue stays in submit order until weights are
given), PriorityMaxAge and PriorityDecayHalfLife 7-0 (7 days), PriorityFavorSmall NO.
``WEIGHT_PRESETS["slurm-example"]`` is the page's "Configuration Example" (weights age 1000,
fair-share 10000, job size 1000, partition 1000; 14-day max age and half-life).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from cosched.simulator.view import SchedulerView

from cosched.errors import InputError
from cosched.inputs import check_number, parse_json_object, shown
from cosched.simulator.schedulers import PRIORITIES

__all__ = [
    "MultifactorWeights",
    "MultifactorPriority",
    "load_weights",
    "FAIRSHARE_BY",
    "PRIORITIES",
    "WEIGHT_PRESETS",
    "fair_tree_factors",
]

FAIRSHARE_BY = ("user", "group")
DAY = 86400.0
# Fair Tree ties accounts of equal usage; usage is a float sum kept in a scaled form, so equal
# histories can differ by rounding: usages this close (relative to all usage) count as equal
USAGE_TIE_TOLERANCE = 1e-9
REBASE_EXPONENT = 512.0  # usage is kept as 2^((t - epoch)/H)-scaled sums: rebased before overflow


@dataclass(frozen=True)
class MultifactorWeights:
    """Weights and parameters of the multifactor priority (Slurm's names in the comments), by
    default Slurm's defaults."""

    # defaults: https://slurm.schedmd.com/slurm.conf.html (PriorityWeight*, PriorityMaxAge, ...)
    age: float = 0.0  # PriorityWeightAge
    fairshare: float = 0.0  # PriorityWeightFairshare
    job_size: float = 0.0  # PriorityWeightJobSize
    partition: float = 0.0  # PriorityWeightPartition
    max_age: float = 7 * DAY  # PriorityMaxAge, seconds
    decay_half_life: float = 7 * DAY  # PriorityDecayHalfLife, seconds; 0: no decay
    favor_small: bool = False  # PriorityFavorSmall
    fairshare_by: str = "user"
    fair_tree: bool = True  # False: PriorityFlags=NO_FAIR_TREE (the classic fair-share)

    @property
    def weighted(self) -> bool:
        """True when some factor has a weight (all 0, Slurm's default: every priority is 0)."""
        return any((self.age, self.fairshare, self.job_size, self.partition))


WEIGHT_PRESETS = {
    # https://slurm.schedmd.com/priority_multifactor.html#configexample (the decay example)
    "slurm-example": MultifactorWeights(
        age=1000.0,
        fairshare=10000.0,
        job_size=1000.0,
        partition=1000.0,
        max_age=14 * DAY,
        decay_half_life=14 * DAY,
    ),
}


def load_weights(spec: Any) -> MultifactorWeights:
    """Weights from a dict, a JSON file or "key=value,..." text (keys: MultifactorWeights'
    fields; the text may start with a preset of `WEIGHT_PRESETS`, which the pairs then change);
    None gives the defaults. Errors name the field (and the file)."""
    if spec is None:
        return MultifactorWeights()
    if isinstance(spec, MultifactorWeights):
        return spec
    source, base = None, MultifactorWeights()
    if isinstance(spec, (str, os.PathLike)) and str(spec).endswith(".json"):
        source = str(spec)
        spec = parse_json_object(spec, missing="no such weights file")
    elif isinstance(spec, str):
        preset, _, pairs = spec.strip().partition(",")
        if preset.strip() in WEIGHT_PRESETS:
            base, spec = WEIGHT_PRESETS[preset.strip()], pairs
        spec = _pairs(spec)
    known = [f.name for f in fields(MultifactorWeights)]
    values = {}
    for key, value in spec.items():
        if key not in known:
            raise InputError(
                f"unknown priority weight; known: {', '.join(known)}", source=source, field=key
            )
        values[key] = _weight(key, value, source)
    if values.get("max_age", 1.0) == 0:
        raise InputError("must be positive", source=source, field="max_age")
    return replace(base, **values)


def _pairs(text: str) -> dict[str, str]:
    """{"key": "value"} of "key=value,key=value"."""
    pairs = {}
    for piece in filter(None, (p.strip() for p in text.split(","))):
        key, sep, value = piece.partition("=")
        if not sep:
            raise InputError(
                f"expected key=value (or a preset first: {', '.join(WEIGHT_PRESETS)}), got "
                f"{shown(piece)}",
                field="priority_weights",
            )
        pairs[key.strip()] = value.strip()
    return pairs


def _weight(key: str, value: object, source: str | None) -> Any:
    """One checked weight or parameter (text values only from key=value text)."""
    if key == "fairshare_by":
        if value not in FAIRSHARE_BY:
            raise InputError(
                f"must be one of {', '.join(FAIRSHARE_BY)}, got {shown(value)}",
                source=source,
                field=key,
            )
        return value
    if key in ("favor_small", "fair_tree"):
        flag = {"true": True, "yes": True, "false": False, "no": False}.get(str(value).lower())
        if flag is None or (source is not None and not isinstance(value, bool)):
            raise InputError(f"must be true or false, got {shown(value)}", source=source, field=key)
        return flag
    return float(check_number(value, source=source, field=key, minimum=0, text=source is None))


def fair_tree_factors(usage: np.ndarray) -> np.ndarray:
    """Fair Tree's fair-share factor of accounts of equal shares under the root (fair_tree.html):
    ranked by LF = S/U, highest first (equal shares: least usage first, no usage: LF infinite),
    rank counting down from the number of accounts, a tie (usages within `USAGE_TIE_TOLERANCE` of
    all usage) taking the rank of its first account; F = rank / accounts."""
    accounts = usage.size
    order = np.argsort(usage, kind="stable")
    ranked = usage[order]
    no_ties = accounts - np.arange(accounts)  # fair_tree.c's "rnt": the rank without ties
    apart = np.diff(ranked) > USAGE_TIE_TOLERANCE * usage.sum()
    first = np.r_[True, apart]  # each tie group's first account
    rank = no_ties[np.flatnonzero(first)][np.cumsum(first) - 1]
    factors = np.empty(accounts)
    factors[order] = rank / accounts
    return factors


class MultifactorPriority:
    """The multifactor priority of waiting jobs, a callable ``(engine, waiting) -> key``, keeping
    each account's decayed usage (the scheduler calls `finished` when a job stops)."""

    def __init__(self, weights: MultifactorWeights | None = None, accounts: Any = None) -> None:
        self.weights = weights or MultifactorWeights()
        self.given_accounts = accounts  # per job (workload order); None: SWF users or groups

    def attach(self, engine: SchedulerView) -> None:
        """Read the per-job arrays once: the fair-share account of each job is the SWF user or
        group of the workload's jobs unless accounts were given."""
        weights = self.weights
        account_of = self.given_accounts
        workload = engine.workload  # numpy columns: the view's are tuples, converted item by item
        self.submit = np.array(workload.submit, dtype=np.float64)
        cores_per_node = engine.platform.cores_per_node
        self.nodes = -(-np.asarray(workload.cores, dtype=np.int64) // cores_per_node)
        self.total_nodes = engine.platform.nodes
        partitions = engine.partitions
        if partitions is None:
            self.partition_factor = np.ones(len(engine.submit))
        else:
            factors = np.asarray(partitions.priority_job_factors, dtype=np.float64)
            top = factors.max()
            normalized = factors / top if top > 0 else np.zeros_like(factors)
            self.partition_factor = normalized[np.asarray(partitions.partition_of, dtype=np.int64)]
        if account_of is None:
            from cosched.simulator.job_attributes import job_attributes

            attributes = job_attributes(engine.workload)
            account_of = (
                attributes.user_id if weights.fairshare_by == "user" else attributes.group_id
            )
        _, self.account_of = np.unique(np.asarray(account_of), return_inverse=True)
        self.accounts = int(self.account_of.max()) + 1 if self.account_of.size else 1
        self.half_life = weights.decay_half_life
        self.epoch = engine.now
        self.charged = np.zeros(self.accounts)  # usage of stopped runs, scaled (see `_growth`)

    def _growth(self, time: float) -> float:
        """Usage at `time` is sum(charged) x 2^-((time - epoch)/H); a core-second at s counts
        2^((s - epoch)/H) in `charged` (the decay of every account alike cancels in U)."""
        if self.half_life <= 0:
            return time - self.epoch
        return self.half_life / math.log(2) * 2.0 ** ((time - self.epoch) / self.half_life)

    def _rebase(self, now: float) -> None:
        if self.half_life > 0 and (now - self.epoch) / self.half_life > REBASE_EXPONENT:
            self.charged *= 2.0 ** (-(now - self.epoch) / self.half_life)
            self.epoch = now

    def finished(self, engine: SchedulerView, job: int) -> None:
        """Charge a run that stopped now (end, kill or preemption) to its account: allocated cores
        x decayed seconds."""
        self._rebase(engine.now)
        allocation = engine.allocation[job]
        assert allocation is not None  # a job that ran
        cores = allocation.size * allocation.cores
        self.charged[self.account_of[job]] += cores * (
            self._growth(engine.now) - self._growth(engine.started[job])
        )

    def fairshare(self, engine: SchedulerView) -> np.ndarray:
        """F = 2^(-U/S) per account (classic_fair_share.html), running jobs charged up to now."""
        now = engine.now
        self._rebase(now)
        usage = self.charged
        if engine.running:
            running = np.fromiter(engine.running, np.int64, len(engine.running))
            started, allocation = engine.started, engine.allocation
            since = np.array([started[job] for job in running.tolist()])
            cores = np.array(
                [allocation[job].size * allocation[job].cores for job in running.tolist()]
            )
            if self.half_life > 0:
                scale = self.half_life / math.log(2)
                grown = scale * (
                    2.0 ** ((now - self.epoch) / self.half_life)
                    - 2.0 ** ((since - self.epoch) / self.half_life)
                )
            else:
                grown = now - since
            usage = usage + np.bincount(
                self.account_of[running], weights=cores * grown, minlength=self.accounts
            )
        total = usage.sum()
        if total <= 0:
            return np.ones(self.accounts)
        if self.weights.fair_tree:
            return fair_tree_factors(usage)
        shares = 1.0 / self.accounts  # S: equal normalized shares
        # classic_fair_share.html, "The Slurm Fair-Share Formula" (flat: effective usage = U)
        return 2.0 ** (-(usage / total) / shares)

    def factors(self, engine: SchedulerView, waiting: np.ndarray) -> dict[str, np.ndarray]:
        """The four factors of the waiting jobs, each in [0, 1]."""
        weights = self.weights
        # priority_multifactor.html#age: 1.0 once a job waited PriorityMaxAge
        age = np.minimum((engine.now - self.submit[waiting]) / weights.max_age, 1.0)
        nodes = self.nodes[waiting]
        # priority_multifactor.html#jobsize: 1.0 for the whole machine, or one node (FavorSmall)
        if weights.favor_small:
            size = 1.0 - (nodes - 1) / self.total_nodes
        else:
            size = nodes / self.total_nodes
        fairshare = (
            self.fairshare(engine)[self.account_of[waiting]]
            if weights.fairshare
            else np.zeros(waiting.size)
        )
        return {
            "age": age,
            "job_size": size,
            "fairshare": fairshare,
            "partition": self.partition_factor[waiting],
        }

    def __call__(self, engine: SchedulerView, waiting: np.ndarray) -> np.ndarray:
        weights, factor = self.weights, self.factors(engine, waiting)
        # priority_multifactor.html: Job_priority = sum of PriorityWeightX * X_factor (an integer)
        return np.floor(
            weights.age * factor["age"]
            + weights.fairshare * factor["fairshare"]
            + weights.job_size * factor["job_size"]
            + weights.partition * factor["partition"]
        )
