"""Plots by one rule (docs/cli-conventions.md): every command that writes an output folder writes
its plots into DIR/plots/ when --plots is given and none otherwise, and matplotlib is imported
only when plots are asked for. Every figure the commands save keeps its text inside the canvas
(matplotlib's tight bbox against the figure).

The commands that take more than a few seconds with plots run under `-m slow` (CI runs it too).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cosched.cli import main

TEXT_MARGIN_INCHES = 0.02  # how far a tight bbox may pass the canvas edge (antialiasing, rounding)
HEADER = "name_A,procs_A,compact_A,name_B,procs_B,compact_B,co_A_B,co_B_A\n"
WORKLOAD = "job_id,submit_time,run_time,cores,estimate\n" + "".join(
    f"{i},{i * 7 % 50},{5 + i % 13},{1 + i % 6},{20 + i % 13}\n" for i in range(20)
)
KTH = ["--workload", "kth-sp2", "--platform", "kth-sp2"]

# command -> (arguments after its name, {w}: the small CSV workload; plots written into DIR/plots/)
CASES = {
    "simulate": (
        ["--workload", "{w}", "--platform", "grvingt"],
        {"gantt.png", "utilization_queue.png", "wait_times.png"},
    ),
    "simulate-hybrid": (
        ["simulate", *KTH, "--limit", "60", "--hybrid", "n-paa"],
        {"gantt.png", "utilization_queue.png", "wait_times.png"},
    ),
    "simulate-elastic": (
        ["simulate", *KTH, "--limit", "60", "--elastic-fraction", "0.5"],
        {"gantt.png", "utilization_queue.png", "wait_times.png"},
    ),
    "compare": (
        ["--workload", "{w}", "--platform", "grvingt", "--scheduler", "easy,fcfs"],
        {"compare.png"},
    ),
    "experiment-elastic": (
        ["--limit", "50", "--workers", "1"],
        {"makespan.png", "wait_turnaround.png"},
    ),
    "experiment-hybrid": (
        [*KTH, "--limit", "150", "--typings", "1", "--mechanism", "n-paa", "--workers", "1"],
        {"turnaround_by_type.png", "preemption_ratio.png"},
    ),
    "measure": (
        ["--kernels", "compute", "--window", "0.3", "--warmup", "0.1"],
        {"heatmap.png", "speed_by_size.png"},
    ),
}
SLOW_CASES = {
    "experiment": (
        ["--preset", "small", "--instances", "1", "--n", "4", "--k", "0.8", "--workers", "1"],
        {"fig6.png", "fig7.png"},
    ),
    "worst-case": (["--n", "3", "--budget", "20"], {"convergence.png"}),
    "experiment-sim": (
        [
            "--preset",
            "example-small",
            "--jobs",
            "20",
            "--experiments",
            "2",
            "--scheduler",
            "sjf-co,popularity",
            "--workers",
            "1",
        ],
        {
            "correlation.png",
            "box_makespan_speedup.png",
            "speedup_time_popularity.png",
            "pareto_mean_slowdown_vs_makespan_speedup.png",
        },
    ),
    "measure-validate": (
        [
            "--kernels",
            "compute",
            "--runs",
            "2",
            "--repeats",
            "1",
            "--seconds",
            "0.3",
            "--max-corunners",
            "1",
            "--max-threads",
            "1",
        ],
        {"validation.png"},
    ),
    "execute": (["--kernels", "compute,compute", "--kernel-work", "5"], {"execution.png"}),
}
ALL = {**CASES, **SLOW_CASES}
PARAMS = [pytest.param(name, id=name) for name in CASES] + [
    pytest.param(name, id=name, marks=pytest.mark.slow) for name in SLOW_CASES
]


def _argv(name: str, tmp_path: Path, out: Path) -> list[str]:
    workload = tmp_path / "w.csv"
    workload.write_text(WORKLOAD)
    arguments, _ = ALL[name]
    command = [name] if arguments[:1] != ["simulate"] else []
    return [*command, *(a.format(w=workload) for a in arguments), "--out", str(out), "--quiet"]


def text_outside(figure) -> list[str]:
    """What leaves the canvas: [] when the tight bbox fits, else the texts that stick out."""
    from matplotlib.text import Text

    figure.canvas.draw()
    renderer = figure.canvas.get_renderer()
    tight = figure.get_tightbbox(renderer)
    width, height = figure.get_size_inches()
    margin = TEXT_MARGIN_INCHES
    if (
        tight.x0 >= -margin
        and tight.y0 >= -margin
        and tight.x1 <= width + margin
        and tight.y1 <= height + margin
    ):
        return []
    dpi = figure.dpi
    outside = []
    for text in figure.findobj(Text):
        if not text.get_visible() or not text.get_text().strip() or not text.get_in_layout():
            continue
        box = text.get_window_extent(renderer)
        if (
            box.x0 < -margin * dpi
            or box.y0 < -margin * dpi
            or box.x1 > (width + margin) * dpi
            or box.y1 > (height + margin) * dpi
        ):
            outside.append(text.get_text())
    return outside or [f"tight bbox {tight.bounds} beyond the {width}x{height} in canvas"]


@pytest.fixture
def checked_figures(monkeypatch):
    """Every figure saved while the test runs: (file name, texts outside the canvas)."""
    from matplotlib.figure import Figure

    saved: list[tuple[str, list[str]]] = []
    original = Figure.savefig

    def savefig(self, fname, *args, **kwargs):
        if kwargs.get("bbox_inches") != "tight":  # a tight save grows the canvas to hold everything
            saved.append((Path(str(fname)).name, text_outside(self)))
        return original(self, fname, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", savefig)
    return saved


@pytest.mark.parametrize("name", PARAMS)
def test_plots_go_into_out_plots_when_asked_and_keep_their_text_inside(
    name, tmp_path, capsys, checked_figures
):
    out = tmp_path / "run"
    assert main([*_argv(name, tmp_path, out), "--plots"]) == 0, capsys.readouterr().err
    written = {path.name for path in (out / "plots").iterdir()}
    assert ALL[name][1] <= written
    assert not [path for path in out.iterdir() if path.suffix == ".png"]  # no plot beside the data
    assert checked_figures and not [(file, texts) for file, texts in checked_figures if texts]


@pytest.mark.parametrize("name", PARAMS)
def test_no_plots_without_the_flag(name, tmp_path, capsys):
    out = tmp_path / "run"
    assert main(_argv(name, tmp_path, out)) == 0, capsys.readouterr().err
    assert not (out / "plots").exists()
    assert not list(out.rglob("*.png"))
    assert main([*_argv(name, tmp_path, tmp_path / "again"), "--no-plots"]) == 0
    assert not list((tmp_path / "again").rglob("*.png"))


def test_matplotlib_is_imported_only_when_plots_are_asked_for(tmp_path):
    workload = tmp_path / "w.csv"
    workload.write_text(WORKLOAD)
    script = (
        "import sys; from cosched.cli import main; code = main(sys.argv[1:]); "
        "print(json.dumps([code, 'matplotlib' in sys.modules]))"
    )
    for flags, imported in (([], False), (["--plots"], True)):
        done = subprocess.run(
            [
                sys.executable,
                "-c",
                "import json; " + script,
                "simulate",
                "--workload",
                str(workload),
                "--platform",
                "grvingt",
                "--out",
                str(tmp_path / f"o{imported}"),
                "--quiet",
                *flags,
            ],
            capture_output=True,
            text=True,
            check=True,
        )
        assert json.loads(done.stdout.splitlines()[-1]) == [0, imported]


def test_picture_commands_keep_writing_their_picture(
    tmp_path, capsys, checked_figures, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    assert main(["demo", "--n", "3", "--quiet"]) == 0 and (tmp_path / "demo.png").exists()
    assert main(["demo", "--n", "3", "--out", "d2.png", "--no-plots", "--quiet"]) == 0
    assert not (tmp_path / "d2.png").exists()
    heatmap = tmp_path / "h.csv"
    heatmap.write_text(HEADER + "lu,4,10,cg,4,20,15,30\ncg,4,20,ep,4,5,6,7\nlu,4,10,ep,4,5,12,6\n")
    assert (
        main(["heatmap", str(heatmap), "--plots", "h.png", "--quiet"]) == 0
        and (tmp_path / "h.png").exists()
    )
    assert main(["heatmap", "aris-nas", "--plots", "aris.png", "--quiet"]) == 0
    assert not [(file, texts) for file, texts in checked_figures if texts]


@pytest.mark.parametrize("applications", [1, 2, 5, 30])
def test_measured_heatmap_keeps_its_title_inside(tmp_path, checked_figures, applications):
    """A heatmap of few applications is a small figure: its title must still fit."""
    from cosched.theory.heatmap import plot_heatmap, read_heatmap

    names = [f"application-{i}" for i in range(applications + 1)]
    rows = "".join(
        f"{a},2,10,{b},2,10,13,14\n" for i, a in enumerate(names) for b in names[i + 1 :]
    )
    path = tmp_path / "h.csv"
    path.write_text(HEADER + rows)
    plot_heatmap(read_heatmap(path), tmp_path / "h.png")
    assert checked_figures and not [(file, texts) for file, texts in checked_figures if texts]


def _elastic_scenario(folder: Path) -> Path:
    """A small ElastiSim scenario: rigid and malleable jobs of one compute phase on 6 nodes."""
    model = {
        "phases": [
            {
                "iterations": "iterations",
                "tasks": [{"type": "cpu", "flops": "flops", "computation_pattern": "all_ranks"}],
            }
        ]
    }
    (folder / "model.json").write_text(json.dumps(model))
    jobs = [
        {
            "type": kind,
            "submit_time": 5 * i,
            "num_nodes": 2,
            "num_nodes_min": 1,
            "num_nodes_max": 4,
            "arguments": {"flops": 4e9, "iterations": 3},
            "application_model": str(folder / "model.json"),
        }
        for i, kind in enumerate(["rigid", "malleable", "rigid", "malleable", "malleable"])
    ]
    for job in jobs:
        if job["type"] == "rigid":
            del job["num_nodes_min"], job["num_nodes_max"]
    (folder / "jobs.json").write_text(json.dumps({"jobs": jobs}))
    (folder / "platform.json").write_text(
        json.dumps(
            {
                "clusters": [
                    {
                        "prefix": "n",
                        "radical": "0-5",
                        "speed": 1e9,
                        "bw": 1e9,
                        "lat": 0,
                        "properties": {},
                    }
                ],
                "pfs": {"read_bw": 4e9, "write_bw": 2e9, "latency": 0},
            }
        )
    )
    config = folder / "configuration.json"
    config.write_text(
        json.dumps(
            {
                "jobs_file": str(folder / "jobs.json"),
                "platform_file": str(folder / "platform.json"),
                "schedule_on_job_submit": True,
                "schedule_on_job_finalize": True,
                "schedule_on_scheduling_point": True,
                "scheduling_interval": 0,
                "job_statistics": str(folder / "out" / "job_statistics.csv"),
                "node_utilization": str(folder / "out" / "node_utilization.csv"),
            }
        )
    )
    return config


def test_elastic_plots_keep_their_text_inside(tmp_path, capsys, checked_figures):
    """`cosched elastic --plots` (where its plots go is the elastic command's own rule)."""
    out = tmp_path / "run"
    code = main(
        [
            "elastic",
            str(_elastic_scenario(tmp_path)),
            "--scheduler",
            "fcfs-malleable",
            "--out",
            str(out),
            "--plots",
            "--quiet",
        ]
    )
    assert code == 0, capsys.readouterr().err
    assert {"gantt.png", "utilization.png", "wait_turnaround.png"} <= {
        p.name for p in out.rglob("*.png")
    }
    assert not [(file, texts) for file, texts in checked_figures if texts]
