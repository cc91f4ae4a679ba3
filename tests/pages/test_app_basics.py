"""AppTest of the Privacy basics lesson and of the shared δ statement on Explore, Inspect and Learn (no browser)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

import dpcore
from dpcore.core.privacy import l2_sensitivity_upper_triangle
from dpcore.data import load_dataset
from dpcore.explain.statements import mechanism_delta_statement

pytestmark = pytest.mark.slow  # AppTest-heavy: every test runs the app

APP = str(Path(__file__).resolve().parents[2] / "app.py")
BASICS = "pages/basics.py"


def _open(page: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.switch_page(page).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.fixture(scope="module")
def basics() -> AppTest:
    return _open(BASICS)


def test_basics_page_has_the_four_steps_and_the_glossary_first(basics):
    assert basics.title[0].value == "Privacy basics"
    assert [h.value[:1] for h in basics.header] == ["1", "2", "3", "4"]
    assert basics.expander[0].label.startswith("Glossary")
    assert not basics.error or all("NOT private" in e.value for e in basics.error)  # only the exhibits are red


def test_replace_and_add_remove_side_by_side_from_the_mechanism(basics):
    metrics = {}
    for m in basics.metric:
        metrics.setdefault(m.label, []).append(m.value)
    assert metrics["Sensitivity Δ₂"] == [f"{l2_sensitivity_upper_triangle('replace'):.4g}",
                                         f"{l2_sensitivity_upper_triangle('add_remove'):.4g}"]
    sigma_replace, sigma_add_remove = (float(v) for v in metrics["Noise σ"])
    assert sigma_replace / sigma_add_remove == pytest.approx(math.sqrt(2), rel=1e-3)
    chart = next(c for c in basics.get("plotly_chart") if c.key == "basics_neighbouring_chart")
    fig = json.loads(chart.proto.spec)
    assert {t["name"] for t in fig["data"]} == {"replace-one (n public)", "add/remove-one"}
    assert len(fig["data"]) == 4  # utility and σ, one curve per relation each


def test_teaching_delta_publishes_a_real_record(basics):
    radio = basics.radio(key="basics_delta")
    teaching_option = radio.options[-1]
    assert "TEACHING ONLY" in teaching_option
    radio.set_value(teaching_option).run()
    assert not basics.exception
    assert any("NOT a safe setting" in e.value for e in basics.error)
    record = basics.dataframe[0].value
    wine = load_dataset("wine")
    row = tuple(float(record.iloc[0][name]) for name in wine.feature_names)
    assert row in {tuple(r) for r in wine.X}
    radio.set_value(radio.options[0]).run()  # a usual δ: the red warning goes away
    assert not any("NOT a safe setting" in e.value for e in basics.error)


def test_explore_never_offers_the_teaching_delta(basics):
    basics.switch_page("pages/explore.py").run()
    options = basics.select_slider(key="dp_delta").options
    assert not any("TEACHING" in str(o) for o in options)
    assert not any(math.isclose(float(o), 1 / 178) for o in options)


def test_explore_and_learn_show_the_same_statement():
    sn = dpcore.get_mechanism("sn_imtiaz")
    at = _open("pages/explore.py")
    at.multiselect(key="dp_mech_claimed-invalid").set_value(["sn_imtiaz"]).run()
    eps0 = at.session_state["dp_eps_range"][0]
    assert any(mechanism_delta_statement(sn, eps0, subject="it") in e.value for e in at.error)
    at.switch_page("pages/learn.py").run()
    assert not at.exception
    assert at.header[0].value == "Glossary"
    assert any(mechanism_delta_statement(sn, 1.0) in m.value for m in at.markdown)


def test_audit_link_runs_the_sn_preset_once():
    at = AppTest.from_file(str(Path(APP).parent / "pages" / "audit.py"), default_timeout=180)
    at.query_params["preset"] = "sn_imtiaz"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    verdict = next(e.value for e in at.error if "The audit proves" in e.value)
    assert "NOT 1-DP" in verdict and "Audit at ε = 1, 95 % confidence: δ ≥" in verdict
    assert "preset" not in at.query_params  # used once: a rerun does not repeat the audit
