"""Worst-case search for the competitive ratio of an online strategy (002 §4.3): the
strategy-specific part.

`cosched.theory.testing.search_worst_case` searches valid instances for the largest makespan / OPT
of any callable; this module plugs a registered strategy into it (through the one execution loop)
and writes what the search found: the worst instance in the instance JSON format, its ratio beside
the Theorem 1 bound 2 - 1/a* of that instance, the search's convergence as CSV and as a plot.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

from cosched.outputs import atomic_path, pyplot, save_figure
from cosched.strategies.registry import make_strategy
from cosched.strategies.schedule import execute
from cosched.theory.instance import Instance, save_instance
from cosched.theory.testing import DEFAULT_BUDGET, WorstCase, search_worst_case

__all__ = [
    "strategy_makespan",
    "find_worst_case",
    "worst_case_report",
    "write_worst_case",
    "plot_convergence",
    "INSTANCE",
    "RESULT",
    "CONVERGENCE",
    "PLOT",
]

INSTANCE, RESULT, CONVERGENCE, PLOT = (
    "worst_instance.json",
    "result.json",
    "convergence.csv",
    "convergence.png",
)


def strategy_makespan(
    name: str, seed: int = 0, measure=None, **options
) -> Callable[[Instance], float]:
    """instance -> makespan of a fresh `name` strategy (registry options) run with `seed` by the
    execution loop."""

    def makespan(instance: Instance) -> float:
        return execute(
            instance, make_strategy(name, **options), seed=seed, measure=measure
        ).makespan

    return makespan


def find_worst_case(
    name: str,
    n: int,
    *,
    alpha=None,
    budget: int = DEFAULT_BUDGET,
    seed: int = 0,
    measure=None,
    progress=None,
    **options,
) -> WorstCase:
    """The worst instance of n tasks the search finds for strategy `name` (options as for
    `make_strategy`)."""
    return search_worst_case(
        strategy_makespan(name, seed=seed, measure=measure, **options),
        n,
        alpha=alpha,
        budget=budget,
        seed=seed,
        progress=progress,
    )


def worst_case_report(
    result: WorstCase, strategy: str, *, alpha=None, budget: int, seed: int, options: dict
) -> dict:
    """What `cosched worst-case` prints and stores in result.json: the ratio beside the Theorem 1
    bound."""
    from cosched.theory.bounds import example1_ratio, fcs_bound

    n = result.instance.n
    return {
        "strategy": strategy,
        "options": {key: value for key, value in options.items() if value is not None},
        "n": n,
        "alpha": list(alpha) if alpha is not None else None,
        "budget": budget,
        "seed": seed,
        "ratio": result.ratio,
        "makespan": result.makespan,
        "opt": result.opt,
        "a_star": float(result.instance.combination_speeds.max()),
        # 002 Theorem 1, (13): 2 - 1/a* of this instance (for FCS)
        "bound": fcs_bound(result.instance),
        # 002 Example 1: (2n - 3)/(n - 1)
        "example1_ratio": example1_ratio(n) if n >= 3 else None,
        "evaluations": int(result.history.size),
        "searched": result.searched,
        "seconds": result.seconds,
    }


def plot_convergence(
    result: WorstCase, path: str | os.PathLike, *, title: str = "", references: dict | None = None
) -> Path:
    """Ratio of every evaluation and the best so far against the evaluation count; the hypothesis
    and the refinement phases are separated by a vertical line, `references` ({label: ratio}) drawn
    as dashed lines."""
    plt = pyplot()

    figure, axis = plt.subplots(figsize=(7, 4.2))
    steps = range(1, result.history.size + 1)
    axis.scatter(
        steps, result.history, s=4, alpha=0.3, color="tab:gray", label="ratio of each evaluation"
    )
    axis.plot(steps, result.best_so_far, color="tab:red", label="best so far")
    axis.axvline(result.searched + 0.5, color="black", linewidth=0.8, linestyle=":")
    for (label, value), color in zip(
        (references or {}).items(), ("tab:blue", "tab:green", "tab:purple")
    ):
        axis.axhline(
            value, color=color, linestyle="--", linewidth=1, label=f"{label} = {value:.4f}"
        )
    axis.set_xlabel(f"evaluation (hypothesis: 1..{result.searched}, then scipy.optimize)")
    axis.set_ylabel("makespan / OPT")
    axis.set_title(title)
    axis.grid(alpha=0.3)
    axis.legend(fontsize=8, loc="lower right")
    figure.tight_layout()
    return save_figure(figure, path)


def write_worst_case(
    result: WorstCase,
    report: dict,
    out: str | os.PathLike,
    *,
    plots: str | os.PathLike | None = None,
) -> list[Path]:
    """Write worst_instance.json, result.json and convergence.csv into `out`, convergence.png into
    `plots`."""
    import pandas as pd

    out = Path(out)
    written = [save_instance(result.instance, out / INSTANCE)]
    with atomic_path(out / RESULT) as tmp:
        tmp.write_text(json.dumps(report, indent=2))
    written.append(out / RESULT)
    frame = pd.DataFrame(
        {
            "evaluation": range(1, result.history.size + 1),
            "phase": ["hypothesis"] * result.searched
            + ["refine"] * (result.history.size - result.searched),
            "ratio": result.history,
            "best": result.best_so_far,
        }
    )
    with atomic_path(out / CONVERGENCE) as tmp:
        frame.to_csv(tmp, index=False)
    written.append(out / CONVERGENCE)
    if plots is not None:
        references = {"FCS bound 2 - 1/a* of the worst instance": report["bound"]}
        if report["strategy"] == "fcs" and report["example1_ratio"] is not None:
            references["Example 1 (2n-3)/(n-1)"] = report["example1_ratio"]
        written.append(
            plot_convergence(
                result,
                Path(plots) / PLOT,
                references=references,
                title=f"worst case of {report['strategy']}, n = {report['n']}",
            )
        )
    return written
