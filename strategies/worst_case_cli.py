"""`cosched worst-case`: search valid instances for the largest competitive ratio of an online
strategy."""

from __future__ import annotations

import json

from cosched.cli_options import add_out, add_plots, add_quiet, announce, plots_folder, plots_target
from cosched.errors import InputError
from cosched.strategies.cli import add_strategy_arguments, noise_from_args, strategy_name
from cosched.theory.limits import DEFAULT_BUDGET, WORST_CASE_MAX_TASKS

__all__ = ["register"]


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "worst-case",
        help="search instances for the largest competitive ratio of a strategy (002 §4.3)",
        description="Search valid instances (constraint (1), speeds in (0, 1], work > 0) for the "
        "largest "
        "makespan / OPT of a strategy: hypothesis targeted property-based testing, then "
        "a scipy.optimize "
        "refinement of the best points. Writes OUT/worst_instance.json (instance format), "
        "OUT/result.json (ratio, Theorem 1 bound 2 - 1/a* of that instance, Example 1's ratio), "
        "OUT/convergence.csv and OUT/convergence.png. Searched work lies in [0.001, 1]: "
        "for the search "
        "strategies choose --quantum on that scale (002 §8 uses 5-10%% of the work, e.g. 0.05).",
    )
    add_strategy_arguments(parser)
    parser.add_argument(
        "--n", type=int, required=True, help=f"number of tasks (2..{WORST_CASE_MAX_TASKS})"
    )
    parser.add_argument(
        "--alpha",
        type=float,
        nargs=2,
        metavar=("LO", "HI"),
        help="search only the family of the 002 §8 generator with alpha_i in [LO, HI] (default: "
        "every valid instance)",
    )
    parser.add_argument(
        "--budget",
        type=int,
        default=DEFAULT_BUDGET,
        metavar="EXAMPLES",
        help=f"hypothesis examples, and as many scipy evaluations (default {DEFAULT_BUDGET})",
    )
    add_out(
        parser,
        "folder",
        "worst_instance.json, result.json, convergence.csv, convergence.png",
        required=True,
        writes=("worst_instance.json", "result.json", "convergence.csv", "convergence.png"),
    )
    add_plots(parser, "convergence.png", where=True)
    add_quiet(parser)
    parser.set_defaults(func=_worst_case)


def _worst_case(args) -> int:
    from tqdm import tqdm

    from cosched.outputs import check_outputs, output_dir
    from cosched.strategies.cli import strategy_from_args
    from cosched.strategies.worst_case import find_worst_case, worst_case_report, write_worst_case

    if not 2 <= args.n <= WORST_CASE_MAX_TASKS:
        raise InputError(
            f"the search covers 2..{WORST_CASE_MAX_TASKS} tasks, got {args.n}", field="--n"
        )
    if args.alpha is not None and not 0 <= args.alpha[0] <= args.alpha[1] <= 1:
        raise InputError(
            f"the alpha range must satisfy 0 <= LO <= HI <= 1, got {args.alpha}", field="--alpha"
        )
    if args.budget < 1:
        raise InputError(
            f"the budget must be at least 1 example, got {args.budget}", field="--budget"
        )
    plots = plots_target(args, plots_folder(args.out))
    check_outputs(("--out", args.out, "folder"), ("--plots", plots, "folder"))
    strategy_from_args(args)  # bad strategy options fail here, before the search
    name = strategy_name(args)
    options = {
        "tie_break": args.tie_break,
        "k": args.k,
        "quantum": args.quantum,
        "bounds": args.bounds,
        "incumbent": args.incumbent,
        "noise": args.noise_sigma or None,
        "remeasure": args.remeasure or None,
        "lower_anchor": args.lower_anchor,
        "search_tie_break": args.search_tie_break,
        "ei_unclipped": args.ei_unclipped or None,
    }
    with tqdm(total=2 * args.budget, unit="instance", desc="worst-case", disable=args.quiet) as bar:
        best = [0.0]

        def progress(ratio):
            best[0] = max(best[0], ratio)
            bar.update()
            bar.set_postfix(best=f"{best[0]:.4f}", refresh=False)

        result = find_worst_case(
            name,
            args.n,
            alpha=args.alpha,
            budget=args.budget,
            seed=args.seed,
            measure=noise_from_args(args),
            progress=progress,
            **options,
        )
    report = worst_case_report(
        result, name, alpha=args.alpha, budget=args.budget, seed=args.seed, options=options
    )
    with output_dir(args.out):
        written = write_worst_case(result, report, args.out, plots=plots)
    announce(args, *written)
    if args.json:
        print(json.dumps(report))
        return 0
    print(
        f"worst case of {name} on {args.n} tasks after {report['evaluations']} evaluations "
        f"({report['seconds']:.1f} s)"
    )
    print(f"{'ratio makespan / OPT':<38}{report['ratio']:>10.6f}")
    bound_label = "FCS bound 2 - 1/a* (Thm 1), a* = " + format(report["a_star"], ".4g")
    print(f"{bound_label:<38}{report['bound']:>10.6f}")
    if report["example1_ratio"] is not None:
        print(f"{'FCS on Example 1 (2n - 3)/(n - 1)':<38}{report['example1_ratio']:>10.6f}")
    return 0
