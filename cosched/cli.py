"""The `cosched` command: one subcommand per task, each registered by its package's `cli` module.

Every package keeps its own `cli.py` with `register(subparsers)`; this module only dispatches,
turns `InputError` into one line on stderr with exit code 2, and prints warnings as one line
`cosched CMD: warning: ...`. The shared option vocabulary is `cosched.cli_options`.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
import warnings
from typing import TYPE_CHECKING

from cosched import __version__
from cosched.collector import rare_collections
from cosched.errors import InputError

if TYPE_CHECKING:
    import argparse

    from cosched.cli_options import Parser

__all__ = ["main", "build_parser", "one_line_warnings"]

BROKEN_PIPE_EXIT = 141  # 128 + SIGPIPE, what a shell reports for a process killed by a closed pipe

# which module registers which commands (tests/cli/test_fast_start.py checks it against the
# modules): a command line naming one builds that module's parser alone, so a command does not
# import every other area (fast start)
COMMAND_OWNERS = {
    "cosched.theory.cli": ("generate", "opt"),
    "cosched.strategies.cli": ("run", "ratio", "demo", "experiment"),
    "cosched.strategies.worst_case_cli": ("worst-case",),
    "cosched.simulator.cli": ("simulate", "compare"),
    "cosched.simulator.co_cli": ("heatmap", "generate-workload", "experiment-sim"),
    "cosched.simulator.bound_cli": ("bound",),
    "cosched.simulator.elastic.cli": ("elastic",),
    "cosched.simulator.elastic.experiment_cli": ("experiment-elastic",),
    "cosched.simulator.hybrid.cli": ("hybrid-workload", "experiment-hybrid"),
    "cosched.measurement.cli": ("measure", "measure-validate", "measure-speeds"),
    "cosched.measurement.execute_cli": ("execute",),
    "cosched.measurement.heatmap_cli": ("measure-heatmap",),
}
COMMAND_MODULES = tuple(COMMAND_OWNERS)  # every module that registers commands, in help order
# commands that do no linear algebra: numpy's OpenBLAS gets one thread (unless the user sets
# OPENBLAS_NUM_THREADS), not a pool whose idle workers spin for about 0.1 s of CPU after numpy is
# imported (measured on `cosched elastic example`: 0.96 s of CPU with the pool, 0.86 s without,
# the same wall time; `cosched simulate` on SDSC-SP2: about 0.06 s of CPU less)
SERIAL_BLAS_COMMANDS = ("elastic", "simulate", "compare")
# commands that, run as a program, compute their results and end (measured on `cosched simulate`
# on SDSC-SP2, docs/benchmarks.md): the whole process runs under `rare_collections` from before
# it imports the option vocabulary, the output helpers (this module imports them on use), numpy
# and the simulator (the passes at CPython's rate took about 0.05 of 1 CPU second; during those
# imports alone, about 50 passes), and it ends without freeing its objects one by one
# (`_end_process`: the interpreter's teardown took about 0.1 s)
BATCH_COMMANDS = ("simulate", "compare")
# the one-line summary of every command, for `cosched --help` without importing any area (it starts
# in well under 0.3 s); tests/cli/test_fast_start.py checks it against the summaries the areas
# register
SUMMARIES = {
    "generate": "write a random instance (002 §8) or the FCS worst case (002 Example 1)",
    "opt": "optimal makespan by LP (002 §4.1)",
    "run": "run an online strategy on an instance",
    "ratio": "competitive ratio of a strategy against OPT",
    "demo": "random paper-style instance: OPT vs FCS table and a Fig. 1-style plot",
    "experiment": "competitive ratios of FCS/UCB/PI/EI over a grid of random instances (002 §8)",
    "worst-case": "search instances for the largest competitive ratio of a strategy (002 §4.3)",
    "simulate": "simulate a workload on a cluster under one scheduler",
    "compare": "run several schedulers on the same workload and print a metrics table",
    "heatmap": "inspect a co-execution heatmap CSV (thesis Table 4.1 layout), plot it",
    "generate-workload": (
        "draw N jobs from an application seed (heatmap or seed JSON) into a CSV workload"
    ),
    "experiment-sim": "thesis-style grid: schedulers x workloads, tables and plots",
    "bound": "lower bound on the makespan of any schedule or co-schedule of a workload",
    "elastic": (
        "run an ElastiSim configuration (rigid, moldable, malleable, evolving, adaptive jobs)"
    ),
    "experiment-elastic": (
        "the six rigid and malleable policies of ElastiSim's study on a real trace"
    ),
    "hybrid-workload": "type a trace's jobs on-demand / rigid / malleable into an editable CSV",
    "experiment-hybrid": (
        "Fan et al.'s hybrid grid: 7 configurations x seeded typings, tables and plots"
    ),
    "measure": "measure the speed matrix of tasks by co-running them (SIGSTOP/SIGCONT)",
    "measure-validate": (
        "Table 2 of 002: speed ratio vs completion-time ratio of the bundled kernels"
    ),
    "measure-speeds": "speeds (formula (30)) from recorded counter samples (CSV, JSON or Parquet)",
    "execute": "run an online strategy on live processes of this node and measure its real ratio",
    "measure-heatmap": (
        "measure the pairwise co-location heatmap of applications on a cluster's nodes"
    ),
}


def _top_parser() -> tuple[Parser, argparse._SubParsersAction]:
    """`cosched` with `--version` and an empty, required command slot."""
    from cosched.cli_options import Parser

    parser = Parser(prog="cosched", description="HPC co-scheduling research toolkit.")
    parser.add_argument(
        "--version",
        action="version",
        version=f"%(prog)s {__version__}",
        help="print the cosched version and exit",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers.required = True
    return parser, subparsers


def summary_parser() -> argparse.ArgumentParser:
    """The top-level parser with every command's name and summary but none of their flags:
    `cosched --help`, `cosched --version` and a bare `cosched` need nothing more, and import no
    area."""
    parser, subparsers = _top_parser()
    for name, summary in SUMMARIES.items():
        subparsers.add_parser(name, help=summary)
    return parser


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The `cosched` parser: every command, or (`command` a known command name) only that command,
    registered by its module, so `cosched simulate ...` starts without importing the measurement or
    strategy areas, nor building `compare`'s flags."""
    owners = tuple(module for module, names in COMMAND_OWNERS.items() if command in names)
    parser, subparsers = _top_parser()
    # a module that registers several commands builds this one's flags alone (`wanted_command`)
    subparsers.only_command = command if owners else None  # type: ignore[attr-defined]
    parser._subcommands = subparsers  # for "did you mean" on an unknown flag of a subcommand
    modules = owners or COMMAND_MODULES
    parser._flag_owners = flag_owners
    for name in modules:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as error:
            if error.name != name:
                raise
            continue
        module.register(subparsers)
    return parser


def flag_owners(flag: str) -> list[str]:
    """The commands whose --help shows `flag` (the error path of an unknown flag: builds every
    command's parser)."""
    from cosched.cli_options import visible_flags

    commands = build_parser()._subcommands.choices  # type: ignore[attr-defined]
    return [name for name, sub in commands.items() if flag in visible_flags(sub)]


def one_line_warnings(command: str):
    """A `warnings.showwarning` that prints `cosched CMD: warning: MESSAGE` on one line, no source
    line."""

    def show(message, category, filename, lineno, file=None, line=None):
        text = " ".join(str(message).split())
        with contextlib.suppress(OSError):  # stderr gone: a warning is not worth a crash
            print(
                f"cosched {command}: warning: {text}", file=file if file is not None else sys.stderr
            )

    return show


def main(argv: list[str] | None = None) -> int:
    command = _command_of(argv)
    # the command line of this process (not a call from Python): the process ends with the command;
    # a batch command's collections are rare from here on, before its parse imports its modules
    batch = argv is None and command in BATCH_COMMANDS
    with rare_collections(whole_process=True) if batch else contextlib.nullcontext():
        code = _parsed_and_run(argv, command)
    if batch:
        _end_process(code)
    return code


def _parsed_and_run(argv: list[str] | None, command: str | None) -> int:
    with warnings.catch_warnings(
        record=True
    ) as parsing:  # deprecated spellings, shown once the command is known
        warnings.simplefilter("always", FutureWarning)
        if command in SERIAL_BLAS_COMMANDS:
            os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy is imported
        parser = summary_parser() if command is None else build_parser(command)
        args = parser.parse_args(argv)
    args.whole_process = argv is None
    with warnings.catch_warnings():
        warnings.showwarning = one_line_warnings(args.command)
        for warning in parsing:
            warnings.showwarning(
                warning.message, warning.category, warning.filename, warning.lineno
            )
        subcommands = getattr(parser, "_subcommands", None)
        command_parser = subcommands.choices[args.command] if subcommands is not None else parser
        if getattr(args, "quiet", False) and not getattr(args, "json", False):
            # --quiet: only errors and warnings (stderr); --json still prints its document
            return _quietly(args, command_parser)
        return _dispatch(args, command_parser)


def _end_process(code: int) -> None:
    """End the process with `code` as `sys.exit` would (exit handlers run, output flushed), but
    without the interpreter's teardown, which frees every object and module one by one; returns
    (and the usual exit follows) while a thread the usual exit waits for runs (a daemon thread,
    such as the progress bar's monitor, is left by either exit)."""
    threading = sys.modules.get("threading")
    if threading is not None and any(
        not thread.daemon
        for thread in threading.enumerate()
        if thread is not threading.main_thread()
    ):
        return
    import atexit

    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe or stream: nothing to flush
            stream.flush()
    os._exit(code)


def _command_of(argv: list[str] | None) -> str | None:
    """The command a command line names (its first word), or None (`--help`, `--version`)."""
    words = sys.argv[1:] if argv is None else argv
    return words[0] if words and not words[0].startswith("-") else None


def _quietly(args, command_parser: argparse.ArgumentParser) -> int:
    """Run the command with its text results (stdout) discarded."""
    import contextlib

    with open(os.devnull, "w") as devnull, contextlib.redirect_stdout(devnull):
        return _dispatch(args, command_parser)


def _dispatch(args, command_parser: argparse.ArgumentParser) -> int:
    """Run the command: its output paths checked and held first (`cosched.outputs`), errors as one
    line."""
    from cosched.cli_options import check_only_with
    from cosched.outputs import claimed_outputs
    from cosched.processes import interrupt_exit_code, termination_signals

    try:
        check_only_with(args)
        # SIGTERM/SIGHUP unwind like Ctrl-C (cosched.processes)
        with termination_signals(), claimed_outputs(command_parser, args):
            return args.func(args) or 0
    except InputError as error:
        print(f"cosched {args.command}: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as error:  # 130 for Ctrl-C, 128 + signal for SIGTERM (143) / SIGHUP
        print(f"cosched {args.command}: interrupted", file=sys.stderr)
        return interrupt_exit_code(error)
    # the reader went away (`cosched ... | head`): stop quietly, like shell tools
    except BrokenPipeError:
        # no second error at exit flush
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return BROKEN_PIPE_EXIT


if __name__ == "__main__":
    sys.exit(main())
