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
