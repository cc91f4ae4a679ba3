"""dpcore.explain.statements: one δ statement per claimed-invalid mechanism, naming its ε (and confidence)
everywhere."""

from __future__ import annotations

import math

import numpy as np
import pytest

import dpcore
from dpcore.exceptions import InvalidParameterError
from dpcore.explain.statements import delta_statement, format_bound, mechanism_delta_statement

SN = "sn_imtiaz"


@pytest.mark.parametrize("value, text", [(1 - math.exp(-0.1), "0.0952"), (1 - math.exp(-1), "0.632"),
                                         (1e-10, "1e-10"), (1e-5, "1e-05"), (0.5, "0.5"), (0.0, "0")])
def test_format_delta_is_a_plain_number(value, text):
    assert format_bound(value) == text


@pytest.mark.parametrize("bad", [-1e-3, math.nan, math.inf])
def test_format_delta_rejects_non_numbers(bad):
    with pytest.raises(InvalidParameterError):
        format_bound(bad)


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 3.0])
def test_theory_statement_names_its_epsilon_and_the_closed_form_delta(epsilon):
    # SN's counterexample δ is 1 − e^{−ε} (spec §3.9): the statement carries that number at that ε
    text = mechanism_delta_statement(dpcore.get_mechanism(SN), epsilon)
    expected = format_bound(1 - math.exp(-epsilon))
    assert text.startswith(f"At ε = {epsilon:g} this mechanism is not (ε, δ)-DP for any δ < {expected}:")
    assert "one person's record" in text and "proven counterexample" in text
    assert text.count(expected) == 2  # the bound and what it means: the same number


def test_the_three_statements_of_the_issue_now_say_which_epsilon_and_confidence():
    sn = dpcore.get_mechanism(SN)
    explore = mechanism_delta_statement(sn, 0.1)
    learn = mechanism_delta_statement(sn, 1.0)
    audit = delta_statement(1.0, 0.599, confidence=0.95, every_epsilon=True)
    assert "At ε = 0.1" in explore and "δ < 0.0952" in explore
    assert "At ε = 1 " in learn and "δ < 0.632" in learn
    assert audit.startswith("Audit at ε = 1, 95 % confidence: δ ≥ 0.599.")
    assert "at every ε" in audit and "can never produce" in audit


def test_audit_statement_without_a_structural_witness_is_scoped_to_its_epsilon():
    text = delta_statement(2.0, 0.12, confidence=0.99)
    assert text.startswith("Audit at ε = 2, 99 % confidence: δ ≥ 0.12.")
    assert text.endswith("so at ε = 2 this mechanism needs δ ≥ 0.12.")
    assert "every ε" not in text


def test_subject_is_used():
    assert delta_statement(1.0, 0.5, subject="SN").startswith("At ε = 1 SN is not")


@pytest.mark.parametrize("kwargs", [
    {"epsilon": 0.0, "delta": 0.5}, {"epsilon": -1.0, "delta": 0.5}, {"epsilon": 1.0, "delta": 0.0},
    {"epsilon": 1.0, "delta": 1.5}, {"epsilon": 1.0, "delta": 0.5, "confidence": 1.0},
    {"epsilon": 1.0, "delta": 0.5, "confidence": 0.0}, {"epsilon": 1.0, "delta": 0.5, "every_epsilon": True},
])
def test_bad_inputs_give_clear_errors(kwargs):
    with pytest.raises(InvalidParameterError):
        delta_statement(**kwargs)


def test_valid_mechanisms_have_no_statement():
    for mech in dpcore.list_mechanisms():
        text = mechanism_delta_statement(mech, 1.0)
        assert (text is None) == (mech.counterexample_delta(1.0) is None)
        assert (text is not None) <= mech.invalid  # only claimed-invalid mechanisms declare a counterexample


def test_ledger_note_of_an_invalid_release_uses_the_same_statement():
    rows = np.eye(4)[[0, 1, 2, 3, 0]] * 0.5
    release = dpcore.get_mechanism(SN).release(rows, 1, 0.5, allow_invalid=True, random_state=0)
    note = release.ledger[0].note
    assert not release.ledger[0].private
    assert mechanism_delta_statement(dpcore.get_mechanism(SN), 0.5) in note


@pytest.mark.slow
def test_audit_summary_uses_the_same_statement():
    from dpcore.audit import run_audit

    result = run_audit(SN, 1.0, trials=1_000, seed=1)
    assert result.violated and result.structural
    expected = delta_statement(1.0, result.delta_lower_bound, confidence=result.confidence, every_epsilon=True)
    assert expected in result.summary()


# --- #19: what a non-private pipeline means, step by step and column by column -------------------------------------

def _ledger(**options):
    import warnings

    from dpcore.data import load_csv, preprocess

    r = np.random.default_rng(3)
    frame = __import__("pandas").DataFrame({"age": r.integers(18, 90, 50), "income": r.normal(3000, 500, 50),
                                            "colour": r.choice(["red", "blue"], 50), "label": np.tile([0, 1], 25)})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        data = preprocess(load_csv(frame.to_csv(index=False).encode(), label="label", **options.pop("load", {})),
                          **options)
    return data.ledger, data.feature_names


def test_each_non_private_step_is_named_with_its_columns():
    from dpcore.explain.statements import non_private_steps

    steps = non_private_steps(*_ledger(feature_scaling="minmax", norm_mode="max_norm"))
    assert "column 'colour': category lists read off the data" in steps
    assert "min–max scaling read off the data (the range of every feature: columns 'age', 'income', 'colour')" in steps
    assert "max-norm scaling read off the data (B = the largest row norm)" in steps
    assert any("inferred from the cells" in s for s in steps)
    assert not any("feature_scaling=" in s or "norm_mode" in s for s in steps)  # the user's words, not Python's


def test_a_draft_schema_names_the_columns_whose_values_were_read_off_the_data():
    from dataclasses import replace

    from dpcore.data import read_table
    from dpcore.data.roles import infer_roles
    from dpcore.data.schema import draft_schema
    from dpcore.explain.statements import non_private_steps

    table = read_table(b"age,income,label\n" + b"\n".join(f"{20 + i},{1000 + 7 * i},{i % 2}".encode()
                                                          for i in range(30)))
    draft = draft_schema(table, infer_roles(table, label="label"))
    confirmed = draft.confirmed()
    partly = replace(draft, columns=tuple(c if c.name != "age" else confirmed["age"] for c in draft.columns))
    ledger, names = _ledger(load={"schema": partly})[0], ()
    steps = non_private_steps(ledger, names)
    assert any("column 'income': roles, bounds or categories read off the data" in s for s in steps), steps
    assert not any("'age'" in s for s in steps)


def test_the_warning_and_the_guarantees_qualifier_only_for_a_non_private_pipeline():
    from dpcore.data import load_dataset, preprocess
    from dpcore.explain.statements import guarantees_qualifier, non_private_warning

    private = preprocess(load_dataset("wine"))
    assert non_private_warning(private.ledger, private.feature_names) is None
    assert guarantees_qualifier(private.ledger, private.feature_names) is None
    ledger, names = _ledger(feature_scaling="minmax")
    warning, qualifier = non_private_warning(ledger, names), guarantees_qualifier(ledger, names)
    assert "no release on this data is end-to-end private" in warning and "'colour'" in warning
    assert "non-private step" in warning  # the words other pages' tests look for
    assert "only given its inputs" in qualifier and "**NOT private** because of: " in qualifier
    assert "min–max scaling read off the data" in qualifier


@pytest.mark.slow
def test_explore_names_the_non_private_steps_and_qualifies_the_guarantees():
    from pathlib import Path

    from streamlit.testing.v1 import AppTest

    app = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "app.py"), default_timeout=120)
    app.run()
    app.session_state["dp_dataset"] = "wine"
    app.session_state["dp_scaling"] = "minmax"
    app.switch_page("pages/explore.py").run()
    assert not app.exception, [e.value for e in app.exception]
    warnings = " ".join(w.value for w in app.warning)
    assert "min–max scaling read off the data (the range of every feature: columns 'alcohol'" in warnings
    assert "only given its inputs" in warnings and "NOT private** because of" in warnings
    guarantees = " ".join(m.value for m in app.markdown if "neighbouring:" in m.value)
    assert guarantees and "given its inputs" in guarantees
