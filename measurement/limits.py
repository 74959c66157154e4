"""Size limits of the measurement commands: what one run may plan, wait for or start.

A value above a limit is refused with one error naming the limit (`cosched.inputs.Limit`), before
anything is built or started: the flags through `cosched.measurement.flags`, the sizes that
several flags make together (runs of a plan) where the plan is sized.
"""

from __future__ import annotations

from cosched.errors import InputError
from cosched.inputs import MAX_CORES_PER_NODE, MIN_SECONDS, Limit

__all__ = [
    "MAX_WAIT_SECONDS",
    "MIN_WAIT_SECONDS",
    "MAX_MEASURED_RUNS",
    "MAX_KERNEL_WORK",
    "MAX_RETRIES",
    "MAX_THREADS",
    "MAX_NOISE_SIGMA",
    "SEED_LIMIT",
    "check_size",
    "check_seed",
]

# the threading module's waits stop near 9.2e9 s (threading.TIMEOUT_MAX); 1e9 s is 31 years
MAX_WAIT_SECONDS = Limit(
    "MAX_WAIT_SECONDS", 1e9, "seconds of a measuring window, warm-up or time limit"
)
MIN_WAIT_SECONDS = MIN_SECONDS
MAX_MEASURED_RUNS = Limit(
    "MAX_MEASURED_RUNS", 100_000, "runs or combinations one measurement command plans"
)
# a compute unit takes 10-20 ms (kernels.COMPUTE_REPEATS): 1e9 units are months of work
MAX_KERNEL_WORK = Limit("MAX_KERNEL_WORK", 1_000_000_000, "work units of a bundled kernel")
MAX_RETRIES = Limit("MAX_RETRIES", 1_000, "retries of a failed run")
MAX_THREADS = MAX_CORES_PER_NODE  # threads of one task: more than one node's cores measure nothing
# execute's simulated noise: sigma**2 overflows near 1e154, and a σ of 100 already buries any speed
MAX_NOISE_SIGMA = Limit("MAX_NOISE_SIGMA", 100.0, "relative σ of execute's simulated noise")


SEED_LIMIT = 2**64  # seeds are whole numbers below this; numpy's generators refuse negatives


def check_seed(seed: int) -> None:
    """InputError naming --seed unless 0 <= `seed` < SEED_LIMIT."""
    if not 0 <= seed < SEED_LIMIT:
        raise InputError(f"must be from 0 to 2**64 - 1, got {seed}", field="--seed")


def check_size(value: int, limit: Limit, field: str, what: str) -> None:
    """InputError naming `field` when `value` (`what`, e.g. the runs a plan would hold, sized
    before it is built) is above `limit`."""
    if value > limit.value:
        raise InputError(f"{what}: {value:,}, above the limit {limit}", field=field)
