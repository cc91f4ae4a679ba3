"""AppTest of settings scoping: data settings belong to a dataset (an upload's non-private scaling never reaches a
built-in dataset), cross-page settings show the page that set them (with a reset), δ is shown as a number, and
Inspect's numbers agree with their captions."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from dpcore.evaluation.metrics import evaluate
from pages.ui import state as ui_state

pytestmark = pytest.mark.slow  # AppTest-heavy: every test runs the app

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
TIMEOUT = 90
UPLOAD = "__upload__"


def no_exception(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def _csv() -> bytes:
    """Four numeric columns and a text label called 'species' (the label guess picks it)."""
    rng = np.random.default_rng(7)
    rows = "\n".join(",".join(f"{v:.3f}" for v in r) + f",{'ab'[i % 2]}"
                     for i, r in enumerate(rng.normal(size=(80, 4))))
    return ("a,b,c,d,species\n" + rows + "\n").encode()


def _red_ledger(at: AppTest) -> bool:
    return any(":red[" in md.value for md in at.markdown)


@pytest.fixture
def at() -> AppTest:
    app = AppTest.from_file(APP, default_timeout=TIMEOUT)
    app.run()
    no_exception(app)
    return app


def _upload_on_data_page(at: AppTest) -> None:
    """What the uploader leaves behind (bytes in the session, a label guess pending), then the Data page's dataset
    picker selects the upload — the same select_dataset path as the uploader's callback."""
    at.switch_page("pages/data.py").run()
    no_exception(at)
    at.session_state["dp_upload"] = _csv()
    at.session_state["dp_upload_name"] = "flowers.csv"
    ui_state.set_stored("label_guess", None, at.session_state)
    at.run()
    at.selectbox(key="dp_dataset").set_value(UPLOAD).run()
    no_exception(at)
    assert at.session_state["dp_dataset"] == UPLOAD


def test_upload_scaling_does_not_leak_into_builtin_data(at):
    _upload_on_data_page(at)
    assert at.session_state["dp_label"] == "species"  # guessed from the name
    assert any("Guessed: 'species'" in c.value for c in at.caption)
    at.radio(key="dp_scaling").set_value("minmax").run()
    no_exception(at)
    assert _red_ledger(at) and ui_state.stored("prepared", at.session_state).is_private is False

    at.selectbox(key="dp_dataset").set_value("wine").run()  # back to a built-in dataset
    no_exception(at)
    assert at.session_state["dp_scaling"] == "schema"
    prepared = ui_state.stored("prepared", at.session_state)
    assert prepared.is_private and all(e.private for e in prepared.ledger)
    assert not _red_ledger(at) and any("end-to-end private" in s.value for s in at.success)
    at.switch_page("pages/explore.py").run()
    no_exception(at)
    assert not any("non-private step" in w.value for w in at.warning)

    # the upload kept its own choice: back on it, min–max (and its red ledger) return
    at.switch_page("pages/data.py").run()
    at.selectbox(key="dp_dataset").set_value(UPLOAD).run()
    no_exception(at)
    assert at.session_state["dp_scaling"] == "minmax" and _red_ledger(at)


def test_explore_picker_and_reset_to_private_defaults(at):
    _upload_on_data_page(at)
    at.radio(key="dp_scaling").set_value("minmax").run()
    at.selectbox(key="dp_centering").set_value("empirical").run()
    no_exception(at)
    at.button(key="data_reset_data_settings").click().run()  # this dataset's private defaults, the label kept
    no_exception(at)
    assert (at.session_state["dp_scaling"], at.session_state["dp_centering"]) == ("schema", "none")
    assert at.session_state["dp_label"] == "species"
    at.radio(key="dp_scaling").set_value("minmax").run()
    at.switch_page("pages/explore.py").run()
    no_exception(at)
    assert any("non-private step" in w.value for w in at.warning)
    at.selectbox(key="w_dp_dataset").set_value("adult").run()  # Explore's own picker
    no_exception(at)
    assert at.session_state["dp_scaling"] == "schema"
    assert not any("non-private step" in w.value for w in at.warning)


def test_delta_set_on_inspect_shows_its_origin_and_resets(at):
    at.switch_page("pages/inspect.py").run()
    no_exception(at)
    at.selectbox(key="dp_delta").set_value(1e-8).run()
    no_exception(at)
    assert not any("set on" in c.value for c in at.caption)  # no note on the page that set it
    at.switch_page("pages/explore.py").run()
    no_exception(at)
    notes = [c.value for c in at.caption if "δ = 1e-08 set on Inspect" in c.value]
    assert notes, [c.value for c in at.caption]
    at.button(key="origin_reset_dp_delta").click().run()
    no_exception(at)
    assert at.session_state["dp_delta"] == 1e-6  # Adult's default δ (far below 1/n)
    assert not any("set on Inspect" in c.value for c in at.caption)
    assert at.select_slider(key="dp_delta").value == 1e-6


def test_sample_size_keeps_its_own_k_when_explores_changes(at):
    """Sample size has its own k (default 1, where the theory's guides fall inside the data's rows; issue 33 item
    4): Explore's k = 3 does not move it."""
    at.number_input(key="dp_k").set_value(3).run()
    at.session_state["dp_dataset"] = "wine"
    at.switch_page("pages/sample_size.py").run()
    no_exception(at)
    assert at.number_input(key="dp_ss_k").value == 1
    assert not any("k = 3 set on Explore" in c.value for c in at.caption)


def test_results_table_shows_delta_as_a_number(at):
    at.select_slider(key="dp_delta").set_value(1e-10).run()
    no_exception(at)
    table = at.dataframe[0].value
    approx = table["name"].str.contains("Analyze Gauss|MOD-SULQ")
    assert approx.any() and (~approx).any()
    assert set(table.loc[approx, "delta"]) == {"1e-10"}, table["delta"].tolist()
    assert set(table.loc[~approx, "delta"]) == {"0"}  # pure ε-DP (Laplace): δ = 0


def test_inspect_angle_card_agrees_with_its_caption(at):
    at.number_input(key="dp_k").set_value(5).run()  # k chosen on Adult, carried to Wine
    at.session_state["dp_dataset"] = "wine"
    at.switch_page("pages/inspect.py").run()
    no_exception(at)
    card = next(m.value for m in at.metric if m.label == "Largest angle")
    caption = next(c.value for c in at.caption if "Largest angle between these two planes" in c.value)
    assert f"card above, {card}" in caption and "k = 5-dimensional" in caption
    # the card is the k-dimensional angle of the release shown; the caption's plane angle is a different number,
    # named as such (two planes can be further apart than the whole k-dim subspaces, or closer)
    release = ui_state.stored("insp_release", at.session_state)["release"]
    whole = evaluate(release, ui_state.stored("prepared", at.session_state))["principal_angle_max_deg"]
    assert release.k == 5 and card == f"{whole:.1f}°"
    assert re.search(r"these two planes: [\d.]+°", caption)
    assert any("releases on all 178 rows" in c.value and "n = 125" in c.value for c in at.caption)


class _Session(dict):
    """A stand-in for st.session_state (attribute and item access) for the bare-mode unit test below."""

    __getattr__ = dict.__getitem__
    __setattr__ = dict.__setitem__


def test_store_upload_and_select_dataset_keep_settings_per_dataset(monkeypatch):
    """The uploader's callback path: a new file starts from the upload's private defaults, every dataset keeps its
    own data settings, a dataset met for the first time gets its private defaults."""
    import streamlit

    from pages.ui import datasets as _datasets
    from pages.ui import state as _state

    session = _Session({**_state.DEFAULTS, "dp_scaling": "none", _state.slot_key("scope_dataset"): "adult"})
    monkeypatch.setattr(streamlit, "session_state", session)
    _datasets.store_upload(b"a,b,kind\n1,2,x\n3,4,y\n", "first.csv")
    assert session.dp_dataset == UPLOAD and session.dp_scaling == "schema" and session.dp_missing == "zero"
    assert session[_state.slot_key("label_guess")] is None  # guessed when the Data page first reads the table
    session.dp_scaling = "minmax"
    _state.select_dataset("adult")
    assert session.dp_scaling == "none" and session.dp_missing == _state.DEFAULTS["dp_missing"]  # adult's own
    _state.select_dataset("wine")
    assert session.dp_scaling == "schema"  # first visit: the private default
    _state.select_dataset(UPLOAD)
    assert session.dp_scaling == "minmax"  # the upload kept its choice
    _datasets.store_upload(b"a,b\n1,2\n3,4\n", "second.csv")  # a new file: fresh defaults
    assert session.dp_scaling == "schema" and session.dp_upload_name == "second.csv"
    _datasets.store_upload(b"a,b\n1,2\n3,4\n", "second.csv")  # the same file again: its settings stay
    assert session.dp_scaling == "schema"


def _svm_note(at: AppTest) -> bool:
    return any("Why PCA is below the random subspace" in c.value for c in at.caption)


def _reference_svm(at: AppTest) -> dict[str, float]:
    ref = ui_state.stored("explore_result", at.session_state).frames["reference lines"]
    ok = ref[ref["status"] == "ok"]
    return ok.groupby("mechanism")["svm_accuracy"].mean().to_dict()


def test_note_when_pca_loses_to_random_on_svm(at):
    """Labels carried by two low-variance columns, four high-variance columns of noise: the top-2 principal
    directions miss the classes, so non-private PCA scores below a random 2-dim subspace and the page says why."""
    levels = _reference_svm(at)  # Adult, the default: PCA beats random, no note
    assert levels["pca"] > levels["random"] and not _svm_note(at)
    rng = np.random.default_rng(5)
    y = rng.integers(0, 2, 3000)
    X = np.hstack([rng.uniform(0, 10, size=(3000, 4)), y[:, None] + rng.normal(0, 0.3, size=(3000, 2))])
    rows = "\n".join(",".join(f"{v:.3f}" for v in r) + f",{'ab'[c]}" for r, c in zip(X, y))
    at.session_state["dp_upload"] = ("n1,n2,n3,n4,s1,s2,group\n" + rows + "\n").encode()
    at.session_state["dp_upload_name"] = "toy.csv"
    at.session_state["dp_dataset"] = UPLOAD
    at.session_state["dp_label"] = "group"
    at.session_state["dp_k"] = 2
    at.run()
    no_exception(at)
    levels = _reference_svm(at)
    assert levels["pca"] < levels["random"] - 0.005
    note = next(c.value for c in at.caption if "Why PCA is below the random subspace" in c.value)
    assert f"{levels['pca']:.3f}" in note and f"{levels['random']:.3f}" in note


def test_settings_from_a_link_say_so():
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params.update({"delta": "1e-6", "k": "3", "data": "wine"})
    at.run()
    no_exception(at)
    captions = [c.value for c in at.caption]
    assert any("δ = 1e-06 set by the link" in c for c in captions), captions
    assert any("k = 3 set by the link" in c for c in captions)
    assert not any("seed = " in c for c in captions)  # the default seed: nothing to explain


def test_a_link_from_an_upload_carries_none_of_its_data_settings(at):
    """Privacy review: the Data page's "Use B" reads B off the upload's rows; the URL must not carry it (nor the
    upload's scaling and centring) to whoever opens the link, where it would be applied to a built-in dataset."""
    _upload_on_data_page(at)
    at.session_state["dp_norm_auto"] = False
    at.session_state["dp_norm_bound"] = 3.172
    at.session_state["dp_norm_from_data"] = True
    at.run()
    no_exception(at)
    params = dict(at.query_params)
    assert params, "the settings should still reach the URL"
    assert not {"B", "Bsrc", "center", "scale", "seed"} & set(params), params
    assert params["data"] in ("upload", ["upload"])  # says only that an upload was used (a reload explains it)
    assert "3.172" not in repr(params)
    # on a built-in dataset the same settings are shared as before
    at.selectbox(key="dp_dataset").set_value("wine").run()
    no_exception(at)
    assert dict(at.query_params).get("data") in ("wine", ["wine"])


def test_delta_not_far_below_one_over_n_is_flagged_on_every_page_that_offers_it(at):
    """Privacy review: δ = 1e-3 on Adult (≈ 43 × 1/n) was offered on Inspect and Sample size without a word."""
    at.select_slider(key="dp_delta").set_value(1e-3).run()
    no_exception(at)
    assert any("at least 1/n" in w.value for w in at.warning)
    at.switch_page("pages/sample_size.py").run()
    no_exception(at)
    assert any("at least 1/n" in w.value for w in at.warning)
    at.switch_page("pages/inspect.py").run()
    no_exception(at)
    assert any("at least 1/n" in w.value for w in at.warning)
    at.session_state["dp_delta"] = 1e-6  # far below 1/n for Adult: nothing said
    at.run()
    assert not any("1/n" in w.value for w in at.warning) and not any("1/n" in c.value for c in at.caption)


def test_an_upload_never_runs_on_the_fixed_default_seed(at):
    """Privacy review item 12: the fixed default seed (0) is for public built-in data; selecting an upload draws a
    fresh seed from OS entropy (a seed everyone knows makes every noise draw on private data a public constant), and
    a link made on the upload does not carry the seed. Fails on 40144d4 (the upload ran on seed 0)."""
    from pages.ui import state as _state

    assert at.session_state["dp_seed"] == _state.DEFAULTS["dp_seed"]
    _upload_on_data_page(at)
    seed = at.session_state["dp_seed"]
    assert seed != _state.DEFAULTS["dp_seed"]
    assert "seed" not in at.query_params
    other = AppTest.from_file(APP, default_timeout=TIMEOUT)
    other.run()
    _upload_on_data_page(other)
    assert other.session_state["dp_seed"] not in (seed, _state.DEFAULTS["dp_seed"])  # fresh per session


def test_a_seed_chosen_before_the_upload_is_kept(at):
    """Reproducibility stays opt-in: a seed the user chose is not replaced when an upload is selected. "Chose":
    set on a page of this session (this run records it, as a widget change would) — not a link's seed or the seed
    the app drew for an earlier file (tests/privacy/test_privacy_round4.py, R4-8/R4-9)."""
    at.session_state["dp_seed"] = 1234
    at.run()
    _upload_on_data_page(at)
    assert at.session_state["dp_seed"] == 1234
