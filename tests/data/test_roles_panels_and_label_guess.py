"""Identifier-like and time columns are drafted as such (issue 32, item 9), and the label guess prefers a label's
name, then a two-valued text column at the end, never a column that names, dates or describes records (item 5).
Each decision carries its reason; it is a draft the user confirms."""

from __future__ import annotations

import string

import numpy as np
import pandas as pd
import pytest

from dpcore.data import read_table
from dpcore.data.roles import guess_label, infer_roles, numeric_column
from dpcore.data.schema import SchemaError, draft_schema
from dpcore.vocabulary import ColumnRole

rng = np.random.default_rng(32)
STATES = [a + b for a in "AKMN" for b in string.ascii_uppercase][:48]  # 48 two-letter codes
REGIONS = [f"r{i % 9}" for i in range(48)]  # 9 regions of unequal size
YEARS = list(range(1970, 1987))  # 17 years


def _table(frame: pd.DataFrame):
    return read_table(frame.to_csv(index=False).encode(), name="t")


def _panel(by_year: bool = False) -> pd.DataFrame:
    """48 states × 17 years (the shape of a classic state-economy panel)."""
    pairs = [(s, r, y) for y in YEARS for s, r in zip(STATES, REGIONS)] if by_year else \
        [(s, r, y) for s, r in zip(STATES, REGIONS) for y in YEARS]
    n = len(pairs)
    return pd.DataFrame({"state": [p[0] for p in pairs], "year": [p[2] for p in pairs],
                         "region": [p[1] for p in pairs], "gsp": rng.lognormal(10, 1, n).round(0),
                         "unemp": rng.uniform(2, 15, n).round(1)})


@pytest.mark.parametrize("by_year", [False, True])
def test_a_panels_unit_code_and_year_are_drafted_as_identifier_and_time(by_year):
    report = infer_roles(_table(_panel(by_year)))
    state, year = report["state"], report["year"]
    assert state.role == ColumnRole.IDENTIFIER and "48 values, each in exactly 17 rows" in state.reason
    assert "panel" in state.reason and "categorical" in state.reason  # how to use it as a feature after all
    assert year.role == ColumnRole.DATE and "between 1000 and 2200" in year.reason and "years" in year.reason
    assert report["region"].role == ColumnRole.CATEGORICAL  # 9 regions of unequal size: categories
    assert [c.name for c in report.features] == ["region", "gsp", "unemp"]


def test_a_panels_numeric_unit_id_and_period_index():
    frame = pd.DataFrame({"country_id": np.tile(np.arange(101, 131), 5), "period": np.repeat(np.arange(1, 6), 30),
                          "x": rng.normal(size=150)})
    report = infer_roles(_table(frame))
    assert report["country_id"].role == ColumnRole.IDENTIFIER and "panel" in report["country_id"].reason
    assert report["period"].role == ColumnRole.DATE and "time index of a panel" in report["period"].reason


def test_many_names_in_few_rows_are_an_identifier():
    """A 32-level maker name in 93 rows (about 3 rows each) names cars' makers; a 6-level type is a category."""
    makers = [f"maker{i}" for i in range(32)]
    frame = pd.DataFrame({"Manufacturer": [makers[i % 32] for i in range(93)],
                          "Type": [["Small", "Midsize", "Compact", "Large", "Sporty", "Van"][i % 6] for i in range(93)],
                          "Price": rng.uniform(8, 60, 93).round(1)})
    report = infer_roles(_table(frame))
    assert report["Manufacturer"].role == ColumnRole.IDENTIFIER
    assert "32 distinct values, about 2.9 rows each" in report["Manufacturer"].reason
    assert report["Type"].role == ColumnRole.CATEGORICAL
    schema = draft_schema(_table(frame), report)
    assert "role" in schema["Manufacturer"].from_data  # a draft: the user confirms


@pytest.mark.parametrize(("name", "values", "role"), [
    ("years", lambda: rng.integers(0, 40, 100), ColumnRole.NUMERIC),        # years of experience: an amount
    ("year", lambda: rng.integers(0, 40, 100), ColumnRole.NUMERIC),         # not years by its values
    ("period", lambda: rng.integers(1, 6, 100), ColumnRole.NUMERIC),        # not balanced: no panel index
    ("country", lambda: rng.choice([f"c{i}" for i in range(25)], 400), ColumnRole.CATEGORICAL),  # 16 rows each
])
def test_measurements_and_categories_stay_features(name, values, role):
    frame = pd.DataFrame({name: values(), "x": rng.normal(size=len(values()))})
    assert infer_roles(_table(frame))[name].role == role


# ==================================================================================================
# the label guess
# ==================================================================================================

def _numbers(n: int, **cols) -> dict:
    return {name: rng.normal(size=n).round(3) for name in cols}


def test_a_two_valued_text_column_at_the_end_is_guessed_with_its_reason():
    frame = pd.DataFrame({**_numbers(60, a=1, b=1), "Direction": np.tile(["Up", "Down"], 30)})
    guess = guess_label(_table(frame))
    assert guess.column == "Direction" and "two values" in guess.reason


@pytest.mark.parametrize("last", ["sex", "region", "state", "Gender"])
def test_a_feature_named_column_at_the_end_is_not_guessed(last):
    frame = pd.DataFrame({**_numbers(60, a=1, b=1), last: np.tile(["p", "q"], 30)})
    assert guess_label(_table(frame)) is None  # on 563c1b2: "the last column is text with 2 distinct values"


def test_a_label_name_beats_the_last_column():
    frame = pd.DataFrame({"y": np.tile([0, 1], 30), **_numbers(60, a=1), "sex": np.tile(["f", "m"], 30)})
    guess = guess_label(_table(frame))
    assert guess.column == "y" and "name suggests a label" in guess.reason and "0/1" in guess.reason


def test_an_identifier_or_time_column_is_never_guessed():
    assert guess_label(_table(_panel())) is None  # the last column is numeric; the state code is an identifier
    frame = _panel()[["gsp", "unemp", "state"]]
    assert guess_label(_table(frame)) is None  # on 563c1b2 the 48-state code would be excluded but… never a label
    frame = pd.DataFrame({**_numbers(40, a=1), "class": [f"2020-01-{d:02d}" for d in range(1, 21)] * 2})
    assert guess_label(_table(frame)) is None  # dates named 'class'


def test_a_rule_label_is_offered_and_accepted_only_for_numbers():
    frame = pd.DataFrame({"income": rng.uniform(0, 9e4, 60).round(0), "kind": np.tile(["a", "b", "c"], 20),
                          **_numbers(60, a=1)})
    table = _table(frame)
    assert numeric_column(table, "income") and not numeric_column(table, "kind")
    schema = draft_schema(table, infer_roles(table))
    assert schema.with_label_rule("income", above=50_000, table=table).label_text == "income > 50000"
    with pytest.raises(SchemaError, match="holds text, not numbers"):
        schema.with_label_rule("kind", above=1, table=table)
