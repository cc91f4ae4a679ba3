"""A numpy transcription of the authors' SeparateCov / AdaptiveCov, for use as a test oracle only.

Source transcribed (read with ``git show``, not copied into this repository):
    repository  hkustDB/PrivateCovariance (official code of Dong, Liang & Yi, NeurIPS 2022)
    commit      dafcdfec7eed53bbbc7da066f57fcb101d5c651c (2022-09-24)
    paths       adaptive/algos.py (GaussCov, SeparateCov, get_diff2, AdaptiveCov)
                adaptive/utils.py (SVT, convert_symm_mat, get_bincounts, gaussian_tailbound,
                                   wigner_gauss_tailbound, wigner_gauss_fnormbound, clip)

Each function below follows the control flow and the constants of the torch function of the same name statement
for statement, with two mechanical changes only: torch tensors become numpy arrays (``torch.svd`` returns V where
numpy returns Vᵀ, handled at each call) and every draw comes from one explicit ``numpy.random.Generator`` instead
of torch's and numpy's global streams. Units are the authors': Σ = XᵀX/n. Nothing in ``dpcore`` imports this file;
it is deliberately independent of ``dpcore/mechanisms/_dong_liang_yi.py`` so that a wrong constant there is caught.
The authors' ``get_diff2`` scales the Gaussian branch's predicted error by 2ᵏ in the radius search but by 2²ᵏ in
the final choice; kept as written (docs/dong_liang_yi.md discusses it).
"""

from __future__ import annotations

import numpy as np

# --- adaptive/utils.py --------------------------------------------------------------------------------------------

def svt(threshold, eps, counts, func, args, rng):
    t_tilde = threshold + rng.laplace(scale=2.0 / eps)
    i = 0
    while i < len(args):
        q = func(counts, args[i]) + rng.laplace(scale=4.0 / eps)
        if q >= t_tilde:
            break
        i += 1
    return i


def gauss_wigner(d, rng):
    values = rng.normal(0.0, 1.0, size=d * (d + 1) // 2)
    S = np.empty((d, d))
    k = 0
    for i in range(d):  # convert_symm_mat: the upper triangle row by row, then mirrored
        for j in range(i, d):
            S[i, j] = S[j, i] = values[k]
            k += 1
    return S


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
