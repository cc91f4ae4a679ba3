"""The Dask backend on a distributed.LocalCluster with 2 workers: the statistics equal the in-memory ones up to float
rounding, the reservoir is the same, and `dpcore sweep --dask ADDRESS` gives the in-memory sweep's numbers."""

from __future__ import annotations

import sys
import types

import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest
from distributed import Client, LocalCluster

from dpcore import stats
from dpcore.cli import main
from dpcore.data import load_csv, load_schema, preprocess

D = 4
SCHEMA = {"dpcore_schema": 1, "label": "lab",
          "columns": [{"name": f"x{i}", "role": "numeric", "lower": -2, "upper": 4} for i in range(D)]
          + [{"name": "kind", "role": "categorical", "categories": ["a", "b", "c"]}, {"name": "lab", "role": "label"}]}


@pytest.fixture(scope="module")
def cluster():
    # Worker processes are spawned, and spawn re-runs the parent's __main__ file in each child; after an AppTest in
    # this pytest process that is the Streamlit app, which must not run in a worker. Start them from a bare __main__.
    saved = sys.modules.get("__main__")
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as c, \
                Client(c) as client:
            sys.modules["__main__"] = saved
            yield c, client
    finally:
        sys.modules["__main__"] = saved


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    folder = tmp_path_factory.mktemp("dask")
    rng = np.random.default_rng(0)
    n = 2400
    df = pd.DataFrame(np.round(rng.uniform(-3, 5, size=(n, D)), 3), columns=[f"x{i}" for i in range(D)])
    df["kind"] = rng.choice(["a", "b", "c", "zz"], size=n, p=[0.5, 0.3, 0.19, 0.01])
    df["lab"] = (df["x0"] + df["x1"] > 1.5).astype(int)
    df.loc[7, "x3"] = np.nan
    for i, a in enumerate(range(0, n, 600)):  # four files: `--csv 'part-*.csv'`
        df.iloc[a:a + 600].to_csv(folder / f"part-{i}.csv", index=False)
    df.to_csv(folder / "all.csv", index=False)
    (folder / "schema.yaml").write_text(load_schema(SCHEMA).to_yaml())
    return df, folder


@pytest.mark.slow
def test_dask_statistics_equal_the_in_memory_ones(cluster, data):
    df, folder = data
    schema = load_schema(SCHEMA)
    mem = preprocess(load_csv((folder / "all.csv").read_bytes(), schema=schema), norm_bound=1.5)
    ref = stats.from_csv(folder / "all.csv", schema, norm_bound=1.5, reservoir_size=300, seed=9)
    for ddf in (dd.from_pandas(df, npartitions=5),
                dd.read_csv(str(folder / "part-*.csv"), dtype={"kind": "string", "lab": "string"})):
        s = stats.from_dask(ddf, schema, norm_bound=1.5, reservoir_size=300, seed=9)
        np.testing.assert_allclose(s.C, mem.C, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(s.total, mem.stats.total, rtol=1e-12, atol=1e-12)
        assert s.n == mem.n == len(df)
        assert [e.as_dict() for e in s.ledger] == [e.as_dict() for e in mem.ledger]
        assert s.diagnostics["unseen_categories"] == mem.diagnostics["unseen_categories"]
        assert s.diagnostics["missing_values"] == mem.diagnostics["missing_values"]
        np.testing.assert_array_equal(s.sample_positions, ref.sample_positions)  # the same reservoir
        np.testing.assert_allclose(s.sample, ref.sample, atol=1e-15)
        np.testing.assert_array_equal(s.sample_labels, ref.sample_labels)


SWEEP = ["--mechanisms", "analyze_gauss,laplace,ss_approx", "--epsilons", "1,4", "--k", "1", "--trials", "2",
         "--quiet", "--jobs", "1", "--seed", "5"]
METRICS = ["captured_variance_ratio", "frobenius_error", "principal_angle_max_deg", "svm_accuracy"]


@pytest.mark.slow
def test_dask_sweep_gives_the_in_memory_numbers_for_the_same_seed(cluster, data):
    _, folder = data
    address = cluster[0].scheduler_address
    mem_out, dask_out, again = folder / "mem.csv", folder / "dask.csv", folder / "again.csv"
    schema = str(folder / "schema.yaml")
    assert main(["sweep", "--csv", str(folder / "all.csv"), "--schema", schema, *SWEEP, "--out", str(mem_out)]) == 0
    for out in (dask_out, again):
        assert main(["sweep", "--dask", address, "--csv", str(folder / "part-*.csv"), "--schema", schema, *SWEEP,
                     "--out", str(out)]) == 0
    a, b, c = pd.read_csv(mem_out), pd.read_csv(dask_out), pd.read_csv(again)
    assert len(a) == len(b) == 12 and list(a["mechanism"]) == list(b["mechanism"])
    np.testing.assert_allclose(b[METRICS].to_numpy(), a[METRICS].to_numpy(), rtol=1e-8, atol=1e-8)
    assert (a["seed"] == b["seed"]).all() and (a["n"] == b["n"]).all()
    pd.testing.assert_frame_equal(b.drop(columns="runtime_s"), c.drop(columns="runtime_s"))


@pytest.mark.slow
def test_dask_sweep_with_a_small_reservoir_labels_it(cluster, data):
    _, folder = data
    out = folder / "small.csv"
    assert main(["sweep", "--dask", cluster[0].scheduler_address, "--csv", str(folder / "part-*.csv"), "--schema",
                 str(folder / "schema.yaml"), "--reservoir", "400", *SWEEP, "--out", str(out)]) == 0
    frame = pd.read_csv(out)
    assert frame["message"].str.contains("reservoir sample of 400 rows").all()
    ss = frame[frame["mechanism"] == "ss_approx"]
    assert ss["message"].str.contains("Singhal–Steinke ran on a reservoir sample").all() and (ss["n"] < 400).all()
