"""The Data page refuses hostile uploads with a message, never a traceback and never the dear work (issue 32, item
11): a CSV header of 300,000 fields, a Parquet footer of 60 M rows, a schema and a workspace file whose YAML aliases
expand to 10^8 values. (The library checks, their limits and memory bounds: tests/data/test_hostile_files.py.)"""

from __future__ import annotations

import io
import tracemalloc
from contextlib import contextmanager
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parents[2] / "app.py")
TIMEOUT = 90

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]


@contextmanager
def peak_memory(limit: int):
    tracemalloc.start()
    try:
        yield
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < limit, f"peak allocation {peak / 2**20:.0f} MiB"


def wide_csv(columns: int, rows: int = 3) -> bytes:
    return (",".join(f"c{i}" for i in range(columns)) + "\n"
            + "".join(",".join(["1"] * columns) + "\n" for _ in range(rows))).encode()


def bomb_value(levels: int = 8) -> str:
    """A YAML flow list of anchors nested ``levels`` deep, each ten aliases of the one before: 10**levels values."""
    parts = ["&a [1,1,1,1,1,1,1,1,1,1]"]
    for i in range(1, levels):
        prev, name = chr(ord("a") + i - 1), chr(ord("a") + i)
        parts.append(f"&{name} [" + ",".join([f"*{prev}"] * 10) + "]")
    return f"[{', '.join(parts)}]"


def _data_page() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    at.switch_page("pages/data.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _texts(at: AppTest) -> str:
    return " ".join(e.value for e in [*at.error, *at.warning])


def _upload(at: AppTest, key: str, name: str, data: bytes, mime: str) -> None:
    at.file_uploader(key=key).set_value((name, data, mime)).run()
    assert not at.exception, [e.value for e in at.exception]


def test_the_data_page_refuses_hostile_tables():
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    buf = io.BytesIO()
    pq.write_table(pa.table({"x": pa.nulls(60_000_000, pa.int8())}), buf, compression="zstd")
    at = _data_page()
    with peak_memory(200 * 2**20):
        _upload(at, "data_upload_widget", "wide.csv", wide_csv(300_000), "text/csv")
    assert "10,000 columns" in _texts(at)
    with peak_memory(200 * 2**20):
        _upload(at, "data_upload_widget", "long.parquet", buf.getvalue(), "application/octet-stream")
    assert "max_rows" in _texts(at)


def test_the_data_page_refuses_alias_bombs_in_a_workspace_file():
    at = _data_page()
    text = f"dpcore_workspace: 1\nsettings:\n  dp_epsilon: {bomb_value()}\n".encode()
    with peak_memory(200 * 2**20):
        _upload(at, "workspace_widget", "w.yaml", text, "application/x-yaml")
    assert "expands to more than" in _texts(at)
