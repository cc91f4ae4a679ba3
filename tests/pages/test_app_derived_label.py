"""AppTest (#19 "Labels"): a continuous column picked as the label is refused with a form next to the refusal —
"Use a binary label: COLUMN > value" (or ≠ 0) — whose Apply stores the declaration in the upload's schema; the
Explore sweep then produces subspaces and SVM accuracies (before: "Unknown label type: continuous" on every
release). The threshold the form offers is never read off the data."""

from __future__ import annotations

import io
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from dpcore.data.schema import Schema
from pages.ui import schema_editor as editor
from pages.ui import state as ui_state

pytestmark = pytest.mark.slow  # every test runs the app

APP = str(Path(__file__).resolve().parents[2] / "app.py")
TIMEOUT = 90


def _continuous_csv(n: int = 400) -> bytes:
    r = np.random.default_rng(17)
    a, b = r.normal(size=n), r.normal(size=n)
    income = (50 + 10 * (a + 0.3 * r.normal(size=n))).round(2)  # a continuous label that the first column predicts
    return pd.DataFrame({"a": a.round(3), "b": b.round(3), "c": r.normal(size=n).round(3),
                         "income": income}).to_csv(index=False).encode()


def _no_exception(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


@pytest.fixture
def at() -> AppTest:
    app = AppTest.from_file(APP, default_timeout=TIMEOUT)
    app.query_params.update({"trials": "1", "k": "1", "eps": "0.5~2"})
    app.run()
    app.session_state["dp_upload"] = _continuous_csv()
    app.session_state["dp_upload_name"] = "income.csv"
    app.session_state["dp_dataset"] = "__upload__"
    app.session_state["dp_scaling"] = "schema"
    app.session_state["dp_missing"] = "zero"
    app.switch_page("pages/data.py").run()
    _no_exception(app)
    app.selectbox(key="dp_label").set_value("income").run()
    _no_exception(app)
    return app


def _errors(at: AppTest) -> str:
    return " ".join(e.value for e in at.error)


def test_the_refusal_comes_with_a_form_whose_default_is_empty_and_apply_declares_the_label(at):
    assert "label needs classes" in _errors(at)  # refused up front, as before
    # the form is there, and the value it offers is empty: the column's bounds in a draft are read off the data
    assert at.text_input(key=editor.LABEL_RULE_VALUE).value == ""
    at.text_input(key=editor.LABEL_RULE_VALUE).set_value("50")
    at.button(key=editor.LABEL_RULE_APPLY).click().run()
    _no_exception(at)
    assert "label needs classes" not in _errors(at), _errors(at)
    schema = at.session_state[ui_state.slot_key("schemas")]
    (declared, _), = schema.values()
    assert declared.label_text == "income > 50" and "label" not in declared.from_data
    assert "income" not in [c.name for c in declared.features]  # the source column is not a feature
    assert Schema.from_text(declared.to_yaml()) == declared
    prepared = ui_state.stored("prepared", at.session_state)
    income = pd.read_csv(io.BytesIO(_continuous_csv())).income.to_numpy()
    assert prepared.d == 3 and np.array_equal(prepared.y, (income > 50).astype(int))  # every record: income > 50
    assert any("income > 50" in (m.help or "") for m in at.metric)
    assert any("Label: **income > 50**" in c.value for c in at.caption)


def test_a_sweep_on_the_declared_label_produces_subspaces(at):
    at.text_input(key=editor.LABEL_RULE_VALUE).set_value("50")
    at.button(key=editor.LABEL_RULE_APPLY).click().run()
    _no_exception(at)
    at.switch_page("pages/explore.py").run()
    _no_exception(at)
    assert any("label income > 50" in md.value for md in at.markdown)
    at.toggle(key="dp_autorun").set_value(False).run()
    at.multiselect(key="dp_mech_approx").set_value(["analyze_gauss"]).run()
    at.multiselect(key="dp_mech_pure").set_value([]).run()
    at.button(key="explore_run").click().run()
    _no_exception(at)
    end = time.monotonic() + TIMEOUT
    result = ui_state.stored("explore_result", at.session_state)
    while result is None or not result.complete:
        assert time.monotonic() < end, "the sweep did not finish"
        time.sleep(0.2)
        at.run()
        result = ui_state.stored("explore_result", at.session_state)
    frame = result.frame
    ag = frame[frame.mechanism == "analyze_gauss"]
    assert len(ag) and set(ag.status) == {"ok"}, frame[["mechanism", "status", "message"]]
    assert np.isfinite(ag.captured_variance_ratio).all() and np.isfinite(ag.svm_accuracy).all()
    assert not frame.message.fillna("").str.contains("Unknown label type").any()


def test_nonzero_and_a_bad_threshold(at):
    at.text_input(key=editor.LABEL_RULE_VALUE).set_value("fifty")
    at.button(key=editor.LABEL_RULE_APPLY).click().run()
    _no_exception(at)
    assert "'fifty' is not a number" in _errors(at)
    at.radio(key=editor.LABEL_RULE_KIND).set_value("nonzero")
    at.button(key=editor.LABEL_RULE_APPLY).click().run()
    _no_exception(at)
    assert "label needs classes" not in _errors(at), _errors(at)
    (declared, _), = at.session_state[ui_state.slot_key("schemas")].values()
    assert declared.label_text == "income ≠ 0"
    at.button(key=editor.LABEL_RULE_CLEAR).click().run()  # back to the column as it is: refused again
    _no_exception(at)
    assert "label needs classes" in _errors(at)
