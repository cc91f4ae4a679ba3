"""Server-level caches of work on the PUBLIC built-in datasets, shared by every session (issue 12: server cost per
new session).

Every new session used to load, preprocess and hash its own copy of the default dataset and run the default sweep
again — the same numbers each time (public data, fixed seeds). Two caches keep that work to once per server:

* :func:`builtin_prepared` — a built-in dataset preprocessed under given options. It takes a dataset **id** from
  the registry and loads the data itself, so uploaded data cannot reach it; the result is immutable
  (:class:`dpcore.data.PreparedData` is frozen, its arrays read-only) and its fingerprint is recorded as public.
* :class:`SessionCells` — a session's cache of finished sweep releases (the mapping that
  :class:`dpcore.evaluation.sweep.PooledSweep` reads and fills). Releases whose data fingerprint is a public one are
  also read
  from and written to one server-level store; every other key (an upload) stays in the session's own dict.

A third saving: Streamlit runs a full garbage collection after every script run (``runner.postScriptGC``), whose
cost grows with the number of live objects — ~170,000 once numpy, pandas, scipy, scikit-learn and plotly are
imported. :func:`freeze_startup_objects` moves the objects alive when this module is first imported out of the
collector's reach (``gc.freeze``), so each run's collection only looks at newer objects.

**Cells in flight.** The store only holds *finished* releases. A sweep on public data also gives each cell its key
(:meth:`dpcore.evaluation.sweep.SweepPlan.cell_key`) as the shared pool's share key, so a cell that another session
(or the precomputation at server start, :mod:`pages.ui.precompute`) has queued or running is computed once: the
later sessions attach to that computation and receive the same row (a failure too, which is never kept).
:func:`is_public` decides it, for the store and the pool alike: only data prepared here from a registry id has a
public fingerprint, so an upload's cells carry no share key, never reach the store and never meet another session.

**Seeds (privacy review item 12: no fixed default seed on a release path).** Sharing never chooses a seed: a cell's
seed is part of its key, so two sessions share a computation only when each would have drawn exactly that release
from exactly that data. The dashboard's fixed default seed applies to the public built-in data only (reproducible
lessons; the noise of a release of public data protects nobody), while an upload starts from a fresh seed from OS
entropy (:func:`pages.ui.state.select_dataset`) — and an upload is never shared, whatever its seed: a user who
types a seed for private data makes their own releases reproducible, not anyone else's.

``DP_SERVER_CACHE=0`` (environment) switches all three off — the per-session code path, for benchmarks
(``benchmarks/bench_server.py``). Uploaded data never goes through here: it stays in ``st.session_state``.
"""

from __future__ import annotations

import gc
import os
import threading
import warnings
from collections import OrderedDict
from collections.abc import Hashable
from typing import Any

import streamlit as st

import dpcore
from dpcore.exceptions import PrivacyLeakWarning

#: Environment switch: "0" turns the server-level caches off.
SWITCH = "DP_SERVER_CACHE"
#: Releases kept in the server-level store (rows of a sweep frame, ~2 KB each as Python dicts).
PUBLIC_CELLS_MAX = 20_000


def enabled() -> bool:
    """Whether the server-level caches are on (``DP_SERVER_CACHE`` is not "0")."""
    return os.environ.get(SWITCH, "1").strip() != "0"


class _PublicStore:
    """Thread-safe, bounded store shared by all sessions: public fingerprints and the releases computed on them."""

    def __init__(self, max_cells: int = PUBLIC_CELLS_MAX) -> None:
        self._lock = threading.Lock()
        self.max_cells = max_cells
        self.fingerprints: dict[str, str] = {}  # fingerprint -> built-in dataset id
        self.cells: OrderedDict[Hashable, dict] = OrderedDict()

    def add_fingerprint(self, fingerprint: str, dataset_id: str) -> None:
        with self._lock:
            self.fingerprints[fingerprint] = dataset_id

    def dataset_of(self, key: Hashable) -> str | None:
        """The built-in dataset id of a release key whose first element is a public fingerprint, else None."""
        if not isinstance(key, tuple) or not key or not isinstance(key[0], str):
            return None
        return self.fingerprints.get(key[0])

    def get(self, key: Hashable) -> dict | None:
        with self._lock:
            return self.cells.get(key)

    def put(self, key: Hashable, row: dict) -> None:
        with self._lock:
            self.cells[key] = row
            self.cells.move_to_end(key)
            while len(self.cells) > self.max_cells:
                self.cells.popitem(last=False)


@st.cache_resource(show_spinner=False)
def public_store() -> _PublicStore:
    """The server's one store of public fingerprints and releases."""
    return _PublicStore()


def is_public(prepared) -> bool:
    """Whether ``prepared`` is a built-in dataset prepared by :func:`builtin_prepared` (public data: its sweeps may
    share their inputs on the pool with other sessions' sweeps). Always False for an upload, or with the caches off."""
    return enabled() and public_store().dataset_of((prepared.fingerprint,)) is not None


def builtin_ids() -> frozenset[str]:
    """Ids of the built-in datasets (the registry's)."""
    from pages.ui.state import dataset_infos

    return frozenset(d.id for d in dataset_infos())


@st.cache_resource(show_spinner="Preparing dataset…", max_entries=16)
def builtin_prepared(dataset_id: str, options: tuple[tuple[str, Any], ...]):
    """The built-in dataset ``dataset_id`` preprocessed with ``options`` (sorted ``preprocess`` keyword items), once
    per server. Raises ValueError for an id that is not a built-in dataset (an upload never comes here)."""
    if dataset_id not in builtin_ids():
        raise ValueError(f"{dataset_id!r} is not a built-in dataset")
    from pages.ui.datasets import _load_builtin

    with warnings.catch_warnings():
        # Non-private steps are shown in red in the ledger on every page; the warning would only go to the log.
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        prepared = dpcore.data.preprocess(_load_builtin(dataset_id), **dict(options))
    public_store().add_fingerprint(prepared.fingerprint, dataset_id)  # computed once here, reused by every session
    return prepared


class SessionCells(dict):
    """A session's finished releases (key → row, as :class:`dpcore.evaluation.sweep.PooledSweep` expects), backed by the
    server-level store for keys on public built-in data. Rows of other data stay in this dict only."""

    def get(self, key: Hashable, default: Any = None) -> Any:
        row = super().get(key)
        if row is None and enabled():
            store = public_store()
            if store.dataset_of(key) is not None:
                row = store.get(key)
        return default if row is None else row

    def __setitem__(self, key: Hashable, row: dict) -> None:
        super().__setitem__(key, row)
        if not enabled():
            return
        store = public_store()
        dataset_id = store.dataset_of(key)
        if dataset_id is not None:  # the same public data: the row names the built-in dataset, not the session's
            store.put(key, {**row, "dataset": dataset_id})


def freeze_startup_objects() -> None:
    """``gc.freeze()`` the objects alive now (the imported libraries). Called once, when this module is first
    imported — by the first page run of the server, before any page has held a session's data (an upload in
    particular): frozen objects are still freed when nothing refers to them, but a frozen reference cycle never is."""
    gc.collect()
    gc.freeze()


if enabled():
    freeze_startup_objects()
