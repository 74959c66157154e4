"""ElastiSim workloads: the jobs file and the application models it names (001 §4.1-4.2).

A job asks for nodes (`num_nodes`, or `num_nodes_min`/`num_nodes_max` for moldable, malleable,
evolving and
adaptive jobs) and runs an application model: phases (repeated `iterations` times, a scheduling
point after each
iteration unless switched off) of tasks (compute/communication, I/O, delays, nested sequences),
plus the one-time
phases `on_init`, `on_reconfiguration` and `on_expansion`. Payloads are numbers, ExprTk expressions
in the
resource variables and the job's arguments, or (rigid jobs) explicit vectors and matrices.

Paths in a jobs file resolve against the working directory, as in ElastiSim. Every error names the
file, the
job (its position in the file) or the task (its place in the model), and the field.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from cosched.errors import InputError
from cosched.inputs import MAX_NODES, MAX_SECONDS, check_number, parse_json
from cosched.simulator.elastic.expressions import RESOURCE_VARIABLES, Expressions, argument_value

__all__ = [
    "JOB_TYPES",
    "VECTOR_PATTERNS",
    "MATRIX_PATTERNS",
    "Task",
    "Phase",
    "ApplicationModel",
    "JobSpec",
    "load_jobs",
    "load_application_model",
    "ELASTIC_TYPES",
    "check_platform_fit",
    "MAX_TASK_RUNS",
    "MAX_NESTING",
]

JOB_TYPES = ("rigid", "moldable", "malleable", "evolving", "adaptive")  # ElastiSim's JobType order
ELASTIC_TYPES = (
    "malleable",
    "evolving",
    "adaptive",
)  # jobs with scheduling points (reconfigurable at runtime)
# ElastiSim's names; "total" is the old spelling of "all_ranks"
VECTOR_PATTERNS = (
    "uniform",
    "all_ranks",
    "total",
    "root_only",
    "even_ranks",
    "odd_ranks",
    "vector",
)
MATRIX_PATTERNS = (
    "all_to_all",
    "gather",
    "scatter",
    "master_worker",
    "ring",
    "ring_clockwise",
    "ring_counter_clockwise",
    "matrix",
)
TASK_TYPES = (
    "cpu",
    "gpu",
    "pfs_read",
    "pfs_write",
    "bb_read",
    "bb_write",
    "idle",
    "busy_wait",
    "sequence",
)
# the keys ElastiSim reads (its Utility.cpp); any other key is refused, so a misspelt one does not
# pass silently
JOB_KEYS = (
    "type",
    "submit_time",
    "walltime",
    "num_nodes",
    "num_gpus_per_node",
    "num_nodes_min",
    "num_nodes_max",
    "num_gpus_per_node_min",
    "num_gpus_per_node_max",
    "application_model",
    "arguments",
    "attributes",
)
PHASE_KEYS = (
    "tasks",
    "iterations",
    "scheduling_point",
    "final_scheduling_point",
    "barrier",
    "evolving_request",
)
TASK_KEYS = (
    "type",
    "name",
    "iterations",
    "synchronized",
    "async",
    "coupled",
    "flops",
    "computation_pattern",
    "bytes",
    "communication_pattern",
    "pattern",
    "delay",
    "tasks",
)
MAX_NESTING = 32  # sequences inside sequences
MAX_TASK_RUNS = (
    10**7
)  # task executions one job implies (phase iterations x task iterations): beyond, refused
# the variables an evolving request sees besides the resource variables (ElastiSim's Job.cpp
# additionalArguments)
REQUEST_VARIABLES = ("num_nodes_min", "num_nodes_max")


@dataclass(frozen=True, eq=False)
class Task:
    """One task of a model; payloads are numbers, expression texts or (rigid jobs) lists."""

    kind: str
    where: str  # its place in the model, for error messages
    name: str = ""
    iterations: object = 1
    synchronized: bool = False
    asynchronous: bool = False
    coupled: bool = False
    flops: object = None
    computation_pattern: str | None = None
    bytes: object = None
    communication_pattern: str | None = None
    pattern: str | None = None
    delay: object = None
    tasks: tuple = ()


@dataclass(frozen=True, eq=False)
class Phase:
    """A phase: its tasks, repeated `iterations` times; scheduling points after iterations (001
    §4.1)."""

    tasks: tuple[Task, ...]
    iterations: object = 1
    scheduling_point: bool = True
    final_scheduling_point: bool = True
    barrier: bool = True
    evolving_request: str | None = None
    where: str = ""


@dataclass(frozen=True, eq=False)
class ApplicationModel:
    """The phases of an application and its three one-time phases (None where the model has
    none)."""

    source: str
    phases: tuple[Phase, ...]
    on_init: Phase | None = None
    on_reconfiguration: Phase | None = None
    on_expansion: Phase | None = None

    def all_tasks(self):
        """Every task (sequences included) with the phase holding it."""

        def walk(tasks):
            for task in tasks:
                yield task
                yield from walk(task.tasks)

        for phase in (self.on_init, self.on_reconfiguration, self.on_expansion, *self.phases):
            if phase is not None:
                yield from ((phase, task) for task in walk(phase.tasks))


@dataclass(eq=False)
class JobSpec:
    """One job of the jobs file; `identifier` is ElastiSim's id (submission order)."""

    identifier: int
    position: int  # index in the jobs file
    type: str
    submit_time: float
    walltime: float
    num_nodes_min: int
    num_nodes_max: int
    num_gpus_per_node_min: int
    num_gpus_per_node_max: int
    model: ApplicationModel
    arguments: dict = field(default_factory=dict)
    attributes: dict = field(default_factory=dict)
    variables: dict = field(default_factory=dict)  # numeric arguments as ExprTk sees them
    phase_iterations: tuple = ()


def _flag(value, *, source, where, name, default):
    if value is None:
        return default
    if not isinstance(value, bool):
        raise InputError(
            f"must be true or false, got {value!r}", source=source, field=f"{where}: {name}"
        )
    return value


def _payload(value, *, source, where, name, required, vector_ok=True):
    if value is None:
        if required:
            raise InputError("missing", source=source, field=f"{where}: {name}")
        return None
    if isinstance(value, bool):
        raise InputError(
            f"must be a number or an expression, got {value!r}",
            source=source,
            field=f"{where}: {name}",
        )
    if isinstance(value, (int, float)):
        return float(
            check_number(value, source=source, field=f"{where}: {name}", minimum=0, text=False)
        )
    if isinstance(value, str):
        if not value.strip():
            raise InputError("empty expression", source=source, field=f"{where}: {name}")
        return value
    if isinstance(value, list) and vector_ok:
        return tuple(
            float(
                check_number(item, source=source, field=f"{where}: {name}", minimum=0, text=False)
            )
            for item in value
        )
    raise InputError(
        f"must be a number or an expression, got {type(value).__name__}",
        source=source,
        field=f"{where}: {name}",
    )


def _pattern(value, known, *, source, where, name):
    if not isinstance(value, str) or value.lower() not in known:
        raise InputError(
            f"must be one of {', '.join(known)}, got {value!r}",
            source=source,
            field=f"{where}: {name}",
        )
    value = value.lower()
    return "all_ranks" if value == "total" else value


def _unknown_keys(raw: dict, known, *, source, where) -> None:
    unknown = [key for key in raw if key not in known]
    if unknown:
        raise InputError(
            f"unknown key {unknown[0]!r}; known: {', '.join(known)}",
            source=source,
            field=f"{where}: {unknown[0]}",
        )


def _task(raw, *, source, where, depth=0) -> Task:
    if not isinstance(raw, dict):
        raise InputError("a task must be an object", source=source, field=where)
    if depth > MAX_NESTING:
        raise InputError(
            f"sequences nested more than {MAX_NESTING} deep", source=source, field=where
        )
    _unknown_keys(raw, TASK_KEYS, source=source, where=where)
    kind = _type(raw, TASK_TYPES, source=source, where=where)
    name = raw.get("name") if isinstance(raw.get("name"), str) else ""
    if name:
        where = f"{where} ({name!r})"
    common = dict(
        kind=kind,
        where=where,
        name=name,
        iterations=_payload(
            raw.get("iterations", 1),
            source=source,
            where=where,
            name="iterations",
            required=True,
            vector_ok=False,
        ),
        synchronized=_flag(
            raw.get("synchronized"), source=source, where=where, name="synchronized", default=False
        ),
    )
    if kind in ("cpu", "gpu"):
        flops = _payload(raw.get("flops"), source=source, where=where, name="flops", required=False)
        size = _payload(raw.get("bytes"), source=source, where=where, name="bytes", required=False)
        if flops is None and size is None:
            raise InputError(
                "a compute task needs flops, bytes or both", source=source, field=f"{where}: flops"
            )
        computation = (
            None
            if flops is None
            else _pattern(
                raw.get("computation_pattern"),
                VECTOR_PATTERNS,
                source=source,
                where=where,
                name="computation_pattern",
            )
        )
        communication = (
            None
            if size is None
            else _pattern(
                raw.get("communication_pattern"),
                MATRIX_PATTERNS,
                source=source,
                where=where,
                name="communication_pattern",
            )
        )
        if kind == "gpu" and communication == "matrix":
            raise InputError(
                "the matrix pattern is not available to GPU tasks",
                source=source,
                field=f"{where}: communication_pattern",
            )
        return Task(
            **common,
            flops=flops,
            computation_pattern=computation,
            bytes=size,
            communication_pattern=communication,
            coupled=_flag(
                raw.get("coupled"), source=source, where=where, name="coupled", default=False
            ),
        )
    if kind in ("pfs_read", "pfs_write", "bb_read", "bb_write"):
        return Task(
            **common,
            bytes=_payload(
                raw.get("bytes"), source=source, where=where, name="bytes", required=True
            ),
            pattern=_pattern(
                raw.get("pattern"), VECTOR_PATTERNS, source=source, where=where, name="pattern"
            ),
            asynchronous=_flag(
                raw.get("async"), source=source, where=where, name="async", default=False
            ),
        )
    if kind in ("idle", "busy_wait"):
        return Task(
            **common,
            delay=_payload(
                raw.get("delay"), source=source, where=where, name="delay", required=True
            ),
            pattern=_pattern(
                raw.get("pattern", "uniform"),
                VECTOR_PATTERNS,
                source=source,
                where=where,
                name="pattern",
            ),
        )
    tasks = raw.get("tasks")
    if not isinstance(tasks, list) or not tasks:
        raise InputError(
            "a sequence needs a non-empty list of tasks", source=source, field=f"{where}: tasks"
        )
    return Task(
        **common,
        tasks=tuple(
            _task(item, source=source, where=f"{where}.tasks[{index}]", depth=depth + 1)
            for index, item in enumerate(tasks)
        ),
    )


def _phase(raw, *, source, where, one_time: bool) -> Phase:
    if one_time and isinstance(raw, list):  # the documentation's short form: a list of tasks
        raw = {"tasks": raw}
    if not isinstance(raw, dict):
        raise InputError(
            "a phase must be an object with a list 'tasks'", source=source, field=where
        )
    _unknown_keys(raw, PHASE_KEYS, source=source, where=where)
    tasks = raw.get("tasks")
    if not isinstance(tasks, list):
        raise InputError("missing or not a list", source=source, field=f"{where}: tasks")
    iterations = _payload(
        raw.get("iterations", 1),
        source=source,
        where=where,
        name="iterations",
        required=True,
        vector_ok=False,
    )
    if one_time and isinstance(iterations, str):
        raise InputError(
            "one-time phases take a number of iterations, not an expression",
            source=source,
            field=f"{where}: iterations",
        )
    request = raw.get("evolving_request")
    if request is not None and (one_time or not isinstance(request, str)):
        raise InputError(
            "must be an expression on a regular phase",
            source=source,
            field=f"{where}: evolving_request",
        )
    return Phase(
        tuple(
            _task(item, source=source, where=f"{where}.tasks[{index}]")
            for index, item in enumerate(tasks)
        ),
        iterations,
        _flag(
            raw.get("scheduling_point"),
            source=source,
            where=where,
            name="scheduling_point",
            default=not one_time,
        ),
        _flag(
            raw.get("final_scheduling_point"),
            source=source,
            where=where,
            name="final_scheduling_point",
            default=True,
        ),
        _flag(raw.get("barrier"), source=source, where=where, name="barrier", default=not one_time),
        request,
        where,
    )


def load_application_model(path: str | os.PathLike) -> ApplicationModel:
    """An application model file (JSON)."""
    source = os.fspath(path)
    document = parse_json(source)
    if (
        not isinstance(document, dict)
        or not isinstance(document.get("phases"), list)
        or not document["phases"]
    ):
        raise InputError(
            "an application model is an object with a non-empty list 'phases'",
            source=source,
            field="phases",
        )
    one_time = {
        key: None
        if document.get(key) is None
        else _phase(document[key], source=source, where=key, one_time=True)
        for key in ("on_init", "on_reconfiguration", "on_expansion")
    }
    phases = tuple(
        _phase(raw, source=source, where=f"phases[{index}]", one_time=False)
        for index, raw in enumerate(document["phases"])
    )
    return ApplicationModel(source, phases, **one_time)


def _count(raw, key, *, source, where, minimum=0, default=None):
    value = raw.get(key, default)
    if value is None:
        raise InputError("missing", source=source, field=f"{where}: {key}")
    return check_number(
        value,
        source=source,
        field=f"{where}: {key}",
        integer=True,
        minimum=minimum,
        limit=MAX_NODES,
        text=False,
    )


def _job_sizes(raw: dict, kind: str, *, source, where: str) -> tuple[int, int, int, int]:
    """(nodes min, nodes max, GPUs per node min, max) of a job of type `kind`."""
    if kind == "rigid":
        nodes = _count(raw, "num_nodes", source=source, where=where, minimum=1)
        gpus = _count(raw, "num_gpus_per_node", source=source, where=where, default=0)
        return nodes, nodes, gpus, gpus
    nodes_min = _count(raw, "num_nodes_min", source=source, where=where, minimum=1)
    nodes_max = _count(raw, "num_nodes_max", source=source, where=where, minimum=1)
    gpus_min = _count(raw, "num_gpus_per_node_min", source=source, where=where, default=0)
    gpus_max = _count(raw, "num_gpus_per_node_max", source=source, where=where, default=0)
    if nodes_max < nodes_min:
        raise InputError(
            f"below num_nodes_min={nodes_min}", source=source, field=f"{where}: num_nodes_max"
        )
    if gpus_max < gpus_min:
        raise InputError(
            f"below num_gpus_per_node_min={gpus_min}",
            source=source,
            field=f"{where}: num_gpus_per_node_max",
        )
    return nodes_min, nodes_max, gpus_min, gpus_max


def _job_model(raw: dict, models: dict, *, source, where: str):
    """The job's application model, each file read once (`models` by path)."""
    path = raw.get("application_model")
    if not isinstance(path, str) or not path:
        raise InputError(
            "missing or not a path", source=source, field=f"{where}: application_model"
        )
    if path not in models:
        try:
            exists = Path(path).is_file()
        except (OSError, ValueError):  # a name too long for the file system, a NUL byte
            exists = False
        if not exists:
            raise InputError(
                f"no such file: {path} (relative paths resolve against the working directory "
                f"{os.getcwd()})",
                source=source,
                field=f"{where}: application_model",
            )
        models[path] = load_application_model(path)
    return models[path]


def _argument_variables(arguments: dict, expressions, *, source, where: str) -> dict:
    """The numeric job arguments, as expression variables (string arguments are not numbers)."""
    variables = {}
    for name, value in arguments.items():
        number = argument_value(value)
        if number is None and not isinstance(value, str):
            raise InputError(
                f"must be a number or a string, got {value!r}",
                source=source,
                field=f"{where}: arguments.{name}",
            )
        if number is not None:
            problem = expressions.variable_name_problem(name)
            if problem is not None:
                raise InputError(problem, source=source, field=f"{where}: arguments.{name}")
            variables[name] = number
    return variables


def _type(raw: dict, types, *, source, where: str) -> str:
    """The `type` of a job or task, lower-cased, or an error naming the accepted ones."""
    kind = raw.get("type")
    if not isinstance(kind, str) or kind.lower() not in types:
        raise InputError(
            f"must be one of {', '.join(types)}, got {kind!r}",
            source=source,
            field=f"{where}: type",
        )
    return kind.lower()


def _job(raw, position, *, source, models, expressions) -> JobSpec:
    where = f"jobs[{position}]"
    if not isinstance(raw, dict):
        raise InputError("a job must be an object", source=source, field=where)
    _unknown_keys(raw, JOB_KEYS, source=source, where=where)
    kind = _type(raw, JOB_TYPES, source=source, where=where)
    submit = check_number(
        raw.get("submit_time"),
        source=source,
        field=f"{where}: submit_time",
        minimum=0,
        limit=MAX_SECONDS,
        text=False,
    )
    walltime = check_number(
        raw.get("walltime", 0),
        source=source,
        field=f"{where}: walltime",
        minimum=0,
        limit=MAX_SECONDS,
        text=False,
    )
    nodes_min, nodes_max, gpus_min, gpus_max = _job_sizes(raw, kind, source=source, where=where)
    model = _job_model(raw, models, source=source, where=where)
    arguments, attributes = raw.get("arguments") or {}, raw.get("attributes") or {}
    for key, value in (("arguments", arguments), ("attributes", attributes)):
        if not isinstance(value, dict):
            raise InputError("must be an object", source=source, field=f"{where}: {key}")
    variables = _argument_variables(arguments, expressions, source=source, where=where)
    if kind != "rigid" and any(phase.evolving_request is not None for phase in model.phases):
        for name, value in (("num_nodes_min", nodes_min), ("num_nodes_max", nodes_max)):
            variables.setdefault(name, float(value))  # evolving requests only (checked below)
    spec = JobSpec(
        -1,
        position,
        kind,
        float(submit),
        float(walltime),
        nodes_min,
        nodes_max,
        gpus_min,
        gpus_max,
        model,
        dict(arguments),
        dict(attributes),
        variables,
    )
    spec.phase_iterations = tuple(
        _phase_iterations(spec, phase, expressions) for phase in model.phases
    )
    _check_expressions(spec, expressions)
    _check_task_runs(spec, expressions, source)
    return spec


def _phase_iterations(spec: JobSpec, phase: Phase, expressions: Expressions) -> int:
    """Phase iterations use the job's arguments only, never resources (001 §4.1); ElastiSim
    truncates to int."""
    if isinstance(phase.iterations, (int, float)):
        return int(phase.iterations)
    value = expressions.evaluate(
        str(phase.iterations),
        spec.variables,
        where=f"{phase.where}: iterations (job {spec.position})",
        source=spec.model.source,
    )
    if value < 0:
        raise InputError(
            f"iterations {phase.iterations!r} evaluate to {value:g} for job {spec.position}",
            source=spec.model.source,
            field=f"{phase.where}: iterations",
        )
    return int(value)


def _check_expressions(spec: JobSpec, expressions: Expressions) -> None:
    """Compile every expression of the job's model over its variables, so errors surface before the
    run.

    Tasks do not see `num_nodes_min`/`num_nodes_max` (ElastiSim gives them to evolving requests
    only)."""
    request_names = tuple(sorted(set(spec.variables) | set(RESOURCE_VARIABLES)))
    names = tuple(
        name for name in request_names if name not in REQUEST_VARIABLES or name in spec.arguments
    )
    for _phase, task in spec.model.all_tasks():
        for key in ("iterations", "flops", "bytes", "delay"):
            value = getattr(task, key)
            if key != "iterations" and (
                isinstance(value, tuple) or _pattern_of(task, key) in EXPLICIT
            ):
                _check_explicit(spec, task, key, value)
            elif isinstance(value, str):
                expressions.compile(
                    value,
                    names,
                    where=f"{task.where}: {key} (job {spec.position})",
                    source=spec.model.source,
                )
    for phase in spec.model.phases:
        if phase.evolving_request is not None:
            expressions.compile(
                phase.evolving_request,
                request_names,
                where=f"{phase.where}: evolving_request (job {spec.position})",
                source=spec.model.source,
            )


def _check_task_runs(spec: JobSpec, expressions: Expressions, source: str) -> None:
    """Refuse a job whose phases imply more than MAX_TASK_RUNS task executions at its smallest or
    largest size
    (an iteration count of 1e10 would keep the simulation busy for days): a refusal naming the
    limit instead.
    Iteration expressions that are not finite at a bound are left to the run, which names them if
    reached."""

    def runs(tasks, variables) -> float:
        total = 0.0
        for task in tasks:
            repeat = task.iterations
            if isinstance(repeat, str):
                try:
                    repeat = expressions.evaluate(repeat, variables, where=task.where)
                except InputError:
                    return 0.0
            total += max(int(repeat), 0) * (
                runs(task.tasks, variables) if task.kind == "sequence" else 1
            )
        return total

    for nodes in sorted({spec.num_nodes_min, spec.num_nodes_max}):
        variables = dict(
            spec.variables,
            num_nodes=float(nodes),
            num_gpus_per_node=float(spec.num_gpus_per_node_min),
            num_gpus=float(nodes * spec.num_gpus_per_node_min),
            phase_iteration=0.0,
        )
        total = sum(
            iterations * max(runs(phase.tasks, variables), 1.0)
            for phase, iterations in zip(spec.model.phases, spec.phase_iterations)
        )
        if total > MAX_TASK_RUNS:
            raise InputError(
                f"job {spec.position} implies {total:.3g} task executions on {nodes} node(s), "
                f"above "
                f"the limit of {MAX_TASK_RUNS:.0e} (phase iterations x task iterations)",
                source=source,
                field=f"jobs[{spec.position}]: application_model",
            )


def check_platform_fit(jobs: list[JobSpec], platform, source: str) -> None:
    """Refuse jobs whose GPU request no set of nodes of the platform can meet (a GPU request on a
    platform without
    GPUs, or with fewer GPUs per node)."""
    for spec in jobs:
        need = spec.num_gpus_per_node_min
        if need > 0:
            fitting = int((platform.gpus >= need).sum())
            if fitting < spec.num_nodes_min:
                key = "num_gpus_per_node" if spec.type == "rigid" else "num_gpus_per_node_min"
                have = (
                    f"{fitting} node(s) with {need} or more GPUs"
                    if platform.gpus.max() > 0
                    else "no GPUs"
                )
                raise InputError(
                    f"job {spec.position} asks for {need} GPU(s) per node on {spec.num_nodes_min} "
                    f"node(s); the platform {platform.source} has {have}",
                    source=source,
                    field=f"jobs[{spec.position}]: {key}",
                )


EXPLICIT = ("vector", "matrix")  # the patterns whose values are explicit lists


def _pattern_of(task: Task, key: str) -> str | None:
    if key == "bytes" and task.kind in ("cpu", "gpu"):
        return task.communication_pattern
    return task.computation_pattern if key == "flops" else task.pattern


def _check_explicit(spec: JobSpec, task: Task, key: str, values) -> None:
    """Explicit vectors and matrices: rigid jobs only, one value per node (per node pair)."""
    pattern = _pattern_of(task, key)
    if values is None:
        return
    if spec.type != "rigid":
        raise InputError(
            f"explicit lists are for rigid jobs only; job {spec.position} is {spec.type}",
            source=spec.model.source,
            field=f"{task.where}: {key}",
        )
    expected = spec.num_nodes_min**2 if pattern == "matrix" else spec.num_nodes_min
    if (
        pattern not in ("vector", "matrix")
        or not isinstance(values, tuple)
        or len(values) != expected
    ):
        got = f"{len(values)} values" if isinstance(values, tuple) else repr(values)
        raise InputError(
            f"a list needs the pattern 'vector' ({spec.num_nodes_min} values) or 'matrix' "
            f"({spec.num_nodes_min**2} values) for job {spec.position}; got {got} with "
            f"{pattern!r}",
            source=spec.model.source,
            field=f"{task.where}: {key}",
        )


def load_jobs(path: str | os.PathLike, expressions: Expressions | None = None) -> list[JobSpec]:
    """The jobs of a jobs file, ordered and numbered as ElastiSim submits them (submit time, then
    file order)."""
    source = os.fspath(path)
    document = parse_json(source)
    if not isinstance(document, dict) or not isinstance(document.get("jobs"), list):
        raise InputError("a jobs file is an object with a list 'jobs'", source=source, field="jobs")
    if not document["jobs"]:
        raise InputError("no jobs", source=source, field="jobs")
    expressions = expressions or Expressions()
    models: dict[str, ApplicationModel] = {}
    jobs = [
        _job(raw, position, source=source, models=models, expressions=expressions)
        for position, raw in enumerate(document["jobs"])
    ]
    jobs.sort(key=lambda job: (job.submit_time, job.position))
    for identifier, job in enumerate(jobs):
        job.identifier = identifier
    return jobs
