"""Issue 36 item 3 on the Audit page: a module:function mechanism is audited from a text input; an import error is a
clear message, never a traceback. Issue 33 item 6: short preset labels (captions under them), the verdict first."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("streamlit")
from streamlit.testing.v1 import AppTest

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "audit.py")


@pytest.fixture
def user_module(tmp_path, monkeypatch):
    (tmp_path / "audh_page_mech.py").write_text(textwrap.dedent('''
        import numpy as np

        def exact(X, epsilon, delta, rng):
            return X.T @ X
    '''))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))  # the shared pool's workers import it too
    monkeypatch.setenv("DP_AUDIT_WAIT_S", "300")
    yield "audh_page_mech"
    sys.modules.pop("audh_page_mech", None)


@pytest.fixture(autouse=True)
def _callables_on(monkeypatch):
    monkeypatch.setenv("DPCORE_AUDIT_CALLABLES", "1")  # off unless the server's owner allows it


def test_a_shared_server_does_not_offer_module_function(monkeypatch):
    monkeypatch.delenv("DPCORE_AUDIT_CALLABLES")
    at = _app()
    assert not at.exception and not [t for t in at.text_input if t.key == "audit_callable"]
    assert any("DPCORE_AUDIT_CALLABLES=1" in c.value for c in at.caption)


def _app() -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=330)
    at.run()
    return at


def test_an_import_error_is_a_message_and_nothing_runs():
    at = _app()
    at.text_input(key="audit_callable").input("no_such_module_audh:release").run()
    assert not at.exception
    assert any("cannot import module 'no_such_module_audh'" in e.value for e in at.error)
    at.button(key="audit_run").click().run()
    assert not at.exception and "audit_result" not in at.session_state


def test_a_callable_is_audited_from_the_page(user_module):
    at = _app()
    at.text_input(key="audit_callable").input(f"{user_module}:exact").run()
    at.number_input(key="audit_delta").set_value(1e-5).run()
    at.selectbox(key="audit_neighbours").set_value("unit_swap").run()
    at.select_slider(key="audit_trials").set_value(1_000).run()
    at.number_input(key="audit_seed").set_value(2).run()
    assert not at.exception and not at.error
    at.button(key="audit_run").click().run()
    assert not at.exception
    result = at.session_state["audit_result"]
    assert result.mechanism == f"callable:{user_module}:exact" and result.verdict == "violated"


def test_preset_labels_are_short_with_captions():
    at = _app()
    labels = [b.label for b in at.button if b.key and b.key.startswith("audit_preset_")]
    assert labels and max(map(len, labels)) <= 18  # fit a quarter of the page at 1280 px
    assert any("support attack" in c.value for c in at.caption)
