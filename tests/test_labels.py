"""Unit tests of the label-column guess for uploads, the one δ formatter, and the "PCA below random" note."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpcore.data import read_table
from dpcore.data.roles import guess_label
from dpcore.display import format_delta, format_deltas, held_out_note, pca_below_random_note


def _table(frame: pd.DataFrame):
    return read_table(frame.to_csv(index=False).encode(), name="t")


rng = np.random.default_rng(11)
N = 60


def _numbers(**cols) -> dict:
    return {name: rng.normal(size=N).round(3) for name in cols}


@pytest.mark.parametrize("name", ["label", "class", "target", "y", "species", "outcome", "Species"])
def test_a_label_name_with_few_classes_is_guessed(name):
    frame = pd.DataFrame({**_numbers(a=1, b=1), name: np.tile(["x", "y", "z"], N // 3), "c": rng.normal(size=N)})
    guess = guess_label(_table(frame))
    assert guess is not None and guess.column == name and "3 classes" in guess.reason


def test_a_numeric_label_named_target_is_guessed():
    frame = pd.DataFrame({**_numbers(a=1, b=1), "target": np.tile([0, 1], N // 2)})
    assert guess_label(_table(frame)).column == "target"


def test_a_strong_name_beats_is_prefix_and_the_last_one_wins_a_tie():
    frame = pd.DataFrame({"is_member": np.tile(["yes", "no"], N // 2), "species": np.tile(["a", "b", "c"], N // 3),
                          **_numbers(a=1)})
    assert guess_label(_table(frame)).column == "species"
    frame = pd.DataFrame({"label": np.tile(["a", "b"], N // 2), "class": np.tile(["u", "v"], N // 2),
                          **_numbers(a=1)})
    assert guess_label(_table(frame)).column == "class"


def test_low_cardinality_text_last_column_is_guessed_without_a_name():
    frame = pd.DataFrame({**_numbers(a=1, b=1), "kind": np.tile(["red", "green", "blue", "grey"], N // 4)})
    guess = guess_label(_table(frame))
    assert guess is not None and guess.column == "kind" and "last column" in guess.reason


@pytest.mark.parametrize("last", [
    lambda: rng.normal(size=N).round(3),                     # a number: a feature, not a class
    lambda: np.tile([0, 1], N // 2),                         # a numeric 0/1 column without a label name
    lambda: np.array([f"c{i % 30}" for i in range(N)]),     # 30 categories: more than 20 classes
    lambda: np.array(["same"] * N),                          # one value: no classes
])
def test_no_guess_for_features(last):
    frame = pd.DataFrame({**_numbers(a=1, b=1), "last": last()})
    assert guess_label(_table(frame)) is None


def test_a_label_named_column_with_too_many_values_is_not_guessed():
    frame = pd.DataFrame({"y": rng.normal(size=N).round(4), **_numbers(a=1)})
    assert guess_label(_table(frame)) is None


def test_the_classroom_example_guesses_passed():
    from pathlib import Path

    data = (Path(__file__).resolve().parents[1] / "sample_data" / "classroom_example.csv").read_bytes()
    assert guess_label(read_table(data)).column == "passed"


@pytest.mark.parametrize(("value", "text"), [(1e-10, "1e-10"), (1e-5, "1e-05"), (1e-3, "0.001"), (1e-6, "1e-06"),
                                             (0.0, "0"), (0.5, "0.5"), (None, "—"), (float("nan"), "—"),
                                             (np.float64(1e-8), "1e-08")])
def test_format_delta(value, text):
    assert format_delta(value) == text


def test_format_deltas_keeps_order():
    assert format_deltas(pd.Series([1e-10, 0.0, 1e-3])) == ["1e-10", "0", "0.001"]


def test_held_out_note():
    assert held_out_note(48_842, 42_842).startswith("48,842 rows in the data; 6,000 of them are held out")
    assert "42,842 rows reach the mechanisms" in held_out_note(48_842, 42_842)
    assert held_out_note(500, 500) == ""


def _sweep(pca: list[float], random: list[float], status: str = "ok") -> pd.DataFrame:
    rows = [{"mechanism": "pca", "status": status, "svm_accuracy": v} for v in pca]
    rows += [{"mechanism": "random", "status": "ok", "svm_accuracy": v} for v in random]
    return pd.DataFrame(rows)


def test_pca_below_random_note_reads_the_sweep_means():
    note = pca_below_random_note(_sweep([0.61, 0.63], [0.70, 0.74, 0.72]))
    assert note is not None and "0.620" in note and "0.720" in note and "need not be the directions" in note
    assert pca_below_random_note(_sweep([0.80], [0.70, 0.72])) is None  # PCA wins: nothing to explain
    assert pca_below_random_note(_sweep([0.718], [0.72])) is None  # within the margin
    assert pca_below_random_note(_sweep([0.5], [0.7], status="timeout")) is None  # no PCA result
    assert pca_below_random_note(pd.DataFrame({"mechanism": ["pca"], "status": ["ok"]})) is None  # no labels
    assert pca_below_random_note(None) is None


def test_identifiers_get_plain_labels():
    from dpcore.audit import FIELDS, NEIGHBOUR_CONSTRUCTIONS, STATISTICS
    from dpcore.display import diagnostic_label, identifier_label, option_label, plain_ledger, plain_words
    from dpcore.mechanisms import list_mechanisms
    from dpcore.privacy import LedgerEntry

    for name in [*NEIGHBOUR_CONSTRUCTIONS, *STATISTICS, *FIELDS]:
        assert "_" not in identifier_label(name), name
    for mech in list_mechanisms():
        for p in mech.params:
            label = option_label(p.name)
            assert label != p.name and label[0].isupper() and "_" not in label.replace("γ_pub", ""), (mech.id, p.name)
    assert diagnostic_label("nonprivate_top_score") == "top score (non-private)"
    text = "use feature_scaling='schema' with public ranges; or missing='zero' or 'drop'"
    assert plain_words(text) == ("use feature scaling “public schema ranges” with public ranges; or missing values "
                                 "“fill 0” or “drop rows”")
    entry = LedgerEntry("min–max", private=False, note="use feature_scaling='schema'")
    (plain,) = plain_ledger([entry])
    assert plain.note == "use feature scaling “public schema ranges”" and plain.private is False


def test_delta_vs_n_warning_fires_when_delta_is_not_far_below_one_over_n():
    from dpcore.display import delta_vs_n_warning

    assert delta_vs_n_warning(1e-5, 125) is None  # wine: δ·n ≈ 0.001
    assert delta_vs_n_warning(1e-5, 9_999) is None
    severe = delta_vs_n_warning(1e-3, 42_842)  # adult at the menu's largest δ: δ·n ≈ 43
    assert severe is not None and severe.severe and "43" in severe.text and "1/n" in severe.text
    assert delta_vs_n_warning(1e-4, 42_842).severe  # δ·n ≈ 4.3
    note = delta_vs_n_warning(1e-5, 42_842)  # adult at the default δ: δ·n ≈ 0.43 — a note, not an alarm
    assert note is not None and not note.severe and "0.43" in note.text
    assert delta_vs_n_warning(1e-5, 494_021).severe  # kddcup99 at the default δ: δ·n ≈ 4.9
