"""One pool of worker processes shared by many jobs (the dashboard's sessions), scheduled so that none starves.

:class:`SharedPool` owns ``slots`` running workers (one per core by default). Anyone may :meth:`~SharedPool.submit`
a *job* — a list of :class:`~dpcore.runtime.parallel.Task` s, e.g. the cells of one sweep — and gets a :class:`Job`
handle
back at once: :meth:`Job.poll` returns the outcomes finished since the last call, :attr:`Job.done` /
:attr:`Job.total` the progress, :meth:`Job.cancel` stops the job (its unstarted tasks are dropped, its running ones
killed; other jobs carry on) and :meth:`Job.wait` blocks until it is over.

**Scheduling: least attained service.** Every job accumulates the worker-seconds its tasks have run. A free slot
goes to the job with the *least* service so far, and a job that has received less than half of what a running job
has (minus a small margin, :data:`PREEMPT_MARGIN_S`) takes a slot from it: the heavier job's worker is paused
(``SIGSTOP``) and a spare worker runs the lighter job's task; the paused worker resumes (``SIGCONT``) as soon as a
slot is free for it. So a short sweep started while a long one runs gets the cores almost at once and finishes in
about its solo time, and long jobs share the cores between them; the paused task keeps its work. Paused time does
not count towards a task's hard limit; a mechanism's own (cooperative) time cap counts wall time, as it does under
any load.

**Workers and data.** Workers speak the task/message protocol of :mod:`dpcore.runtime.protocol`, shared with
:mod:`dpcore.runtime.parallel` (``forkserver``, linear algebra on one thread per worker, a hard per-task kill). A job's
contexts (its prepared data) are pickled in this process and travel to a worker over its pipe only — never through a
file — when the worker does not hold them yet; a worker holds at most :data:`WORKER_CONTEXTS` of them and forgets a
job's contexts when the job is over. Jobs submitted with ``shared_contexts=True`` (the same public data for many
sessions) share their contexts instead: pickled once, sent to a worker once, kept until newer ones push them out.
Outcomes go to the job that submitted the task and nowhere else.

**One computation per identical task.** A task with a ``share`` key (:class:`~dpcore.runtime.protocol.Task`:
the same public data, mechanism, parameters and seed — e.g. one sweep cell that a whole class asks for) is computed
once for every job that asks for it while it is queued, running, or finished less than :data:`SETTLED_KEEP_S`
seconds ago (the time its result needs to reach the callers' own caches): the first job to ask *carries* it (it is
scheduled as that job's task), the others wait on the same computation and receive the same outcome — a failure
(``failed``, ``killed``, ``died``) too, and a failure is never kept, so the next request computes it again. When
the carrier is cancelled (a student leaves, changes a setting) the computation goes on for the next waiter, where
it stands (queued, running or paused); only when nobody waits any more is it dropped. A job waiting only on others
has no work of its own, so it takes no slot.

**Background jobs.** ``submit(..., background=True)`` (e.g. precomputing sweeps at server start) gets slots only
when no other job has work, and gives a running slot back at once (paused) when one has. A computation a
background job carries moves to the first foreground job that asks for it (queued, running or paused, as it
stands), so it runs at that job's priority.

**Without processes.** ``SharedPool(processes=False)`` — or a pool whose first worker could not start (its
:attr:`~SharedPool.fallback_reason` says why) — runs the tasks one at a time on a background thread of this process
with the same policy, minus pausing and hard limits (only the mechanisms' cooperative caps apply).
"""

from __future__ import annotations

import contextlib
import itertools
import multiprocessing as mp
import os
import pickle
import signal
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Hashable, Sequence
from multiprocessing.connection import wait as _wait
from typing import Any

from .protocol import (
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

__all__ = ["PREEMPT_MARGIN_S", "SETTLED_KEEP_S", "WORKER_CONTEXTS", "Job", "SharedPool", "pick_job"]

#: A job takes a running slot from another only when it has received less than half of the other's service minus
#: this many worker-seconds (hysteresis, so two similar jobs do not take turns pausing each other).
PREEMPT_MARGIN_S = 0.25
#: While a job waits for a slot, the pool looks again this often (services grow between events).
RECHECK_S = 0.25
#: Contexts a worker keeps (least recently sent dropped first).
WORKER_CONTEXTS = 2
#: Workers run this many nice steps below the process that owns the pool (the dashboard server keeps answering).
WORKER_NICE = 5
#: Seconds a spare worker (beyond ``slots``) may sit idle before it is stopped.
SPARE_IDLE_S = 30.0
#: First element of the worker-side key of a context shared between jobs (a job's own contexts use its id).
SHARED = "shared"
#: A finished shared computation ("done" outcomes only) can still be attached to for this many seconds: its callers
#: read outcomes when they poll (a page, every 0.2–1.5 s, or only when its whole sweep is over), and only then put
#: them in their caches; a job asking in between gets the outcome instead of computing it again.
SETTLED_KEEP_S = 30.0
#: At most this many finished shared outcomes are kept (oldest dropped first).
SETTLED_MAX = 10_000


class _Shared:
    """One computation asked for by several jobs (tasks with equal share keys and hard limits): ``waiters`` lists
    (job, task index) pairs, the first one the *carrier* (the task is queued or runs as that job's), the others
    waiting for its outcome."""

    __slots__ = ("key", "waiters")

    def __init__(self, key: Hashable) -> None:
        self.key = key
        self.waiters: list[tuple[Job, int]] = []


class Job:
    """Handle of a submitted job: its outcomes so far, its progress, cancellation and completion."""

    _ids = itertools.count(1)

    def __init__(self, pool: SharedPool, tasks: Sequence[Task], contexts: Callable[[Hashable], Any] | None,
                 label: str, shared_contexts: bool = False, background: bool = False) -> None:
        self.id = next(Job._ids)
        self.label = label
        self.shared_contexts = shared_contexts
        self.background = background
        self.tasks = list(tasks)
        self.total = len(self.tasks)
        self._pool = pool
        self._contexts = contexts if contexts is not None else (lambda key: None)
        self._blobs: dict[Hashable, bytes] = {}
        self._pending: deque[int] = deque(range(self.total))
        self._outcomes: dict[int, Outcome] = {}
        self._unread: list[Outcome] = []
        self._inflight: set[int] = set()
        self._reports: dict[int, Any] = {}
        self._shared_at: dict[int, _Shared] = {}  # task index → the shared computation it carries or waits for
        self._waiting: set[int] = set()  # task indices waiting for a computation another job carries
        self._service = 0.0  # worker-seconds received so far (running tasks: up to the pool's last look)
        self.cancelled = False
        self.pauses = 0  # times one of its running tasks was paused for a lighter job
        self.started = time.monotonic()
        self._ended: float | None = None
        self._over = threading.Event()
        if not self.tasks:
            self._finish()

    # ---- read by the submitter (any thread)
    def poll(self) -> list[Outcome]:
        """Outcomes finished since the last call (task index order not guaranteed)."""
        with self._pool._lock:
            out, self._unread = self._unread, []
        return out

    def outcomes(self) -> dict[int, Outcome]:
        """Every outcome so far, by task index."""
        with self._pool._lock:
            return dict(self._outcomes)

    @property
    def service(self) -> float:
        """Worker-seconds this job's tasks have run so far (paused time excluded)."""
        with self._pool._lock:
            self._pool._account(time.monotonic())
            return self._service

    @property
    def done(self) -> int:
        return len(self._outcomes)

    @property
    def finished(self) -> bool:
        """True once every task has an outcome or the job was cancelled (and its running tasks stopped)."""
        return self._over.is_set()

    @property
    def elapsed(self) -> float:
        """Seconds since submission (until the job ended)."""
        return (self._ended if self._ended is not None else time.monotonic()) - self.started

    def reports(self) -> dict[int, Any]:
        """The latest ``report(payload)`` of each running or finished task."""
        with self._pool._lock:
            return dict(self._reports)

    def cancel(self) -> None:
        """Drop the tasks not started and stop the running ones; finished outcomes stay readable."""
        with self._pool._lock:
            if self.finished:
                return
            self.cancelled = True
        self._pool._wake()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the job is over (True) or ``timeout`` seconds passed (False)."""
        return self._over.wait(timeout)

    # ---- used by the pool (with its lock held)
    def _record(self, outcome: Outcome) -> None:
        """The outcome of a task this job ran (or carried for others: they receive it too)."""
        self._inflight.discard(outcome.index)
        entry = self._shared_at.pop(outcome.index, None)
        if entry is not None:
            self._pool._settle(entry, self, outcome)
        if not self.cancelled:
            self._accept(outcome)

    def _accept(self, outcome: Outcome) -> None:
        self._waiting.discard(outcome.index)
        self._outcomes[outcome.index] = outcome
        self._unread.append(outcome)
        if not self._pending and not self._inflight and not self._waiting:
            self._finish()

    def _finish(self) -> None:
        self._pending.clear()
        self._blobs.clear()
        self._contexts = lambda key: None  # nothing of the submitter's data stays referenced
        if self._ended is None:
            self._ended = time.monotonic()
        self._over.set()

    def _key(self, context: Hashable) -> tuple:
        """The key under which a worker holds this job's context ``context``: the job's own, or one shared by every
        job submitted with ``shared_contexts`` (the same key is the same data)."""
        return (SHARED, context) if self.shared_contexts else (self.id, context)

    def _blob(self, key: Hashable) -> bytes:
        if self.shared_contexts:
            return self._pool._shared_blob(key, self._contexts)
        if key not in self._blobs:
            self._blobs[key] = pickle.dumps(self._contexts(key), protocol=pickle.HIGHEST_PROTOCOL)
        return self._blobs[key]


def pick_job(jobs: Sequence[Job], has_work: Callable[[Job], bool]) -> Job | None:
    """The job a free slot goes to: foreground before background jobs, then least service, then the earliest
    submitted (pure; used by both modes)."""
    best = None
    for job in jobs:
        if job.finished or job.cancelled or not has_work(job):
            continue
        if best is None or _rank(job) < _rank(best):
            best = job
    return best


def _rank(job: Any) -> tuple[bool, float, int]:
    return bool(getattr(job, "background", False)), _served(job), job.id


def _served(job: Any) -> float:
    return job._service if isinstance(job, Job) else job.service


class _Slot:
    """A worker process and the task it runs (or None)."""

    __slots__ = ("held", "idle_since", "job", "last_tick", "limit", "paused", "ran", "ready", "task", "worker")

    def __init__(self, worker: Worker) -> None:
        self.worker = worker
        self.ready = False  # the worker has said it started: until then a task sent to it waits, and is not charged
        self.held: OrderedDict[Hashable, None] = OrderedDict()  # context keys the worker holds (mirror of its LRU)
        self.job: Job | None = None
        self.task: int | None = None
        self.paused = False
        self.ran = 0.0  # running seconds of the current task (paused time excluded)
        self.last_tick = 0.0
        self.limit = float("inf")
        self.idle_since = time.monotonic()


class SharedPool:
    """Worker processes shared by every job submitted to it; see the module docstring.

    ``slots``: tasks running at once (default: every core). ``max_workers``: worker processes at most, paused
    ones included (default ``3 × slots``). ``processes=False`` runs everything on one thread of this process.
    """

    def __init__(self, slots: int | None = None, *, processes: bool = True, max_workers: int | None = None) -> None:
        self.slots = max(1, int(slots or os.cpu_count() or 1))
        self.max_workers = max(self.slots + 1, int(max_workers or 3 * self.slots))
        self._lock = threading.RLock()
        self._jobs: list[Job] = []
        self._slots: list[_Slot] = []
        self._shared_blobs: OrderedDict[Hashable, bytes] = OrderedDict()  # pickled shared contexts (LRU)
        self._shared: dict[Hashable, _Shared] = {}  # computations queued or running, by share key
        self._settled: OrderedDict[Hashable, tuple[float, Outcome]] = OrderedDict()  # finished ones, kept a while
        self._inline_task: tuple[Job, int] | None = None  # the task running on the in-process thread
        self._closed = False
        self.fallback_reason = "" if processes else "worker processes were switched off"
        self._wake_r, self._wake_w = mp.Pipe(duplex=False)
        if processes:
            try:
                self._slots.append(_Slot(Worker(WORKER_CONTEXTS, WORKER_NICE)))
            except Exception as exc:  # no processes on this host (sandbox, no /dev/shm, spawn limit, …)
                self.fallback_reason = f"worker processes could not start ({type(exc).__name__}: {exc})"
        self._thread = threading.Thread(target=self._run_inline if self.fallback_reason else self._run_processes,
                                        name="dpcore-shared-pool", daemon=True)
        self._thread.start()

    # ---------------------------------------------------------------- public
    @property
    def in_process(self) -> bool:
        """True when tasks run in this process (no worker processes)."""
        return bool(self.fallback_reason)

    def submit(self, tasks: Sequence[Task], contexts: Callable[[Hashable], Any] | None = None, *,
               label: str = "", shared_contexts: bool = False, background: bool = False) -> Job:
        """Queue ``tasks`` as one job; ``contexts(key)`` builds the shared input a task names (called in the pool's
        thread, once per key). Returns the job's handle at once.

        ``shared_contexts=True`` promises that a context key names the same data in every job submitted so: the
        context is then pickled once and a worker that holds it serves every such job (many sessions on the same
        public dataset). Such contexts outlive the job (least recently used dropped first), so never use it for a
        user's own data. Tasks with a ``share`` key attach to the same computation of another job (see the module
        docstring). ``background=True``: the job runs only on slots no other job wants."""
        if self._closed:
            raise RuntimeError("this pool is closed")
        job = Job(self, tasks, contexts, label, shared_contexts, background)
        with self._lock:
            self._attach(job)
            if not job.finished:
                self._jobs.append(job)
        self._wake()
        return job

    def shared_in_flight(self) -> int:
        """Shared computations queued or running now."""
        with self._lock:
            return len(self._shared)

    def active_jobs(self) -> int:
        with self._lock:
            return sum(not j.finished for j in self._jobs)

    def close(self) -> None:
        """Cancel every job and stop the workers."""
        with self._lock:
            self._closed = True
            for job in self._jobs:
                job.cancelled = True
        self._wake()
        self._thread.join(10.0)

    # ---------------------------------------------------------------- shared helpers
    def _wake(self) -> None:
        with contextlib.suppress(Exception):
            self._wake_w.send_bytes(b"!")

    def _drain_wake(self) -> None:
        with contextlib.suppress(Exception):
            while self._wake_r.poll():
                self._wake_r.recv_bytes()

    def _shared_blob(self, key: Hashable, contexts: Callable[[Hashable], Any]) -> bytes:
        """A shared context, pickled once for every job that names it (the last :data:`WORKER_CONTEXTS` kept)."""
        if key not in self._shared_blobs:
            self._shared_blobs[key] = pickle.dumps(contexts(key), protocol=pickle.HIGHEST_PROTOCOL)
            while len(self._shared_blobs) > WORKER_CONTEXTS:
                self._shared_blobs.popitem(last=False)
        self._shared_blobs.move_to_end(key)
        return self._shared_blobs[key]

    def _prune(self) -> None:
        self._jobs = [j for j in self._jobs if not j.finished]

    # ---------------------------------------------------------------- one computation per share key (lock held)
    def _attach(self, job: Job) -> None:
        """Join ``job``'s shared tasks to the computations already queued, running or just finished; the rest are
        its own (and others may join them)."""
        now = time.monotonic()
        while self._settled and now - next(iter(self._settled.values()))[0] > SETTLED_KEEP_S:
            self._settled.popitem(last=False)
        ready: list[Outcome] = []
        for index, task in enumerate(job.tasks):
            if task.share is None:
                continue
            key = (task.share, task.hard_limit)
            if key in self._settled:
                done = self._settled[key][1]
                ready.append(Outcome(index, done.status, done.value, done.seconds, done.message))
                continue
            entry = self._shared.get(key)
            if entry is None:
                entry = self._shared[key] = _Shared(key)
            entry.waiters.append((job, index))
            job._shared_at[index] = entry
            if len(entry.waiters) > 1:
                job._waiting.add(index)
                carrier = entry.waiters[0][0]
                if carrier.background and not job.background:
                    self._carry(entry, (job, index), stays=True)  # from now on it runs at this job's priority
        if job._waiting or ready:
            done_now = {o.index for o in ready}
            job._pending = deque(i for i in job._pending if i not in job._waiting and i not in done_now)
        for outcome in ready:
            job._accept(outcome)
        if not job.tasks or (not job._pending and not job._waiting and not job._inflight):
            job._finish()

    def _carry(self, entry: _Shared, to: tuple[Job, int], stays: bool) -> None:
        """Move ``entry``'s computation from its carrier to the waiter ``to``, where it stands (queued, running,
        paused). ``stays``: the old carrier waits for it from now on (else it has left)."""
        old_job, old_index = entry.waiters[0]
        entry.waiters.remove(to)
        entry.waiters.insert(0, to)
        new_job, new_index = to
        new_job._waiting.discard(new_index)
        if old_index in old_job._pending:
            old_job._pending.remove(old_index)
            if new_index not in new_job._pending:
                new_job._pending.appendleft(new_index)
        else:
            old_job._inflight.discard(old_index)
            new_job._inflight.add(new_index)
            for slot in self._slots:
                if slot.job is old_job and slot.task == old_index:
                    slot.job, slot.task = new_job, new_index
            if self._inline_task == (old_job, old_index):
                self._inline_task = to
        if stays:
            old_job._waiting.add(old_index)
            if old_index in old_job._reports:
                new_job._reports[new_index] = old_job._reports[old_index]

    def _leave(self, job: Job) -> None:
        """A cancelled ``job`` stops waiting for shared computations; those it carried go on for their next waiter,
        those nobody waits for any more are dropped (and run no further)."""
        for index, entry in list(job._shared_at.items()):
            carried = entry.waiters[0] == (job, index)
            if carried and len(entry.waiters) > 1:
                self._carry(entry, entry.waiters[1], stays=False)
            entry.waiters.remove((job, index))
            if not entry.waiters and self._shared.get(entry.key) is entry:
                del self._shared[entry.key]
        job._shared_at.clear()
        job._waiting.clear()

    def _settle(self, entry: _Shared, carrier: Job, outcome: Outcome) -> None:
        """The shared computation ``entry`` has ended: every other waiter receives its outcome (with its own task
        index); a "done" outcome stays attachable for :data:`SETTLED_KEEP_S` seconds, a failure is not kept."""
        if self._shared.get(entry.key) is entry:
            del self._shared[entry.key]
        for job, index in entry.waiters:
            if job is carrier and index == outcome.index:
                continue
            job._shared_at.pop(index, None)
            job._waiting.discard(index)
            if not job.cancelled:
                job._accept(Outcome(index, outcome.status, outcome.value, outcome.seconds, outcome.message))
                if job.finished and not self.in_process:
                    self._after_job(job)
        entry.waiters.clear()
        if outcome.status == OutcomeStatus.DONE:
            self._settled[entry.key] = (time.monotonic(), outcome)
            self._settled.move_to_end(entry.key)
            while len(self._settled) > SETTLED_MAX:
                self._settled.popitem(last=False)

    # ---------------------------------------------------------------- in this process
    def _run_inline(self) -> None:
        runner = InlineRunner()
        while True:
            with self._lock:
                for job in self._jobs:
                    if job.cancelled and not job.finished:
                        self._leave(job)
                        job._finish()
                self._prune()
                if self._closed:
                    return
                job = pick_job(self._jobs, lambda j: bool(j._pending))
                if job is not None:
                    index = job._pending.popleft()
                    job._inflight.add(index)
                    self._inline_task = (job, index)
            if job is None:
                _wait([self._wake_r], timeout=1.0)
                self._drain_wake()
                continue
            task = job.tasks[index]

            def report(payload: Any) -> None:
                with self._lock:
                    if self._inline_task is not None:
                        owner, at = self._inline_task  # the carrier may have changed (a shared task)
                        owner._reports[at] = payload

            outcome = runner.run(index, task, job._key(task.context), job._contexts, report)
            with self._lock:
                job, outcome.index = self._inline_task  # the carrier may have changed (a shared task)
                self._inline_task = None
                job._service += outcome.seconds
                job._record(outcome)
                if job.finished:
                    runner.forget()

    # ---------------------------------------------------------------- worker processes
    def _run_processes(self) -> None:
        try:
            while True:
                now = time.monotonic()
                with self._lock:
                    self._account(now)
                    self._cancel_jobs()
                    if self._closed:
                        return
                    self._schedule(now)
                    self._reap(now)
                    busy = [s for s in self._slots if s.job is not None]
                    running = [s for s in busy if not s.paused]
                    timeout = min((s.limit - s.ran for s in running), default=float("inf"))
                    if len(self._slots) > self.slots:
                        timeout = min(timeout, SPARE_IDLE_S)
                    if any(self._work(j) for j in self._jobs):  # someone waits: services change, look again soon
                        timeout = min(timeout, RECHECK_S)
                conns = {s.worker.conn: s for s in busy}
                sentinels = {s.worker.proc.sentinel: s for s in busy}
                ready = _wait([self._wake_r, *conns, *sentinels],
                              timeout=None if timeout == float("inf") else max(0.0, timeout))
                if self._wake_r in ready:
                    self._drain_wake()
                now = time.monotonic()
                with self._lock:
                    self._account(now)
                    for obj in ready:
                        slot = conns.get(obj) or sentinels.get(obj)
                        # (a worker that died is ready twice, pipe and sentinel: the first look removed its slot)
                        if slot is not None and slot.job is not None and slot in self._slots:
                            self._receive(slot, obj is slot.worker.conn)
                    for slot in [s for s in self._slots if s.job is not None and not s.paused and s.ran >= s.limit]:
                        job, index, ran = slot.job, slot.task, slot.ran
                        self._abandon(slot)
                        job._record(killed(index, ran))
                        self._after_job(job)
        finally:
            for slot in self._slots:
                if slot.job is not None:
                    slot.worker.kill()
                else:
                    slot.worker.stop()
            self._slots.clear()

    def _account(self, now: float) -> None:
        if self.in_process:
            return
        for slot in self._slots:
            if slot.job is not None and not slot.paused and slot.ready:
                step = now - slot.last_tick
                slot.ran += step
                slot.job._service += step
                slot.last_tick = now

    def _cancel_jobs(self) -> None:
        for job in [j for j in self._jobs if j.cancelled and not j.finished]:
            self._leave(job)  # first: a task it carried for others goes on running for them
            job._pending.clear()
            for slot in [s for s in self._slots if s.job is job]:
                self._abandon(slot)
            job._inflight.clear()
            job._finish()
            self._after_job(job)
        self._prune()

    def _after_job(self, job: Job) -> None:
        """A finished job's contexts leave the workers that are free to read a message."""
        if not job.finished:
            return
        for slot in self._slots:
            for key in [k for k in slot.held if k[0] == job.id]:
                del slot.held[key]
                # a busy worker reads the message after its task (a paused one, after it resumes)
                with contextlib.suppress(Exception):
                    slot.worker.forget(key)
        self._prune()

    def _abandon(self, slot: _Slot) -> None:
        """Kill the slot's worker (its task is given up) and remove it."""
        if slot.job is not None and slot.task is not None:
            slot.job._inflight.discard(slot.task)
        slot.worker.kill()
        self._slots.remove(slot)

    def _work(self, job: Job) -> bool:
        return bool(job._pending) or any(s.job is job and s.paused for s in self._slots)

    def _schedule(self, now: float) -> None:
        # fill free running slots, neediest job first (a paused task of that job resumes before a new one starts)
        while sum(s.job is not None and not s.paused for s in self._slots) < self.slots:
            job = pick_job(self._jobs, self._work)
            if job is None or not self._give(job, now):
                break
        # take slots from much better served jobs
        while True:
            job = pick_job(self._jobs, self._work)
            running = [s for s in self._slots if s.job is not None and not s.paused]
            if job is None or not running:
                return
            victim = max(running, key=lambda s: _rank(s.job))
            if job.background and not victim.job.background:
                return
            if not (victim.job.background and not job.background) \
                    and not victim.job._service > 2 * job._service + PREEMPT_MARGIN_S:
                return
            if not any(s.job is job and s.paused for s in self._slots) and not self._spare_available():
                return
            self._pause(victim)
            if not self._give(job, now):
                self._resume(victim, now)
                return

    def _spare_available(self) -> bool:
        return any(s.job is None for s in self._slots) or len(self._slots) < self.max_workers

    def _give(self, job: Job, now: float) -> bool:
        """Run one more task of ``job``: resume a paused one or start a pending one. False when no worker is free."""
        paused = next((s for s in self._slots if s.job is job and s.paused), None)
        if paused is not None:
            self._resume(paused, now)
            return True
        idle = [s for s in self._slots if s.job is None]
        # prefer a pending task whose context an idle worker already holds
        for pos, index in enumerate(itertools.islice(job._pending, 32)):
            key = job._key(job.tasks[index].context)
            slot = next((s for s in idle if key in s.held), None)
            if slot is not None:
                del job._pending[pos]
                return self._start(slot, job, index, now)
        if not idle:
            if len(self._slots) >= self.max_workers:
                return False
            try:
                slot = _Slot(Worker(WORKER_CONTEXTS, WORKER_NICE))
            except Exception:  # could not start another process: wait for one to free up
                return False
            self._slots.append(slot)
            idle = [slot]
        return self._start(idle[0], job, job._pending.popleft(), now)

    def _start(self, slot: _Slot, job: Job, index: int, now: float) -> bool:
        task = job.tasks[index]
        key = job._key(task.context)
        try:
            if task.context is not None and key not in slot.held:
                slot.worker.send_context(key, job._blob(task.context))
                slot.held[key] = None
                while len(slot.held) > WORKER_CONTEXTS:
                    slot.held.popitem(last=False)
            slot.worker.send_task(index, task, key if task.context is not None else None)
        except (BrokenPipeError, EOFError, ConnectionError, OSError):  # the worker died while idle
            slot.worker.kill()
            self._slots.remove(slot)
            job._pending.appendleft(index)
            return True  # try again on the next round
        except Exception as exc:  # the task or its context cannot be pickled
            job._inflight.add(index)
            job._record(unsent(index, exc))
            self._after_job(job)
            return True
        job._inflight.add(index)
        slot.job, slot.task, slot.paused = job, index, False
        slot.ran, slot.last_tick = 0.0, now
        slot.limit = task.hard_limit if task.hard_limit is not None else float("inf")
        return True

    def _pause(self, slot: _Slot) -> None:
        slot.worker.signal(signal.SIGSTOP)
        slot.paused = True
        if slot.job is not None:
            slot.job.pauses += 1

    def _resume(self, slot: _Slot, now: float) -> None:
        slot.worker.signal(signal.SIGCONT)
        slot.paused = False
        slot.last_tick = now

    def _reap(self, now: float) -> None:
        """Stop spare workers (beyond ``slots``) idle for a while."""
        idle = [s for s in self._slots if s.job is None]
        for slot in idle[: max(0, len(self._slots) - self.slots)]:
            if now - slot.idle_since > SPARE_IDLE_S:
                slot.worker.stop()
                self._slots.remove(slot)

    def _receive(self, slot: _Slot, readable: bool) -> None:
        msg: ReadyMessage | ReportMessage | Outcome | None = None
        if readable or slot.worker.conn.poll():
            if slot.paused:
                # A worker stopped half-way through writing a message (a large result or report goes out in several
                # writes) would leave recv() waiting for the rest for ever, with the pool's lock held: let it finish
                # writing first (a report's sender is stopped again below; a result's worker stays running).
                slot.worker.signal(signal.SIGCONT)
            msg = slot.worker.receive(slot.task, slot.ran)
            if slot.paused and isinstance(msg, ReadyMessage | ReportMessage):
                slot.worker.signal(signal.SIGSTOP)
        if isinstance(msg, ReadyMessage):  # the worker has started: its task's time runs from now
            slot.ready, slot.last_tick = True, time.monotonic()
            return
        job, index = slot.job, slot.task
        if msg is None:  # the worker process is gone
            code = slot.worker.exitcode()
            ran = slot.ran
            self._abandon(slot)
            job._record(died(index, ran, code))
            self._after_job(job)
            return
        if isinstance(msg, ReportMessage):
            job._reports[index] = msg.payload  # the slot's task index: a shared task may have changed carrier
            return
        if slot.paused:
            # The task ended just before it was paused (its result was already in the pipe): the worker is stopped
            # and would never read the next message sent to it, so it must run again before it counts as free.
            self._resume(slot, time.monotonic())
        slot.job, slot.task, slot.paused, slot.limit = None, None, False, float("inf")
        slot.idle_since = time.monotonic()
        msg.index = index  # the worker knows the first carrier's index
        job._record(msg)
        self._after_job(job)
