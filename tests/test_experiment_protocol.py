"""One experiment protocol: every experiment command is an `ExperimentSpec` that round-trips through
JSON, run by the one `run_experiment` of `cosched.grid`."""

from __future__ import annotations

import json

import numpy as np
import pytest

from cosched.errors import InputError
from cosched.grid import ExperimentSpec, run_experiment


def _strategy():
    from cosched.strategies.experiment import StrategyExperiment

    return StrategyExperiment(
        n=4, instances=2, alpha_ranges=((0.3, 0.4),), ks=(0.6, 0.9), quantum=5.0
    )


def _cosched():
    from cosched.simulator.experiment import preset_spec

    return preset_spec("thesis", jobs=20, experiments=2, schedulers=["easy", "easy-co"])


def _elastic():
    from cosched.simulator.elastic.experiment import experiment_spec
    from cosched.simulator.elastic.traces import ElasticMarking

    return experiment_spec(
        "kth-sp2",
        jobs=40,
        marking=ElasticMarking(0.5, seed=3),
        replicates=2,
        policies=["fcfs-rigid", "fcfs-malleable"],
    )


def _hybrid(by: str = "user"):
    from cosched.simulator.compare import load_inputs
    from cosched.simulator.hybrid.experiment import HybridExperiment
    from cosched.simulator.hybrid.workload import trace_projects

    platform, workload = load_inputs("kth-sp2", "kth-sp2", limit=40)
    projects = trace_projects(workload.source or "kth-sp2", workload.job_id, by)
    return HybridExperiment(
        workload, projects, platform, typings=2, mechanisms=("baseline",), seed=5, source="kth-sp2"
    )


SPECS = {
    "experiment": _strategy,
    "experiment-sim": _cosched,
    "experiment-elastic": _elastic,
    "experiment-hybrid": _hybrid,
}


@pytest.mark.parametrize("command", SPECS)
def test_every_experiment_is_a_spec_whose_json_round_trips(command):
    spec = SPECS[command]()
    assert isinstance(spec, ExperimentSpec) and spec.command == command
    document = json.loads(json.dumps(spec.to_json()))
    again = type(spec).from_json(document)
    assert again.to_json() == spec.to_json()
    assert again.cells() == spec.cells() and len(spec.cells()) > 0
    assert (
        set(spec.key) <= set(spec.columns)
        and spec.grid_file in spec.owned
        and spec.spec_file in spec.owned
    )


def test_hybrid_round_trip_finds_the_grouping_of_the_projects():
    spec = _hybrid("job")
    again = type(spec).from_json(spec.to_json())
    np.testing.assert_array_equal(again.projects, spec.projects)


def test_a_changed_input_is_refused_by_from_json():
    spec = _elastic()
    document = {**spec.to_json(), "workload_digest": "0" * 16}
    with pytest.raises(InputError, match="digest"):
        type(spec).from_json(document)


def test_every_experiment_module_exports_the_one_run_experiment():
    from cosched.simulator import experiment as cosched_experiment
    from cosched.simulator.elastic import experiment as elastic_experiment
    from cosched.simulator.hybrid import experiment as hybrid_experiment
    from cosched.strategies import experiment as strategy_experiment

    for module in (strategy_experiment, cosched_experiment, elastic_experiment, hybrid_experiment):
        assert module.run_experiment is run_experiment
        assert "run_experiment" in module.__all__


def test_run_experiment_refuses_what_is_not_a_spec(tmp_path):
    with pytest.raises(TypeError, match="ExperimentSpec"):
        run_experiment({"n": 4}, tmp_path / "out")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "old, module, new",
    [
        ("ExperimentConfig", "cosched.strategies.experiment", "StrategyExperiment"),
        ("PRESETS", "cosched.strategies.experiment", "STRATEGY_PRESETS"),
        ("COLUMNS", "cosched.strategies.experiment", "RESULT_COLUMNS"),
        ("ExperimentSpec", "cosched.simulator.experiment", "CoschedExperiment"),
        ("PRESETS", "cosched.simulator.experiment", "COSCHED_PRESETS"),
        ("WORKLOADS", "cosched.simulator.experiment", "WORKLOAD_MODES"),
        ("PRESETS", "cosched.simulator.elastic.experiment", "ELASTIC_PRESETS"),
        ("HybridSpec", "cosched.simulator.hybrid.experiment", "HybridExperiment"),
        ("WORK_FLOOR", "cosched.theory.testing", "SEARCH_WORK_FLOOR"),
        ("TIE_TOLERANCE", "cosched.strategies.fcs", "SPEED_TIE_TOLERANCE"),
        ("TIE_TOLERANCE", "cosched.strategies.search", "ACQUISITION_TIE_TOLERANCE"),
        ("PRESETS", "cosched.data", "DATA_PRESETS"),
        ("data_path", "cosched.simulator.data", "example_path"),
        ("write_plots", "cosched.simulator.elastic.plots", "write_elastic_plots"),
    ],
)
def test_old_names_still_work_with_a_warning_naming_the_new_one(old, module, new):
    import importlib

    imported = importlib.import_module(module)
    with pytest.warns(DeprecationWarning, match=rf"use {module}\.{new} \(removed in 0\.4\.0\)"):
        value = getattr(imported, old)
    assert value is getattr(imported, new)


def test_the_old_spread_speedup_keyword_warns_and_gives_the_same_run():
    from cosched.simulator.experiment import experiment_workload, preset_spec
    from cosched.simulator.simulation import simulate

    spec = preset_spec("example-small", jobs=12, experiments=1, schedulers=["easy-co"])
    workload = experiment_workload(spec, 0)
    new = simulate(workload, spec.platform, "easy-co", heatmap=spec.heatmap, alone_speedup=1.3)
    with pytest.warns(DeprecationWarning, match=r"use alone_speedup= \(removed in 0\.4\.0\)"):
        old = simulate(workload, spec.platform, "easy-co", heatmap=spec.heatmap, spread_speedup=1.3)
    np.testing.assert_array_equal(old.end, new.end)
    with pytest.raises(TypeError, match="not both"), pytest.warns(DeprecationWarning):
        simulate(
            workload,
            spec.platform,
            "easy-co",
            heatmap=spec.heatmap,
            alone_speedup=1.3,
            spread_speedup=1.3,
        )


def test_a_spec_file_of_an_older_version_resumes_with_a_warning(tmp_path):
    from cosched.simulator.experiment import CO_OPTIONS, preset_spec

    spec = preset_spec(
        "example-small", jobs=10, experiments=1, schedulers=["easy"], compact_below=1
    )
    run_experiment(spec, tmp_path, workers=1, progress=False, plots=False)
    stored = json.loads((tmp_path / "spec.json").read_text())
    for name in (*CO_OPTIONS, "reference", "heatmap_default"):
        stored.pop(name)
    (tmp_path / "spec.json").write_text(json.dumps(stored))
    with pytest.warns(FutureWarning, match=r"before 0\.2\.0.*--force \(removed in 0\.4\.0\)"):
        run_experiment(spec, tmp_path, workers=1, progress=False, plots=False)


def test_compare_into_a_csv_file_still_works_with_a_warning(tmp_path):
    from cosched.simulator.compare import compare

    with pytest.warns(FutureWarning, match=r"--out x\.csv .*give a folder.*\(removed in 0\.4\.0\)"):
        compare("kth-sp2", "kth-sp2", ["easy"], limit=30, out=tmp_path / "x.csv")
    assert (tmp_path / "x.csv").exists()
