"""Run independent tasks on worker processes, with hard per-task time caps (sweeps and audits on every core).

:func:`run_tasks` takes a sequence of :class:`Task` s and yields one :class:`Outcome` per task, as tasks finish.
With ``n_jobs=1`` the tasks run one after the other in this process (no extra processes; time caps are only the
cooperative :class:`~dpcore.core.timing.Deadline` checks inside the mechanisms). With ``n_jobs > 1`` they run on that
many worker processes:

* **Shared inputs travel once.** A task names a *context* (e.g. the prepared data of a sweep); the context is
  pickled once and sent to a worker only when that worker does not hold it yet.
* **Hard time caps.** A task may carry ``hard_limit`` seconds. A worker whose task runs past it — a mechanism stuck
  outside its cooperative deadline checks, in a C loop or a sleep — is killed and replaced; the task's outcome is
  ``"killed"`` and the other workers carry on. A worker that dies (a crash, the OOM killer) gives ``"died"``.
* **Cancellation.** Closing the iterator (``break`` in the consuming loop, or ``close()``) drops the tasks not yet
  started and kills the workers still running one; outcomes already yielded are the caller's.
* **Progress from inside a task.** A task function is called as ``fn(context, *args, report=report)``; calling
  ``report(payload)`` reaches the caller's ``on_report(index, payload)`` (from a worker, over its pipe).

Workers are forked from a ``forkserver`` (``spawn`` where that does not exist) whose process has already imported
dpcore, so a worker starts in milliseconds and never inherits the caller's threads (a Streamlit server, BLAS
pools). A worker runs its linear algebra on one thread, so N workers do not oversubscribe the cores (see
:mod:`dpcore.runtime.protocol`, the task/message protocol this pool shares with :mod:`dpcore.runtime.scheduler`).
Results do not depend on the number of jobs as long as every task seeds itself from its own arguments (the
sweep's per-cell seeds, the audit's per-worker child streams). As with any ``spawn``/``forkserver``
multiprocessing, a worker re-imports the caller's main script (as ``__mp_main__``), so a script that uses
``n_jobs > 1`` must keep its work under ``if __name__ == "__main__":``.

Why not :mod:`joblib`/loky: loky treats a killed worker as a broken pool and fails every task in flight, and it
sends the arguments with every task; a stuck cell would then cost every other running cell its work.
"""

from __future__ import annotations

import os
import pickle
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Iterator
from multiprocessing.connection import wait as _wait
from typing import Any

from ..exceptions import InvalidParameterError
from .protocol import (
    PRELOAD,
    InlineRunner,
    Outcome,
    OutcomeStatus,
    ReadyMessage,
    ReportMessage,
    Task,
    Worker,
    died,
    killed,
    unsent,
)

__all__ = ["PRELOAD", "Outcome", "OutcomeStatus", "Task", "resolve_jobs", "run_tasks"]

#: Serialised contexts kept in the parent (least recently used dropped first).
_CONTEXT_CACHE = 4


def resolve_jobs(n_jobs: int | None) -> int:
    """Worker count for ``n_jobs``: None → 1; k ≥ 1 → k; negative counts back from the CPUs (−1 = all, as in
    joblib)."""
    if n_jobs is None:
        return 1
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, int) or n_jobs == 0:
        raise InvalidParameterError(f"n_jobs must be a non-zero integer (−1 = every core), got {n_jobs!r}.")
    cpus = os.cpu_count() or 1
    return n_jobs if n_jobs > 0 else max(1, cpus + 1 + n_jobs)


def run_tasks(
    tasks: Iterable[Task],
    *,
    n_jobs: int | None = 1,
    contexts: Callable[[Hashable], Any] | None = None,
    on_report: Callable[[int, Any], None] | None = None,
) -> Iterator[Outcome]:
    """Run ``tasks`` and yield an :class:`Outcome` for each as it finishes (task order when ``n_jobs=1``).

    ``tasks`` is consumed lazily, one task per free worker, so a generator may stop early (e.g. when a time
    budget is spent). ``contexts(key)`` builds the shared input a task names (called once per key while it is
    in use; a context that cannot be built fails the tasks that name it). See the module docstring for hard
    limits, cancellation and reports.
    """
    jobs = resolve_jobs(n_jobs)
    getter = contexts if contexts is not None else (lambda key: None)
    if jobs == 1:
        return _run_inline(iter(tasks), getter, on_report)
    return _run_pool(iter(tasks), jobs, getter, on_report)


def _run_inline(tasks: Iterator[Task], contexts: Callable[[Hashable], Any],
                on_report: Callable[[int, Any], None] | None) -> Iterator[Outcome]:
    runner = InlineRunner()
    for index, task in enumerate(tasks):

        def report(payload: Any, _index: int = index) -> None:
            if on_report is not None:
                on_report(_index, payload)

        yield runner.run(index, task, task.context, contexts, report)


def _run_pool(tasks: Iterator[Task], jobs: int, contexts: Callable[[Hashable], Any],
              on_report: Callable[[int, Any], None] | None) -> Iterator[Outcome]:
    pool = _LocalPool(tasks, jobs, contexts, on_report)
    try:
        while True:
            unsent_outcomes = pool.fill()
            yield from unsent_outcomes
            if not pool.busy:
                if unsent_outcomes:
                    continue
                return
            yield from pool.collect()
    finally:
        pool.shutdown()


class _Slot:
    """A worker process, the context it holds and the task it runs (``index`` None when idle)."""

    __slots__ = ("context_key", "hard_limit", "index", "started", "worker")

    def __init__(self) -> None:
        self.worker = Worker()
        self.context_key: Any = None
        self.index: int | None = None
        self.started = 0.0  # when the task's time began: sent to a ready worker, or the worker's ready message
        self.hard_limit = float("inf")

    @property
    def limit_at(self) -> float:
        """When the running task passes its hard limit (never for an idle slot)."""
        return self.started + self.hard_limit


class _LocalPool:
    """Up to ``jobs`` workers running the tasks of one :func:`run_tasks` call (started on demand)."""

    def __init__(self, tasks: Iterator[Task], jobs: int, contexts: Callable[[Hashable], Any],
                 on_report: Callable[[int, Any], None] | None) -> None:
        self.tasks, self.jobs, self.contexts, self.on_report = tasks, jobs, contexts, on_report
        self.blobs: OrderedDict[Hashable, bytes] = OrderedDict()
        self.slots: list[_Slot] = []
        self.busy: dict[Any, _Slot] = {}  # connection → slot with a task
        self.pending: list[tuple[int, Task]] = []  # at most one task pulled from the iterator but not yet started
        self.next_index = 0
        self.exhausted = False

    def blob(self, key: Hashable) -> bytes:
        if key in self.blobs:
            self.blobs.move_to_end(key)
            return self.blobs[key]
        data = pickle.dumps(self.contexts(key), protocol=pickle.HIGHEST_PROTOCOL)
        self.blobs[key] = data
        while len(self.blobs) > _CONTEXT_CACHE:
            self.blobs.popitem(last=False)
        return data

    def pull(self) -> tuple[int, Task] | None:
        if self.pending:
            return self.pending.pop()
        if self.exhausted:
            return None
        try:
            task = next(self.tasks)
        except StopIteration:
            self.exhausted = True
            return None
        self.next_index += 1
        return self.next_index - 1, task

    def start(self, slot: _Slot, index: int, task: Task) -> None:
        if task.context is not None and slot.context_key != task.context:
            slot.worker.send_context(task.context, self.blob(task.context))
            slot.context_key = task.context
        slot.worker.send_task(index, task, task.context)
        slot.index = index
        slot.hard_limit = task.hard_limit if task.hard_limit is not None else float("inf")
        slot.started = time.perf_counter()
        self.busy[slot.worker.conn] = slot

    def remove(self, slot: _Slot) -> None:
        self.busy.pop(slot.worker.conn, None)
        slot.worker.kill()
        self.slots.remove(slot)

    def fill(self) -> list[Outcome]:
        """Give tasks to idle workers (starting new ones up to ``jobs``), preferring one that holds the task's
        context; returns the outcomes of tasks that could not be sent."""
        unsent_outcomes: list[Outcome] = []
        while True:
            idle = [s for s in self.slots if s.index is None]
            if not idle and len(self.slots) >= self.jobs:
                break
            item = self.pull()
            if item is None:
                break
            index, task = item
            chosen = next((s for s in idle if s.context_key == task.context), idle[0] if idle else None)
            if chosen is None:
                chosen = _Slot()
                self.slots.append(chosen)
            try:
                self.start(chosen, index, task)
            except (BrokenPipeError, EOFError, ConnectionError):  # the worker died before the task reached it
                self.remove(chosen)
                self.pending.append((index, task))
            except Exception as exc:  # the task or its context cannot be pickled: nothing was written
                self.busy.pop(chosen.worker.conn, None)
                chosen.index = None
                unsent_outcomes.append(unsent(index, exc))
        return unsent_outcomes

    def collect(self) -> Iterator[Outcome]:
        """Wait for a message, a gone worker or a hard limit, and yield the outcomes that brings."""
        now = time.perf_counter()
        timeout = max(0.0, min(s.limit_at for s in self.busy.values()) - now)
        sentinels = {s.worker.proc.sentinel: s for s in self.busy.values()}
        ready = _wait([*self.busy.keys(), *sentinels.keys()], timeout=None if timeout == float("inf") else timeout)
        now = time.perf_counter()
        for obj in ready:
            slot = self.busy.get(obj) or sentinels.get(obj)
            if slot is None or slot.worker.conn not in self.busy:
                continue
            readable = obj is slot.worker.conn or slot.worker.conn.poll()
            msg = slot.worker.receive(slot.index, now - slot.started) if readable else None
            if msg is None:  # the worker process is gone
                index, seconds, code = slot.index, now - slot.started, slot.worker.exitcode()
                self.remove(slot)
                yield died(index, seconds, code)
                continue
            if isinstance(msg, ReadyMessage):  # a new worker started: its first task's time begins now
                slot.started = now
                continue
            if isinstance(msg, ReportMessage):
                if self.on_report is not None:
                    self.on_report(msg.index, msg.payload)
                continue
            self.busy.pop(slot.worker.conn)
            slot.index = None
            slot.hard_limit = float("inf")
            yield msg
        for slot in [s for s in self.busy.values() if s.limit_at <= now]:
            index, seconds = slot.index, now - slot.started
            self.remove(slot)
            yield killed(index, seconds)

    def shutdown(self) -> None:
        """Kill the workers still running a task (cancellation) and stop the idle ones."""
        for slot in self.slots:
            if slot.index is not None:
                slot.worker.kill()
            else:
                slot.worker.stop()
