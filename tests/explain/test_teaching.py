"""dpcore.explain.teaching: the computations of the Privacy basics lesson (ε, δ and 1/n, neighbouring relations,
exhibits)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from dpcore.core.privacy import gaussian_sigma, l2_sensitivity_upper_triangle
from dpcore.data import load_dataset
from dpcore.exceptions import InvalidParameterError
from dpcore.explain import teaching
from dpcore.explain.statements import delta_statement

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def wine():
    return teaching.lesson_data()


# ---------------------------------------------------------------------------------------------- (a) ε
@pytest.mark.parametrize("epsilon", [0.1, 1.0, 5.0])
def test_epsilon_demo_ratio_never_exceeds_e_to_the_epsilon_and_reaches_it(epsilon, wine):
    demo = teaching.epsilon_demo(epsilon, random_state=0, dataset=wine[0])
    ratio = np.maximum(demo.density_with / demo.density_without, demo.density_without / demo.density_with)
    assert np.all(ratio <= math.exp(epsilon) * (1 + 1e-9))
    assert demo.largest_ratio == pytest.approx(math.exp(epsilon), rel=1e-9)  # attained away from the two centres
    step = demo.grid[1] - demo.grid[0]
    for density in (demo.density_with, demo.density_without):  # most of each density lies on the grid
        assert 0.99 < float(np.sum(density) * step) <= 1.0 + 1e-3


def test_epsilon_demo_counts_the_public_column_and_is_seeded(wine):
    dataset = wine[0]
    column = dataset.feature_names.index(teaching.COUNT_COLUMN)
    demo = teaching.epsilon_demo(1.0, random_state=5, dataset=dataset)
    assert demo.true_count == int(np.sum(dataset.X[:, column] > teaching.COUNT_THRESHOLD))
    assert demo.release == teaching.epsilon_demo(1.0, random_state=5, dataset=dataset).release
    assert demo.release != teaching.epsilon_demo(1.0, random_state=6, dataset=dataset).release
    assert demo.guarantee.startswith("1-DP")


def test_epsilon_demo_noise_has_scale_one_over_epsilon(wine):
    # Laplace(1/ε) noise: KS test of 400 seeded releases against the exact law (α = 1e-6)
    eps = 0.5
    draws = [teaching.epsilon_demo(eps, random_state=s, dataset=wine[0]) for s in range(400)]
    noise = np.array([d.release - d.true_count for d in draws])
    assert stats.kstest(noise, stats.laplace(scale=1 / eps).cdf).pvalue > 1e-6


# ---------------------------------------------------------------------------------------------- (b) δ and 1/n
def test_delta_choices_end_with_the_teaching_only_one_over_n():
    choices = teaching.delta_choices(178)
    assert [c.teaching_only for c in choices] == [False] * (len(choices) - 1) + [True]
    assert choices[-1].delta == pytest.approx(1 / 178)
    assert "TEACHING ONLY" in choices[-1].label and "NOT SAFE" in choices[-1].label
    assert all(c.delta < choices[-1].delta / 100 for c in choices[:-1])


def test_one_over_n_publishes_a_real_record_every_time(wine):
    dataset = wine[0]
    rows = {tuple(r) for r in dataset.X}
    for seed in range(20):
        release = teaching.record_release_demo(1 / dataset.n, random_state=seed, dataset=dataset)
        assert release.publish_probability == pytest.approx(1.0)
        assert release.record is not None
        assert tuple(release.record[name] for name in dataset.feature_names) in rows  # verbatim
        assert "(0, 0.00562)-DP" in release.guarantee


def test_publish_probability_is_delta_times_n(wine):
    dataset = wine[0]
    delta = 1 / (4 * dataset.n)
    published = sum(teaching.record_release_demo(delta, random_state=s, dataset=dataset).record is not None
                    for s in range(1000))
    assert stats.binomtest(published, 1000, 0.25).pvalue > 1e-6
    small = teaching.record_release_demo(1e-5, random_state=0, dataset=dataset)
    assert small.publish_probability == pytest.approx(1e-5 * dataset.n)
    assert small.per_person_probability == pytest.approx(1e-5)


def test_delta_above_one_over_n_is_refused(wine):
    with pytest.raises(InvalidParameterError, match="1/n"):
        teaching.record_release_demo(2 / wine[0].n, dataset=wine[0])


def test_one_over_n_is_offered_only_on_the_lesson_page():
    from pages.ui.state import DELTA_CHOICES

    for dataset_id in ("wine", "breast_cancer", "digits"):
        one_over_n = 1 / load_dataset(dataset_id).n
        assert not any(math.isclose(d, one_over_n) for d in DELTA_CHOICES)
    users = [p.relative_to(ROOT).as_posix() for p in sorted((ROOT / "pages").glob("*.py"))
             if "delta_choices(" in p.read_text() or "record_release_demo(" in p.read_text()]
    assert users == ["pages/basics.py"]


# ---------------------------------------------------------------------------------------------- (c) neighbours
def test_neighbouring_comparison_reads_sigma_and_sensitivity_from_the_mechanism(wine):
    comp = teaching.neighbouring_comparison(wine[1], epsilon=1.0, delta=1e-5, k=2, epsilons=(0.5, 2.0), trials=2)
    rel = comp.relations.set_index("relation")
    assert rel.loc["replace", "sensitivity"] == pytest.approx(math.sqrt(2))
    assert rel.loc["add_remove", "sensitivity"] == pytest.approx(1.0)
    for relation in ("replace", "add_remove"):
        assert rel.loc[relation, "sigma"] == pytest.approx(
            gaussian_sigma(1.0, 1e-5, l2_sensitivity_upper_triangle(relation)), rel=1e-9)
    # σ scales with Δ₂: replace-one needs √2 times the noise of add/remove at every ε
    curves = comp.curves.pivot(index="epsilon", columns="relation", values="sigma")
    assert list(curves.index) == [0.5, 1.0, 2.0]
    assert np.allclose(curves["replace"] / curves["add_remove"], math.sqrt(2), rtol=1e-6)
    utility = comp.curves["captured_variance_ratio"]
    assert utility.between(0, 1 + 1e-9).all()
    assert set(comp.relations["guarantee"]) == {"(1, 1e-05)-DP, replace-one (n public)",
                                                "(1, 1e-05)-DP, add/remove-one"}


# ---------------------------------------------------------------------------------------------- (d) exhibits
def test_invalid_exhibits_use_the_shared_statement():
    table = teaching.invalid_exhibits(0.1)
    assert set(table["id"]) >= {"sn_imtiaz", "wishart_jiang"}
    for _, row in table.iterrows():
        assert row["statement"] == delta_statement(0.1, row["counterexample_delta"],
                                                   subject=row["name"].split(" — ")[0])
        assert "NOT private" in row["guarantee"]


def test_glossary_covers_the_lesson_terms():
    terms = " ".join(term for term, _ in teaching.GLOSSARY)
    for word in ("ε", "δ", "add/remove", "Claimed-invalid"):
        assert word in terms


def test_the_two_demos_draw_from_independent_streams(wine):
    """Privacy review: with one draw number both demos read the same first uniform, so whether a record was
    published was a function of the noise on the count. Each demo now has its own child stream."""
    dataset = wine[0]
    delta = 1 / (2 * dataset.n)  # publishes with probability 1/2
    seeds = range(600)
    noise_positive = np.array([teaching.epsilon_demo(1.0, random_state=s, dataset=dataset).release
                               > teaching.epsilon_demo(1.0, random_state=None, dataset=dataset).true_count
                               for s in seeds])
    published = np.array([teaching.record_release_demo(delta, random_state=s, dataset=dataset).record is not None
                          for s in seeds])
    # old code: u > F(0) = 1/2 ⇔ noise > 0 and u < 1/2 ⇔ published, so the two were exact complements
    table = [[int(np.sum(noise_positive & published)), int(np.sum(noise_positive & ~published))],
             [int(np.sum(~noise_positive & published)), int(np.sum(~noise_positive & ~published))]]
    assert stats.fisher_exact(table).pvalue > 1e-6, table


# ------------------------------------------------------------------ issue 20: wording a sharp student cannot fault
def test_glossary_states_delta_as_additive_slack_not_a_failure_probability():
    delta = dict(teaching.GLOSSARY)["δ (delta)"]
    assert "additive slack" in delta and "+ δ" in delta
    assert "may fail" not in delta and "probability with which" not in delta
    neighbours = next(text for term, text in teaching.GLOSSARY if term.startswith("Replace-one"))
    assert "√2" in neighbours and "typically needs up to twice" not in neighbours


@pytest.mark.slow
def test_basics_section_3_cites_the_root_two_sensitivity_the_page_computes():
    """Privacy basics §3: AG's replace-one sensitivity is ‖xxᵀ − yyᵀ‖_F ≤ √2, the Δ₂ the page shows — not
    "two records' worth"; §2 states δ as the additive slack it is."""
    from pathlib import Path

    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "app.py"), default_timeout=120).run()
    at.switch_page("pages/basics.py").run()
    assert not at.exception, [e.value for e in at.exception]
    text = " ".join(m.value for m in at.markdown)
    assert "two records' worth" not in text and "fail with probability δ" not in text
    assert "sensitivity is **√2**" in text and "\\le 2$" in text
    assert "+ δ" in text and "weaker than" in text
    sensitivities = [m.value for m in at.metric if m.label == "Sensitivity Δ₂"]
    assert sensitivities[0] == f"{math.sqrt(2):.4g}" and sensitivities[1] == "1"  # replace-one, add/remove


def test_papers_table_2_verdict_says_the_ordering_agrees_and_the_gap_is_larger():
    from dpcore.evaluation import reproduce

    verdict = reproduce.verdicts()["chaudhuri_table2"][0].verdict
    assert verdict.startswith("ordering agrees, gap larger") and "agrees on kddcup99" not in verdict
    assert "95.5/94.6" in verdict and "98.18/98.23" in verdict  # the numbers behind "larger"
