"""The one CLI vocabulary: options every `cosched` subcommand spells, defaults and documents the
same way.

`docs/cli-conventions.md` is the table of these flags. Old spellings stay accepted as hidden aliases
(`help=argparse.SUPPRESS`, left out of `--help`) and parse to the same `args` attribute as the new
flag.
This module sits below the areas: it imports none of them.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path

from cosched.deprecation import REMOVED_IN
from cosched.errors import InputError
from cosched.names import canonical, did_you_mean
from cosched.outputs import OutputOption

__all__ = [
    "SEED_DEFAULT",
    "PLOTS_ON",
    "LazyChoices",
    "NameList",
    "Parser",
    "add_alias",
    "deprecation",
    "add_parallel",
    "add_quiet",
    "add_seed",
    "add_json",
    "add_out",
    "mark_output",
    "only_with",
    "check_only_with",
    "add_plots",
    "add_name_list",
    "plots_target",
    "plots_folder",
    "one_name",
    "names_or",
    "announce",
    "notice",
    "choices_text",
    "positive",
    "did_you_mean",
    "time_unit",
    "finite",
    "speedup",
    "wanted_command",
    "VOCABULARY",
]

SEED_DEFAULT = 0  # the seed of every command that draws random numbers (docs/cli-conventions.md)
# value of `--plots` given without a location: plot into the command's default place
PLOTS_ON = True
SECONDS_PER_HOUR = 3600.0
SECONDS_PER_DAY = 86400.0
HOURS_FROM = 2 * SECONDS_PER_HOUR  # a duration of at least 2 h prints in hours ...
DAYS_FROM = 2 * SECONDS_PER_DAY  # ... and of at least 2 d in days


# The shared flags and what each means in every command that takes it (docs/cli-conventions.md
# renders this
# table with the commands, defaults and old spellings read from the parsers).
VOCABULARY = {
    "--quiet": (
        "print only errors and warnings: no text results (a document asked for with --json still "
        "prints), no progress bars, no notices on stderr"
    ),
    "--json": "print the result as JSON on stdout instead of text (times in seconds)",
    "--seed": (
        "seed of every random draw of the command; the same command line gives the same output"
    ),
    "--out": (
        "where the command writes: FILE for commands that write one file, DIR (created if "
        "missing) for commands that write several"
    ),
    "--plots": (
        "write the command's plots: into DIR/plots/ of the --out folder (a few commands also take"
        " --plots WHERE); off unless asked, so commands stay fast and matplotlib is not imported."
        " demo and heatmap, whose purpose is a picture, write theirs to a PNG"
    ),
    "--no-plots": "write no plots (the default of every command except demo)",
    "--force": (
        "start over in --out, removing what an earlier run of the command wrote there (by default"
        " the same run resumes and another one is refused)"
    ),
    "--workload": "bundled trace name, SWF file (.swf, .swf.gz) or CSV workload",
    "--platform": "platform preset name or JSON file",
    "--limit": "only the first N jobs of the workload (after cleaning)",
    "--scheduler": (
        "the thing that decides: scheduler or policy names from the command's registry; one for "
        "simulate and elastic, repeatable or comma-separated elsewhere"
    ),
    "--algorithm": "an ElastiSim algorithm file (FILE.py) loaded as it is",
    "--strategy": (
        "online strategy names (FCS, UCB, PI, EI); one for run, ratio, worst-case, execute"
    ),
    "--heatmap": "pairwise co-execution speedups: heatmap CSV or bundled preset name",
    "--mean-interarrival": "mean gap between submissions in seconds (constant, poisson, weibull)",
    "--workers": "local worker processes (default: all cores; 1 = in this process)",
    "--dask": "run on dask.distributed: 'local' (a LocalCluster) or a scheduler address tcp://host:port",
    "--work-range": "range LO HI of the work b_i of a random instance",
    "--task-work": "work b of one measured task in the instance, NAME=B",
    "--kernel-work": "work units of every bundled kernel that execute runs",
    "--project-monotone": "project a measured matrix onto monotone speeds",
    "--allow-nonmonotone": "accept an instance whose speeds break monotonicity or exceed 1",
    "--version": "print cosched VERSION and exit",
}


def time_unit(seconds) -> tuple[str, float]:
    """(unit, seconds per unit) that fits durations of this size: s below 2 h, h below 2 d, else d.

    `seconds` is one duration or several (a table column shares the unit of its largest value)."""
    values = [
        abs(float(v))
        for v in (seconds if isinstance(seconds, (list, tuple)) else [seconds])
        if v is not None and v == v
    ]
    largest = max(values, default=0.0)
    if largest >= DAYS_FROM:
        return "d", SECONDS_PER_DAY
    if largest >= HOURS_FROM:
        return "h", SECONDS_PER_HOUR
    return "s", 1.0


class Parser(argparse.ArgumentParser):
    """argparse with "did you mean" for a mistyped subcommand, choice or flag."""

    _subcommands: argparse._SubParsersAction | None = None  # set by cosched.cli.build_parser
    # set by cosched.cli.build_parser: flag -> the commands that take it
    _flag_owners: Callable[[str], list[str]] | None = None

    def _check_value(self, action, value):
        if action.choices is not None and value not in action.choices:
            known = list(action.choices)
            message = f"invalid choice: {value!r} (choose from {', '.join(map(repr, known))})"
            raise argparse.ArgumentError(action, message + did_you_mean(value, known))

    def parse_known_args(self, args=None, namespace=None):
        namespace, extras = super().parse_known_args(args, namespace)
        command = getattr(namespace, "command", None)
        subcommands = getattr(self, "_subcommands", None)
        sub = subcommands.choices.get(command) if subcommands is not None and command else None
        if extras and sub is not None:  # answered by the command, naming it
            flags = [extra.split("=")[0] for extra in extras if extra.startswith("--")]
            owners = getattr(self, "_flag_owners", None)
            hints = (flag_hint(flag, command, sub, owners) for flag in flags)
            hint = next((h for h in hints if h), "")
            sub.error(f"unrecognized arguments: {' '.join(extras)}{hint}")
        return namespace, extras


# a flag a user may type for another (a word of another tool) -> what this command calls it
FLAG_SYNONYMS = {"--jobs": ("--limit",), "--n-jobs": ("--limit",), "--max-jobs": ("--limit",)}


def wanted_command(subparsers, command: str) -> bool:
    """False when the parser is built for another command alone (`cosched.cli.build_parser`): a
    module that registers several commands then skips building the others' flags."""
    only = getattr(subparsers, "only_command", None)
    return only is None or only == command


def visible_flags(parser: argparse.ArgumentParser) -> list[str]:
    """The flags `--help` shows for `parser`."""
    return [
        flag
        for action in parser._actions
        if action.help != argparse.SUPPRESS
        for flag in action.option_strings
    ]


def flag_hint(flag: str, command: str, parser: argparse.ArgumentParser, owners=None) -> str:
    """`; did you mean '--x'?` for a flag `command` does not take: its own flag of that meaning or
    spelling, else the commands that take `flag` (`owners(flag)`, given by the dispatcher); ''
    when nothing fits."""
    flags = visible_flags(parser)
    synonym = next((other for other in FLAG_SYNONYMS.get(flag, ()) if other in flags), None)
    if synonym is not None:
        return f"; did you mean {synonym!r}?"
    close = did_you_mean(flag, flags)
    if close:
        return close
    taking = owners(flag) if owners is not None else []
    if not taking:
        return ""
    return f"; {flag} is a flag of {', '.join(taking)}, not of {command}"


# a co-location speedup beyond this is no measurement (and overflows the model's times)
MAX_SPEEDUP = 1e3


def speedup(text: str) -> float:
    """An argparse `type` for a speedup: a finite number in (0, MAX_SPEEDUP]."""
    value = finite(float)(text)
    if not 0 < value <= MAX_SPEEDUP:
        raise argparse.ArgumentTypeError(f"a speedup must be in (0, {MAX_SPEEDUP:g}], got {text!r}")
    return value


def finite(kind: type = float):
    """An argparse `type` that reads a finite number (no nan, inf or overflow to inf)."""

    def parse(text: str):
        try:
            value = kind(text)
        except (ValueError, OverflowError):
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if value != value or value in (float("inf"), float("-inf")):
            raise argparse.ArgumentTypeError(f"must be a finite number, got {text!r}")
        return value

    return parse


def positive(kind: type = float):
    """An argparse `type` that reads a number of `kind` and refuses zero and negatives with a clear
    message."""

    def parse(text: str):
        try:
            value = kind(text)
        except (ValueError, OverflowError):
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if value != value or value == float("inf"):
            raise argparse.ArgumentTypeError(f"must be a finite positive number, got {text!r}")
        if value <= 0:
            raise argparse.ArgumentTypeError(f"must be positive, got {text!r}")
        return value

    return parse


def choices_text(names: Sequence[str]) -> str:
    return ", ".join(names)


class LazyChoices(Sequence):
    """argparse `choices` read from a library constant on first use (a value to check, or `--help`),
    so building
    the parser does not import the library module. Give the option a `metavar`; `%(choices)s` in
    help lists them."""

    def __init__(self, module: str, attribute: str):
        self.module, self.attribute = module, attribute

    def _names(self) -> tuple:
        import importlib

        return tuple(getattr(importlib.import_module(self.module), self.attribute))

    def __getitem__(self, index):
        return self._names()[index]

    def __len__(self) -> int:
        return len(self._names())

    def __contains__(self, value) -> bool:
        return value in self._names()

    def __iter__(self):
        return iter(self._names())

    def __repr__(self) -> str:
        return repr(self._names())


def deprecation(old: str, new: str) -> str:
    """The one-line message of an old spelling."""
    return f"{old} is deprecated, use {new} (removed in {REMOVED_IN})"


def add_alias(
    parser: argparse.ArgumentParser, *flags: str, dest: str, new: str | None = None, **options
) -> argparse.Action:
    """An old spelling kept for one release: same `dest` as the new flag, hidden from `--help`;
    using it warns
    once (a FutureWarning, printed as `cosched CMD: warning: --old is deprecated, use --new (removed
    in 0.4.0)`).

    `new`: the spelling to name (default: the visible flag of the same `dest`). Its default is
    SUPPRESS, so the
    new flag's default is the only one (whichever was added first).
    """
    if new is None:
        new = next(
            (
                action.option_strings[0]
                for action in parser._actions
                if action.dest == dest
                and action.option_strings
                and action.help != argparse.SUPPRESS
            ),
            dest,
        )
    options.setdefault("default", argparse.SUPPRESS)
    action = parser.add_argument(*flags, dest=dest, help=argparse.SUPPRESS, **options)
    base = type(action)

    def __call__(self, parser, namespace, values, option_string=None):
        warnings.warn(deprecation(option_string or flags[0], new), FutureWarning, stacklevel=2)
        base.__call__(self, parser, namespace, values, option_string)

    # new_spelling is read by the docs' vocabulary table
    namespace = {"__call__": __call__, "new_spelling": new}
    action.__class__ = type(f"Deprecated{base.__name__}", (base,), namespace)
    return action


GIVEN = "only_with_given"  # the namespace attribute listing the `only_with` options used


def only_with(owner: argparse.Action, actions: Sequence[argparse.Action]) -> None:
    """Options that mean something only together with the option `owner` (`--hybrid`): a command
    line using one without `owner` is refused (`check_only_with`), never silently ignored."""
    owner_text = f"{owner.option_strings[0]} {owner.metavar or ''}".strip()
    for action in actions:
        base = type(action)

        def __call__(self, parser, namespace, values, option_string=None, base=base):
            base.__call__(self, parser, namespace, values, option_string)
            given = getattr(namespace, GIVEN, ())
            setattr(
                namespace, GIVEN, (*given, (option_string or self.dest, owner.dest, owner_text))
            )

        action.__class__ = type(f"OnlyWith{base.__name__}", (base,), {"__call__": __call__})
        action.only_with = owner  # type: ignore[attr-defined]


def check_only_with(args: argparse.Namespace) -> None:
    """InputError naming the first `only_with` option used without its owner."""
    for flag, owner, owner_text in getattr(args, GIVEN, ()):
        if not getattr(args, owner, None):
            raise InputError(
                f"applies only with {owner_text}; add it or leave out {flag}", field=flag
            )


def add_parallel(parser: argparse.ArgumentParser) -> None:
    """`--workers N` and `--dask local|ADDRESS`: where the cells of a grid command run."""
    parser.add_argument("--workers", type=int, metavar="N", help=VOCABULARY["--workers"])
    parser.add_argument("--dask", metavar="local|ADDRESS", help=VOCABULARY["--dask"])


def add_quiet(parser: argparse.ArgumentParser, *aliases: str) -> None:
    """`--quiet`: no progress bars and no notices on stderr; results, warnings and errors still
    print."""
    parser.add_argument(
        "--quiet",
        action="store_true",
        help="print only errors and warnings (no results unless --json, no progress bars, no "
        "notices)",
    )
    if aliases:
        add_alias(parser, *aliases, dest="quiet", action="store_true")


def add_seed(parser: argparse.ArgumentParser, what: str = "random seed") -> None:
    """`--seed N`, default SEED_DEFAULT everywhere: the same command line gives the same output."""
    parser.add_argument(
        "--seed",
        type=int,
        default=SEED_DEFAULT,
        metavar="N",
        help=f"{what} (default {SEED_DEFAULT})",
    )


def add_json(parser: argparse.ArgumentParser, what: str = "the result") -> None:
    parser.add_argument(
        "--json", action="store_true", help=f"print {what} as JSON on stdout instead of text"
    )


def add_out(
    parser: argparse.ArgumentParser,
    kind: str,
    what: str,
    *,
    required: bool = False,
    default: str | None = None,
    metavar: str | None = None,
    writes: Sequence[str] = (),
    csv_file: bool = False,
) -> None:
    """`--out`: the FILE where a command writes one file, the DIR where it writes several (`writes`:
    the entries it writes there; the run holds the folder for itself, `cosched.locks`)."""
    if kind not in ("file", "folder"):
        raise ValueError(f"kind is 'file' or 'folder', not {kind!r}")
    metavar = metavar or ("FILE" if kind == "file" else "DIR")
    text = f"output {'file' if kind == 'file' else 'folder'}: {what}"
    if default is not None:
        text += f" (default {default})"
    action = parser.add_argument(
        "--out", required=required, default=default, metavar=metavar, help=text
    )
    mark_output(action, kind, writes=writes, lock=kind == "folder" or csv_file, csv_file=csv_file)


def mark_output(action: argparse.Action, kind: str, **option) -> argparse.Action:
    """Mark an option as naming an output of `kind` (file, folder, plot): every run checks it with
    the others before reading an input (`cosched.outputs.check_run_outputs`)."""
    action.output = OutputOption(kind, **option)  # type: ignore[attr-defined]
    return action


def add_plots(
    parser: argparse.ArgumentParser,
    what: str,
    *,
    default_on: bool = False,
    metavar: str = "DIR",
    value_required: bool = False,
    aliases: Sequence[str] = (),
    where: bool = False,
    place: str = "into DIR/plots/ of --out",
) -> None:
    """`--plots [WHERE]` / `--no-plots` into one attribute `plots` (docs/cli-conventions.md, plots
    by one rule).

    None: the command's default: off, except for a command whose purpose is a picture (`default_on`,
    demo);
    True (`--plots` alone): on, into DIR/plots/ of the --out folder; a string (`where`: the command
    takes
    --plots WHERE): into that location; False: `--no-plots`. Where the command has no `--out`
    (heatmap),
    `value_required` makes `--plots` take the location. `place`: where `--plots` alone writes, as
    the help says it.
    """
    if value_required or default_on:
        text = f"write {what} (default {'on' if default_on else 'off'})"
    else:
        text = f"write {what} {place}" + (" or into WHERE" if where else "") + " (default off)"
        metavar = "WHERE" if where else metavar
    plots = parser.add_argument(
        "--plots",
        nargs=None if value_required else "?",
        const=None if value_required else PLOTS_ON,
        default=None,
        metavar=metavar,
        help=text,
    )
    # a location is a plot file where the plot is the command's picture, else a folder of plots
    mark_output(plots, "plot" if value_required or default_on else "folder")
    parser.add_argument(
        "--no-plots", dest="plots", action="store_const", const=False, help="write no plots"
    )
    if aliases:
        add_alias(parser, *aliases, dest="plots", metavar=metavar)


def plots_target(
    args, default: str | Path | None, *, fixed: bool = False, picture: bool = False
) -> Path | None:
    """Where the plots go, or None for none: no flag or `--no-plots` → None (plots are opt-in),
    `--plots WHERE` →
    WHERE, `--plots` → `default` (the command's DIR/plots/ beside its --out).

    fixed: the command can only plot into `default`; another location is bad input (exit 2, names
    --plots).
    picture: the plot is what the command is for (demo): no flag → `default`.
    """
    value = getattr(args, "plots", None)
    if value is False:
        return None
    if value is None:
        return Path(default) if picture and default is not None else None
    if value is PLOTS_ON:
        if default is None:
            raise InputError(
                "no place for the plots: give --plots DIR or --out DIR", field="--plots"
            )
        return Path(default)
    if fixed and (default is None or Path(value) != Path(default)):
        where = f"into {default}" if default is not None else "only beside --out"
        raise InputError(
            f"this command writes its plots {where}; give --plots without a location",
            field="--plots",
        )
    return Path(value)


def plots_folder(out: str | Path | None) -> Path | None:
    """DIR/plots/ of an --out folder (None without one)."""
    return None if out is None else Path(out) / "plots"


def _unused(value):  # pragma: no cover - keeps the tail of plots_target below unreachable-free

    return Path(value)


class NameList(argparse.Action):
    """A repeatable option taking comma lists: `--x a,b --x c` (and an alias's `--xs a b`) → ['a',
    'b', 'c']. A name in another case becomes the known spelling (`known`, set by `add_name_list`);
    an unknown name is left to the command, which names what it knows."""

    known: Sequence[str] = ()

    def __call__(self, parser, namespace, values, option_string=None):
        values = values if isinstance(values, list) else [values]
        names = [
            canonical(name.strip(), self.known)
            for value in values
            for name in str(value).split(",")
            if name.strip()
        ]
        current = getattr(namespace, self.dest, None)
        setattr(namespace, self.dest, (list(current) if current else []) + names)


def add_name_list(
    parser: argparse.ArgumentParser,
    flag: str,
    *,
    what: str,
    known: Sequence[str],
    default: str,
    alias: str | None = None,
    alias_nargs: str | None = None,
    metavar: str = "NAME",
    single: bool = False,
    dest: str | None = None,
) -> None:
    """`--strategy` / `--scheduler`: repeatable, comma lists; `alias` (the old plural) parses the
    same way.

    single: the command takes one name (the help says so; `one_name` refuses several)."""
    dest = dest or flag.lstrip("-").replace("-", "_")
    accepts = "one of" if single else "repeatable or comma-separated:"
    action = type("KnownNames", (NameList,), {"known": tuple(known)})
    parser.add_argument(
        flag,
        action=action,
        dest=dest,
        default=None,
        metavar=metavar,
        help=f"{what}, {accepts} {choices_text(known)} (default {default})",
    )
    if alias:
        add_alias(parser, alias, dest=dest, action=action, nargs=alias_nargs, metavar=metavar)


def names_or(args, dest: str, default: Sequence[str], flag: str) -> list[str]:
    """The names given to a NameList option, or `default`; an option given with no name is bad
    input."""
    names = getattr(args, dest, None)
    if names is None:
        return list(default)
    if not names:
        raise InputError("no name given", field=flag)
    return list(dict.fromkeys(names))


def one_name(args, dest: str, default: str, flag: str, reason: str) -> str:
    """The single name a one-run command takes from a NameList option; several are bad input
    (`reason` says so)."""
    names = names_or(args, dest, [default], flag)
    if len(names) > 1:
        raise InputError(f"{reason}, got {', '.join(names)}", field=flag)
    return names[0]


def notice(args, text: str) -> None:
    """One informational line on stderr, `cosched CMD: TEXT`, unless --quiet."""
    if not getattr(args, "quiet", False):
        command = getattr(args, "command", None)
        print(f"cosched {command}: {text}" if command else f"cosched: {text}", file=sys.stderr)


def announce(args, *paths) -> None:
    """Say where the outputs went (stderr, `cosched CMD: wrote ...`), unless --quiet."""
    written = [Path(path) for path in paths if path is not None]
    folders = {path.parent for path in written}
    if len(written) > 1 and len(folders) == 1:
        notice(args, f"wrote {folders.pop()}/: " + ", ".join(path.name for path in written))
    elif written:
        notice(args, "wrote " + ", ".join(map(str, written)))
