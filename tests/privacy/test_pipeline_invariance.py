"""The private pipeline as a whole (issue 18 items 5, 6 and the invariance harness).

* No release path has a fixed default seed (a default ``seed=0`` makes every "DP" draw a public constant).
* Under a confirmed public schema no single record steers a public output: success vs refusal, d, column order and
  roles, ledger steps and text are the same on neighbouring files, and the in-memory, streamed and Dask paths share
  one per-record transform (the same C on the same file).
"""

from __future__ import annotations

import argparse
import csv
import importlib
import inspect
import io
import pkgutil
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dpcore
from dpcore import stats
from dpcore.core.seeding import Stage, stage_rng
from dpcore.data import load_csv
from dpcore.data.preprocess import preprocess
from dpcore.data.schema import load_schema
from dpcore.exceptions import DPCoreError, PrivacyLeakWarning
from dpcore.mechanisms import get_mechanism

# ==================================================================================================
# Item 5: no fixed default seed on any release path
# ==================================================================================================

#: Parameters that seed randomness.
_SEED_NAMES = ("seed", "random_state", "rng")
#: Helpers that may keep a fixed default seed, each with the reason it releases nothing about private data.
SEED_ALLOW_LIST = {
    "dpcore.data.synthetic.make_css_synthetic": "generates public synthetic demo data; no noise is released",
    "dpcore.data.synthetic.make_is_synthetic": "generates public synthetic demo data; no noise is released",
    "dpcore.data.synthetic.make_subspace_synthetic": "generates public synthetic demo data; no noise is released",
    "dpcore.explain.inspect.projection_pair": "picks which rows a non-private projection plot shows; draws no noise",
    "dpcore.explain.inspect.subsample_rows": "picks which rows a non-private projection plot shows; draws no noise",
    "dpcore.samplers.asymptotics.check_sampler": "sampler conformance on a synthetic covariance; no private data",
    "dpcore.evaluation.ss_dimension.dimension_point":
        "a reproduction on planted synthetic data (reproducible); no private data",
    "dpcore.evaluation.coinpress_repro.trial_errors":
        "reproduces CoinPress's stored tables on fresh N(0, I) data it draws itself; no private data",
    "dpcore.peers.law.law_test": "a peer sampler's law test on the conformance test's synthetic covariance",
}


def _is_seed_name(name: str) -> bool:
    name = name.lower().lstrip("-").replace("-", "_")
    return name in _SEED_NAMES or name.endswith(tuple(f"_{s}" for s in _SEED_NAMES))


def _is_fixed(default: object) -> bool:
    return isinstance(default, (int, np.integer)) and not isinstance(default, (bool, np.bool_))


def _public_callables():
    """(qualified name, callable) for every function, class and method defined in a dpcore module."""
    for info in pkgutil.walk_packages(dpcore.__path__, "dpcore."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if getattr(obj, "__module__", None) != module.__name__:
                continue
            if inspect.isfunction(obj):
                yield f"{module.__name__}.{name}", obj
            elif inspect.isclass(obj):
                yield f"{module.__name__}.{name}", obj
                for attr, value in vars(obj).items():
                    func = getattr(value, "__func__", value)
                    if inspect.isfunction(func):
                        yield f"{module.__name__}.{name}.{attr}", func


@pytest.mark.slow
def test_no_public_function_or_class_has_a_fixed_default_seed():
    fixed, walked = [], 0
    for qualname, obj in _public_callables():
        try:
            sig = inspect.signature(obj)
        except (TypeError, ValueError):
            continue
        walked += 1
        for p in sig.parameters.values():
            if _is_seed_name(p.name) and _is_fixed(p.default) and qualname not in SEED_ALLOW_LIST:
                fixed.append(f"{qualname}({p.name}={p.default!r})")
    assert walked > 300  # the walk reached the package (stats, sweep, estimator, mechanisms, advisor, teaching, …)
    assert not fixed, f"fixed default seeds on release paths: {fixed}"


def test_the_walk_sees_the_release_apis():
    names = {q for q, _ in _public_callables()}
    for expected in ("dpcore.stats.from_csv", "dpcore.stats.from_parquet", "dpcore.stats.from_dask",
                     "dpcore.stats.from_array", "dpcore.stats.from_dataset", "dpcore.evaluation.sweep.SweepConfig",
                     "dpcore.evaluation.advisor.clipping_utility_curve",
                     "dpcore.explain.teaching.neighbouring_comparison"):
        assert expected in names


def test_mechanism_options_have_no_fixed_default_seed():
    from dpcore.mechanisms import list_mechanisms

    for mech in list_mechanisms():
        for p in mech.params:
            assert not (_is_seed_name(p.name) and _is_fixed(p.default)), f"{mech.id}.{p.name} = {p.default!r}"


def _actions(parser: argparse.ArgumentParser, path: str = "dpcore"):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _actions(sub, f"{path} {name}")
        else:
            yield path, action


def test_no_cli_command_has_a_fixed_default_seed():
    from dpcore.cli import build_parser

    fixed = [f"{path} {a.option_strings}={a.default!r}" for path, a in _actions(build_parser())
             if _is_seed_name(a.dest) and _is_fixed(a.default)]
    assert not fixed, fixed


def test_the_streamed_dp_mean_is_not_a_public_constant(tmp_path):
    """Old default seed=0: subtracting the recomputable noise recovered the exact mean to ~1e-16."""
    rng = np.random.default_rng(1)
    path = tmp_path / "a.csv"
    np.savetxt(path, rng.uniform(0, 10, size=(400, 3)), delimiter=",", header="a,b,c", comments="", fmt="%.6f")
    X = np.loadtxt(path, delimiter=",", skiprows=1) / 10.0
    X *= np.minimum(1.0, 1.0 / np.linalg.norm(X, axis=1))[:, None]  # the B-clipped rows the DP mean sees (B = 1)
    schema = load_schema({"columns": [{"name": c, "role": "numeric", "lower": 0, "upper": 10} for c in "abc"]})
    runs = [stats.from_csv(path, schema, centering="dp", centering_epsilon=0.5, norm_bound=1.0) for _ in range(2)]
    sigma = runs[0].info["centering_sigma"]
    guessed_noise = stage_rng(0, Stage.CENTERING).normal(0.0, sigma, size=3)
    error = np.abs(runs[0].info["center"] - guessed_noise - X.mean(axis=0)).max()
    assert error > 1e-3 * sigma  # P(every |N(0, σ)| coordinate < 1e-3 σ) ≈ 5e-10
    assert not np.array_equal(runs[0].info["center"], runs[1].info["center"])
    seeded = [stats.from_csv(path, schema, centering="dp", centering_epsilon=0.5, norm_bound=1.0, seed=4)
              for _ in range(2)]
    np.testing.assert_array_equal(seeded[0].info["center"], seeded[1].info["center"])  # reproducible when asked


def test_a_sweep_without_a_seed_draws_a_fresh_one():
    from dpcore.data.prepared import PreparedData
    from dpcore.evaluation.sweep import SweepConfig

    data = PreparedData(np.random.default_rng(0).uniform(-0.5, 0.5, size=(50, 3)))
    seeds = {SweepConfig(mechanisms=["pca"], epsilons=[1.0]).validated(data).seed for _ in range(3)}
    assert len(seeds) == 3
    assert SweepConfig(mechanisms=["pca"], epsilons=[1.0], seed=7).validated(data).seed == 7


# ==================================================================================================
# Item 6 and the harness: under a confirmed public schema no single record steers a public output
# ==================================================================================================


#: What one adversarial record may hold in a cell (the review's list, and a few more).
ADVERSARIAL = ("inf", "-inf", "Infinity", "NaN", "nan", "1e400", "-1e400", "abc", "zzz", "1,5", "1.234,5", "1,234",
               "", " NA ", "1e300", "-1e300", '"quoted"', 'a "b" c', "3;4", "\t", "lone", "4.900", "\ufffd", "?")
CATEGORIES = ("red", "green", "blue")


def _format_number(x: float, decimal: str) -> str:
    text = f"{x:.3f}"
    return text.replace(".", ",") if decimal == "," else text


def _schema(fmt: dict, n_num: int, n_cat: int, label: bool) -> dict:
    columns = [{"name": f"x{i}", "role": "numeric", "lower": -10, "upper": 10} for i in range(n_num)]
    columns += [{"name": f"c{i}", "role": "categorical", "categories": list(CATEGORIES)} for i in range(n_cat)]
    if label:
        columns.append({"name": "y", "role": "label"})
    return {"dpcore_schema": 1, "format": fmt, "label": "y" if label else None, "columns": columns}


@st.composite
def tables(draw):
    """(schema mapping, header, rows of cells, neighbour rows): a table under a confirmed public schema and a
    neighbour that replaces, adds or removes one record with adversarial content."""
    delimiter = draw(st.sampled_from([",", ";", "\t"]))
    decimal = draw(st.sampled_from([".", ","] if delimiter != "," else ["."]))
    thousands = draw(st.sampled_from([None, "," if decimal == "." else "."]))
    if thousands == delimiter:
        thousands = None
    fmt = {"kind": "csv", "encoding": "utf-8", "delimiter": delimiter, "decimal": decimal, "thousands": thousands,
           "header": True, "quote_all": draw(st.booleans())}
    n_num, n_cat = draw(st.integers(1, 3)), draw(st.integers(0, 2))
    label = draw(st.booleans())
    schema = _schema(fmt, n_num, n_cat, label)
    header = [c["name"] for c in schema["columns"]]
    n = draw(st.integers(3, 12))
    number = st.one_of(st.floats(-20, 20, allow_nan=False).map(lambda x: _format_number(x, decimal)),
                       st.sampled_from(["", "NA"]))
    category = st.sampled_from([*CATEGORIES, ""])
    one_class = draw(st.booleans())

    def record(i: int) -> list[str]:
        cells = [draw(number) for _ in range(n_num)] + [draw(category) for _ in range(n_cat)]
        if label:
            cells.append("a" if one_class else ("a", "b")[i % 2])
        return cells

    rows = [record(i) for i in range(n)]
    bad = [draw(st.sampled_from(ADVERSARIAL)) if draw(st.booleans()) else cell for cell in record(0)]
    op = draw(st.sampled_from(["replace", "add", "remove"]))
    where = draw(st.integers(0, n - 1))
    if op == "replace":
        other = [*rows[:where], bad, *rows[where + 1:]]
    elif op == "add":
        other = [*rows[:where], bad, *rows[where:]]
    else:
        other = rows[:where] + rows[where + 1:]
    return schema, header, rows, other


def _csv_bytes(header: list[str], rows: list[list[str]], delimiter: str, quote_all: bool = False) -> bytes:
    buf = io.StringIO()
    writer = csv.writer(buf, delimiter=delimiter, lineterminator="\n",
                        quoting=csv.QUOTE_ALL if quote_all else csv.QUOTE_MINIMAL)
    writer.writerow(header)
    writer.writerows(rows)
    return buf.getvalue().encode("utf-8")


def _ledger(entries) -> list[tuple]:
    return [(e.step, e.note, e.private, e.epsilon, e.delta) for e in entries]


def run_pipeline(data: bytes, schema_map: dict, folder: Path, *, dask: bool = False) -> dict:
    """Every public output of read → schema → preprocess → statistics (in memory, streamed) → release, or the
    kind of refusal; the in-memory and streamed C must agree on the same file."""
    schema = load_schema(schema_map)
    path = folder / "data.csv"
    path.write_bytes(data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        try:
            ds = load_csv(data, schema=schema)
            prepared = preprocess(ds)
            release = get_mechanism("analyze_gauss").release(prepared, 1, 1.0, 1e-5, random_state=0)
            streamed = stats.from_csv(path, schema, seed=0)
        except DPCoreError as exc:
            return {"ok": False, "refusal": type(exc).__name__}
    np.testing.assert_allclose(streamed.C, prepared.C, atol=1e-12, rtol=0)
    out = {"ok": True, "d": prepared.d, "columns": tuple(ds.feature_names), "roles": ds.options.get("roles"),
           "format": ds.options.get("read"), "ledger": _ledger(release.ledger),
           "preprocessing": _ledger(release.preprocessing), "stream_ledger": _ledger(streamed.ledger),
           "stream_columns": streamed.feature_names, "status": release.status, "guarantee": release.guarantee}
    if dask:
        import dask.dataframe as dd
        import pandas as pd

        frame = pd.read_csv(io.BytesIO(data), sep=schema.file_format.delimiter, dtype=object, keep_default_na=False,
                            na_filter=False)
        distributed = stats.from_dask(dd.from_pandas(frame, npartitions=2), schema, seed=0)
        np.testing.assert_allclose(distributed.C, prepared.C, atol=1e-12, rtol=0)
        out["dask_ledger"] = _ledger(distributed.ledger)
    return out


def assert_invariant(schema_map: dict, header: list[str], rows: list, other: list, folder: Path, **kw) -> None:
    schema_map = {**schema_map, "format": dict(schema_map["format"])}
    delimiter, quote_all = schema_map["format"]["delimiter"], schema_map["format"].pop("quote_all", False)
    a = run_pipeline(_csv_bytes(header, rows, delimiter, quote_all), schema_map, folder, **kw)
    b = run_pipeline(_csv_bytes(header, other, delimiter, quote_all), schema_map, folder, **kw)
    assert a == b
    assert a["ok"], a  # a valid table with a confirmed public schema is never refused


@pytest.mark.slow
@settings(derandomize=True, max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                                   HealthCheck.data_too_large])
@given(tables())
def test_neighbouring_files_give_the_same_public_outputs(tmp_path_factory, table):
    schema_map, header, rows, other = table
    declared = {**schema_map, "format": {k: v for k, v in schema_map["format"].items() if k != "quote_all"}}
    assert load_schema(declared).is_public  # a confirmed public schema: format, structure and values declared
    assert_invariant(schema_map, header, rows, other, tmp_path_factory.mktemp("pair"))


# --------------------------------------------------------------------------------------------------
# Explicit neighbouring pairs: each was refused on one side only (40144d4), and the paths' equality
# --------------------------------------------------------------------------------------------------

def _public(columns: list[dict], label: str | None = None, **fmt) -> dict:
    """A confirmed public schema mapping (format, structure and values declared)."""
    from dpcore.data import reading

    out = {"dpcore_schema": 1, "label": label, "columns": columns}
    if hasattr(reading, "FileFormat"):  # the declared file format (absent from 40144d4, whose reader guessed it)
        out["format"] = {"kind": "csv", "delimiter": ",", "decimal": ".", "thousands": None, **fmt}
    return out


NUMERIC_SCHEMA = _public([{"name": "a", "role": "numeric", "lower": 0, "upper": 10},
                          {"name": "b", "role": "numeric", "lower": -5, "upper": 5},
                          {"name": "c", "role": "categorical", "categories": ["x", "y"]},
                          {"name": "y", "role": "label"}], label="y")
BASE_ROWS = [["1", "2", "x", "p"], ["3", "-1", "y", "q"], ["4.5", "0.5", "x", "p"], ["7", "3", "y", "q"],
             ["2", "-4", "x", "p"]]


def _outputs(rows: list[list[str]], folder: Path, schema_map: dict = NUMERIC_SCHEMA) -> dict:
    return run_pipeline(_csv_bytes(["a", "b", "c", "y"], rows, ","), schema_map, folder)


@pytest.mark.parametrize("cell", ["1e400", "-1e400", "inf", "-Infinity", "abc", "1,234", " NA ", "", "1e300", "?"])
@pytest.mark.parametrize("column", [0, 1])
def test_one_adversarial_numeric_cell_changes_no_public_output(tmp_path, cell, column):
    """40144d4: "1e400" and "inf" were refused in memory (naming the row) and when streaming; text and "1,234"/" NA "
    were refused when streaming only."""
    other = [list(r) for r in BASE_ROWS]
    other[2][column] = cell
    assert _outputs(other, tmp_path) == _outputs(BASE_ROWS, tmp_path)


def test_a_label_with_one_class_but_for_one_record_is_not_refused(tmp_path):
    """40144d4: a label column with a single class was refused, so one record decided success vs refusal."""
    one_class = [[*r[:3], "p"] for r in BASE_ROWS]
    other = [list(r) for r in one_class]
    other[3][3] = "lone"
    a, b = _outputs(one_class, tmp_path), _outputs(other, tmp_path)
    assert a == b and a["ok"]


def test_a_numeric_column_whose_only_value_is_text_is_not_refused(tmp_path):
    """40144d4: a numeric column whose present cells were all text was refused ("holds text, not numbers"): with
    every other cell empty, one record decided it."""
    sparse = [[r[0], "", r[2], r[3]] for r in BASE_ROWS]
    other = [list(r) for r in sparse]
    other[0][1] = "n/a please"
    a, b = _outputs(sparse, tmp_path), _outputs(other, tmp_path)
    assert a == b and a["ok"]


def test_thousands_and_missing_tokens_stream_as_they_read_in_memory(tmp_path):
    """40144d4 streamed numbers with Arrow's parser: "1,234" and " NA " (which the in-memory reader parses) were
    refused. Now one per-record transform reads both paths: the same C."""
    schema_map = _public([{"name": "a", "role": "numeric", "lower": 0, "upper": 2000},
                          {"name": "b", "role": "numeric", "lower": -5, "upper": 5}], thousands=",")
    rows = [["1,234", "1"], [" NA ", "2"], ["5", " na "], ["1e400", "x"], ["12", "-inf"], ["7", "3.5"]]
    out = run_pipeline(_csv_bytes(["a", "b"], rows, ","), schema_map, tmp_path)
    assert out["ok"] and out["d"] == 2  # run_pipeline asserts in-memory C == streamed C


def test_decimal_comma_streams_as_it_reads_in_memory(tmp_path):
    schema_map = _public([{"name": "a", "role": "numeric", "lower": 0, "upper": 10},
                          {"name": "c", "role": "categorical", "categories": ["x", "y"]}],
                         delimiter=";", decimal=",", thousands=".")
    rows = [["3,5", "x"], ["4.900", "y"], ["1.234,5", "x"], ["1,5e1", "z"], ["abc", ""], ["2", "y"]]
    data = _csv_bytes(["a", "c"], rows, ";")
    out = run_pipeline(data, schema_map, tmp_path)
    assert out["ok"]
    streamed = stats.from_csv(tmp_path / "data.csv", load_schema(schema_map), seed=0, feature_scaling="none",
                              norm_bound=1e4)
    assert sorted(streamed.sample[:, 0] * streamed.norm_bound) == pytest.approx(sorted([3.5, 4900, 1234.5, 15, 0,
                                                                                        2]))


def test_the_fast_number_path_equals_the_formats_rule():
    """The encoder converts plain numbers in one Arrow call; every value equals the declared format's per-cell rule
    (FileFormat.parse_numbers), for both decimal marks."""
    import pandas as pd

    from dpcore.data.encode import RecordEncoder
    from dpcore.data.reading import FileFormat

    rng = np.random.default_rng(0)
    x = rng.standard_normal(3000) * 10.0 ** rng.integers(-6, 16, 3000)
    cells = [f"{v:.{p}f}" for v, p in zip(x, rng.integers(0, 18, 3000))] + [f"{v:.{p}e}" for v, p in
                                                                          zip(x, rng.integers(0, 17, 3000))]
    cells += ["-0", "007", "123456789012345678", "1e99", "1e400", "inf", "1,5", "1.234,5", "x", "", None]
    schema = load_schema({"columns": [{"name": "a", "role": "numeric", "lower": 0, "upper": 1}]})
    for decimal, delimiter in ((".", ","), (",", ";")):
        fmt = FileFormat(delimiter=delimiter, decimal=decimal, thousands="." if decimal == "," else ",")
        series = pd.Series([c.replace(".", ",") if decimal == "," and c else c for c in cells], dtype=object)
        fast, fast_bad = RecordEncoder(schema, fmt)._parse(series)
        rule, rule_bad = fmt.parse_numbers(series)
        np.testing.assert_array_equal(fast, rule)
        np.testing.assert_array_equal(fast_bad, rule_bad)


@pytest.mark.slow
def test_dask_partitions_use_the_same_per_record_transform(tmp_path):
    """In memory, streamed and Dask: the same C on a file with adversarial cells."""
    pytest.importorskip("dask.dataframe")
    rows = [list(r) for r in BASE_ROWS] + [["1e400", "abc", "zzz", "p"], ["inf", " NA ", "", "q"],
                                           ["1,234", "-inf", "y", "p"]]
    out = run_pipeline(_csv_bytes(["a", "b", "c", "y"], rows, ","), NUMERIC_SCHEMA, tmp_path, dask=True)
    assert out["ok"] and out["dask_ledger"] == out["stream_ledger"]


def test_parquet_streams_as_it_reads_in_memory(tmp_path):
    """Typed cells (Parquet): numbers with inf/NaN, text in a numeric column, unseen categories — the streamed
    statistics equal the in-memory ones, and one adversarial record refuses nothing."""
    import pandas as pd

    frame = pd.DataFrame({"a": ["1", "2", "abc", "4", None, "1e400"], "b": [0.5, np.inf, -np.inf, np.nan, 2.0, 1.0],
                          "c": ["x", "y", "zzz", None, "x", "y"]})
    path = tmp_path / "t.parquet"
    frame.to_parquet(path)
    schema_map = _public([{"name": "a", "role": "numeric", "lower": 0, "upper": 10},
                          {"name": "b", "role": "numeric", "lower": -5, "upper": 5},
                          {"name": "c", "role": "categorical", "categories": ["x", "y"]}])
    if "format" in schema_map:
        schema_map["format"] = {"kind": "parquet"}
    schema = load_schema(schema_map)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        mem = preprocess(load_csv(path.read_bytes(), schema=schema))
        streamed = stats.from_parquet(path, schema, seed=0)
    np.testing.assert_allclose(streamed.C, mem.C, atol=1e-12, rtol=0)
    assert streamed.feature_names == mem.feature_names and streamed.n == mem.n == 6
