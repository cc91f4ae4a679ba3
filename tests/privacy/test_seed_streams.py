"""One session seed must never give two releases the same noise (privacy review items 2 and 12, round 4: R4-4, R4-8,
R4-9, R4-10). The DP mean's stream is keyed by its public settings; a release's seed by the release's settings; on an
upload the seed is fresh unless the user set it for that upload."""

from __future__ import annotations

import numpy as np
import pytest
from _session_stub import SessionStub

from dpcore.core.seeding import release_seed, settings_key
from dpcore.data import Dataset, preprocess


def _dp_mean(X: np.ndarray, **settings) -> tuple[np.ndarray, float]:
    data = preprocess(Dataset(id="t", name="t", X=X), feature_scaling="none", centering="dp", random_state=12345,
                      **settings)
    return data.info["center"], data.info["centering_sigma"]


@pytest.mark.parametrize("first, second", [
    ({"norm_bound": 3.0, "centering_epsilon": 0.1}, {"norm_bound": 3.0, "centering_epsilon": 0.3}),
    ({"norm_bound": 3.0, "centering_epsilon": 0.2}, {"norm_bound": 4.0, "centering_epsilon": 0.2}),
])
def test_dp_means_at_two_settings_with_one_seed_do_not_give_the_mean(first, second) -> None:
    """R4-10 sibling: μ̂ᵢ = μ + σᵢZ with one Z gave (σ₂μ̂₁ − σ₁μ̂₂)/(σ₂ − σ₁) = μ to 2e-16 (noise ≈ 0.8)."""
    X = np.random.default_rng(3).uniform(-1.0, 1.0, size=(400, 5))  # ‖x‖ ≤ √5 < 3: no row is clipped
    (c1, s1), (c2, s2) = _dp_mean(X, **first), _dp_mean(X, **second)
    recovered = (s2 * c1 - s1 * c2) / (s2 - s1)
    # independent draws: every coordinate's error is N(0, ≥ σ₁σ₂/|σ₂ − σ₁|); |error| < 1e-6 σ₁ in all 5: p < 1e-30
    assert np.abs(recovered - X.mean(axis=0)).max() > 1e-6 * s1
    np.testing.assert_array_equal(_dp_mean(X, **first)[0], c1)  # the same settings reproduce the same mean


def test_release_seed_depends_on_every_setting_and_reproduces() -> None:
    base = ("analyze_gauss", 1.0, 1e-5, 2, "replace", 178, 13, 1.0)
    assert release_seed(0, *base) == release_seed(0, *base)
    seeds = {release_seed(0, *base), release_seed(1, *base), release_seed(0, *base[:1], 2.0, *base[2:]),
             release_seed(0, *base[:7], 2.0), release_seed(0, *base, np.array([0.0, 1.0])),
             release_seed(0, *base, np.array([0.0, 2.0]))}
    assert len(seeds) == 6
    assert settings_key(1.0) != settings_key(1)  # the repr tells a float from an int


# ------------------------------------------------------------------------------------------------
# the seed on an upload (pages/ui/state.py), with a stand-in session state
_Session = SessionStub  # a stand-in for st.session_state (tests/_session_stub.py)


@pytest.fixture
def session(monkeypatch):
    import streamlit as st

    from pages.ui import state

    ss = _Session(state.DEFAULTS)
    monkeypatch.setattr(st, "session_state", ss)
    state.track_origins("Home")  # the first look: nothing set yet
    return ss


def _user_sets_seed(ss, value: int, page: str = "Explore") -> None:
    from pages.ui import state

    ss["dp_seed"] = value
    state.track_origins(page)


def test_a_seed_set_on_builtin_data_is_kept_by_the_next_upload_only(session) -> None:
    from pages.ui import datasets, state

    _user_sets_seed(session, 4242)
    datasets.store_upload(b"a,b\n1,2\n3,4\n", "v1.csv")
    assert session["dp_seed"] == 4242  # reproducibility stays opt-in
    datasets.store_upload(b"a,b\n1,2\n3,5\n", "v2.csv")  # another file: the seed was set for v1
    assert session["dp_seed"] not in (4242, state.DEFAULTS["dp_seed"])


def test_a_seed_set_on_an_upload_and_the_apps_draw_stay_with_that_file(session) -> None:
    from pages.ui import datasets, state

    builtin = state.DEFAULTS["dp_dataset"]
    datasets.store_upload(b"a,b\n1,2\n3,4\n", "v1.csv")
    drawn = session["dp_seed"]
    state.put("page", "Explore")
    state.track_origins("Data")
    assert state.origin("dp_seed") is None  # the app's draw is no change of the user's: no note, no reset
    state.select_dataset(builtin)
    state.select_dataset(state.UPLOAD_ID)
    assert session["dp_seed"] == drawn  # back on the same file: its seed
    _user_sets_seed(session, 99)
    state.select_dataset(builtin)
    state.select_dataset(state.UPLOAD_ID)
    assert session["dp_seed"] == 99
    state._reset_setting("dp_seed")  # "Reset to a fresh seed"
    assert session["dp_seed"] not in (99, drawn, state.DEFAULTS["dp_seed"])


def test_a_links_seed_is_not_kept_and_the_reset_on_builtin_data_is_the_default(monkeypatch) -> None:
    import streamlit as st

    from pages.ui import datasets, state

    ss = _Session(state.DEFAULTS)
    ss["dp_seed"] = 7  # written by the link before the first look
    monkeypatch.setattr(st, "session_state", ss)
    state.track_origins("Home")
    _user_sets_seed(ss, 0)  # "Reset to 0" on built-in data
    _user_sets_seed(ss, 7)  # the link's number again, now typed: still built-in data
    state._reset_setting("dp_seed")
    assert ss["dp_seed"] == state.DEFAULTS["dp_seed"]
    state.track_origins("Explore")
    datasets.store_upload(b"a,b\n1,2\n3,4\n", "v1.csv")
    assert ss["dp_seed"] not in (7, state.DEFAULTS["dp_seed"])
