"""`cosched experiment`: the competitive-ratio grid of 002 §8 (Figs. 6 and 7), resumable, local or on Dask."""
from __future__ import annotations

import dataclasses
import sys
import time

from cosched.errors import InputError
from cosched.strategies.experiment import ACQUISITIONS, PRESETS
from cosched.strategies.interpolation import RULES
from cosched.strategies.noise import NOISE_MODELS

__all__ = ["register_experiment"]


def register_experiment(subparsers) -> None:
    parser = subparsers.add_parser(
        "experiment", help="competitive ratios of FCS/UCB/PI/EI over a grid of random instances (002 §8)",
        description="Run the grid of 002 §8: random instances per α range, OPT, FCS and the search strategies "
                    "for every k. Rows go to OUT/results.csv as cells finish (rerun the same command to resume); "
                    "then OUT/results.parquet, OUT/summary.csv, OUT/fig6.png and OUT/fig7.png.")
    parser.add_argument("--preset", choices=tuple(PRESETS), default="paper",
                        help="paper: 50 instances of n=10 per α range, k in 0.6..0.99; small: a quick look")
    parser.add_argument("--out", required=True, metavar="DIR", help="output folder (resumes if it exists)")
    parser.add_argument("--instances", type=int, help="instances per α range (overrides the preset)")
    parser.add_argument("--n", type=int, help="tasks per instance (overrides the preset)")
    parser.add_argument("--k", type=float, nargs="+", help="k values of the search strategies (002 (26))")
    parser.add_argument("--strategies", nargs="+", choices=ACQUISITIONS, help="acquisitions to run")
    parser.add_argument("--quantum", type=float, metavar="TAU", help="measurement quantum (default 10)")
    parser.add_argument("--bounds", choices=RULES, help="interpolation bounds (default paper)")
    parser.add_argument("--incumbent", choices=("estimate", "measured"),
                        help="a+ of PI/EI: largest estimated or best measured combination speed (default estimate)")
    parser.add_argument("--noise-sigma", type=float, help="relative σ of measurement noise (default 0)")
    parser.add_argument("--noise-model", choices=NOISE_MODELS, help="noise distribution")
    parser.add_argument("--remeasure", action="store_true", help="re-measure known combinations and average")
    parser.add_argument("--seed", type=int, help="base seed of the instance generator (default 0)")
    parser.add_argument("--workers", type=int, help="worker processes (default: all cores; 1 = in this process)")
    parser.add_argument("--dask", metavar="ADDRESS", help="run on Dask: 'local' (LocalCluster) or tcp://host:port")
    parser.add_argument("--no-plots", action="store_true", help="skip fig6.png and fig7.png")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.set_defaults(func=_experiment)


def _experiment(args) -> int:
    from cosched.strategies.experiment import run_experiment
    from cosched.strategies.plots import fig7_table, plot_fig6, plot_fig7

    overrides = {"instances": args.instances, "n": args.n, "ks": tuple(args.k) if args.k else None,
                 "acquisitions": tuple(args.strategies) if args.strategies else None, "quantum": args.quantum,
                 "bounds": args.bounds, "incumbent": args.incumbent, "noise_sigma": args.noise_sigma,
                 "noise_model": args.noise_model, "remeasure": args.remeasure or None, "seed": args.seed}
    config = dataclasses.replace(PRESETS[args.preset],
                                 **{key: value for key, value in overrides.items() if value is not None})
    if args.workers is not None and args.workers < 1:
        raise InputError(f"--workers must be at least 1, got {args.workers}", field="--workers")
    started = time.perf_counter()
    frame = run_experiment(config, args.out, workers=args.workers, dask=args.dask, progress=not args.quiet)
    seconds = time.perf_counter() - started
    if not args.no_plots:
        plot_fig6(frame, f"{args.out}/fig6.png")
        plot_fig7(frame, f"{args.out}/fig7.png")
    table = fig7_table(frame).pivot(index=["alpha_lo", "alpha_hi"], columns="strategy", values="mean_ratio")
    print(f"{len(frame)} runs in {args.out} ({seconds:.1f} s this session); lowest mean ratio over k:",
          file=sys.stderr)
    print(table.round(4).to_string())
    return 0
