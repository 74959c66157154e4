"""Bundled kernels so the co-run harness runs anywhere: compute-, memory-bandwidth- and cache-bound
loops.

`python -m cosched.measurement.kernels NAME (--seconds S | --work N) [--threads T]`. Each of the T
workers is a process of the same process group (the parent is worker 0), so the harness stops and
measures all of them together; the forked workers die with worker 0 (PR_SET_PDEATHSIG(SIGKILL), even
while stopped), and worker 0 started by the harness dies with the harness, so killing either never
leaves a worker behind. With `--work N` every worker performs exactly N work units, the same
instruction count in any co-run (what the Table 2 validation of 002 §7 needs); with `--seconds S`
the workers stop after S seconds of wall time.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from cosched.processes import die_with_parent

__all__ = ["KERNELS", "run_kernel", "COMPUTE_ELEMENTS", "MEMORY_BYTES", "CACHE_BYTES"]

COMPUTE_ELEMENTS = 2048  # 16 KiB of float64: stays in L1, so the kernel is bound by arithmetic
# 64 MiB streamed per unit: larger than the last-level caches of common nodes
MEMORY_BYTES = 64 << 20
# 4 MiB table probed at random: fits a private L2/shared L3 alone, suffers from co-runners
CACHE_BYTES = 4 << 20
COMPUTE_REPEATS = 400  # inner repetitions per compute unit (about 10-20 ms)
CACHE_PROBES = 1 << 18  # random probes per cache unit


def _compute(np):
    x = np.linspace(0.1, 1.0, COMPUTE_ELEMENTS)
    y = np.empty_like(x)

    def unit():
        for _ in range(COMPUTE_REPEATS):
            np.sin(x, out=y)
            np.multiply(y, 1.0000001, out=y)
            np.sqrt(np.abs(y, out=y), out=y)

    return unit


def _memory(np):
    a = np.ones(MEMORY_BYTES // 8)

    def unit():
        np.add(a, 1.0, out=a)

    return unit


def _cache(np):
    rng = np.random.default_rng(0)
    table = rng.random(CACHE_BYTES // 8)
    index = rng.integers(0, table.size, CACHE_PROBES)
    out = np.empty(CACHE_PROBES)

    def unit():
        np.take(table, index, out=out)
        index[:] = (index + 7919) % table.size

    return unit


KERNELS = {"compute": _compute, "memory": _memory, "cache": _cache}


def run_kernel(name: str, *, work: int | None = None, seconds: float | None = None) -> int:
    """Run one worker of kernel `name` for `work` units or until `seconds` have passed; returns
    units done."""
    import numpy as np

    unit = KERNELS[name](np)
    deadline = None if seconds is None else time.monotonic() + seconds
    done = 0
    while (work is None or done < work) and (deadline is None or time.monotonic() < deadline):
        unit()
        done += 1
    return done


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m cosched.measurement.kernels",
        description=" ".join(__doc__.split("\n\n")[0].split()),
    )
    parser.add_argument("name", choices=sorted(KERNELS))
    amount = parser.add_mutually_exclusive_group()
    amount.add_argument(
        "--seconds", type=float, help="run for this many seconds of wall time (default 10)"
    )
    amount.add_argument("--work", type=int, help="perform exactly this many work units per worker")
    parser.add_argument("--threads", type=int, default=1, help="worker processes (default 1)")
    args = parser.parse_args(argv)
    if (
        args.threads < 1
        or (args.work is not None and args.work < 1)
        or (args.seconds is not None and args.seconds <= 0)
    ):
        parser.error("--threads, --work and --seconds must be positive")
    seconds = 10.0 if args.work is None and args.seconds is None else args.seconds
    for variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[variable] = "1"
    children = []
    parent = os.getpid()
    for _ in range(args.threads - 1):
        pid = os.fork()
        if pid == 0:
            try:
                die_with_parent(parent)
                run_kernel(args.name, work=args.work, seconds=seconds)
            finally:
                os._exit(0)
        children.append(pid)
    run_kernel(args.name, work=args.work, seconds=seconds)
    failed = sum(os.waitpid(pid, 0)[1] != 0 for pid in children)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
