"""Utility metrics (spec §4). They read the TRUE data, so they are evaluation tools, not private releases.

Notation: C = Σ xᵢxᵢᵀ with eigenpairs (λᵢ, vᵢ) in decreasing order, V_k = [v₁..v_k], V̂ a d×k orthonormal matrix.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.linalg import subspace_angles
from sklearn.model_selection import train_test_split
from sklearn.svm import LinearSVC

from ..core._validation import check_neighbouring
from ..core.linalg import eigh_desc
from ..data.prepared import PreparedData
from ..exceptions import DataError
from ..vocabulary import Neighbouring

METRIC_NAMES = (
    "captured_variance_ratio",
    "frobenius_error",
    "principal_angle_max_deg",
    "sin_theta_max",
    "svm_accuracy",
)

METRIC_LABELS = {
    "captured_variance_ratio": "Captured variance / optimum",
    "frobenius_error": "Normalised Frobenius error ‖C − Ĉ‖_F / ‖C‖_F",
    "principal_angle_max_deg": "Largest principal angle (degrees)",
    "sin_theta_max": "‖Π − Π̂‖₂ = sin θ_max",
    "svm_accuracy": "Linear-SVM accuracy on V̂ᵀx",
}


def captured_variance(C: np.ndarray, V_hat: np.ndarray) -> float:
    """q_F(V̂) = tr(V̂ᵀ C V̂) (seed 000 eq. 3)."""
    return float(np.einsum("ij,ik,kj->", V_hat, C, V_hat))


def captured_variance_ratio(C: np.ndarray, V_hat: np.ndarray, eigenvalues: np.ndarray | None = None) -> float:
    """q_F(V̂)/q_F(V_k) ∈ [0, 1]: captured variance relative to the non-private optimum Σ_{i≤k} λᵢ."""
    k = V_hat.shape[1]
    lam = eigh_desc(C)[0] if eigenvalues is None else np.asarray(eigenvalues)
    best = float(np.sum(lam[:k]))
    if best <= 0:
        return float("nan")
    return captured_variance(C, V_hat) / best


def frobenius_error(C: np.ndarray, C_hat: np.ndarray | None) -> float:
    """‖C − Ĉ‖_F / ‖C‖_F (Amin et al. 2019, Fig. 1); NaN when there is no covariance estimate."""
    if C_hat is None:
        return float("nan")
    denom = np.linalg.norm(C)
    return float(np.linalg.norm(C - C_hat) / denom) if denom > 0 else float("nan")


def spectral_error(C: np.ndarray, C_hat: np.ndarray | None) -> float:
    """‖C − Ĉ‖₂ / ‖C‖₂; NaN when there is no covariance estimate."""
    if C_hat is None:
        return float("nan")
    denom = np.linalg.norm(C, 2)
    return float(np.linalg.norm(C - C_hat, 2) / denom) if denom > 0 else float("nan")


def principal_angles(V: np.ndarray, V_hat: np.ndarray) -> np.ndarray:
    """Principal angles θᵢ (radians, increasing) between span(V) and span(V̂).

    Björck–Golub as in :func:`scipy.linalg.subspace_angles`: small angles from the sines (singular values of the
    residual V̂ − V(VᵀV̂)), large ones from the cosines, so identical subspaces give ~1e-16 rad, not the ~1e-8 of
    arccos of a singular value.
    """
    return np.sort(subspace_angles(np.asarray(V, dtype=float), np.asarray(V_hat, dtype=float)))


def principal_angle_max_deg(V: np.ndarray, V_hat: np.ndarray) -> float:
    """Largest principal angle in degrees."""
    return float(np.degrees(principal_angles(V, V_hat).max()))


def sin_theta_max(V: np.ndarray, V_hat: np.ndarray) -> float:
    """‖VVᵀ − V̂V̂ᵀ‖₂ = sin θ_max (Singhal–Steinke's ‖Π − Π̂‖), accurate down to rounding."""
    return float(math.sin(principal_angles(V, V_hat).max()))


def projection_frobenius_distance(V: np.ndarray, V_hat: np.ndarray) -> float:
    """‖VVᵀ − V̂V̂ᵀ‖_F = √(2 Σ sin²θᵢ) (Jiang et al. 2016, Theorem 6)."""
    return float(math.sqrt(2.0 * np.sum(np.sin(principal_angles(V, V_hat)) ** 2)))


def eigengap_ratio(eigenvalues: np.ndarray, k: int) -> float:
    """λ_{k+1}/λ_k (Singhal–Steinke's γ²): subspace metrics are ill-posed when it is close to 1."""
    lam = np.asarray(eigenvalues)
    if k >= lam.size or lam[k - 1] <= 0:
        return float("nan")
    return float(lam[k] / lam[k - 1])


# --------------------------------------------------------------------------------------------------
# Downstream linear SVM (spec §4.4): evaluates subspace quality, the classifier itself is not private.
# --------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class SvmSplit:
    """Rows for the SVM metric: a train and a test part, fixed for a whole sweep (paired comparison).

    ``in_sample``: the rows also reached the mechanisms (add/remove, where no row is held out)."""

    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    in_sample: bool = False


#: The SVM metric's share of the rows, and at most this many of them (replace-one: held out from the mechanisms).
SVM_HOLDOUT = 0.3
SVM_MAX_HOLDOUT = 6000
#: Fewer held-out rows than this (replace-one, where n is public): no hold-out, every row reaches the mechanisms.
SVM_MIN_HOLDOUT = 8
#: Why svm_accuracy is NaN when the SVM's training rows hold one class (fixed text: it names no row and no count).
SVM_ONE_CLASS = ("SVM accuracy not available: the SVM's training rows hold a single class (a diagnostic read off the "
                 "labels, not private). The other metrics are unaffected, and the rows the mechanisms get do not "
                 "depend on the labels.")


def svm_holdout_count(n_rows: int, *, labelled: bool, neighbouring: str = Neighbouring.REPLACE,
                      holdout_fraction: float = SVM_HOLDOUT, max_holdout: int = SVM_MAX_HOLDOUT) -> int:
    """How many rows :func:`evaluation_split` holds out from the mechanisms — a function of public settings only.

    ``labelled``: the data declares a label (whatever its values: a label with one class still holds rows out).
    Under replace-one (n public): ``min(round(holdout_fraction·n), max_holdout)``, or 0 when that is below
    :data:`SVM_MIN_HOLDOUT` or would leave fewer than 2 rows. Under add/remove (n private): 0 — every row reaches
    the mechanisms, so neither the rows they get nor their count is chosen by n.
    """
    if not labelled or check_neighbouring(neighbouring) != Neighbouring.REPLACE:
        return 0
    n_hold = min(round(n_rows * holdout_fraction), max_holdout)
    return 0 if n_hold < SVM_MIN_HOLDOUT or n_rows - n_hold < 2 else int(n_hold)


def mechanism_row_count(data: PreparedData, neighbouring: str = Neighbouring.REPLACE,
                        holdout_fraction: float = SVM_HOLDOUT) -> int:
    """The n the mechanisms get in a sweep on ``data`` (:func:`evaluation_split`'s rule, without splitting):
    every record less the SVM's held-out rows."""
    return data.n - svm_holdout_count(data.n_rows, labelled=data.y is not None, neighbouring=neighbouring,
                                      holdout_fraction=holdout_fraction)


def evaluation_split(data: PreparedData, seed: int, holdout_fraction: float = SVM_HOLDOUT,
                     max_holdout: int = SVM_MAX_HOLDOUT, *, neighbouring: str = Neighbouring.REPLACE,
                     ) -> tuple[PreparedData, SvmSplit | None]:
    """Split rows into (mechanism rows, SVM rows) deterministically from ``seed``.

    Evaluation never steers the mechanism (privacy review item 16): which rows and how many reach the mechanisms
    depend on (seed, public n, the settings) only — never on the labels. Without a label every row goes to the
    mechanism and the SVM split is None. Under replace-one :func:`svm_holdout_count` rows (a seeded permutation's
    first ones) are held out; a training part with a single class leaves them held out and ``svm_accuracy`` NaN
    (:data:`SVM_ONE_CLASS`). Under add/remove nothing is held out (n is private: a hold-out sized or placed by n
    would decide the mechanism's rows); the SVM is trained and scored on a seeded split of rows the mechanisms
    also saw (``in_sample``). The split is drawn from the rows held in ``data.X`` (for statistics of a stream: its
    reservoir sample); held-out rows leave the statistics.
    """
    if data.y is None:
        return data, None
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), 0x5EED]))
    n_rows = data.n_rows
    in_sample = check_neighbouring(neighbouring) != Neighbouring.REPLACE
    if in_sample:
        n_hold = min(round(n_rows * holdout_fraction), max_holdout)  # the SVM's rows only: metric, not mechanism
        if n_hold < 2:
            return data, None
    else:
        n_hold = svm_holdout_count(n_rows, labelled=True, holdout_fraction=holdout_fraction,
                                   max_holdout=max_holdout)
        if n_hold == 0:
            return data, None
    perm = rng.permutation(n_rows)
    hold, keep = perm[:n_hold], np.sort(perm[n_hold:])
    y_hold = data.y[hold]
    classes, counts = np.unique(y_hold, return_counts=True)
    stratify = y_hold if (classes.size >= 2 and counts.min() >= 2) else None
    tr, te = train_test_split(np.arange(n_hold), test_size=0.5, random_state=int(rng.integers(2**31)),
                              stratify=stratify)
    split = SvmSplit(data.take(hold[tr]), y_hold[tr], data.take(hold[te]), y_hold[te], in_sample=in_sample)
    return (data if in_sample else data.subset(keep)), split


def svm_accuracy(V_hat: np.ndarray, split: SvmSplit | None) -> float:
    """Test accuracy of a linear SVM (LinearSVC, C = 1, standardised features) on the projections V̂ᵀx.

    Trained on the held-out train rows, scored on the held-out test rows. Standardisation and scoring are done
    with numpy (same result as a StandardScaler + LinearSVC pipeline, without its per-call validation overhead).
    """
    if split is None or np.unique(split.y_train).size < 2:
        return float("nan")
    Z_train, Z_test = split.X_train @ V_hat, split.X_test @ V_hat
    mean, scale = Z_train.mean(axis=0), Z_train.std(axis=0)
    scale[scale == 0] = 1.0
    model = LinearSVC(C=1.0, max_iter=5000)
    model.fit((Z_train - mean) / scale, split.y_train)
    scores = ((Z_test - mean) / scale) @ model.coef_.T + model.intercept_
    if scores.shape[1] == 1:
        predicted = model.classes_[(scores[:, 0] > 0).astype(int)]
    else:
        predicted = model.classes_[np.argmax(scores, axis=1)]
    return float(np.mean(predicted == split.y_test))


def svm_majority_baseline(split: SvmSplit | None) -> float:
    """Test accuracy of always predicting the training majority class: the floor an informative SVM must beat.

    On imbalanced labels (census: 94 % one class) every subspace, random included, scores near this value.
    """
    if split is None:
        return float("nan")
    classes, counts = np.unique(split.y_train, return_counts=True)
    return float(np.mean(split.y_test == classes[np.argmax(counts)]))


def svm_accuracy_or_reason(V_hat: np.ndarray, split: SvmSplit | None) -> tuple[float, str]:
    """:func:`svm_accuracy`, or NaN and the reason when the classifier cannot be trained (e.g. a continuous label):
    the SVM is one metric among several and its failure never removes the others."""
    if split is not None and np.unique(split.y_train).size < 2:
        return float("nan"), SVM_ONE_CLASS
    try:
        return svm_accuracy(V_hat, split), ""
    except (ValueError, TypeError):  # the message is fixed text: an exception's text may quote a record
        from sklearn.utils.multiclass import type_of_target

        kind = type_of_target(split.y_train) if split is not None else "unknown"
        return float("nan"), (f"SVM accuracy not available: the label is {kind}, not classes. Choose a class "
                              "column or binarise it (label = column > threshold). The other metrics are unaffected.")


def evaluate(release, data: PreparedData, split: SvmSplit | None = None,
             notes: list[str] | None = None) -> dict[str, float]:
    """All metrics of one release against the data the mechanism saw (NaN for a ⊥ release).

    A metric that cannot be computed (the SVM on an unusable label) is NaN; why is appended to ``notes``."""
    if release.subspace is None:
        return {name: float("nan") for name in METRIC_NAMES}
    if release.d != data.d:
        raise DataError(f"release has d = {release.d} but the data has d = {data.d}.")
    V_hat = release.subspace
    V_k = data.eigenvectors[:, : V_hat.shape[1]]
    svm, why = svm_accuracy_or_reason(V_hat, split)
    if why and notes is not None:
        notes.append(why)
    return {
        "captured_variance_ratio": captured_variance_ratio(data.C, V_hat, data.eigenvalues),
        "frobenius_error": frobenius_error(data.C, release.covariance_post),
        "principal_angle_max_deg": principal_angle_max_deg(V_k, V_hat),
        "sin_theta_max": sin_theta_max(V_k, V_hat),
        "svm_accuracy": svm,
    }
