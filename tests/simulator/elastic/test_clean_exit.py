"""The `cosched elastic` process exits with its own code, not a crash in the interpreter's teardown.

cexprtk's Symbol_Table must not be freed by the cyclic garbage collector (which may clear its fields
first; its C++ destructor then writes through None): `Expressions` releases its compiled expressions
itself. A project with an evolving job, whose requests are expressions, crashed the process at exit
(exit code -11) before that."""

import subprocess
import sys
from pathlib import Path

EVOLVING_PROJECT = Path(__file__).parent / "data" / "micro" / "x2_adaptive"


def test_an_evolving_project_exits_cleanly(tmp_path):
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "cosched",
            "elastic",
            "data/input/configuration.json",
            "--algorithm",
            "algorithm.py",
            "--out",
            str(tmp_path / "out"),
            "--quiet",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=EVOLVING_PROJECT,
    )
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "out" / "job_statistics.csv").is_file()
