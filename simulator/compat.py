"""Other simulators' EASY, by name: the settings of cosched's one EASY (`schedulers.easy.EASY`), its
engine and its SWF reader that reproduce another simulator's schedule job for job.

``cqsim``: CQSim (github.com/SPEAR-UIC/CQSim, ``cqsim.py -b 1``, its EASY backfilling, as the
hybrid-mechanism study 004 ran it). Its differences from cosched's own EASY:

- a scheduling pass after every event (each completion, then each arrival) instead of one per
  timestamp (`Engine(pass_per_event=True)`); completions at one time in start order;
- running jobs end at their requested time, but a waiting job is predicted to last its run time
  (``queued_durations="run"``);
- every job whose predicted end is the shadow time gives its units to the extra units, not only the
  one whose end lets the head fit (``shadow_extra="all"``);
- the whole queue is examined behind the head (depth = number of jobs);
- CQSim's trace cleaning (`workload.read_swf(cleaning="cqsim")`): requested processors, the run time
  cut to the requested time, records without a request or with a whole run time of 0 dropped.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cosched.errors import InputError

__all__ = ["Compat", "COMPAT", "compat_settings", "run_options"]


@dataclass(frozen=True)
class Compat:
    """One named combination: scheduler options, engine options and the SWF cleaning."""

    name: str
    schedulers: tuple[str, ...]  # the schedulers it reproduces
    cleaning: str
    scheduler_options: dict = field(default_factory=dict)
    engine_options: dict = field(default_factory=dict)

    def depth(self, jobs: int) -> int:
        """The backfill depth of a run of `jobs` jobs: the whole queue."""
        return max(jobs, 1)


COMPAT = {
    "cqsim": Compat(
        name="cqsim",
        schedulers=("easy",),
        cleaning="cqsim",
        scheduler_options={"shadow_extra": "all", "queued_durations": "run"},
        engine_options={"pass_per_event": True},
    )
}


def compat_settings(name: str | None, schedulers=()) -> Compat | None:
    """The settings named `name` (None: cosched's own), checked against a run's `schedulers`."""
    if name is None:
        return None
    compat = COMPAT.get(name)
    if compat is None:
        raise InputError(f"unknown compat {name!r}; known: {', '.join(COMPAT)}", field="--compat")
    other = [scheduler for scheduler in schedulers if scheduler not in compat.schedulers]
    if other:
        raise InputError(
            f"--compat {name} reproduces {', '.join(compat.schedulers)} only, not "
            f"{', '.join(other)}",
            field="--compat",
        )
    return compat


def run_options(
    compat: Compat | None, jobs: int, kill_at_walltime: bool = False
) -> tuple[dict, dict]:
    """(scheduler options, engine options) of a run of `jobs` jobs: the `compat` variant's depth
    and options, its engine options, and walltime kills."""
    engine = {"kill_at_walltime": True} if kill_at_walltime else {}
    if compat is None:
        return {}, engine
    return {"depth": compat.depth(jobs), **compat.scheduler_options}, {
        **compat.engine_options,
        **engine,
    }
