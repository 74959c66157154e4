"""The Schedule result and the one execution loop every online strategy plugs into."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cosched.strategies.schedule import Decision, Schedule, StrategyError, execute
from cosched.theory.generators import random_instance
from cosched.theory.opt import solve_opt
from cosched.theory.testing import instances


class RandomCombination:
    """Runs a random combination of unfinished tasks for at most `limit`: a strategy no better than
    chance."""

    name = "random-combination"

    def __init__(self, limit=np.inf):
        self.limit = limit
        self.observed = []

    def start(self, instance, rng):
        self.masks, self.rng = instance.combinations, rng

    def decide(self, unfinished):
        allowed = self.masks[(self.masks & ~unfinished) == 0]
        return Decision(int(self.rng.choice(allowed)), self.limit)

    def observe(self, combination, duration, measured_speeds, finished):
        self.observed.append((combination, duration, measured_speeds.copy(), finished))


class Fixed:
    name = "fixed"

    def __init__(self, *decisions):
        self.decisions = list(decisions)

    def start(self, instance, rng):
        pass

    def decide(self, unfinished):
        return self.decisions.pop(0)

    def observe(self, *args):
        pass


@settings(max_examples=30)
@given(instances(n=(1, 6)), st.integers(0, 1000), st.sampled_from([np.inf, 7.5]))
def test_any_strategy_does_exactly_the_work_and_never_beats_opt(instance, seed, limit):
    schedule = execute(instance, RandomCombination(limit), seed=seed)
    assert np.allclose(schedule.work_done(instance), instance.work, rtol=1e-9, atol=0)
    assert schedule.makespan >= solve_opt(instance).makespan * (1 - 1e-9)
    assert (schedule.durations <= limit).all()


def test_observe_reports_speeds_and_newly_finished_tasks():
    instance = random_instance(3, seed=2)
    strategy = RandomCombination()
    execute(instance, strategy, seed=0, measure=lambda speeds, rng: speeds * 2)
    finished = 0
    for combination, _duration, measured, done in strategy.observed:
        assert np.array_equal(measured, 2 * instance.column(combination))
        assert done & finished == 0 and done & ~combination == 0
        finished |= done
    assert finished == 0b111


def test_loop_rejects_finished_unknown_and_zero_speed_combinations():
    instance = random_instance(2, seed=0).restrict(combinations=[1, 3])
    with pytest.raises(StrategyError, match="not a combination"):
        execute(instance, Fixed(Decision(2)))
    with pytest.raises(StrategyError, match="not a set of unfinished"):
        execute(instance, Fixed(Decision(4)))
    with pytest.raises(StrategyError, match="not a set of unfinished"):
        execute(random_instance(2, seed=0), Fixed(Decision(1), Decision(1), Decision(3)))


def test_loop_stops_a_strategy_that_makes_no_progress():
    instance = random_instance(2, seed=0)
    never = Fixed(*[Decision(3, 0.0)] * 100)
    with pytest.raises(StrategyError, match="no completion"):
        execute(instance, never, max_steps=50)


def test_schedule_tables_and_json():
    schedule = Schedule(np.array([3, 1, 3]), np.array([1.0, 2.0, 0.5]), "x", ("a", "b"))
    assert schedule.makespan == 3.5
    assert schedule.time_per_combination() == {3: 1.5, 1: 2.0}
    frame = schedule.to_frame()
    assert frame["start"].tolist() == [0.0, 1.0, 3.0] and frame["combination"][0] == ("a", "b")
    assert schedule.to_json() == {
        "strategy": "x",
        "makespan": 3.5,
        "schedule": [
            {"combination": [0, 1], "time": 1.0},
            {"combination": [0], "time": 2.0},
            {"combination": [0, 1], "time": 0.5},
        ],
    }
