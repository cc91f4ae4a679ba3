"""AppTest (headless, no browser) tests of the DP-PCA Explorer pages: load, widgets → charts, uploads, links."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest
from streamlit.testing.v1 import AppTest

from dpcore.evaluation.reporting import legend_label
from pages.ui import state as ui_state

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
TIMEOUT = 60


def arr(v) -> np.ndarray:
    """Plotly ≥ 6 serialises numpy arrays as {"dtype", "bdata"(base64)[, "shape"]}."""
    if isinstance(v, dict) and "bdata" in v:
        a = np.frombuffer(base64.b64decode(v["bdata"]), dtype=v["dtype"])
        return a.reshape(v["shape"]) if "shape" in v else a
    return np.asarray(v)


def chart(at: AppTest, key: str) -> dict:
    for el in at.get("plotly_chart"):
        if el.key == key:
            return json.loads(el.proto.spec)
    raise AssertionError(f"no chart {key!r}; have {[el.key for el in at.get('plotly_chart')]}")


def line(fig: dict, name: str) -> tuple[np.ndarray, np.ndarray]:
    """x, y of the mean line of a mechanism (the trace named after it, not its band)."""
    for tr in fig["data"]:
        if tr.get("name") == name:
            return arr(tr["x"]).astype(float), arr(tr["y"]).astype(float)
    raise AssertionError(f"no trace {name!r}: {[t.get('name') for t in fig['data']]}")


def ui_colors() -> dict[str, str]:
    from pages import ui as _ui

    return _ui.mechanism_colors()


def no_exception(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


@pytest.fixture
def at() -> AppTest:
    app = AppTest.from_file(APP, default_timeout=TIMEOUT)
    app.run()
    no_exception(app)
    return app


@pytest.mark.slow
def test_explore_default_page_renders_four_charts(at):
    """First load: the default data (adult) and every chart, drawn without a click."""
    assert at.title[0].value.startswith("Explore")
    assert at.session_state["dp_dataset"] == "adult" and at.session_state["dp_k"] == 5
    assert any("evaluation sandbox" in el.value for el in at.info)
    keys = [el.key for el in at.get("plotly_chart")]
    assert sorted(keys) == ["explore_captured_variance_ratio", "explore_frobenius_error",
                            "explore_principal_angle_max_deg", "explore_svm_accuracy"]  # adult has labels
    fig = chart(at, "explore_captured_variance_ratio")
    x, y = line(fig, "Analyze Gauss · (ε,δ)-DP")
    assert list(x) == [0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0]
    assert np.all((y > -0.5) & (y <= 1.0 + 1e-9))
    assert y[-1] > y[0]  # more ε, more utility
    assert fig["layout"]["xaxis"]["type"] == "log"
    # reference lines (non-private PCA at 1) are drawn as full-width shapes, each with a tag (full label on hover)
    shapes = fig["layout"].get("shapes", [])
    assert any(abs(s.get("y0", -1) - 1.0) < 1e-9 and s["xref"] == "x domain" for s in shapes)
    labels = {a.get("hovertext", a["text"]): a["y"] for a in fig["layout"].get("annotations", [])}
    assert labels.get(legend_label("pca")) == pytest.approx(1.0)
    assert len(labels) == len(shapes)
    # ε tick labels on the log axis, a shaded band under each mean line, one colour per mechanism
    assert fig["layout"]["xaxis"]["ticktext"] == ["0.1", "0.2", "0.5", "1", "2", "5", "10"]
    band = next(t for t in fig["data"] if t.get("name") == "Analyze Gauss · (ε,δ)-DP band")
    assert band["fill"] == "toself" and len(band["x"]) == 14
    colour = ui_colors()["analyze_gauss"]
    assert next(t for t in fig["data"] if t.get("name") == "Analyze Gauss · (ε,δ)-DP")["line"]["color"] == colour
    for el in at.get("plotly_chart"):
        assert el.proto.theme == "streamlit"
        go.Figure(json.loads(el.proto.spec))  # the dict-built figures pass Plotly's full validation
    assert at.get("arrow_data_frame") or at.dataframe  # results table


@pytest.mark.slow
def test_default_data_shows_the_trade_off(at):
    """Private curves leave the random-subspace line and approach PCA inside the default ε range; bands narrow."""
    run = ui_state.stored("explore_result", at.session_state)
    frame = run.frame[run.frame["status"] == "ok"]
    random_level = run.frames["reference lines"].query("mechanism == 'random'")["captured_variance_ratio"].mean()
    stats = frame.groupby(["mechanism", "epsilon"])["captured_variance_ratio"].agg(["mean", "std"])
    for mid in ("analyze_gauss", "mod_sulq", "laplace"):
        lo, hi = stats.loc[(mid, 0.1)], stats.loc[(mid, 10.0)]
        assert hi["mean"] > random_level + 0.5, (mid, hi["mean"], random_level)  # far above the random line
        assert hi["mean"] > lo["mean"] + 0.2 or lo["mean"] > 0.6  # rises with ε (AG starts high)
        assert hi["std"] < 0.05  # a narrow band at large ε
    assert stats.loc[("analyze_gauss", 10.0), "mean"] > 0.99  # reaches non-private PCA
    # the classic small datasets are one click away
    at.button(key="explore_use_wine").click().run()
    no_exception(at)
    assert at.session_state["dp_dataset"] == "wine"
    assert any("Why these curves are noisy" in i.value and "125 rows" in i.value for i in at.info)
    at.button(key="explore_use_default").click().run()
    assert at.session_state["dp_dataset"] == "adult"


def test_svm_chart_draws_the_majority_class_baseline(at):
    run = ui_state.stored("explore_result", at.session_state)
    majority = run.frame["svm_majority_baseline"].dropna()
    assert len(majority) and majority.nunique() == 1  # one held-out split for the whole sweep
    fig = chart(at, "explore_svm_accuracy")
    notes = {a.get("hovertext", a["text"]): a["y"] for a in fig["layout"]["annotations"]}
    assert notes[ui_label_majority()] == pytest.approx(majority.iloc[0])
    shape = next(s for s in fig["layout"]["shapes"] if s["line"]["dash"] == "dashdot")
    assert shape["y0"] == pytest.approx(majority.iloc[0])
    assert any("majority class" in c.value for c in at.caption)
    # the other charts have no such line
    assert ui_label_majority() not in {a.get("hovertext", a["text"]) for a in
                                       chart(at, "explore_captured_variance_ratio")["layout"].get("annotations", [])}


def ui_label_majority() -> str:
    from pages import ui as _ui

    return _ui.MAJORITY_LABEL


@pytest.mark.parametrize("page", ["pages/data.py", "pages/sample_size.py", "pages/inspect.py",
                                  "pages/papers.py", "pages/learn.py", "pages/audit.py"])
def test_every_page_loads(at, page):
    assert (ROOT / page).exists(), f"{page} is missing"
    at.switch_page(page).run()
    no_exception(at)
    assert not at.error, [e.value for e in at.error]
    live = ui_state.slot_key("ss_result") + "_live"  # Sample size runs its default sweep by itself (issue #33)
    if live in at.session_state:
        at.session_state[live].sweep.cancel()  # not left running on the pool for the rest of the suite


@pytest.mark.slow
def test_changing_widgets_changes_chart_data(at):
    before = line(chart(at, "explore_captured_variance_ratio"), "Analyze Gauss · (ε,δ)-DP")
    at.select_slider(key="w_dp_eps_range").set_value((1.0, 100.0)).run()
    no_exception(at)
    x, y = line(chart(at, "explore_captured_variance_ratio"), "Analyze Gauss · (ε,δ)-DP")
    assert list(x) == [1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0]
    assert not np.array_equal(x, before[0])
    # a different seed changes the noise, hence the curve (at ε ≥ 1 with B = √14 AG captures > 0.9999 of the
    # variance on Adult, so two seeds differ only in the fifth decimal: compare exactly, not within allclose's rtol)
    at.number_input(key="dp_seed").set_value(7).run()
    no_exception(at)
    x2, y2 = line(chart(at, "explore_captured_variance_ratio"), "Analyze Gauss · (ε,δ)-DP")
    assert list(x2) == list(x) and not np.allclose(y2, y, rtol=0.0, atol=1e-12)
    # deselecting a mechanism removes its curve
    at.multiselect(key="dp_mech_approx").set_value(["mod_sulq"]).run()
    names = [t.get("name") for t in chart(at, "explore_frobenius_error")["data"]]
    assert "MOD-SULQ · (ε,δ)-DP" in names and "Analyze Gauss · (ε,δ)-DP" not in names


@pytest.mark.slow
def test_chart_option_does_not_rerun_sweep(at):
    frame_before = ui_state.stored("explore_result", at.session_state).frame
    at.radio(key="dp_band").set_value("min–max").run()
    no_exception(at)
    assert ui_state.stored("explore_result", at.session_state).frame is frame_before  # same object: no new sweep
    derived = ui_state.stored("explore_derived", at.session_state)
    assert derived["frame"] is frame_before and set(derived["bands"]) == {"sd", "minmax"}
    _, lo_hi = line(chart(at, "explore_captured_variance_ratio"), "Analyze Gauss · (ε,δ)-DP band")
    ok = frame_before[(frame_before["mechanism"] == "analyze_gauss") & (frame_before["status"] == "ok")]
    assert lo_hi.max() == pytest.approx(ok["captured_variance_ratio"].max())  # min–max band
    # a rerun without changes reuses the figures built for this sweep
    figs = dict(derived["figs"])
    at.run()
    assert all(ui_state.stored("explore_derived", at.session_state)["figs"][k] is v for k, v in figs.items())


@pytest.mark.slow
def test_bad_csv_shows_error_not_exception(at):
    at.session_state["dp_upload"] = b"only_text,more_text\nfoo,bar\nbaz,qux\n"
    at.session_state["dp_upload_name"] = "bad.csv"
    at.session_state["dp_dataset"] = "__upload__"
    at.session_state["dp_categorical"] = "drop"
    at.switch_page("pages/data.py").run()
    no_exception(at)
    assert at.error, "expected an st.error for a CSV without numeric columns"
    assert "column" in at.error[0].value.lower()


@pytest.mark.slow
def test_good_csv_updates_summary(at):
    rng = np.random.default_rng(0)
    values = rng.normal(size=(60, 4))
    rows = "\n".join(",".join(f"{v:.3f}" for v in r) + f",{'ab'[i % 2]}" for i, r in enumerate(values))
    at.session_state["dp_upload"] = ("a,b,c,d,label\n" + rows + "\n").encode()
    at.session_state["dp_upload_name"] = "good.csv"
    at.session_state["dp_dataset"] = "__upload__"
    at.session_state["dp_label"] = "label"
    at.session_state["dp_scaling"] = "minmax"
    at.switch_page("pages/data.py").run()
    no_exception(at)
    assert not at.error, [e.value for e in at.error]
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Rows n"] == "60" and metrics["Features d"] == "4"
    assert metrics["Labels"] == "2 classes"
    # min-max scaling reads the data: the ledger must show a non-private step in red
    assert any(":red[" in md.value for md in at.markdown)


def test_query_params_round_trip():
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params.update({"k": "3", "eps": "0.5~5", "mech": "mod_sulq,laplace", "seed": "11",
                            "delta": "1e-6", "data": "wine", "trials": "2"})
    at.run()
    no_exception(at)
    assert at.number_input(key="dp_k").value == 3
    assert at.select_slider(key="w_dp_eps_range").value == (0.5, 5.0)
    assert at.multiselect(key="dp_mech_approx").value == ["mod_sulq"]
    assert at.multiselect(key="dp_mech_pure").value == ["laplace"]
    assert at.number_input(key="dp_seed").value == 11
    assert at.select_slider(key="dp_delta").value == 1e-6
    x, _ = line(chart(at, "explore_captured_variance_ratio"), "MOD-SULQ · (ε,δ)-DP")
    assert list(x) == [0.5, 1.0, 2.0, 5.0]
    # widget change -> URL
    at.number_input(key="dp_k").set_value(4).run()
    assert at.query_params["k"] == "4"
    assert at.query_params["eps"] == "0.5~5"
    assert at.query_params["mech"] == "laplace,mod_sulq"


def test_invalid_query_params_are_ignored():
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params.update({"k": "banana", "data": "no_such_data", "mech": "nope", "eps": "x"})
    at.run()
    no_exception(at)
    assert at.number_input(key="dp_k").value == 5
    assert at.session_state["dp_dataset"] == "adult"
    assert at.toast and "Ignored" in at.toast[0].value


@pytest.mark.slow
def test_settings_persist_across_pages(at):
    at.number_input(key="dp_k").set_value(3).run()
    at.switch_page("pages/data.py").run()
    no_exception(at)
    at.switch_page("pages/explore.py").run()
    assert at.number_input(key="dp_k").value == 3


@pytest.mark.slow
def test_invalid_mechanism_exhibit_is_labelled(at):
    at.multiselect(key="dp_mech_claimed-invalid").set_value(["sn_imtiaz"]).run()
    no_exception(at)
    assert any("claimed-invalid" in e.value and "δ <" in e.value for e in at.error)
    names = [t.get("name") for t in chart(at, "explore_captured_variance_ratio")["data"]]
    assert any("NOT PRIVATE" in (n or "") for n in names)


@pytest.mark.slow
def test_sample_size_page_runs(at):
    at.session_state["dp_dataset"] = "wine"
    at.switch_page("pages/sample_size.py").run()
    no_exception(at)
    at.session_state["dp_ss_mechs"] = ["analyze_gauss"]
    at.session_state["dp_ss_trials"] = 2
    at.run()
    at.button(key="ss_run").click().run()
    no_exception(at)
    fig = chart(at, "ss_chart")
    x, y = line(fig, "Analyze Gauss · (ε,δ)-DP")
    assert np.all((y > -0.5) & (y <= 1.0 + 1e-9))
    assert len(x) >= 3 and np.all(np.diff(x) > 0)
    assert fig["layout"]["xaxis"]["type"] == "log"
    # Wine at k = 5: AG's 1/n² rate needs n ≥ ‖E‖₂/Δ₅ (> 10⁵ rows): no guide, and the page says why (issue 20)
    assert not any("scaling guide" in (t.get("name") or "") for t in fig["data"])
    assert any("Analyze Gauss**: no guide here, because its 1/n² rate needs noise on C/n below the eigengap"
               in c.value for c in at.caption)
    # the SVM view draws the majority-class floor
    at.radio(key="dp_ss_metric").set_value("svm_accuracy").run()
    no_exception(at)
    fig = chart(at, "ss_chart")
    majority = ui_state.stored("ss_result", at.session_state).frame["svm_majority_baseline"].dropna()
    notes = {a.get("hovertext", a["text"]): a["y"] for a in fig["layout"]["annotations"]}
    assert notes[ui_label_majority()] == pytest.approx(majority.mean())


def test_metric_figure_exports_and_notes():
    from dpcore.evaluation.reporting import band_table
    from pages import ui as _ui

    frame = pd.DataFrame({"mechanism": ["analyze_gauss"] * 4, "epsilon": [0.1, 0.1, 1.0, 1.0], "status": "ok",
                          "captured_variance_ratio": [0.2, 0.4, 0.8, 1.0]})
    fig = _ui.metric_figure(band_table(frame), "captured_variance_ratio", title="T", references={"pca": 1.0})
    html = fig.to_html(include_plotlyjs=False)
    assert "Analyze Gauss (AG)" in html and '"x domain"' in html
    empty = _ui.metric_figure(band_table(frame), "svm_accuracy", note="nothing to show")
    assert [a["text"] for a in empty.to_dict()["layout"]["annotations"]] == ["nothing to show"]


@pytest.mark.slow
def test_data_page_utility_vs_b_advisor(at):
    at.session_state["dp_dataset"] = "wine"
    at.switch_page("pages/data.py").run()
    no_exception(at)
    assert at.selectbox(key="dp_adv_mech").value == "analyze_gauss"
    assert at.select_slider(key="dp_adv_eps").value == 1.0
    assert ui_state.stored("adv_result", at.session_state) is None  # nothing runs before the button
    at.button(key="data_adv_run").click().run()
    no_exception(at)
    assert not at.error, [e.value for e in at.error]
    curve = ui_state.stored("adv_result", at.session_state)
    assert len(curve) == 12 and (curve["n_ok"] == 3).all()
    fig = chart(at, "data_clip_utility")
    assert fig["layout"]["xaxis"]["type"] == "log" and fig["layout"]["yaxis2"]["overlaying"] == "y"
    x, y = line(fig, "captured-variance ratio (Analyze Gauss (AG), mean ± sd)")
    np.testing.assert_allclose(x, curve["norm_bound"].to_numpy())
    np.testing.assert_allclose(y, curve["captured_variance_ratio"].to_numpy())
    _, clipped = line(fig, "fraction of rows clipped (right axis)")
    assert np.all(np.diff(clipped) <= 0) and clipped[-1] == 0.0
    b0 = at.session_state["dp_norm_bound"]
    assert any(s.get("x0") == pytest.approx(b0) for s in fig["layout"]["shapes"])  # current B marked
    assert any("NOT private" in c.value for c in at.caption)
    # changing the current B only moves the marker: no recomputation
    at.toggle(key="dp_norm_auto").set_value(False).run()
    at.number_input(key="dp_norm_bound").set_value(2.0).run()
    no_exception(at)
    assert ui_state.stored("adv_result", at.session_state) is curve
    fig = chart(at, "data_clip_utility")
    assert any(s.get("x0") == pytest.approx(2.0) for s in fig["layout"]["shapes"])
    # a setting that matters (ε) asks for a new run, and the button uses the new ε
    at.select_slider(key="dp_adv_eps").set_value(10.0).run()
    assert any("changed" in w.value for w in at.warning)
    at.button(key="data_adv_run").click().run()
    assert ui_state.stored("adv_result", at.session_state).attrs["epsilon"] == 10.0
    assert not any("changed" in w.value for w in at.warning)


@pytest.mark.slow
def test_data_page_utility_advisor_error_is_shown(at, monkeypatch):
    import dpcore.evaluation.advisor

    def failing(*args, **kwargs):
        raise dpcore.DPCoreError("the advisor failed: lower the number of trials.")

    monkeypatch.setattr(dpcore.evaluation.advisor, "clipping_utility_curve", failing)
    at.switch_page("pages/data.py").run()
    at.button(key="data_adv_run").click().run()
    no_exception(at)
    assert [e.value for e in at.error] == ["the advisor failed: lower the number of trials."]
    assert ui_state.stored("adv_result", at.session_state) is None


@pytest.mark.slow
@pytest.mark.parametrize("dataset", ["wine", "css_synthetic"])
def test_sample_size_defaults_give_a_banded_curve(dataset):
    """The default mechanisms run without a click (their time is a benchmark's concern, not this test's)."""
    from dpcore.evaluation.metrics import evaluation_split

    app = AppTest.from_file(APP, default_timeout=TIMEOUT)
    app.query_params["data"] = dataset
    app.run()
    no_exception(app)
    app.switch_page("pages/sample_size.py").run()  # fast default mechanisms: runs without a click
    no_exception(app)
    assert not app.error, [e.value for e in app.error]
    frame = ui_state.stored("ss_result", app.session_state).frame
    assert app.session_state["dp_ss_trials"] >= 3 and frame["trial"].nunique() == app.session_state["dp_ss_trials"]
    prepared = ui_state.stored("prepared", app.session_state)
    sizes = sorted(frame["n"].unique())
    assert len(sizes) >= 6 and sizes[0] >= 2 * prepared.d
    assert sizes[-1] == evaluation_split(prepared, 0)[0].n  # up to every row the mechanisms can get
    assert np.allclose(np.diff(np.log(sizes)), np.log(sizes[-1] / sizes[0]) / (len(sizes) - 1), rtol=0.2)
    fig = chart(app, "ss_chart")
    band = next(t for t in fig["data"] if t.get("name") == "Analyze Gauss · (ε,δ)-DP band")
    assert band["fill"] == "toself"
    _, mean = line(fig, "Analyze Gauss · (ε,δ)-DP")
    assert mean[-1] > mean[0] + 0.2  # utility clearly grows with n
    small_note = [i.value for i in app.info if "small" in i.value]
    if dataset == "wine":
        assert small_note and "Synthetic" in small_note[0]  # the suggestion names the larger dataset
        app.button(key="ss_use_css_synthetic").click().run()
        no_exception(app)
        assert app.session_state["dp_dataset"] == "css_synthetic"
        assert not [i.value for i in app.info if "small" in i.value]
    else:
        assert not small_note


@pytest.mark.slow
def test_first_load_draws_the_real_navigation(at):
    """The sidebar shows the app's pages (never file names such as the private `_ui` module)."""
    from pages.ui import nav as _nav

    labels = [el.proto.label for el in at.get("page_link")]
    assert labels[: len(_nav.PAGES)] == [p.title for p in _nav.PAGES]
    assert "Papers" in labels
    assert len(labels) == len(_nav.PAGES)
    # the legacy mode's names are the file names (lower case): app, explore, sample size, _ui → "ui", …
    assert not {"ui", "app", "explore", "data", "sample size", "inspect", "learn", "audit", "papers"} & set(labels)
    # Streamlit's own sidebar navigation (which would list pages/*.py in the legacy mode) stays off
    import tomllib

    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["client"]["showSidebarNavigation"] is False
    # a page run without app.py (a fresh server's first request to /data runs the page script directly) draws
    # the same links
    at.switch_page("pages/data.py").run()
    assert [el.proto.label for el in at.get("page_link")][: len(_nav.PAGES)] == [p.title for p in _nav.PAGES]


@pytest.mark.slow
def test_settings_codec_round_trips():
    """One owner: defaults, link parsing and link writing all come from the settings table."""
    from pages.ui import state as _state

    assert _state.DEFAULTS["dp_dataset"] == _state.DEFAULT_DATASET == "adult"
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params.update({"data": "wine", "k": "3", "eps": "0.5~5", "delta": "2e-6", "B": "2.5", "Bsrc": "data",
                            "center": "dp", "trials": "2", "seed": "4", "cap": "7", "nb": "replace",
                            "scale": "minmax", "sseps": "0.3", "mech": "analyze_gauss"})
    at.run()
    no_exception(at)
    ss = at.session_state
    assert (ss["dp_dataset"], ss["dp_k"], ss["dp_eps_range"], ss["dp_delta"]) == ("wine", 3, (0.5, 5.0), 1e-6)
    assert (ss["dp_norm_auto"], ss["dp_norm_bound"], ss["dp_norm_from_data"]) == (False, 2.5, True)
    assert (ss["dp_centering"], ss["dp_trials"], ss["dp_seed"], ss["dp_time_cap"]) == ("dp", 2, 4, 7.0)
    assert (ss["dp_scaling"], ss["dp_ss_eps"]) == ("minmax", 0.2)  # snapped to the ε grid
    assert dict(at.query_params) == {"data": "wine", "k": "3", "eps": "0.5~5", "delta": "1e-06", "mech":
                                     "analyze_gauss", "B": "2.5", "Bsrc": "data", "center": "dp", "trials": "2",
                                     "seed": "4", "cap": "7", "nb": "replace", "scale": "minmax", "sseps": "0.2"}
