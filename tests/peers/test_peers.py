"""Peers (issue 36): OpenDP's and diffprivlib's PCA beside ours, run in their own Python, and their samplers' law test.

Two kinds of tests. The first block needs no peer library: ids, labels, refusals and the stored verdicts. The second
needs the peers' Python (``make peers`` builds ``.venv-peers``); without it those tests skip with the reason, and
with ``DPCORE_PEERS_REQUIRED=1`` (CI's peer step) a missing peers' Python fails them instead.
"""

from __future__ import annotations

import json
import os

import numpy as np
import pandas as pd
import pytest

import dpcore.peers as peers
from dpcore.cli import main
from dpcore.data import load_dataset, preprocess
from dpcore.evaluation.sweep import PEER_NO_GUARANTEE, run_sweep
from dpcore.exceptions import DPCoreError, InvalidMechanismError, InvalidParameterError, MechanismTimeout
from dpcore.mechanisms import get_mechanism, mechanism_ids
from dpcore.peers.law import LAW_FILE, guarantee_for_peer, stored_verdict, verdict_line
from dpcore.vocabulary import Guarantee, Neighbouring


def _peers_python() -> str:
    status = peers.peers_status()
    if status.python is None:
        if os.environ.get("DPCORE_PEERS_REQUIRED") == "1":
            pytest.fail(f"DPCORE_PEERS_REQUIRED=1 but the peers are not available: {status.reason}")
        pytest.skip(f"peer libraries not installed: {status.reason}")
    return status.python


@pytest.fixture(scope="module")
def wine():
    return preprocess(load_dataset("wine"))


# ------------------------------------------------------------------ without the peer libraries

def test_peers_are_not_registered_mechanisms_but_resolve_by_id():
    assert not any(peers.is_peer(m) for m in mechanism_ids())
    for pid, name in (("peer:opendp", "OpenDP PCA"), ("peer:diffprivlib", "diffprivlib PCA")):
        mech = get_mechanism(pid)
        assert (mech.id, mech.name, mech.output) == (pid, name, "subspace")
        assert mech.neighbourings == (Neighbouring.REPLACE,)
    with pytest.raises(DPCoreError, match="peer:opendp, peer:diffprivlib"):
        get_mechanism("peer:nope")


def test_stored_verdicts_reject_both_samplers_and_say_how_to_recompute():
    data = json.loads(LAW_FILE.read_text(encoding="utf-8"))
    assert data["command"].startswith("python -m dpcore.peers.law --write")
    assert data["ours"]["verdict"] == "conforms"
    for key in ("opendp", "diffprivlib"):
        v = stored_verdict(key)
        assert v["verdict"] == "rejected" and v["p_value"] < 1e-6 and v["z_mean_t"] > 10
        assert guarantee_for_peer(key) == Guarantee.CLAIMED_INVALID
        line = verdict_line(key)
        assert "different law than its privacy proof assumes" in line and "z ≈ +" in line


def test_peer_guarantee_comes_from_the_stored_verdict_only(monkeypatch):
    """The label is a public fact (a verdict on a public target), so a conforming verdict would say what it claims
    and a missing one is not shown as private."""
    from dpcore.peers import law

    monkeypatch.setattr(law, "_stored", lambda: {"peers": {"opendp": {"verdict": "conforms"}}})
    assert guarantee_for_peer("opendp") == Guarantee.PURE
    assert guarantee_for_peer("diffprivlib") == Guarantee.CLAIMED_INVALID


def test_peer_release_needs_allow_invalid_with_its_own_reason(wine):
    with pytest.raises(InvalidMechanismError, match="different law than its privacy proof assumes"):
        get_mechanism("peer:opendp").release(wine, 2, 1.0)


def test_peers_refuse_add_remove_with_the_fix():
    with pytest.raises(InvalidParameterError, match="replace-one only"):
        peers.peers_for_sweep(Neighbouring.ADD_REMOVE)


def test_missing_peers_give_a_clear_error_naming_make_peers(monkeypatch, capsys):
    monkeypatch.setattr(peers, "peer_candidates", lambda: [])
    peers._status.cache_clear()
    try:
        with pytest.raises(InvalidParameterError, match="make peers"):
            peers.peers_for_sweep(Neighbouring.REPLACE)
        code = main(["sweep", "--dataset", "wine", "--mechanisms", "itu", "--epsilons", "1", "--peers",
                     "--out", "-", "--quiet"])
        assert code == 2 and "make peers" in capsys.readouterr().err
    finally:
        peers._status.cache_clear()


# ------------------------------------------------------------------ with the peers' Python

@pytest.mark.slow
def test_peer_fits_on_the_same_rows_give_orthonormal_bases(wine):
    _peers_python()
    for pid in peers.PEER_IDS:
        rel = get_mechanism(pid).release(wine, 3, 0.5, allow_invalid=True, random_state=1, time_limit=120)
        V = rel.subspace
        assert V.shape == (wine.d, 3)
        assert np.allclose(V.T @ V, np.eye(3), atol=1e-8)
        assert rel.guarantee == Guarantee.CLAIMED_INVALID
        assert rel.total_budget == (0.5, 0.0)
        assert rel.diagnostics["peer_fit_s"] > 0


@pytest.mark.slow
def test_a_peer_past_its_time_cap_is_a_timeout():
    """digits at ε = 10: acceptance collapses (minutes a fit); the cap stops the child process."""
    _peers_python()
    digits = preprocess(load_dataset("digits"))
    with pytest.raises(MechanismTimeout, match="time cap"):
        get_mechanism("peer:diffprivlib").release(digits, 5, 10.0, allow_invalid=True, time_limit=4)


@pytest.mark.slow
def test_a_peer_error_shows_its_type_only_never_its_message():
    """A peer's exception text may quote values computed from the rows: only the type leaves the child."""
    _peers_python()
    from dpcore.peers.adapters import PeerError, run_worker

    with pytest.raises(PeerError) as info:
        run_worker({"task": "fit", "peer": "diffprivlib", "epsilon": -1.0, "k": 1, "seed": 0},
                   np.full((5, 2), 0.1), timeout=120, what="diffprivlib PCA")
    assert "ValueError" in str(info.value) and "Epsilon" not in str(info.value)


@pytest.mark.slow
def test_peer_worker_writes_nothing_to_disk(tmp_path, monkeypatch, wine):
    _peers_python()
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    get_mechanism("peer:diffprivlib").release(wine, 2, 0.5, allow_invalid=True, random_state=3, time_limit=120)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_sweep_with_peers_labels_their_rows_not_private(wine):
    _peers_python()
    frame = run_sweep(wine, mechanisms=["itu", *peers.PEER_IDS], epsilons=[0.5], ks=[2], trials=1, seed=4,
                      allow_invalid=True, time_cap=120)
    rows = frame.set_index("mechanism")
    assert set(rows.index) == {"itu", *peers.PEER_IDS}
    for pid in peers.PEER_IDS:
        assert rows.loc[pid, "status"] == "ok"
        assert 0 < rows.loc[pid, "captured_variance_ratio"] <= 1
        assert not rows.loc[pid, "end_to_end_private"]
        assert rows.loc[pid, "non_private_steps"] == PEER_NO_GUARANTEE
    assert bool(rows.loc["itu", "end_to_end_private"])


@pytest.mark.slow
def test_cli_sweep_peers_adds_both_with_their_law_verdicts(tmp_path, capsys):
    _peers_python()
    out = tmp_path / "s.csv"
    code = main(["sweep", "--dataset", "wine", "--mechanisms", "itu", "--epsilons", "0.5", "--k", "2", "--trials",
                 "1", "--seed", "2", "--jobs", "1", "--time-cap", "120", "--peers", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 0
    frame = pd.read_csv(out)
    assert list(frame["mechanism"]) == ["itu", *peers.PEER_IDS]
    assert "OpenDP PCA" in err and "diffprivlib PCA" in err and "different law" in err


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_peer_samplers_fail_the_law_test_ours_passes():
    """The live check of the stored verdict, with fewer draws: the same conformance test (same target, α = 1e-6)
    passes our sampler and rejects both peers' samplers, whose draws sit nearer the top eigenvector (z > 0)."""
    _peers_python()
    from dpcore.peers.law import law_test
    from dpcore.samplers.conformance import sampler_conformance

    assert sampler_conformance(draws=2000, seed=5).conforms
    for key in ("opendp", "diffprivlib"):
        res = law_test(key, draws=2000, seed=5)
        assert res["verdict"] == "rejected" and res["p_value"] < 1e-6, res
        assert res["z_mean_t"] > 10
