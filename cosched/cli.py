"""The `cosched` command: one subcommand per task, each registered by its package's `cli` module.

Every package keeps its own `cli.py` with `register(subparsers)`; this module only dispatches,
turns `InputError` into one line on stderr with exit code 2, and prints warnings as one line
`cosched CMD: warning: ...`. The shared option vocabulary is `cosched.cli_options`.
"""
from __future__ import annotations

import argparse
import importlib
import os
import sys
import warnings

from cosched import __version__
from cosched.errors import InputError
from cosched.processes import interrupt_exit_code, termination_signals

__all__ = ["main", "build_parser", "one_line_warnings"]

BROKEN_PIPE_EXIT = 141  # 128 + SIGPIPE, what a shell reports for a process killed by a closed pipe
COMMAND_MODULES = ("cosched.theory.cli", "cosched.strategies.cli", "cosched.strategies.worst_case_cli",
                   "cosched.simulator.cli", "cosched.simulator.co_cli", "cosched.simulator.bound_cli",
                   "cosched.simulator.elastic.cli", "cosched.simulator.elastic.experiment_cli",
                   "cosched.simulator.hybrid.cli", "cosched.measurement.cli", "cosched.measurement.execute_cli",
                   "cosched.measurement.heatmap_cli")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cosched", description="HPC co-scheduling research toolkit.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}",
                        help="print the cosched version and exit")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers.required = True
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as error:
            if error.name != name:
                raise
            continue
        module.register(subparsers)
    return parser


def one_line_warnings(command: str):
    """A `warnings.showwarning` that prints `cosched CMD: warning: MESSAGE` on one line, no source line."""
    def show(message, category, filename, lineno, file=None, line=None):
        text = " ".join(str(message).split())
        try:
            print(f"cosched {command}: warning: {text}", file=file if file is not None else sys.stderr)
        except OSError:  # stderr gone: a warning is not worth a crash
            pass
    return show


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    with warnings.catch_warnings():
        warnings.showwarning = one_line_warnings(args.command)
        return _dispatch(args)


def _dispatch(args) -> int:
    try:
        with termination_signals():  # SIGTERM/SIGHUP unwind like Ctrl-C (cosched.processes)
            return args.func(args) or 0
    except InputError as error:
        print(f"cosched {args.command}: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as error:  # 130 for Ctrl-C, 128 + signal for SIGTERM (143) / SIGHUP
        print(f"cosched {args.command}: interrupted", file=sys.stderr)
        return interrupt_exit_code(error)
    except BrokenPipeError:  # the reader went away (`cosched ... | head`): stop quietly, like shell tools
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit flush
        return BROKEN_PIPE_EXIT


if __name__ == "__main__":
    sys.exit(main())
