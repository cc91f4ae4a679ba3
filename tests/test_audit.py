"""Tests of dpcore.audit (ε lower bounds), the ``dpcore audit`` CLI, and a deliberately broken sampler exhibit."""

from __future__ import annotations

import argparse
import itertools
import json
import math

import numpy as np
import pytest
from scipy import stats

from dpcore.audit import (
    NEIGHBOUR_CONSTRUCTIONS,
    clopper_pearson,
    epsilon_lower_bound,
    estimate_audit_seconds,
    make_neighbours,
    run_audit,
)
from dpcore.cli_audit import add_audit_parser, run_audit_command
from dpcore.data.prepared import PreparedData
from dpcore.exceptions import DataError, DPCoreError, InvalidParameterError, UnknownNameError
from dpcore.mechanisms.base import Mechanism, MechanismOutput
from dpcore.privacy import LedgerEntry
from dpcore.samplers.bingham import KentBinghamSampler

# ------------------------------------------------------------------------------------------------
# Clopper–Pearson and the bound
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("k", "n", "alpha", "lo", "hi"),
    [
        (0, 10, 0.05, 0.0, 0.3084971),
        (5, 10, 0.05, 0.187086, 0.812914),
        (10, 10, 0.05, 0.6915029, 1.0),
        (1, 20, 0.05, 0.001265, 0.248733),  # statsmodels proportion_confint(1, 20, method="beta")
    ],
)
def test_clopper_pearson_known_values(k, n, alpha, lo, hi):
    got = clopper_pearson(k, n, alpha)
    assert got == pytest.approx((lo, hi), abs=2e-6)


def test_clopper_pearson_matches_beta_quantiles():
    for k, n in [(3, 17), (40, 1000), (999, 1000)]:
        lo, hi = clopper_pearson(k, n, 0.01)
        assert lo == pytest.approx(stats.beta.ppf(0.005, k, n - k + 1), rel=1e-12)
        assert hi == pytest.approx(stats.beta.ppf(0.995, k + 1, n - k), rel=1e-12)


def test_clopper_pearson_rejects_bad_input():
    for args in [(11, 10, 0.05), (-1, 10, 0.05), (1, 0, 0.05), (1, 10, 0.0), (1, 10, 1.5)]:
        with pytest.raises(InvalidParameterError):
            clopper_pearson(*args)


def test_epsilon_lower_bound_formula_and_edge_cases():
    # hand-computed from the two one-sided intervals (each at α/2)
    lo0 = clopper_pearson(600, 1000, 0.05)[0]
    hi1 = clopper_pearson(0, 1000, 0.05)[1]
    assert epsilon_lower_bound(600, 1000, 0, 1000, alpha=0.05) == pytest.approx(math.log(lo0 / hi1))
    assert math.isfinite(epsilon_lower_bound(1000, 1000, 0, 1000))  # p₁_upper > 0 always
    assert epsilon_lower_bound(500, 1000, 500, 1000) == 0.0  # no evidence
    # δ is subtracted from the numerator's lower bound
    assert epsilon_lower_bound(600, 1000, 0, 1000, delta=0.5) < epsilon_lower_bound(600, 1000, 0, 1000)
    assert epsilon_lower_bound(10, 1000, 0, 1000, delta=0.5) == 0.0


# ------------------------------------------------------------------------------------------------
# Neighbours
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(NEIGHBOUR_CONSTRUCTIONS))
def test_builtin_neighbours_differ_by_one_unit_row(name):
    pair = make_neighbours(name)
    assert pair.D0.n == pair.D1.n and pair.neighbouring == "replace"
    assert np.count_nonzero(np.any(pair.D0.X != pair.D1.X, axis=1)) == 1
    u = pair.canary
    assert np.linalg.norm(u) == pytest.approx(1.0)
    assert np.allclose(pair.D1.C - pair.D0.C, np.outer(u, u))
    add_remove = make_neighbours(name, neighbouring="add_remove")
    assert add_remove.D1.n == add_remove.D0.n + 1


def test_zero_vs_unit_canary_flips_the_top_eigenvector():
    pair = make_neighbours("zero_vs_unit")
    v0, v1 = pair.D0.eigenvectors[:, 0], pair.D1.eigenvectors[:, 0]
    assert abs(v0 @ pair.canary) < 1e-12 and abs(v1 @ pair.canary) == pytest.approx(1.0)


def test_user_pair_is_checked():
    pair = make_neighbours("top_eigvec")
    assert make_neighbours((pair.D0, pair.D1)).neighbouring == "replace"
    X = pair.D1.X.copy()
    X[:2] = 0.0
    with pytest.raises(DataError):
        make_neighbours((pair.D0, PreparedData.from_unit_rows(X)))
    with pytest.raises(InvalidParameterError):
        make_neighbours("nope")


# ------------------------------------------------------------------------------------------------
# Audits of registered mechanisms
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("mid", "violation"), [("sn_imtiaz", 1 - math.exp(-1.0)),
                                                ("wishart_jiang", 1 - math.exp(-1.0 / 3))])
def test_invalid_wishart_mechanisms_are_violated_with_default_trials(mid, violation):
    r = run_audit(mid, 1.0, seed=11)
    assert r.verdict == "violated" and r.epsilon_lower_bound > 3.0
    assert r.statistic == "support" and r.delta == 0.0 and not r.truncated
    assert r.runtime_s < 30
    hits, n = r.counts["held_out_hits"], r.counts["held_out_n"]
    assert hits[1] == 0  # the support event is impossible under the neighbour
    lo, hi = clopper_pearson(hits[0], n[0], 1e-6)  # frequency matches spec §3.9/3.10
    assert lo <= violation <= hi
    assert r.counterexample_delta == pytest.approx(violation)
    assert violation - 0.05 < r.delta_lower_bound <= hi  # δ the claim would need at ε = 1


def test_runtime_estimate_is_positive_and_validates():
    assert 0 < estimate_audit_seconds("laplace", 1.0, 1000, pilot=5) < 60
    with pytest.raises(InvalidParameterError):
        estimate_audit_seconds("analyze_gauss", 1.0, 1000, delta=0.0)


@pytest.mark.parametrize("mid", ["laplace", "analyze_gauss", "mod_sulq"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_valid_mechanisms_are_consistent(mid, seed):
    r = run_audit(mid, 1.0, trials=1500, seed=seed)
    assert r.verdict == "consistent"
    assert 0.0 <= r.epsilon_lower_bound <= 1.0
    assert r.delta == (1e-5 if mid != "laplace" else 0.0)


def test_non_private_pca_is_caught_by_a_projection_threshold():
    r = run_audit("pca", 1.0, trials=300, seed=0)
    assert r.statistic == "quadratic" and r.verdict == "violated"
    r = run_audit("pca", 1.0, trials=300, seed=0, statistic="alignment")  # the flip of v̂₁
    assert r.verdict == "violated"
    r = run_audit("sn_imtiaz", 1.0, trials=600, seed=0, statistic="classifier")
    assert r.verdict == "violated"


def test_random_subspace_is_consistent():
    r = run_audit("random", 0.5, trials=1000, seed=5, statistic="alignment")
    assert r.verdict == "consistent" and r.epsilon_lower_bound < 0.5


def test_reversed_user_pair_uses_the_other_orientation():
    pair = make_neighbours("zero_vs_unit")
    r = run_audit("sn_imtiaz", 1.0, neighbours=(pair.D1, pair.D0), trials=1000, seed=3)
    assert r.verdict == "violated" and r.event["orientation"] == "D′ vs D"


def test_progress_time_limit_and_serialisation():
    calls = []
    r = run_audit("laplace", 1.0, trials=400, seed=0, progress=lambda done, total: calls.append((done, total)))
    assert calls[-1] == (800, 800) and all(a[0] <= b[0] for a, b in itertools.pairwise(calls))
    d = r.as_dict()
    json.dumps(d)
    for key in ("mechanism", "claimed_epsilon", "delta", "epsilon_lower_bound", "confidence", "trials", "verdict",
                "counts", "event", "samples", "runtime_s", "neighbours", "truncated"):
        assert key in d
    assert len(d["samples"]["D"]) == 400
    h = r.histogram(20)
    assert sum(h["counts"][0]) + h["nonfinite"][0] == 400

    t = run_audit("sn_imtiaz", 1.0, trials=10_000_000, seed=0, time_limit=0.5)
    assert t.truncated and 20 <= t.completed[0] < 10_000_000
    assert t.verdict == "violated"


def test_bad_arguments_raise_dpcore_errors():
    with pytest.raises(UnknownNameError):
        run_audit("nope", 1.0)
    with pytest.raises(InvalidParameterError):
        run_audit("laplace", -1.0)
    with pytest.raises(InvalidParameterError):
        run_audit("analyze_gauss", 1.0, delta=0.0)
    with pytest.raises(InvalidParameterError):
        run_audit("random", 1.0, statistic="support")
    with pytest.raises(InvalidParameterError):
        run_audit("laplace", 1.0, trials=5)
    with pytest.raises(InvalidParameterError):
        run_audit("laplace", 1.0, statistic="magic")
    with pytest.raises(InvalidParameterError):
        run_audit("laplace", 1.0, bogus_option=1)


# ------------------------------------------------------------------------------------------------
# CLI
# ------------------------------------------------------------------------------------------------


def _parse(argv):
    parser = argparse.ArgumentParser(prog="dpcore")
    add_audit_parser(parser.add_subparsers(dest="command"))
    return parser.parse_args(["audit", *argv])


def test_cli_json(capsys):
    args = _parse(["--mechanism", "wishart_jiang", "--epsilon", "1", "--trials", "1000", "--seed", "2", "--json"])
    assert run_audit_command(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["mechanism"] == "wishart_jiang" and out["verdict"] == "violated"
    assert out["claimed_epsilon"] == 1.0 and out["delta"] == 0.0 and out["trials"] == 1000
    assert out["confidence"] == 0.95 and out["epsilon_lower_bound"] > 1.0


def test_cli_summary_and_options(capsys):
    args = _parse(["--mechanism", "laplace", "--epsilon", "1", "--trials", "500", "--seed", "2",
                   "--option", "sensitivity=tight"])
    assert run_audit_command(args) == 0
    out = capsys.readouterr().out
    assert "CONSISTENT" in out and "not a proof of privacy" in out


@pytest.mark.parametrize("argv", [
    ["--mechanism", "nope", "--epsilon", "1"],
    ["--mechanism", "laplace", "--epsilon", "0"],
    ["--mechanism", "analyze_gauss", "--epsilon", "1", "--delta", "0"],
    ["--mechanism", "laplace", "--epsilon", "1", "--trials", "3"],
    ["--mechanism", "laplace", "--epsilon", "1", "--option", "nokeyvalue"],
])
def test_cli_bad_arguments_exit_2_with_one_line(argv, capsys):
    assert run_audit_command(_parse(argv)) == 2
    err = capsys.readouterr().err.strip()
    assert err and "\n" not in err and "Traceback" not in err


def test_cli_argparse_rejects_non_numbers():
    with pytest.raises(SystemExit) as exc:
        _parse(["--mechanism", "laplace", "--epsilon", "abc"])
    assert exc.value.code == 2


# ------------------------------------------------------------------------------------------------
# A deliberately broken "always accept" Bingham sampler (OpenDP #2416) — test-only, never registered
# ------------------------------------------------------------------------------------------------


class AlwaysAcceptBingham(KentBinghamSampler):
    """The OpenDP #2416 bug: every ACG proposal is accepted, so samples follow the envelope, not the Bingham."""

    def _accept(self, log_u, log_r):
        return np.ones_like(log_u, dtype=bool)


class ToyBinghamPCA(Mechanism):
    """k = 1 exponential mechanism: v̂ ∝ exp((ε/2)·vᵀCv) on the sphere (score sensitivity 1)."""

    id = "toy_bingham_pca"
    name = "Toy exponential-mechanism PCA (test only)"
    summary = "test fixture"
    reference = "test fixture"
    guarantee = "pure"
    output = "subspace"
    sampler_class = KentBinghamSampler

    def _release(self, data, k, epsilon, delta, *, neighbouring, rng, deadline, **options):
        v = self.sampler_class.from_score(data.C, epsilon / 2).sample(rng, deadline)
        return MechanismOutput(ledger=[LedgerEntry("Bingham draw", epsilon)], subspace=v[:, None])


class BrokenToyBinghamPCA(ToyBinghamPCA):
    id = "toy_bingham_pca_broken"
    sampler_class = AlwaysAcceptBingham


def _exact_bin_probabilities(C, c, edges, grid=400_001):
    """P(|⟨v, e₁⟩| ∈ bin) for v ∝ exp(c·vᵀCv) on the circle, by fine numerical integration over the angle."""
    theta = np.linspace(0.0, 2 * np.pi, grid, endpoint=False)
    v = np.stack([np.cos(theta), np.sin(theta)])
    logf = c * np.einsum("in,ij,jn->n", v, C, v)
    w = np.exp(logf - logf.max())
    idx = np.clip(np.searchsorted(edges, np.abs(v[0]), side="right") - 1, 0, len(edges) - 2)
    p = np.bincount(idx, weights=w, minlength=len(edges) - 1)
    return p / p.sum()


def test_broken_sampler_is_caught_by_a_distribution_test_and_correct_one_passes():
    # Honest note: the always-accept sampler draws from the ACG envelope, which is *flatter* than the Bingham
    # target, so an ε audit does not find a privacy violation (measured: lower bounds ≤ the claim for all three
    # canaries and ε ∈ {1, 4, 10}); the bug is caught by comparing |⟨v̂, u⟩| with its exact law (chi-square).
    C = np.array([[8.0, 0.0], [0.0, 2.0]])
    c = 0.5  # ε = 1
    edges = np.linspace(0.0, 1.0, 21)
    p = _exact_bin_probabilities(C, c, edges)
    n = 20_000
    pvalues = {}
    for cls in (KentBinghamSampler, AlwaysAcceptBingham):
        x = cls.from_score(C, c).sample_many(n, np.random.default_rng(123))
        counts = np.histogram(np.abs(x[:, 0]), edges)[0]
        pvalues[cls.__name__] = stats.chisquare(counts, n * p).pvalue
    assert pvalues["KentBinghamSampler"] > 1e-6
    assert pvalues["AlwaysAcceptBingham"] < 1e-6


def test_audit_of_correct_toy_sampler_is_consistent():
    r = run_audit(ToyBinghamPCA(), 1.0, trials=500, seed=4)
    assert r.statistic == "alignment" and r.verdict == "consistent"
    broken = run_audit(BrokenToyBinghamPCA(), 1.0, trials=300, seed=4)
    assert broken.mechanism == "toy_bingham_pca_broken"  # runs; its verdict is not evidence either way


def test_audit_of_anything_raises_only_dpcore_errors_for_bad_pairs():
    pair = make_neighbours("zero_vs_unit")
    with pytest.raises(DPCoreError):
        run_audit("laplace", 1.0, neighbours=(pair.D0, np.zeros((3, 5))))
