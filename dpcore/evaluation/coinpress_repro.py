"""CoinPress's two synthetic covariance tables (Biswas et al., NeurIPS 2020) and our reproduction of them.

The paper's numbers are the authors' stored results (``twistedcubic/coin-press`` at commit 9c74725,
``results/synthetic_cov/{n-1,nonpr-1,t1-1..t5-1}.txt`` and ``{r-5,nonpr-5,t1-5..t4-5}.txt``, written by
``cov_estimation.py``): the 10 %-trimmed mean over 100 trials of the Mahalanobis error ‖Σ^{-1/2}Σ̂Σ^{-1/2} − I‖_F
for x ~ N(0, I₁₀), prior I ⪯ Σ ⪯ K·I with K = 10√10. Table "n": ρ = 0.5, n = 3000…8000, t = 1…5. Table "ρ":
n = 8000, ρ = 0.005…0.5 (geometric), t = 1…4 (the repository stores no t = 5 for it).

We run :func:`dpcore.mechanisms.coinpress.coinpress_covariance` on the same data in our unit scale (rows z/B with
B = 100, prior λ = K/B², so the norm-bound cap never binds and no row is clipped by the norm bound) in two
variants: as in the authors' code (their orientation and PSD step: the reproduction) and as dpcore releases it.
The stored results (``benchmarks/results/coinpress_tables.json``) are written by ``benchmarks/coinpress_tables.py``.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..core.seeding import RandomState
from ..exceptions import DPCoreError
from ..mechanisms.coinpress import budget_split, coinpress_covariance

REPO_ROOT = Path(__file__).resolve().parents[2]
RESULTS_PATH = REPO_ROOT / "benchmarks" / "results" / "coinpress_tables.json"
SOURCE = "twistedcubic/coin-press@9c74725, results/synthetic_cov"
D = 10
PRIOR_K = 10.0 * math.sqrt(D)  # the authors' u = 10·√d
NORM_BOUND = 100.0  # public B: ‖z‖ ≤ 100 for every N(0, I₁₀) draw we will ever see; the cap ‖M‖₂ ≥ γ never binds
TRIM = 0.1
PAPER_TRIALS = 100
#: |ours − paper| ≤ Z_TOL · √(se_ours² + se_paper²) is "reproduced" (se of a 10 %-trimmed mean; the paper's se from
#: our per-trial spread at its 100 trials).
Z_TOL = 4.0

PAPER_N_GRID = tuple(float(x) for x in np.linspace(3000, 8000, num=12))
PAPER_RHO_GRID = tuple(float(x) for x in np.geomspace(0.005, 0.5, num=10))
#: results/synthetic_cov/t{t}-1.txt (ρ = 0.5) and nonpr-1.txt, rounded to 4 significant digits.
PAPER_TABLE_N = {
    "non-private": (0.1914, 0.1785, 0.1652, 0.1597, 0.1510, 0.1429, 0.1363, 0.1312, 0.1272, 0.1238, 0.1187, 0.1168),
    1: (2.843, 2.603, 2.412, 2.198, 2.085, 1.943, 1.825, 1.737, 1.635, 1.517, 1.441, 1.340),
    2: (0.5574, 0.4412, 0.3638, 0.3208, 0.2794, 0.2513, 0.2277, 0.2088, 0.1919, 0.1789, 0.1676, 0.1598),
    3: (0.3060, 0.2613, 0.2350, 0.2109, 0.1928, 0.1798, 0.1673, 0.1563, 0.1489, 0.1459, 0.1360, 0.1328),
    4: (0.3533, 0.3075, 0.2600, 0.2293, 0.2072, 0.1869, 0.1750, 0.1655, 0.1556, 0.1483, 0.1395, 0.1361),
    5: (0.3969, 0.3518, 0.3062, 0.2571, 0.2331, 0.2004, 0.1864, 0.1745, 0.1626, 0.1533, 0.1454, 0.1414),
}
#: results/synthetic_cov/t{t}-5.txt (n = 8000) and nonpr-5.txt.
PAPER_TABLE_RHO = {
    "non-private": (0.1182, 0.1159, 0.1165, 0.1175, 0.1154, 0.1168, 0.1160, 0.1167, 0.1162, 0.1179),
    1: (11.42, 8.454, 6.144, 4.659, 3.701, 2.889, 2.416, 2.077, 1.739, 1.375),
    2: (3.324, 2.268, 1.599, 1.053, 0.6902, 0.4679, 0.3370, 0.2391, 0.1848, 0.1626),
    3: (2.027, 1.201, 0.8131, 0.5454, 0.4128, 0.2930, 0.2077, 0.1656, 0.1457, 0.1354),
    4: (1.984, 1.274, 0.9875, 0.7015, 0.5045, 0.3795, 0.2507, 0.1827, 0.1532, 0.1366),
}
VARIANTS = ("authors_code", "dpcore")


def mahalanobis_error(sigma_hat: np.ndarray) -> float:
    """‖Σ̂ − I‖_F: the Mahalanobis error against the true Σ = I."""
    return float(np.linalg.norm(sigma_hat - np.eye(sigma_hat.shape[0])))


def trial_errors(n: int, rho: float, steps: int, trials: int, random_state: RandomState = 0, *,
                 variant: str = "authors_code") -> np.ndarray:
    """Mahalanobis errors of ``trials`` CoinPress runs at (n, ρ, t) on fresh N(0, I₁₀) data (Σ̂ in the data's units).

    ``variant``: "authors_code" (their orientation and PSD step), "dpcore" (as released) or "non-private" (the
    sample covariance, centred, as the authors' ``utils.cov``).
    """
    if variant not in (*VARIANTS, "non-private"):
        raise DPCoreError(f"variant must be one of {', '.join(VARIANTS)} or 'non-private', got {variant!r}.")
    data_rng, noise_rng = (np.random.default_rng(s) for s in np.random.SeedSequence(random_state).spawn(2))
    rhos = tuple(share * rho for share in budget_split(steps))
    out = np.empty(trials)
    for i in range(trials):
        Z = data_rng.standard_normal((n, D))
        if variant == "non-private":
            centred = Z - Z.mean(axis=0)
            out[i] = mahalanobis_error(centred.T @ centred / n)
            continue
        res = coinpress_covariance(Z / NORM_BOUND, rhos, PRIOR_K / NORM_BOUND**2, noise_rng,
                                   as_in_authors_code=variant == "authors_code")
        out[i] = mahalanobis_error(res.covariance * NORM_BOUND**2)
    return out


def trimmed_mean_se(x: np.ndarray, trim: float = TRIM) -> tuple[float, float]:
    """The trimmed mean (as ``scipy.stats.trim_mean``) and its standard error (Tukey–McLaughlin: winsorised sd)."""
    from scipy import stats

    x = np.sort(np.asarray(x, dtype=float))
    g = int(trim * x.size)
    wins = np.clip(x, x[g], x[x.size - 1 - g])
    se = float(np.std(wins, ddof=1) / ((1.0 - 2.0 * g / x.size) * math.sqrt(x.size)))
    return float(stats.trim_mean(x, trim)), se


@dataclass(frozen=True)
class CellVerdict:
    """One cell: our trimmed mean (± se) against the paper's number, with the tolerance used."""

    ours: float
    se: float
    paper: float
    tolerance: float

    @property
    def reproduced(self) -> bool:
        return abs(self.ours - self.paper) <= self.tolerance


def compare(errors: np.ndarray, paper: float, z: float = Z_TOL) -> CellVerdict:
    """Our errors at a cell against the paper's trimmed mean: tolerance z·√(se² + se_paper²)."""
    mean, se = trimmed_mean_se(errors)
    se_paper = se * math.sqrt(len(errors) / PAPER_TRIALS)
    return CellVerdict(mean, se, paper, z * math.hypot(se, se_paper))


def load_results(path: Path | None = None) -> dict:
    """The stored reproduction (``benchmarks/coinpress_tables.py``); DPCoreError when missing or unreadable."""
    path = Path(path) if path is not None else RESULTS_PATH
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DPCoreError(f"no stored CoinPress reproduction ({path.name}: {exc}); run "
                          "`python benchmarks/coinpress_tables.py`.") from None


def table_verdict(table: dict, variant: str = "authors_code") -> tuple[int, int]:
    """(cells reproduced, cells) of one stored table for one variant."""
    cells = [c for c in table["cells"] if c["variant"] == variant]
    return sum(bool(c["reproduced"]) for c in cells), len(cells)
