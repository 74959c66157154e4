"""A newcomer's first hour, timed: clone, virtual environment, install, demo, the README's examples,
the walkthroughs of the measurement pages, the documentation build.

Every step runs as the README says, from the root of a fresh clone of this repository's committed
HEAD (where the README leaves a new user): `pip install .` (not editable), then each `cosched` line
and Python block of the README's "Examples" section, the `cosched execute` walkthrough of
docs/execute.md and the `measure-validate` line of docs/measurement.md, then `pip install ".[docs]"`
and `mkdocs build --strict`. It prints each step's wall time and whether it succeeded, as a Markdown
table; a failed step prints the end of its output and the script exits 1.

    python benchmarks/newcomer_path.py                      # every step (about 15-25 min, 2 cores)
    python benchmarks/newcomer_path.py --skip validate      # leave out measure-validate
    python benchmarks/newcomer_path.py --keep /tmp/clone    # clone there and keep it

The clone and its virtual environment live in a temporary folder removed at the end (`--keep DIR`
keeps them). `pip` uses the index this machine's pip is configured with.
"""

from __future__ import annotations

import argparse
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STEP_TIMEOUT = 3600  # seconds one step may take
OUTPUT_TAIL = 1500  # characters of a failed step's output printed
SKIPPABLE = ("readme", "execute", "validate", "docs")


@dataclass
class Step:
    name: str
    command: list[str]
    group: str  # what --skip names


def code_blocks(text: str, language: str) -> Iterator[str]:
    yield from re.findall(rf"```{language}\n(.*?)```", text, flags=re.DOTALL)


def readme_examples(readme: str) -> Iterator[tuple[str, str]]:
    """(kind, text) of the README's "Examples" section: each `cosched` line, each Python block."""
    section = readme.split("## Examples", 1)[1].split("\n## ", 1)[0]
    for block in re.findall(r"```(bash|python)\n(.*?)```", section, flags=re.DOTALL):
        language, body = block
        if language == "python":
            yield "python", body
            continue
        for line in body.splitlines():
            command = line.split("  #")[0].strip()
            if command.startswith("cosched "):
                yield "cosched", command


def page_command(page: Path, start: str) -> str:
    """The first line of a page's bash blocks that starts with `start` (comment removed)."""
    for block in code_blocks(page.read_text(encoding="utf-8"), "bash"):
        for line in block.splitlines():
            if line.startswith(start):
                return line.split("  #")[0].strip()
    raise SystemExit(f"{page.name}: no command starting with {start!r}")


def steps(clone: Path, python: str) -> list[Step]:
    venv = clone / ".venv" / "bin"
    cosched, pip = str(venv / "cosched"), str(venv / "pip")
    found = [
        Step("clone", ["git", "clone", "-q", "--no-local", str(ROOT), str(clone)], "clone"),
        Step("virtual environment", [python, "-m", "venv", str(clone / ".venv")], "venv"),
        Step("pip install .", [pip, "install", "-q", "."], "install"),
        Step("cosched demo", [cosched, "demo"], "demo"),
    ]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for kind, text in readme_examples(readme):
        if kind == "python":
            first = next(line for line in text.splitlines() if line and not line.startswith("from"))
            found.append(
                Step(f"README python: {first[:40]}", [str(venv / "python"), "-c", text], "readme")
            )
        else:
            found.append(Step(text, [cosched, *shlex.split(text)[1:]], "readme"))
    walkthrough = page_command(ROOT / "docs" / "execute.md", "cosched execute")
    found.append(Step(walkthrough, [cosched, *shlex.split(walkthrough)[1:]], "execute"))
    validate = page_command(ROOT / "docs" / "measurement.md", "cosched measure-validate")
    found.append(Step(validate, [cosched, *shlex.split(validate)[1:]], "validate"))
    found += [
        Step('pip install ".[docs]"', [pip, "install", "-q", ".[docs]"], "docs"),
        Step("mkdocs build --strict", [str(venv / "mkdocs"), "build", "--strict", "-q"], "docs"),
    ]
    return found


def run(step: Step, cwd: Path) -> tuple[float, bool, str]:
    started = time.perf_counter()
    try:
        result = subprocess.run(
            step.command,
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=STEP_TIMEOUT,
            stdin=subprocess.DEVNULL,
        )
        ok, output = result.returncode == 0, result.stdout + result.stderr
    except subprocess.TimeoutExpired:
        ok, output = False, f"timed out after {STEP_TIMEOUT} s"
    return time.perf_counter() - started, ok, output


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--skip", action="append", choices=SKIPPABLE, default=[])
    parser.add_argument("--keep", type=Path, help="clone into this folder and keep it")
    parser.add_argument("--python", default=sys.executable, help="the Python of the venv")
    args = parser.parse_args(argv)
    scratch = Path(tempfile.mkdtemp(prefix="newcomer-")) if args.keep is None else None
    clone = args.keep if args.keep is not None else scratch / "cosched"  # type: ignore[operator]
    failed = 0
    print("| step | wall [s] | ok |\n|---|---|---|", flush=True)
    total = 0.0
    try:
        for step in steps(clone, args.python):
            if step.group in args.skip:
                continue
            seconds, ok, output = run(step, ROOT if step.group == "clone" else clone)
            total += seconds
            print(f"| `{step.name}` | {seconds:.1f} | {'yes' if ok else 'NO'} |", flush=True)
            if not ok:
                failed += 1
                print(output[-OUTPUT_TAIL:], file=sys.stderr, flush=True)
                if step.group in ("clone", "venv", "install"):
                    break
        print(f"| all steps | {total:.1f} | {'yes' if not failed else f'{failed} failed'} |")
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
