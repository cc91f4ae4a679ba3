"""Issue 31 item 6(c): in a pipeline audit a refusal in loading or preprocessing is an output. A side whose file the
pipeline refuses refuses every release, so a refusal that one record decides (here: a loader that refuses above a
row count, i.e. on n, private under add/remove) is "violated" — whatever the real loader's rules are today."""

from __future__ import annotations

import pytest

from dpcore.audit import files as audit_files
from dpcore.audit import run_audit
from dpcore.exceptions import DataError

SCHEMA = ("dpcore_schema: 1\nformat: {kind: csv, encoding: utf-8, delimiter: ',', decimal: '.'}\n"
          "label: null\ncolumns:\n- {name: a, role: numeric, lower: 0, upper: 1}\n"
          "- {name: b, role: numeric, lower: 0, upper: 1}\n")


@pytest.fixture
def n_refusing_loader(monkeypatch):
    real = audit_files._load_side

    def load(raw, name, schema, relation, options):
        if raw.count(b"\n") > 21:  # header + 20 rows
            raise DataError("the file has more than 20 rows")
        return real(raw, name, schema, relation, options)

    monkeypatch.setattr(audit_files, "_load_side", load)


def _pair(tmp_path):
    """D: 20 rows; D′: the same and one more (add/remove neighbours as files)."""
    rows = [f"{0.03 * i:.2f},{0.5:.2f}" for i in range(20)]
    (tmp_path / "d.csv").write_text("a,b\n" + "\n".join(rows) + "\n")
    (tmp_path / "d2.csv").write_text("a,b\n" + "\n".join([*rows, "0.9,0.9"]) + "\n")
    (tmp_path / "s.yaml").write_text(SCHEMA)
    return audit_files.file_pair(tmp_path / "d.csv", tmp_path / "d2.csv", str(tmp_path / "s.yaml"))


def test_a_load_refusal_on_one_side_is_an_output_and_violates_the_claim(tmp_path, n_refusing_loader):
    pair = _pair(tmp_path)
    assert pair.neighbouring == "add_remove" and pair.refused[0] is None and pair.refused[1] is not None
    assert pair.as_dict()["n"] == [None, None]
    r = run_audit("analyze_gauss", 1.0, 1e-5, neighbours=pair, trials=100, seed=2, power=False)
    assert r.verdict == "violated" and r.counts["bottom"] == [0, 100]


def test_the_same_refusal_on_both_sides_is_raised_not_audited(tmp_path, monkeypatch):
    def refuse(raw, name, schema, relation, options):
        raise DataError("this schema cannot read these files")

    monkeypatch.setattr(audit_files, "_load_side", refuse)
    pair = _pair(tmp_path)
    with pytest.raises(DataError, match="cannot read"):
        run_audit("analyze_gauss", 1.0, 1e-5, neighbours=pair, trials=50, seed=3, power=False)
