"""Provenance must survive the UI (privacy review item 11, issue 18 item 4): a number read off the data stays
marked so when it is copied into another widget or mode, until the user types another value or confirms it as
public knowledge. AppTest, headless."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from pages.ui import state as ui_state

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
TIMEOUT = 90


def _no_exception(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def _prepared(at: AppTest):
    return ui_state.stored("prepared", at.session_state)


def _clip_entry(prepared):
    return next(e for e in prepared.ledger if e.step.startswith("clip rows"))


def _green_banner(at: AppTest) -> bool:
    return any("end-to-end private" in s.value for s in at.success)


@pytest.fixture
def wine_max_norm() -> AppTest:
    """The Data page on Wine with 'divide all by max norm': the automatic B shown is max‖x‖ (read off the data)."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    at.switch_page("pages/data.py").run()
    _no_exception(at)
    at.selectbox(key="dp_dataset").set_value("wine").run()
    at.radio(key="dp_norm_mode").set_value("max_norm").run()
    _no_exception(at)
    prepared = _prepared(at)
    assert not prepared.is_private and not _green_banner(at)
    return at


def _to_clip_with_shown_bound(at: AppTest) -> float:
    shown = float(at.session_state["dp_norm_bound"])
    at.toggle(key="dp_norm_auto").set_value(False).run()
    at.radio(key="dp_norm_mode").set_value("clip").run()
    _no_exception(at)
    assert float(at.session_state["dp_norm_bound"]) == shown
    return shown


@pytest.mark.slow
def test_max_norm_bound_stays_read_off_the_data_after_auto_off(wine_max_norm):
    at = wine_max_norm
    shown = _to_clip_with_shown_bound(at)
    prepared = _prepared(at)
    assert prepared.norm_bound == pytest.approx(shown)
    # before the fix: "B = … (given by the user (public))", private, and the green banner
    entry = _clip_entry(prepared)
    assert not entry.private and "read off this data" in entry.note
    assert not prepared.is_private and not _green_banner(at)
    assert at.session_state["dp_norm_from_data"] is True
    # the link carries the provenance too
    assert at.query_params.get("Bsrc") in ("data", ["data"])


@pytest.mark.slow
def test_confirming_the_bound_as_public_makes_it_public(wine_max_norm):
    at = wine_max_norm
    _to_clip_with_shown_bound(at)
    at.button(key="data_confirm_bound_public").click().run()
    _no_exception(at)
    prepared = _prepared(at)
    assert _clip_entry(prepared).private and prepared.is_private and _green_banner(at)


@pytest.mark.slow
def test_typing_a_bound_makes_it_public(wine_max_norm):
    at = wine_max_norm
    shown = _to_clip_with_shown_bound(at)
    at.number_input(key="dp_norm_bound").set_value(round(shown * 1.5, 2)).run()
    _no_exception(at)
    prepared = _prepared(at)
    entry = _clip_entry(prepared)
    assert entry.private and "given by the user" in entry.note and _green_banner(at)


@pytest.mark.slow
def test_a_public_automatic_bound_stays_public_when_auto_is_turned_off():
    """√d of a public schema is public knowledge: turning "Automatic B" off keeps it public (no false alarm)."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    at.switch_page("pages/data.py").run()
    at.selectbox(key="dp_dataset").set_value("wine").run()
    at.toggle(key="dp_norm_auto").set_value(False).run()
    _no_exception(at)
    prepared = _prepared(at)
    assert _clip_entry(prepared).private and prepared.is_private and _green_banner(at)
    assert not at.session_state["dp_norm_from_data"]


def test_link_with_a_data_derived_bound_keeps_its_provenance():
    """A link written while B was read off the data opens with the same red ledger (URL path)."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params.update({"data": "wine", "B": "3.5", "Bsrc": "data"})
    at.run()
    at.switch_page("pages/data.py").run()
    _no_exception(at)
    prepared = _prepared(at)
    assert np.isclose(prepared.norm_bound, 3.5) and not _clip_entry(prepared).private and not prepared.is_private


@pytest.mark.slow
def test_provenance_follows_the_dataset_scope(wine_max_norm):
    """Switching datasets and back restores the data-derived mark with the bound (scoped data settings)."""
    at = wine_max_norm
    _to_clip_with_shown_bound(at)
    at.selectbox(key="dp_dataset").set_value("breast_cancer").run()
    _no_exception(at)
    assert _prepared(at).is_private
    at.selectbox(key="dp_dataset").set_value("wine").run()
    _no_exception(at)
    assert at.session_state["dp_norm_from_data"] is True and not _prepared(at).is_private


@pytest.mark.slow
def test_the_data_derived_bound_stays_marked_on_every_page(wine_max_norm):
    """Explore, Inspect and Sample size compute with the same bound and show it as NOT private."""
    at = wine_max_norm
    _to_clip_with_shown_bound(at)
    at.switch_page("pages/explore.py").run()
    _no_exception(at)
    assert any("non-private step" in w.value for w in at.warning)
    for page in ("pages/inspect.py", "pages/sample_size.py"):
        at.switch_page(page).run()
        _no_exception(at)
        prepared = _prepared(at)
        assert not _clip_entry(prepared).private and not prepared.is_private, page


def _visits() -> bytes:
    rng = np.random.default_rng(3)
    rows = [f"{rng.uniform(1, 9):.2f},{rng.normal(50, 5):.1f},{'ab'[i % 2]}" for i in range(60)]
    return ("x,y,grp\n" + "\n".join(rows) + "\n").encode()


@pytest.mark.slow
def test_what_if_says_when_the_declared_pipeline_is_not_private():
    """An upload on its draft schema (bounds read off the data): the 'declared' curve is not publishable either."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    at.session_state["dp_upload"] = _visits()
    at.session_state["dp_upload_name"] = "visits.csv"
    at.session_state["dp_dataset"] = "__upload__"
    at.session_state["dp_missing"] = "zero"
    at.switch_page("pages/data.py").run()
    _no_exception(at)
    assert not _prepared(at).is_private
    at.switch_page("pages/explore.py").run()
    at.button(key="whatif_run").click().run()
    _no_exception(at)
    assert ui_state.stored("whatif", at.session_state).declared_private is False
    assert any("neither curve can be published" in w.value for w in at.warning)
