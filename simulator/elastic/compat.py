"""The elastisim-python interface inside cosched, so ElastiSim algorithm files run unmodified (001 §5.1, §5.5).

An algorithm file written for ElastiSim imports `from elastisim_python import ...`, defines
`schedule(jobs, nodes, system)` and calls `pass_algorithm(schedule, url)` under `if __name__ == '__main__'`.
`load_algorithm` executes the file under another module name (so that block does not run) while a temporary
`sys.modules['elastisim_python']` entry points at the classes below; nothing named `elastisim_python` stays
installed. The classes keep elastisim-python's names, enum values, attributes and operations; the simulation
updates their attributes in place between invocations instead of sending JSON over ZeroMQ.
"""
from __future__ import annotations

import importlib.util
import sys
import types
from pathlib import Path
from typing import Any, Callable

from cosched.errors import InputError

__all__ = ["InvocationType", "JobType", "JobState", "NodeType", "NodeState", "GpuState", "Gpu", "Job", "Node",
           "pass_algorithm", "load_algorithm", "MODULE_NAME"]

MODULE_NAME = "elastisim_python"


class _Enumeration(type):
    """A minimal Enum: members with `name` and `value`, `Kind(value)`, `Kind[name]`, iteration, `len`.

    The algorithm compares states and types millions of times; attribute access on `enum.Enum` classes costs
    three times a plain class attribute, so these enumerations are plain classes with the same behaviour.
    """

    def __new__(mcs, name, bases, namespace):
        values = {key: value for key, value in namespace.items() if not key.startswith("_")}
        cls = super().__new__(mcs, name, bases, {key: value for key, value in namespace.items() if key not in values})
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
    """A compute node as the algorithm sees it: state, assigned jobs (running and expected), GPUs."""

    def __init__(self, identifier: int, node_type: int, gpus: int):
        self.identifier = identifier
        self.type = NodeType(node_type)
        self.state = NodeState.FREE
        self.assigned_jobs: list[Job] = []
        self.assigned_job_ids: set[int] = set()
        self.gpus = [Gpu(index) for index in range(gpus)]

    def __repr__(self) -> str:
        return f"Node(id={self.identifier}, state={self.state.name}, assigned_job_ids={self.assigned_job_ids})"


class Job:
    """A job as the algorithm sees it; `assign`, `remove`, `kill`, `assign_num_gpus_per_node` and
    `update_runtime_argument` record a decision that the simulation applies when `schedule` returns."""

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
        self.attributes: dict[str, str] = {key: str(value) for key, value in spec.attributes.items()}
        self.state = JobState.PENDING
        self.start_time = self.end_time = self.wait_time = self.makespan = self.turnaround_time = -1.0
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

    def __lt__(self, other: "Job") -> bool:
        return self.identifier < other.identifier

    def __repr__(self) -> str:
        return f"Job(id={self.identifier}, type={self.type.name}, state={self.state.name}, " \
               f"assigned_node_ids={self.assigned_node_ids})"

    def _touch(self) -> None:
        self.modified = True
        self._modified[self.identifier] = self

    def assign(self, nodes: Node | list[Node]) -> None:
        """Add nodes to the job's configuration."""
        if self.kill_flag:
            raise RuntimeError("Job already flagged to be killed")
        for node in nodes if isinstance(nodes, list) else [nodes]:
            if node.identifier not in self.assigned_node_ids:
                self.assigned_node_ids.add(node.identifier)
                self.assigned_nodes.append(node)
        self._touch()

    def remove(self, nodes: Node | list[Node]) -> None:
        """Take nodes out of the job's configuration."""
        if self.kill_flag:
            raise RuntimeError("Job already flagged to be killed")
        removed = {node.identifier for node in (nodes if isinstance(nodes, list) else [nodes])}
        self.assigned_node_ids -= removed
        self.assigned_nodes = [node for node in self.assigned_nodes if node.identifier not in removed]
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


def pass_algorithm(schedule: Callable, url: str | None = None) -> None:
    """Where elastisim-python connects to the simulator; here it only records `schedule` (cosched calls it)."""
    _PASSED.append(schedule)


def _module() -> types.ModuleType:
    module = types.ModuleType(MODULE_NAME, "cosched's in-process stand-in for elastisim-python")
    for name in ("InvocationType", "JobType", "JobState", "NodeType", "NodeState", "GpuState", "Gpu", "Job", "Node",
                 "pass_algorithm"):
        setattr(module, name, globals()[name])
    return module


def load_algorithm(path: str | Path) -> Callable:
    """The `schedule(jobs, nodes, system)` function of an elastisim-python algorithm file, loaded unmodified."""
    path = Path(path)
    if not path.is_file():
        raise InputError("no such algorithm file", source=str(path), field="--algorithm")
    spec = importlib.util.spec_from_file_location(f"cosched_elastisim_algorithm_{abs(hash(str(path.resolve())))}",
                                                  path)
    if spec is None or spec.loader is None:
        raise InputError("not a Python file", source=str(path), field="--algorithm")
    module = importlib.util.module_from_spec(spec)
    previous = sys.modules.get(MODULE_NAME)
    sys.modules[MODULE_NAME] = _module()
    passed = len(_PASSED)
    try:
        spec.loader.exec_module(module)
    except SyntaxError as error:
        raise InputError(f"syntax error: {error.msg}", source=str(path), line=error.lineno) from None
    except Exception as error:  # the file is user code: any failure on import is bad input
        raise InputError(f"loading the algorithm failed: {type(error).__name__}: {error}", source=str(path)) from None
    finally:
        if previous is None:
            sys.modules.pop(MODULE_NAME, None)
        else:
            sys.modules[MODULE_NAME] = previous
    schedule = getattr(module, "schedule", None)
    if not callable(schedule):
        schedule = _PASSED[-1] if len(_PASSED) > passed else None
    if not callable(schedule):
        raise InputError("defines no schedule(jobs, nodes, system) function", source=str(path), field="--algorithm")
    return schedule
