"""Issue #12: one worker pool shared fairly by many jobs (dpcore.runtime.scheduler.SharedPool).

Orders are checked from the tasks' own finishing times (wall clock, shared by the processes), and every wait has a
generous bound, so a slow machine makes the tests slower, not wrong.
"""

from __future__ import annotations

import gc
import os
import signal
import sys
import threading
import time
from types import SimpleNamespace
from typing import ClassVar

import pandas as pd
import pytest
from _slow_mechanisms import SleepyMechanism

from dpcore.evaluation.sweep import PooledSweep, plan_sweep, run_sweep
from dpcore.mechanisms import _INSTANCES, _REGISTRY
from dpcore.runtime.parallel import Task
from dpcore.runtime.scheduler import SharedPool, pick_job

WAIT = 60.0


def _nap(context, seconds, report=None):
    """Sleep, then return the wall-clock time it finished (and the context it was given)."""
    time.sleep(seconds)
    return time.time(), context


def _until(predicate, timeout: float = WAIT) -> None:
    end = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < end, "timed out waiting"
        time.sleep(0.02)


@pytest.fixture
def pool_factory():
    pools: list[SharedPool] = []

    def make(*args, **kwargs) -> SharedPool:
        pool = SharedPool(*args, **kwargs)
        pools.append(pool)
        return pool

    yield make
    for pool in pools:
        pool.close()


def _ends(job) -> list[float]:
    return sorted(o.value[0] for o in job.outcomes().values())


def test_pick_job_prefers_the_least_served_then_the_oldest():
    jobs = [SimpleNamespace(id=i, service=s, finished=f, cancelled=c)
            for i, s, f, c in [(1, 5.0, False, False), (2, 0.5, False, False), (3, 0.5, False, False),
                               (4, 0.0, True, False), (5, 0.0, False, True)]]
    assert pick_job(jobs, lambda j: True).id == 2  # 4 is over, 5 cancelled; 2 and 3 tie → the older one
    assert pick_job(jobs, lambda j: j.id != 2).id == 3
    assert pick_job(jobs, lambda j: j.id == 1).id == 1
    assert pick_job(jobs, lambda j: False) is None


@pytest.mark.slow
def test_a_light_job_submitted_later_finishes_before_the_heavy_one_goes_on(pool_factory):
    """One slot: after the heavy task running when the light job arrives, every free slot goes to the light job
    (it has received less), so the heavy job's second task ends after the light job's last.

    Service is wall time, and a pool worker runs niced: on a loaded machine (CI) a 0.05 s task took ≈ 0.4 s of
    service, so the heavy tasks are long enough (1.5 s) that the light job's four tasks stay the lighter load."""
    pool = pool_factory(1)
    heavy = pool.submit([Task(_nap, (1.5,)) for _ in range(3)], label="heavy")
    light = pool.submit([Task(_nap, (0.05,)) for _ in range(4)], label="light")
    assert light.wait(WAIT) and heavy.wait(WAIT)
    assert light.done == 4 and heavy.done == 3
    assert _ends(light)[-1] < _ends(heavy)[1]


@pytest.mark.slow
def test_a_workers_start_is_not_charged_to_the_job_whose_task_waits_for_it(pool_factory):
    """A spare worker slow to start (its fork held back 4 s here, as on a loaded machine) is no service of the job
    whose task waits for it: otherwise that job looks better served than the one it preempted, and the scheduler
    hands the slot back. The clock starts at the worker's ready message. (One short task: on a loaded machine its
    service — wall time in a niced worker — was ≈ 0.4 s in CI; the old code charged the whole 4 s.)"""
    from multiprocessing import forkserver

    pool = pool_factory(1)
    heavy = pool.submit([Task(_nap, (90.0,))], label="heavy")
    _until(lambda: heavy.service > 1.0)
    server = forkserver._forkserver._forkserver_pid
    if server is None:
        pytest.skip("no forkserver on this platform")
    os.kill(server, signal.SIGSTOP)
    try:
        light = pool.submit([Task(_nap, (0.05,))], label="light")
        time.sleep(4.0)
    finally:
        os.kill(server, signal.SIGCONT)
    assert light.wait(WAIT) and light.done == 1
    assert light.service < 2.0, f"the light job was charged {light.service:.2f} s for one task of 0.05 s"
    heavy.cancel()
    assert heavy.wait(WAIT)


@pytest.mark.slow
def test_a_light_job_takes_the_slot_of_a_long_running_task(pool_factory):
    """Preemption: the heavy task already running is paused while the light job runs (a paused task can be
    cancelled)."""
    pool = pool_factory(1)
    heavy = pool.submit([Task(_nap, (90.0,))], label="heavy")
    _until(lambda: heavy.service > 1.0)
    light = pool.submit([Task(_nap, (0.05,)) for _ in range(3)], label="light")
    assert light.wait(WAIT) and light.done == 3
    assert heavy.done == 0 and not heavy.finished  # its task could only end after 90 s
    # paused for the light job (once, or again if it was resumed between two light tasks on a loaded machine) and
    # the light job never paused
    assert heavy.pauses >= 1 and light.pauses == 0
    heavy.cancel()
    assert heavy.wait(WAIT) and heavy.done == 0


@pytest.mark.slow
def test_cancel_keeps_finished_outcomes_and_other_jobs_go_on(pool_factory):
    pool = pool_factory(2)
    other = pool.submit([Task(_nap, (0.3,)) for _ in range(4)], label="other")
    job = pool.submit([Task(_nap, (0.01,)), Task(_nap, (0.01,)), Task(_nap, (60.0,)), Task(_nap, (60.0,)),
                       Task(_nap, (60.0,))], label="cancelled")
    _until(lambda: job.done >= 2)
    job.cancel()
    assert job.wait(WAIT) and job.cancelled
    kept = job.outcomes()
    assert sorted(kept) == [0, 1] and all(o.status == "done" for o in kept.values())
    assert sorted(o.index for o in job.poll()) == [0, 1]
    assert other.wait(WAIT) and other.done == 4
    assert {o.status for o in other.outcomes().values()} == {"done"}


@pytest.mark.slow
def test_a_stuck_task_is_killed_at_its_hard_limit_while_another_job_proceeds(pool_factory):
    pool = pool_factory(2)
    stuck = pool.submit([Task(_nap, (120.0,), hard_limit=0.5)], label="stuck")
    other = pool.submit([Task(_nap, (0.2,)) for _ in range(6)], label="other")
    assert other.wait(WAIT) and stuck.wait(WAIT)
    out = stuck.outcomes()[0]
    assert out.status == "killed" and "hard time limit" in out.message and out.seconds >= 0.5
    assert {o.status for o in other.outcomes().values()} == {"done"} and other.done == 6


@pytest.mark.slow
def test_contexts_reach_only_their_own_jobs_tasks(pool_factory):
    pool = pool_factory(2)
    a = pool.submit([Task(_nap, (0.01,), context="k") for _ in range(4)], lambda key: ("a", key))
    b = pool.submit([Task(_nap, (0.01,), context="k") for _ in range(4)], lambda key: ("b", key))
    assert a.wait(WAIT) and b.wait(WAIT)
    assert {o.value[1] for o in a.outcomes().values()} == {("a", "k")}
    assert {o.value[1] for o in b.outcomes().values()} == {("b", "k")}


@pytest.mark.slow
def test_shared_contexts_are_built_once_for_every_job_and_private_ones_stay_apart(pool_factory):
    pool = pool_factory(2)
    built: list[str] = []

    def public(key):
        built.append(key)
        return ("public", key)

    shared = [pool.submit([Task(_nap, (0.01,), context="k") for _ in range(3)], public, shared_contexts=True)
              for _ in range(4)]
    own = pool.submit([Task(_nap, (0.01,), context="k") for _ in range(3)], lambda key: ("own", key))
    assert all(job.wait(WAIT) for job in [*shared, own])
    assert built == ["k"]  # pickled once for the four jobs
    assert {o.value[1] for job in shared for o in job.outcomes().values()} == {("public", "k")}
    assert {o.value[1] for o in own.outcomes().values()} == {("own", "k")}  # same key, its own data


@pytest.mark.slow
def test_shared_pool_workers_run_linear_algebra_on_one_thread(pool_factory):
    """Issue #22: a worker of the shared pool runs its BLAS/OpenMP libraries on one thread, even with fewer slots
    than cores (the old rule gave each worker cores // slots threads)."""
    from test_parallel import _blas_threads

    job = pool_factory(1).submit([Task(_blas_threads)])
    assert job.wait(WAIT) and job.outcomes()[0].status == "done", job.outcomes()
    libraries = job.outcomes()[0].value
    assert [lib for lib in libraries if lib[0] == "blas"], libraries
    assert all(threads == 1 for _, _, threads in libraries), libraries


def _worker_states(pool: SharedPool) -> list[str]:
    """The kernel's state letter of each worker process (Linux /proc; "T" = stopped by SIGSTOP)."""
    states = []
    for slot in pool._slots:
        with open(f"/proc/{slot.worker.proc.pid}/status") as status:
            states.append(next(line.split()[1] for line in status if line.startswith("State:")))
    return states


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads worker states from /proc")
def test_a_task_that_finishes_as_it_is_paused_leaves_its_worker_running(pool_factory):
    """The race behind a cold classroom that never got its charts: the pool pauses a task whose result is already
    waiting, unread, in the pipe. Its worker then counts as free but stays stopped, so the next task (or a context
    too large for the pipe's buffer, with the pool's lock held) is sent to a process that never reads it. Forced
    here by holding the pool's lock while the heavy task ends and a light job arrives."""
    pool = pool_factory(1, max_workers=2)
    heavy = pool.submit([Task(_nap, (0.6,))], label="heavy")
    _until(lambda: heavy.service > 0.3)
    with pool._lock:  # the dispatcher wakes for the light job but cannot look before the heavy task has ended
        light = pool.submit([Task(_nap, (0.05,))], label="light")
        first = pool._slots[0].worker
        _until(lambda: first.conn.poll())  # the heavy task's result is waiting, unread
    assert light.wait(WAIT) and heavy.wait(WAIT)
    assert heavy.done == 1 and light.done == 1
    _until(lambda: len(pool._slots) == 2)
    assert _worker_states(pool).count("T") == 0  # no free worker left stopped
    for n in range(4):  # and every free worker takes new tasks
        job = pool.submit([Task(_nap, (0.01,)) for _ in range(2)], label=f"after {n}")
        assert job.wait(20.0) and job.done == 2


def _big_result(context, seconds, size, report=None):
    """Sleep, then return ``size`` bytes: a message the worker writes in many pieces (a pipe holds 64 KiB)."""
    time.sleep(seconds)
    return bytes(size)


@pytest.mark.slow
def test_a_worker_paused_half_way_through_sending_its_result_is_read_to_the_end(pool_factory):
    """The hang of a loaded test run: the pool paused a worker while it was writing a large result, then its recv()
    waited for the rest for ever with the pool's lock held. Forced here: the lock is held while the worker fills
    the pipe, and the slot is paused right then, as a preempting light job would."""
    pool = pool_factory(1, max_workers=2)
    size = 4_000_000
    job = pool.submit([Task(_big_result, (1.0, size))], label="big")
    _until(lambda: any(s.job is job for s in pool._slots))
    slot = next(s for s in pool._slots if s.job is job)
    with pool._lock:  # the dispatcher sees the pipe readable but cannot read before the slot is paused
        _until(lambda: slot.worker.conn.poll())  # the first 64 KiB are in the pipe; the worker is blocked writing
        pool._pause(slot)
    finished = job.wait(20.0)
    if not finished:  # old code: unstick the worker so the pool can shut down, then fail
        os.kill(slot.worker.proc.pid, signal.SIGCONT)
    assert finished and job.done == 1 and len(job.outcomes()[0].value) == size


@pytest.mark.slow
def test_many_sessions_submitting_at_once_to_a_fresh_pool_all_finish(pool_factory):
    """A classroom on a fresh pool: 16 threads submit jobs with a context larger than a pipe's buffer within a
    second (the pool pauses and resumes workers all the time); every job finishes."""
    pool = pool_factory(2)
    blob = bytes(2_000_000)
    jobs: list = []
    bell = threading.Barrier(16)

    def session(n: int) -> None:
        bell.wait()
        time.sleep(0.04 * n)  # students press the button within a second: earlier jobs are served already
        tasks = [Task(_nap, (0.03 * (1 + (i + n) % 3),), context="data") for i in range(8)]
        jobs.append(pool.submit(tasks, lambda key, _n=n: (_n, blob), label=f"session {n}"))

    threads = [threading.Thread(target=session, args=(n,)) for n in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    end = time.monotonic() + WAIT
    assert all(job.wait(max(0.0, end - time.monotonic())) for job in jobs), \
        f"{sum(not j.finished for j in jobs)} of 16 jobs never finished"
    assert all(job.done == 8 for job in jobs)
    owners = [{o.value[1][0] for o in job.outcomes().values()} for job in jobs]
    assert all(len(owner) == 1 for owner in owners)  # each job's tasks saw its own context only
    assert sorted(next(iter(owner)) for owner in owners) == list(range(16))


SWEEP = dict(mechanisms=["pca", "random", "analyze_gauss", "laplace", "itu"], epsilons=[0.5, 2.0], deltas=[1e-5],
             ks=[1, 2], trials=2, sample_sizes=[120, 200], seed=3)


def _pool_frame(pool: SharedPool, data) -> pd.DataFrame:
    plan = plan_sweep(data, **SWEEP)
    job = pool.submit([plan.task(i) for i in range(plan.total)], plan.context)
    assert job.wait(WAIT)
    return plan.frame({o.index: plan.row(o) for o in job.outcomes().values()})


@pytest.mark.slow
@pytest.mark.parametrize("processes", [True, False])
def test_a_sweep_on_the_shared_pool_gives_run_sweeps_frame(small_data, pool_factory, processes):
    pool = pool_factory(2, processes=processes)
    assert pool.in_process is not processes
    pooled = _pool_frame(pool, small_data)
    serial = run_sweep(small_data, n_jobs=1, **SWEEP)
    assert set(serial.status) == {"ok"}
    pd.testing.assert_frame_equal(pooled.drop(columns="runtime_s"), serial.drop(columns="runtime_s"))


def test_in_process_pool_says_why_and_cancels(pool_factory):
    pool = pool_factory(processes=False)
    assert pool.in_process and "switched off" in pool.fallback_reason
    job = pool.submit([Task(_nap, (0.01,)), *[Task(_nap, (0.3,)) for _ in range(20)]])
    _until(lambda: job.done >= 1)
    job.cancel()
    assert job.wait(WAIT) and job.done < 21 and job.outcomes()[0].status == "done"


def test_cell_keys_ignore_other_mechanisms_and_epsilons(small_data):
    base = plan_sweep(small_data, mechanisms=["laplace"], epsilons=[1.0], trials=2, seed=4)
    wider = plan_sweep(small_data, mechanisms=["laplace", "analyze_gauss"], epsilons=[0.5, 1.0], trials=2, seed=4)
    keys = {base.cell_key(i) for i in range(base.total)}
    assert keys < {wider.cell_key(i) for i in range(wider.total)}
    reseeded = plan_sweep(small_data, mechanisms=["laplace"], epsilons=[1.0], trials=2, seed=5)
    assert not keys & {reseeded.cell_key(i) for i in range(reseeded.total)}


class _StuckMechanism(SleepyMechanism):
    """Sleeps far past any cap for ε > 1.5 without checking its deadline (test only)."""

    id = "test_stuck_in_pool"
    name = "Stuck (test only)"


@pytest.mark.slow
def test_a_stuck_sweep_cell_times_out_at_its_cap_while_another_sessions_sweep_runs(small_data, pool_factory,
                                                                                      monkeypatch):
    monkeypatch.setitem(_REGISTRY, _StuckMechanism.id, _StuckMechanism)
    monkeypatch.setitem(_INSTANCES, _StuckMechanism.id, _StuckMechanism())
    pool = pool_factory(2)
    stuck = PooledSweep(pool, {"main": plan_sweep(small_data, mechanisms=[_StuckMechanism.id], epsilons=[1.0, 2.0],
                                                  trials=1, ks=[2], time_cap=2.0)})
    other = PooledSweep(pool, {"main": plan_sweep(small_data, **SWEEP)})
    assert other.job.wait(WAIT) and stuck.job.wait(WAIT)
    stuck.collect()
    other.collect()
    rows = stuck.frames()["main"].set_index("epsilon")
    assert rows.loc[2.0, "status"] == "timeout" and "worker process was killed" in rows.loc[2.0, "message"]
    assert rows.loc[1.0, "status"] == "ok"
    assert set(other.frames()["main"].status) == {"ok"} and other.done == other.total
    # only finished ok/bottom cells enter the cache: the time-out is computed again next time
    assert len(stuck.cache) == 1


@pytest.mark.slow
def test_a_sweep_nobody_holds_any_more_is_cancelled(small_data, pool_factory, monkeypatch):
    monkeypatch.setitem(_REGISTRY, _StuckMechanism.id, _StuckMechanism)
    monkeypatch.setitem(_INSTANCES, _StuckMechanism.id, _StuckMechanism())
    pool = pool_factory(1)
    sweep = PooledSweep(pool, {"main": plan_sweep(small_data, mechanisms=[_StuckMechanism.id], epsilons=[2.0],
                                                  trials=3, ks=[2], time_cap=100.0)})
    job = sweep.job
    del sweep
    gc.collect()
    assert job.wait(WAIT) and job.cancelled and job.done == 0


@pytest.mark.slow
def test_fast_cells_are_submitted_first_and_the_frame_keeps_sweep_order(small_data, pool_factory):
    pool = pool_factory(processes=False)
    plan = plan_sweep(small_data, mechanisms=["ppca", "laplace"], epsilons=[1.0, 2.0], trials=2, ks=[2], seed=2,
                      mechanism_options={"ppca": {"burn_in": 20}})
    sweep = PooledSweep(pool, {"main": plan})
    submitted = [plan.cells[index].mech.id for _, index in sweep._where]
    assert submitted == ["laplace"] * 4 + ["ppca"] * 4
    assert sweep.job.wait(WAIT)
    sweep.collect()
    pd.testing.assert_frame_equal(sweep.frames()["main"].drop(columns="runtime_s"),
                                  run_sweep(small_data, plan.config).drop(columns="runtime_s"))


# ------------------------------------------------------------------ one computation per identical task (issue #22)
def _counted(context, log: str, seconds: float, report=None):
    """Append a line to ``log`` (one per computation), sleep, and return a value no second computation repeats."""
    with open(log, "a") as out:
        out.write("x\n")
    time.sleep(seconds)
    return os.urandom(8).hex()


def _fails_first(context, log: str, report=None):
    """Count the call in ``log``; the first call raises, later ones return a value."""
    with open(log, "a") as out:
        out.write("x\n")
    if _computations(log) == 1:
        raise RuntimeError("first attempt fails")
    return "second attempt"


def _computations(log) -> int:
    if not os.path.exists(log):
        return 0
    with open(log) as lines:
        return sum(1 for _ in lines)


@pytest.mark.slow
@pytest.mark.parametrize("processes", [True, False])
def test_identical_tasks_of_many_jobs_are_computed_once_and_all_get_the_same_result(pool_factory, tmp_path,
                                                                                     processes):
    """A class of 20 sessions asks for the same two cells at once: two computations, 20 identical results each."""
    pool = pool_factory(2, processes=processes)
    log = str(tmp_path / "calls")
    bell = threading.Barrier(20)
    jobs: list = []

    def session() -> None:
        bell.wait()
        jobs.append(pool.submit([Task(_counted, (log, 0.4), share="cell A"), Task(_counted, (log, 0.4),
                                                                                   share="cell B")]))

    threads = [threading.Thread(target=session) for _ in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(job.wait(WAIT) for job in jobs)
    assert _computations(log) == 2
    for index in (0, 1):
        outcomes = [job.outcomes()[index] for job in jobs]
        assert {o.status for o in outcomes} == {"done"}
        assert len({o.value for o in outcomes}) == 1
    assert jobs[0].outcomes()[0].value != jobs[0].outcomes()[1].value  # different cells: separate computations
    assert pool.shared_in_flight() == 0


@pytest.mark.slow
def test_tasks_without_a_share_key_or_with_different_keys_are_computed_apart(pool_factory, tmp_path):
    """Private data (no share key: an upload) is computed per job, and different cells are different
    computations."""
    pool = pool_factory(2)
    log = str(tmp_path / "calls")
    private = [pool.submit([Task(_counted, (log, 0.05))]) for _ in range(3)]
    public = [pool.submit([Task(_counted, (log, 0.05), share=("cell", n))]) for n in range(3)]
    assert all(job.wait(WAIT) for job in [*private, *public])
    assert _computations(log) == 6
    assert len({job.outcomes()[0].value for job in [*private, *public]}) == 6


@pytest.mark.slow
@pytest.mark.parametrize("processes", [True, False])
def test_a_failure_reaches_every_waiter_and_is_computed_again_next_time(pool_factory, tmp_path, processes):
    pool = pool_factory(1, processes=processes)
    log = str(tmp_path / "calls")
    blocker = pool.submit([Task(_nap, (0.3,))])  # the shared task waits in the queue while the others attach
    jobs = [pool.submit([Task(_fails_first, (log,), share="cell")]) for _ in range(5)]
    assert blocker.wait(WAIT) and all(job.wait(WAIT) for job in jobs)
    assert _computations(log) == 1
    outcomes = [job.outcomes()[0] for job in jobs]
    assert {o.status for o in outcomes} == {"failed"}
    assert all("first attempt fails" in o.message for o in outcomes)
    again = pool.submit([Task(_fails_first, (log,), share="cell")])  # the failure was not kept
    assert again.wait(WAIT) and again.outcomes()[0].status == "done"
    assert again.outcomes()[0].value == "second attempt" and _computations(log) == 2


@pytest.mark.slow
def test_a_finished_shared_result_is_handed_to_a_job_asking_soon_after(pool_factory, tmp_path):
    pool = pool_factory(1)
    log = str(tmp_path / "calls")
    first = pool.submit([Task(_counted, (log, 0.01), share="cell")])
    assert first.wait(WAIT)
    later = pool.submit([Task(_counted, (log, 0.01), share="cell")])
    assert later.wait(WAIT) and later.finished
    assert later.outcomes()[0].value == first.outcomes()[0].value and _computations(log) == 1


@pytest.mark.slow
@pytest.mark.parametrize("processes", [True, False])
def test_a_cancelled_carrier_leaves_the_computation_to_the_next_waiter(pool_factory, tmp_path, processes):
    """The student whose session started a cell leaves (cancel): the cell goes on for the others, computed once."""
    pool = pool_factory(2, processes=processes)
    log = str(tmp_path / "calls")
    carrier = pool.submit([Task(_counted, (log, 1.0), share="running"), Task(_counted, (log, 0.01), share="queued"),
                           Task(_counted, (log, 0.01), share="queued 2")])
    _until(lambda: _computations(log) >= 1)  # the first shared task runs
    waiters = [pool.submit([Task(_counted, (log, 1.0), share="running"), Task(_counted, (log, 0.01), share="queued"),
                            Task(_counted, (log, 0.01), share="queued 2")]) for _ in range(3)]
    carrier.cancel()
    assert carrier.wait(WAIT) and carrier.cancelled
    assert all(job.wait(WAIT) for job in waiters)
    assert _computations(log) == 3
    for index in range(3):
        outcomes = [job.outcomes()[index] for job in waiters]
        assert {o.status for o in outcomes} == {"done"} and len({o.value for o in outcomes}) == 1
    # (in this process a running task cannot be stopped: it runs to its end)
    everyone_left = pool.submit([Task(_counted, (log, 30.0 if processes else 1.0), share="abandoned")])
    _until(lambda: _computations(log) == 4)
    everyone_left.cancel()
    assert everyone_left.wait(WAIT)
    _until(lambda: pool.shared_in_flight() == 0)  # nobody waits: dropped, not kept


@pytest.mark.slow
def test_a_background_job_yields_to_a_session_and_hands_it_the_cells_it_asks_for(pool_factory, tmp_path):
    """Precomputation at server start: a background job runs only while no session has work; a session asking for a
    cell the background job has queued takes it over (runs it at the session's priority), computed once."""
    pool = pool_factory(1)
    log = str(tmp_path / "calls")
    background = pool.submit([Task(_nap, (0.3,), share=("cell", n)) for n in range(6)], background=True,
                             label="precompute")
    _until(lambda: background.done >= 1)
    session = pool.submit([Task(_nap, (0.01,), share=("cell", 5)), Task(_counted, (log, 0.01))], label="student")
    assert session.wait(WAIT)
    assert background.done < 6  # the student did not wait for the background job's queue
    assert background.wait(WAIT) and background.done == 6
    assert background.outcomes()[5].value == session.outcomes()[0].value  # the one computation of cell 5
    assert session.outcomes()[0].value[0] < max(o.value[0] for o in background.outcomes().values())


def test_pick_job_puts_background_jobs_last():
    jobs = [SimpleNamespace(id=1, service=0.0, finished=False, cancelled=False, background=True),
            SimpleNamespace(id=2, service=9.0, finished=False, cancelled=False, background=False)]
    assert pick_job(jobs, lambda j: True).id == 2
    assert pick_job(jobs, lambda j: j.id == 1).id == 1


class _CountingMechanism(SleepyMechanism):
    """Counts its releases (in this process: run on an in-process pool), each a little slow (test only)."""

    id = "test_counting_in_pool"
    name = "Counting (test only)"
    calls: ClassVar[list[float]] = []

    def _release(self, data, k, epsilon, delta, *, neighbouring, rng, deadline, **options):
        type(self).calls.append(epsilon)
        time.sleep(0.02)
        return super()._release(data, k, min(epsilon, 1.0), delta, neighbouring=neighbouring, rng=rng,
                                deadline=deadline, **options)


@pytest.mark.slow
def test_sweeps_on_public_data_share_their_cells_in_flight_and_private_ones_never(small_data, pool_factory,
                                                                                   monkeypatch):
    """Four sessions start the same sweep on public data: each cell is computed once and every session gets the same
    rows. The same sweeps on private data (an upload: ``shared_contexts`` False) are computed once per session."""
    monkeypatch.setitem(_REGISTRY, _CountingMechanism.id, _CountingMechanism)
    monkeypatch.setitem(_INSTANCES, _CountingMechanism.id, _CountingMechanism())
    monkeypatch.setattr(_CountingMechanism, "calls", [])
    pool = pool_factory(processes=False)
    plan = plan_sweep(small_data, mechanisms=[_CountingMechanism.id, "laplace"], epsilons=[0.5, 1.0, 2.0], trials=3,
                      ks=[2], seed=7)
    public = [PooledSweep(pool, {"main": plan}, {}, shared_contexts=True) for _ in range(4)]
    assert all(sweep.job.wait(WAIT) for sweep in public)
    assert len(_CountingMechanism.calls) == 9  # 3 ε × 3 trials, once
    frames = []
    for sweep in public:
        sweep.collect()
        frames.append(sweep.frames()["main"])
    for frame in frames[1:]:
        pd.testing.assert_frame_equal(frame, frames[0])
    private = [PooledSweep(pool, {"main": plan}, {}) for _ in range(2)]
    assert all(sweep.job.wait(WAIT) for sweep in private)
    assert len(_CountingMechanism.calls) == 9 + 2 * 9
