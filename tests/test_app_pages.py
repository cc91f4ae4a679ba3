"""AppTest of the "Inspect a mechanism" and "Learn" pages (headless, no browser)."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

import dpcore

APP = str(Path(__file__).resolve().parents[1] / "app.py")
INSPECT = "pages/inspect.py"
LEARN = "pages/learn.py"


def arr(v) -> np.ndarray:
    """plotly>=6 serialises numpy arrays as {"dtype": "f8", "bdata": "<base64>"}."""
    if isinstance(v, dict) and "bdata" in v:
        a = np.frombuffer(base64.b64decode(v["bdata"]), dtype=v["dtype"])
        return a.reshape(v["shape"]) if "shape" in v else a
    return np.asarray(v, dtype=float)


def charts(at: AppTest) -> dict[str, dict]:
    """Plotly figures by their ``key=`` (AppTest has no typed accessor; ``proto.spec`` is the figure JSON)."""
    out = {}
    for el in at.get("plotly_chart"):
        out[el.key] = json.loads(el.proto.spec)
    return out


def _no_exception(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def _open(page: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    _no_exception(at)
    at.switch_page(page).run()
    _no_exception(at)
    return at


@pytest.fixture
def inspect_page() -> AppTest:
    return _open(INSPECT)


def _private_spectrum(at: AppTest) -> np.ndarray:
    fig = charts(at)["insp_spectrum"]
    private = [t for t in fig["data"] if t.get("name", "").endswith("(private)")]
    assert private, "no private series in the spectrum chart"
    return arr(private[0]["y"])


def _mechanism_ids_offered(at: AppTest) -> list[str]:
    box = at.selectbox(key="dp_insp_mech")
    names = {m.name: m.id for m in dpcore.list_mechanisms()}
    return [names[o.split("  ·  ")[0]] for o in box.options]


def test_inspect_page_renders_all_views(inspect_page):
    at = inspect_page
    assert at.title[0].value == "Inspect a mechanism"
    assert any("evaluation sandbox" in i.value for i in at.info)
    figs = charts(at)
    assert {"insp_spectrum", "insp_noise", "insp_projection", "insp_ledger"} <= set(figs)
    # Projection: two panels with the same rows (true vs private top-2).
    proj = figs["insp_projection"]["data"]
    assert len(proj) >= 2
    assert at.session_state["_dp_insp_release"]["release"] is not None


def test_changing_epsilon_changes_the_chart(inspect_page):
    at = inspect_page
    before = _private_spectrum(at)
    eps_before = at.select_slider(key="dp_insp_eps").value
    at.select_slider(key="dp_insp_eps").set_value(0.1 if eps_before != 0.1 else 10.0).run()
    _no_exception(at)
    after = _private_spectrum(at)
    assert before.shape == after.shape
    assert not np.allclose(before, after, equal_nan=True)


def test_changing_mechanism_changes_the_chart(inspect_page):
    at = inspect_page
    before = json.dumps(charts(at)["insp_noise"]["data"][0]["z"])
    current = at.selectbox(key="dp_insp_mech").value
    other = next(m for m in _mechanism_ids_offered(at) if m != current and dpcore.get_mechanism(m).output ==
                 "covariance")
    at.selectbox(key="dp_insp_mech").set_value(other).run()
    _no_exception(at)
    assert at.session_state["_dp_insp_release"]["release"].mechanism == other
    after = json.dumps(charts(at)["insp_noise"]["data"][0]["z"])
    assert before != after


def test_chart_only_change_does_not_rerun_release(inspect_page):
    at = inspect_page
    stored = at.session_state["_dp_insp_release"]
    at.checkbox(key="dp_insp_color").set_value(not at.checkbox(key="dp_insp_color").value).run()
    _no_exception(at)
    assert at.session_state["_dp_insp_release"] is stored


def test_invalid_mechanisms_need_the_toggle(inspect_page):
    at = inspect_page
    invalid = {m.id for m in dpcore.list_mechanisms() if m.invalid}
    if not invalid:
        pytest.skip("no claimed-invalid mechanism is registered")
    assert not invalid & set(_mechanism_ids_offered(at))
    at.toggle(key="dp_insp_invalid").set_value(True).run()
    _no_exception(at)
    assert invalid <= set(_mechanism_ids_offered(at))
    mid = sorted(invalid)[0]
    at.selectbox(key="dp_insp_mech").set_value(mid).run()
    _no_exception(at)
    # Badge + explicit "not private" error with the counterexample δ.
    assert any("Not differentially private" in e.value for e in at.error)
    assert any("NOT private" in m.value for m in at.markdown)
    # Hiding them again falls back to a valid mechanism instead of failing.
    at.toggle(key="dp_insp_invalid").set_value(False).run()
    _no_exception(at)
    assert not dpcore.get_mechanism(at.selectbox(key="dp_insp_mech").value).invalid


def test_time_cap_gives_a_timed_out_outcome(inspect_page):
    at = inspect_page
    if "ppca" not in dpcore.mechanism_ids():
        pytest.skip("ppca is not registered")
    at.selectbox(key="dp_insp_mech").set_value("ppca").run()
    at.number_input(key="dp_time_cap").set_value(0.5)
    at.number_input(key="dp_insp_opt_ppca_burn_in").set_value(1_000_000).run()
    _no_exception(at)
    outcome = at.session_state["_dp_insp_release"]
    assert outcome["timeout"] and outcome["release"] is None
    assert any("Timed out" in w.value for w in at.warning)
    assert not at.get("plotly_chart")


def test_bottom_is_shown_with_its_reason():
    candidates = [m for m in dpcore.list_mechanisms() if m.id.startswith("ss_")]
    if not candidates:
        pytest.skip("no ⊥-capable (Singhal–Steinke ss_*) mechanism is registered yet")
    at = _open(INSPECT)
    data = _prepared_data(at)
    for mech in candidates:
        for eps in (0.01, 0.1):
            kwargs = {"delta": 1e-5} if mech.uses_delta else {}
            try:
                rel = mech.release(data, 2, eps, kwargs.get("delta", 0.0), random_state=0, time_limit=20)
            except dpcore.DPCoreError:
                continue
            if rel.is_bottom:
                at.selectbox(key="dp_insp_mech").set_value(mech.id)
                at.select_slider(key="dp_insp_eps").set_value(eps)
                at.number_input(key="dp_k").set_value(2)
                at.number_input(key="dp_seed").set_value(0).run()
                _no_exception(at)
                warnings = " ".join(w.value for w in at.warning)
                assert "⊥" in warnings and rel.reason in warnings
                return
    pytest.skip("no ss_* mechanism returned ⊥ on the default dataset at small ε")


def test_ppca_burn_in_traces_and_convergence_verdict(inspect_page):
    at = inspect_page
    if "ppca" not in dpcore.mechanism_ids():
        pytest.skip("ppca is not registered")
    at.selectbox(key="dp_insp_mech").set_value("ppca").run()
    at.number_input(key="dp_insp_opt_ppca_burn_in").set_value(200).run()
    _no_exception(at)
    release = at.session_state["_dp_insp_release"]["release"]
    assert release is not None and release.mechanism == "ppca" and release.options["burn_in"] == 200
    fig = charts(at)["insp_traces"]
    assert fig["layout"]["yaxis"]["type"] == "log"
    chains = [t for t in fig["data"] if t.get("name", "").startswith("chain")]
    assert len(chains) == release.options["chains"]
    np.testing.assert_allclose(arr(chains[0]["y"]), release.diagnostics["f_traces"][0])
    verdicts = [w.value for w in at.warning if "Not converged" in w.value] + \
               [s.value for s in at.success if "chains ended below" in s.value]
    assert len(verdicts) == 1
    assert ("Not converged" in verdicts[0]) == (not release.diagnostics["converged"])


def _prepared_data(at: AppTest):
    return at.session_state["_dp_prepared"][1]


def test_learn_page_has_one_card_per_mechanism():
    at = _open(LEARN)
    assert at.title[0].value == "Learn"
    mechs = dpcore.list_mechanisms()
    assert len(at.expander) == len(mechs)
    labels = [e.label for e in at.expander]
    assert labels == [m.name for ms in _groups(mechs).values() for m in ms]
    if any(m.counterexample_delta(1.0) is not None for m in mechs):
        assert len(at.dataframe) >= 1
        table = at.dataframe[0].value
        assert "ε = 1" in table.columns
    assert any("Glossary" in h.value for h in at.header)


def _groups(mechs):
    from dpcore.inspect import group_by_guarantee

    return group_by_guarantee(mechs, include_invalid=True)


def test_learn_headings_keep_the_greek_epsilon():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(Path(__file__).resolve().parents[1] / "pages" / "learn.py"), default_timeout=60).run()
    headings = [h.value for h in at.subheader]
    assert "ε-DP (pure)" in headings
    assert not any(h.startswith("Ε") for h in headings)  # Greek capital epsilon (looks like 'E')
