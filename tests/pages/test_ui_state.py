"""pages.ui.state is the one owner of UI state (issue 23 item 3): every session slot declared once (name, type,
default, scope) with one naming scheme, one memo helper, page defaults in SETTINGS, one keep-alive loop, no frame
inspection; tests and pages reach slots through the state API, never by a private key."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest
import streamlit

from pages.ui import state

ROOT = Path(__file__).resolve().parents[2]
PRIVATE_KEY = re.compile(r"""["']_dp_[a-z_]+["']""")


class _Session(dict):
    __getattr__ = dict.__getitem__
    __setattr__ = dict.__setitem__


@pytest.fixture
def session(monkeypatch) -> _Session:
    ss = _Session()
    monkeypatch.setattr(streamlit, "session_state", ss)
    return ss


def test_every_slot_is_declared_once_with_one_naming_scheme():
    keys = [slot.key for slot in state.SLOTS.values()]
    assert len(set(keys)) == len(keys) == len(state.SLOTS)
    assert all(key == f"{state.SLOT_PREFIX}{name}" for name, key in zip(state.SLOTS, keys, strict=True))
    assert all(isinstance(slot.scope, state.Scope) for slot in state.SLOTS.values())
    assert not {s.key for s in state.SETTINGS} & set(keys)  # settings (dp_*) and slots (_dp_*) never collide
    with pytest.raises(KeyError, match="declare it in"):
        state.slot_key("no_such_slot")


def test_put_checks_the_declared_type_and_get_falls_back_to_the_default(session):
    assert state.get("schema_version") == 0 and state.get("qp_loaded") is False  # declared defaults
    state.put("schema_version", 3)
    assert session[state.slot_key("schema_version")] == 3
    with pytest.raises(TypeError, match="schema_version"):
        state.put("schema_version", "three")
    assert state.drop("schema_version") == 3 and state.get("schema_version") == 0


def test_every_slot_has_a_real_type_and_put_checks_it(session):
    for slot in state.SLOTS.values():
        types = slot.types()  # "module:Class" names resolve
        assert types and all(isinstance(t, type) for t in types) and object not in types, slot.name
    with pytest.raises(TypeError, match="prepared"):
        state.put("prepared", (("key",), "not prepared data"))  # a memo slot checks the value, not its key
    with pytest.raises(TypeError, match="explore_result"):
        state.put("explore_result", {"frame": None})  # a type named "pages.ui.sweep:SweepRun"
    with pytest.raises(TypeError, match="label_guess"):
        state.put("label_guess", "income")
    state.put("label_guess", False)  # False: no guess


def test_memo_and_recall_keep_a_value_with_what_it_was_computed_on(session):
    calls, first, other = [], pd.DataFrame({"B": [1.0]}), pd.DataFrame({"B": [2.0]})
    assert state.memo("clip_curve", ("a", 1), lambda: calls.append(1) or first) is first
    assert state.memo("clip_curve", ("a", 1), lambda: calls.append(1) or other) is first and len(calls) == 1
    assert state.memo_key("clip_curve") == ("a", 1) and state.stored("clip_curve") is first
    assert state.recall("clip_curve", ("a", 1)) is first
    assert state.recall("clip_curve", ("b", 1)) is None  # computed on something else: dropped
    assert state.stored("clip_curve") is None and state.memo_key("clip_curve") is None
    with pytest.raises(RuntimeError):
        state.memo("clip_curve", "k", lambda: (_ for _ in ()).throw(RuntimeError("x")))
    assert state.stored("clip_curve") is None  # an exception stores nothing


def test_clear_scope_empties_only_that_scope(session):
    state.put("label_guess", None)
    state.put("upload_note", True)
    state.put("schemas", {("f", ()): "schema"})
    state.clear_scope(state.Scope.UPLOAD)
    assert state.slot_key("label_guess") not in session and state.slot_key("upload_note") not in session
    assert state.get("schemas") == {("f", ()): "schema"}  # session scope: each upload keeps its schema


def test_page_defaults_are_settings_and_pages_hold_no_defaults_table():
    keys = {s.key for s in state.SETTINGS}
    assert {"dp_insp_invalid", "dp_insp_eps", "dp_insp_points", "dp_insp_color", "dp_ss_trials",
            "dp_ss_sizes"} <= keys
    assert "def _defaults" not in (ROOT / "pages" / "inspect.py").read_text()
    assert "SS_DEFAULTS" not in (ROOT / "pages" / "sample_size.py").read_text()


def test_one_keep_alive_loop_and_no_frame_inspection():
    sources = {p: p.read_text() for p in [*ROOT.glob("pages/*.py"), *ROOT.glob("pages/ui/*.py")]}
    loops = [p.name for p, text in sources.items() if 'startswith("dp_")' in text]
    assert loops == ["state.py"], loops
    assert "_getframe" not in sources[ROOT / "pages" / "ui" / "state.py"]


def test_tests_reach_slots_through_the_state_api():
    offenders = [p.name for p in ROOT.joinpath("tests").rglob("*.py") if PRIVATE_KEY.search(p.read_text())]
    assert offenders == [], offenders


def test_pages_reach_slots_through_the_state_api():
    pages = [*ROOT.glob("pages/*.py"), *ROOT.glob("pages/ui/*.py")]
    offenders = {p.name: PRIVATE_KEY.findall(p.read_text()) for p in pages if p.name != "state.py"}
    offenders = {name: hits for name, hits in offenders.items() if hits}
    assert offenders == {}, offenders
