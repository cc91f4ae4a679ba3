"""The server-level caches (pages/ui/server_cache.py) hold public built-in data only: an upload never reaches them,
neither its prepared data nor its sweep releases; built-in data cached once gives the same data as the per-session
path."""

from __future__ import annotations

import threading
import time
import warnings
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

import dpcore
from dpcore.exceptions import PrivacyLeakWarning
from dpcore.runtime.scheduler import SharedPool
from pages.ui import server_cache
from pages.ui import state as ui_state

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
UPLOAD = "__upload__"
WINE_OPTIONS = (("centering", "none"), ("feature_scaling", "schema"), ("norm_bound", None), ("norm_mode", "clip"),
                ("random_state", 0))


@pytest.fixture(autouse=True)
def caches_on(monkeypatch):
    """The caches are on whatever the environment says (``DP_SERVER_CACHE=0`` turns them off for benchmarks)."""
    monkeypatch.setenv(server_cache.SWITCH, "1")


def _csv() -> bytes:
    rng = np.random.default_rng(11)
    rows = "\n".join(",".join(f"{v:.3f}" for v in r) + f",{'xy'[i % 2]}"
                     for i, r in enumerate(rng.normal(size=(60, 4))))
    return ("p,q,r,s,group\n" + rows + "\n").encode()


def test_builtin_prepared_takes_registry_ids_only():
    with pytest.raises(ValueError, match="not a built-in dataset"):
        server_cache.builtin_prepared(UPLOAD, WINE_OPTIONS)


def test_builtin_prepared_matches_the_per_session_path_and_is_shared():
    shared = server_cache.builtin_prepared("wine", WINE_OPTIONS)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        fresh = dpcore.data.preprocess(dpcore.data.load_dataset("wine"), **dict(WINE_OPTIONS))
    assert shared.fingerprint == fresh.fingerprint
    assert shared.ledger == fresh.ledger and shared.norm_bound == fresh.norm_bound
    assert server_cache.builtin_prepared("wine", WINE_OPTIONS) is shared  # one object per server
    assert server_cache.public_store().dataset_of((shared.fingerprint, "pca")) == "wine"
    assert not shared.X.flags.writeable  # no session can change what the others see


def test_session_cells_share_public_rows_only():
    store = server_cache.public_store()
    public, private = "0" * 31 + "a", "0" * 31 + "b"
    store.add_fingerprint(public, "wine")
    mine, theirs = server_cache.SessionCells(), server_cache.SessionCells()
    mine[(public, "laplace", 1.0)] = {"value": 1.0, "dataset": "my-upload-name"}
    mine[(private, "laplace", 1.0)] = {"value": 2.0, "dataset": "secret"}
    assert theirs.get((public, "laplace", 1.0)) == {"value": 1.0, "dataset": "wine"}  # named after the public data
    assert theirs.get((private, "laplace", 1.0)) is None
    assert store.get((private, "laplace", 1.0)) is None
    assert mine.get((private, "laplace", 1.0)) == {"value": 2.0, "dataset": "secret"}  # kept in its own session


@pytest.mark.slow
def test_upload_never_reaches_the_server_caches(monkeypatch):
    called: list[str] = []
    real = server_cache.builtin_prepared

    def spy(dataset_id, options):
        called.append(dataset_id)
        return real(dataset_id, options)

    monkeypatch.setattr(server_cache, "builtin_prepared", spy)
    submitted: list[tuple[bool, list]] = []  # (shared_contexts, the tasks' share keys) of every job on the pool
    real_submit = SharedPool.submit

    def submit_spy(self, tasks, *args, **kwargs):
        submitted.append((kwargs.get("shared_contexts", False), [task.share for task in tasks]))
        return real_submit(self, tasks, *args, **kwargs)

    monkeypatch.setattr(SharedPool, "submit", submit_spy)
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["dp_dataset"] = "wine"
    at.session_state["dp_seed"] = 9191  # cells no other test computed: the wine sweep submits them
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert called == ["wine"]  # the built-in dataset took the shared path
    assert submitted and all(shared and all(key is not None for key in keys) for shared, keys in submitted)
    submitted.clear()
    at.switch_page("pages/data.py").run()
    at.session_state["dp_upload"] = _csv()
    at.session_state["dp_upload_name"] = "private.csv"
    at.run()
    at.selectbox(key="dp_dataset").set_value(UPLOAD).run()
    at.switch_page("pages/explore.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["dp_dataset"] == UPLOAD
    prepared = ui_state.stored("prepared", at.session_state)
    assert prepared.n == 60
    assert called == ["wine"]  # the upload was prepared in the session, not through the server-level cache
    store = server_cache.public_store()
    assert prepared.fingerprint not in store.fingerprints
    assert not any(key[0] == prepared.fingerprint for key in list(store.cells))
    session_cells = ui_state.stored("cells", at.session_state)
    assert any(key[0] == prepared.fingerprint for key in dict.keys(session_cells))  # its releases: session only
    # and its cells were never offered to other sessions: no share key, no shared contexts on the pool
    assert submitted and all(not shared and all(key is None for key in keys) for shared, keys in submitted)


def test_a_second_session_reuses_the_public_releases_with_the_same_numbers(monkeypatch):
    def explore_on_wine() -> AppTest:
        at = AppTest.from_file(APP, default_timeout=120)
        at.session_state["dp_dataset"] = "wine"
        at.session_state["dp_seed"] = 4242  # a seed no other test uses: the first session computes every release
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        return at

    store = server_cache.public_store()
    puts: list = []
    real_put = store.put
    monkeypatch.setattr(store, "put", lambda key, row: (puts.append(key), real_put(key, row)))
    first = ui_state.stored("explore_result", explore_on_wine().session_state).frame
    assert puts  # the first session computed the releases and shared them
    puts.clear()
    second = ui_state.stored("explore_result", explore_on_wine().session_state).frame
    assert not puts  # the second computed none
    columns = [c for c in first.columns if c != "runtime_s"]
    assert len(first) > 0
    assert first[columns].equals(second[columns])


# ------------------------------------------------------------------ precomputation at server start (#20 item 8)
@pytest.fixture
def fresh_caches():
    """Empty server-level caches (other tests may have filled them with the same public cells)."""
    server_cache.builtin_prepared.clear()
    server_cache.public_store.clear()
    yield
    server_cache.builtin_prepared.clear()
    server_cache.public_store.clear()


@pytest.mark.slow
def test_precomputed_default_sweep_is_the_one_explore_asks_for(monkeypatch, fresh_caches):
    """Precompute Wine's default Explore sweep, then open Explore on Wine: every release is taken from the store
    (none computed), so the precomputed plans have exactly the cell keys of the page's defaults."""
    from pages.ui import precompute
    from pages.ui.pool import shared_pool

    run = precompute.Precompute([precompute.Item("wine", tuple(ui_state.DEFAULT_MECHANISMS), "wine")], 300.0)
    run.run(pool=shared_pool(), delay=0.0)
    assert run.state == "done" and run.cells_done > 0 and run.cells_reused == 0
    store = server_cache.public_store()
    assert len(store.cells) == run.cells_done
    puts: list = []
    real_put = store.put
    monkeypatch.setattr(store, "put", lambda key, row: (puts.append(key), real_put(key, row)))
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["dp_dataset"] = "wine"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    frame = ui_state.stored("explore_result", at.session_state).frame
    assert len(frame) > 0 and set(frame.status) == {"ok"}
    assert not puts  # the page computed nothing: every cell was precomputed


def test_precompute_is_off_by_switch_and_without_the_server_caches(monkeypatch):
    from pages.ui import precompute

    monkeypatch.setenv(precompute.SWITCH, "0")
    assert not precompute.enabled() and precompute.start() is None
    monkeypatch.setenv(precompute.SWITCH, "1")
    monkeypatch.setenv(server_cache.SWITCH, "0")
    assert not precompute.enabled() and precompute.start() is None
    monkeypatch.setenv(server_cache.SWITCH, "1")
    assert precompute.enabled()


def test_precompute_plans_adult_defaults_then_the_lesson_then_small_public_datasets(monkeypatch):
    from pages.ui import precompute

    monkeypatch.delenv(precompute.DATASETS_ENV, raising=False)
    items = precompute.plan_items()
    assert [i.dataset_id for i in items[:2]] == ["adult", "adult"]
    assert set(items[1].mechanisms) == set(precompute.LESSON_MECHANISMS)
    assert set(items[0].mechanisms) == set(ui_state.DEFAULT_MECHANISMS)
    sizes = {d.id: d.n for d in ui_state.dataset_infos()}
    rest = [i.dataset_id for i in items[2:]]
    assert rest == sorted(rest, key=sizes.get) and all(sizes[d] <= precompute.MAX_ROWS for d in rest)
    monkeypatch.setenv(precompute.DATASETS_ENV, "wine, not-a-dataset")
    assert [i.dataset_id for i in precompute.plan_items()] == ["wine"]


@pytest.mark.slow
def test_precompute_stops_when_asked_and_keeps_what_finished(fresh_caches):
    """Cancellable: a slow precomputation (PPCA) stops on request; the sweep's job is cancelled."""
    from dpcore.runtime.scheduler import SharedPool
    from pages.ui import precompute

    pool = SharedPool(1)
    try:
        run = precompute.Precompute([precompute.Item("wine", ("ppca",), "wine PPCA"),
                                     precompute.Item("breast_cancer", ("laplace",), "never reached")], 300.0)
        thread = threading.Thread(target=run.run, kwargs={"pool": pool, "delay": 0.0})
        thread.start()
        deadline = time.monotonic() + 120
        while pool.active_jobs() == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        run.stop()
        assert run.wait(120) and run.state == "stopped"
        thread.join(10)
        assert pool.active_jobs() == 0
        store = server_cache.public_store()  # every item is planned first (its fingerprint known); none ran after
        assert not any(store.dataset_of(key) == "breast_cancer" for key in list(store.cells))
    finally:
        pool.close()


def test_precompute_gives_up_after_its_budget(fresh_caches):
    from dpcore.runtime.scheduler import SharedPool
    from pages.ui import precompute

    pool = SharedPool(processes=False)
    try:
        run = precompute.Precompute([precompute.Item("wine", ("laplace",), "wine")], 0.0)
        run.run(pool=pool, delay=0.0)
        assert run.state == "over budget" and run.cells_done == 0
    finally:
        pool.close()


@pytest.mark.slow
def test_the_first_page_run_starts_the_precomputation_once(monkeypatch):
    """app.py's hook: after a page run the server's precomputation starts, once per process (stubbed here)."""
    from pages.ui import precompute

    monkeypatch.setenv(precompute.SWITCH, "1")
    monkeypatch.setattr(precompute, "_CURRENT", None)
    ran: list = []
    monkeypatch.setattr(precompute.Precompute, "run", lambda self, *args, **kwargs: ran.append(self))
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["dp_dataset"] = "wine"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    at.run()
    deadline = time.monotonic() + 30
    while not ran and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(ran) == 1 and precompute.current() is ran[0]
    assert [item.dataset_id for item in ran[0].items][:2] == ["adult", "adult"]
