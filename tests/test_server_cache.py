"""The server-level caches (pages/ui/server_cache.py) hold public built-in data only: an upload never reaches them,
neither its prepared data nor its sweep releases; built-in data cached once gives the same data as the per-session
path."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

import dpcore
from dpcore.exceptions import PrivacyLeakWarning
from pages.ui import server_cache
from pages.ui import state as ui_state

ROOT = Path(__file__).resolve().parents[1]
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
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["dp_dataset"] = "wine"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert called == ["wine"]  # the built-in dataset took the shared path
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
