"""Streaming: CSV/Parquet files in record batches give the in-memory statistics, the same reservoir, bounded memory,
and the CLI (`dpcore sweep --stream`, `--parquet`) the in-memory sweep's numbers."""

from __future__ import annotations

import gzip
import tracemalloc

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from dpcore import stats
from dpcore.cli import data as cli_data
from dpcore.cli import main
from dpcore.data import load_csv, load_schema, preprocess
from dpcore.exceptions import InvalidParameterError, PrivacyLeakWarning
from dpcore.stats._arrow import CsvSource

D = 5
SCHEMA = {"dpcore_schema": 1, "label": "lab",
          "columns": [{"name": f"x{i}", "role": "numeric", "lower": -2, "upper": 4} for i in range(D)]
          + [{"name": "colour", "role": "categorical", "categories": ["red", "green", "blue"]},
             {"name": "lab", "role": "label"}]}


def _frame(n: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    X = np.round(rng.uniform(-3, 5, size=(n, D)), 3)
    df = pd.DataFrame(X, columns=[f"x{i}" for i in range(D)])
    df["colour"] = rng.choice(["red", "green", "blue", "purple"], size=n, p=[0.4, 0.3, 0.28, 0.02])
    df["lab"] = (X[:, 0] + X[:, 1] > 2).astype(int)
    df.loc[5, "x2"] = np.nan
    df.loc[9, "colour"] = None
    return df


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("stream")
    df = _frame(3000)
    csv = folder / "t.csv"
    df.to_csv(csv, index=False)
    (folder / "t.csv.gz").write_bytes(gzip.compress(csv.read_bytes()))
    df.to_parquet(folder / "t.parquet")
    parts = folder / "parts"
    parts.mkdir()
    for i, a in enumerate(range(0, len(df), 1000)):
        df.iloc[a:a + 1000].to_parquet(parts / f"part-{i}.parquet")
    schema = folder / "schema.yaml"
    schema.write_text(load_schema(SCHEMA).to_yaml())
    return {"df": df, "csv": csv, "gz": folder / "t.csv.gz", "parquet": folder / "t.parquet", "parts": parts,
            "schema": schema, "dir": folder}


def _in_memory(path):
    return preprocess(load_csv(path.read_bytes(), schema=load_schema(SCHEMA)))


@pytest.mark.parametrize("block_size", [4096, 65_536, 2**24])
def test_streamed_csv_equals_in_memory(files, block_size):
    mem = _in_memory(files["csv"])
    s = stats.from_csv(files["csv"], load_schema(SCHEMA), block_size=block_size, reservoir_size=10_000, seed=0)
    np.testing.assert_allclose(s.C, mem.C, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(s.total, mem.stats.total, rtol=1e-12, atol=1e-12)
    assert s.n == mem.n == 3000 and s.norm_bound == mem.norm_bound
    assert [e.as_dict() for e in s.ledger] == [e.as_dict() for e in mem.ledger]
    for key in ("values_outside_bounds", "unseen_categories", "missing_values", "clip_fraction", "clamped_fraction"):
        assert s.diagnostics[key] == mem.diagnostics[key], key
    data = s.to_prepared()
    assert data.sample is None  # the reservoir holds every row: the in-memory data, row for row
    np.testing.assert_allclose(data.X, mem.X, atol=1e-15)
    np.testing.assert_array_equal(data.y, mem.y)


def test_gzip_parquet_file_and_parquet_folder_stream_to_the_same_statistics(files):
    schema = load_schema(SCHEMA)
    ref = stats.from_csv(files["csv"], schema, reservoir_size=200, seed=5, block_size=8192)
    for other in (stats.from_csv(files["gz"], schema, reservoir_size=200, seed=5),
                  stats.from_parquet(files["parquet"], schema, reservoir_size=200, seed=5, batch_rows=500),
                  stats.from_parquet(files["parts"], schema, reservoir_size=200, seed=5)):
        np.testing.assert_allclose(other.C, ref.C, rtol=1e-12, atol=1e-12)
        assert other.n == ref.n
        np.testing.assert_array_equal(other.sample_positions, ref.sample_positions)
        np.testing.assert_allclose(other.sample, ref.sample, atol=1e-15)
        np.testing.assert_array_equal(other.sample_labels, ref.sample_labels)


def test_reservoir_of_a_stream_equals_the_array_reservoir(files):
    mem = load_csv(files["csv"].read_bytes(), schema=load_schema(SCHEMA))
    a = stats.from_dataset(mem, reservoir_size=250, seed=11)
    s = stats.from_csv(files["csv"], load_schema(SCHEMA), reservoir_size=250, seed=11, block_size=4096)
    np.testing.assert_array_equal(a.sample_positions, s.sample_positions)
    np.testing.assert_allclose(a.sample, s.sample, atol=1e-15)
    again = stats.from_csv(files["csv"], load_schema(SCHEMA), reservoir_size=250, seed=11, block_size=50_000)
    np.testing.assert_array_equal(again.sample_positions, s.sample_positions)


def test_dropping_rows_while_streaming_is_recorded_as_not_private(files):
    with pytest.warns(PrivacyLeakWarning, match="drop rows"):
        s = stats.from_csv(files["csv"], load_schema(SCHEMA), missing="drop", reservoir_size=10)
    assert s.n == 2998 and s.diagnostics["rows_with_missing_values"] == 2 and not s.is_private
    with pytest.raises(InvalidParameterError, match="missing"):
        stats.from_csv(files["csv"], load_schema(SCHEMA), missing="mean")


def test_dp_centring_while_streaming_reads_the_file_twice_and_spends_its_budget(files):
    s = stats.from_csv(files["csv"], load_schema(SCHEMA), centering="dp", centering_epsilon=0.3,
                       centering_delta=1e-6, reservoir_size=50, seed=4)
    mem = preprocess(load_csv(files["csv"].read_bytes(), schema=load_schema(SCHEMA)), centering="dp",
                     centering_epsilon=0.3, centering_delta=1e-6, random_state=4)
    np.testing.assert_allclose(s.info["center"], mem.info["center"], rtol=1e-12)  # same child stream, same noise
    np.testing.assert_allclose(s.C, mem.C, rtol=1e-10, atol=1e-10)
    assert sum(e.epsilon for e in s.ledger) == pytest.approx(0.3)


@pytest.mark.slow
def test_streaming_memory_is_bounded_by_the_batch_not_the_file(tmp_path):
    """Python/numpy allocations (tracemalloc) while streaming a generated file stay at a few blocks of records, the
    same for 1× and 4× the rows (the reservoir is full in both)."""
    import pyarrow.csv as pacsv

    schema = load_schema({"dpcore_schema": 1, "columns": [
        {"name": f"v{i}", "role": "numeric", "lower": -5, "upper": 5} for i in range(40)]})
    rng = np.random.default_rng(0)
    peak, sizes = {}, {}
    for n in (3_000, 12_000):
        path = tmp_path / f"big{n}.csv"
        pacsv.write_csv(pa.table({f"v{i}": np.round(rng.standard_normal(n), 3) for i in range(40)}), path)
        sizes[n] = path.stat().st_size
        encoder = stats.SchemaEncoder(schema)
        source = CsvSource(path, encoder, block_size=16 * 1024, piece_bytes=256 * 1024)
        tracemalloc.start()
        s = stats.from_source(source, feature_ranges=encoder.ranges, reservoir_size=1000, seed=0)
        peak[n] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert s.n == n
    assert peak[12_000] < 1.2 * peak[3_000] + 2**18, (peak, sizes)  # 4× the rows: memory does not grow with them


# --------------------------------------------------------------------------------------------------
# the CLI
# --------------------------------------------------------------------------------------------------

SWEEP = ["--mechanisms", "analyze_gauss,laplace", "--epsilons", "0.5,2", "--trials", "2", "--seed", "0", "--quiet",
         "--jobs", "1"]
METRICS = ["captured_variance_ratio", "frobenius_error", "principal_angle_max_deg", "svm_accuracy"]


def test_cli_stream_gives_the_in_memory_sweep(files):
    mem, streamed, parquet = (files["dir"] / f"{n}.csv" for n in ("mem", "streamed", "parquet_out"))
    assert main(["sweep", "--csv", str(files["csv"]), "--schema", str(files["schema"]), *SWEEP, "--out", str(mem)]) == 0
    assert main(["sweep", "--csv", str(files["csv"]), "--schema", str(files["schema"]), "--stream", *SWEEP,
                 "--out", str(streamed)]) == 0
    assert main(["sweep", "--parquet", str(files["parquet"]), "--schema", str(files["schema"]), "--stream", *SWEEP,
                 "--out", str(parquet)]) == 0
    a, b, c = pd.read_csv(mem), pd.read_csv(streamed), pd.read_csv(parquet)
    assert list(a.columns) == list(b.columns) == list(c.columns) and len(a) == len(b) == 8
    np.testing.assert_allclose(b[METRICS].to_numpy(), a[METRICS].to_numpy(), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(c[METRICS].to_numpy(), a[METRICS].to_numpy(), rtol=1e-9, atol=1e-9)
    assert (a["n"] == b["n"]).all() and (a["seed"] == b["seed"]).all()


def test_cli_stream_with_a_small_reservoir_labels_its_use(files, capsys):
    out = files["dir"] / "small.csv"
    assert main(["sweep", "--csv", str(files["csv"]), "--schema", str(files["schema"]), "--stream", "--reservoir",
                 "500", "--mechanisms", "analyze_gauss", "--epsilons", "1", "--trials", "1", "--jobs", "1",
                 "--out", str(out)]) == 0
    frame = pd.read_csv(out)
    assert frame["message"].str.contains("metrics on a reservoir sample of 500 rows").all()
    assert frame["n"].iloc[0] > 2500  # the mechanism saw every row's statistics (less the SVM's held-out rows)
    assert "reservoir sample of 500 rows" in capsys.readouterr().err


def test_cli_never_chooses_the_reader_from_the_file_and_refuses_what_streaming_cannot_do(files, capsys):
    """Issue 31 item 3: a file's size (a function of its records) never switches readers — streaming happens on
    --stream only; before, a file over DPCORE_STREAM_BYTES was streamed and refused --sample-sizes."""
    assert not hasattr(cli_data, "STREAM_THRESHOLD_BYTES")
    out = files["dir"] / "auto.csv"
    assert main(["sweep", "--csv", str(files["csv"]), "--schema", str(files["schema"]), *SWEEP[:-3],
                 "--out", str(out)]) == 0
    assert "streamed" not in capsys.readouterr().err
    assert main(["sweep", "--csv", str(files["csv"]), "--schema", str(files["schema"]), "--stream", *SWEEP[:-3],
                 "--out", str(out)]) == 0
    assert "streamed" in capsys.readouterr().err
    # streaming needs a public schema; subsample sizes need every row
    assert main(["sweep", "--csv", str(files["csv"]), "--stream", *SWEEP, "--out", str(out)]) == 2
    assert "--schema" in capsys.readouterr().err
    assert main(["sweep", "--csv", str(files["csv"]), "--schema", str(files["schema"]), "--stream", "--sample-sizes",
                 "100", *SWEEP, "--out", str(out)]) == 2
    assert "--sample-sizes" in capsys.readouterr().err
    assert main(["sweep", "--dataset", "wine", "--stream", *SWEEP, "--out", str(out)]) == 2


def test_the_fast_cell_normalisation_is_the_per_line_rule():
    """The Arrow fast path strips and compares cells with Arrow for ASCII and with Python for the rest; it must equal
    :func:`dpcore.data.records.normalise_cell` on every cell, whatever else is in the block."""
    from dpcore.data.records import _normalise, normalise_cell

    cells = ["1", " 2 ", "NA", " na ", "N/A", "?", "", "   ", "\t3\t", "\xa04\u3000", "\x1c5\x1f", "nan", "NaN ",
             "null", "Null", "x", " İ ", "\u2028", "1,234", '"q"', "\u212a", "ǅ "]
    for missing in (("", "?", "n/a", "na", "nan", "null"), ("-", "x", "k", "ǆ")):
        expected = [normalise_cell(c, frozenset(missing)) for c in cells]
        for ascii_only, group in ((False, cells), (True, [c for c in cells if c.isascii()])):
            got = _normalise(pa.array(group, pa.string()), frozenset(missing), ascii_only).to_pylist()
            assert got == [normalise_cell(c, frozenset(missing)) for c in group]
        assert _normalise(pa.array(cells, pa.string()), frozenset(missing), False).to_pylist() == expected


def test_cli_streams_a_declared_decimal_comma_file_as_memory_reads_it(tmp_path):
    """The declared format (not a guess, not a refusal) decides how a streamed file is read: a semicolon file with
    decimal commas and thousands separators gives the in-memory numbers; CLI overrides of a declared format are
    refused, as in memory."""
    import json

    rng = np.random.default_rng(3)
    values = rng.uniform(0, 2000, size=(400, 2))
    text = "a;b\n" + "".join(f"{x:,.2f};{y:.3f}\n".replace(",", " ").replace(".", ",").replace(" ", ".")
                             for x, y in values)
    path = tmp_path / "eu.csv"
    path.write_text(text)
    schema = tmp_path / "s.json"
    schema.write_text(json.dumps({"dpcore_schema": 1, "format": {"kind": "csv", "delimiter": ";", "decimal": ",",
                                                                   "thousands": "."},
                                  "columns": [{"name": c, "role": "numeric", "lower": 0, "upper": 2000}
                                              for c in "ab"]}))
    outs = [tmp_path / "mem.csv", tmp_path / "stream.csv"]
    common = ["sweep", "--csv", str(path), "--schema", str(schema), *SWEEP]
    assert main([*common, "--out", str(outs[0])]) == 0
    assert main([*common, "--stream", "--out", str(outs[1])]) == 0
    mem, streamed = (pd.read_csv(p) for p in outs)
    pd.testing.assert_frame_equal(mem[METRICS], streamed[METRICS], rtol=1e-9)
    assert main([*common, "--stream", "--decimal", ",", "--out", str(outs[1])]) == 2


def test_the_arrow_fast_path_reads_lines_as_the_per_line_rules_do():
    """Quote-free blocks are parsed and normalised by Arrow; the result equals the per-line reader's, and a block
    it cannot read identically (a quote, a wrong field count, a leading byte-order mark) goes to the per-line
    reader."""
    from dpcore.data.records import _arrow_records, block_records, lines_records, split_lines

    rng = np.random.default_rng(5)
    pieces = ["1", " 2 ", "NA", " na ", "", "\t3", "x y", "?", "nan", "1e400", "-0", "\x0b4\x0c", "5 ", "null", "é"]
    lines = [",".join(rng.choice(pieces, size=3)) for _ in range(300)] + ["", "  ", "7,8,9"]
    missing = frozenset(("", "na", "nan", "null", "?"))
    data = "\n".join(lines).encode()
    fast = _arrow_records(data, ",", 3, [0, 2], missing)
    slow = lines_records(lines, delimiter=",", width=3, take=[0, 2], missing=missing)
    assert fast is not None
    assert [c.to_pylist() for c in fast[0]] == [c.to_pylist() for c in slow[0]] and fast[1:] == slow[1:]
    for odd in ('1,"2",3', "1,2", "1,2,3,4", "\ufeff1,2,3"):
        block = ("\n".join([odd, *lines[:5]]) if odd.startswith("\ufeff") else "\n".join([*lines[:5], odd])).encode()
        assert _arrow_records(block, ",", 3, [0, 1, 2], missing) is None
        via = block_records(block, delimiter=",", width=3, take=[0, 1, 2], missing=missing)
        ref = lines_records(split_lines(block.decode()), delimiter=",", width=3, take=[0, 1, 2], missing=missing)
        assert [c.to_pylist() for c in via[0]] == [c.to_pylist() for c in ref[0]] and via[1:] == ref[1:]


@pytest.mark.parametrize("block_size", [512, 4096, 2**20])
def test_leading_blank_lines_sep_line_and_odd_blocks_stream_as_they_read_in_memory(tmp_path, block_size):
    """The header is found line by line (after Excel's "sep=" line and blank lines); the records after it, in its
    block and every later one, are read by the Arrow fast path or the per-line reader — the same as in memory."""
    lines = _frame(400, seed=3).to_csv(index=False).splitlines()
    odd = ['1,"2",0,0,0,red,1', "1,2,3", "é,1,1,1,1,blue,0", "1,2,3,4,5,green,0,9", "   ", "", " NA ,1,\t2,3,4,red,1"]
    for i, line in zip(range(40, 400, 37), odd * 2):
        lines[i] = line
    path = tmp_path / "odd.csv"
    path.write_text("sep=,\n\n   \n" + "\n".join(lines) + "\n")
    mem = preprocess(load_csv(path.read_bytes(), schema=load_schema(SCHEMA)))
    s = stats.from_csv(path, load_schema(SCHEMA), block_size=block_size, reservoir_size=10_000, seed=0)
    assert s.n == mem.n
    np.testing.assert_allclose(s.C, mem.C, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(s.total, mem.stats.total, rtol=1e-12, atol=1e-12)
    for key in ("values_outside_bounds", "unseen_categories", "missing_values"):
        assert s.diagnostics[key] == mem.diagnostics[key], key


def test_blocks_cut_at_line_breaks_split_as_the_whole_text():
    """The file is cut into blocks at \\n bytes; the lines of the blocks are the lines of the whole text."""
    from dpcore.data.records import LINE_BREAK, split_lines, utf8_blocks

    rng = np.random.default_rng(11)
    for _ in range(300):
        text = "".join(rng.choice(["a", ",", "\n", "\r", "\r\n", " ", "\n\n", "é"], size=int(rng.integers(0, 30))))
        whole = LINE_BREAK.split(text)
        whole = whole[:-1] if whole and whole[-1] == "" else whole
        assert split_lines(text) == whole
        raw = text.encode()
        cuts = sorted(int(c) for c in rng.integers(0, len(raw) + 1, size=3))
        chunks = [raw[a:b] for a, b in zip([0, *cuts], [*cuts, len(raw)])]
        blocks = list(utf8_blocks(chunks, "utf-8"))
        assert all(b.endswith(b"\n") for b in blocks[:-1])
        assert [line for b in blocks for line in split_lines(b.decode())] == whole
