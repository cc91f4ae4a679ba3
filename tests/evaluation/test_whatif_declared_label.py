"""The what-if panel with a declared label (issue 32, item 3): a rule on a many-valued numeric column (``y > 5000``,
``y ≠ 0``) or declared classes is the label of both pipelines; the data-derived one differs only in its bounds."""

from __future__ import annotations

import numpy as np
import pytest

from dpcore.data import load_schema, read_table
from dpcore.evaluation.whatif import data_derived_schema, upload_pipelines

N = 300
_rng = np.random.default_rng(7)
_Y = _rng.integers(0, 20_000, N)  # ~300 distinct whole numbers: refused as a label *column*, fine under a rule
_Y[:40] = 0
CSV = ("a,b,kind,y\n" + "".join(f"{_rng.normal():.3f},{_rng.normal(5, 1):.3f},{'pqr'[i % 3]},{v}\n"
                                 for i, v in enumerate(_Y))).encode()
COLUMNS = [{"name": "a", "role": "numeric", "lower": -10, "upper": 10},
           {"name": "b", "role": "numeric", "lower": 0, "upper": 20},
           {"name": "kind", "role": "categorical", "categories": ["p", "q", "r", "s"]}]


def _schema(label):
    return load_schema({"dpcore_schema": 1, "format": {"kind": "csv"}, "label": label, "columns": COLUMNS})


@pytest.mark.parametrize(("label", "expected"), [
    ({"column": "y", "above": 5000}, (_Y > 5000).astype(int)),
    ({"column": "y", "nonzero": True}, (_Y != 0).astype(int)),
])
def test_a_declared_rule_label_runs_on_both_pipelines(label, expected):
    pipelines = upload_pipelines(read_table(CSV), _schema(label), preprocess_options={"random_state": 0})
    declared, derived = pipelines["declared"], pipelines["data_derived"]
    assert declared.is_private and not derived.is_private
    # the same records, the same labels: the rule in both (the old data-derived pipeline refused 'y' as a label)
    np.testing.assert_array_equal(declared.y.astype(int), expected)
    np.testing.assert_array_equal(derived.y.astype(int), expected)
    assert declared.d == 2 + 4 and derived.d == 2 + 3  # declared categories vs those in the data


def test_declared_classes_stay_declared_in_the_data_derived_pipeline():
    csv = CSV.replace(b",y\n", b",grade\n")
    label = {"column": "grade", "classes": [str(v) for v in sorted(set(_Y[:200]))]}
    schema = load_schema({"dpcore_schema": 1, "format": {"kind": "csv"}, "label": label, "columns": COLUMNS})
    pipelines = upload_pipelines(read_table(csv), schema)
    assert pipelines["declared"].n == pipelines["data_derived"].n == N


def test_the_data_derived_schema_keeps_roles_and_label_and_reads_values_off_the_data():
    table = read_table(CSV)
    schema = _schema({"column": "y", "above": 5000})
    derived = data_derived_schema(table, schema)
    assert derived.label_rule == schema.label_rule and derived.format == schema.format
    assert derived.roles == schema.roles
    assert derived["kind"].categories == ("p", "q", "r") and "categories" in derived["kind"].from_data
    assert derived["a"].lower == pytest.approx(float(np.min(read_table(CSV).numbers("a")[0])))
    assert not derived.is_public and schema.is_public
