"""Sweeps in the dashboard: run with a progress bar or reuse a stored result (per session), and the run-or-reuse
panel Explore and Sample size share ("Run sweep" button, automatic runs for cheap settings, stale-result note)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import pandas as pd
import streamlit as st

from dpcore.exceptions import DPCoreError
from pages._datasets import current_dataset_name

#: Minimum seconds between two progress-bar updates of a running sweep.
PROGRESS_INTERVAL = 0.2
#: Sweeps kept per session (a bound on memory).
MAX_STORED = 6


def sweep_key(prepared, config) -> tuple:
    """What identifies a sweep's result: the data's fingerprint and the whole configuration."""
    return (prepared.fingerprint, repr(sorted(config.as_dict().items())))


def run_sweep_cached(prepared, config, *, label: str = "sweep") -> pd.DataFrame | None:
    """Run (or reuse) a sweep with a progress bar; None after showing an error."""
    from dpcore.sweep import count_cells, run_sweep

    ss = st.session_state
    key = sweep_key(prepared, config)
    store = ss.setdefault("_dp_sweeps", {})
    if key in store:
        return store[key]
    try:
        total = count_cells(config.validated(prepared))
    except DPCoreError as exc:
        st.error(str(exc))
        return None
    bar = st.progress(0.0, text=f"{label}: 0 / {total} releases")
    last = [time.monotonic()]

    def progress(done: int, total: int, text: str) -> None:
        # a few updates per second are enough to watch; one message per release would slow fast sweeps down
        now = time.monotonic()
        if now - last[0] >= PROGRESS_INTERVAL and done < total:
            last[0] = now
            bar.progress(done / max(total, 1), text=f"{label}: {done} / {total} — {text}")

    try:
        frame = run_sweep(prepared, config, progress=progress, dataset_name=current_dataset_name())
    except DPCoreError as exc:
        bar.empty()
        st.error(str(exc))
        return None
    bar.empty()
    if len(store) >= MAX_STORED:
        store.pop(next(iter(store)))
    store[key] = frame
    return frame


@dataclass(frozen=True)
class SweepRun:
    """A shown sweep: its key, the frames of its named configurations, and those configurations."""

    key: tuple
    frames: dict[str, pd.DataFrame | None]
    configs: dict[str, Any]

    @property
    def frame(self) -> pd.DataFrame:
        return self.frames["main"]

    @property
    def config(self):
        return self.configs["main"]


def run_or_reuse(prepared, configs: dict[str, Any], *, slot: str, button_key: str, label: str, auto: bool,
                 caption: str) -> SweepRun | None:
    """The "Run sweep" panel: run ``configs`` (``{"main": config, other name: config or None}``) when the button is
    pressed, when ``auto`` (cheap settings), or when this exact sweep was shown before; otherwise show the last
    result with a note that the settings changed. Returns the sweep to show, or None (after a hint)."""
    ss = st.session_state
    keys = tuple(sweep_key(prepared, c) for c in configs.values() if c is not None)
    col_run, col_info = st.columns([1, 4], vertical_alignment="center")
    clicked = col_run.button("Run sweep", type="primary", key=button_key)
    col_info.caption(caption)
    stored: SweepRun | None = ss.get(slot)
    if clicked or auto or (stored is not None and stored.key == keys):
        frames = {}
        for name, config in configs.items():
            frames[name] = None if config is None else run_sweep_cached(
                prepared, config, label=label if name == "main" else f"{label} ({name})")
        if frames["main"] is not None:
            stored = SweepRun(key=keys, frames=frames, configs=dict(configs))
            ss[slot] = stored
    if stored is None:
        st.info("Press **Run sweep** to compute the curves.")
        return None
    if stored.key != keys:
        st.warning("The settings changed since this sweep ran: the charts show the previous run. Press **Run sweep**.")
    return stored
