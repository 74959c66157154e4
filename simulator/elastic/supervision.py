"""`cosched elastic` with an algorithm file: the run in a child process, this one its supervisor.

An algorithm file is user code loaded into the run's process (001 §5.1, §5.5), and there it could
switch off what ends a run: ignore SIGINT, SIGTERM or SIGALRM, cancel alarms, start a thread that
keeps the process alive, replace `sys.stdout`, change directory. So the run (loading the file,
simulating, writing the outputs) happens in a forked child, and the command's own process only
supervises it; it never runs user code, so its signals and limits stay its own:

- the time limit: the child marks in shared memory when loading the file or one call of
  `schedule()` began and when it must end (`Watch`); past that moment the supervisor kills the child
  and stops the run with one line naming the limit (exit 2). Nothing the file does to signals,
  alarms or threads in the child changes it;
- Ctrl-C, SIGTERM, SIGHUP reach the supervisor, which asks the child to stop (SIGTERM: the child
  unwinds as the command does, removing what it had started to write), and kills it
  `GRACE_SECONDS` later if it has not; the command exits with 128 + the signal, as ever;
- standard output: the child writes the command's results (the summary, `--json`) through a pipe of
  their own, and everything else it writes, on any file descriptor 1 or 2 and from any thread (the
  file's prints, its subprocesses), reaches the supervisor's stderr;
- the end: when the child has reported its result it is ended, whatever threads the file left
  running; the processes it started are the command's to kill (`cosched.containment`).

Once the simulation is over the child puts back the command's handlers of Ctrl-C, SIGTERM and
SIGHUP and its signal mask (`Watch.restore`), so the file cannot keep the child from removing what
it had started to write either. The child runs the same
code on the same objects as a single process would, so the results are the same, and it costs one
fork and a few microseconds per call.
"""

from __future__ import annotations

import codecs
import contextlib
import marshal
import math
import mmap
import os
import select
import signal
import struct
import sys
import time
import traceback
import warnings
from collections.abc import Callable
from typing import TextIO

from cosched.errors import InputError
from cosched.processes import Interrupted, die_with_parent, interrupt_exit_code, signals_deferred

__all__ = ["Watch", "supervised", "current_watch", "GRACE_SECONDS"]

GRACE_SECONDS = 1.0  # after Ctrl-C or SIGTERM, how long the child may take to stop before SIGKILL
_IDLE_SECONDS = 0.05  # how often the supervisor looks before the child has set the time limit
_WAIT_SECONDS = 3600.0  # the longest single wait (an infinite limit waits in pieces)
_READ_BYTES = 1 << 16
_EXIT = os._exit  # the child's own way out (an algorithm's os._exit is refused)
_IDLE, _LOADING, _CALLING = 0, 1, 2  # what the child is doing (`Watch`)
_RESTORED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)  # put back after each call


class Watch:
    """Shared memory between the run's child (which writes it around loading the file and each
    call of `schedule()`) and the supervisor (which reads it): the deadline of what runs now, the
    time limit, the simulated time and invocation of the call, and the algorithm's name."""

    _STATE = struct.Struct("<dddii")  # deadline (monotonic s, 0: none), limit, time, phase, kind
    _NAME_AT, _SIZE = 64, 4096

    def __init__(self) -> None:
        self._memory = mmap.mmap(-1, self._SIZE)  # anonymous and shared: the child writes here
        self._STATE.pack_into(self._memory, 0, 0.0, -1.0, 0.0, _IDLE, 0)  # limit -1: not set yet
        self._limit = 0.0
        self._handlers: dict = {}
        self._mask: set = set()

    # --- the child's side -------------------------------------------------------------------------
    def configure(self, time_limit: float, name: str) -> None:
        """Set the limit (0 or inf: none) and the name errors use; the handlers and signal mask in
        place now are the ones put back after each call (main thread only)."""
        self._limit = time_limit if 0 < time_limit < math.inf else 0.0
        self.name(name)
        self._STATE.pack_into(self._memory, 0, 0.0, time_limit, 0.0, _IDLE, 0)
        self._handlers = {number: signal.getsignal(number) for number in _RESTORED}
        self._mask = signal.pthread_sigmask(signal.SIG_BLOCK, ())

    def name(self, name: str) -> None:
        data = name.encode("utf-8", "replace")[: self._SIZE - self._NAME_AT - 2]
        self._memory[self._NAME_AT : self._NAME_AT + len(data) + 2] = (
            len(data).to_bytes(2, "little") + data
        )

    def begin(self, system: dict | None = None) -> None:
        """Loading the file (`system` None) or one call of schedule() begins now."""
        deadline = time.monotonic() + self._limit if self._limit else 0.0
        if system is None:
            self._STATE.pack_into(self._memory, 0, deadline, self._limit, 0.0, _LOADING, 0)
            return
        kind = getattr(system.get("invocation_type"), "value", -1)
        moment = system.get("time", 0.0)
        self._STATE.pack_into(
            self._memory, 0, deadline, self._limit, float(moment), _CALLING, int(kind)
        )

    def end(self) -> None:
        """Loading or the call has ended."""
        self._STATE.pack_into(self._memory, 0, 0.0, self._limit, 0.0, _IDLE, 0)

    def restore(self) -> None:
        """The algorithm will not be called again: the command's handlers of Ctrl-C, SIGTERM and
        SIGHUP and its signal mask are put back (main thread), so the child removes what it was
        writing when it is stopped."""
        for number, handler in self._handlers.items():
            if signal.getsignal(number) is not handler:
                signal.signal(number, handler)
        if signal.pthread_sigmask(signal.SIG_BLOCK, ()) != self._mask:
            signal.pthread_sigmask(signal.SIG_SETMASK, self._mask)

    # --- the supervisor's side --------------------------------------------------------------------
    def state(self) -> tuple[float, float, float, int, int]:
        """(deadline, limit, time, phase, invocation), read whole (never half of a write)."""
        while True:
            first = self._memory[: self._STATE.size]
            if self._memory[: self._STATE.size] == first:
                return self._STATE.unpack(first)

    def named(self) -> str:
        size = int.from_bytes(self._memory[self._NAME_AT : self._NAME_AT + 2], "little")
        return self._memory[self._NAME_AT + 2 : self._NAME_AT + 2 + size].decode("utf-8", "replace")

    def seconds_to_wait(self) -> float:
        """How long the supervisor may sleep before anything can pass its deadline."""
        deadline, limit, _, phase, _ = self.state()
        if phase != _IDLE and deadline > 0:
            # capped: select() overflows on a huge deadline (--algorithm-time-limit 1e308)
            return min(max(deadline - time.monotonic(), 0.0), _WAIT_SECONDS)
        if limit < 0:
            return _IDLE_SECONDS
        return min(limit, _WAIT_SECONDS) if 0 < limit < math.inf else _WAIT_SECONDS

    def overdue(self) -> InputError | None:
        """The error that stops the run if what runs now has passed its deadline, else None."""
        deadline, limit, moment, phase, kind = self.state()
        if phase == _IDLE or deadline <= 0 or time.monotonic() < deadline:
            return None
        if phase == _LOADING:
            return InputError(
                f"loading the algorithm took longer than the time limit of {limit:g} s (raise it "
                f"with --algorithm-time-limit)",
                source=self.named(),
            )
        from cosched.simulator.elastic.compat import (
            AlgorithmMistake,
            InvocationType,
            mistake_text,
        )

        system = {"time": moment, "invocation_type": _member(InvocationType, kind)}
        return AlgorithmMistake(
            mistake_text(
                f"one call of schedule() ran longer than the time limit of {limit:g} s (raise "
                f"it with --algorithm-time-limit)",
                system,
            ),
            source=self.named(),
        )

    def ended_early(self, how: str) -> InputError:
        """The error for a child that died without a result (killed, crashed, its own exit)."""
        _, _, moment, phase, kind = self.state()
        name = self.named() or None
        if phase == _LOADING:
            return InputError(f"loading the algorithm ended the run's process ({how})", source=name)
        if phase == _CALLING:
            from cosched.simulator.elastic.compat import (
                AlgorithmMistake,
                InvocationType,
                mistake_text,
            )

            system = {"time": moment, "invocation_type": _member(InvocationType, kind)}
            return AlgorithmMistake(
                mistake_text(f"schedule() ended the run's process ({how})", system), source=name
            )
        return InputError(f"the run's process ended without a result ({how})", source=name)


def _member(kind, value: int):
    try:
        return kind(value)
    except ValueError:
        return value


_CURRENT: list[Watch] = []  # the child's watch (set in the child only)


def current_watch() -> Watch | None:
    """In the run's child process, its `Watch`; elsewhere None (no time limit is kept)."""
    return _CURRENT[0] if _CURRENT else None


def supervised(work: Callable[[TextIO], int]) -> int:
    """`work(out)` in a forked child, `out` being where the command's results go; its exit code.
    An `InputError` or an interrupt in the child is raised here again (the CLI reports it); the
    child is killed whatever ends this (see the module docstring)."""
    watch = Watch()
    result_read, result_write = os.pipe()
    out_read, out_write = os.pipe()
    err_read, err_write = os.pipe()
    for stream in (sys.stdout, sys.stderr):  # nothing buffered is written twice
        with contextlib.suppress(Exception):
            stream.flush()
    parent = os.getpid()
    with signals_deferred():
        try:
            pid = os.fork()
        except OSError as error:  # no process to spare (EAGAIN, ENOMEM)
            pid, refused = -1, error
        if pid == 0:
            for fd in (result_read, out_read, err_read):
                os.close(fd)
            _child(work, watch, parent, result_write, out_write, err_write)
    if pid < 0:  # the run in this process
        for fd in (result_read, result_write, out_read, out_write, err_read, err_write):
            os.close(fd)
        warnings.warn(
            f"could not start the run's own process ({refused.strerror}): the algorithm file "
            f"runs in this one, without --algorithm-time-limit",
            stacklevel=2,
        )
        return work(sys.stdout)
    for fd in (result_write, out_write, err_write):
        os.close(fd)
    supervisor = _Supervisor(pid, watch, result_read, out_read, err_read)
    try:
        result = supervisor.wait()
    except BaseException:
        supervisor.stop()
        raise
    finally:
        supervisor.close()
    return _outcome(result)


def _outcome(result: tuple) -> int:
    """The child's result as this process's: an exit code, or the exception to raise."""
    kind = result[0]
    if kind == "ok":
        return int(result[1])
    if kind == "error":
        _, message, source, field, line = result
        raise InputError(message, source=source, field=field, line=line)
    if kind == "interrupted":
        raise Interrupted(int(result[1]) - 128)
    return 1  # a crash: its traceback is on stderr


class _Supervisor:
    """The parent's side: copy the child's output, watch its deadline, get its result."""

    def __init__(self, pid: int, watch: Watch, result: int, out: int, err: int):
        self.pid: int | None = pid
        self.watch, self.result = watch, result
        self.streams = {out: sys.stdout, err: sys.stderr}
        self.decoders = {
            fd: codecs.getincrementaldecoder("utf-8")(errors="replace") for fd in self.streams
        }
        for fd in self.streams:
            os.set_blocking(fd, False)

    def wait(self) -> tuple:
        received = b""
        while True:
            watched = [self.result, *self.streams]
            ready = select.select(watched, [], [], self.watch.seconds_to_wait())[0]
            for fd in ready:
                if fd in self.streams:
                    self.copy(fd)
            if self.result in ready:
                data = os.read(self.result, _READ_BYTES)
                received += data
                if not data:  # the child has ended: its result is whole, or it never came
                    return self.finish(received)
                continue
            error = self.watch.overdue()
            if error is not None:
                self.kill()
                raise error

    def finish(self, received: bytes) -> tuple:
        for fd in list(self.streams):  # what the child wrote before its result
            self.copy(fd)
        how = self.reap()
        try:
            result = marshal.loads(received)
        except (EOFError, ValueError, TypeError):
            result = None
        if type(result) is not tuple or not result:
            raise self.watch.ended_early(how)
        return result

    def copy(self, fd: int) -> None:
        """What the child wrote on `fd` so far, to this process's stdout or stderr."""
        while True:
            try:
                data = os.read(fd, _READ_BYTES)
            except BlockingIOError:
                return
            stream = self.streams[fd]
            text = self.decoders[fd].decode(data, final=not data)
            if text:
                stream.write(text)
                stream.flush()
            if not data:
                del self.streams[fd]
                os.close(fd)
                return

    def reap(self) -> str:
        """Wait for the child (it has ended or been killed); how it ended."""
        if self.pid is None:
            return "killed"
        _, status = os.waitpid(self.pid, 0)
        self.pid = None
        code = os.waitstatus_to_exitcode(status)
        if code >= 0:
            return f"exit code {code}"
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"

    def kill(self) -> None:
        if self.pid is not None:
            os.kill(self.pid, signal.SIGKILL)
            self.reap()

    def stop(self) -> None:
        """Ask the child to stop as the command stops on SIGTERM (it removes what it was writing);
        kill it GRACE_SECONDS later if it has not."""
        pid = self.pid
        if pid is None:
            return
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + GRACE_SECONDS
        while time.monotonic() < deadline:
            with contextlib.suppress(ChildProcessError):
                if os.waitpid(pid, os.WNOHANG)[0]:
                    self.pid = None
                    return
            time.sleep(0.01)
        self.kill()

    def close(self) -> None:
        self.kill()
        for fd in (self.result, *self.streams):
            with contextlib.suppress(OSError):
                os.close(fd)


def _child(
    work: Callable[[TextIO], int], watch: Watch, parent: int, result: int, out: int, err: int
) -> None:
    """The forked child: run `work`, report its result, leave without unwinding the caller."""
    reply: tuple = ("crash",)
    try:
        die_with_parent(parent)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(err, 1)  # whatever the run writes is not the command's result, unless sent to out
        os.dup2(err, 2)
        for fd in (null, err):
            os.close(fd)
        results = open(out, "w", encoding="utf-8", closefd=True)  # noqa: SIM115 - for the process
        sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115
        sys.stdout = open(1, "w", buffering=1, encoding="utf-8", closefd=False)  # noqa: SIM115
        sys.stderr = open(  # noqa: SIM115
            2, "w", buffering=1, encoding="utf-8", errors="backslashreplace", closefd=False
        )
        _CURRENT.append(watch)
        from cosched.simulator.elastic.compat import refusing_os_exit

        with refusing_os_exit():
            try:
                reply = ("ok", work(results))
            except InputError as error:
                reply = ("error", error.message, error.source, error.field, error.line)
            except KeyboardInterrupt as error:
                reply = ("interrupted", interrupt_exit_code(error))
            except BaseException:  # noqa: BLE001 - a crash: its traceback, then the result
                traceback.print_exc()
        with contextlib.suppress(Exception):
            results.flush()
    except BaseException:  # noqa: BLE001 - never unwind into the caller
        with contextlib.suppress(Exception):
            traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        with contextlib.suppress(Exception):
            data = marshal.dumps(tuple(_plain(item) for item in reply))
            view = memoryview(data)
            while view:
                view = view[os.write(result, view) :]
        _EXIT(0)


def _plain(item):
    """A field of the result as marshal sends it (an error's source may be a Path)."""
    return item if item is None or type(item) in (int, str) else str(item)
