"""#19 "Labels": the schema declares a binary label derived from a column (``label: {column: income, above: 50000}``,
``{column: hours, nonzero: true}``) or the label's public classes (``{column: y, classes: [a, b]}``). Round trips,
the old plain label unchanged, the derived label equal to (x > t) on every record on every reading path, and the
privacy rules: the threshold is a declaration (never read off the data), and no single label cell makes a run fail
or is quoted."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpcore import stats
from dpcore.data import load_csv, read_table
from dpcore.data.encode import LabelEncoder
from dpcore.data.schema import (
    MISSING_LABEL,
    ColumnSchema,
    LabelRule,
    Schema,
    SchemaError,
    label_threshold_default,
    load_schema,
)
from dpcore.exceptions import InvalidParameterError
from dpcore.vocabulary import ColumnRole

N = 200


def _frame(seed: int = 3, n: int = N) -> pd.DataFrame:
    r = np.random.default_rng(seed)
    income = r.normal(50, 10, n).round(2)
    income[::7] = 50.0  # ties at the threshold: not above it
    hours = r.integers(0, 3, n).astype(float)
    return pd.DataFrame({"a": r.normal(size=n).round(3), "b": r.uniform(0, 5, n).round(3), "income": income,
                         "hours": hours, "grade": r.choice(["<=50K", ">50K"], n)})


def _csv(frame: pd.DataFrame) -> bytes:
    return frame.to_csv(index=False).encode()


def _public_schema(label: dict | str) -> Schema:
    """A public schema of :func:`_frame` (declared format, roles and bounds) with the given ``label:``."""
    return Schema.from_dict({
        "dpcore_schema": 1,
        "format": {"kind": "csv", "encoding": "utf-8", "delimiter": ",", "decimal": ".", "thousands": None,
                   "header": True, "missing": ["", "?", "n/a", "na", "nan", "null"]},
        "label": label,
        "columns": [{"name": "a", "role": "numeric", "lower": -4, "upper": 4},
                    {"name": "b", "role": "numeric", "lower": 0, "upper": 5},
                    {"name": "income", "role": "numeric", "lower": 0, "upper": 200},
                    {"name": "hours", "role": "numeric", "lower": 0, "upper": 24},
                    {"name": "grade", "role": "categorical", "categories": ["<=50K", ">50K"]}]})


# --------------------------------------------------------------------------------------------------------------
# the declaration: YAML round trips, the old plain label unchanged
# --------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("label", "text", "shown"), [
    ({"column": "income", "above": 50000}, "label: {column: income, above: 50000}", "income > 50000"),
    ({"column": "income", "above": 0.25}, "label: {column: income, above: 0.25}", "income > 0.25"),
    ({"column": "hours", "nonzero": True}, "label: {column: hours, nonzero: true}", "hours ≠ 0"),
    ({"column": "grade", "classes": ["<=50K", ">50K"]}, "label:\n  column: grade\n  classes: [<=50K, '>50K']",
     "grade"),
    ({"column": "hours", "classes": [0, 1, 2]}, "label:\n  column: hours\n  classes: [0, 1, 2]", "hours"),
])
def test_the_declaration_round_trips_through_yaml_and_json(label, text, shown):
    schema = _public_schema(label)
    yaml_text = schema.to_yaml()
    assert text in yaml_text, yaml_text
    again = Schema.from_text(yaml_text)
    assert again == schema and Schema.from_text(schema.to_json()) == schema
    assert again.label == label["column"] and again.label_text == shown
    assert again[label["column"]].role == ColumnRole.LABEL  # the source column is never a feature
    assert label["column"] not in [c.name for c in again.features]
    assert again.is_public and "label" not in again.from_data  # the declaration is the user's: public


def test_an_old_plain_label_is_unchanged():
    old = ("dpcore_schema: 1\nlabel: passed\ncolumns:\n- {name: hours_studied, role: numeric, lower: 0, upper: 40}\n"
           "- {name: passed, role: label}\n")
    schema = Schema.from_text(old)
    assert schema.label == "passed" and schema.label_rule is None and schema.label_classes is None
    assert schema.label_text == "passed" and not schema.label_declared
    assert schema.to_dict()["label"] == "passed"  # still written as a plain name
    assert "label: passed\n" in schema.to_yaml()
    assert Schema.from_text(schema.to_yaml()) == schema
    assert Schema.from_text("dpcore_schema: 1\nlabel: {column: passed}\ncolumns:\n- {name: x, role: numeric, "
                            "lower: 0, upper: 1}\n").to_dict()["label"] == "passed"  # a bare mapping is plain


@pytest.mark.parametrize(("label", "needle"), [
    ({"column": "income", "above": "fifty"}, "'above': the threshold must be a finite number"),
    ({"column": "income", "above": ".inf"}, "'above': the threshold must be a finite number"),
    ({"column": "income", "above": 5, "nonzero": True}, "exactly one rule"),
    ({"column": "income", "above": 5, "classes": [0, 1]}, "has the classes 0 and 1; remove 'classes'"),
    ({"column": "income", "below": 5}, "unknown field 'below'"),
    ({"above": 5}, "needs 'column'"),
    ({"column": "grade", "classes": ["a"]}, "at least two classes"),
    ({"column": "grade", "classes": ["a", "a"]}, "'a' is listed twice"),
    ({"column": "grade", "classes": "a, b"}, "expected a list"),
    ({"column": "hours", "nonzero": "maybe"}, "'nonzero': expected true or false"),
])
def test_a_bad_declaration_names_the_field_and_the_fix(label, needle):
    with pytest.raises(SchemaError, match="schema, field 'label'") as info:
        _public_schema(label)
    assert needle in str(info.value)


def test_with_label_rule_declares_and_another_label_drops_the_rule():
    table = read_table(_csv(_frame()))
    schema = _public_schema("grade").with_label_rule("income", above=50, table=table)
    assert schema.label_text == "income > 50" and schema["income"].role == ColumnRole.LABEL
    assert schema["grade"].is_feature  # the old label gets its drafted role back
    assert schema.with_label("hours", table).label_rule is None  # a rule belongs to its column
    nonzero = schema.with_label_rule("hours", nonzero=True)
    assert nonzero.label_text == "hours ≠ 0" and nonzero.label_classes is None
    classes = _public_schema("grade").with_label_classes(["<=50K", ">50K"])
    assert classes.label_classes == ("<=50K", ">50K") and classes.label_declared


# --------------------------------------------------------------------------------------------------------------
# the derived label on every reading path: exactly (x > t), missing cells as the plain label path treats them
# --------------------------------------------------------------------------------------------------------------

def _with_gaps(frame: pd.DataFrame) -> pd.DataFrame:
    frame = frame.copy()
    frame["income"] = frame["income"].astype(object)
    frame.loc[5, "income"] = None        # missing
    frame.loc[9, "income"] = "n/a"       # a missing token
    frame.loc[11, "income"] = "abc"      # not a number
    return frame


def _expected(frame: pd.DataFrame, threshold: float) -> np.ndarray:
    values = pd.to_numeric(frame["income"], errors="coerce").to_numpy(dtype=float)
    return np.array([MISSING_LABEL if np.isnan(v) else str(int(v > threshold)) for v in values])


@pytest.mark.parametrize(("threshold", "shown"), [(50.0, "50"), (42.5, "42.5"), (1e9, "1000000000")])
def test_under_a_schema_the_derived_label_is_x_above_t_for_every_record(threshold, shown):
    frame = _with_gaps(_frame())
    ds = load_csv(_csv(frame), schema=_public_schema({"column": "income", "above": threshold}))
    assert ds.y.astype(str).tolist() == _expected(frame, threshold).tolist()
    assert ds.feature_names == ("a", "b", "hours", "grade=<=50K", "grade=>50K")  # income is not a feature
    assert ds.options["label_text"] == f"income > {shown}" and f"label income > {shown}" in ds.description
    assert ds.diagnostics["labels_missing"] == {"income": 3}  # an exact count: a non-private diagnostic


def test_missing_labels_are_treated_as_the_plain_label_path_treats_them():
    """Under a schema, a missing label cell is the class "(missing)" both for a plain label and a derived one;
    without a schema, rows without a label are dropped (recorded as NOT private) for both."""
    frame = _frame()
    frame["income"] = frame["income"].astype(object)
    frame.loc[[4, 8], "income"] = None
    raw = _csv(frame)
    plain = load_csv(raw, schema=_public_schema("income").structure_confirmed())
    derived = load_csv(raw, schema=_public_schema({"column": "income", "above": 50}))
    assert (plain.y.astype(str) == MISSING_LABEL).tolist() == (derived.y.astype(str) == MISSING_LABEL).tolist()
    derived_inferred = load_csv(raw, label="income", label_rule=LabelRule(above=50))
    kept = frame.drop(index=[4, 8])
    assert derived_inferred.y.tolist() == (kept["income"].astype(float) > 50).astype(int).tolist()
    assert derived_inferred.diagnostics["rows_without_label"] == 2
    assert any(e.step == "drop rows without a label" and not e.private for e in derived_inferred.load_ledger)


def test_without_missing_labels_the_labels_are_integers_and_nonzero_works():
    frame = _frame()
    ds = load_csv(_csv(frame), schema=_public_schema({"column": "hours", "nonzero": True}))
    assert ds.y.dtype.kind == "i" and ds.y.tolist() == (frame["hours"] != 0).astype(int).tolist()
    assert ds.options["label_text"] == "hours ≠ 0"


def test_a_continuous_column_refused_as_a_label_is_accepted_with_a_rule():
    raw = _csv(_frame())
    from dpcore.exceptions import DataError

    with pytest.raises(DataError, match="label needs classes"):
        load_csv(raw, label="income")
    ds = load_csv(raw, label="income", label_rule=LabelRule(above=50))
    assert "income" not in ds.feature_names and set(np.unique(ds.y)) == {0, 1}
    with pytest.raises(InvalidParameterError, match="label_rule needs the label column"):
        load_csv(raw, label_rule=LabelRule(above=50))
    with pytest.raises(SchemaError, match="the schema declares income > 50 but the rule income > 60"):
        load_csv(raw, schema=_public_schema({"column": "income", "above": 50}), label="income",
                 label_rule=LabelRule(above=60))


def test_the_streamed_path_gives_the_same_labels(tmp_path):
    frame = _with_gaps(_frame())
    path = tmp_path / "t.csv"
    path.write_bytes(_csv(frame))
    schema = _public_schema({"column": "income", "above": 50})
    memory = load_csv(path.read_bytes(), schema=schema)
    streamed = stats.from_csv(path, schema, norm_bound=3.0, reservoir_size=N, seed=1, block_size=1024)
    assert streamed.sample_is_complete
    order = np.argsort(streamed.sample_positions)
    assert streamed.sample_labels[order].astype(str).tolist() == memory.y.astype(str).tolist()
    assert streamed.diagnostics["labels_missing"] == {"income": 3}


# --------------------------------------------------------------------------------------------------------------
# declared classes: a value outside them is a missing label, counted — never a refusal, never quoted
# --------------------------------------------------------------------------------------------------------------

def test_declared_classes_match_text_and_numbers():
    enc = LabelEncoder(None, ("0", "1"))
    labels, counts = enc.encode(pd.Series(["1", "1.0", "0", " 0", None, "2", "yes"], dtype=object))
    assert labels.tolist() == ["1", "1", "0", "0", MISSING_LABEL, MISSING_LABEL, MISSING_LABEL]
    assert counts == {"labels_missing": 1, "labels_outside_classes": 2}


def test_a_label_outside_the_declared_classes_never_fails_the_run_nor_is_quoted():
    """Privacy review item 13 on neighbouring files: one record's label (anything at all) changes that record's label
    only — the run goes through, the features are the same, and no message quotes the value or its position."""
    schema = _public_schema({"column": "grade", "classes": ["<=50K", ">50K"]})
    frame = _frame()
    base = load_csv(_csv(frame), schema=schema)
    secret = "Jane Doe, 1961-03-02, >50K."
    neighbour = frame.copy()
    neighbour.loc[17, "grade"] = secret
    other = load_csv(_csv(neighbour), schema=schema)
    np.testing.assert_array_equal(base.X[:, :4], other.X[:, :4])
    assert other.y[17] == MISSING_LABEL and list(other.y[:17]) == list(base.y[:17])
    assert other.diagnostics["labels_outside_classes"] == {"grade": 1}
    words = " ".join(other.diagnostics.get("notes", [])) + " ".join(e.note for e in other.load_ledger)
    assert "1 label value(s) of 'grade' are not among the declared classes" in words
    assert "Jane" not in words and ">50K." not in words and "17" not in words and "18" not in words
    assert [e.step for e in other.load_ledger] == [e.step for e in base.load_ledger]  # the ledger: schema only


def test_a_declared_label_is_not_read_to_decide_its_kind(monkeypatch):
    """With a rule or declared classes the label's kind is declared: the continuous-label check never runs."""
    from dpcore.data import csv as csv_module

    calls = []
    monkeypatch.setattr(csv_module, "check_label_kind", lambda *a, **k: calls.append(a))
    raw = _csv(_frame())
    load_csv(raw, schema=_public_schema({"column": "income", "above": 50}))
    load_csv(raw, schema=_public_schema({"column": "grade", "classes": ["<=50K", ">50K"]}))
    assert calls == []
    load_csv(raw, schema=_public_schema("grade"))
    assert len(calls) == 1  # the plain label keeps the check (which reads nothing under a public schema)


# --------------------------------------------------------------------------------------------------------------
# the threshold is a declaration: offered from declared public bounds, or not at all
# --------------------------------------------------------------------------------------------------------------

def test_the_offered_threshold_comes_from_declared_public_bounds_or_is_empty():
    assert label_threshold_default(ColumnSchema("income", ColumnRole.NUMERIC, lower=0, upper=200)) == 100
    assert label_threshold_default(ColumnSchema("x", ColumnRole.NUMERIC, lower=0.5, upper=1)) == 0.75
    read_off = ColumnSchema("income", ColumnRole.NUMERIC, lower=11.2, upper=98.7, from_data={"lower", "upper"})
    assert label_threshold_default(read_off) is None  # bounds read off the data: nothing offered
    half = ColumnSchema("income", ColumnRole.NUMERIC, lower=0, upper=98.7, from_data={"upper"})
    assert label_threshold_default(half) is None
    assert label_threshold_default(ColumnSchema("g", ColumnRole.CATEGORICAL, categories=("a", "b"))) is None
    assert label_threshold_default(None) is None


def test_the_editor_offers_the_rule_in_effect_or_the_declared_middle_never_the_data():
    from pages.ui.schema_editor import apply_label_rule, label_rule_default

    frame = _frame()
    table = read_table(_csv(frame))
    from dpcore.data import draft_schema, infer_roles

    draft = draft_schema(table, infer_roles(table, label="income"))
    assert label_rule_default("income", draft) == ""  # a draft's bounds are read off the data
    declared = load_schema(_public_schema("grade").to_dict())
    assert label_rule_default("income", draft, declared) == "100"  # the middle of the declared [0, 200]
    ruled = apply_label_rule(draft, table, "income", "above", "42,5")
    assert ruled.label_text == "income > 42.5" and label_rule_default("income", ruled) == "42.5"
    assert apply_label_rule(draft, table, "income", "nonzero", "").label_text == "income ≠ 0"
    with pytest.raises(SchemaError, match="type the public threshold"):
        apply_label_rule(draft, table, "income", "above", "")
    with pytest.raises(SchemaError, match="'x' is not a number"):
        apply_label_rule(draft, table, "income", "above", "x")
    median = float(np.median(frame["income"]))
    for offered in (label_rule_default("income", draft), label_rule_default("income", draft, declared)):
        assert offered in ("", "100") and offered != f"{median:g}"
