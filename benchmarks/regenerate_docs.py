"""Rerun the commands the documentation shows beside its numbers, compare, and optionally rewrite.

Every page with numbers that a command beside them produces is checked here, one page at a time
(`--page NAME`, repeatable; default every page):

- an output block: a ```bash block after a `<!-- regenerate -->` line, and the next block, the
  ```text block of what it prints (stdout, then stderr). The block's `cosched` lines run verbatim
  in one scratch folder (other lines, such as `pip install`, are not run); each shown line is
  matched with the printed line of the same shape (the same words, numbers anywhere) and every
  number compared, half a unit of its last digit shown being the tolerance. A shown `...` line
  stands for lines left out. Numbers that time the run (a line or a column named in `volatile=`,
  default `wall`) are not compared.
- `optimality`: the worst-case section, by benchmarks/regenerate_optimality.py.
- `hybrid`: the node-failure table (14 `simulate --hybrid` runs of the whole KTH-SP2 trace).
- `readme`: the README's output blocks, and its headline table against the headline table of
  docs/benchmarks.md (the README quotes it; no command).

    python benchmarks/regenerate_docs.py --list                 # the pages and what each checks
    python benchmarks/regenerate_docs.py --page simulator       # compare one page
    python benchmarks/regenerate_docs.py --page hybrid --write  # rewrite its numbers in place

Exit code 0 when every number agrees (or, with --write, once the page is rewritten), 1 when some
disagree, 2 when a page lacks a block or a command fails.
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
MARKER = re.compile(r"^<!-- regenerate(?:: (?P<options>.*?))? -->$")
NUMBER = re.compile(r"(?<![\w.])-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![\w])")
# a shown number agrees when |regenerated - shown| <= this many units of its last digit
ROUNDING_TOLERANCE = 0.5
FLOAT_SLACK = 1e-9  # the page's decimal strings are not exact binaries
DEFAULT_VOLATILE = ("wall",)  # columns and labels that time the run on this machine
COMMAND_TIMEOUT = 3600  # seconds one documented command may take


class PageError(Exception):
    """A page lacks a block or a command this script expects, or a command failed."""


@dataclass
class Block:
    """One marked output block of a page: the commands, and the shown text with its line span."""

    commands: list[str]
    shown: list[str]
    first: int  # index of the first line of the text block's content in the page's lines
    volatile: tuple[str, ...] = DEFAULT_VOLATILE


@dataclass
class Outcome:
    """What checking a page found: numbers compared, disagreements, and the rewritten page text."""

    compared: int = 0
    problems: list[str] = field(default_factory=list)
    text: str | None = None


def shape(line: str) -> str:
    """A line with its numbers replaced by '#' and runs of spaces by one (what must match)."""
    return " ".join(NUMBER.sub("#", line).split())


def value(text: str) -> float:
    return float(text.replace(",", ""))


def tolerance(text: str) -> float:
    decimals = len(text.split(".")[1]) if "." in text else 0
    return ROUNDING_TOLERANCE * 10.0**-decimals + FLOAT_SLACK


def volatile_spans(line: str, volatile: tuple[str, ...]) -> list[tuple[int, int]]:
    """Character spans of the header columns of a table line named in `volatile`."""
    spans = []
    for word in volatile:
        for match in re.finditer(rf"{re.escape(word)}\S*(?: \[[^\]]*\])?", line):
            spans.append((match.start(), match.end()))
    return spans


def compare_lines(block: Block, printed: list[str]) -> tuple[int, list[str], list[str]]:
    """(numbers compared, problems, the shown lines rewritten from the printed ones)."""
    used: set[int] = set()
    compared, problems, rewritten = 0, [], []
    spans: list[tuple[int, int]] = []
    for line in block.shown:
        if line.strip() in ("...", "…", ""):
            rewritten.append(line)
            continue
        if not NUMBER.search(line):
            spans = volatile_spans(line, block.volatile)  # a table header
        index = next(
            (i for i, other in enumerate(printed) if i not in used and shape(other) == shape(line)),
            None,
        )
        if index is None:
            problems.append(f"no printed line like: {line.strip()}")
            rewritten.append(line)
            continue
        used.add(index)
        rewritten.append(printed[index])
        label = NUMBER.split(line)[0]
        if any(word in label for word in block.volatile):
            continue
        for shown, new in zip(NUMBER.finditer(line), NUMBER.finditer(printed[index])):
            if any(start <= shown.end() <= end + 1 for start, end in spans):
                continue
            compared += 1
            if abs(value(new.group()) - value(shown.group())) > tolerance(shown.group()):
                problems.append(f"{line.strip()!r}: {shown.group()} is now {new.group()}")
    return compared, problems, rewritten


def blocks(text: str) -> list[Block]:
    """The marked output blocks of a page."""
    lines = text.splitlines()
    found = []
    for number, line in enumerate(lines):
        match = MARKER.match(line.strip())
        if not match:
            continue
        options = dict(
            item.split("=", 1) for item in (match.group("options") or "").split() if "=" in item
        )
        start = number + 1
        if not lines[start].startswith("```bash"):
            raise PageError(f"line {start + 1}: a ```bash block must follow the marker")
        end = lines.index("```", start + 1)
        text_start = next(
            (i for i in range(end + 1, len(lines)) if lines[i].startswith("```")), len(lines)
        )
        if text_start == len(lines) or not lines[text_start].startswith("```text"):
            raise PageError(f"line {end + 1}: the next block after the commands is no ```text")
        text_end = lines.index("```", text_start + 1)
        commands = [
            command.split(" #")[0].strip()
            for command in lines[start + 1 : end]
            if command.strip().startswith("cosched ")
        ]
        volatile = tuple(options["volatile"].split(",")) if "volatile" in options else ()
        found.append(
            Block(
                commands,
                lines[text_start + 1 : text_end],
                text_start + 1,
                volatile or DEFAULT_VOLATILE,
            )
        )
    return found


def cosched_executable() -> str:
    beside = Path(sys.executable).with_name("cosched")
    return str(beside) if beside.exists() else "cosched"


def run_commands(commands: list[str], scratch: Path) -> list[tuple[list[str], list[str]]]:
    """Run the commands in `scratch`; (stdout lines, stderr lines) of each."""
    printed = []
    for command in commands:
        words = shlex.split(command)
        result = subprocess.run(
            [cosched_executable(), *words[1:]],
            cwd=scratch,
            capture_output=True,
            text=True,
            timeout=COMMAND_TIMEOUT,
        )
        if result.returncode != 0:
            raise PageError(f"{command}: exit {result.returncode}: {result.stderr.strip()[-300:]}")
        printed.append((result.stdout.splitlines(), result.stderr.splitlines()))
    return printed


def whole_output(block: Block, printed: list[tuple[list[str], list[str]]]) -> list[str]:
    """The output a whole shown block stands for: the stdout of the command that prints its first
    line, from that line on, and that command's stderr when the block shows it."""
    first, last = shape(block.shown[0]), shape(block.shown[-1])
    for out, err in printed:
        start = next((i for i, line in enumerate(out) if shape(line) == first), None)
        if start is not None:
            shows_err = any(shape(line) == last for line in err)
            return out[start:] + (err if shows_err else [])
    return block.shown


def check_output_blocks(page: Path) -> Outcome:
    """Every marked output block of `page`."""
    text = page.read_text(encoding="utf-8")
    found = blocks(text)
    if not found:
        raise PageError(f"{page.name}: no <!-- regenerate --> block")
    lines = text.splitlines()
    outcome = Outcome()
    for block in reversed(found):  # from the end: a rewritten block may change the line count
        print(f"$ {' && '.join(block.commands)}", flush=True)
        with tempfile.TemporaryDirectory(prefix="regenerate-docs-") as scratch:
            printed = run_commands(block.commands, Path(scratch))
        flat = [line for out, err in printed for line in out + err]
        compared, problems, rewritten = compare_lines(block, flat)
        outcome.compared += compared
        outcome.problems += problems
        excerpt = any(line.strip() in ("...", "…") for line in block.shown)
        if problems and not excerpt:
            rewritten = whole_output(block, printed)
        lines[block.first : block.first + len(block.shown)] = rewritten
    outcome.text = "\n".join(lines) + "\n"
    return outcome


# --- docs/hybrid.md: the node-failure table ---------------------------------------------------

HYBRID_TABLE = "| mechanism | jobs hit | lost to failures [node-h] |"
HYBRID_MECHANISMS = ("baseline", "n-paa", "n-spaa", "cua-paa", "cua-spaa", "cup-paa", "cup-spaa")


def hybrid_row(mechanism: str, without: dict, with_failures: dict) -> str:
    """The table's row of one mechanism, as the page prints it."""
    return (
        f"| {mechanism} | {with_failures['failure_jobs_hit']:,} "
        f"| {with_failures['failure_node_hours_lost']:,.0f} "
        f"| {without['lost_node_hours']:,.0f} → {with_failures['lost_node_hours']:,.0f} "
        f"| {without['mean_turnaround_hours']:.3f} → {with_failures['mean_turnaround_hours']:.3f} "
        f"| {without['rigid_turnaround_hours']:.3f} → "
        f"{with_failures['rigid_turnaround_hours']:.3f} |"
    )


def hybrid_metrics(command: str) -> dict:
    """The JSON summary of one `cosched simulate ... --json` run, with the table's fields."""
    words = shlex.split(command)
    result = subprocess.run(
        [cosched_executable(), *words[1:], "--quiet"],
        capture_output=True,
        text=True,
        timeout=COMMAND_TIMEOUT,
    )
    if result.returncode != 0:
        raise PageError(f"{command}: exit {result.returncode}: {result.stderr.strip()[-300:]}")
    return json.loads(result.stdout)


def check_hybrid(page: Path) -> Outcome:
    text = page.read_text(encoding="utf-8")
    lines = text.splitlines()
    try:
        header = next(i for i, line in enumerate(lines) if line.startswith(HYBRID_TABLE))
    except StopIteration:
        raise PageError(f"{page.name}: no node-failure table ({HYBRID_TABLE} ...)") from None
    commands = [line for line in lines[header - 6 : header] if line.startswith("cosched simulate")]
    if len(commands) != 2 or "MECHANISM" not in commands[0]:
        raise PageError(f"{page.name}: the two commands above the node-failure table are missing")
    outcome = Outcome()
    for row in range(header + 2, header + 2 + len(HYBRID_MECHANISMS)):
        mechanism = lines[row].split("|")[1].strip()
        runs = [hybrid_metrics(c.replace("MECHANISM", mechanism)) for c in commands]
        print(f"$ {commands[1].replace('MECHANISM', mechanism)}", flush=True)
        new = hybrid_row(mechanism, *(table_fields(run) for run in runs))
        shown = [m.group() for m in NUMBER.finditer(lines[row])]
        regenerated = [m.group() for m in NUMBER.finditer(new)]
        outcome.compared += len(shown)
        for old, now in zip(shown, regenerated):
            if abs(value(now) - value(old)) > tolerance(old):
                outcome.problems.append(f"{mechanism}: {old} is now {now}")
        lines[row] = new
    outcome.text = "\n".join(lines) + "\n"
    return outcome


def table_fields(summary: dict) -> dict:
    """The node-failure table's fields from a hybrid run's JSON summary (no failures: zeros)."""
    return {
        "failure_jobs_hit": summary.get("failure_hits", 0),
        "failure_node_hours_lost": summary.get("failure_lost_node_hours", 0.0),
        "lost_node_hours": summary["lost_node_hours"],
        "mean_turnaround_hours": summary["turnaround_hours"],
        "rigid_turnaround_hours": summary["turnaround_hours_by_type"]["rigid"],
    }


# --- README.md: the headline table quotes docs/benchmarks.md ----------------------------------

HEADLINE = "| what |"


def headline_numbers(text: str) -> list[tuple[str, list[str]]]:
    """(first cell, numbers of the other cells) of every row of the page's headline table."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith(HEADLINE)), None)
    if start is None:
        raise PageError(f"no headline table ({HEADLINE} ...)")
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        rows.append((cells[0], [n for cell in cells[1:] for n in NUMBER.findall(cell)]))
    return rows


def check_readme(page: Path) -> Outcome:
    """The README's output blocks, and every number its headline table measures is one of
    docs/benchmarks.md's headline table (the README quotes that page)."""
    outcome = check_output_blocks(page)
    source = {
        number
        for what, numbers in headline_numbers((DOCS / "benchmarks.md").read_text(encoding="utf-8"))
        for number in [*numbers, *NUMBER.findall(what)]
    }
    for what, numbers in headline_numbers(page.read_text(encoding="utf-8")):
        for number in numbers:
            outcome.compared += 1
            if number not in source:
                outcome.problems.append(
                    f"README {what!r}: {number} is not in docs/benchmarks.md's headline table"
                )
    return outcome


def check_optimality(page: Path) -> Outcome:
    script = ROOT / "benchmarks" / "regenerate_optimality.py"
    code = subprocess.run([sys.executable, str(script)], timeout=COMMAND_TIMEOUT).returncode
    if code == 2:
        raise PageError(f"{page.name}: regenerate_optimality.py found no command or number")
    return Outcome(compared=1, problems=["see regenerate_optimality.py above"] if code else [])


# page name -> (file, what is checked, the check)
PAGES: dict[str, tuple[Path, str, Callable[[Path], Outcome]]] = {
    "simulator": (DOCS / "simulator.md", "output blocks", check_output_blocks),
    "elastisim": (DOCS / "elastisim.md", "output blocks", check_output_blocks),
    "getting-started": (DOCS / "getting-started.md", "output blocks", check_output_blocks),
    "hybrid": (DOCS / "hybrid.md", "the node-failure table", check_hybrid),
    "optimality": (
        DOCS / "optimality.md",
        "worst cases (regenerate_optimality.py)",
        check_optimality,
    ),
    "readme": (ROOT / "README.md", "output blocks, headline table", check_readme),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--page", action="append", choices=list(PAGES), help="(repeatable)")
    parser.add_argument("--write", action="store_true", help="rewrite the pages' numbers")
    parser.add_argument("--list", action="store_true", help="list the pages and stop")
    args = parser.parse_args(argv)
    if args.list:
        for name, (path, what, _) in PAGES.items():
            print(f"{name:<16} {path.relative_to(ROOT)}: {what}")
        return 0
    disagreeing = 0
    for name in args.page or list(PAGES):
        path, _, check = PAGES[name]
        try:
            outcome = check(path)
        except (PageError, subprocess.TimeoutExpired) as error:
            print(f"{name}: {error}", file=sys.stderr)
            return 2
        for problem in outcome.problems:
            print(f"  {name}: {problem}")
        print(f"{name}: {len(outcome.problems)} disagreements in {outcome.compared} numbers")
        disagreeing += bool(outcome.problems)
        if args.write and outcome.text is not None and outcome.problems:
            path.write_text(outcome.text, encoding="utf-8")
            print(f"{name}: rewrote {path.relative_to(ROOT)}")
    return 1 if disagreeing and not args.write else 0


if __name__ == "__main__":
    sys.exit(main())
