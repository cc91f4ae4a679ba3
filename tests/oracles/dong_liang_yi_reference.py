"""A numpy transcription of the authors' SeparateCov / AdaptiveCov, for use as a test oracle only.

Source transcribed (read with ``git show``, not copied into this repository):
    repository  hkustDB/PrivateCovariance (official code of Dong, Liang & Yi, NeurIPS 2022)
    commit      dafcdfec7eed53bbbc7da066f57fcb101d5c651c (2022-09-24)
    paths       adaptive/algos.py (GaussCov, SeparateCov, get_diff2, AdaptiveCov; the pure-DP twins LapCov
                                   l. 36-46, SeparateLapCov l. 63-76, get_diff l. 86-93, ClippedLapCov l. 127-149,
                                   AdaptiveLapCov l. 193-232)
                adaptive/utils.py (SVT l. 6-15, convert_symm_mat l. 17-28, get_bincounts, gaussian_tailbound,
                                   wigner_gauss_tailbound, wigner_gauss_fnormbound, clip; the Laplace helpers
                                   get_lap_wigner_matrix l. 35-38, get_lap_noise_vector l. 44-46,
                                   laplace_tailbound l. 83-86, wigner_lap_tailbound l. 95-101,
                                   wigner_lap_fnormbound l. 107-110; the pure AboveThreshold is the same SVT)

Each function below follows the control flow and the constants of the torch function of the same name statement
for statement, with two mechanical changes only: torch tensors become numpy arrays (``torch.svd`` returns V where
numpy returns Vᵀ, handled at each call) and every draw comes from one explicit ``numpy.random.Generator`` instead
of torch's and numpy's global streams. Units are the authors': Σ = XᵀX/n. Nothing in ``dpcore`` imports this file;
it is deliberately independent of ``dpcore/mechanisms/_dong_liang_yi.py`` so that a wrong constant there is caught.
The authors' ``get_diff2`` scales the Gaussian branch's predicted error by 2ᵏ in the radius search but by 2²ᵏ in
the final choice; kept as written (docs/dong_liang_yi.md discusses it).

The pure-DP functions take two constants as keyword parameters whose defaults are the authors' values, so that a test
can run the authors' code with the constants we deliberately changed (docs/dong_liang_yi.md, "pure-DP oracle"):
``triangle_l1`` (the L1 sensitivity of the upper triangle at r = 1; authors √2·d, ours d + 1) and, in
AdaptiveLapCov's error model, ``direct_error_scale`` (the factor of ω in the Laplace branch's predicted error at r = 1,
Σ units × n; authors √2·d, with no 1/ε; ours (d + 1)/(3ε/4)). ``svt(..., up_front=True)`` draws the query noise of
AboveThreshold all at once after the threshold's (our order; same law) so that a test can align the streams draw for
draw; the default is the authors' on-demand order.
"""

from __future__ import annotations

import numpy as np

# --- adaptive/utils.py --------------------------------------------------------------------------------------------

def svt(threshold, eps, counts, func, args, rng, up_front=False):
    """utils.py l. 6-15 (AboveThreshold; used with ε = √ρ/2 by AdaptiveCov and ε/8 by AdaptiveLapCov)."""
    t_tilde = threshold + rng.laplace(scale=2.0 / eps)
    noise = rng.laplace(scale=4.0 / eps, size=len(args)) if up_front else None
    i = 0
    while i < len(args):
        q = func(counts, args[i]) + (noise[i] if up_front else rng.laplace(scale=4.0 / eps))
        if q >= t_tilde:
            break
        i += 1
    return i


def convert_symm_mat(values, d):
    """utils.py l. 17-28: the upper triangle row by row, then mirrored."""
    S = np.empty((d, d))
    k = 0
    for i in range(d):
        for j in range(i, d):
            S[i, j] = S[j, i] = values[k]
            k += 1
    return S


def gauss_wigner(d, rng):
    return convert_symm_mat(rng.normal(0.0, 1.0, size=d * (d + 1) // 2), d)


def lap_wigner(d, rng):
    """utils.py l. 35-38 (get_lap_wigner_matrix): i.i.d. Laplace(0, 1) upper triangle, mirrored."""
    return convert_symm_mat(rng.laplace(0.0, 1.0, size=d * (d + 1) // 2), d)


def lap_noise_vector(d, rng):
    """utils.py l. 44-46 (get_lap_noise_vector): d i.i.d. Laplace(0, 1)."""
    return rng.laplace(0.0, 1.0, size=d)


def get_bincounts(x_norm, n, t):
    counts = np.zeros(t)
    for i in range(n):
        l1 = -int(np.floor(np.log2(x_norm[i])))
        if not x_norm[i] > 2.0 ** (-l1):
            l1 += 1
        l1 = max(l1, 1)
        if l1 < t:
            counts[l1] += 1
    return counts


def gaussian_tailbound(d, b):
    return np.sqrt(d + 2 * np.sqrt(d * np.log(1 / b)) + 2 * np.log(1 / b))


def wigner_gauss_tailbound(d, b):
    theta = min((np.log(d) / d) ** 0.3, 0.5)
    bound = (1 + theta) * (2 * np.sqrt(d) + 6 * np.sqrt(np.log(d)) / np.sqrt(np.log(1 + theta)))
    return bound + np.sqrt(2 * np.log(2 / b))


def wigner_gauss_fnormbound(d, b):
    return np.sqrt(d * d + 2.0 * np.sqrt(d * np.log(2.0 / b)) * (1 + np.sqrt(2 * (d - 1))) + 6 * np.log(2.0 / b))


def laplace_tailbound(d, b):
    """utils.py l. 83-86."""
    K = 2 * max((np.sqrt(2) + 1) / (np.sqrt(2) - 1), 2 * np.log(d) / np.log(2))
    return 1.5 * np.sqrt(d) + np.log(2.0 / b) * K


def wigner_lap_tailbound(d, b):
    """utils.py l. 95-101."""
    K = 2 * max((np.sqrt(2) + 1) / (np.sqrt(2) - 1), 2 * np.log(0.5 * (d * d + d)) / np.log(2))
    theta = min((np.log(d) / d) ** 0.3, 0.5)
    bound = (1 + theta) * (2 * np.sqrt(d) + 6 * np.log(d) / np.sqrt(np.log(1 + theta)))
    return bound + np.sqrt(2) * np.log(2 / b) * K


def wigner_lap_fnormbound(d, b):
    """utils.py l. 107-110."""
    K = 2 * max((np.sqrt(2) + 1) / (np.sqrt(2) - 1), 2 * np.log(0.5 * (d * d + d)) / np.log(2))
    return 1.5 * d + np.log(2.0 / b) * K


def clip(X, x_norm, r):
    scale = r / x_norm
    W = X.copy()
    rows = scale < 1
    W[rows] = W[rows] * scale[rows][:, None]
    return W


# --- adaptive/algos.py --------------------------------------------------------------------------------------------

def _fleig(M, r):
    D, U = np.linalg.eigh(M)
    D = np.clip(D, 0.0, r * r)
    return (U * D) @ U.T


def gauss_cov(X, n, d, rho, rng, r=1.0, b_fleig=False):
    cov = X.T @ X / n
    W = gauss_wigner(d, rng)
    sens = np.sqrt(2) * r * r / n
    cov_tilde = cov + sens / np.sqrt(2 * rho) * W
    return _fleig(cov_tilde, r) if b_fleig else cov_tilde


def separate_cov(X, n, d, rho, rng, r=1.0, b_fleig=False):
    cov = X.T @ X / n
    cov_gauss = gauss_cov(X, n, d, 0.5 * rho, rng, r=r)
    Ug, _, Vg_t = np.linalg.svd(cov_gauss)  # torch.svd's V is Vg_t.T
    _, D, _ = np.linalg.svd(cov)
    Z = rng.normal(0.0, 1.0, size=d)
    sens = r * r * np.sqrt(2) / n
    D_tilde = D + sens / np.sqrt(rho) * Z
    if b_fleig:
        D_tilde = np.clip(D_tilde, 0.0, r * r)
    return (Ug * D_tilde) @ Vg_t


def get_diff2(counts, tup):
    parts, n, k, gaussnoise, sepnoise1, sepnoise2, k1, r = tup
    i = k1 - k + 1
    bias = sum(counts[l] * parts[l] for l in range(i))
    bias = (bias - sum(counts[:i]) * 2 ** (2 * k)) / n
    noise = min(2 ** k * gaussnoise, 2 ** k * sepnoise1 + 2 ** (2 * k) * sepnoise2)
    return n * (bias - noise) / r / r


def adaptive_cov(X, rho, beta, rng, r=1.0, trace=None):
    """The authors' AdaptiveCov; returns (Σ̃, chosen radius). ``trace`` is filled with internals when a dict."""
    n, d = X.shape
    cov = X.T @ X / n
    tr = np.trace(cov)
    factor = np.sqrt(8.0 / rho * np.log(8.0 / beta))
    tr_tilde = tr + r * r * (2.0 / np.sqrt(rho) / n * rng.normal(0, 1) + factor / n)
    tr_tilde = max(min(tr_tilde, r), 1e-16)
    rho1, beta1 = 0.75 * rho, 0.75 * beta
    eta = gaussian_tailbound(d, 0.5 * beta1)
    nu = wigner_gauss_tailbound(d, 0.5 * beta1)
    omega = wigner_gauss_fnormbound(d, beta1)
    sepnoise1 = 2 ** 1.25 * np.sqrt(tr_tilde) / np.sqrt(n) / (rho1 ** 0.25) * np.sqrt(nu) / 6.0
    sepnoise2 = np.sqrt(2) * eta / np.sqrt(rho1) / n
    gaussnoise1 = 1.0 / np.sqrt(rho1) / n * omega
    k1 = int(np.log2(r))
    k3 = -min(int(d * n), -int(np.log2(1e-24)))
    t = k1 - k3 + 1
    x_norm = np.linalg.norm(X, axis=1)
    parts = [2 ** (2 * (k1 - l) + 2) for l in range(t)]
    counts = get_bincounts(x_norm, n, t)
    args = [(parts, n, k1 - l, gaussnoise1, sepnoise1, sepnoise2, k1, r) for l in range(t)]
    j = svt(0, np.sqrt(rho) / 2.0, counts, get_diff2, args, rng)
    k2_tilde = k1 - j
    r_tilde = min(2.0 ** (k2_tilde + 1), r)
    X_tilde = clip(X, x_norm, r_tilde)
    sepnoise = 2.0 ** k2_tilde * sepnoise1 + 2.0 ** (2 * k2_tilde) * sepnoise2
    gaussnoise = 2.0 ** (2 * k2_tilde) * gaussnoise1
    if isinstance(trace, dict):
        trace.update(j=j, radius=r_tilde, gauss=sepnoise >= gaussnoise, tr_tilde=tr_tilde)
    if sepnoise >= gaussnoise:
        return gauss_cov(X_tilde, n, d, rho1, rng, r=r_tilde, b_fleig=True), r_tilde
    return separate_cov(X_tilde, n, d, rho1, rng, r=r_tilde, b_fleig=True), r_tilde


# --- adaptive/algos.py: the pure-DP twins ----------------------------------------------------------------------------

def authors_triangle_l1(d):
    """The authors' L1 sensitivity of the upper triangle at r = 1, Σ units × n: √2·d (algos.py l. 39)."""
    return np.sqrt(2) * d


def lap_cov(X, n, d, eps, rng, r=1.0, b_fleig=False, triangle_l1=None):
    """algos.py l. 36-46 (LapCov). ``triangle_l1`` replaces the authors' √2·d (l. 39) when given."""
    cov = X.T @ X / n
    W = lap_wigner(d, rng)
    sens = (authors_triangle_l1(d) if triangle_l1 is None else triangle_l1) * r * r / n
    cov_tilde = cov + sens / eps * W
    return _fleig(cov_tilde, r) if b_fleig else cov_tilde


def separate_lap_cov(X, n, d, eps, rng, r=1.0, b_fleig=False, triangle_l1=None):
    """algos.py l. 63-76 (SeparateLapCov): ε/2 on LapCov (eigenvectors), ε/2 on λ with L1 sensitivity 2r²/n."""
    cov = X.T @ X / n
    eps0 = 0.5 * eps
    cov_lap = lap_cov(X, n, d, eps0, rng, r=r, triangle_l1=triangle_l1)
    Ug, _, Vg_t = np.linalg.svd(cov_lap)  # torch.svd's V is Vg_t.T
    _, D, _ = np.linalg.svd(cov)
    Z = lap_noise_vector(d, rng)
    sens = r * r * 2.0 / n
    D_tilde = D + sens / eps0 * Z
    if b_fleig:
        D_tilde = np.clip(D_tilde, 0.0, r * r)
    return (Ug * D_tilde) @ Vg_t


def get_diff(counts, tup):
    """algos.py l. 86-93 (the query of ClippedCov / ClippedLapCov)."""
    parts, n, k, noise1, noise2, k1, r = tup
    i = k1 - k + 1
    bias = sum(counts[l] * parts[l] for l in range(i))
    bias = (bias - sum(counts[:i]) * 2 ** (2 * k)) / n
    noise = 2 ** k * noise1 + 2 ** (2 * k) * noise2
    return n * (bias - noise) / r / r


def clipped_lap_cov(X, n, d, eps, beta, tr_tilde, rng, r=1.0, triangle_l1=None):
    """algos.py l. 127-149 (ClippedLapCov: 3ε/4 SeparateLapCov, ε/4 AboveThreshold; ``tr_tilde`` is given, its
    budget spent by the caller). Not called by the authors' experiments (functions.py imports only AdaptiveLapCov);
    kept for completeness. Note l. 135 takes max(…, −k1) where ClippedCov (l. 111) takes max(…, k1); equal at r = 1."""
    eta = laplace_tailbound(d, 0.5 * beta)
    nu = wigner_lap_tailbound(d, 0.5 * beta)
    eps1, eps2 = 0.75 * eps, 0.25 * eps
    noise1 = np.sqrt(8 * np.sqrt(2) * d * tr_tilde) / np.sqrt(eps1 * n) * np.sqrt(nu)
    noise2 = 4 * eta / eps1 / n
    k1 = int(np.log2(r))
    k3 = -max(int(np.ceil(np.log2(noise1 + noise2) - np.log2(r * r / eps1 / n * np.log(1.0 / beta)))) + 1, -k1)
    t = k1 - k3 + 1
    x_norm = np.linalg.norm(X, axis=1)
    parts = [2 ** (2 * (k1 - l) + 2) for l in range(t)]
    counts = get_bincounts(x_norm, n, t)
    args = [(parts, n, k1 - l, noise1, noise2, k1, r) for l in range(t)]
    j = svt(0, eps2, counts, get_diff, args, rng)
    k2_tilde = k1 - j
    r_tilde = 2.0 ** (k2_tilde + 1) if k2_tilde < k1 else 2.0 ** k2_tilde
    X_tilde = clip(X, x_norm, r_tilde)
    return separate_lap_cov(X_tilde, n, d, eps1, rng, r=r_tilde, b_fleig=True, triangle_l1=triangle_l1)


def adaptive_lap_cov(X, eps, beta, rng, r=1.0, trace=None, triangle_l1=None, direct_error_scale=None,
                     svt_up_front=False):
    """algos.py l. 193-232 (AdaptiveLapCov); returns (Σ̃, chosen radius). The authors pass ρ and set ε = √(2ρ)
    (l. 195); this takes ε. ``triangle_l1`` replaces √2·d in LapCov's noise (via l. 229/231);
    ``direct_error_scale`` replaces √2·d in ``lapnoise1`` (l. 213, which has no 1/ε). ``trace``: internals."""
    n, d = X.shape
    cov = X.T @ X / n
    tr = np.trace(cov)
    factor = 8.0 * r * r / eps * np.log(4.0 / beta)
    tr_tilde = tr + 8.0 * r * r / eps / n * rng.laplace(0, 1) + factor / n
    tr_tilde = max(min(tr_tilde, r), 1e-16)
    eps1, beta1 = 0.75 * eps, 0.75 * beta
    eta = laplace_tailbound(d, 0.5 * beta1)
    nu = wigner_lap_tailbound(d, 0.5 * beta1)
    omega = wigner_lap_fnormbound(d, beta1)
    sepnoise1 = np.sqrt(8 * np.sqrt(2) * d * tr_tilde) / np.sqrt(eps1 * n) * np.sqrt(nu) / 14.0
    sepnoise2 = 4 * eta / eps1 / n
    lapnoise1 = (authors_triangle_l1(d) if direct_error_scale is None else direct_error_scale) * r * r / n * omega
    k1 = int(np.log2(r))
    k3 = -min(int(d * n), -int(np.log2(1e-24)))
    t = k1 - k3 + 1
    x_norm = np.linalg.norm(X, axis=1)
    parts = [2 ** (2 * (k1 - l) + 2) for l in range(t)]
    counts = get_bincounts(x_norm, n, t)
    args = [(parts, n, k1 - l, lapnoise1, sepnoise1, sepnoise2, k1, r) for l in range(t)]
    j = svt(0, eps / 8.0, counts, get_diff2, args, rng, up_front=svt_up_front)
    k2_tilde = k1 - j
    r_tilde = min(2.0 ** (k2_tilde + 1), r)
    X_tilde = clip(X, x_norm, r_tilde)
    sepnoise = 2.0 ** k2_tilde * sepnoise1 + 2.0 ** (2 * k2_tilde) * sepnoise2
    lapnoise = 2.0 ** (2 * k2_tilde) * lapnoise1
    if isinstance(trace, dict):
        trace.update(j=j, radius=r_tilde, laplace=sepnoise >= lapnoise, tr_tilde=tr_tilde)
    if sepnoise >= lapnoise:
        return lap_cov(X_tilde, n, d, eps1, rng, r=r_tilde, b_fleig=True, triangle_l1=triangle_l1), r_tilde
    return separate_lap_cov(X_tilde, n, d, eps1, rng, r=r_tilde, b_fleig=True, triangle_l1=triangle_l1), r_tilde
