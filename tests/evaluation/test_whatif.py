"""The upload what-if: declared public schema vs bounds read off the data, same sweep on both."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from dpcore.data import load_schema, read_table
from dpcore.evaluation.sweep import SweepConfig, run_sweep
from dpcore.evaluation.whatif import PIPELINES, compare_sweeps, fingerprint, upload_pipelines

ROWS = 400
_rng = np.random.default_rng(0)
_a = _rng.normal(50, 5, ROWS)  # the data occupy a narrow part of the public range [0, 200]
CSV = ("a,b,c,label\n" + "".join(
    f"{x:.3f},{0.8 * x + _rng.normal(0, 2):.3f},{_rng.normal(10, 3):.3f},{'yn'[i % 2]}\n"
    for i, x in enumerate(_a))).encode()
PUBLIC = {"dpcore_schema": 1, "label": "label", "format": {"kind": "csv"}, "columns": [
    {"name": "a", "role": "numeric", "lower": 0, "upper": 200},
    {"name": "b", "role": "numeric", "lower": 0, "upper": 200},
    {"name": "c", "role": "numeric", "lower": -50, "upper": 50},
]}


@pytest.fixture(scope="module")
def pipelines():
    return upload_pipelines(read_table(CSV), load_schema(PUBLIC), preprocess_options={"random_state": 0})


def test_declared_pipeline_is_private_and_the_data_derived_one_is_not(pipelines):
    assert set(pipelines) == set(PIPELINES)
    declared, derived = pipelines["declared"], pipelines["data_derived"]
    assert declared.is_private and not derived.is_private
    assert declared.n == derived.n == ROWS and declared.d == derived.d == 3
    # loose public bounds leave the rows in a small corner of the unit box; min–max fills it
    assert np.linalg.norm(declared.X, axis=1).mean() < np.linalg.norm(derived.X, axis=1).mean()


def test_compare_sweeps_shows_what_public_bounds_cost(pipelines):
    config = SweepConfig(mechanisms=["analyze_gauss", "pca"], epsilons=[0.5, 2.0], ks=[1], trials=4, seed=3)
    frames = {name: run_sweep(data, config) for name, data in pipelines.items()}
    table = compare_sweeps(frames)
    assert list(table.columns[:4]) == ["mechanism", "epsilon", "declared", "data_derived"]
    ag = table[table.mechanism == "analyze_gauss"].set_index("epsilon")
    # same noise budget, rows squeezed by loose public bounds: the declared pipeline keeps less variance
    assert (ag["cost"] > 0).all()
    pca = table[table.mechanism == "pca"]
    np.testing.assert_allclose(pca[["declared", "data_derived"]].to_numpy(), 1.0)
    assert (table["declared_ok_trials"] == 4).all()


def test_compare_sweeps_with_one_pipeline_missing():
    table = compare_sweeps({})
    assert table.empty and "cost" in table


def test_fingerprint_names_what_a_result_was_computed_on(pipelines):
    schema = load_schema(PUBLIC)
    config = SweepConfig(mechanisms=["analyze_gauss"], epsilons=[1.0], ks=[1], trials=2, seed=1)
    base = dict(categorical="onehot", missing="zero", preprocess_options={"norm_bound": None}, config=config)
    key = fingerprint("file-a", schema, **base)
    assert key == fingerprint("file-a", load_schema(PUBLIC), **base)  # the same inputs: the same key
    assert key != fingerprint("file-b", schema, **base)  # another file
    wider = schema.replace_column(dataclasses.replace(schema["a"], upper=300.0))
    assert key != fingerprint("file-a", wider, **base)  # another schema
    assert key != fingerprint("file-a", schema, **{**base, "missing": "drop"})  # another setting
    assert key != fingerprint("file-a", schema, **{**base, "preprocess_options": {"norm_bound": 2.0}})
    other = SweepConfig(mechanisms=["analyze_gauss"], epsilons=[1.0], ks=[1], trials=3, seed=1)
    assert key != fingerprint("file-a", schema, **{**base, "config": other})  # another sweep
    with pytest.raises(ValueError, match="dataset"):
        fingerprint("", schema, **base)
