"""`cosched run | ratio | demo`: online strategies on an instance, alone, against OPT, or in the
paper's demo."""

from __future__ import annotations

import json
import sys

from cosched.cli_options import (
    LazyChoices,
    add_json,
    add_name_list,
    add_out,
    add_plots,
    add_quiet,
    add_seed,
    announce,
    one_name,
    plots_target,
)
from cosched.errors import InputError
from cosched.strategies.fcs import TIE_BREAKS
from cosched.strategies.interpolation import LOWER_ANCHORS, RULES, SEARCH_TIE_BREAKS
from cosched.strategies.noise import NOISE_MODELS
from cosched.strategies.registry import STRATEGIES
from cosched.theory.cli import (
    add_instance_arguments,
    instance_from_args,
    opt_for_file,
    with_task_names,
)

# read on use: search imports scipy
INCUMBENTS = LazyChoices("cosched.strategies.search", "INCUMBENTS")

__all__ = [
    "register",
    "add_strategy_arguments",
    "add_reading_arguments",
    "strategy_from_args",
    "strategy_name",
]


def add_strategy_arguments(parser) -> None:
    """Strategy name and the options of the registered strategies (each takes the ones it knows)."""
    add_name_list(
        parser,
        "--strategy",
        what="the strategy (or a plug-in: FILE.py:Class, or an entry point of cosched.strategies)",
        known=tuple(STRATEGIES),
        default="fcs",
        single=True,
        alias="--strategies",
        alias_nargs="+",
    )
    parser.add_argument(
        "--tie-break",
        choices=TIE_BREAKS,
        help="FCS: among equally fast combinations take the smallest/largest bitmask or random",
    )
    parser.add_argument(
        "--k", type=float, help="search strategies: quantile k of the confidence bound (002 (26))"
    )
    parser.add_argument(
        "--quantum",
        type=float,
        metavar="TAU",
        help="search strategies: minimal run time per combination",
    )
    parser.add_argument("--bounds", choices=RULES, help="search strategies: interpolation bounds")
    parser.add_argument(
        "--incumbent",
        choices=INCUMBENTS,
        metavar="NAME",
        help="PI/EI: a+ is the largest estimated (default) or the best measured combination speed "
        "(%(choices)s)",
    )
    add_reading_arguments(parser)
    add_noise_arguments(parser)
    add_seed(parser, "random seed (random tie-break, search strategies, noise)")
    add_json(parser)


def add_reading_arguments(parser) -> None:
    """The three choices 002 §5 leaves open, each an option of the search strategies (docs:
    search.md)."""
    parser.add_argument(
        "--lower-anchor",
        choices=LOWER_ANCHORS,
        help="search strategies: size at which the lower bound 0 sits while no superset is "
        "measured "
        "(default n+1: the full set keeps a non-zero estimate; n: it is estimated at 0)",
    )
    parser.add_argument(
        "--search-tie-break",
        choices=SEARCH_TIE_BREAKS,
        metavar="RULE",
        help="search strategies: among equal acquisition values and estimates take the smallest "
        "bitmask (first, default) or a random one (%(choices)s)",
    )
    parser.add_argument(
        "--ei-unclipped",
        action="store_true",
        help="EI: at sigma = 0 use a~_j - a+ as (28) prints it (may be negative) instead of "
        "clipping it at 0",
    )


def strategy_from_args(args):
    """Build the strategy through the registry, so user and search strategies work like FCS."""
    from cosched.strategies.registry import make_strategy

    name = strategy_name(args)
    try:
        return make_strategy(
            name,
            tie_break=args.tie_break,
            k=args.k,
            quantum=args.quantum,
            bounds=args.bounds,
            incumbent=args.incumbent,
            noise=args.noise_sigma or None,
            remeasure=args.remeasure or None,
            lower_anchor=args.lower_anchor,
            search_tie_break=args.search_tie_break,
            ei_unclipped=args.ei_unclipped or None,
        )
    except InputError as error:  # a strategy option out of range: name that option, once
        raise InputError(
            error.message, source=error.source, field=error.field or "--strategy", line=error.line
        ) from None
    except (ValueError, TypeError) as error:
        raise InputError(str(error), field="--strategy") from None
    except (ImportError, AttributeError) as error:
        raise InputError(
            f"strategy {name!r} is not available ({error})", field="--strategy"
        ) from None


def strategy_name(args) -> str:
    """The one strategy of run/ratio (`--strategy`, default fcs)."""
    return one_name(args, "strategy", "fcs", "--strategy", "this command runs one strategy")


def register(subparsers) -> None:
    run = subparsers.add_parser(
        "run",
        help="run an online strategy on an instance",
        description="Run an online strategy (002 §4.2, §5) on an instance file.",
    )
    add_instance_arguments(run)
    add_strategy_arguments(run)
    run.set_defaults(func=_run)

    ratio = subparsers.add_parser(
        "ratio",
        help="competitive ratio of a strategy against OPT",
        description="Makespan of a strategy over the LP optimum (002 §4.3).",
    )
    add_instance_arguments(ratio)
    add_strategy_arguments(ratio)
    ratio.set_defaults(func=_ratio)

    demo = subparsers.add_parser(
        "demo",
        help="random paper-style instance: OPT vs FCS table and a Fig. 1-style plot",
        description="Generate a paper-style instance (002 §8), compare OPT and FCS, plot both "
        "schedules.",
    )
    demo.add_argument("--n", type=int, default=6, help="number of tasks (default 6)")
    demo.add_argument(
        "--alpha",
        type=float,
        nargs=2,
        metavar=("LO", "HI"),
        default=(0.75, 0.85),
        help="range of alpha_i (default 0.75 0.85, closest to measured speeds, 002 §8)",
    )
    add_seed(demo, "seed of the instance and the random tie-break")
    add_out(demo, "file", "the plot", default="demo.png", metavar="PNG")
    add_plots(
        demo,
        "the Fig. 1-style plot (--plots PNG: to that file instead of --out)",
        default_on=True,
        metavar="PNG",
    )
    add_json(demo, "the table")
    add_quiet(demo)
    demo.set_defaults(func=_demo)

    from cosched.strategies.experiment_cli import register_experiment

    register_experiment(subparsers)


def add_noise_arguments(parser) -> None:
    """Measurement noise for the search strategies (beyond 002 §5, which assumes exact
    measurements)."""
    parser.add_argument(
        "--noise-sigma",
        type=float,
        default=0.0,
        metavar="SIGMA",
        help="relative σ of the noise on each measured speed (default 0: exact, as in the paper)",
    )
    parser.add_argument(
        "--noise-model",
        choices=NOISE_MODELS,
        default="lognormal",
        help="noise factor distribution (default lognormal)",
    )
    parser.add_argument(
        "--remeasure",
        action="store_true",
        help="search strategies re-measure known combinations each quantum and average",
    )


def noise_from_args(args):
    """The `measure` callable of the execution loop, or None for exact measurements."""
    from cosched.strategies.noise import NoiseModel

    return NoiseModel(args.noise_sigma, args.noise_model) if args.noise_sigma else None


def _execute(args, instance):
    """The strategy's schedule on `instance`, or None (after one line on stderr) when the strategy
    fails.

    A strategy stuck on an instance that no schedule can finish is bad input: `opt_for_file` says so
    (exit 2).
    """
    from cosched.strategies.schedule import StrategyError, execute

    strategy = strategy_from_args(args)
    try:
        return execute(instance, strategy, seed=args.seed, measure=noise_from_args(args))
    except StrategyError as error:
        opt_for_file(instance, args.file)
        print(f"cosched {args.command}: strategy failed: {error}", file=sys.stderr)
        return None


def _run(args) -> int:
    instance = instance_from_args(args)
    schedule = _execute(args, instance)
    if schedule is None:
        return 1
    if args.json:
        print(json.dumps(with_task_names(schedule.to_json(), instance)))
        return 0
    print(
        f"{schedule.strategy} makespan {schedule.makespan:.10g} in {len(schedule.durations)} steps"
    )
    print(schedule.to_frame()[["combination", "start", "duration"]].to_string(index=False))
    return 0


def _ratio(args) -> int:
    from cosched.theory.bounds import competitive_ratio, fcs_bound

    instance = instance_from_args(args)
    # first: an instance no schedule can finish is bad input (exit 2)
    opt = opt_for_file(instance, args.file)
    schedule = _execute(args, instance)
    if schedule is None:
        return 1
    # Theorem 1 holds for FCS only
    row = {
        "opt": opt.makespan,
        "makespan": schedule.makespan,
        "ratio": competitive_ratio(schedule.makespan, opt.makespan),
        "bound": fcs_bound(instance) if strategy_name(args) == "fcs" else None,
    }
    if args.json:
        print(json.dumps(row))
        return 0
    print(f"{'OPT makespan':<26}{row['opt']:>14.10g}")
    print(f"{schedule.strategy + ' makespan':<26}{row['makespan']:>14.10g}")
    print(f"{'ratio':<26}{row['ratio']:>14.10g}")
    if row["bound"] is not None:
        print(f"{'bound 2 - 1/a* (Thm 1)':<26}{row['bound']:>14.10g}")
    return 0


def _demo(args) -> int:
    from cosched.outputs import check_outputs
    from cosched.strategies.fcs import FCS
    from cosched.strategies.schedule import execute
    from cosched.theory.bounds import competitive_ratio, fcs_bound
    from cosched.theory.generators import random_instance
    from cosched.theory.opt import solve_opt
    from cosched.theory.plots import plot_schedules

    if not 2 <= args.n <= 12:
        raise InputError("the demo plots 2..12 tasks", field="--n")
    plot = plots_target(args, args.out, picture=True)
    check_outputs(("--plots" if isinstance(args.plots, str) else "--out", plot, "plot"))
    instance = random_instance(args.n, alpha=args.alpha, seed=args.seed)
    opt = solve_opt(instance)
    fcs = execute(instance, FCS(), seed=args.seed)
    row = {
        "n": instance.n,
        "alpha": list(args.alpha),
        "seed": args.seed,
        "opt": opt.makespan,
        "makespan": fcs.makespan,
        "ratio": competitive_ratio(fcs.makespan, opt.makespan),
        "bound": fcs_bound(instance),
        "plot": str(plot) if plot is not None else None,
    }
    if plot is not None:
        plot_schedules(
            instance,
            {"FCS": fcs, "OPT": opt.schedule},
            plot,
            title=f"n={instance.n}, alpha in [{args.alpha[0]}, {args.alpha[1]}], seed {args.seed}",
        )
        announce(args, plot)
    if args.json:
        print(json.dumps(row))
        return 0
    print(f"{instance.n} tasks, alpha_i in [{args.alpha[0]}, {args.alpha[1]}], seed {args.seed}")
    print(f"{'OPT makespan':<24}{row['opt']:>12.4f}")
    print(f"{'FCS makespan':<24}{row['makespan']:>12.4f}")
    print(f"{'ratio FCS/OPT':<24}{row['ratio']:>12.4f}")
    print(f"{'bound 2 - 1/a*':<24}{row['bound']:>12.4f}")
    return 0
