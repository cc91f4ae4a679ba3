"""The peers' Bingham samplers through our sampler law test (:func:`dpcore.samplers.conformance.sampler_conformance`).

The same test our sampler passes: draws of each peer's *own* sampler (OpenDP's ``make_private_eigenvector``,
diffprivlib's ``mechanisms.Bingham``) for the public target exp(c·xᵀCx) on S², C with eigenvalues (8, 2, 0) in a
non-diagonal basis, c = 0.5, binned by t = |⟨x, v₁⟩| and compared with the exact law (Pearson χ², α = 1e-6). Beside
the χ² we report a signed z of the mean of t against its exact mean: z > 0 means the draws pile up near the top
eigenvector — more concentrated than the exponential mechanism whose privacy proof the library cites.

Both samplers divide by (uᵀΩu)^{d/2} where Kent–Ganeiber–Mardia's ratio multiplies by it (``../shared/docs/peers.md``),
so their draws follow ∝ exp(−uᵀAu)(uᵀΩu)^{−d}: a law the ε-DP proof does not cover.

The verdicts are computed once and stored in ``law_verdicts.json`` beside this module (OpenDP's sampler takes
≈ 6 ms a draw here, ≈ 2 min for 20,000 draws): ``python -m dpcore.peers.law --write`` recomputes them (needs the
peers' Python, ``make peers``). :func:`guarantee_for_peer` and :func:`verdict_line` read the stored file only — a
public fact about the library version, never anything computed from a user's data.
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import time
from pathlib import Path

import numpy as np

from ..vocabulary import Guarantee

__all__ = ["LAW_FILE", "exact_projection_moments", "guarantee_for_peer", "law_test", "stored_verdict", "verdict_line"]

LAW_FILE = Path(__file__).resolve().with_name("law_verdicts.json")
#: The command that recomputes :data:`LAW_FILE`.
RECOMPUTE = "python -m dpcore.peers.law --write"


@functools.lru_cache(maxsize=1)
def _stored() -> dict:
    try:
        return json.loads(LAW_FILE.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def stored_verdict(key: str) -> dict | None:
    """The stored law-test result of peer ``key`` ("opendp", "diffprivlib"), or None."""
    return _stored().get("peers", {}).get(key)


def guarantee_for_peer(key: str) -> str:
    """The guarantee label of a peer: claimed-invalid unless its stored law test conforms (then pure ε-DP, what it
    claims). No stored verdict: claimed-invalid (an untested sampler is not shown as private)."""
    v = stored_verdict(key)
    return Guarantee.PURE if v is not None and v.get("verdict") == "conforms" else Guarantee.CLAIMED_INVALID


def verdict_line(key: str) -> str:
    """One sentence for the page and the CLI: the statistic, the verdict and what it means."""
    v = stored_verdict(key)
    if v is None:
        return f"No stored law test for this peer; run `{RECOMPUTE}`."
    p = "< 1e-300" if v["p_value"] < 1e-300 else f"= {v['p_value']:.3g}"
    head = (f"Sampler law test ({v['draws']:,} draws of its own Bingham sampler, exact law ∝ exp(0.5·xᵀCx) on S², "
            f"the test our sampler passes): χ² = {v['chi2']:,.0f} on {v['dof']} d.f., p {p}; mean of |⟨x, v₁⟩| "
            f"{v['mean_t']:.4f} against the exact {v['exact_mean_t']:.4f}, z ≈ {v['z_mean_t']:+.0f}.")
    if v["verdict"] == "conforms":
        return head + " Consistent with the exact law."
    return (head + " It draws a different law than its privacy proof assumes (more concentrated than the "
            "exponential mechanism), so its ε-DP claim does not follow: shown as NOT private.")


def exact_projection_moments(q: int = 3, eigenvalues: tuple[float, float] = (8.0, 2.0),
                             concentration: float = 0.5) -> tuple[float, float]:
    """(E[t], sd[t]) of t = |⟨x, v₁⟩| under the exact law of the conformance target (adaptive quadrature)."""
    from scipy import integrate

    from ..samplers.conformance import _projection_weight

    args = (q, eigenvalues[0], eigenvalues[1], concentration)
    mass = [integrate.quad(lambda th, j=j: np.cos(th) ** j * _projection_weight(th, *args), 0.0, 0.5 * math.pi,
                           epsabs=0.0, epsrel=1e-12, limit=200)[0] for j in range(3)]
    mean = mass[1] / mass[0]
    return mean, math.sqrt(max(mass[2] / mass[0] - mean * mean, 0.0))


class _PeerSampler:
    """``sample_many(n, rng)`` over the peer's sampler in the peers' Python; draws ``batch`` at a time (one process
    start per batch) and hands them out in order."""

    def __init__(self, key: str, C: np.ndarray, c: float, batch: int, timeout: float) -> None:
        self.key, self.C, self.c, self.batch, self.timeout = key, C, c, batch, timeout
        self.buffer = np.zeros((0, C.shape[0]))
        self.seconds = 0.0

    def sample_many(self, n: int, rng: np.random.Generator) -> np.ndarray:
        from .adapters import run_worker

        while self.buffer.shape[0] < n:
            cfg = {"task": "bingham", "peer": self.key, "concentration": self.c, "draws": max(n, self.batch),
                   "seed": int(rng.integers(0, 2**31 - 1))}
            out = run_worker(cfg, self.C, timeout=self.timeout, what=f"{self.key}'s Bingham sampler")
            self.seconds += float(out["seconds"])
            self.buffer = np.vstack([self.buffer, np.asarray(out["samples"], dtype=float)])
        taken, self.buffer = self.buffer[:n], self.buffer[n:]
        return taken


def law_test(key: str, *, draws: int = 20_000, seed: int = 0, timeout: float = 1800.0) -> dict:
    """Run our sampler law test on peer ``key``'s Bingham sampler; the conformance result's fields plus the signed z
    of the mean of t, the peer's version and the time its sampler took."""
    from ..samplers.conformance import CONFORMANCE_CONCENTRATION, CONFORMANCE_EIGENVALUES, sampler_conformance
    from . import peers_status

    drawn: list[np.ndarray] = []

    def factory(C: np.ndarray, c: float) -> _PeerSampler:
        sampler = _PeerSampler(key, C, c, draws, timeout)
        original = sampler.sample_many

        def sample_many(n: int, rng: np.random.Generator) -> np.ndarray:
            x = original(n, rng)
            drawn.append(x)
            return x

        sampler.sample_many = sample_many  # type: ignore[method-assign]
        factories.append(sampler)
        return sampler

    factories: list[_PeerSampler] = []
    t0 = time.perf_counter()
    result = sampler_conformance(factory, draws=draws, seed=seed)
    from ..samplers.conformance import conformance_target

    _, axis = conformance_target(result.q, result.eigenvalues)
    t = np.abs(np.vstack(drawn) @ axis)
    mean, sd = exact_projection_moments(result.q, CONFORMANCE_EIGENVALUES, CONFORMANCE_CONCENTRATION)
    out = {key_: value for key_, value in result.as_dict().items() if key_ not in ("edges", "observed", "expected")}
    out.update(peer=key, version=peers_status().versions.get(key, {}).get("version"), sampler=f"{key} Bingham",
               mean_t=float(t.mean()), exact_mean_t=mean, z_mean_t=float((t.mean() - mean) / (sd / math.sqrt(t.size))),
               sampler_seconds=sum(f.seconds for f in factories), runtime_s=time.perf_counter() - t0)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="The peers' Bingham samplers through dpcore's sampler law test.")
    parser.add_argument("--draws", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--peers", default="opendp,diffprivlib")
    parser.add_argument("--write", action="store_true", help=f"store the verdicts in {LAW_FILE.name}")
    args = parser.parse_args(argv)
    from ..samplers.conformance import sampler_conformance
    from . import peers_status

    status = peers_status()
    if status.python is None:
        print(f"peers not available: {status.reason}")
        return 1
    ours = sampler_conformance(draws=args.draws, seed=args.seed)
    payload = {"command": RECOMPUTE + (f" --draws {args.draws}" if args.draws != 20_000 else ""),
               "computed": time.strftime("%Y-%m-%d", time.gmtime()), "python": status.python,
               "versions": status.versions, "ours": {"verdict": ours.verdict, "chi2": ours.chi2, "dof": ours.dof,
                                                     "p_value": ours.p_value, "draws": ours.draws},
               "peers": {}}
    print(f"dpcore KentBinghamSampler: χ² = {ours.chi2:.1f} on {ours.dof} d.f., p = {ours.p_value:.3g}: {ours.verdict}")
    for key in [s.strip() for s in args.peers.split(",") if s.strip()]:
        res = law_test(key, draws=args.draws, seed=args.seed)
        payload["peers"][key] = res
        print(f"{key} {res['version']}: χ² = {res['chi2']:.1f} on {res['dof']} d.f., p = {res['p_value']:.3g}, "
              f"mean t {res['mean_t']:.4f} vs exact {res['exact_mean_t']:.4f} (z = {res['z_mean_t']:+.1f}): "
              f"{res['verdict']} ({res['runtime_s']:.0f} s)")
    if args.write:
        LAW_FILE.write_text(json.dumps(payload, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        _stored.cache_clear()
        print(f"wrote {LAW_FILE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
