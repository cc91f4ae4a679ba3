"""Issue 31 item 6(c) and issue 36 item 3: ``dpcore audit --pair D.csv D2.csv --schema S`` audits the pipeline from
bytes (a refusal anywhere is an output), and any mechanism — a registered id or ``module:function`` — is audited with
the same power statement. 563c1b2 had neither: ``--pair`` and a module:function mechanism were usage errors."""

from __future__ import annotations

import json
import sys
import textwrap

import numpy as np
import pytest

from dpcore.audit import run_audit
from dpcore.audit.callables import CallableMechanism, callable_mechanism, load_callable
from dpcore.audit.files import file_pair, file_relation
from dpcore.cli import main
from dpcore.exceptions import DataError, InvalidParameterError

SCHEMA = ("dpcore_schema: 1\nformat: {kind: csv, encoding: utf-8, delimiter: ',', decimal: '.'}\n"
          "label: null\ncolumns:\n- {name: a, role: numeric, lower: 0, upper: 1}\n"
          "- {name: b, role: numeric, lower: 0, upper: 1}\n")

MODULE = textwrap.dedent('''
    import numpy as np

    def gauss(X, epsilon, delta, rng):
        """C plus symmetric noise far larger than any record's change (honest at ε = 1)."""
        d = X.shape[1]
        E = rng.normal(0.0, 20.0, (d, d))
        return X.T @ X + np.triu(E) + np.triu(E, 1).T

    def exact(X, epsilon, delta, rng):
        return X.T @ X

    def n_refusal(X, epsilon, delta, rng):
        if X.shape[0] > 30:
            raise ValueError("too many rows for this sampler")
        return gauss(X, epsilon, delta, rng)

    def top(X, epsilon, delta, rng):
        return np.linalg.eigh(X.T @ X)[1][:, -1:]

    def broken(X, epsilon):
        return X
''')


@pytest.fixture
def mechs(tmp_path, monkeypatch):
    (tmp_path / "audh_user_mechs.py").write_text(MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    load_callable.cache_clear()
    yield "audh_user_mechs"
    sys.modules.pop("audh_user_mechs", None)
    load_callable.cache_clear()


def _files(tmp_path, rows0: int = 30, extra: str | None = "0.9,0.8", replace: bool = False):
    rng = np.random.default_rng(0)
    body = [f"{a:.3f},{b:.3f}" for a, b in rng.uniform(0, 1, (rows0, 2))]
    other = list(body)
    if replace:
        other[5] = extra
    elif extra is not None:
        other.insert(7, extra)
    d0, d1, s = tmp_path / "d.csv", tmp_path / "d2.csv", tmp_path / "s.yaml"
    d0.write_text("a,b\n" + "\n".join(body) + "\n")
    d1.write_text("a,b\n" + "\n".join(other) + "\n")
    s.write_text(SCHEMA)
    return str(d0), str(d1), str(s)


def test_file_relation_reads_lines_as_records():
    assert file_relation(b"h\n1\n2\n", b"h\n1\n3\n") == "replace"
    assert file_relation(b"h\n1\n2\n", b"h\n1\n9\n2\n") == "add_remove"
    with pytest.raises(DataError):
        file_relation(b"h\n1\n2\n", b"h\n3\n4\n")
    with pytest.raises(DataError):
        file_relation(b"h\n1\n", b"h\n1\n2\n3\n")


def test_a_pair_of_files_is_loaded_and_preprocessed_with_the_schema(tmp_path):
    d0, d1, s = _files(tmp_path)
    pair = file_pair(d0, d1, s)
    assert pair.neighbouring == "add_remove" and pair.refused == (None, None)
    assert pair.D0.d == 2 and pair.D1.n == pair.D0.n + 1
    assert pair.as_dict()["n"] == [None, None]  # n is not printed (private under add/remove)


def test_an_n_dependent_refusal_in_the_pipeline_is_violated_under_add_remove(tmp_path, mechs, capsys):
    d0, d1, s = _files(tmp_path)  # 30 rows vs 31: the callable refuses above 30
    code = main(["audit", "--mechanism", f"{mechs}:n_refusal", "--claim-epsilon", "1", "--relation", "add_remove",
                 "--pair", d0, d1, "--schema", s, "--trials", "200", "--seed", "1", "--jobs", "1", "--no-power",
                 "--json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    result = json.loads(out.out)
    assert result["verdict"] == "violated" and result["counts"]["bottom"] in ([0, 200], [200, 0])


def test_a_one_row_file_is_no_longer_refused_by_the_loader_under_a_declared_format(tmp_path):
    """563c1b2's loader refused a file with a single data row and read its neighbour with two — a refusal that
    depends on n, private under add/remove (issue 31 item 5), which this audit flagged as violated. A declared format
    now reads any number of rows, so neither side refuses and the audit of the pipeline is not violated."""
    d0, d1, s = _files(tmp_path, extra="0.5,0.5")
    (tmp_path / "d.csv").write_text("a,b\n0.5,0.5\n")
    (tmp_path / "d2.csv").write_text("a,b\n0.5,0.5\n0.2,0.1\n")
    pair = file_pair(d0, d1, s)
    assert pair.refused == (None, None) and pair.neighbouring == "add_remove"
    r = run_audit("analyze_gauss", 1.0, 1e-5, neighbours=pair, trials=100, seed=2, power=False)
    assert r.verdict != "violated" and r.counts["bottom"] == [0, 0]


def test_the_honest_pipeline_is_not_violated(tmp_path, capsys):
    d0, d1, s = _files(tmp_path, replace=True)
    code = main(["audit", "--mechanism", "analyze_gauss", "--epsilon", "1", "--pair", d0, d1, "--schema", s,
                 "--trials", "400", "--seed", "3", "--jobs", "1", "--confidence", "0.999999"])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert "VIOLATED" not in out.out and "files" in out.out


def test_a_callable_is_audited_with_the_same_power_statement(mechs):
    honest = callable_mechanism(f"{mechs}:gauss", delta=1e-5)
    assert isinstance(honest, CallableMechanism) and honest.neighbourings == ("replace", "add_remove")
    r = run_audit(honest, 1.0, 1e-5, neighbours="unit_swap", trials=300, seed=4)
    assert r.verdict != "violated" and r.power and r.power[0]["mutant"] == "2ε"  # the claim's reference, as for ids
    leaky = run_audit(callable_mechanism(f"{mechs}:exact", delta=1e-5), 1.0, 1e-5, neighbours="unit_swap",
                      trials=100, seed=4, power=False)
    assert leaky.verdict == "violated"
    sub = run_audit(callable_mechanism(f"{mechs}:top", output="subspace"), 1.0, neighbours="zero_vs_unit",
                    trials=100, seed=4)
    assert sub.verdict == "violated"  # the exact top eigenvector flips with the canary


def test_a_callable_with_the_wrong_signature_or_shape_refuses_as_an_error_not_a_traceback(mechs, capsys):
    with pytest.raises(DataError.__mro__[1]):  # DPCoreError: every release refused the same way
        run_audit(callable_mechanism(f"{mechs}:broken", delta=1e-5), 1.0, 1e-5, neighbours="unit_swap", trials=30,
                  seed=5, power=False)
    for spec, words in (("no_such_module_audh:f", "cannot import module"), (f"{mechs}:missing", "no attribute"),
                        ("not a spec", "module:function")):
        with pytest.raises(InvalidParameterError, match=words):
            callable_mechanism(spec)
        if ":" not in spec:  # without a colon the CLI reads a registered id
            continue
        assert main(["audit", "--mechanism", spec, "--epsilon", "1"]) == 2
        err = capsys.readouterr().err
        assert words in err and "Traceback" not in err and err.count("\n") == 1
