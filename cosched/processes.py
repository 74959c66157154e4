"""Child processes that never outlive the command, and termination signals that end it like Ctrl-C.

Every process a cosched command starts goes through this module:

- `die_with_parent(parent)`: asks Linux to SIGKILL the calling process when its parent dies
  (`prctl(PR_SET_PDEATHSIG, SIGKILL)`), then checks the parent is still the expected one (it may
  have died between the fork and the prctl). SIGKILL also ends a stopped (SIGSTOPped) process, so a
  task frozen by the co-run harness cannot survive it either. Called right after fork by the pool
  workers, the bundled kernels' forked workers and the co-run harness's tasks.
- `pool_results(fn, calls, workers)`: runs `fn(*args)` for every `args` of `calls` in local worker
  processes (forked; each dies with this process and ignores SIGINT/SIGTERM/SIGHUP, so the parent
  alone decides when work stops) and yields the results in completion order. When the consumer stops
  early, on an error or on Ctrl-C/SIGTERM, pending calls are cancelled and the workers are killed at
  once: no result is computed only to be thrown away.
- `termination_signals()`: while active, SIGINT, SIGTERM and SIGHUP raise `Interrupted` (a
  KeyboardInterrupt carrying the signal) in the main thread, so `finally` blocks run and the command
  exits with 128 + signal number: 130 for Ctrl-C, 143 for SIGTERM. The signals are also recorded, so
  a pool loop stops even when Python swallowed the exception (one raised inside fork's at-fork hooks
  is only printed).
- `signals_deferred()`: holds those signals back during a short section (forking the workers,
  writing a row, killing the workers) and delivers them when it ends.

PDEATHSIG fires when the *thread* that forked the child ends: create pools from the main thread (as
the CLI does) or from a thread that outlives them. On other systems than Linux `die_with_parent`
does nothing.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported on first use: every CLI command imports this module at start
    from concurrent.futures import ProcessPoolExecutor

__all__ = [
    "Interrupted",
    "die_with_parent",
    "process_pool",
    "pool_results",
    "kill_pool",
    "termination_signals",
    "interrupt_exit_code",
    "INTERRUPT_SIGNALS",
    "signals_deferred",
]

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
INTERRUPT_SIGNALS = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}
_LINUX = sys.platform.startswith("linux")
# loaded here, never in a freshly forked child
_libc = ctypes.CDLL(None, use_errno=True) if _LINUX else None
_received: list[int] = []  # signals seen by `termination_signals`, newest last
# how often a pool loop checks for a signal whose KeyboardInterrupt got swallowed
POLL_SECONDS = 0.25


class Interrupted(KeyboardInterrupt):
    """Ctrl-C's exception for SIGTERM/SIGHUP: handled wherever KeyboardInterrupt is, with the
    signal's exit code."""

    def __init__(self, signum: int):
        self.signum = int(signum)
        super().__init__(f"{signal.Signals(self.signum).name}")

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


def interrupt_exit_code(error: BaseException | None = None) -> int:
    """128 + the signal that interrupted (130 for Ctrl-C / a plain KeyboardInterrupt)."""
    return getattr(error, "exit_code", 128 + signal.SIGINT)


def die_with_parent(parent: int | None = None) -> None:
    """SIGKILL this process when its parent dies; if `parent` (its pid) is already gone, die now.

    Safe right after fork (also as a subprocess `preexec_fn`): one prctl call, no allocation of
    note.
    """
    if _libc is None:
        return
    if _libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) != 0:
        return  # not supported here (e.g. a sandbox): nothing more to do
    # the parent died before the prctl: reparented already
    if parent is not None and os.getppid() != parent:
        os.kill(os.getpid(), signal.SIGKILL)


def _worker_start(parent: int, initializer, initargs) -> None:
    die_with_parent(parent)
    # Ctrl-C reaches the whole foreground group: the parent decides, not the workers
    for sig in INTERRUPT_SIGNALS:
        signal.signal(sig, signal.SIG_IGN)
    if initializer is not None:
        initializer(*initargs)


def process_pool(
    workers: int, initializer: Callable | None = None, initargs: tuple = ()
) -> ProcessPoolExecutor:
    """A ProcessPoolExecutor whose forked workers die with this process and leave signals to it."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    # the parent of a forked worker is us
    context = multiprocessing.get_context("fork") if _LINUX else None
    return ProcessPoolExecutor(
        max_workers=workers,
        mp_context=context,
        initializer=_worker_start,
        initargs=(os.getpid(), initializer, initargs),
    )


def kill_pool(pool: ProcessPoolExecutor) -> None:
    """Cancel what has not started and SIGKILL the workers (their running calls are abandoned); a
    second Ctrl-C meanwhile acts once they are gone, so the executor's manager thread never outlives
    this (it would hold up the interpreter's exit waiting for abandoned calls).

    A worker killed while it sends a result leaves the manager thread reading the rest of it: a
    result over 16 KiB goes out as a length header, then the payload, and this process holds the
    result pipe's other write end, so the read never ends and the interpreter's exit (which joins
    that thread) hangs for ever. Closing that write end once the workers are dead turns the read
    into end-of-file; the thread then ends as for a broken pool."""
    with signals_deferred():
        processes = list((getattr(pool, "_processes", None) or {}).values())
        # shutdown() forgets both
        manager = getattr(pool, "_executor_manager_thread", None)
        results = getattr(pool, "_result_queue", None)
        pool.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            with contextlib.suppress(OSError, ValueError, AttributeError):
                process.kill()
        for process in processes:
            with contextlib.suppress(OSError, ValueError, AssertionError, AttributeError):
                process.join(2.0)
        with contextlib.suppress(OSError, AttributeError):
            results._writer.close()  # type: ignore[union-attr]
        if manager is not None and manager is not threading.current_thread():
            manager.join()  # quick once the workers are gone and the pipe is closed
        pool.shutdown(wait=True)


def pool_results(fn: Callable, calls: Iterable[tuple], workers: int) -> Iterator:
    """`fn(*args)` for each `args` in worker processes, yielded as they finish (see the module
    docstring).

    Close the generator (or let an exception pass through the loop) to stop: pending calls are
    cancelled and the workers killed. A worker crash is re-raised as the termination signal that
    caused it, if any.
    """
    from concurrent.futures import FIRST_COMPLETED, wait
    from concurrent.futures.process import BrokenProcessPool

    calls = list(calls)
    seen = len(_received)
    pool, finished = None, False
    try:
        # an interrupt raised in fork's at-fork hooks would be lost ("Exception ignored")
        with signals_deferred():
            pool = process_pool(min(workers, len(calls)) or 1)
            pending = {pool.submit(fn, *args) for args in calls}  # forks the workers
        while pending:
            done, pending = wait(pending, timeout=POLL_SECONDS, return_when=FIRST_COMPLETED)
            # a signal whose exception something swallowed: stop all the same
            if len(_received) > seen:
                raise Interrupted(_received[-1])
            for future in done:
                try:
                    result = future.result()
                except BrokenProcessPool:
                    if len(_received) > seen:  # workers killed by the same signal that is ending us
                        raise Interrupted(_received[-1]) from None
                    raise
                yield result
        finished = True
    finally:
        if pool is not None and finished:
            pool.shutdown(wait=True)
        elif pool is not None:
            kill_pool(pool)


def _raise_interrupted(signum, frame):
    _received.append(signum)
    raise Interrupted(signum)


@contextlib.contextmanager
def termination_signals(signals=(signal.SIGINT, signal.SIGTERM, signal.SIGHUP)):
    """While active, `signals` raise `Interrupted` in the main thread (elsewhere this does nothing);
    a SIGINT ignored by the caller (a background job of a script) stays ignored."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {}
    try:
        for sig in signals:
            # `nohup`, `cmd &` in a script: keep ignoring
            if signal.getsignal(sig) is not signal.SIG_IGN:
                previous[sig] = signal.signal(sig, _raise_interrupted)
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


@contextlib.contextmanager
def signals_deferred(signals: Iterable[signal.Signals] = INTERRUPT_SIGNALS) -> Iterator[None]:
    """Hold Ctrl-C / SIGTERM / SIGHUP back during a short section (a row being written): a signal
    that arrives meanwhile is re-raised, to the handler that was in place, when the section ends."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pending: list[int] = []
    previous = {}
    try:
        for sig in signals:
            if signal.getsignal(sig) is not signal.SIG_IGN:
                previous[sig] = signal.signal(sig, lambda signum, frame: pending.append(signum))
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        for signum in dict.fromkeys(pending):
            signal.raise_signal(signum)
