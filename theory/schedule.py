"""The `Schedule` result every strategy and OPT return: (combination, time) pairs of 002 §3.

A schedule is the sequence of (combination S_{j_k}, time x_{j_k}) pairs; its makespan is the sum of
the times (002 §3). OPT, FCS, the search strategies and real measurements all compare through it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from cosched.theory.instance import Instance
from cosched.theory.lattice import tasks_of

__all__ = ["Schedule", "WORK_TOLERANCE"]

WORK_TOLERANCE = 1e-9  # a task is complete when its remaining work is at most this fraction of b_i


@dataclass(frozen=True, eq=False)
class Schedule:
    """Ordered (combination bitmask, duration) pairs produced by a strategy on an instance."""

    combinations: np.ndarray
    durations: np.ndarray
    strategy: str
    tasks: tuple[str, ...] = ()
    info: dict = field(default_factory=dict)

    @property
    def makespan(self) -> float:
        """C_max = sum_k x_{j_k} (002 §3)."""
        return float(np.sum(self.durations))

    def work_done(self, instance: Instance) -> np.ndarray:
        """sum_k a_{i, j_k} x_{j_k} for every task; equals b for a feasible schedule (002 §3)."""
        columns = instance.index(self.combinations)
        return instance.speeds[:, columns] @ self.durations

    def is_feasible(self, instance: Instance, tolerance: float = WORK_TOLERANCE) -> bool:
        return bool(
            np.allclose(self.work_done(instance), instance.work, rtol=tolerance * 10, atol=0)
        )

    def time_per_combination(self) -> dict[int, float]:
        """x_j: total time of each combination, summed over its repetitions (002 §3)."""
        totals: dict[int, float] = {}
        for mask, duration in zip(self.combinations.tolist(), self.durations.tolist()):
            totals[mask] = totals.get(mask, 0.0) + duration
        return totals

    def to_frame(self):
        """One row per step: start, end, duration, bitmask and member tasks."""
        import pandas as pd

        ends = np.cumsum(self.durations)
        return pd.DataFrame(
            {
                "step": np.arange(len(self.durations)),
                "combination": [tuple(self._names(mask)) for mask in self.combinations.tolist()],
                "mask": self.combinations,
                "start": ends - self.durations,
                "end": ends,
                "duration": self.durations,
            }
        )

    def to_json(self) -> dict:
        """{"strategy", "makespan", "schedule": [{"combination": [task indices], "time"}]} (CLI
        contract)."""
        return {
            "strategy": self.strategy,
            "makespan": self.makespan,
            "schedule": [
                {"combination": tasks_of(mask), "time": duration}
                for mask, duration in zip(self.combinations.tolist(), self.durations.tolist())
            ],
        }

    def _names(self, mask: int) -> list:
        members = tasks_of(mask)
        return [self.tasks[i] for i in members] if self.tasks else members
