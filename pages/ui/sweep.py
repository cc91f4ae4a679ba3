"""Sweeps in the dashboard: run on the server's shared worker pool (:mod:`pages.ui.pool`), streamed into the charts as
releases finish, with a Cancel button that keeps the finished ones, and the run-or-reuse panel Explore and Sample
size share ("Run sweep" button, automatic runs for cheap settings, stale-result note).

Finished releases are kept per session at the level of single cells (key: the data's fingerprint and the cell's own
settings, :meth:`dpcore.evaluation.sweep.SweepPlan.cell_key`), so a cancelled run, an added mechanism or a wider ε
grid only
computes the cells it has not seen. Sweeps of fast covariance mechanisms wait for their result inside the page run
(about a second); slower ones wait :data:`SYNC_WAIT_S`, then the page shows what has finished and a fragment polls
the job, redrawing the charts as cells arrive.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
import streamlit as st

from dpcore.evaluation.sweep import PooledSweep, SweepPlan, plan_sweep, quick_mechanism
from dpcore.exceptions import DPCoreError
from pages.ui import odometer
from pages.ui.datasets import current_dataset_name
from pages.ui.pool import pool_notice, shared_pool
from pages.ui.server_cache import SessionCells, is_public
from pages.ui.state import slot_key

#: Minimum seconds between two progress-bar updates of a sweep the page waits for.
PROGRESS_INTERVAL = 0.2
#: Seconds between two looks at a streaming sweep (progress line).
POLL_S = 0.5
#: While releases stream in, the charts are redrawn at most this often (a redraw reruns the whole page).
REDRAW_S = 1.5
#: A slow sweep is waited for this long inside the page run before it streams (small ones finish inside).
SYNC_WAIT_S = 2.0
#: Session-state key of the per-session cell cache, and its size bound (rows).
CELL_CACHE = slot_key("cells")
CELL_CACHE_MAX = 50_000


def sweep_key(prepared, config) -> tuple:
    """What identifies a sweep's result: the data's fingerprint and the whole configuration."""
    return (prepared.fingerprint, repr(sorted(config.as_dict().items())))


def _cells() -> dict:
    """The session's finished releases; those on public built-in data also go to (and come from) the server-level
    store (:class:`pages.ui.server_cache.SessionCells`), every other row stays in the session."""
    return st.session_state.setdefault(CELL_CACHE, SessionCells())


def _plans(prepared, configs: dict[str, Any]) -> dict[str, SweepPlan] | None:
    """Validated plans of the configurations given (None after showing an error)."""
    try:
        return {name: plan_sweep(prepared, config, dataset_name=current_dataset_name())
                for name, config in configs.items() if config is not None}
    except DPCoreError as exc:
        st.error(str(exc))
        return None


def _quick(configs: dict[str, Any]) -> bool:
    """Every mechanism is a fast covariance perturbation or a reference line."""
    return all(quick_mechanism(m) for config in configs.values() if config is not None for m in config.mechanisms)


def _progress_text(label: str, sweep: PooledSweep) -> str:
    reused = f" ({sweep.reused} reused)" if sweep.reused else ""
    return f"{label}: {sweep.job.done + sweep.reused if sweep.job else sweep.done} / {sweep.total} releases" \
           f"{reused} · {sweep.elapsed:.0f} s"


def _collect(sweep: PooledSweep) -> None:
    """Take the sweep's finished cells and count them at once (on an upload): a collected cell is in the session's
    cell cache, where another sweep reuses — and shows — it as counted before, and a rerun or stop request is raised
    at the next element call, so nothing may come between collecting and counting."""
    try:
        sweep.collect()
    finally:
        odometer.tally_sweep(sweep)


def _wait(sweep: PooledSweep, label: str, seconds: float, holder=None) -> None:
    """Wait up to ``seconds`` for the sweep inside this page run, with a progress bar (in ``holder``, an
    ``st.empty()``, when given)."""
    if sweep.job is None or sweep.job.finished:
        _collect(sweep)
        return
    holder = holder if holder is not None else st.empty()
    end = time.monotonic() + seconds
    while True:
        holder.progress((sweep.job.done + sweep.reused) / max(sweep.total, 1), text=_progress_text(label, sweep))
        if sweep.job.finished or time.monotonic() >= end:
            break
        sweep.job.wait(min(PROGRESS_INTERVAL, max(0.0, end - time.monotonic())))
    holder.empty()
    _collect(sweep)


def run_sweep_cached(prepared, config, *, label: str = "sweep") -> pd.DataFrame | None:
    """Run a sweep on the shared pool and wait for it (progress bar), reusing finished cells; None after an error."""
    plans = _plans(prepared, {"main": config})
    if plans is None:
        return None
    sweep = PooledSweep(shared_pool(), plans, _cells(), label=label, cache_limit=CELL_CACHE_MAX,
                        shared_contexts=is_public(prepared))
    odometer.watch_sweep(sweep, label)  # on an upload: its new releases are counted (the reused ones were before)
    try:
        _wait(sweep, label, float("inf"))
    finally:  # a rerun or stop request raised while waiting: the cells finished so far are counted (and cached)
        _collect(sweep)
    return sweep.frames()["main"]


@dataclass(frozen=True)
class SweepRun:
    """A shown sweep: its key, the frames of its named configurations, and those configurations."""

    key: tuple
    frames: dict[str, pd.DataFrame | None]
    configs: dict[str, Any]
    complete: bool = True

    @property
    def frame(self) -> pd.DataFrame:
        return self.frames["main"]

    @property
    def config(self):
        return self.configs["main"]


@dataclass
class _Live:
    """The session's sweep for one panel: what it was asked for and its streaming state."""

    key: tuple
    configs: dict[str, Any]
    sweep: PooledSweep
    label: str
    drawn: int = 0
    drawn_at: float = field(default_factory=time.monotonic)


@st.fragment(run_every=POLL_S)
def _watch(live_slot: str) -> None:
    """Progress line of a streaming sweep; reruns the page when new releases are worth drawing (or at the end)."""
    live: _Live | None = st.session_state.get(live_slot)
    if live is None or live.sweep.job is None:
        return
    job = live.sweep.job
    st.progress((job.done + live.sweep.reused) / max(live.sweep.total, 1), text=_progress_text(live.label, live.sweep))
    if job.finished or (job.done > live.drawn and time.monotonic() - live.drawn_at >= REDRAW_S):
        st.rerun(scope="app")


def run_or_reuse(prepared, configs: dict[str, Any], *, slot: str, button_key: str, label: str, auto: bool,
                 caption: str, stream: bool = False, hint: str | None = None) -> SweepRun | None:
    """The "Run sweep" panel: run ``configs`` (``{"main": config, other name: config or None}``) when the button is
    pressed or when ``auto`` (cheap settings) and the settings changed; stream the releases into the page while they
    finish, with a Cancel button; otherwise show the last result with a note that the settings changed. Returns the
    sweep to show (possibly partial), or None (after a hint: ``hint`` when given, e.g. why "Run automatically" did
    not start this one). ``stream``: draw the releases as they finish even when every mechanism is quick (a long
    sweep of quick mechanisms, e.g. Sample size's many sizes)."""
    ss = st.session_state
    live_slot = f"{slot}_live"
    keys = tuple(sweep_key(prepared, c) for c in configs.values() if c is not None)
    pool = shared_pool()
    col_run, col_info = st.columns([1, 4], vertical_alignment="center")
    clicked = col_run.button("Run sweep", type="primary", key=button_key)
    col_info.caption(caption)
    pool_notice(pool)
    live: _Live | None = ss.get(live_slot)
    started = clicked or (auto and (live is None or live.key != keys))
    if started:
        plans = _plans(prepared, configs)
        if plans is not None and "main" in plans:
            if live is not None:
                live.sweep.cancel()  # its finished cells are in the cell cache
                odometer.tally_sweep(live.sweep)
            sweep = PooledSweep(pool, plans, _cells(), label=label, cache_limit=CELL_CACHE_MAX,
                                shared_contexts=is_public(prepared))
            odometer.watch_sweep(sweep, label)  # on an upload: its new releases are counted when they finish
            live = _Live(keys, dict(configs), sweep, label)
            ss[live_slot] = live
        else:
            started = False
    if live is None:
        st.info(hint or "Press **Run sweep** to compute the curves.")
        return None
    sweep = live.sweep
    _collect(sweep)
    if not sweep.finished:
        col_progress, col_cancel = st.columns([4, 1], vertical_alignment="center")
        cancel_slot = col_cancel.empty()  # emptied when the sweep ends inside this run
        if cancel_slot.button("Cancel", key=f"{button_key}_cancel", icon=":material/stop:",
                             help="Stop this sweep; the releases already finished are kept (and reused by the next "
                                  "run)."):
            sweep.cancel()  # collects the finished cells
            odometer.tally_sweep(sweep)
            st.rerun()  # draw the page again without this button
        holder = col_progress.empty()
        if started and not sweep.finished:
            _wait(sweep, label, float("inf") if _quick(configs) and not stream else SYNC_WAIT_S, holder)
        _collect(sweep)
        live.drawn, live.drawn_at = (sweep.job.done if sweep.job else 0), time.monotonic()
        if sweep.finished:
            cancel_slot.empty()
        else:
            with holder.container():
                _watch(live_slot)
    if sweep.cancelled:
        st.caption(f":material/stop_circle: Cancelled after {sweep.done} of {sweep.total} releases: the charts show "
                   "the finished ones. Press **Run sweep** to compute the rest — finished releases are reused.")
    elif sweep.finished and sweep.job is not None:
        st.caption(f"{sweep.total} releases in {sweep.elapsed:.1f} s"
                   + (f" ({sweep.reused} reused from earlier runs)" if sweep.reused else "") + ".")
    elif sweep.finished and started:  # every release was there already: say so, or the click seems to do nothing
        st.caption(f"{sweep.total} releases in 0.0 s (all reused from earlier runs).")
    odometer.tally_sweep(sweep)  # the releases collected in this run (each counted once)
    if live.key != keys:
        st.warning("The settings changed since this sweep ran: the charts show that run. Press **Run sweep**.")
    frames = sweep.frames()
    if frames["main"].empty:
        if not sweep.finished:
            st.info("Waiting for the first releases…", icon=":material/hourglass_top:")
        return None
    run = SweepRun(key=live.key, frames={name: frames.get(name) for name in live.configs}, configs=live.configs,
                   complete=sweep.finished and not sweep.cancelled)
    stored: SweepRun | None = ss.get(slot)
    if stored is None or stored.key != run.key or any(stored.frames[n] is not run.frames[n] for n in run.frames):
        ss[slot] = run
    return ss[slot]
