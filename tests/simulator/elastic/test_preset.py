"""The bundled `example` preset (ElastiSim's example project with its licence) runs as `cosched
elastic
example`; the command loads neither matplotlib nor pandas unless plots are asked for."""

import csv
import json
import subprocess
import sys
from pathlib import Path

from cosched.cli import main
from cosched.simulator.elastic.cli import PRESET_ROOT

PRESET = PRESET_ROOT / "example"


def test_preset_ships_its_licence_and_provenance():
    assert "BSD 3-Clause License" in (PRESET / "LICENSE").read_text()
    assert "github.com/elastisim/example-project" in (PRESET / "PROVENANCE.md").read_text()
    for name in ("configuration.json", "jobs.json", "application_model.json", "crossbar.xml"):
        assert (PRESET / "data" / "input" / name).is_file()


def test_preset_needs_an_output_folder(capsys):
    assert main(["elastic", "example"]) == 2
    assert "example, field '--out': a preset writes into --out DIR" in capsys.readouterr().err


def test_example_preset_runs_without_plotting_or_pandas(tmp_path):
    out = tmp_path / "out"
    code = (
        "import sys; from cosched.cli import main; "
        f"code = main(['elastic', 'example', '--out', {str(out)!r}, '--quiet', '--json']); "
        "print(sorted({'matplotlib', 'pandas'} & set(sys.modules)), file=sys.stderr); "
        "sys.exit(code)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr.strip().splitlines()[-1] == "[]"
    summary = json.loads(result.stdout)
    assert summary["completed"] == 500 and summary["algorithm"] == "example/algorithm.py"
    with open(out / "job_statistics.csv", newline="") as handle:
        assert len(list(csv.DictReader(handle))) == 500
    assert not Path(tmp_path / "data").exists()  # nothing written where the configuration points
