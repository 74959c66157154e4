"""`cosched generate | opt`: instances and their LP optimum."""

from __future__ import annotations

import argparse
import json

from cosched.cli_options import add_alias, add_json, add_out, add_quiet, add_seed, announce
from cosched.errors import InputError
from cosched.theory.opt import BACKENDS, METHODS

__all__ = [
    "register",
    "add_instance_arguments",
    "instance_from_args",
    "opt_for_file",
    "with_task_names",
]


def add_instance_arguments(parser: argparse.ArgumentParser) -> None:
    """The instance FILE plus the options every command that loads one accepts (and --quiet)."""
    parser.add_argument("file", metavar="FILE", help="instance file (.json or .npz)")
    parser.add_argument(
        "--allow-nonmonotone",
        action="store_true",
        help="accept speeds that break constraint (1) or exceed 1 (measured matrices)",
    )
    parser.add_argument(
        "--normalize",
        action="store_true",
        help="divide each task's speeds and work by its speed alone (002 §3)",
    )
    add_quiet(parser)


def instance_from_args(args):
    from cosched.theory.instance import load_instance

    return load_instance(args.file, monotone=not args.allow_nonmonotone, normalize=args.normalize)


def opt_for_file(instance, path: str, **options):
    """solve_opt, with the instance file named in an InfeasibleError (the CLI prints one line naming
    it)."""
    from cosched.theory.opt import solve_opt

    try:
        return solve_opt(instance, **options)
    except InputError as error:
        raise error.naming(path) from None


def with_task_names(document: dict, instance) -> dict:
    """A JSON result with "tasks": the names the text output shows (T1..Tn), in the order of the
    0-based indices of its "combination" lists."""
    return {**document, "tasks": list(instance.tasks)}


def register(subparsers) -> None:
    generate = subparsers.add_parser(
        "generate",
        help="write a random instance (002 §8) or the FCS worst case (002 Example 1)",
        description="Write a random instance (002 §8) or the FCS worst case (002 Example 1) to a "
        "JSON/NPZ file.",
    )
    generate.add_argument("--n", type=int, default=10, help="number of tasks (default 10)")
    generate.add_argument(
        "--alpha",
        type=float,
        nargs=2,
        metavar=("LO", "HI"),
        default=(0.75, 0.85),
        help="range of the per-task slope alpha_i (default 0.75 0.85)",
    )
    generate.add_argument(
        "--work-range",
        dest="work",
        type=float,
        nargs=2,
        metavar=("LO", "HI"),
        default=(100.0, 200.0),
        help="range of the work b_i (default 100 200)",
    )
    add_alias(generate, "--work", dest="work", type=float, nargs=2, metavar=("LO", "HI"))
    generate.add_argument(
        "--max-size", type=int, help="keep only combinations of at most this many tasks"
    )
    generate.add_argument(
        "--worst-case", action="store_true", help="002 Example 1 instead of a random instance"
    )
    generate.add_argument(
        "--b1", type=float, default=1.0, help="work of T1 in the worst case (default 1)"
    )
    add_seed(generate, "seed of the random instance")
    add_out(generate, "file", "the instance, .json or .npz", required=True)
    add_json(generate, "a summary")
    add_quiet(generate)
    generate.set_defaults(func=_generate)

    opt = subparsers.add_parser(
        "opt",
        help="optimal makespan by LP (002 §4.1)",
        description="Solve min sum x_j s.t. A x = b, x >= 0 (002 §4.1) directly or by column "
        "generation.",
    )
    add_instance_arguments(opt)
    opt.add_argument(
        "--method",
        choices=METHODS,
        default="auto",
        help="direct LP, column generation, or auto (by size; default)",
    )
    opt.add_argument(
        "--backend", choices=BACKENDS, default="highs", help="LP solver (default highs)"
    )
    add_json(opt, 'the result (combinations are 0-based indices into "tasks")')
    opt.set_defaults(func=_opt)


def _generate(args) -> int:
    from cosched.outputs import check_outputs
    from cosched.theory.generators import random_instance, worst_case_instance
    from cosched.theory.instance import save_instance

    if not args.out.lower().endswith((".json", ".npz")):
        raise InputError("the output file must end in .json or .npz", field="--out")
    check_outputs(("--out", args.out, "file"))
    if args.worst_case:
        if args.max_size is not None:
            raise InputError(
                "Example 1 needs every combination; drop --max-size", field="--max-size"
            )
        instance = worst_case_instance(args.n, b1=args.b1)
    else:
        instance = random_instance(
            args.n, alpha=args.alpha, seed=args.seed, work=args.work, max_size=args.max_size
        )
    save_instance(instance, args.out)
    summary = {
        "out": args.out,
        "n": instance.n,
        "m": instance.m,
        "kind": "worst-case" if args.worst_case else "random",
    }
    print(
        json.dumps(summary)
        if args.json
        else f"wrote {args.out}: {instance.n} tasks, {instance.m} combinations"
    )
    announce(args, args.out)
    return 0


def _opt(args) -> int:
    instance = instance_from_args(args)
    result = opt_for_file(instance, args.file, method=args.method, backend=args.backend)
    if args.json:
        print(json.dumps(with_task_names(result.to_json(), instance)))
        return 0
    print(
        f"OPT makespan {result.makespan:.10g}  ({result.method}, {result.solver}, "
        f"{result.solve_seconds:.3g} s, {result.iterations} round(s))"
    )
    frame = result.schedule.to_frame()
    print(frame[["combination", "start", "duration"]].to_string(index=False))
    return 0
