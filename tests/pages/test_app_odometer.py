"""The session odometer for uploads (issue 35 item 3, :mod:`pages.ui.odometer`), in AppTest: every page path that
releases on an upload — Explore's sweep, Explore's what-if panel, Sample size, Inspect (and its private pictures) —
adds exactly its releases with their (ε, δ); a rerun that shows a stored result adds nothing; built-in data adds
nothing; the Audit page never releases on an upload; reset zeroes the count and says that nothing is refunded."""

from __future__ import annotations

import dataclasses
import os
import time
from pathlib import Path

import numpy as np
import pytest
from _slow_mechanisms import SleepyMechanism
from streamlit.testing.v1 import AppTest

from dpcore.core.odometer import RESET_NOTE, gaussian_rho, zcdp_epsilon_tight
from dpcore.mechanisms import _INSTANCES, _REGISTRY
from pages.ui import odometer as odo_ui
from pages.ui import planner
from pages.ui import state as ui_state

pytestmark = pytest.mark.slow  # AppTest: every test runs the app and its sweeps

APP = str(Path(__file__).resolve().parents[2] / "app.py")
BOOK = ui_state.slot_key("odometer")
LIVE = ui_state.slot_key("explore_result_live")


def _table(seed: int = 1, n: int = 80) -> bytes:
    rng = np.random.default_rng(seed)
    rows = [f"{rng.uniform(1, 9):.2f},{rng.normal(50, 5):.1f},{rng.uniform(0, 3):.2f}" for _ in range(n)]
    return ("a,b,c\n" + "\n".join(rows) + "\n").encode()


def _use_upload(at, data: bytes = b"", name: str = "people.csv") -> None:
    """What the uploader's callback leaves in the session (written directly, as a browser upload would)."""
    at.session_state["dp_upload"] = data or _table()
    at.session_state["dp_upload_name"] = name
    at.session_state["dp_dataset"] = "__upload__"
    at.session_state["dp_missing"] = "zero"


def _only(at, mechanisms: list[str]) -> None:
    """Explore's mechanism pickers: exactly ``mechanisms``."""
    for group in ui_state.MECH_GROUPS:
        at.session_state[ui_state.mech_key(group)] = []
    at.session_state[ui_state.mech_key("approx")] = list(mechanisms)


def _ok(at) -> None:
    assert not at.exception, [e.value for e in at.exception]


def _odometer(at):
    """The session upload's odometer (None when nothing was ever counted or shown)."""
    try:
        book = at.session_state[BOOK]
    except KeyError:
        return None
    if book is None or not book.odometers:
        return None
    [odo] = book.odometers.values()
    return odo


def _count(at) -> int:
    odo = _odometer(at)
    return 0 if odo is None else len(odo.entries)


def _sidebar_text(at) -> str:
    parts = [e.label for e in at.sidebar.expander] + [m.value for m in at.sidebar.markdown] \
        + [c.value for c in at.sidebar.caption] + [i.value for i in at.sidebar.info]
    return "\n".join(str(p) for p in parts)


@pytest.fixture
def explore_upload():
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    _use_upload(at)
    at.session_state["dp_k"] = 1
    at.session_state["dp_trials"] = 2
    at.session_state["dp_eps_range"] = (0.5, 1.0)
    at.session_state["dp_delta"] = 1e-5
    _only(at, ["analyze_gauss"])
    at.switch_page("pages/explore.py").run()
    _ok(at)
    return at


def test_explore_sweep_on_an_upload_counts_each_release_once(explore_upload):
    at = explore_upload
    odo = _odometer(at)
    assert odo is not None
    spent = [e for e in odo.entries if e.epsilon > 0]
    # analyze_gauss at ε = 0.5 and 1 × 2 trials; the exact-PCA reference line (2 trials) is counted as NOT private
    # with no ε; the random-subspace line does not look at the data (not counted)
    assert sorted((e.epsilon, e.delta) for e in spent) == [(0.5, 1e-5)] * 2 + [(1.0, 1e-5)] * 2
    assert all(e.what == "Explore: Sweep: analyze_gauss" for e in spent)
    pca = [e for e in odo.entries if e.epsilon == 0]
    assert len(pca) == 2 and all(not e.private and "pca" in e.what for e in pca)
    # the draft schema's values are read off the data: the pipeline, hence every release, is not private
    assert not any(e.private for e in odo.entries)
    t = odo.totals()
    assert t.basic_epsilon == pytest.approx(3.0) and t.basic_delta == pytest.approx(4e-5)
    rho = 2 * (gaussian_rho(0.5, 1e-5) + gaussian_rho(1.0, 1e-5))
    assert t.zcdp_rho == pytest.approx(rho) and t.zcdp_epsilon == pytest.approx(zcdp_epsilon_tight(rho, 4e-5))
    text = _sidebar_text(at)
    assert "(your upload): 6 releases" in text and "Built-in datasets are public" in text
    assert "| basic | ε\u00a0=\u00a03, δ\u00a0=\u00a04e-05 |" in text
    assert f"| zCDP | ε\u00a0=\u00a0{t.zcdp_epsilon:.4g}, δ\u00a0=\u00a04e-05 |" in text
    # reruns show the stored result: nothing new
    at.run()
    at.run()
    _ok(at)
    assert _count(at) == 6
    # a wider ε range computes only the new cells (the old ones are reused from the session's cache)
    at.session_state["dp_eps_range"] = (0.5, 2.0)
    at.run()
    _ok(at)
    assert [(e.epsilon, e.delta) for e in _odometer(at).entries[6:]] == [(2.0, 1e-5)] * 2


def test_reset_zeroes_the_count_and_says_nothing_is_refunded(explore_upload):
    at = explore_upload
    assert _count(at) == 6
    at.sidebar.button(key="odometer_reset").click().run()
    _ok(at)
    assert _count(at) == 0
    assert _odometer(at).totals().basic_epsilon == 0
    text = _sidebar_text(at)
    assert "(your upload): 0 releases" in text and RESET_NOTE in text and "nothing is refunded" in text
    at.run()  # the stored sweep shown again: still nothing new
    _ok(at)
    assert _count(at) == 0
    # a wider ε range after the reset: only the new cells are computed, so only they are counted (the reused ones
    # were released before the reset: forgotten, not released again)
    at.session_state["dp_eps_range"] = (0.5, 2.0)
    at.run()
    _ok(at)
    assert [(e.epsilon, e.delta) for e in _odometer(at).entries] == [(2.0, 1e-5)] * 2
    assert "Count reset" not in _sidebar_text(at)  # the note went with the next release


def test_built_in_data_counts_nothing():
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.session_state["dp_dataset"] = "wine"
    at.session_state["dp_k"] = 1
    at.session_state["dp_trials"] = 2
    at.session_state["dp_eps_range"] = (0.5, 1.0)
    _only(at, ["analyze_gauss"])
    at.switch_page("pages/explore.py").run()
    _ok(at)
    assert ui_state.stored("explore_result", at.session_state) is not None  # the sweep ran
    assert _count(at) == 0
    assert "no upload in this session" in _sidebar_text(at) and "Built-in datasets are public" in _sidebar_text(at)


def test_built_in_data_counts_nothing_while_an_upload_is_in_the_session():
    at = _inspect_upload()
    assert _count(at) == 1
    at.session_state["dp_dataset"] = "wine"  # the upload stays in the session; Inspect releases on Wine now
    at.session_state["dp_insp_eps"] = 2.0
    at.run()
    _ok(at)
    assert ui_state.get("insp_release", session=at.session_state)["release"].epsilon == 2.0  # it released
    assert _count(at) == 1
    text = _sidebar_text(at)
    assert "(your upload): 1 release" in text and "The data chosen now is built-in" in text


def _declare_public_bounds(at) -> None:
    """The upload's schema with public bounds [0, 100] on every column, every decision confirmed (as the Data page's
    editor would leave it): the declared pipeline is private and differs from the bounds read off the data."""
    schemas = at.session_state[ui_state.slot_key("schemas")]
    for key, (schema, report) in list(schemas.items()):
        for column in schema.columns:
            schema = schema.replace_column(dataclasses.replace(column, lower=0.0, upper=100.0))
        schemas[key] = (schema.confirmed(), report)


@pytest.fixture
def explore_declared():
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    _use_upload(at)
    at.switch_page("pages/data.py").run()  # reads the file and drafts its schema
    _ok(at)
    _declare_public_bounds(at)
    for key, value in {"dp_k": 1, "dp_trials": 2, "dp_eps_range": (0.5, 1.0), "dp_delta": 1e-5}.items():
        at.session_state[key] = value
    _only(at, ["analyze_gauss"])
    at.switch_page("pages/explore.py").run()
    _ok(at)
    return at


def test_a_private_pipeline_counts_private_releases(explore_declared):
    odo = _odometer(explore_declared)
    spent = [e for e in odo.entries if e.epsilon > 0]
    assert len(spent) == 4 and all(e.private for e in spent)
    assert odo.totals().notes and "not all private" in _sidebar_text(explore_declared)  # the exact-PCA reference
    assert "Explore: Sweep (reference lines): Non-private PCA (NOT private)" in _sidebar_text(explore_declared)


def test_the_what_if_panel_counts_the_releases_it_computes(explore_declared):
    at = explore_declared
    before = _count(at)
    at.button(key="whatif_run").click().run()
    _ok(at)
    new = _odometer(at).entries[before:]
    assert new and all("what-if" in e.what for e in new)
    by_pipeline = {}
    for e in new:
        by_pipeline.setdefault(e.what, []).append((e.epsilon, e.delta))
    # the declared pipeline is Explore's data: its releases were computed (and counted) by Explore's sweep; the
    # data-derived pipeline's are new: analyze_gauss at ε = 0.5 and 1 × 2 trials, NOT private
    [(what, budgets)] = by_pipeline.items()
    assert what == "Explore: what-if, bounds read off the data (NOT private): analyze_gauss"
    assert sorted(budgets) == [(0.5, 1e-5)] * 2 + [(1.0, 1e-5)] * 2
    assert not any(e.private for e in new)
    counted = _count(at)
    at.run()  # the stored what-if is shown again: nothing new
    at.run()
    _ok(at)
    assert _count(at) == counted
    at.button(key="whatif_run").click().run()  # the same releases asked again: reused, not computed
    _ok(at)
    assert _count(at) == counted


def test_sample_size_on_an_upload_counts_each_release_once():
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    _use_upload(at)
    at.session_state["dp_ss_mechs"] = ["analyze_gauss"]
    at.session_state["dp_ss_sizes"] = 3  # 20, 40 and 80 rows
    at.session_state["dp_ss_trials"] = 2
    at.session_state["dp_ss_eps"] = 2.0
    at.session_state["dp_delta"] = 1e-6
    at.switch_page("pages/sample_size.py").run()
    _ok(at)
    odo = _odometer(at)
    assert odo is not None
    spent = [(e.epsilon, e.delta, e.what) for e in odo.entries if e.epsilon > 0]
    assert spent == [(2.0, 1e-6, "Sample size: Sample-size sweep: analyze_gauss")] * 6  # 3 sizes × 2 trials
    assert sum(e.epsilon == 0 and not e.private for e in odo.entries) == 6  # the exact-PCA reference, NOT private
    at.run()
    _ok(at)
    assert len(odo.entries) == 12
    assert "(your upload): 12 releases" in _sidebar_text(at)


def _inspect_upload():
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    _use_upload(at)
    at.session_state["dp_insp_mech"] = "analyze_gauss"
    at.session_state["dp_insp_eps"] = 0.5
    at.session_state["dp_delta"] = 1e-5
    at.session_state["dp_k"] = 2
    at.switch_page("pages/inspect.py").run()
    _ok(at)
    return at


def test_inspect_counts_a_release_when_it_is_computed_and_not_on_reruns():
    at = _inspect_upload()
    odo = _odometer(at)
    assert [(e.epsilon, e.delta) for e in odo.entries] == [(0.5, 1e-5)]
    assert odo.entries[0].what.startswith("Inspect a mechanism: analyze_gauss")
    assert odo.entries[0].rho == pytest.approx(gaussian_rho(0.5, 1e-5))
    at.run()
    at.run()
    _ok(at)
    assert len(odo.entries) == 1
    at.session_state["dp_insp_eps"] = 1.0  # another release
    at.run()
    _ok(at)
    assert [(e.epsilon, e.delta) for e in odo.entries] == [(0.5, 1e-5), (1.0, 1e-5)]
    at.session_state["dp_insp_eps"] = 0.5  # the first one again: the same seed and settings, the same release
    at.run()
    _ok(at)
    assert len(odo.entries) == 2
    assert "(your upload): 2 releases · Σε = 1.5, Σδ = 2e-05" in _sidebar_text(at)


def test_inspect_pictures_count_their_own_budget():
    at = _inspect_upload()
    odo = _odometer(at)
    assert len(odo.entries) == 1
    at.button(key="insp_pic_release").click().run()
    _ok(at)
    picture = odo.entries[1:]
    # a covariance mechanism's scree is free (post-processing); the score histogram spends its own ε (0.5 by default)
    assert [(e.epsilon, "private pictures" in e.what) for e in picture] == [(0.5, True)]
    at.button(key="insp_pic_release").click().run()  # the same pictures again (same settings and seed)
    _ok(at)
    assert len(odo.entries) == 2


def test_the_audit_page_never_releases_on_an_upload_and_says_so():
    at = _inspect_upload()
    at.switch_page("pages/audit.py").run()
    _ok(at)
    assert odo_ui.AUDIT_NOTE in _sidebar_text(at)
    assert _count(at) == 1


def test_the_epsilon_planner_on_an_upload_counts_its_simulated_releases_as_not_private(explore_upload):
    at = explore_upload
    before = _count(at)
    at.number_input(key="explore_plan_trials").set_value(20)
    at.button(key="explore_plan_run").click().run()
    _ok(at)
    plan = at.session_state[planner.RESULT_KEY][1]
    new = _odometer(at).entries[before:]
    expected = sorted((p.epsilon, 1e-5) for p in plan.probes for _ in range(p.trials))
    assert sorted((e.epsilon, e.delta) for e in new) == expected and len(new) == 20 * len(plan.probes)
    assert all(not e.private and e.what == "Explore: ε planner (NOT private what-if): analyze_gauss" for e in new)
    assert new[0].rho == pytest.approx(gaussian_rho(new[0].epsilon, 1e-5))
    counted = _count(at)
    at.run()  # the stored plan is shown again: nothing new
    at.button(key="explore_plan_run").click().run()  # the same plan again (same settings and seed): the same releases
    _ok(at)
    assert _count(at) == counted


def test_the_clipping_advisor_on_an_upload_counts_its_trials_as_not_private():
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    _use_upload(at)
    at.session_state["dp_delta"] = 1e-5
    at.switch_page("pages/data.py").run()
    _ok(at)
    at.session_state["dp_adv_trials"] = 2
    at.run()
    at.button(key="data_adv_run").click().run()
    _ok(at)
    curve = ui_state.stored("adv_result", at.session_state)
    odo = _odometer(at)
    assert len(odo.entries) == curve.attrs["runs"] == int(curve["n_ok"].sum()) > 0  # every release ran (none ⊥)
    assert {(e.epsilon, e.delta, e.private, e.what) for e in odo.entries} == {
        (float(at.session_state["dp_adv_eps"]), 1e-5, False, "Data: clipping advisor (NOT private): analyze_gauss")}
    at.run()
    _ok(at)
    assert len(odo.entries) == int(curve["n_ok"].sum())


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="the sleeping cell holds one worker; needs a second one")
def test_a_streamed_sweep_is_counted_as_its_releases_arrive_and_a_cancelled_cell_is_not(monkeypatch):
    monkeypatch.setitem(_REGISTRY, SleepyMechanism.id, SleepyMechanism)
    monkeypatch.setitem(_INSTANCES, SleepyMechanism.id, SleepyMechanism())
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    _use_upload(at)
    for key, value in {"dp_k": 1, "dp_trials": 1, "dp_eps_range": (0.5, 2.0), "dp_autorun": False}.items():
        at.session_state[key] = value
    _only(at, [])
    at.session_state[ui_state.mech_key("pure")] = ["laplace", SleepyMechanism.id]
    at.switch_page("pages/explore.py").run()
    at.button(key="explore_run").click().run()
    _ok(at)
    sweep = at.session_state[LIVE].sweep
    try:
        # ε ∈ {0.5, 1, 2}: the sleepy cell at ε = 2 never finishes; every other one does (and the exact-PCA line)
        end = time.monotonic() + 120
        while sweep.job.done + sweep.reused < sweep.total - 1:
            assert time.monotonic() < end, "the quick cells did not finish"
            time.sleep(0.05)
        at.run()  # what the page's poller does: a rerun collects the cells finished so far
        _ok(at)
        assert not sweep.finished
        spent = sorted((e.epsilon, e.what.rsplit(": ", 1)[-1]) for e in _odometer(at).entries if e.epsilon > 0)
        assert spent == [(0.5, "laplace"), (0.5, "test_sleepy"), (1.0, "laplace"), (1.0, "test_sleepy"),
                         (2.0, "laplace")]
        at.button(key="explore_run_cancel").click().run()
        _ok(at)
        at.run()
        assert sweep.cancelled and len([e for e in _odometer(at).entries if e.epsilon > 0]) == 5
    finally:
        sweep.cancel()


def test_each_uploaded_file_has_its_own_count_and_the_same_file_again_continues_it():
    at = _inspect_upload()
    assert "(your upload): 1 release" in _sidebar_text(at)
    _use_upload(at, _table(seed=2), "other.csv")  # another file: its own odometer (Inspect releases on it)
    at.run()
    _ok(at)
    book = at.session_state[BOOK]
    assert sorted(len(o.entries) for o in book.odometers.values()) == [1, 1]
    _use_upload(at, _table(), "people.csv")  # the first file again: the same release, nothing new
    at.run()
    _ok(at)
    assert sorted(len(o.entries) for o in book.odometers.values()) == [1, 1]
    at.session_state["dp_insp_eps"] = 2.0  # a new release on the first file: its count goes on
    at.run()
    _ok(at)
    assert sorted(len(o.entries) for o in book.odometers.values()) == [1, 2]
    assert "(your upload): 2 releases" in _sidebar_text(at)


def test_without_an_upload_the_sidebar_line_needs_no_heavy_import(monkeypatch):
    """The odometer is drawn before the page runs: without an upload it must not import dpcore (through
    pages.ui.odometer), or a cold server's first heading waits for numpy and plotly (issue 33 item 8)."""
    import sys

    from _session_stub import SessionStub

    from pages.ui import nav

    lines = []

    class Slot:
        def caption(self, text):
            lines.append(text)

    monkeypatch.setattr(nav.st, "session_state", SessionStub())
    monkeypatch.setattr(nav._run, "odometer", Slot(), raising=False)
    monkeypatch.setitem(sys.modules, "pages.ui.odometer", None)  # importing it now raises ImportError
    nav._odometer()
    assert lines == [nav.ODOMETER_NO_UPLOAD] and "Built-in datasets are public" in lines[0]
