"""Run independent tasks on worker processes, with hard per-task time caps (sweeps and audits on every core).

:func:`run_tasks` takes a sequence of :class:`Task` s and yields one :class:`Outcome` per task, as tasks finish.
With ``n_jobs=1`` the tasks run one after the other in this process (no extra processes; time caps are only the
cooperative :class:`~dpcore.timing.Deadline` checks inside the mechanisms). With ``n_jobs > 1`` they run on that
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
pools). BLAS inside a worker is limited to ``cpu_count // n_jobs`` threads (at least 1), so N workers do not
oversubscribe the cores. Results do not depend on the number of jobs as long as every task seeds itself from its own
arguments (the sweep's per-cell seeds, the audit's per-worker child streams). As with any ``spawn``/``forkserver``
multiprocessing, a worker re-imports the caller's main script (as ``__mp_main__``), so a script that uses
``n_jobs > 1`` must keep its work under ``if __name__ == "__main__":``.

Why not :mod:`joblib`/loky: loky treats a killed worker as a broken pool and fails every task in flight, and it
sends the arguments with every task; a stuck cell would then cost every other running cell its work.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import pickle
import signal
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Iterator
from dataclasses import dataclass
from multiprocessing.connection import wait as _wait
from typing import Any

from .exceptions import InvalidParameterError

__all__ = ["Outcome", "Task", "resolve_jobs", "run_tasks"]

#: Modules the forkserver imports once, so that forked workers start warm.
PRELOAD = ("dpcore.sweep", "dpcore.audit.runner")
#: Serialised contexts kept in the parent (least recently used dropped first).
_CONTEXT_CACHE = 4
#: Seconds a worker gets to exit after "stop" before it is killed.
_STOP_GRACE = 2.0


@dataclass(frozen=True)
class Task:
    """One unit of work: ``fn(context, *args, report=...)``, ``fn`` a module-level function (picklable).

    ``context`` is the key of a shared input (see ``contexts`` in :func:`run_tasks`); None passes None.
    ``hard_limit`` (seconds) bounds the task's wall time in a worker process: past it the worker is killed and
    the outcome is ``"killed"``. It is not enforced in-process (``n_jobs=1``).
    """

    fn: Callable[..., Any]
    args: tuple = ()
    context: Hashable | None = None
    hard_limit: float | None = None


@dataclass
class Outcome:
    """What became of task ``index``: ``status`` is "done" (``value`` is the return value), "failed" (the task
    raised; ``message`` says what), "killed" (past its hard limit) or "died" (its worker process exited)."""

    index: int
    status: str
    value: Any = None
    seconds: float = 0.0
    message: str = ""


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
    in use). See the module docstring for hard limits, cancellation and reports.
    """
    jobs = resolve_jobs(n_jobs)
    getter = contexts if contexts is not None else (lambda key: None)
    if jobs == 1:
        return _run_inline(iter(tasks), getter, on_report)
    return _run_pool(iter(tasks), jobs, getter, on_report)


# --------------------------------------------------------------------------------------------------
# in this process
# --------------------------------------------------------------------------------------------------

def _run_inline(tasks: Iterator[Task], contexts: Callable[[Hashable], Any],
                on_report: Callable[[int, Any], None] | None) -> Iterator[Outcome]:
    key_held: Any = object()
    context: Any = None
    for index, task in enumerate(tasks):
        if task.context is None:
            ctx = None
        else:
            if task.context != key_held:
                context, key_held = contexts(task.context), task.context
            ctx = context

        def report(payload: Any, _index: int = index) -> None:
            if on_report is not None:
                on_report(_index, payload)

        t0 = time.perf_counter()
        try:
            value = task.fn(ctx, *task.args, report=report)
        except Exception as exc:
            yield Outcome(index, "failed", seconds=time.perf_counter() - t0, message=f"{type(exc).__name__}: {exc}")
        else:
            yield Outcome(index, "done", value, time.perf_counter() - t0)


# --------------------------------------------------------------------------------------------------
# worker processes
# --------------------------------------------------------------------------------------------------

def _limit_threads(threads: int) -> None:
    with contextlib.suppress(Exception):  # threadpoolctl ships with scikit-learn; without it, BLAS keeps its default
        from threadpoolctl import threadpool_limits

        threadpool_limits(limits=threads)


def _worker_main(conn, threads: int, capacity: int = 1, nice: int = 0) -> None:
    """Worker loop: ("context", key, blob) | ("forget", key) | ("task", index, fn, args, key) | ("stop",).

    The worker holds up to ``capacity`` contexts (least recently sent dropped first) and runs ``nice`` steps below
    its parent's priority (a dashboard server stays responsive while its workers use every core).
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle; it stops the workers
    if nice:
        with contextlib.suppress(OSError):
            os.nice(nice)
    _limit_threads(threads)
    held: OrderedDict[Any, Any] = OrderedDict()
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            return
        if msg[0] == "stop":
            return
        if msg[0] == "context":
            held.pop(msg[1], None)
            while len(held) >= capacity:  # free the oldest context before unpickling the new one
                held.popitem(last=False)
            held[msg[1]] = pickle.loads(msg[2])
            continue
        if msg[0] == "forget":
            held.pop(msg[1], None)
            continue
        _, index, fn, args, key = msg

        def report(payload: Any, _index: int = index) -> None:
            conn.send(("report", _index, payload))

        t0 = time.perf_counter()
        try:
            value = fn(held.get(key) if key is not None else None, *args, report=report)
            out = ("done", index, value, time.perf_counter() - t0)
        except Exception as exc:
            out = ("failed", index, f"{type(exc).__name__}: {exc}", time.perf_counter() - t0)
        try:
            conn.send(out)
        except Exception as exc:  # an unpicklable result
            conn.send(("failed", index, f"the result could not be sent back: {type(exc).__name__}: {exc}",
                       time.perf_counter() - t0))


_CTX: Any = None


def _context() -> Any:
    """The multiprocessing context: a forkserver with dpcore preloaded (spawn where there is none)."""
    global _CTX
    if _CTX is None:
        if "forkserver" in mp.get_all_start_methods():
            ctx = mp.get_context("forkserver")
            with contextlib.suppress(Exception):
                ctx.set_forkserver_preload(list(PRELOAD))
        else:  # pragma: no cover - Windows
            ctx = mp.get_context("spawn")
        _CTX = ctx
    return _CTX


class _Worker:
    __slots__ = ("conn", "context_key", "index", "limit_at", "proc", "started")

    def __init__(self, threads: int, capacity: int = 1, nice: int = 0) -> None:
        ctx = _context()
        parent, child = ctx.Pipe(duplex=True)
        self.proc = ctx.Process(target=_worker_main, args=(child, threads, capacity, nice), daemon=True,
                                name="dpcore-worker")
        self.proc.start()
        child.close()
        self.conn = parent
        self.context_key: Any = None
        self.index: int | None = None  # task running, None when idle
        self.started = 0.0
        self.limit_at = float("inf")

    def kill(self) -> None:
        with contextlib.suppress(Exception):
            self.proc.kill()
        with contextlib.suppress(Exception):
            self.proc.join(5.0)
        with contextlib.suppress(Exception):
            self.conn.close()

    def stop(self) -> None:
        with contextlib.suppress(Exception):
            self.conn.send(("stop",))
        self.proc.join(_STOP_GRACE)
        if self.proc.is_alive():
            self.kill()
        with contextlib.suppress(Exception):
            self.conn.close()


def _run_pool(tasks: Iterator[Task], jobs: int, contexts: Callable[[Hashable], Any],
              on_report: Callable[[int, Any], None] | None) -> Iterator[Outcome]:
    threads = max(1, (os.cpu_count() or 1) // jobs)
    blobs: OrderedDict[Hashable, bytes] = OrderedDict()

    def blob(key: Hashable) -> bytes:
        if key in blobs:
            blobs.move_to_end(key)
            return blobs[key]
        data = pickle.dumps(contexts(key), protocol=pickle.HIGHEST_PROTOCOL)
        blobs[key] = data
        while len(blobs) > _CONTEXT_CACHE:
            blobs.popitem(last=False)
        return data

    workers: list[_Worker] = []
    busy: dict[Any, _Worker] = {}  # connection → worker with a task
    pending: list[tuple[int, Task]] = []  # at most one task pulled from the iterator but not yet started
    next_index = 0
    exhausted = False

    def pull() -> tuple[int, Task] | None:
        nonlocal next_index, exhausted
        if pending:
            return pending.pop()
        if exhausted:
            return None
        try:
            task = next(tasks)
        except StopIteration:
            exhausted = True
            return None
        next_index += 1
        return next_index - 1, task

    def start(worker: _Worker, index: int, task: Task) -> None:
        if task.context is not None and worker.context_key != task.context:
            worker.conn.send(("context", task.context, blob(task.context)))
            worker.context_key = task.context
        worker.conn.send(("task", index, task.fn, task.args, task.context))
        worker.index = index
        worker.started = time.perf_counter()
        worker.limit_at = worker.started + task.hard_limit if task.hard_limit is not None else float("inf")
        busy[worker.conn] = worker

    def replace(worker: _Worker) -> None:
        busy.pop(worker.conn, None)
        worker.kill()
        workers.remove(worker)

    try:
        while True:
            unsent: list[Outcome] = []
            # fill idle workers (starting new ones up to `jobs`), preferring one that holds the task's context
            while True:
                idle = [w for w in workers if w.index is None]
                if not idle and len(workers) >= jobs:
                    break
                item = pull()
                if item is None:
                    break
                index, task = item
                chosen = next((w for w in idle if w.context_key == task.context), idle[0] if idle else None)
                if chosen is None:
                    chosen = _Worker(threads)
                    workers.append(chosen)
                try:
                    start(chosen, index, task)
                except (BrokenPipeError, EOFError, ConnectionError):  # the worker died before the task reached it
                    replace(chosen)
                    pending.append((index, task))
                except Exception as exc:  # the task or its context cannot be pickled: nothing was written
                    busy.pop(chosen.conn, None)
                    chosen.index = None
                    unsent.append(Outcome(index, "failed", message=f"the task could not be sent to a worker "
                                                                   f"process: {type(exc).__name__}: {exc}"))
            yield from unsent
            if not busy:
                if unsent:
                    continue
                return
            now = time.perf_counter()
            timeout = max(0.0, min(w.limit_at for w in busy.values()) - now)
            sentinels = {w.proc.sentinel: w for w in busy.values()}
            ready = _wait([*busy.keys(), *sentinels.keys()], timeout=None if timeout == float("inf") else timeout)
            now = time.perf_counter()
            for obj in ready:
                worker = busy.get(obj) or sentinels.get(obj)
                if worker is None or worker.conn not in busy:
                    continue
                msg: Any = None
                if obj is worker.conn or worker.conn.poll():
                    try:
                        msg = worker.conn.recv()
                    except (EOFError, OSError):
                        msg = None
                    except Exception as exc:  # a result this process cannot unpickle
                        msg = ("failed", worker.index, f"the result could not be read: {type(exc).__name__}: {exc}",
                               now - worker.started)
                if msg is None:  # the worker process is gone
                    worker.proc.join(1.0)
                    index, seconds = worker.index, now - worker.started
                    code = worker.proc.exitcode
                    replace(worker)
                    yield Outcome(index, "died", seconds=seconds,
                                  message=f"the worker process exited with code {code} while running this task")
                    continue
                kind = msg[0]
                if kind == "report":
                    if on_report is not None:
                        on_report(msg[1], msg[2])
                    continue
                busy.pop(worker.conn)
                worker.index = None
                worker.limit_at = float("inf")
                if kind == "done":
                    yield Outcome(msg[1], "done", msg[2], msg[3])
                else:
                    yield Outcome(msg[1], "failed", seconds=msg[3], message=msg[2])
            for worker in [w for w in busy.values() if w.limit_at <= now]:
                index, seconds = worker.index, now - worker.started
                replace(worker)
                yield Outcome(index, "killed", seconds=seconds,
                              message=f"stopped after {seconds:.3g} s: past its hard time limit; the worker process "
                                      "was killed")
    finally:
        for worker in workers:
            if worker.index is not None:
                worker.kill()
            else:
                worker.stop()
