"""Rerun the commands that docs/optimality.md shows beside its worst-case numbers and compare.

Every number of the page's "Worst cases of the online strategies" section comes from a command shown
beside it: a Python block drawing random instances, the table of worst ratios found for FCS (one
`cosched worst-case` command per n), and the PI and UCB searches quoted under it. This script finds
those commands and numbers on the page, runs each command verbatim in a scratch folder, reads the
command's OUT/result.json (or what the Python block prints) and prints every number side by side
with the page's. A number agrees when the regenerated value, rounded the way the page prints it, is
the page's number (tolerance: half a unit of the last digit shown).

    python benchmarks/regenerate_optimality.py --quick        # n = 3 and 4, PI and UCB (~1-2 min)
    python benchmarks/regenerate_optimality.py                # every row, n = 3..8 (~5 min)
    python benchmarks/regenerate_optimality.py --markdown     # also print the table rows to paste

Exit code 0 when every number agrees, 1 otherwise, 2 when the page lacks a command or a number.
The searches are deterministic for a given --seed (the default 0 is what the page shows).
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

PAGE = Path(__file__).resolve().parent.parent / "docs" / "optimality.md"
# a page number agrees when |regenerated - page| <= ROUNDING_TOLERANCE units of its last digit
ROUNDING_TOLERANCE = 0.5
# float slack on top of the rounding tolerance (the page's decimal strings are not exact binaries)
FLOAT_SLACK = 1e-9
# the rows of the FCS table the quick run (and the slow test) regenerates
QUICK_ROWS = (3, 4)
# the table's loop, as the page shows it; the row of n runs its body with $n replaced
TABLE_LOOP = re.compile(r"for n in ([\d ]+); do (cosched worst-case [^;]*\$n[^;]*); done")
TABLE_HEADER = "| n | worst ratio found |"
# the Python block that draws random instances, and the page's sentence quoting what it prints
RANDOM_BLOCK_MARK = "random_instance(4"
RANDOM_QUOTES = {
    "alpha (0, 1)": r"at most ([\d.]+) with α ∈ \[0, 1\]",
    "alpha (0.75, 0.85)": r"and ([\d.]+) with α ∈ \[0\.75, 0\.85\]",
}


class PageError(Exception):
    """The page lacks a command or a number this script expects."""


@dataclass(frozen=True)
class Number:
    """One number of the page: its label, the text the page shows, and how to get it from a
    command's result.json."""

    label: str
    shown: str
    field: str  # a key of result.json, or "ratio/example1_ratio"

    def value(self, result: dict) -> float:
        if self.field == "ratio/example1_ratio":
            return result["ratio"] / result["example1_ratio"]
        return float(result[self.field])

    def tolerance(self) -> float:
        digits = self.shown.replace(",", "")
        decimals = len(digits.split(".")[1]) if "." in digits else 0
        return ROUNDING_TOLERANCE * 10.0**-decimals + FLOAT_SLACK

    def page_value(self) -> float:
        return float(self.shown.replace(",", ""))


@dataclass(frozen=True)
class Check:
    """A command shown on the page and the numbers the page draws from it. A `cosched` command's
    numbers are fields of its OUT/result.json; a Python block's are the `label: number` lines it
    prints."""

    name: str
    command: str
    numbers: tuple
    python: bool = False


# the table's columns that come from result.json, in the page's order (search time is not shown)
TABLE_COLUMNS = (
    ("worst ratio found", "ratio"),
    ("Example 1", "example1_ratio"),
    ("found / Example 1", "ratio/example1_ratio"),
    ("bound 2 - 1/a*", "bound"),
    ("a*", "a_star"),
    ("evaluations", "evaluations"),
)


def table_checks(text: str) -> list[Check]:
    """One check per row of the FCS table: the loop's command for that n."""
    loop = TABLE_LOOP.search(text)
    if loop is None:
        raise PageError(f"{PAGE}: no 'for n in ...; do cosched worst-case ... $n ...; done' loop")
    loop_ns, body = [int(n) for n in loop.group(1).split()], loop.group(2)
    lines = text.splitlines()
    try:
        start = next(i for i, line in enumerate(lines) if line.startswith(TABLE_HEADER))
    except StopIteration:
        raise PageError(f"{PAGE}: no table starting with '{TABLE_HEADER}'") from None
    checks = []
    for number, line in enumerate(lines[start + 2 :], start=start + 3):
        if not line.startswith("|"):
            break
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if len(cells) != len(TABLE_COLUMNS) + 1:
            raise PageError(
                f"{PAGE}:{number}: {len(cells)} cells, expected {len(TABLE_COLUMNS) + 1}"
            )
        n = int(cells[0])
        if n not in loop_ns:
            raise PageError(f"{PAGE}:{number}: n = {n} is not in the loop's list {loop_ns}")
        numbers = tuple(
            Number(f"n = {n}: {label}", shown, field)
            for (label, field), shown in zip(TABLE_COLUMNS, cells[1:])
        )
        checks.append(Check(f"fcs n = {n}", body.replace("$n", str(n)), numbers))
    return checks


def quoted_check(text: str, name: str, command_start: str, quotes: dict) -> Check:
    """A command in a code block that starts with `command_start`, and the numbers that the
    sentences matching the `quotes` patterns ({label: (regex with one group, result field)}) take
    from it."""
    command = next(
        (
            line.split("#")[0].strip()
            for line in text.splitlines()
            if line.startswith(command_start)
        ),
        None,
    )
    if command is None:
        raise PageError(f"{PAGE}: no command starting with '{command_start}'")
    numbers = []
    for label, (pattern, field) in quotes.items():
        found = re.search(pattern, prose(text))
        if found is None:
            raise PageError(f"{PAGE}: no text matching {pattern!r} for {name}")
        numbers.append(Number(f"{name}: {label}", found.group(1), field))
    return Check(name, command, tuple(numbers))


def prose(text: str) -> str:
    """The page with every run of whitespace as one space (sentences wrap anywhere)."""
    return re.sub(r"\s+", " ", text)


def random_check(text: str) -> Check:
    """The Python block that draws random instances, and the largest ratios the page quotes."""
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)
    code = next((block for block in blocks if RANDOM_BLOCK_MARK in block), None)
    if code is None:
        raise PageError(f"{PAGE}: no python block containing '{RANDOM_BLOCK_MARK}'")
    numbers = []
    for label, pattern in RANDOM_QUOTES.items():
        found = re.search(pattern, prose(text))
        if found is None:
            raise PageError(f"{PAGE}: no text matching {pattern!r}")
        numbers.append(Number(f"random n = 4: {label}", found.group(1), label))
    return Check("random n = 4", code, tuple(numbers), python=True)


def page_checks(text: str) -> list[Check]:
    """Every check of the page's worst-case section."""
    return [random_check(text), *table_checks(text)] + [
        quoted_check(
            text,
            "pi n = 4",
            "cosched worst-case --strategy pi",
            {
                "ratio": (r"finds a PI ratio of ([\d.]+)", "ratio"),
                "FCS bound of that instance": (r"against ([\d.]+) for FCS's bound", "bound"),
            },
        ),
        quoted_check(
            text,
            "ucb n = 3",
            "cosched worst-case --strategy ucb",
            {"ratio": (r"already finds a ratio of ([\d.]+) for UCB", "ratio")},
        ),
    ]


def cosched_executable() -> str:
    """The `cosched` beside this Python (a virtual environment's), else the one on PATH."""
    beside = Path(sys.executable).with_name("cosched")
    found = str(beside) if beside.exists() else shutil.which("cosched")
    if found is None:
        raise PageError("no cosched executable beside this Python or on PATH")
    return found


def run(check: Check, executable: str) -> dict:
    """Run the check's command verbatim in a scratch folder; its OUT/result.json (a Python block:
    the `label: number` lines it prints)."""
    if check.python:
        printed = subprocess.run(
            [sys.executable, "-c", check.command], check=True, capture_output=True, text=True
        ).stdout
        return {
            label.strip(): float(value)
            for label, value in re.findall(r"^(.*): .*?([\d.]+)$", printed, flags=re.MULTILINE)
        }
    words = shlex.split(check.command)
    out = words[words.index("--out") + 1]
    with tempfile.TemporaryDirectory(prefix="regenerate-optimality-") as scratch:
        subprocess.run(
            [executable, *words[1:], "--quiet"], cwd=scratch, check=True, stdout=subprocess.DEVNULL
        )
        return json.loads((Path(scratch) / out / "result.json").read_text())


def markdown_row(n: int, result: dict) -> str:
    """The FCS table's row of n, as the page prints it."""
    return (
        f"| {n} | {result['ratio']:.4f} | {result['example1_ratio']:.4f} "
        f"| {result['ratio'] / result['example1_ratio']:.3f} | {result['bound']:.4f} "
        f"| {result['a_star']:.4f} | {result['evaluations']:,} |"
    )


def compare(checks: list[Check], executable: str, markdown: bool) -> int:
    """Run every check and print each number side by side; the count of disagreements."""
    print(f"{'number':<44}{'page':>10}{'regenerated':>14}{'|diff|':>11}{'tolerance':>11}  ok")
    failures = 0
    rows = []
    for check in checks:
        shown = "python (the page's block)" if check.python else check.command
        print(f"$ {shown}", flush=True)
        result = run(check, executable)
        for number in check.numbers:
            value = number.value(result)
            difference = abs(value - number.page_value())
            agrees = difference <= number.tolerance()
            failures += not agrees
            print(
                f"{number.label:<44}{number.shown:>10}{value:>14.6f}{difference:>11.2e}"
                f"{number.tolerance():>11.2e}  {'yes' if agrees else 'NO'}",
                flush=True,
            )
        if check.name.startswith("fcs n = "):
            rows.append(markdown_row(int(check.name.split("=")[1]), result))
    if markdown and rows:
        print("\n".join(["", "table rows:", *rows]))
    print(f"{failures} of {sum(len(c.numbers) for c in checks)} numbers disagree with {PAGE.name}")
    return failures


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help=f"only the table's rows n in {QUICK_ROWS}, PI and UCB"
    )
    parser.add_argument("--markdown", action="store_true", help="print the table rows to paste")
    args = parser.parse_args(argv)
    try:
        checks = page_checks(PAGE.read_text())
        executable = cosched_executable()
    except PageError as error:
        print(error, file=sys.stderr)
        return 2
    if args.quick:
        quick = {f"fcs n = {n}" for n in QUICK_ROWS}
        checks = [c for c in checks if c.name in quick or c.name in ("pi n = 4", "ucb n = 3")]
    return 1 if compare(checks, executable, args.markdown) else 0


if __name__ == "__main__":
    sys.exit(main())
