"""Unit tests of the label-column guess for uploads, the one δ formatter, and the "PCA below random" note."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpcore.data import read_table
from dpcore.data.roles import guess_label
from dpcore.explain.display import format_delta, format_deltas, held_out_note, pca_below_random_note


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

    data = (Path(__file__).resolve().parents[2] / "sample_data" / "classroom_example.csv").read_bytes()
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
    from dpcore.core.privacy import LedgerEntry
    from dpcore.explain.display import diagnostic_label, identifier_label, option_label, plain_ledger, plain_words
    from dpcore.mechanisms import list_mechanisms

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
    from dpcore.explain.display import delta_vs_n_warning

    assert delta_vs_n_warning(1e-5, 125) is None  # wine: δ·n ≈ 0.001
    assert delta_vs_n_warning(1e-5, 9_999) is None
    severe = delta_vs_n_warning(1e-3, 42_842)  # adult at the menu's largest δ: δ·n ≈ 43
    assert severe is not None and severe.severe and "43" in severe.text and "1/n" in severe.text
    assert delta_vs_n_warning(1e-4, 42_842).severe  # δ·n ≈ 4.3
    note = delta_vs_n_warning(1e-5, 42_842)  # adult at the default δ: δ·n ≈ 0.43 — a note, not an alarm
    assert note is not None and not note.severe and "0.43" in note.text
    assert delta_vs_n_warning(1e-5, 494_021).severe  # kddcup99 at the default δ: δ·n ≈ 4.9


# ---------------------------------------------------------------------------------------------------------------
# #19 "Labels": binary / small-integer labels guessed, continuous labels refused up front
# ---------------------------------------------------------------------------------------------------------------

def _passed_frame(n: int = 60) -> pd.DataFrame:
    r = np.random.default_rng(5)
    return pd.DataFrame({"hours": r.normal(10, 2, n).round(2), "score": r.normal(60, 9, n).round(1),
                         "passed": np.tile([0, 1], n // 2)})


@pytest.mark.parametrize("name", ["passed", "label", "target", "class", "y"])
def test_a_numeric_0_1_label_is_guessed_with_its_codes(name):
    frame = _passed_frame().rename(columns={"passed": name})
    guess = guess_label(_table(frame))
    assert guess is not None and guess.column == name
    assert "2 classes, coded 0/1" in guess.reason


def test_a_small_integer_label_is_guessed_but_not_a_fractional_one():
    r = np.random.default_rng(6)
    grades = pd.DataFrame({"a": r.normal(size=N), "grade": r.integers(1, 6, N)})
    assert guess_label(_table(grades)).column == "grade"
    fractional = pd.DataFrame({"a": r.normal(size=N), "y": r.choice([0.5, 1.5, 2.25], N)})
    assert guess_label(_table(fractional)) is None


def _continuous_csv(n: int = 120) -> bytes:
    r = np.random.default_rng(7)
    frame = pd.DataFrame({"a": r.normal(size=n).round(3), "b": r.normal(size=n).round(3),
                          "income": r.normal(50, 10, n).round(2)})
    return frame.to_csv(index=False).encode()


def test_a_continuous_label_is_refused_naming_the_column_and_the_fix():
    from dpcore.data import load_csv
    from dpcore.exceptions import DataError

    with pytest.raises(DataError) as info:
        load_csv(_continuous_csv(), label="income")
    msg = str(info.value)
    assert "'income'" in msg and "distinct numeric values" in msg and "label needs classes" in msg
    assert "income > threshold" in msg


def test_a_draft_schema_reads_the_label_but_a_public_schema_never_does(monkeypatch):
    """Privacy review items 10/13: under a confirmed public schema the check uses the schema, not the records."""
    from dpcore.data import draft_schema, infer_roles, load_csv, read_table
    from dpcore.data import roles as roles_module
    from dpcore.exceptions import DataError

    raw = _continuous_csv()
    table = read_table(raw)
    draft = draft_schema(table, infer_roles(table, label="income"))
    with pytest.raises(DataError, match="label needs classes"):
        load_csv(raw, schema=draft)  # a draft (roles read off the data): the run is not private, the data is read
    public = draft.structure_confirmed()
    assert public.structure_public
    reads = []
    original = roles_module.RawTable.numbers

    def spy(self, name):
        if name == "income":
            reads.append(name)
        return original(self, name)

    monkeypatch.setattr(roles_module.RawTable, "numbers", spy)
    roles_module.check_label_kind(read_table(raw), "income", schema_public=public.structure_public)
    assert reads == []  # the check itself never looked at the label's values
    monkeypatch.undo()
    ds = load_csv(raw, schema=public)  # not refused: one record must not make a private run fail
    assert ds.y is not None


def test_an_svm_failure_keeps_the_other_metrics():
    """A continuous label under a public schema: the SVM column is NaN with a message, captured variance stays."""
    from dpcore.data import Dataset, preprocess
    from dpcore.evaluation.sweep import SweepConfig, run_sweep

    r = np.random.default_rng(8)
    X = r.normal(size=(300, 4))
    y = r.normal(size=300)  # continuous: LinearSVC refuses it
    ds = Dataset(id="t", name="t", X=X, y=y, feature_names=tuple("abcd"), source="test", description="test")
    data = preprocess(ds, norm_bound=3.0, feature_scaling="none", centering="none")
    frame = run_sweep(data, SweepConfig(mechanisms=["analyze_gauss"], epsilons=[1.0], deltas=[1e-5], ks=[2],
                                        trials=1, seed=3))
    row = frame.iloc[0]
    assert row.status == "ok"
    assert np.isfinite(row.captured_variance_ratio) and np.isfinite(row.frobenius_error)
    assert np.isnan(row.svm_accuracy)
    assert "SVM accuracy not available" in row.message and "continuous" in row.message


@pytest.mark.slow
def test_the_data_page_shows_a_continuous_label_as_an_error_not_a_traceback():
    from pathlib import Path

    from streamlit.testing.v1 import AppTest

    app = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "app.py"), default_timeout=60)
    app.run()
    app.session_state["dp_upload"] = _continuous_csv()
    app.session_state["dp_upload_name"] = "income.csv"
    app.session_state["dp_dataset"] = "__upload__"
    app.session_state["dp_scaling"] = "schema"
    app.session_state["dp_missing"] = "zero"
    app.switch_page("pages/data.py").run()
    assert not app.exception, [e.value for e in app.exception]
    app.selectbox(key="dp_label").set_value("income").run()
    assert not app.exception, [e.value for e in app.exception]
    errors = " ".join(e.value for e in app.error)
    assert "'income'" in errors and "label needs classes" in errors


# #19 "The CLI matches the dashboard": the same label inference with the same reason, on generated tables
_LABELISH = ("label", "class", "target", "y", "outcome", "passed", "grade", "kind", "status", "group")


def _generated_table(seed: int) -> pd.DataFrame:
    """A random table: 3–6 columns of random kinds (continuous, 0/1, small codes, text classes, fractional), some
    with label-like names, in a random order."""
    r = np.random.default_rng(seed)
    n = 60
    kinds = {
        "continuous": lambda: r.normal(50, 10, n).round(2),
        "binary01": lambda: r.integers(0, 2, n),
        "codes": lambda: r.integers(1, int(r.integers(3, 6)), n),
        "text": lambda: r.choice(["red", "green", "blue"][: int(r.integers(2, 4))], n),
        "fractional": lambda: r.choice([0.5, 1.5, 2.25], n),
    }
    names = [f"x{i}" for i in range(6)] + list(_LABELISH)
    chosen = r.choice(names, size=int(r.integers(3, 7)), replace=False)
    return pd.DataFrame({str(name): kinds[str(r.choice(list(kinds)))]() for name in chosen})


def _dashboard_guess(raw: bytes, monkeypatch) -> tuple[str, str | None]:
    """What the Data page picks for a new upload (pages.ui.datasets.apply_label_guess on the table it reads)."""
    import streamlit as st

    class Session(dict):
        def __getattr__(self, key):
            try:
                return self[key]
            except KeyError as exc:
                raise AttributeError(key) from exc

        def __setattr__(self, key, value):
            self[key] = value

    monkeypatch.setattr(st, "session_state", Session(_dp_label_guess=None))
    from pages.ui import datasets as ui_datasets

    ui_datasets.apply_label_guess(read_table(raw, name="upload"))
    guess = ui_datasets.label_guess()
    return st.session_state.dp_label, None if guess is None else guess.reason


def _cli_guess(path, capsys) -> tuple[str, str | None]:
    """The label the CLI takes for ``--csv path`` without --label/--schema, and the reason it prints."""
    import re

    from dpcore.cli import main

    code = main(["sweep", "--csv", str(path), "--norm-bound", "1000", "--feature-scaling", "none", "--mechanisms",
                 "pca", "--epsilons", "1", "--k", "1", "--trials", "1", "--jobs", "1", "--out",
                 str(path.with_suffix(".out.csv"))])
    err = capsys.readouterr().err
    found = re.search(r"label guessed: '(.+?)' — (.+?) \(read off the data, not private\)", err)
    assert code == 0 or found is None, err  # a run only fails here for a reason other than the label guess
    return ("(none)", None) if found is None else (found.group(1), found.group(2))


@pytest.mark.parametrize("seed", range(12))
def test_the_cli_and_the_dashboard_guess_the_same_label_for_the_same_reason(seed, tmp_path, capsys, monkeypatch):
    frame = _generated_table(seed)
    path = tmp_path / "table.csv"
    frame.to_csv(path, index=False)
    assert _cli_guess(path, capsys) == _dashboard_guess(path.read_bytes(), monkeypatch)


def test_the_generated_tables_cover_a_guess_and_no_guess():
    """The comparison above is not vacuous: some generated tables get a guessed label, some none."""
    guesses = [guess_label(_table(_generated_table(seed))) for seed in range(12)]
    assert any(g is None for g in guesses) and any(g is not None for g in guesses)
