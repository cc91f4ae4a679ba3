"""Precompute, in the background, the sweeps a class opens first (issue 20 item 8, issue 22 item 4): the default
Explore sweep of the built-in datasets and the lesson's sweep (Adult: Analyze Gauss, Laplace, MOD-SULQ, PPCA, IT-U
× 7 ε × 5 trials), so that a class never waits for the same cells.

* **When.** ``streamlit run`` executes no app code before the first session opens a page, so "server start" is the
  end of the server's first page run: :func:`start` (the one line in ``app.py``, after the page) starts one daemon
  thread per server, which waits :data:`START_DELAY_S` more (the first page's browser requests go first) and never
  runs again in that process.
* **Public data only.** Everything here comes from the dataset *registry* through
  :func:`pages.ui.server_cache.builtin_prepared` (an upload cannot reach it), with the dashboard's default settings.
  Its releases go into the server-level store of public releases (:class:`pages.ui.server_cache.SessionCells`), the
  same rows a session would have computed.
* **Low priority, bounded, cancellable.** The sweeps run as *background* jobs of the shared pool
  (:class:`dpcore.runtime.scheduler.SharedPool`): only on slots no session wants, their running cells paused at once
  when a session needs the slot, and their workers niced below the server. They stop after
  ``DP_PRECOMPUTE_BUDGET_S`` seconds (default :data:`BUDGET_S`) and on :func:`stop`.
* **Attach, don't repeat.** A session asking for a cell being precomputed attaches to that computation (the pool's
  share keys, :meth:`dpcore.evaluation.sweep.SweepPlan.cell_key`); a cell not started yet moves to the session and
  runs at its priority.
* **Switches.** ``DP_PRECOMPUTE=0`` turns it off (the test suite does, except the tests of this module); it is also
  off when the server-level caches are (``DP_SERVER_CACHE=0``: nothing could be shared). ``DP_PRECOMPUTE_DATASETS``
  (comma-separated ids) chooses the datasets; by default Adult (defaults and lesson) and then every built-in dataset
  of at most :data:`MAX_ROWS` rows, smallest first.

**Seeds (privacy review item 12).** A precomputed cell uses the seed a session would use: the dashboard's default
seed is fixed only for the *public* built-in data (the reproducible lesson: every student sees the same curves);
an upload gets a fresh seed from OS entropy and never takes part in any of this, because uploaded data has no public
fingerprint, so its cells carry no share key and its releases stay in the session. Sharing a computation changes
no seed: a cell's seed is part of its key, so two sessions attach to one computation only when they would have
computed exactly the same release on the same public data — its noise is then as public as the data itself. No
private data is ever released with a seed chosen here.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field

import streamlit as st
from streamlit.logger import get_logger

import dpcore
from dpcore.evaluation.sweep import PooledSweep, SweepConfig, plan_sweep

#: Environment switches.
SWITCH = "DP_PRECOMPUTE"
BUDGET_ENV = "DP_PRECOMPUTE_BUDGET_S"
DATASETS_ENV = "DP_PRECOMPUTE_DATASETS"
#: Seconds the whole precomputation may take (then it is cancelled; finished cells stay).
BUDGET_S = 900.0
#: Seconds between the end of the first page run and the start of the work.
START_DELAY_S = 2.0
#: Built-in datasets above this many rows are left out by default (loading them alone takes memory and seconds).
MAX_ROWS = 50_000
#: The lesson's mechanisms (issue 20: "Explore with five mechanisms", on the default dataset).
LESSON_MECHANISMS = ("analyze_gauss", "laplace", "mod_sulq", "ppca", "itu")
#: Seconds between two looks at a running sweep (its finished cells go to the server-level store).
POLL_S = 0.2
#: Wall-clock cap of one precomputed cell. A session's cap (20 s by default) is meant for someone waiting; a
#: background cell runs niced, is paused whenever a session needs its slot, and its wall-clock deadline runs on
#: meanwhile — under load a PPCA release on Adult (≈ 3–10 CPU-s) then ran past 20 s, its time-out was (rightly) not
#: stored, and the lesson's 35 PPCA cells were never precomputed. The cap is not part of a cell's key (the same
#: release, same seed), so the longer cap changes no number a session sees.
CELL_TIME_CAP_S = 600.0
#: Seconds between two redraws of the sidebar's progress line while the precomputation runs.
STATUS_POLL_S = 3.0

_LOG = get_logger(__name__)


def enabled() -> bool:
    """Whether precomputation is on: ``DP_PRECOMPUTE`` is not "0" and the server-level caches are on."""
    from pages.ui import server_cache

    return os.environ.get(SWITCH, "1").strip() != "0" and server_cache.enabled()


def _budget() -> float:
    try:
        return max(0.0, float(os.environ.get(BUDGET_ENV, BUDGET_S)))
    except ValueError:
        return BUDGET_S


@dataclass(frozen=True)
class Item:
    """One precomputed sweep: a built-in dataset with the default settings, and the mechanisms of its curves."""

    dataset_id: str
    mechanisms: tuple[str, ...]
    label: str


def plan_items(dataset_ids: list[str] | None = None) -> list[Item]:
    """What to precompute, in order: Adult's default sweep, the lesson's, then the other datasets' defaults."""
    from pages.ui import state

    registered = set(dpcore.mechanism_ids())
    defaults = tuple(m for m in state.DEFAULT_MECHANISMS if m in registered)
    lesson = tuple(m for m in LESSON_MECHANISMS if m in registered)
    infos = {d.id: d for d in state.dataset_infos()}
    if dataset_ids is None:
        chosen = os.environ.get(DATASETS_ENV, "").strip()
        if chosen:
            dataset_ids = [d.strip() for d in chosen.split(",") if d.strip() in infos]
        else:
            dataset_ids = sorted((d for d in infos if d == state.DEFAULT_DATASET or infos[d].n <= MAX_ROWS),
                                 key=lambda d: (d != state.DEFAULT_DATASET, infos[d].n))
    items = []
    for dataset_id in dataset_ids:
        items.append(Item(dataset_id, defaults, f"{dataset_id}: default Explore sweep"))
        if dataset_id == state.DEFAULT_DATASET and set(lesson) - set(defaults):
            items.append(Item(dataset_id, lesson, f"{dataset_id}: the lesson's sweep"))
    return items


def default_plans(item: Item) -> dict:
    """The plans Explore makes for ``item`` with the default settings (its curves and the reference lines): the same
    prepared data (shared, public) and configurations, so the same cell keys (the time cap, no part of a key, is
    :data:`CELL_TIME_CAP_S`)."""
    from pages.ui import server_cache, state

    settings = {**state.DEFAULTS, **state.private_defaults(item.dataset_id)}
    options = {"feature_scaling": settings["dp_scaling"],
               "norm_bound": None if settings["dp_norm_auto"] else float(settings["dp_norm_bound"]),
               "norm_mode": settings["dp_norm_mode"], "centering": settings["dp_centering"],
               "random_state": int(settings["dp_seed"])}
    prepared = server_cache.builtin_prepared(item.dataset_id, tuple(sorted(options.items())))
    lo, hi = settings["dp_eps_range"]
    common = dict(deltas=(state.dataset_default_delta(item.dataset_id),), ks=(min(int(settings["dp_k"]), prepared.d),),
                  trials=int(settings["dp_trials"]), seed=int(settings["dp_seed"]),
                  neighbouring=settings["dp_neighbouring"],
                  time_cap=max(float(settings["dp_time_cap"]), CELL_TIME_CAP_S))
    order = [m.id for m in state.selectable_mechanisms()]
    mechanisms = sorted(item.mechanisms, key=order.index)
    configs = {"main": SweepConfig(mechanisms=mechanisms, epsilons=[e for e in state.EPS_GRID
                                                                    if lo - 1e-12 <= e <= hi + 1e-12], **common)}
    refs = [m.id for m in state.reference_mechanisms() if common["neighbouring"] in m.neighbourings]
    if refs:
        configs["reference lines"] = SweepConfig(mechanisms=refs, epsilons=(1.0,), **common)
    return {name: plan_sweep(prepared, config, dataset_name=item.dataset_id) for name, config in configs.items()}


@dataclass
class Precompute:
    """The server's precomputation: its items, progress and state ("waiting", "planning", "running", "done",
    "stopped", "over budget", or "failed: …" when the thread itself failed).

    Each item runs whatever another does: an item whose plans or sweep raise is recorded in :attr:`failed` and the
    next one starts. Before any sweep, every item is planned: a dataset that cannot run at the default settings
    (e.g. no public feature ranges, so no public default bound) leaves the list (:attr:`skipped`), so the progress
    ("3 of 9") counts only what will run."""

    items: list[Item]
    budget_s: float
    state: str = "waiting"
    cells_done: int = 0
    cells_reused: int = 0
    seconds: float = 0.0
    #: The items that will run (planned without error), the index of the one running, and those finished.
    runnable: list[Item] = field(default_factory=list)
    position: int = 0
    finished_items: list[Item] = field(default_factory=list)
    #: "label: why" for each item that failed (its own error, the others went on) or was left out when planned.
    failed: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _finished: threading.Event = field(default_factory=threading.Event)

    def stop(self) -> None:
        """Cancel: the running sweep stops (its finished cells stay in the store), nothing more starts."""
        self._stop.set()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the precomputation is over (True) or ``timeout`` seconds passed (False)."""
        return self._finished.wait(timeout)

    @property
    def over(self) -> bool:
        return self._finished.is_set()

    def lesson_ready(self) -> bool:
        """Every planned item on the default dataset (its default sweep and the lesson's) has finished."""
        from pages.ui import state

        lesson = [i for i in self.runnable if i.dataset_id == state.DEFAULT_DATASET]
        return bool(lesson) and all(i in self.finished_items for i in lesson)

    def _plan(self) -> list[tuple[Item, dict]]:
        """Plans of every item that can run at the default settings; the others are recorded in :attr:`skipped`
        (a :class:`dpcore.DPCoreError`: the dataset has no public defaults) or :attr:`failed` (anything else)."""
        planned = []
        for item in self.items:
            if self._stop.is_set():
                break
            try:
                planned.append((item, default_plans(item)))
            except dpcore.DPCoreError as exc:
                self.skipped.append(f"{item.label}: {_short(exc)}")
            except Exception as exc:  # one item's failure must not end the others
                self.failed.append(f"{item.label}: {type(exc).__name__}: {_short(exc)}")
        return planned

    def _sweep(self, pool, plans: dict, item: Item, started: float) -> None:
        """Run one item's sweep in the background until it finishes, the budget ends or :meth:`stop`."""
        from pages.ui import server_cache

        sweep = PooledSweep(pool, plans, server_cache.SessionCells(), label=f"precompute {item.label}",
                            shared_contexts=True, background=True)
        self.cells_reused += sweep.reused
        try:
            while not sweep.finished:
                if self._stop.is_set() or time.monotonic() - started > self.budget_s:
                    sweep.cancel()
                    break
                if sweep.job is not None:
                    sweep.job.wait(POLL_S)
                sweep.collect()
        finally:
            self.cells_done += sweep.done - sweep.reused
        _LOG.info("precompute: %s — %d releases (%d already there) after %.1f s", item.label, sweep.total,
                  sweep.reused, time.monotonic() - started)

    def run(self, pool=None, delay: float = START_DELAY_S) -> None:
        """Plan every item, then run the runnable ones, one background sweep after the other (this thread only waits
        and collects). An item that fails is recorded and the next one runs."""
        from pages.ui import pool as pool_module

        started = time.monotonic()
        try:
            if self._stop.wait(delay):
                self.state = "stopped"
                return
            self.state = "planning"
            planned = self._plan()
            self.runnable = [item for item, _ in planned]
            pool = pool if pool is not None else pool_module.shared_pool()
            self.state = "running"
            for self.position, (item, plans) in enumerate(planned):
                if self._stop.is_set() or time.monotonic() - started > self.budget_s:
                    break
                try:
                    self._sweep(pool, plans, item, started)
                except Exception as exc:  # one item's failure must not end the others
                    self.failed.append(f"{item.label}: {type(exc).__name__}: {_short(exc)}")
                    _LOG.warning("precompute: %s failed (%s: %s); going on with the next item", item.label,
                                 type(exc).__name__, _short(exc))
                    continue
                if not self._stop.is_set() and time.monotonic() - started <= self.budget_s:
                    self.finished_items.append(item)
            self.state = ("stopped" if self._stop.is_set() else
                          "over budget" if time.monotonic() - started > self.budget_s else "done")
        except Exception as exc:  # never take the server down: the sessions compute what is missing themselves
            self.state = f"failed: {type(exc).__name__}: {_short(exc)}"
        finally:
            self.seconds = time.monotonic() - started
            _LOG.info("precompute finished (%s): %d of %d sweeps, %d releases computed, %d already there, %.1f s%s%s",
                      self.state, len(self.finished_items), len(self.runnable), self.cells_done, self.cells_reused,
                      self.seconds, f"; failed: {'; '.join(self.failed)}" if self.failed else "",
                      f"; left out (cannot run at the defaults): {'; '.join(self.skipped)}" if self.skipped else "")
            self._finished.set()

    def status(self) -> tuple[str, str]:
        """(icon, one line) for the sidebar: what the precomputation is doing or did, e.g. "Precomputing 3 of 9
        default sweeps · lesson ready"."""
        total = len(self.runnable)
        ready = " · **lesson ready**" if self.lesson_ready() else ""
        failed = f" · {len(self.failed)} failed (computed when asked)" if self.failed else ""
        if self.state in ("waiting", "planning"):
            return ":material/hourglass_top:", "Precomputing the default sweeps: starting…"
        if self.state == "running":
            label = self.runnable[self.position].label if self.position < total else ""
            return ":material/hourglass_top:", (f"Precomputing {min(self.position + 1, total)} of {total} default "
                                                f"sweeps ({label}){ready}{failed}")
        if self.state == "done":
            return ":material/check_circle:", (f"{'Lesson ready: ' if ready else ''}{len(self.finished_items)} of "
                                               f"{total} default sweeps precomputed{failed}")
        why = "stopped" if self.state == "stopped" else "ran out of time" if self.state == "over budget" else \
            "failed"
        return ":material/info:", (f"Precomputation {why} after {len(self.finished_items)} of {total} default "
                                   f"sweeps{ready}{failed}; the rest are computed when asked")


def _short(exc: BaseException, limit: int = 160) -> str:
    """An error's first line, cut to ``limit`` characters (the log and the sidebar stay readable)."""
    text = str(exc).splitlines()[0] if str(exc) else ""
    return text if len(text) <= limit else text[:limit - 1] + "…"


_LOCK = threading.Lock()
_CURRENT: Precompute | None = None


def start() -> Precompute | None:
    """Start the precomputation once per server process (no-op when off or already started); returns it."""
    global _CURRENT
    if not enabled():
        return None
    with _LOCK:
        if _CURRENT is None:
            _CURRENT = Precompute(plan_items(), _budget())
            threading.Thread(target=_CURRENT.run, name="dpcore-precompute", daemon=True).start()
        return _CURRENT


def current() -> Precompute | None:
    """The server's precomputation, if one was started."""
    return _CURRENT


def stop() -> None:
    """Cancel the server's precomputation (if any)."""
    if _CURRENT is not None:
        _CURRENT.stop()


@st.fragment(run_every=STATUS_POLL_S)
def _live_status() -> None:
    run = current()
    if run is not None:
        icon, text = run.status()
        st.caption(f"{icon} {text}")


def sidebar_status(slot=None) -> None:
    """In the sidebar (in ``slot``, the line under the page links, when given): the precomputation's progress
    ("Precomputing 3 of 9 default sweeps · lesson ready"), redrawn every :data:`STATUS_POLL_S` seconds while it
    runs; nothing when it is off."""
    run = current()
    if run is None:
        return
    with slot.container() if slot is not None else st.sidebar:
        if run.over:
            icon, text = run.status()
            st.caption(f"{icon} {text}")
        else:
            _live_status()
