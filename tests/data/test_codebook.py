"""Codebook import (#19): parsing CSV/YAML codebooks, declaring their values public, and clear errors that name
the row and the fix. Also the declaration rule shared by the editor, bulk edits and codebooks."""

from __future__ import annotations

import numpy as np
import pytest

from dpcore.data import SchemaError, draft_schema, infer_roles, read_table
from dpcore.data.schema import apply_codebook, declare_values, read_codebook
from dpcore.vocabulary import ColumnRole


def _table():
    rng = np.random.default_rng(7)
    rows = ["person_id,age,income,region,score"]
    rows += [f"{1000 + i},{rng.integers(18, 90)},{rng.normal(5e4, 1e4):.0f},{'nesw'[i % 4]},{rng.uniform(0, 9):.2f}"
             for i in range(80)]
    return read_table("\n".join(rows).encode(), name="people")


def _draft():
    table = _table()
    return table, draft_schema(table, infer_roles(table))


def test_csv_codebook_declares_values_public():
    table, schema = _draft()
    assert schema["age"].from_data >= {"lower", "upper"} and schema["region"].role == ColumnRole.CATEGORICAL
    book = b"column,lower,upper,categories\nage,0,120,\nincome,0,1e6,\nregion,,,n|e|s|w\nscore,0,10,\n"
    new = apply_codebook(schema, read_codebook(book, "book.csv"), table)
    assert (new["age"].lower, new["age"].upper) == (0, 120) and new["region"].categories == ("n", "e", "s", "w")
    assert new.values_from_data == []  # every feature's values are declared
    assert new["age"].from_data == {"role"}  # the role keeps its own mark until confirmed (or given in the row)


def test_yaml_codebook_forms_and_a_role_column():
    table, schema = _draft()
    as_list = b"- {column: age, lower: 0, upper: 120}\n- {column: region, categories: [n, e, s, w]}\n"
    as_map = b"age: {lower: 0, upper: 120}\nregion: {categories: [n, e, s, w]}\n"
    for text, name in ((as_list, "b.yaml"), (as_map, "b.yml"), (b"columns:\n" + as_list.replace(b"- ", b"  - "),
                                                              "b.yaml")):
        new = apply_codebook(schema, read_codebook(text, name), table)
        assert new["age"].upper == 120 and new["region"].is_public is False  # role still inferred
        assert new["region"].values_public
    # a role given in the row is a declaration too; semicolons and decimal commas are read as such
    new = apply_codebook(schema, read_codebook(b"column;role;lower;upper\nperson_id;numeric;0;2000,5\n", "b.csv"),
                         table)
    assert new["person_id"].role == ColumnRole.NUMERIC and new["person_id"].upper == 2000.5
    assert new["person_id"].is_public


@pytest.mark.parametrize("text, name, message", [
    (b"column,lower,upper\nagee,0,120\n", "b.csv",
     "b.csv line 2: the table has no column 'agee' (did you mean 'age'?)"),
    (b"column,lowr\nage,0\n", "b.csv", "b.csv line 1: unknown header 'lowr'"),
    (b"lower,upper\n0,1\n", "b.csv", "needs a 'column' field"),
    (b"column,lower,upper\nage,zero,120\n", "b.csv", "line 2 (column 'age'): lower 'zero' is not a number"),
    (b"column,lower,upper\nage,120,0\n", "b.csv", "line 2: schema column 'age', field 'upper': upper (0) is below"),
    (b"column,lower,upper\nperson_id,0,1\n", "b.csv", "'person_id' is an identifier, not a feature"),
    (b"column,lower,upper\nregion,0,1\n", "b.csv", "takes categories, not bounds"),
    (b"column,categories\nage,a|b\n", "b.csv", "takes bounds, not categories"),
    (b"column,lower\nage,0\nage,1\n", "b.csv", "b.csv line 3: column 'age' is already given at b.csv line 2"),
    (b"column,lower,upper\nage\n", "b.csv", "nothing to set"),
    (b"- {column: age, uper: 3}\n", "b.yaml", "b.yaml entry 1: unknown field 'uper'"),
    (b"- {column: age, lower: [1}\n", "b.yaml", "not valid YAML"),
    (b"", "b.csv", "the codebook is empty"),
])
def test_errors_name_the_row_and_the_fix(text, name, message):
    table, schema = _draft()
    with pytest.raises(SchemaError) as err:
        apply_codebook(schema, read_codebook(text, name), table)
    assert message in str(err.value)
    assert ";" in str(err.value) or "." in str(err.value)  # a fix follows the problem


def test_a_refused_codebook_changes_nothing():
    table, schema = _draft()
    entries = read_codebook(b"column,lower,upper\nage,0,120\nperson_id,0,1\n", "b.csv")
    with pytest.raises(SchemaError):
        apply_codebook(schema, entries, table)
    assert schema["age"].from_data >= {"lower", "upper"}  # the schema object is unchanged (immutable)


def test_declare_values_refuses_non_feature_columns_and_marks_typed_fields_public():
    _, schema = _draft()
    age = schema["age"]
    same = declare_values(age, lower=age.lower, upper=age.upper)  # the data's own values, typed: a declaration
    assert same.values_public and (same.lower, same.upper) == (age.lower, age.upper)
    half = declare_values(age, lower=0.0)
    assert "upper" in half.from_data and "lower" not in half.from_data
    with pytest.raises(SchemaError, match="not a feature"):
        declare_values(schema["person_id"], lower=0.0)
    assert declare_values(schema["person_id"]) is schema["person_id"]  # nothing given: unchanged


def test_cli_schema_infer_takes_a_codebook(tmp_path, capsys):
    from dpcore.cli import main
    from dpcore.data import load_schema

    table = tmp_path / "people.csv"
    table.write_bytes(_table().source)
    book = tmp_path / "book.csv"
    book.write_text("column,lower,upper,categories\nage,0,120,\nregion,,,n|e|s|w\n", encoding="utf-8")
    out = tmp_path / "schema.yaml"
    assert main(["schema", "infer", "--csv", str(table), "--codebook", str(book), "--no-label", "--quiet",
                 "--out", str(out)]) == 0
    schema = load_schema(out)
    assert schema["age"].upper == 120 and schema["age"].values_public and schema["region"].values_public
    assert not schema["income"].values_public  # not in the codebook: still read off the data
    book.write_text("column,lower,upper\nagee,0,120\n", encoding="utf-8")
    assert main(["schema", "infer", "--csv", str(table), "--codebook", str(book), "--no-label", "--quiet"]) == 2
    assert "book.csv line 2: the table has no column 'agee'" in capsys.readouterr().err
