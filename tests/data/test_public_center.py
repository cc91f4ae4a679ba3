"""The public centre (#19 "--center has no public option"): the middle of each column's public range, taken from
the schema alone — 0.5 per scaled numeric column, 1/m per indicator of an m-category one-hot column — free in the
ledger, the same for neighbouring files, the same in memory and streamed, and refused without a public schema."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from dpcore.cli import main
from dpcore.data import load_csv, load_schema, preprocess
from dpcore.data.datasets import schema_norm_bound
from dpcore.data.encode import center_of_groups, feature_groups, public_center
from dpcore.data.schema import SchemaError

SCHEMA = {
    "dpcore_schema": 1, "label": "outcome", "format": {"kind": "csv"},
    "columns": [
        {"name": "id", "role": "identifier"},
        {"name": "age", "role": "numeric", "lower": 0, "upper": 100},
        {"name": "income", "role": "numeric", "lower": 0, "upper": 10000},
        {"name": "colour", "role": "categorical", "categories": ["red", "green", "blue", "grey"]},
        {"name": "smoker", "role": "binary", "categories": ["no", "yes"]},
        {"name": "member", "role": "binary", "lower": 0, "upper": 1},
        {"name": "outcome", "role": "label"},
    ],
}
EXPECTED = [0.5, 0.5, 0.25, 0.25, 0.25, 0.25, 0.5, 0.5, 0.5]  # age, income, colour ×4, smoker ×2, member


def _frame(seed: int = 5, n: int = 40) -> pd.DataFrame:
    r = np.random.default_rng(seed)
    return pd.DataFrame({"id": np.arange(n), "age": r.integers(18, 90, n), "income": r.normal(4000, 900, n).round(2),
                         "colour": r.choice(["red", "green", "blue", "grey"], n), "smoker": r.choice(["no", "yes"], n),
                         "member": r.integers(0, 2, n), "outcome": np.tile(["a", "b"], n // 2)})


def _bytes(frame: pd.DataFrame) -> bytes:
    return frame.to_csv(index=False).encode()


def test_the_centre_is_the_middle_of_each_public_range():
    schema = load_schema(SCHEMA)
    assert feature_groups(schema) == (0, 1, 2, 2, 2, 2, 3, 3, 4)
    np.testing.assert_allclose(public_center(schema), EXPECTED)
    np.testing.assert_allclose(center_of_groups([7, 3, 3, 3]), [0.5, 1 / 3, 1 / 3, 1 / 3])


def test_preprocessing_uses_the_schema_centre_and_its_norm_bound_for_free():
    ds = load_csv(_bytes(_frame()), schema=SCHEMA)
    data = preprocess(ds, centering="public")
    np.testing.assert_allclose(data.info["center"], EXPECTED)
    entry = next(e for e in data.ledger if e.step == "public centring")
    assert entry.private and entry.epsilon == 0 and entry.delta == 0
    assert data.is_private
    # the bound the schema implies with this centre: 0.25 per numeric column, 1 − 1/m per one-hot group
    expected_b = math.sqrt(3 * 0.25 + (1 - 1 / 4) + (1 - 1 / 2))
    assert data.norm_bound == pytest.approx(expected_b) == schema_norm_bound(ds.feature_groups, EXPECTED)
    assert data.clip_fraction == 0.0  # the default bound is the largest norm the schema allows: nothing clipped


@pytest.mark.parametrize("column, value", [
    ("age", "1e308"), ("income", "-inf"), ("colour", "purple; DROP TABLE"), ("smoker", ""), ("member", "yes"),
    ("id", "x" * 5000), ("outcome", "\u202e"),
])
def test_neighbouring_files_give_the_identical_centre_and_bound(column, value):
    frame = _frame()
    other = frame.astype(object).copy()
    other.loc[7, column] = value  # one record replaced by anything a person or a broken export can write
    a = preprocess(load_csv(_bytes(frame), schema=SCHEMA), centering="public")
    b = preprocess(load_csv(_bytes(other), schema=SCHEMA), centering="public")
    assert np.array_equal(a.info["center"], b.info["center"])
    assert a.norm_bound == b.norm_bound
    assert [(e.step, e.note, e.private) for e in a.ledger] == [(e.step, e.note, e.private) for e in b.ledger]


def test_streamed_and_in_memory_runs_take_the_same_centre_and_bound(tmp_path):
    from dpcore import stats

    path = tmp_path / "t.csv"
    path.write_bytes(_bytes(_frame()))
    schema = load_schema(SCHEMA)
    memory = preprocess(load_csv(path.read_bytes(), schema=schema), centering="public")
    streamed = stats.from_csv(path, schema, centering="public", seed=1).to_prepared()
    np.testing.assert_allclose(streamed.info["center"], memory.info["center"])
    assert streamed.norm_bound == pytest.approx(memory.norm_bound)


def test_a_schema_with_values_read_off_the_data_is_refused():
    draft = dict(SCHEMA, columns=[dict(c, from_data=["lower", "upper"]) if c["name"] == "income" else c
                                  for c in SCHEMA["columns"]])
    with pytest.raises(SchemaError, match=r"'income'.*read off the data"):
        public_center(load_schema(draft))


# --- the CLI: --center public ----------------------------------------------------------------------------------

def _cli(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def _files(tmp_path, schema: dict = SCHEMA):
    csv, yaml = tmp_path / "t.csv", tmp_path / "s.yaml"
    csv.write_bytes(_bytes(_frame()))
    yaml.write_text(load_schema(schema).to_yaml())
    return str(csv), str(yaml)


_RELEASE = ["release", "--mechanism", "analyze_gauss", "--epsilon", "1", "--delta", "1e-5", "--seed", "2", "--quiet"]


def test_cli_center_public_is_free_in_the_ledger(capsys, tmp_path):
    csv, yaml = _files(tmp_path)
    code, out, err = _cli(capsys, *_RELEASE, "--csv", csv, "--schema", yaml, "--center", "public")
    assert code == 0, err
    result = json.loads(out)
    step = next(e for e in result["ledger"] if e["step"] == "public centring")
    assert step["private"] and step["epsilon"] == 0 and step["delta"] == 0
    assert result["end_to_end_private"] and result["epsilon"] == 1.0 and result["delta"] == 1e-5


@pytest.mark.parametrize("extra, needle", [
    ([], "--center public needs a public schema (--schema S)"),
    (["--schema", "{draft}"], "'income'"),
    (["--schema", "{public}", "--feature-scaling", "minmax"], "drop --feature-scaling minmax"),
])
def test_cli_center_public_without_a_public_schema_is_refused(capsys, tmp_path, extra, needle):
    csv, public = _files(tmp_path)
    draft = tmp_path / "draft.yaml"
    draft.write_text(load_schema(dict(SCHEMA, columns=[dict(c, from_data=["lower"]) if c["name"] == "income" else c
                                                       for c in SCHEMA["columns"]])).to_yaml())
    extra = [a.replace("{draft}", str(draft)).replace("{public}", public) for a in extra]
    code, out, err = _cli(capsys, *_RELEASE, "--csv", csv, "--center", "public", *extra)
    assert code == 2 and out == "" and needle in err, err
    assert "Traceback" not in err and "centering=" not in err


def test_cli_center_public_on_a_dataset_without_public_ranges_is_refused(capsys):
    code, _, err = _cli(capsys, *_RELEASE, "--dataset", "css_synthetic", "--center", "public")
    assert code == 2 and "--center public needs public ranges" in err and "center=<array" not in err


def test_the_what_if_pipelines_share_the_schemas_bound():
    """The schema's default B (one per numeric column and per one-hot group) is given to both what-if pipelines,
    so the comparison isolates the bounds (public vs read off the data), not B."""
    from dpcore.data import read_table
    from dpcore.evaluation.whatif import upload_pipelines

    both = upload_pipelines(read_table(_bytes(_frame())), load_schema(SCHEMA))
    assert both["declared"].norm_bound == both["data_derived"].norm_bound == pytest.approx(math.sqrt(5.0))
    assert both["data_derived"].clip_fraction == 0.0
