"""The audit catches each leak class found by the 2026-11-23 privacy review, with deliberately leaky test-only
mechanisms (never registered), and stays quiet on honest ones.

Leak classes: (a) a release that uses the exact n under add/remove (eigenvalues clipped to [0, n]: an atom at n − 1
that the bigger dataset never produces); (b) a basis computed from the rows inside a data-independent (or exactly
selected) subspace (determinism probe; basis atoms); (c) a support event at a large claimed ε (a δ bound from a
structural witness, where a ratio of frequencies is capped near ln(trials)). Statistical assertions run the audit
at confidence 1 − 1e-6, so "consistent" fails spuriously with probability ≤ 1e-6 and the leaks are found with a
wide margin.
"""

from __future__ import annotations

import argparse
import json
import math

import numpy as np
import pytest

from dpcore.audit import (
    CONSTRUCTIONS,
    NEIGHBOUR_CONSTRUCTIONS,
    audit_all_relations,
    clopper_pearson,
    combined_verdict,
    delta_lower_bound,
    determinism_probe,
    make_neighbours,
    max_certifiable_epsilon,
    run_audit,
    trials_to_certify,
)
from dpcore.audit.bounds import cp_lower, cp_upper
from dpcore.cli.audit import add_audit_parser, run_audit_command
from dpcore.core.noise import symmetric_gaussian, uniform_stiefel
from dpcore.core.privacy import LedgerEntry
from dpcore.exceptions import DataError, InvalidParameterError
from dpcore.mechanisms.base import Mechanism, MechanismOutput

CONF = 1 - 1e-6


# ------------------------------------------------------------------------------------------------
# Test-only mechanisms (not registered)
# ------------------------------------------------------------------------------------------------


class _Fixture(Mechanism):
    summary = "test fixture"
    reference = "test fixture"


class ClipToNLeak(_Fixture):
    """Gaussian noise on C, released eigenvalues clipped to [0, n] with the exact n — also under add/remove."""

    id = "test_clip_to_n"
    name = "Eigenvalues clipped to the exact n (test only, leaks n under add/remove)"
    guarantee = "approx"
    output = "covariance"
    uses_delta = True

    def _release(self, data, k, epsilon, delta, *, neighbouring, rng, deadline, **options):
        noisy = data.C + symmetric_gaussian(data.d, 4.0, rng)
        lam = np.clip(np.linalg.eigvalsh(noisy)[::-1], 0.0, float(data.n))  # the bug: n is private under add/remove
        return MechanismOutput(ledger=[LedgerEntry("Gaussian noise", epsilon, delta)], covariance=noisy,
                               eigenvalues=lam)


class HonestGauss(ClipToNLeak):
    """The same noise with no clipping to n."""

    id = "test_honest_gauss"
    name = "Gaussian noise on C (test only)"

    def _release(self, data, k, epsilon, delta, *, neighbouring, rng, deadline, **options):
        noisy = data.C + symmetric_gaussian(data.d, 4.0, rng)
        return MechanismOutput(ledger=[LedgerEntry("Gaussian noise", epsilon, delta)], covariance=noisy)


class RowBasisLeak(_Fixture):
    """Releases the fixed plane span(e₁, e₂) (0-DP) through the rows' own singular vectors inside it."""

    id = "test_row_basis"
    name = "Fixed plane, basis from the rows (test only)"
    guarantee = "pure"
    output = "subspace"

    def _release(self, data, k, epsilon, delta, *, neighbouring, rng, deadline, **options):
        P = np.zeros((data.d, data.d))
        P[0, 0] = P[1, 1] = 1.0
        basis = np.linalg.svd(data.X @ P, full_matrices=False)[2][:k].T  # the bug: depends on the rows
        return MechanismOutput(ledger=[LedgerEntry("fixed plane", 0.0)], subspace=basis)


class RandomBasisInPlane(RowBasisLeak):
    """The fixed plane through a basis drawn from fresh randomness only (the fix)."""

    id = "test_random_basis"
    name = "Fixed plane, random basis (test only)"

    def _release(self, data, k, epsilon, delta, *, neighbouring, rng, deadline, **options):
        plane = np.eye(data.d)[:, :2]
        return MechanismOutput(ledger=[LedgerEntry("fixed plane", 0.0)],
                               subspace=plane @ uniform_stiefel(2, k, rng))


class CanonicalSelection(_Fixture):
    """Non-private exact selection with a canonical basis: span(e₁, e₂) on D, span(e₁, e₃) on D′."""

    id = "test_canonical_selection"
    name = "Exact selection, canonical basis (test only)"
    guarantee = "pure"
    output = "subspace"

    def _release(self, data, k, epsilon, delta, *, neighbouring, rng, deadline, **options):
        second = 1 if data.X[-1, 0] == 0.0 else 2
        return MechanismOutput(ledger=[LedgerEntry("selection", epsilon)], subspace=np.eye(data.d)[:, [0, second]])


class SmallWishart(_Fixture):
    """Wishart noise with d + 2 degrees of freedom, claimed (ε, δ)-DP at large ε: the support event has
    probability P(χ²₃ ≤ 1) ≈ 0.20 under D and 0 under D′."""

    id = "test_small_wishart"
    name = "Wishart with few degrees of freedom (test only)"
    guarantee = "approx"
    output = "covariance"
    uses_delta = True

    def _release(self, data, k, epsilon, delta, *, neighbouring, rng, deadline, **options):
        Z = rng.standard_normal((data.d + 2, data.d))
        return MechanismOutput(ledger=[LedgerEntry("Wishart noise", epsilon, delta)], covariance=data.C + Z.T @ Z)


def _parse(argv):
    parser = argparse.ArgumentParser(prog="dpcore")
    add_audit_parser(parser.add_subparsers(dest="command"))
    return parser.parse_args(["audit", *argv])


# ------------------------------------------------------------------------------------------------
# Bounds
# ------------------------------------------------------------------------------------------------


def test_scalar_and_vectorised_clopper_pearson_agree_and_handle_the_edges():
    for k, n in [(0, 50), (1, 50), (25, 50), (49, 50), (50, 50), (3, 7)]:
        lo, hi = clopper_pearson(k, n, 0.02)  # binomtest, each end at 1 − 0.01
        assert float(cp_lower(k, n, 0.01)) == pytest.approx(lo, rel=1e-9, abs=1e-12)
        assert float(cp_upper(k, n, 0.01)) == pytest.approx(hi, rel=1e-9, abs=1e-12)
    assert clopper_pearson(0, 50)[0] == 0.0 and clopper_pearson(50, 50)[1] == 1.0


def test_delta_bound_structural_and_ratio_forms():
    lo = clopper_pearson(200, 1000, 0.05)[0]
    assert delta_lower_bound(200, 1000, 0, 1000, 10.0, 0.05, structural=True) == pytest.approx(
        clopper_pearson(200, 1000, 0.1)[0])
    # the ratio form is useless at ε = 10 with 1000 trials: e^10 · p₁⁺ ≫ 1
    assert delta_lower_bound(200, 1000, 0, 1000, 10.0, 0.05) == 0.0
    assert 0 < delta_lower_bound(200, 1000, 0, 1000, 0.5, 0.05) < lo
    with pytest.raises(InvalidParameterError):
        delta_lower_bound(200, 1000, 3, 1000, 1.0, structural=True)


def test_certifiable_epsilon_grows_like_log_trials():
    a = 0.0125
    for n in (100, 1_000, 10_000):
        assert max_certifiable_epsilon(n, 0.0, a) == pytest.approx(math.log(n / math.log(1 / a)), abs=0.15)
    n = trials_to_certify(6.0, 0.0, a)
    assert max_certifiable_epsilon(n, 0.0, a) > 6.0 >= max_certifiable_epsilon(int(n / 1.2), 0.0, a)


# ------------------------------------------------------------------------------------------------
# Neighbours
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(NEIGHBOUR_CONSTRUCTIONS))
@pytest.mark.parametrize("relation", ["replace", "add_remove"])
def test_every_construction_exists_for_both_relations(name, relation):
    pair = make_neighbours(name, neighbouring=relation, n=40)
    assert pair.neighbouring == relation and pair.D1.n == 40
    assert pair.D0.n == (40 if relation == "replace" else 39)
    assert make_neighbours((pair.D0, pair.D1)).neighbouring == relation  # the user-pair check agrees
    assert make_neighbours(name).neighbouring == CONSTRUCTIONS[name].default_relation


def test_copies_and_in_plane_constructions():
    pair = make_neighbours("copies_add_remove", n=21)
    assert pair.neighbouring == "add_remove" and (pair.D0.n, pair.D1.n) == (20, 21)
    assert np.allclose(pair.D0.X, np.eye(3)[0]) and np.allclose(pair.D1.C - pair.D0.C, np.diag([1.0, 0, 0]))
    plane = make_neighbours("in_plane", n=70)
    assert plane.invariant == "projector" and (plane.D0.n, plane.D1.n) == (70, 70)
    assert np.all(plane.D0.X[:, 2:] == 0) and np.all(plane.D1.X[:, 2:] == 0)
    angles = np.mod(np.arctan2(plane.D1.X[:, 1], plane.D1.X[:, 0]), np.pi)
    assert np.unique(np.round(angles, 9)).size == 70  # no two points on one line through 0
    with pytest.raises(DataError):
        make_neighbours((plane.D0, plane.D1), neighbouring="add_remove")


def test_relation_is_checked_against_the_mechanism():
    with pytest.raises(InvalidParameterError):
        run_audit("ss_approx", 1.0, neighbouring="add_remove", trials=20)  # declares replace-one only
    with pytest.raises(InvalidParameterError):
        run_audit("laplace", 1.0, neighbouring="sideways", trials=20)


# ------------------------------------------------------------------------------------------------
# (a) The exact n under add/remove
# ------------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_clip_to_exact_n_under_add_remove_is_an_atom_witness():
    r = run_audit(ClipToNLeak(), 1.0, neighbours="copies_add_remove", n=21, statistic="atom", trials=1000, seed=3,
                  confidence=CONF)
    assert r.neighbouring == "add_remove" and r.verdict == "violated" and r.structural
    assert r.field == "eigenvalues" and r.event["direction"] == "=="
    assert r.event["threshold"] in (20.0, 21.0)  # n − 1 under D, or n under D′
    assert r.counts["held_out_hits"][1] == 0 and r.delta_lower_bound > 0.3
    assert "can never produce" in r.summary() and "point mass" in r.summary()
    auto = run_audit(ClipToNLeak(), 1.0, neighbours="copies_add_remove", n=21, trials=1000, seed=3, confidence=CONF)
    assert auto.verdict == "violated"


@pytest.mark.slow
def test_clip_to_n_is_harmless_under_replace_one_and_all_relations_are_audited():
    results = audit_all_relations(ClipToNLeak(), 1.0, neighbours="copies_add_remove", n=21, trials=1000, seed=4,
                                  confidence=CONF, power=False)
    assert [r.neighbouring for r in results] == ["replace", "add_remove"]
    assert [r.verdict for r in results] == ["inconclusive", "violated"]  # n is public under replace-one
    assert results[0].inconclusive_reason == "unchecked"  # not flagged; without a power check never "consistent"
    assert all(r.confidence == pytest.approx(1 - 0.5e-6) for r in results)
    assert combined_verdict(results) == "violated"


@pytest.mark.parametrize("mech", [HonestGauss(), "analyze_gauss", "laplace"])
def test_honest_mechanisms_are_not_flagged_on_the_copies_pair(mech):
    r = run_audit(mech, 1.0, neighbours="copies_add_remove", n=21, trials=1000, seed=5, confidence=CONF, power=False)
    assert r.neighbouring == "add_remove" and not r.violated and not r.structural


# ------------------------------------------------------------------------------------------------
# (b) A basis that depends on the rows
# ------------------------------------------------------------------------------------------------


def test_determinism_probe_finds_a_row_dependent_basis():
    p = determinism_probe(RowBasisLeak(), 1.0, seeds=5, seed=0)
    assert p.verdict == "leak" and p.leak and p.leaking_fields == ["subspace"]
    assert p.invariant_equal == p.compared == 5 and p.differences["subspace"] > 1e-3
    assert "identical seeds, indistinguishable neighbours, different outputs" in p.reason
    json.dumps(p.as_dict())
    ok = determinism_probe(RandomBasisInPlane(), 1.0, seeds=5, seed=0)
    assert ok.verdict == "passed" and ok.differences["subspace"] <= 1e-8


def test_determinism_probe_of_registered_ss_exact_passes():
    p = determinism_probe("ss_exact", 1.0, 1e-5, seeds=6, seed=1)
    assert p.verdict == "passed" and p.compared == p.invariant_equal == 6


def test_determinism_probe_says_not_applicable_when_the_private_part_differs():
    assert determinism_probe("analyze_gauss", 1.0, seeds=3, seed=0).verdict == "not applicable"
    assert determinism_probe(RowBasisLeak(), 1.0, k=3, seeds=2, seed=0).verdict == "not applicable"  # k = d
    with pytest.raises(InvalidParameterError):
        determinism_probe(RowBasisLeak(), 1.0, seed=-1)


def test_basis_atoms_are_structural_only_when_the_other_side_releases_the_same_subspace():
    leak = run_audit(RowBasisLeak(), 1.0, neighbours="in_plane", n=70, k=2, statistic="atom", field="subspace",
                     trials=200, seed=0, confidence=CONF)
    assert leak.verdict == "violated" and leak.structural and leak.delta_lower_bound > 0.8
    assert leak.event["variable"].startswith("basis entry")
    honest = run_audit(RandomBasisInPlane(), 1.0, neighbours="in_plane", n=70, k=2, trials=400, seed=0,
                       confidence=CONF, power=False)
    assert not honest.violated
    # different subspaces with canonical bases: a plain (non-private) leak, but no structural claim on the basis
    other = run_audit(CanonicalSelection(), 1.0, neighbours="zero_vs_unit", k=2, statistic="atom", field="subspace",
                      trials=200, seed=0, confidence=CONF)
    assert other.verdict == "violated" and not other.structural


# ------------------------------------------------------------------------------------------------
# (c) Large ε: a support witness bounds δ; without one the audit says inconclusive
# ------------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_support_witness_at_large_epsilon_bounds_delta():
    r = run_audit(SmallWishart(), 10.0, 1e-5, neighbours="zero_vs_unit", trials=1000, seed=6, confidence=CONF)
    assert r.verdict == "violated" and r.structural and r.statistic == "support"
    assert r.epsilon_lower_bound < 10.0  # the ratio alone could not refute ε = 10 …
    assert r.max_certifiable_epsilon < 10.0
    assert 0.08 < r.delta_lower_bound < 0.2 + 1e-9  # … the structural δ bound does (P(χ²₃ ≤ 1) ≈ 0.199)
    assert r.counts["held_out_hits"][1] == 0
    d = r.as_dict(include_samples=False)
    assert d["verdict"] == "violated" and d["structural"] and d["delta_lower_bound"] == r.delta_lower_bound


def test_claims_beyond_the_design_are_inconclusive():
    r = run_audit("random", 10.0, neighbours="zero_vs_unit", trials=500, seed=7, statistic="alignment",
                  confidence=CONF)
    assert r.verdict == "inconclusive" and r.inconclusive and not r.violated
    assert r.max_certifiable_epsilon < 10.0 and r.trials_needed > 100_000
    assert "INCONCLUSIVE" in r.summary() and "could not have refuted" in r.summary()
    small = run_audit("random", 1.0, neighbours="zero_vs_unit", trials=500, seed=7, statistic="alignment",
                      confidence=CONF)
    assert small.verdict == "inconclusive" and small.inconclusive_reason == "no_reference"  # a subspace output


def test_every_release_draws_fresh_randomness():
    r = run_audit(HonestGauss(), 1.0, neighbours="zero_vs_unit", trials=300, seed=8, statistic="quadratic",
                  field="covariance", power=False)
    for side in r.samples:
        assert np.unique(side).size == side.size
    assert not np.allclose(r.samples[0] - r.samples[1], r.samples[0][0] - r.samples[1][0])


def test_field_and_statistic_choices_are_checked():
    r = run_audit(ClipToNLeak(), 1.0, neighbours="copies_add_remove", n=21, field="covariance_post", trials=200,
                  seed=0, power=False)
    assert r.field == "covariance_post" and not r.violated  # the leak is only in the eigenvalues field
    with pytest.raises(InvalidParameterError):
        run_audit("random", 1.0, field="covariance", trials=20)
    with pytest.raises(InvalidParameterError):
        run_audit("laplace", 1.0, statistic="support", field="subspace", trials=20)
    with pytest.raises(InvalidParameterError):
        run_audit("laplace", 1.0, field="nope", trials=20)


# ------------------------------------------------------------------------------------------------
# CLI
# ------------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_cli_all_relations_json(capsys):
    argv = ["--mechanism", "analyze_gauss", "--epsilon", "1", "--neighbours", "copies_add_remove", "--n", "21",
            "--neighbouring", "all", "--trials", "300", "--seed", "1", "--json"]
    assert run_audit_command(_parse(argv)) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["verdict"] in ("consistent", "inconclusive", "violated") and "delta_lower_bound" in out
    assert [r["neighbouring"] for r in out["results"]] == ["replace", "add_remove"]
    for r in out["results"]:
        assert {"verdict", "delta_lower_bound", "structural", "max_certifiable_epsilon", "field"} <= set(r)


def test_cli_probe_and_field(capsys):
    assert run_audit_command(_parse(["--mechanism", "ss_exact", "--epsilon", "1", "--probe", "--probe-seeds", "3",
                                     "--seed", "0", "--json"])) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["kind"] == "determinism_probe" and out["verdict"] == "passed" and out["seeds"] == 3
    assert run_audit_command(_parse(["--mechanism", "laplace", "--epsilon", "1", "--field", "covariance_post",
                                     "--statistic", "quadratic", "--trials", "200", "--seed", "0",
                                     "--neighbours", "zero_vs_unit"])) == 0
    assert "on covariance_post" in capsys.readouterr().out
    assert run_audit_command(_parse(["--mechanism", "ss_exact", "--epsilon", "1", "--probe", "--neighbouring",
                                     "all"])) == 2
    assert run_audit_command(_parse(["--mechanism", "ss_exact", "--epsilon", "1", "--neighbouring",
                                     "add_remove"])) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 2 and "Traceback" not in err
