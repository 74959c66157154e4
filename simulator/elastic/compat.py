"""The elastisim-python interface inside cosched, so ElastiSim algorithm files run unmodified (001
§5.1, §5.5).

An algorithm file written for ElastiSim imports `from elastisim_python import ...`, defines
`schedule(jobs, nodes, system)` and calls `pass_algorithm(schedule, url)` under `if __name__ ==
'__main__'`.
`load_algorithm` executes the file under another module name (so that block does not run) while a
temporary
`sys.modules['elastisim_python']` entry points at the classes below; nothing named
`elastisim_python` stays
installed. The classes keep elastisim-python's names, enum values, attributes and operations; the
simulation
updates their attributes in place between invocations instead of sending JSON over ZeroMQ.
`cosched elastic` runs the file in a child process it supervises
(`cosched.simulator.elastic.supervision`), which keeps its time limit.
"""

from __future__ import annotations

import contextlib
import importlib.util
import numbers
import operator
import os
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from cosched.errors import InputError, message_line


class Watch(Protocol):
    """Where loading a file and each call of schedule() are marked for a supervisor's time limit
    (`cosched.simulator.elastic.supervision.Watch`)."""

    def begin(self, system: dict | None = None) -> None: ...

    def end(self) -> None: ...


__all__ = [
    "InvocationType",
    "JobType",
    "JobState",
    "NodeType",
    "NodeState",
    "GpuState",
    "Gpu",
    "Job",
    "Node",
    "pass_algorithm",
    "load_algorithm",
    "MODULE_NAME",
    "AlgorithmMistake",
    "GuardedAlgorithm",
    "DEFAULT_TIME_LIMIT",
    "mistake_text",
    "refusing_os_exit",
]

MODULE_NAME = "elastisim_python"
DEFAULT_TIME_LIMIT = (
    30.0  # seconds one call of schedule() may take before the run stops (--algorithm-time-limit)
)


class AlgorithmMistake(InputError):
    """The algorithm file did something no batch system accepts; one line naming the file and the
    mistake."""


_REAL_OS_EXIT = os._exit  # a process the algorithm forks exits with it while os._exit is refused


class _OsExit(BaseException):
    """Raised in place of `os._exit(code)` called by the algorithm file (this process only)."""

    def __init__(self, code) -> None:
        super().__init__(code)
        self.code = code


@contextlib.contextmanager
def refusing_os_exit():
    """While active, `os._exit` in this process raises `_OsExit` (the algorithm file's call ends
    the run with one line, exit 2, not silently with its code); a process it forks exits as
    asked."""
    owner, previous = os.getpid(), os._exit

    def refused(code):
        if os.getpid() != owner:
            _REAL_OS_EXIT(code)
        raise _OsExit(code)

    os._exit = refused
    try:
        yield
    finally:
        os._exit = previous


def mistake_text(text: str, system) -> str:
    """An algorithm's mistake on one line with the moment it happened: the simulated time and the
    invocation."""
    kind = system.get("invocation_type")
    return f"{message_line(text)} (time {system.get('time', 0):g}, {getattr(kind, 'name', kind)})"


class _Enumeration(type):
    """A minimal Enum: members with `name` and `value`, `Kind(value)`, `Kind[name]`, iteration,
    `len`.

    The algorithm compares states and types millions of times; attribute access on `enum.Enum`
    classes costs
    three times a plain class attribute, so these enumerations are plain classes with the same
    behaviour.
    """

    def __new__(mcs, name, bases, namespace):
        values = {key: value for key, value in namespace.items() if not key.startswith("_")}
        cls = super().__new__(
            mcs, name, bases, {key: value for key, value in namespace.items() if key not in values}
        )
        cls._members = {}
        for key, value in values.items():
            member = object.__new__(cls)
            member.name, member.value = key, value
            cls._members[key] = member
            setattr(cls, key, member)
        cls._by_value = {member.value: member for member in cls._members.values()}
        return cls

    def __call__(cls, value):
        try:
            return cls._by_value[value]
        except KeyError:
            raise ValueError(f"{value!r} is not a valid {cls.__name__}") from None

    def __getitem__(cls, name):
        return cls._members[name]

    def __iter__(cls):
        return iter(cls._members.values())

    def __len__(cls):
        return len(cls._members)


if TYPE_CHECKING:  # a type checker sees enumerations: members with `name` and `value`
    from enum import Enum as _Member
else:

    class _Member(metaclass=_Enumeration):
        __slots__ = ("name", "value")

        def __repr__(self) -> str:
            return f"<{type(self).__name__}.{self.name}: {self.value}>"

        def __str__(self) -> str:
            return f"{type(self).__name__}.{self.name}"

        def __reduce__(self):
            return type(self), (self.value,)


class InvocationType(_Member):
    INVOKE_PERIODIC = 0
    INVOKE_JOB_SUBMIT = 1
    INVOKE_JOB_COMPLETED = 2
    INVOKE_JOB_KILLED = 3
    INVOKE_SCHEDULING_POINT = 4
    INVOKE_EVOLVING_REQUEST = 5
    INVOKE_RECONFIGURATION = 6


class JobType(_Member):
    RIGID = 0
    MOLDABLE = 1
    MALLEABLE = 2
    EVOLVING = 3
    ADAPTIVE = 4


class JobState(_Member):
    PENDING = 1
    RUNNING = 4
    PENDING_RECONFIGURATION = 5
    IN_RECONFIGURATION = 6
    COMPLETED = 7
    KILLED = 8


class NodeType(_Member):
    COMPUTE_NODE = 0
    COMPUTE_NODE_WITH_BB = 1
    COMPUTE_NODE_WIDE_STRIPED_BB = 2


class NodeState(_Member):
    FREE = 0
    ALLOCATED = 1
    RESERVED = 2


class GpuState(_Member):
    FREE = 0
    ALLOCATED = 1


class Gpu:
    """One GPU of a node as the algorithm sees it."""

    def __init__(self, identifier: int):
        self.identifier = identifier
        self.state = GpuState.FREE


class Node:
    """A compute node as the algorithm sees it: state, assigned jobs (running and expected),
    GPUs."""

    def __init__(self, identifier: int, node_type: int, gpus: int):
        self.identifier = identifier
        self.type = NodeType(node_type)
        self.state = NodeState.FREE
        self.assigned_jobs: list[Job] = []
        self.assigned_job_ids: set[int] = set()
        self.gpus = [Gpu(index) for index in range(gpus)]

    def __repr__(self) -> str:
        return (
            f"Node(id={self.identifier}, state={self.state.name}, "
            f"assigned_job_ids={self.assigned_job_ids})"
        )


class Job:
    """A job as the algorithm sees it; `assign`, `remove`, `kill`, `assign_num_gpus_per_node` and
    `update_runtime_argument` record a decision that the simulation applies when `schedule`
    returns."""

    def __init__(self, spec, modified: dict):
        self.identifier: int = spec.identifier
        self.type = JobType[spec.type.upper()]
        self.submit_time: float = spec.submit_time
        self.walltime: float = spec.walltime
        if self.type == JobType.RIGID:
            self.num_nodes: int = spec.num_nodes_min
            self.num_gpus_per_node: int = spec.num_gpus_per_node_min
        else:
            self.num_nodes_min: int = spec.num_nodes_min
            self.num_nodes_max: int = spec.num_nodes_max
            self.num_gpus_per_node_min: int = spec.num_gpus_per_node_min
            self.num_gpus_per_node_max: int = spec.num_gpus_per_node_max
        self.arguments: dict[str, str] = {key: str(value) for key, value in spec.arguments.items()}
        self.attributes: dict[str, str] = {
            key: str(value) for key, value in spec.attributes.items()
        }
        self.state = JobState.PENDING
        self.start_time = self.end_time = self.wait_time = self.makespan = (
            self.turnaround_time
        ) = -1.0
        self.assigned_nodes: list[Node] = []
        self.assigned_node_ids: set[int] = set()
        self.assigned_num_gpus_per_node: int = 0
        self.runtime_arguments: dict[str, str] = {}
        self.total_phase_count: int = sum(spec.phase_iterations)
        self.completed_phases: int = 0
        self.modified = False
        self.modified_runtime_args = False
        self.kill_flag = False
        self._modified = modified

    def __eq__(self, other) -> bool:
        return isinstance(other, Job) and self.identifier == other.identifier

    def __hash__(self) -> int:
        return hash(self.identifier)

    def __lt__(self, other: Job) -> bool:
        return self.identifier < other.identifier

    def __repr__(self) -> str:
        return (
            f"Job(id={self.identifier}, type={self.type.name}, state={self.state.name}, "
            f"assigned_node_ids={self.assigned_node_ids})"
        )

    def _touch(self) -> None:
        self.modified = True
        self._modified[self.identifier] = self

    def _check_unfinished(self, action: str) -> None:
        if self.state in (JobState.COMPLETED, JobState.KILLED):
            mistake = AlgorithmMistake(
                f"{action} job {self.identifier}, which has {self.state.name.lower()}"
            )
            _MISTAKES.append(mistake)  # reported even if the algorithm catches the exception
            raise mistake

    def assign(self, nodes: Node | list[Node]) -> None:
        """Add nodes to the job's configuration."""
        if self.kill_flag:
            raise RuntimeError("Job already flagged to be killed")
        self._check_unfinished("assigned nodes to")
        for node in nodes if isinstance(nodes, list) else [nodes]:
            if node.identifier not in self.assigned_node_ids:
                self.assigned_node_ids.add(node.identifier)
                self.assigned_nodes.append(node)
        self._touch()

    def remove(self, nodes: Node | list[Node]) -> None:
        """Take nodes out of the job's configuration."""
        if self.kill_flag:
            raise RuntimeError("Job already flagged to be killed")
        self._check_unfinished("removed nodes from")
        removed = {node.identifier for node in (nodes if isinstance(nodes, list) else [nodes])}
        self.assigned_node_ids -= removed
        self.assigned_nodes = [
            node for node in self.assigned_nodes if node.identifier not in removed
        ]
        self._touch()

    def kill(self) -> None:
        """Kill the job at once."""
        self.kill_flag = True
        self._touch()

    def assign_num_gpus_per_node(self, assigned_num_gpus_per_node: int) -> None:
        """Set the GPUs per node the job uses from its next configuration."""
        self.assigned_num_gpus_per_node = assigned_num_gpus_per_node
        self._touch()

    def update_runtime_argument(self, key: str, value: Any) -> None:
        """Set a variable of the job's performance models (used from the job's next task on)."""
        self.runtime_arguments[key] = str(value)
        self.modified_runtime_args = True
        self._touch()


_PASSED: list[Callable] = []
_MISTAKES: list[AlgorithmMistake] = []


def _whole(value) -> bool:
    """An integer other than a bool (numpy's too)."""
    if isinstance(value, bool):
        return False
    try:
        operator.index(value)
    except TypeError:
        return False
    return True


def _real(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


class GuardedAlgorithm:
    """An algorithm file's `schedule` with the batch system's guards around each call.

    - its prints go to stderr (never into the command's `--json` output);
    - an exception, `sys.exit`, `os._exit`, a `KeyboardInterrupt` it raises itself, or a node
      assigned to a finished job stops the run with one line naming the file, the simulated time and
      the mistake (`AlgorithmMistake`);
    - the job and node lists persist between calls, as in elastisim-python (which indexes them by
      id): an algorithm that empties, shortens, extends or reorders them is stopped the same way.

    With a `watch` (`cosched elastic` runs the algorithm in a child process it supervises,
    `cosched.simulator.elastic.supervision`, which also refuses `os._exit`) each call is marked
    there, so the supervisor can stop one that passes the time limit.
    """

    def __init__(self, schedule: Callable, name: str, watch: Watch | None = None):
        self.schedule, self.name, self.watch = schedule, name, watch

    def _mistake(self, text: str, system) -> AlgorithmMistake:
        return AlgorithmMistake(mistake_text(text, system), source=self.name)

    def __call__(self, jobs, nodes, system) -> None:
        counts, firsts = (len(jobs), len(nodes)), (jobs[:1], jobs[-1:], nodes[:1], nodes[-1:])
        stdout, sys.stdout = sys.stdout, sys.stderr
        del _MISTAKES[:]
        try:
            if self.watch is not None:
                self.watch.begin(system)
            try:
                self.schedule(jobs, nodes, system)
            finally:
                if self.watch is not None:
                    self.watch.end()
        except BaseException as error:  # noqa: BLE001 - translated; Ctrl-C and others re-raised
            raise self._translated(error, system) from None
        finally:
            sys.stdout = stdout
        if _MISTAKES:
            raise self._mistake(_MISTAKES[0].message, system)
        if jobs:
            self._check_touched(jobs[0]._modified, system)
        if (len(jobs), len(nodes)) != counts or (
            jobs[:1],
            jobs[-1:],
            nodes[:1],
            nodes[-1:],
        ) != firsts:
            which = (
                "job" if len(jobs) != counts[0] or (jobs[:1], jobs[-1:]) != firsts[:2] else "node"
            )
            raise self._mistake(
                f"schedule() changed the {which} list it was given ({counts[which == 'node']} "
                f"{which}s before, {len(jobs) if which == 'job' else len(nodes)} after, or "
                f"reordered); the lists persist between calls, as in elastisim-python, so an "
                f"algorithm sorts or filters a copy",
                system,
            )

    def _check_touched(self, modified: dict, system) -> None:
        """The node ids and GPU counts of the jobs the algorithm touched are numbers, as
        ElastiSim's JSON protocol carries them (else one line naming the job and the value)."""
        for view in modified.values():
            try:
                for value in (
                    *(node.identifier for node in view.assigned_nodes),
                    *view.assigned_node_ids,
                ):
                    if value.__class__ is not int and not _whole(value):
                        raise self._mistake(
                            f"job {view.identifier} was assigned node {value!r}, which is not a "
                            f"node id (a whole number)",
                            system,
                        )
                gpus = view.assigned_num_gpus_per_node
                if gpus.__class__ is not int and not (_whole(gpus) or _real(gpus)):
                    raise self._mistake(
                        f"job {view.identifier} was assigned {gpus!r} GPUs per node, which is not "
                        f"a number",
                        system,
                    )
            except AlgorithmMistake:
                raise
            except Exception as error:  # noqa: BLE001 - the algorithm broke the job object
                raise self._mistake(
                    f"schedule() left job {getattr(view, 'identifier', '?')} in a state the batch "
                    f"system cannot read: {type(error).__name__}: {error}",
                    system,
                ) from None

    def _translated(self, error: BaseException, system) -> BaseException:
        """What schedule()'s exception stops the run with: a one-line mistake, or `error` itself
        (a real interrupt: cosched.processes.Interrupted, anything else not the file's)."""
        if isinstance(error, AlgorithmMistake):
            return self._mistake(error.message, system)
        if isinstance(error, InputError):
            return error.naming(self.name)
        if isinstance(error, _OsExit):
            return self._mistake(
                f"schedule() called os._exit({error.code!r}); an algorithm returns instead", system
            )
        if isinstance(error, KeyboardInterrupt):
            if type(error) is not KeyboardInterrupt:
                return error
            return self._mistake(
                "schedule() raised KeyboardInterrupt itself (no Ctrl-C was pressed)", system
            )
        if isinstance(error, SystemExit):
            return self._mistake(
                f"schedule() called sys.exit({error.code!r}); an algorithm returns instead", system
            )
        if isinstance(error, Exception):  # user code: any failure is the algorithm's mistake
            return self._mistake(f"schedule() raised {type(error).__name__}: {error}", system)
        return error


def pass_algorithm(schedule: Callable, url: str | None = None) -> None:
    """Where elastisim-python connects to the simulator; here it only records `schedule` (cosched
    calls it)."""
    _PASSED.append(schedule)


def _module() -> types.ModuleType:
    module = types.ModuleType(MODULE_NAME, "cosched's in-process stand-in for elastisim-python")
    for name in (
        "InvocationType",
        "JobType",
        "JobState",
        "NodeType",
        "NodeState",
        "GpuState",
        "Gpu",
        "Job",
        "Node",
        "pass_algorithm",
    ):
        setattr(module, name, globals()[name])
    return module


def _load_failure(error: BaseException, path: str):
    """What an exception while loading an algorithm file stops the run with: one line of bad
    input, or `error` itself (a real interrupt: cosched.processes.Interrupted)."""
    if isinstance(error, SyntaxError):
        message = message_line(str(error.msg))
        return InputError(f"syntax error: {message}", source=path, line=error.lineno)
    if isinstance(error, SystemExit):
        return InputError(
            message_line(f"loading the algorithm called sys.exit({error.code!r})"), source=path
        )
    if isinstance(error, _OsExit):
        return InputError(
            message_line(f"loading the algorithm called os._exit({error.code!r})"), source=path
        )
    if isinstance(error, KeyboardInterrupt):
        if type(error) is not KeyboardInterrupt:
            return error
        return InputError(
            "loading the algorithm raised KeyboardInterrupt itself (no Ctrl-C was pressed)",
            source=path,
        )
    if isinstance(error, Exception):  # the file is user code: any failure on import is bad input
        return InputError(
            f"loading the algorithm failed: {type(error).__name__}: {message_line(str(error))}",
            source=path,
        )
    return error


def load_algorithm(path: str | Path, watch: Watch | None = None) -> Callable:
    """The `schedule(jobs, nodes, system)` function of an elastisim-python algorithm file, loaded
    unmodified in this process (its prints go to stderr; loading marked on `watch`, if any, for a
    supervisor's time limit)."""
    path = Path(path)
    if not path.is_file():
        raise InputError("no such algorithm file", source=str(path), field="--algorithm")
    spec = importlib.util.spec_from_file_location(
        f"cosched_elastisim_algorithm_{abs(hash(str(path.resolve())))}", path
    )
    if spec is None or spec.loader is None:
        raise InputError("not a Python file", source=str(path), field="--algorithm")
    module = importlib.util.module_from_spec(spec)
    previous = sys.modules.get(MODULE_NAME)
    sys.modules[MODULE_NAME] = _module()
    passed = len(_PASSED)
    try:
        # the file's prints never reach --json output
        with contextlib.redirect_stdout(sys.stderr), refusing_os_exit():
            if watch is not None:
                watch.begin()
            try:
                spec.loader.exec_module(module)
            finally:
                if watch is not None:
                    watch.end()
    except BaseException as error:  # noqa: BLE001 - translated; Ctrl-C and others re-raised
        raise _load_failure(error, str(path)) from None
    finally:
        if previous is None:
            sys.modules.pop(MODULE_NAME, None)
        else:
            sys.modules[MODULE_NAME] = previous
    schedule = getattr(module, "schedule", None)
    if not callable(schedule):
        schedule = _PASSED[-1] if len(_PASSED) > passed else None
    if not callable(schedule):
        raise InputError(
            "defines no schedule(jobs, nodes, system) function",
            source=str(path),
            field="--algorithm",
        )
    return schedule
