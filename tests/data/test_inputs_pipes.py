"""``--schema <(dpcore schema infer …)`` and ``-`` (issue 32, item 10): a schema or table given as a pipe, a FIFO or
standard input is read once and kept, so every later read in the same command gets the same bytes."""

from __future__ import annotations

import io
import os
import sys
import threading

import pytest

from dpcore.cli import main
from dpcore.data import inputs, load_schema

CSV = b"a,b,kind\n1,2,x\n3,4,y\n5,6,x\n7,9,y\n"


@pytest.fixture
def fifo(tmp_path):
    """A FIFO whose writer sends ``data`` once (what bash's <(…) hands a command as /dev/fd/63)."""
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs here")
    path = tmp_path / "pipe"
    os.mkfifo(path)
    threads = []

    def send(data: bytes) -> str:
        def write():
            with open(path, "wb") as fh:
                fh.write(data)

        thread = threading.Thread(target=write, daemon=True)
        thread.start()
        threads.append(thread)
        return str(path)

    yield send
    for thread in threads:
        thread.join(timeout=5)


@pytest.fixture(autouse=True)
def fresh_streams(monkeypatch):
    monkeypatch.setattr(inputs, "_STREAMS", {})


def _draft(tmp_path, capsys) -> str:
    path = tmp_path / "t.csv"
    path.write_bytes(CSV)
    assert main(["schema", "infer", "--csv", str(path), "--no-label", "--quiet"]) == 0
    return capsys.readouterr().out


def test_a_schema_from_a_pipe_is_read_once_and_kept(tmp_path, capsys, fifo):
    text = _draft(tmp_path, capsys)
    path = fifo(text.encode())
    first = load_schema(path)
    assert load_schema(path) == first  # the second read (the CLI reads --schema again) gets the same bytes
    assert first.names == ["a", "b", "kind"]


def test_schema_check_reads_a_process_substitution(tmp_path, capsys, fifo):
    text = _draft(tmp_path, capsys)
    code = main(["schema", "check", "--schema", fifo(text.encode()), "--csv", str(tmp_path / "t.csv")])
    out = capsys.readouterr()
    assert code == 0, out.err  # was: "schema file not found: '/dev/fd/63'"
    assert "schema OK" in out.out


def test_dash_reads_standard_input(tmp_path, capsys, monkeypatch):
    text = _draft(tmp_path, capsys)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode())))
    assert main(["schema", "check", "--schema", "-", "--csv", str(tmp_path / "t.csv")]) == 0
    assert "schema OK" in capsys.readouterr().out


def test_a_table_from_standard_input(capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(CSV)))
    assert main(["schema", "infer", "--csv", "-", "--no-label", "--quiet"]) == 0
    assert "name: kind" in capsys.readouterr().out


def test_schema_and_table_cannot_both_be_standard_input(capsys):
    assert main(["schema", "check", "--schema", "-", "--csv", "-"]) != 0
    assert "both name standard input" in capsys.readouterr().err


def test_a_missing_path_still_says_so(tmp_path, capsys):
    assert main(["schema", "check", "--schema", str(tmp_path / "nope.yaml")]) != 0
    assert "schema file not found" in capsys.readouterr().err


def test_sweep_reads_its_table_from_a_pipe_and_its_schema_from_another(tmp_path, capsys, fifo):
    text = _draft(tmp_path, capsys)
    table = fifo(CSV)
    schema_dir = tmp_path / "s"
    schema_dir.mkdir()
    schema = str(schema_dir / "pipe")
    os.mkfifo(schema)

    def write():
        with open(schema, "wb") as fh:
            fh.write(text.encode())

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    out = tmp_path / "sweep.csv"
    code = main(["sweep", "--csv", table, "--schema", schema, "--mechanisms", "pca", "--epsilons", "1", "--k", "1",
                 "--trials", "1", "--quiet", "--out", str(out)])
    writer.join(timeout=5)
    assert code == 0, capsys.readouterr().err
    assert out.read_text().count("\n") >= 2
