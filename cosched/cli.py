"""The `cosched` command: one subcommand per task, each registered by its package's `cli` module.

Every package keeps its own `cli.py` with `register(subparsers)`; this module only dispatches
and turns `InputError` into one line on stderr with exit code 2.
"""
from __future__ import annotations

import argparse
import importlib
import os
import sys

from cosched.errors import InputError

__all__ = ["main", "build_parser"]

BROKEN_PIPE_EXIT = 141  # 128 + SIGPIPE, what a shell reports for a process killed by a closed pipe
COMMAND_MODULES = ("cosched.theory.cli", "cosched.strategies.cli", "cosched.simulator.cli", "cosched.simulator.co_cli", "cosched.measurement.cli")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cosched", description="HPC co-scheduling research toolkit.")
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


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args) or 0
    except InputError as error:
        print(f"cosched {args.command}: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"cosched {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (`cosched ... | head`): stop quietly, like shell tools
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit flush
        return BROKEN_PIPE_EXIT


if __name__ == "__main__":
    sys.exit(main())
