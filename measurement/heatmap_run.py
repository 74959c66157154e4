"""`measure_heatmap`: run the experiment of `heatmap_plan` on a node pool, in parallel, resumably.

The pool is a list of disjoint nodes. A run takes the first free nodes it needs (its
`PlannedMeasurement.nodes`) and holds them until its result is back, so no node ever carries two
measurements at once; runs start in the plan's (shuffled) order, a run that does not fit yet waits
while smaller ones go first. The CPU sets of ``local:K`` share one machine: there runs go one at a
time. Runs execute in threads of this process (launches through the task
containment) or on a dask.distributed cluster (`dask`: a scheduler address, or "local"), where
`heatmap_launch.run_measurement` is the task.

Files in the output folder (the rerun rule of `cosched.rerun` through `cosched.grid.grid_folder`):
config.json (the run configuration: applications, repeats, pairs, seed, cores per node), runs.csv
and runs.done (one row per attempt, appended and flushed as each finishes, in the grid format of
`cosched.grid`, key ``run, attempt``), logs/RUN.ATTEMPT.txt (output of a failed attempt),
heatmap.csv (`heatmap_table`), summary.json. Rerunning the same configuration resumes: runs with a
successful attempt are kept, the others run again (with a fresh retry budget); the node pool and the
Dask address may differ between invocations.

Failures: a failed attempt (non-zero exit, timeout, an error of the Dask task) is recorded with its
output and retried up to `retries` times. Hosts named in a failed attempt's output are set aside
while the run is retried elsewhere: if the retry succeeds they leave the pool for good (the host was
the problem), if it fails too they return. With Dask workers named after the hosts (``dask worker
--name HOST``), a lost worker's host leaves the pool; Dask reruns the lost worker's task elsewhere.
Ctrl-C / SIGTERM kill every launch, local or on every Dask worker, before the command exits.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import logging
import re
import signal
import threading
import time
import uuid
import warnings
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

from cosched.errors import InputError
from cosched.grid import CellResult, GridAppender, dask_client, grid_folder, read_rows
from cosched.measurement.heatmap_plan import (
    PlannedMeasurement,
    build_plan,
    node_seconds,
    place,
    usable_cores,
)
from cosched.measurement.heatmap_spec import Application, PoolNode
from cosched.measurement.heatmap_table import heatmap_rows, median_times, write_measured_heatmap

__all__ = [
    "measure_heatmap",
    "stop_workers",
    "HeatmapResult",
    "RUN_COLUMNS",
    "RUN_KEY",
    "OWNED",
    "config_document",
]

RUN_COLUMNS = (
    "run",
    "attempt",
    "mode",
    "app_a",
    "app_b",
    "repeat",
    "nodes",
    "hosts",
    "status",
    "time_a",
    "time_b",
    "restarts",
    "returncode",
    "started",
    "message",
)
RUN_KEY = ("run", "attempt")
OWNED = (
    "config.json",
    "runs.csv",
    "runs.done",
    "logs",
    "heatmap.csv",
    "heatmap.png",
    "summary.json",
)
WAIT_SECONDS = 0.25  # how often the loop looks for finished runs, lost workers and signals
WORKER_CHECK_SECONDS = 2.0  # how often the Dask worker list is compared with the last one
STOP_TIMEOUT_SECONDS = 10  # longest wait for the Dask workers to kill their launches on Ctrl-C
MESSAGE_CHARS = 300  # characters of a failed attempt's output kept in runs.csv (the log keeps more)


@dataclass
class HeatmapResult:
    """What a session did: counts, node time, hosts that left, runs that failed for good."""

    out: Path
    runs: int
    done_before: int
    done: int
    attempts: int
    failed_runs: list[str] = field(default_factory=list)
    unplaced_runs: list[str] = field(default_factory=list)
    hosts_left: list[str] = field(default_factory=list)
    node_hours: float = 0.0
    seconds: float = 0.0
    heatmap: Path | None = None
    containment: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {
            "out": str(self.out),
            "runs": self.runs,
            "done_before": self.done_before,
            "done": self.done,
            "attempts": self.attempts,
            "failed_runs": self.failed_runs,
            "unplaced_runs": self.unplaced_runs,
            "hosts_left": self.hosts_left,
            "node_hours": round(self.node_hours, 6),
            "seconds": round(self.seconds, 3),
            "heatmap": None if self.heatmap is None else str(self.heatmap),
            "containment": self.containment,
        }


def config_document(apps: list[Application], cores: int, repeats: int, pairs, seed: int) -> dict:
    """The configuration a folder belongs to (config.json): what changes the runs' meaning."""
    return {
        "command": "measure-heatmap",
        "format": 1,
        "applications": [app.to_json() for app in apps],
        "cores_per_node": cores,
        "repeats": repeats,
        "pairs": "all" if pairs is None else [list(p) for p in pairs],
        "seed": seed,
    }


class _Local:
    """Runs in threads of this process, one per node at most."""

    def __init__(self, nodes: int, containment: str, session: str):
        from concurrent.futures import ThreadPoolExecutor

        from cosched.measurement import heatmap_launch

        heatmap_launch.reset()
        self.session = session
        self.launch = heatmap_launch
        self.contained = heatmap_launch.launches(containment)
        self.contained.__enter__()  # opens the containment: an unavailable kind fails here
        self.pool = ThreadPoolExecutor(max_workers=max(1, nodes), thread_name_prefix="heatmap")

    def submit(self, spec: dict):
        return self.pool.submit(self.launch.run_measurement, spec)

    def wait(self, futures, timeout: float) -> list:
        from concurrent.futures import FIRST_COMPLETED, wait

        return list(wait(futures, timeout=timeout, return_when=FIRST_COMPLETED)[0])

    def forget(self, future) -> None:
        pass

    def lost_hosts(self) -> set[str]:
        return set()

    def close(self, interrupted: bool) -> None:
        if interrupted:
            self.launch.stop_all(self.session)
        try:
            self.pool.shutdown(wait=True, cancel_futures=True)
        finally:
            self.contained.__exit__(None, None, None)  # kills what is left, removes the cgroups


class _Dask:
    """Runs as tasks of a dask.distributed cluster; watches the workers for lost hosts."""

    def __init__(self, address, nodes: list[PoolNode], session: str):
        # threads: one launch per node set at once, each waiting on its command
        with _interrupts_held():
            self.client, self.cluster = dask_client(
                address, workers=min(len(nodes), 4), threads_per_worker=max(1, len(nodes))
            )
        if self.cluster is not None:
            self.client.run(_leave_interrupts_to_the_command)
        self.hosts = {node.host for node in nodes}
        self.seen: set[str] = set()
        self.checked = 0.0
        self.futures: set = set()
        self.session = session

    def submit(self, spec: dict):
        from cosched.measurement.heatmap_launch import run_measurement

        future = self.client.submit(run_measurement, spec, pure=False)
        self.futures.add(future)
        return future

    def wait(self, futures, timeout: float) -> list:
        from distributed import wait

        with contextlib.suppress(TimeoutError):
            wait(list(futures), timeout=timeout, return_when="FIRST_COMPLETED")
        return [future for future in futures if future.done()]

    def forget(self, future) -> None:
        """Release a result once read: a result kept on a worker that is lost later would be
        computed again, a finished measurement run a second time on nodes that are busy with others
        by then."""
        self.futures.discard(future)
        future.release()

    def lost_hosts(self) -> set[str]:
        """Hosts whose worker (named after the host) was seen and is gone."""
        if time.monotonic() - self.checked < WORKER_CHECK_SECONDS:
            return set()
        self.checked = time.monotonic()
        names = {
            str(info.get("name"))
            for info in self.client.scheduler_info().get("workers", {}).values()
        }
        present = names & self.hosts
        lost = self.seen - present
        self.seen = (self.seen | present) - lost
        return lost

    def close(self, interrupted: bool) -> None:
        # a local cluster closed mid-task logs the cancelled tasks and broken connections of its
        # own shutdown: no news after a Ctrl-C
        quiet = interrupted and self.cluster is not None
        try:
            if interrupted:
                self.client.cancel(list(self.futures))
                stop_workers(self.client, self.session)
                if quiet:
                    self.client.run(_quiet_dask_logs, on_error="ignore")
        finally:
            with _dask_logs_quiet(quiet):
                self.client.close()
                if self.cluster is not None:
                    self.cluster.close()


@contextlib.contextmanager
def _interrupts_held():
    """Block SIGINT in this thread while a local cluster starts: its worker processes, started from
    here, begin with it blocked (a Ctrl-C meanwhile reaches this process once the block ends)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def _ignore(signum, frame) -> None:
    pass


def _leave_interrupts_to_the_command() -> None:
    """In a worker of the local cluster: ignore Ctrl-C, which the terminal sends to the command's
    whole process group; the command stops the launches and closes the cluster itself. A Python
    handler rather than SIG_IGN, and unblocked, so that launches started later get the default."""
    signal.signal(signal.SIGINT, _ignore)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def _quiet_dask_logs() -> None:
    """In a worker of the local cluster, which ends with the command."""
    logging.getLogger("distributed").setLevel(logging.CRITICAL)


@contextlib.contextmanager
def _dask_logs_quiet(quiet: bool):
    logger = logging.getLogger("distributed")
    level = logger.level
    if quiet:
        logger.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        logger.setLevel(level)


def stop_workers(client, session: str) -> dict:
    """Kill the launches of `session` on every worker of the Dask `client` and stop its
    measurements there (Ctrl-C / SIGTERM of the command); returns each worker's count of killed
    launches. Workers that cannot be reached in `STOP_TIMEOUT_SECONDS` or fail are named in a
    warning: their launches may still run."""
    from cosched.measurement.heatmap_launch import stop_all

    try:
        # callback_timeout bounds the call itself; other keywords would go to stop_all
        answers = client.run(
            stop_all, session, on_error="return", callback_timeout=STOP_TIMEOUT_SECONDS
        )
    except Exception as error:  # the scheduler is gone or did not answer
        warnings.warn(
            f"could not reach the Dask workers to stop the launches ({type(error).__name__}: "
            f"{error}); they may still run",
            RuntimeWarning,
            stacklevel=2,
        )
        return {}
    failed = {
        worker: answer for worker, answer in answers.items() if isinstance(answer, BaseException)
    }
    if failed:
        worker, failure = next(iter(failed.items()))
        warnings.warn(
            f"launches may still run on {len(failed)} Dask worker(s), e.g. {worker} "
            f"({type(failure).__name__}: {failure})",
            RuntimeWarning,
            stacklevel=2,
        )
    return {worker: answer for worker, answer in answers.items() if worker not in failed}


def _named_hosts(output: str, hosts: list[str]) -> set[str]:
    """Hosts of the run that a failed launch's output names (as whole words)."""
    return {
        host for host in hosts if re.search(rf"(?<![\w.-]){re.escape(host)}(?![\w-]|\.\w)", output)
    }


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def measure_heatmap(
    apps: list[Application],
    nodes: list[PoolNode],
    out,
    *,
    repeats: int = 3,
    pairs: list[tuple[str, str]] | None = None,
    seed: int = 0,
    retries: int = 2,
    dask: str | None = None,
    progress: bool = True,
    force: bool = False,
    containment: str = "auto",
    say=lambda text: None,
) -> HeatmapResult:
    """Measure the heatmap of `apps` on `nodes` into the folder `out` (see the module docstring).

    Raises InputError, before anything is written, when a run needs more nodes than the pool has.
    """
    from cosched.progress import progress_bar

    out = Path(out)
    cores = usable_cores(nodes)
    plan = build_plan(apps, cores, repeats, pairs, seed)
    largest = max(plan, key=lambda run: run.nodes)
    if largest.nodes > len(nodes):
        raise InputError(
            f"run {largest.run} needs {largest.nodes} nodes of {cores} cores, the pool has "
            f"{len(nodes)}",
            field="--nodes",
        )
    pair_list = (
        pairs
        if pairs is not None
        else [(a.name, b.name) for i, a in enumerate(apps) for b in apps[i:]]
    )
    document = config_document(apps, cores, repeats, pairs, seed)
    path = out / "runs.csv"
    started = time.monotonic()
    with (
        grid_folder(
            out,
            command="measure-heatmap",
            spec_file="config.json",
            document=document,
            owned=OWNED,
            grid="runs.csv",
            force=force,
        ),
        GridAppender(path, RUN_COLUMNS, RUN_KEY) as grid,
    ):
        earlier = read_rows(path, RUN_COLUMNS, RUN_KEY)
        rows = earlier.astype(object).where(earlier.notna(), None).to_dict("records")
        loop = _Session(plan, apps, nodes, rows, out, cores, containment, retries, say)
        result = loop.result
        session = uuid.uuid4().hex  # what Ctrl-C stops on the workers: this command's launches
        executor = _Dask(dask, nodes, session) if dask else _Local(len(nodes), containment, session)
        interrupted = True
        try:
            with progress_bar(
                total=len(plan),
                initial=result.done_before,
                unit="run",
                desc="measure-heatmap",
                disable=not progress,
            ) as bar:
                loop.run(executor, grid, bar)
            interrupted = False
        finally:
            executor.close(interrupted)
        result.hosts_left = sorted(loop.gone)
        table = heatmap_rows(apps, pair_list, [row for row in rows])
        if table:
            result.heatmap = write_measured_heatmap(table, out / "heatmap.csv")
        result.seconds = time.monotonic() - started
        from cosched.outputs import atomic_path

        with atomic_path(out / "summary.json") as tmp:
            tmp.write_text(json.dumps(result.to_json(), indent=1))
        return result


class _Session:
    """One measure-heatmap loop: the node pool, the runs waiting and running, what was recorded.

    A run takes the first free nodes it needs and returns them when its result is back; hosts a
    failed attempt names are held back while it is retried, and leave the pool for good if the
    retry succeeds (`_failed`).
    """

    def __init__(
        self,
        plan: list[PlannedMeasurement],
        apps: list[Application],
        nodes: list[PoolNode],
        rows: list[dict],
        out: Path,
        cores: int,
        containment: str,
        retries: int,
        say,
    ):
        self.by_name = {app.name: app for app in apps}
        self.estimates = {app.name: app.estimate for app in apps}
        self.nodes, self.rows, self.out, self.cores = nodes, rows, out, cores
        self.containment, self.retries, self.say = containment, retries, say
        done = {row["run"] for row in rows if row["status"] == "ok"}
        self.attempt_of: dict[str, int] = {}
        for row in rows:
            self.attempt_of[row["run"]] = max(
                self.attempt_of.get(row["run"], 0), int(row["attempt"]) + 1
            )
        self.result = HeatmapResult(out, len(plan), len(done), len(done), 0)
        self.pending = deque(run for run in plan if run.run not in done)
        self.free = list(nodes)
        # local:K sets share one machine's caches and memory bandwidth: one run at a time there, so
        # that "alone" is alone and a pair has no third neighbour
        self.shared = all(node.local for node in nodes)
        self.gone: set[str] = set()  # hosts out of the pool for good
        self.held: dict[str, set[str]] = {}  # run -> hosts set aside while it is retried elsewhere
        self.tries: dict[str, int] = {}
        self.running: dict = {}  # future -> (run, nodes taken, attempt, start time)

    def remaining_hours(self) -> str:
        """Node-hours the waiting and running runs still need (known times, else estimates)."""
        times = {**self.estimates, **median_times(self.rows)}
        values = [
            node_seconds(run, times)
            for run in [*self.pending, *(item[0] for item in self.running.values())]
        ]
        total = sum(value for value in values if value is not None) / 3600
        return f"{total:.3g}" + ("+?" if any(value is None for value in values) else "")

    def run(self, executor, grid: GridAppender, bar) -> None:
        """Run until no run waits or runs, or the pool shrank below what the waiting runs need."""
        bar.set_postfix_str(f"node-h left {self.remaining_hours()}")
        while self.pending or self.running:
            self.start_fitting(executor)
            if not self.running:
                # a retry does not fit without the hosts set aside: return them
                if self.return_held():
                    continue
                self.result.unplaced_runs = [run.run for run in self.pending]
                break
            for future in executor.wait(set(self.running), WAIT_SECONDS):
                if self.settle(future, executor, grid):
                    bar.update()
                bar.set_postfix_str(f"node-h left {self.remaining_hours()}")
            self.drop_lost(executor.lost_hosts())

    def start_fitting(self, executor) -> None:
        """Start every waiting run that fits the free nodes, in plan order (one at a time on one
        shared machine)."""
        for run in list(self.pending):
            if self.shared and self.running:
                break
            if len(self.free) >= run.nodes:
                taken, self.free[: run.nodes] = self.free[: run.nodes], []
                spec = {
                    "run": run.run,
                    "roles": place(run, self.by_name, taken, self.cores),
                    "containment": self.containment,
                    "session": executor.session,
                }
                attempt = self.attempt_of.get(run.run, 0)
                self.attempt_of[run.run] = attempt + 1
                self.running[executor.submit(spec)] = (run, taken, attempt, _now())
                self.pending.remove(run)

    def return_held(self) -> bool:
        """Return the hosts held back for retries to the pool; whether there were any."""
        if not self.held:
            return False
        for host in set().union(*self.held.values()) - self.gone:
            self.free.extend(node for node in self.nodes if node.host == host)
        self.held.clear()
        return True

    def settle(self, future, executor, grid: GridAppender) -> bool:
        """Record a finished attempt, return its nodes, and queue a retry if it failed; whether it
        succeeded."""
        run, taken, attempt, when = self.running.pop(future)
        outcome = _outcome(future, run)
        result = self.result
        if outcome.get("containment") not in (None, *result.containment):
            result.containment.append(outcome["containment"])
        executor.forget(future)
        row = _row(run, attempt, taken, when, outcome)
        files = {}
        if outcome["status"] != "ok":
            files[f"logs/{run.run}.{attempt}.txt"] = outcome["output"]
        grid.append((run.run, attempt), CellResult([row], files))
        self.rows.append(row)
        result.attempts += 1
        result.node_hours += run.nodes * (outcome.get("seconds") or 0.0) / 3600
        back = [node for node in taken if node.host not in self.gone]
        if outcome["status"] == "ok":
            result.done += 1
            for host in self.held.pop(run.run, set()):
                self.gone.add(host)
                self.say(
                    f"host {host} leaves the pool: {run.run} failed there and succeeded elsewhere"
                )
        else:
            back = _failed(
                run, outcome, back, self.held, self.free, self.nodes, self.gone, self.say
            )
            self.retry_or_give_up(run)
        self.free.extend(back)
        return outcome["status"] == "ok"

    def retry_or_give_up(self, run: PlannedMeasurement) -> None:
        self.tries[run.run] = self.tries.get(run.run, 0) + 1
        if self.tries[run.run] <= self.retries:
            self.pending.append(run)
        else:
            self.result.failed_runs.append(run.run)
            self.say(f"{run.run} failed {self.tries[run.run]} times; see {self.out}/logs")

    def drop_lost(self, hosts: set[str]) -> None:
        """Take the hosts of lost Dask workers out of the pool for good."""
        for host in hosts:
            if host not in self.gone:
                self.gone.add(host)
                self.free[:] = [node for node in self.free if node.host != host]
                self.say(f"host {host} leaves the pool: its Dask worker was lost")


def _outcome(future, run: PlannedMeasurement) -> dict:
    """The result of a finished task; a task error (a worker lost too often) is a failed attempt."""
    try:
        outcome = future.result()
    except Exception as error:  # the task itself broke: record it, retry like a failed launch
        return {
            "status": "failed",
            "times": [None, None],
            "returncode": None,
            "restarts": 0,
            "output": f"task error: {type(error).__name__}: {error}",
            "seconds": 0.0,
        }
    if outcome["status"] == "stopped":
        raise KeyboardInterrupt  # the launches were stopped from outside (another Ctrl-C path)
    times = [value for value in outcome["times"] if value is not None]
    outcome["seconds"] = max(times) if times else 0.0
    return outcome


def _row(
    run: PlannedMeasurement, attempt: int, taken: list[PoolNode], when: str, outcome: dict
) -> dict:
    times = list(outcome["times"]) + [None, None]
    message = (
        " ".join(outcome["output"].split())[-MESSAGE_CHARS:] if outcome["status"] != "ok" else ""
    )
    return {
        "run": run.run,
        "attempt": attempt,
        "mode": run.mode,
        "app_a": run.apps[0],
        "app_b": run.apps[1] if len(run.apps) > 1 else "",
        "repeat": run.repeat,
        "nodes": run.nodes,
        "hosts": " ".join(node.host for node in taken),
        "status": outcome["status"],
        "time_a": times[0],
        "time_b": times[1] if run.mode == "pair" else None,
        "restarts": outcome.get("restarts", 0),
        "returncode": outcome.get("returncode"),
        "started": when,
        "message": message,
    }


def _failed(
    run: PlannedMeasurement,
    outcome: dict,
    back: list[PoolNode],
    held: dict,
    free: list[PoolNode],
    nodes: list[PoolNode],
    gone: set[str],
    say,
) -> list[PoolNode]:
    """Nodes to return after a failed attempt: hosts its output names are held back while the run is
    retried elsewhere; hosts held back for an earlier attempt of the same run return (the retry
    failed as well)."""
    for host in held.pop(run.run, set()):
        if host not in gone:
            free.extend(node for node in nodes if node.host == host)
    named = _named_hosts(outcome.get("output", ""), [node.host for node in back])
    if named and len(named) < len(nodes):
        held[run.run] = named
        say(f"{run.run} failed naming {', '.join(sorted(named))}; retrying it on other nodes")
        return [node for node in back if node.host not in named]
    return back
