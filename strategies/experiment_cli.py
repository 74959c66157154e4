"""`cosched experiment`: the competitive-ratio grid of 002 §8 (Figs. 6 and 7), resumable, local or
on Dask."""

from __future__ import annotations

import dataclasses
import os
import sys
import time

from cosched.cli_options import (
    LazyChoices,
    add_json,
    add_name_list,
    add_out,
    add_parallel,
    add_plots,
    add_quiet,
    add_seed,
    announce,
    names_or,
    plots_folder,
    plots_target,
)
from cosched.errors import InputError
from cosched.strategies.experiment import (
    ACQUISITIONS,
    PARQUET,
    RESULTS,
    SPREAD,
    STRATEGY_PRESETS,
    SUMMARY,
)
from cosched.strategies.interpolation import LOWER_ANCHORS, RULES, SEARCH_TIE_BREAKS
from cosched.strategies.noise import NOISE_MODELS

# read on use: search imports scipy
INCUMBENTS = LazyChoices("cosched.strategies.search", "INCUMBENTS")

__all__ = ["register_experiment"]


def register_experiment(subparsers) -> None:
    parser = subparsers.add_parser(
        "experiment",
        help="competitive ratios of FCS/UCB/PI/EI over a grid of random instances (002 §8)",
        description="Run the grid of 002 §8: random instances per α range, OPT, FCS and the search "
        "strategies "
        "for every k. Rows go to OUT/results.csv as cells finish (rerun the same command "
        "to resume); "
        "then OUT/results.parquet, OUT/summary.csv, OUT/fig6.png and OUT/fig7.png.",
    )
    parser.add_argument(
        "--preset",
        choices=tuple(STRATEGY_PRESETS),
        default="paper",
        help="paper: 50 instances of n=10 per α range (002 §8) over our grid of 9 α ranges and "
        "k in 0.6..0.99; small: a quick look",
    )
    add_out(
        parser,
        "folder",
        "results.csv, results.parquet, summary.csv, fig6.png, fig7.png (resumes if it exists)",
        required=True,
        writes=LazyChoices("cosched.strategies.experiment", "OWNED"),
    )
    parser.add_argument(
        "--instances", type=int, help="instances per α range (overrides the preset)"
    )
    parser.add_argument("--n", type=int, help="tasks per instance (overrides the preset)")
    parser.add_argument(
        "--k", type=float, nargs="+", help="k values of the search strategies (002 (26))"
    )
    add_name_list(
        parser,
        "--strategy",
        what="search strategies to run beside OPT and FCS",
        known=ACQUISITIONS,
        default=",".join(ACQUISITIONS),
        alias="--strategies",
        alias_nargs="+",
    )
    parser.add_argument(
        "--quantum", type=float, metavar="TAU", help="measurement quantum (default 10)"
    )
    parser.add_argument("--bounds", choices=RULES, help="interpolation bounds (default paper)")
    parser.add_argument(
        "--incumbent",
        choices=INCUMBENTS,
        metavar="NAME",
        help="a+ of PI/EI: largest estimated or best measured combination speed (%(choices)s; "
        "default estimate)",
    )
    parser.add_argument(
        "--noise-sigma", type=float, help="relative σ of measurement noise (default 0)"
    )
    parser.add_argument("--noise-model", choices=NOISE_MODELS, help="noise distribution")
    parser.add_argument(
        "--remeasure", action="store_true", help="re-measure known combinations and average"
    )
    parser.add_argument(
        "--lower-anchor",
        choices=LOWER_ANCHORS,
        nargs="+",
        metavar="ANCHOR",
        help="size(s) at which the lower bound 0 sits while no superset is measured: n+1 (default) "
        "and/or n; several values run each and report the spread (%(choices)s)",
    )
    parser.add_argument(
        "--search-tie-break",
        choices=SEARCH_TIE_BREAKS,
        nargs="+",
        metavar="RULE",
        help="tie-break(s) among equal acquisition values and estimates: first (default) and/or "
        "random; several values run each and report the spread (%(choices)s)",
    )
    parser.add_argument(
        "--ei-unclipped",
        action="store_true",
        help="EI at sigma = 0 as (28) prints it (a~_j - a+, may be negative) instead of "
        "clipped at 0",
    )
    parser.add_argument(
        "--all-readings",
        action="store_true",
        help="run every reading of the open choices (lower anchor n+1/n, tie-break "
        "first/random, EI "
        "clipped/unclipped) and write OUT/spread.csv with the spread of the mean ratio",
    )
    add_seed(parser, "base seed of the instance generator")
    add_parallel(parser)
    add_plots(parser, "fig6.png and fig7.png", where=True)
    add_json(parser, "the lowest mean ratio per α range and strategy")
    add_quiet(parser)
    parser.add_argument(
        "--force",
        action="store_true",
        help="start over in --out, removing what an earlier experiment wrote there (by default the "
        "same grid resumes and another grid or foreign files are refused)",
    )
    parser.set_defaults(func=_experiment)


def _experiment(args) -> int:
    from cosched.outputs import check_outputs
    from cosched.strategies.experiment import default_reading, run_experiment, spread
    from cosched.strategies.plots import fig7_table

    plots = plots_target(args, plots_folder(args.out))
    check_outputs(("--out", args.out, "folder"), ("--plots", plots, "folder"))
    acquisitions = tuple(
        names_or(args, "strategy", STRATEGY_PRESETS[args.preset].acquisitions, "--strategy")
    )
    overrides = {
        "instances": args.instances,
        "n": args.n,
        "ks": tuple(args.k) if args.k else None,
        "acquisitions": acquisitions,
        "quantum": args.quantum,
        "bounds": args.bounds,
        "incumbent": args.incumbent,
        "noise_sigma": args.noise_sigma,
        "noise_model": args.noise_model,
        "remeasure": args.remeasure or None,
        "seed": args.seed,
        "lower_anchors": tuple(args.lower_anchor) if args.lower_anchor else None,
        "search_tie_breaks": tuple(args.search_tie_break) if args.search_tie_break else None,
        "ei_unclipped": (True,) if args.ei_unclipped else None,
    }
    if args.all_readings:
        overrides.update(
            lower_anchors=tuple(LOWER_ANCHORS),
            search_tie_breaks=tuple(SEARCH_TIE_BREAKS),
            ei_unclipped=(False, True),
        )
    config = dataclasses.replace(
        STRATEGY_PRESETS[args.preset],
        **{key: value for key, value in overrides.items() if value is not None},
    )
    if args.workers is not None and args.workers < 1:
        raise InputError(f"--workers must be at least 1, got {args.workers}", field="--workers")
    started = time.perf_counter()
    frame = run_experiment(
        config,
        args.out,
        workers=args.workers,
        dask=args.dask,
        progress=not args.quiet,
        force=args.force,
    )
    seconds = time.perf_counter() - started
    several = max(len(config.readings(name)) for name in config.acquisitions) > 1
    names = (RESULTS, PARQUET, SUMMARY, *((SPREAD,) if several else ()))
    written: list[str | os.PathLike] = [f"{args.out}/{name}" for name in names]
    shown = default_reading(frame, config)  # the figures and the table: the first reading
    if plots is not None:
        from cosched.strategies.plots import plot_fig6, plot_fig7

        written += [plot_fig6(shown, plots / "fig6.png"), plot_fig7(shown, plots / "fig7.png")]
    best = fig7_table(shown)
    announce(args, *written)
    if args.json:
        print(best.to_json(orient="records"))
        return 0
    table = best.pivot(index=["alpha_lo", "alpha_hi"], columns="strategy", values="mean_ratio")
    if not args.quiet:
        print(
            f"{len(frame)} runs in {args.out} ({seconds:.1f} s this session); lowest "
            "mean ratio over k"
            f"{' (first reading)' if several else ''}:",
            file=sys.stderr,
        )
    print(table.round(4).to_string())
    if several:
        largest = (
            spread(frame).groupby(["alpha_lo", "alpha_hi", "strategy"])["spread"].max().unstack()
        )
        print("\nlargest spread of the mean ratio between readings (over k):")
        print(largest.round(4).to_string())
    return 0
