"""Issue 20 items 3–4: defaults that follow our own advice.

* The default norm bound of a dataset with a public schema is the bound the schema implies (√ of one per scaled
  numeric column and one per one-hot group): Adult √14 ≈ 3.74, not √108 — the bound the Papers page uses.
* The default δ never triggers the app's own δ-vs-1/n note on any built-in dataset, and the defaults of Explore,
  Inspect and Sample size trigger none of the app's warnings.
"""

from __future__ import annotations

import itertools
import math
import warnings
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from dpcore.data import list_datasets, load_dataset, preprocess
from dpcore.data.datasets import schema_norm_bound
from dpcore.evaluation import reproduce
from dpcore.explain.display import default_delta, delta_vs_n_warning
from pages.ui.state import DEFAULTS, DELTA_CHOICES, dataset_default_delta

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")


def _prepared(dataset_id: str, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return preprocess(load_dataset(dataset_id), **options)


# ------------------------------------------------------------------ item 3: the schema's bound
@pytest.mark.slow
def test_adult_default_bound_is_the_bound_its_schema_implies():
    prepared = _prepared("adult")
    assert prepared.norm_bound == pytest.approx(math.sqrt(14.0))  # before: √108 ≈ 10.39
    assert prepared.clip_fraction == 0.0  # a bound, not a guess: no row is clipped
    clip = next(e for e in prepared.ledger if e.step.startswith("clip rows"))
    assert clip.private and "public schema" in clip.note and prepared.is_private


def test_a_schema_without_one_hot_groups_keeps_root_d():
    assert _prepared("wine").norm_bound == pytest.approx(math.sqrt(13.0))


def _brute_force_bound(groups: list[int], center: np.ndarray) -> float:
    """max ‖x − c‖ over the rows the encoding allows: each numeric at 0 or 1, each group all-zero or one-hot."""
    choices = []
    for g in dict.fromkeys(groups):
        idx = [j for j, h in enumerate(groups) if h == g]
        if len(idx) == 1:
            choices.append([{idx[0]: 0.0}, {idx[0]: 1.0}])
        else:
            choices.append([{j: 0.0 for j in idx}] + [{j: float(j == i) for j in idx} for i in idx])
    best = 0.0
    for combo in itertools.product(*choices):
        x = np.zeros(len(groups))
        for part in combo:
            for j, v in part.items():
                x[j] = v
        best = max(best, float(np.linalg.norm(x - center)))
    return best


@pytest.mark.parametrize("seed", range(6))
def test_schema_bound_is_the_largest_norm_the_encoding_allows(seed):
    rng = np.random.default_rng(seed)
    groups = [0, 1, 2, 2, 2, 3, 3, 4]
    center = rng.uniform(0, 1, size=len(groups)) if seed else np.zeros(len(groups))
    want = _brute_force_bound(groups, center)
    assert schema_norm_bound(groups, None if not seed else center) == pytest.approx(want, rel=1e-12)


def test_explore_and_papers_use_the_same_bound():
    """The Papers page's stored Amin et al. facts and the default preprocessing agree for each dataset that has a
    public schema (wine √13, adult √14)."""
    facts = {f["dataset"].split(" ")[0]: f for f in reproduce.load_facts("amin_fig1")}
    for dataset_id in ("wine", "adult"):
        assert facts[dataset_id]["preprocessing_private"]
        assert _prepared(dataset_id).norm_bound == pytest.approx(facts[dataset_id]["norm_bound"])


# ------------------------------------------------------------------ item 4: the default δ
def test_default_delta_is_the_largest_choice_far_below_one_over_n():
    assert default_delta(178, DELTA_CHOICES, 1e-6) == 1e-4
    assert default_delta(48_842, DELTA_CHOICES, 1e-6) == 1e-6
    assert default_delta(494_021, DELTA_CHOICES, 1e-6) == 1e-8
    assert default_delta(None, DELTA_CHOICES, 1e-6) == 1e-6  # an upload: its n is not public
    assert default_delta(10**12, DELTA_CHOICES, 1e-6) == min(DELTA_CHOICES)


@pytest.mark.parametrize("info", list(list_datasets()), ids=lambda i: i.id)
def test_defaults_trigger_no_warning_on_any_builtin_dataset(info):
    delta = dataset_default_delta(info.id)
    assert delta in DELTA_CHOICES
    # Explore counts the rows that reach the mechanisms, Inspect and Sample size at most n: n is the worst case
    assert delta_vs_n_warning(delta, info.n) is None, (info.id, delta, info.n)
    assert DEFAULTS["dp_k"] < info.d  # Explore warns when k reaches d


def _no_warnings(at: AppTest, page: str) -> None:
    assert not at.exception, [e.value for e in at.exception]
    shown = [w.value for w in at.warning] + [e.value for e in at.error]
    assert not shown, (page, shown)
    assert not any("δ =" in c.value and "1/n" in c.value for c in at.caption), page  # the quiet δ note


@pytest.mark.slow
@pytest.mark.parametrize("dataset_id", ["adult", "wine", "digits"])
def test_explore_inspect_and_sample_size_defaults_show_no_warning(dataset_id):
    at = AppTest.from_file(APP, default_timeout=120)
    if dataset_id != DEFAULTS["dp_dataset"]:
        at.query_params["data"] = dataset_id
    at.run()
    assert at.session_state["dp_dataset"] == dataset_id
    assert at.session_state["dp_delta"] == dataset_default_delta(dataset_id)
    _no_warnings(at, "explore")
    if dataset_id == "adult":
        assert any("norm bound B = 3.74" in m.value for m in at.markdown)
    for page in ("pages/inspect.py", "pages/sample_size.py"):
        at.switch_page(page).run()
        _no_warnings(at, page)


@pytest.mark.slow
def test_default_delta_follows_the_dataset_until_chosen():
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    assert at.session_state["dp_delta"] == 1e-6 and "delta" not in dict(at.query_params)
    at.selectbox(key="w_dp_dataset").set_value("wine").run()
    assert at.session_state["dp_delta"] == 1e-4
    assert not any("set on" in c.value and "δ" in c.value for c in at.caption)
    at.select_slider(key="dp_delta").set_value(1e-5).run()  # chosen: it stays, and a link carries it
    at.selectbox(key="w_dp_dataset").set_value("adult").run()
    assert at.session_state["dp_delta"] == 1e-5 and dict(at.query_params).get("delta") in ("1e-05", ["1e-05"])


def test_cli_sweep_applies_the_same_delta_rule(tmp_path, capsys):
    from dpcore.cli import main

    common = ["sweep", "--dataset", "wine", "--mechanisms", "analyze_gauss", "--epsilons", "1", "--trials", "1",
              "--k", "1", "--seed", "0", "--jobs", "1", "--quiet", "--out", str(tmp_path / "s.csv")]
    assert main([*common, "--delta", "1e-2"]) == 0  # δ·n ≈ 1.2 (125 rows reach the mechanism): warned even if quiet
    assert "at least 1/n" in capsys.readouterr().err
    assert main([*common, "--delta", "1e-5"]) == 0
    assert "1/n" not in capsys.readouterr().err


@pytest.mark.slow
def test_statistics_of_a_dataset_use_the_same_default_bound():
    from dpcore import stats

    adult = load_dataset("adult")
    s = stats.from_dataset(adult, reservoir_size=10, seed=0)
    assert s.norm_bound == pytest.approx(math.sqrt(14.0)) == _prepared("adult").norm_bound
