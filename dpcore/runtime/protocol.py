"""The one task/message protocol between a pool and its worker processes, and the one way a task is run.

Both pools use it: :mod:`dpcore.runtime.parallel` (a sweep's or an audit's own workers) and
:mod:`dpcore.runtime.scheduler` (the
dashboard's shared fair pool). It holds

* the unit of work, :class:`Task`, and what became of it, :class:`Outcome` (also the worker's result message);
* the messages on a worker's pipe — parent → worker: :class:`ContextMessage`, :class:`ForgetMessage`,
  :class:`TaskMessage`, :class:`StopMessage`; worker → parent: :class:`ReadyMessage` (once, when it has started),
  :class:`ReportMessage` and :class:`Outcome`;
* :func:`run_task` (one task, timed, its exception turned into a "failed" outcome), used in a worker and in this
  process alike, and :class:`InlineRunner`, which runs tasks in this process and keeps the last context it built;
* :class:`Worker` (one worker process: start, send, receive, stop, kill) and the worker's loop, :func:`worker_main`;
* the outcomes a pool writes itself (:func:`killed`, :func:`died`, :func:`unsent`), so every pool says the same.

**Threads.** Every worker runs its linear algebra on one thread (BLAS and OpenMP pools limited to 1 with
``threadpoolctl``, and the thread-count variables set to 1 for libraries loaded later): a pool runs one worker per
core, and the small dense operations of a release (PPCA's ``eigh`` of ~100 × 100 blocks, thousands of times) are
slower on several threads than on one, while more threads per worker would only oversubscribe the cores.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import pickle
import signal
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any, NamedTuple

from ..vocabulary import Choice

__all__ = ["PRELOAD", "ContextMessage", "ForgetMessage", "InlineRunner", "Outcome", "OutcomeStatus", "ReadyMessage",
           "ReportMessage", "StopMessage", "Task", "TaskMessage", "Worker", "died", "killed", "receive", "run_task",
           "unsent", "worker_main"]

#: Modules the forkserver imports once, so that forked workers start warm.
PRELOAD = ("dpcore.evaluation.sweep", "dpcore.audit.runner")
#: Seconds a worker gets to exit after a stop message before it is killed.
STOP_GRACE_S = 2.0
#: Thread-count variables read by BLAS/OpenMP libraries when they load (set to 1 in a worker).
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS",
                    "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")


# --------------------------------------------------------------------------------------------------
# tasks and outcomes
# --------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Task:
    """One unit of work: ``fn(context, *args, report=...)``, ``fn`` a module-level function (picklable).

    ``context`` is the key of a shared input (the pool's ``contexts(key)`` builds it); None passes None.
    ``hard_limit`` (seconds) bounds the task's wall time in a worker process: past it the worker is killed and
    the outcome is ``"killed"``. It is not enforced in this process.
    ``share`` names the computation for pools that run identical tasks of different jobs once
    (:class:`~dpcore.runtime.scheduler.SharedPool`): two tasks with equal ``share`` keys (and hard limits) promise
    the same result, so a job asking for one already queued or running waits for that one. None: never shared.
    Only for public inputs (the key must determine the result, seed included).
    """

    fn: Callable[..., Any]
    args: tuple = ()
    context: Hashable | None = None
    hard_limit: float | None = None
    share: Hashable | None = None


class OutcomeStatus(Choice):
    """What became of one task of a pool."""

    DONE = "done"      #: it returned (``Outcome.value`` is its return value)
    FAILED = "failed"  #: it raised, or could not be sent or received; ``Outcome.message`` says what
    KILLED = "killed"  #: past its hard time limit: its worker process was killed
    DIED = "died"      #: its worker process exited while running it


@dataclass
class Outcome:
    """What became of task ``index`` (:class:`OutcomeStatus`; ``value`` for DONE, ``message`` otherwise)."""

    index: int
    status: OutcomeStatus
    value: Any = None
    seconds: float = 0.0
    message: str = ""


def killed(index: int, seconds: float) -> Outcome:
    """The outcome of a task whose worker was killed past the task's hard time limit."""
    return Outcome(index, OutcomeStatus.KILLED, seconds=seconds,
                   message=f"stopped after {seconds:.3g} s: past its hard time limit; the worker process was killed")


def died(index: int, seconds: float, exitcode: int | None) -> Outcome:
    """The outcome of a task whose worker process exited while running it."""
    return Outcome(index, OutcomeStatus.DIED, seconds=seconds,
                   message=f"the worker process exited with code {exitcode} while running this task")


def unsent(index: int, exc: BaseException) -> Outcome:
    """The outcome of a task that could not be sent to a worker (it or its context cannot be pickled)."""
    return Outcome(index, OutcomeStatus.FAILED, message=f"the task could not be sent to a worker process: "
                                                        f"{type(exc).__name__}: {exc}")


def run_task(index: int, task_fn: Callable[..., Any], args: tuple, context: Callable[[], Any],
             report: Callable[[Any], None]) -> Outcome:
    """Run ``task_fn(context(), *args, report=report)`` and time it; an exception (in the task or in building its
    context) is the outcome "failed", its message the exception's type and text."""
    t0 = time.perf_counter()
    try:
        value = task_fn(context(), *args, report=report)
    except Exception as exc:
        return Outcome(index, OutcomeStatus.FAILED, seconds=time.perf_counter() - t0,
                       message=f"{type(exc).__name__}: {exc}")
    return Outcome(index, OutcomeStatus.DONE, value, time.perf_counter() - t0)


class InlineRunner:
    """Runs tasks in this process, one after the other, keeping the last context it built (keyed by the caller)."""

    _NONE: Any = object()

    def __init__(self) -> None:
        self._key: Any = self._NONE
        self._value: Any = None

    def run(self, index: int, task: Task, key: Hashable, build: Callable[[Hashable], Any],
            report: Callable[[Any], None]) -> Outcome:
        """Run ``task``; its context is ``build(task.context)``, built again only when ``key`` changes."""
        def context() -> Any:
            if task.context is None:
                return None
            if key != self._key:
                self.forget()  # the old context goes before the new one is built
                self._value, self._key = build(task.context), key
            return self._value

        return run_task(index, task.fn, task.args, context, report)

    def forget(self) -> None:
        """Drop the context held."""
        self._key, self._value = self._NONE, None


# --------------------------------------------------------------------------------------------------
# messages
# --------------------------------------------------------------------------------------------------

class ContextMessage(NamedTuple):
    """Parent → worker: hold the pickled context ``blob`` under ``key``."""

    key: Hashable
    blob: bytes


class ForgetMessage(NamedTuple):
    """Parent → worker: drop the context held under ``key``."""

    key: Hashable


class TaskMessage(NamedTuple):
    """Parent → worker: run task ``index``, ``fn(context held under key, *args)`` (``key`` None: no context)."""

    index: int
    fn: Callable[..., Any]
    args: tuple
    key: Hashable | None


class StopMessage(NamedTuple):
    """Parent → worker: exit."""


class ReadyMessage(NamedTuple):
    """Worker → parent, once, first: the worker process has started (its thread limits set) and reads its pipe.

    A task sent before it waited while the process started (a fork, slow on a loaded machine): its clock — a pool's
    service accounting and hard limit — starts here, not when it was sent.
    """


class ReportMessage(NamedTuple):
    """Worker → parent: task ``index`` called ``report(payload)``."""

    index: int
    payload: Any


def receive(conn: Any, index: int | None, seconds: float) -> ReadyMessage | ReportMessage | Outcome | None:
    """The next message from a worker running task ``index`` (for ``seconds`` so far): a report, the task's outcome,
    or None when the worker process is gone. A message this process cannot unpickle is the outcome "failed"."""
    try:
        return conn.recv()
    except (EOFError, OSError):
        return None
    except Exception as exc:
        return Outcome(index, OutcomeStatus.FAILED, seconds=seconds,
                       message=f"the result could not be read: {type(exc).__name__}: {exc}")


# --------------------------------------------------------------------------------------------------
# the worker process
# --------------------------------------------------------------------------------------------------

def single_threaded() -> None:
    """Limit this process's BLAS/OpenMP libraries to one thread, those loaded now and those loaded later."""
    for variable in THREAD_VARIABLES:
        os.environ[variable] = "1"
    with contextlib.suppress(Exception):  # threadpoolctl ships with scikit-learn; without it, the variables remain
        from threadpoolctl import threadpool_limits

        threadpool_limits(limits=1)


def worker_main(conn: Any, capacity: int = 1, nice: int = 0) -> None:
    """A worker's loop: hold contexts, run tasks, send reports and outcomes, until a stop message or a closed pipe.

    The worker holds up to ``capacity`` contexts (least recently sent dropped first), runs ``nice`` steps below
    its parent's priority (a dashboard server stays responsive while its workers use every core) and runs its
    linear algebra on one thread.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle; it stops the workers
    if nice:
        with contextlib.suppress(OSError):
            os.nice(nice)
    single_threaded()
    try:
        conn.send(ReadyMessage())
    except (EOFError, OSError):
        return
    held: OrderedDict[Any, Any] = OrderedDict()
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            return
        if isinstance(msg, StopMessage):
            return
        if isinstance(msg, ContextMessage):
            held.pop(msg.key, None)
            while len(held) >= capacity:  # free the oldest context before unpickling the new one
                held.popitem(last=False)
            held[msg.key] = pickle.loads(msg.blob)
            continue
        if isinstance(msg, ForgetMessage):
            held.pop(msg.key, None)
            continue
        index, key = msg.index, msg.key

        def report(payload: Any, _index: int = index) -> None:
            conn.send(ReportMessage(_index, payload))

        outcome = run_task(index, msg.fn, msg.args, lambda _key=key: held.get(_key) if _key is not None else None,
                           report)
        try:
            conn.send(outcome)
        except Exception as exc:  # an unpicklable result (pickled before anything is written)
            conn.send(Outcome(index, OutcomeStatus.FAILED, seconds=outcome.seconds,
                              message=f"the result could not be sent back: {type(exc).__name__}: {exc}"))


_CTX: Any = None


def _mp_context() -> Any:
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


class Worker:
    """One worker process running :func:`worker_main`, and the parent's end of its pipe (``conn``)."""

    __slots__ = ("conn", "proc")

    def __init__(self, capacity: int = 1, nice: int = 0) -> None:
        ctx = _mp_context()
        parent, child = ctx.Pipe(duplex=True)
        self.proc = ctx.Process(target=worker_main, args=(child, capacity, nice), daemon=True, name="dpcore-worker")
        self.proc.start()
        child.close()
        self.conn = parent

    def send_context(self, key: Hashable, blob: bytes) -> None:
        self.conn.send(ContextMessage(key, blob))

    def send_task(self, index: int, task: Task, key: Hashable | None) -> None:
        self.conn.send(TaskMessage(index, task.fn, task.args, key))

    def forget(self, key: Hashable) -> None:
        self.conn.send(ForgetMessage(key))

    def receive(self, index: int | None, seconds: float) -> ReadyMessage | ReportMessage | Outcome | None:
        """See :func:`receive`."""
        return receive(self.conn, index, seconds)

    def signal(self, signum: int) -> None:
        """Send ``signum`` to the process (e.g. SIGSTOP/SIGCONT to pause and resume it); a gone process is ignored."""
        with contextlib.suppress(Exception):
            os.kill(self.proc.pid, signum)

    def exitcode(self) -> int | None:
        """The process's exit code once it has gone (None if it still runs after a second)."""
        self.proc.join(1.0)
        return self.proc.exitcode

    def kill(self) -> None:
        with contextlib.suppress(Exception):
            self.proc.kill()
        with contextlib.suppress(Exception):
            self.proc.join(5.0)
        with contextlib.suppress(Exception):
            self.conn.close()

    def stop(self) -> None:
        """Ask the process to exit; kill it if it has not after :data:`STOP_GRACE_S`."""
        with contextlib.suppress(Exception):
            self.conn.send(StopMessage())
        self.proc.join(STOP_GRACE_S)
        if self.proc.is_alive():
            self.kill()
        with contextlib.suppress(Exception):
            self.conn.close()
