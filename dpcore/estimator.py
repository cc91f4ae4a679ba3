"""A scikit-learn compatible differentially private PCA estimator."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from .core._validation import check_choice, check_delta, check_epsilon, check_fraction, check_positive
from .core.privacy import Diagnostics, ledger_total
from .data import Dataset, preprocess
from .exceptions import InvalidParameterError, PrivacyLeakWarning
from .mechanisms import get_mechanism
from .mechanisms.base import Release
from .vocabulary import Centering, FeatureScaling, Neighbouring

#: The centrings the estimator offers (a public centre needs a centre vector, which it does not take).
CENTERINGS = (Centering.NONE, Centering.DP, Centering.EMPIRICAL)


class DPPCA(TransformerMixin, BaseEstimator):
    """Differentially private PCA with any registered mechanism.

    Parameters
    ----------
    mechanism : str, default="analyze_gauss"
        A mechanism id (``dpcore mechanisms``).
    epsilon, delta : float
        Total privacy budget of the fit (centring included). ``delta`` is ignored by pure-ε mechanisms.
    n_components : int, default=2
    norm_bound : float, default=1.0
        Public bound B on the row norm; rows are clipped to it (a per-row operation, no privacy cost).
    centering : {"none", "dp", "empirical"}, default="none"
        "none" works with the uncentred second moment, as the source papers do. "dp" spends
        ``centering_fraction`` of ε (and half of δ) on a Gaussian DP mean. "empirical" subtracts the true mean:
        NOT private (a ``PrivacyLeakWarning`` is raised and the ledger says so).
    centering_fraction : float, default=0.1
    neighbouring : {"replace", "add_remove"}, default="replace"
    random_state : None, int, SeedSequence or numpy Generator
        None draws OS entropy (use for real releases); an int makes a demo reproducible. DP centring and the
        mechanism draw from independent child streams of it (:mod:`dpcore.core.seeding`). One int used for two fits
        of the same data at different settings (ε, δ, norm_bound, …) gives both the same mechanism noise, and the
        two releases together reveal the data exactly: never reuse a seed across releases of private data.
    time_limit : float or None
        Seconds before a slow mechanism (samplers) gives up with ``MechanismTimeout``.
    allow_invalid : bool, default=False
        Allow mechanisms whose privacy claim is known to be false (exhibits only).
    **mechanism_options
        Passed to the mechanism (e.g. ``calibration="classical"`` for analyze_gauss).

    Attributes
    ----------
    Private (may be published with the model):

    components_ : (n_components, n_features) array — the private principal axes.
    mean_ : (n_features,) array — the centre subtracted (the DP mean with ``centering="dp"``; zeros with "none").
    explained_variance_ : (n_components,) array — variances along the components from the private covariance
        (NaN for subspace-only mechanisms). They divide by n, which is public only under replace-one; under
        add/remove they are NaN — use ``explained_scatter_``.
    explained_scatter_ : (n_components,) array — B²·v̂ᵀĈv̂ (unnormalised, no n involved); NaN without a covariance.
    n_samples_ : int or None — the row count where it is public (replace-one); None under add/remove.
    release_ : Release — the mechanism's output; its ``diagnostics`` are NOT private.
    ledger_ : list of LedgerEntry — every step with its privacy cost; ``private=False`` marks leaks.

    Not private (exact values computed from the data; for the analyst's eyes only):

    diagnostics_ : Diagnostics — clip fraction, exact row count and the mechanism's diagnostics.
    """

    def __init__(self, mechanism: str = "analyze_gauss", epsilon: float = 1.0, delta: float = 1e-5,
                 n_components: int = 2, norm_bound: float = 1.0, centering: str = Centering.NONE.value,
                 centering_fraction: float = 0.1, neighbouring: str = Neighbouring.REPLACE.value, random_state=None,
                 time_limit: float | None = None, allow_invalid: bool = False, **mechanism_options: Any) -> None:
        self.mechanism = mechanism
        self.epsilon = epsilon
        self.delta = delta
        self.n_components = n_components
        self.norm_bound = norm_bound
        self.centering = centering
        self.centering_fraction = centering_fraction
        self.neighbouring = neighbouring
        self.random_state = random_state
        self.time_limit = time_limit
        self.allow_invalid = allow_invalid
        self._mechanism_options = dict(mechanism_options)

    # --- scikit-learn parameter protocol with pass-through mechanism options ---------------------
    def get_params(self, deep: bool = True) -> dict:
        params = super().get_params(deep=deep)
        params.update(self._mechanism_options)
        return params

    def set_params(self, **params):
        own = set(super().get_params(deep=False))
        for key in [k for k in params if k not in own]:
            self._mechanism_options[key] = params.pop(key)
        return super().set_params(**params)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = self.random_state is None
        return tags

    # --- fitting --------------------------------------------------------------------------------
    def fit(self, X, y=None):
        """Fit the private principal axes on X (n_samples, n_features)."""
        X = self._validated_rows(X)
        d = X.shape[1]
        mech = get_mechanism(self.mechanism)
        epsilon = check_epsilon(self.epsilon)
        delta = check_delta(self.delta)
        bound = check_positive(self.norm_bound, "norm_bound")
        centering = check_choice(self.centering, "centering", CENTERINGS)
        if isinstance(self.n_components, bool) or not isinstance(self.n_components, (int, np.integer)):
            raise InvalidParameterError(f"n_components must be a whole number, got {self.n_components!r}.")
        k = int(self.n_components)
        if not 1 <= k <= d:
            raise InvalidParameterError(f"n_components={k} must be between 1 and n_features = {d}.")

        eps_cov, delta_cov = epsilon, delta
        prep: dict[str, Any] = {}
        if centering == Centering.DP:
            fraction = check_fraction(self.centering_fraction, "centering_fraction")
            if delta == 0:
                raise InvalidParameterError("centering='dp' uses a Gaussian DP mean and needs delta > 0.")
            prep = {"centering_epsilon": fraction * epsilon, "centering_delta": delta / 2}
            eps_cov, delta_cov = epsilon - prep["centering_epsilon"], delta - prep["centering_delta"]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PrivacyLeakWarning)  # re-raised below with the estimator's wording
            data = preprocess(Dataset(id="fit", name="fit", X=_read_only(X)), feature_scaling=FeatureScaling.NONE,
                              norm_bound=bound, centering=centering, neighbouring=self.neighbouring,
                              random_state=self.random_state, **prep)
        if not data.is_private:
            warnings.warn("centering='empirical' uses the true mean: the fit is NOT differentially private.",
                          PrivacyLeakWarning, stacklevel=2)
        mean = np.asarray(data.info.get("center", np.zeros(d)), dtype=float)
        if not mech.uses_delta:
            delta_cov = 0.0
        release: Release = mech.prepare_release(
            data, k, eps_cov, delta_cov, neighbouring=self.neighbouring, time_limit=self.time_limit,
            allow_invalid=self.allow_invalid, **self._mechanism_options,
        ).run(self.random_state, self.time_limit, lazy_post=True)  # the fit needs the subspace only
        if release.is_bottom:
            raise InvalidParameterError(f"{mech.id} returned ⊥ (no output): {release.reason}")
        self.release_ = release
        self.ledger_ = list(release.full_ledger)
        self.mean_ = mean
        self.components_ = release.subspace.T.copy()
        self.n_samples_ = release.n
        self.explained_scatter_ = self._private_scatter(release)
        self.explained_variance_ = (self.explained_scatter_ / release.n if release.n is not None
                                    else np.full(k, np.nan))
        self.diagnostics_ = Diagnostics({**data.diagnostics, **release.diagnostics})
        return self

    def _validated_rows(self, X) -> np.ndarray:
        """``validate_data`` for ``fit``; a float64 ndarray that it would accept as is takes a shortcut.

        Finiteness is checked by the preprocessing pass itself (a row norm that is not finite raises "data contains
        NaN or infinite values"), so the input is read once less. For a plain C- or F-ordered float64 ``ndarray``
        with ≥ 2 rows and ≥ 1 column, ``validate_data`` would return it unchanged and record only
        ``n_features_in_`` (and forget ``feature_names_in_``): the shortcut does exactly that, without its
        checks' Python overhead. Everything else (lists, frames, other dtypes, too few rows) goes through it, so
        the errors are scikit-learn's.
        """
        if (type(X) is np.ndarray and X.dtype == np.float64 and X.ndim == 2 and X.shape[0] >= 2
                and X.shape[1] >= 1 and (X.flags.c_contiguous or X.flags.f_contiguous)):
            self.n_features_in_ = X.shape[1]
            if hasattr(self, "feature_names_in_"):
                del self.feature_names_in_
            return X
        return validate_data(self, X, dtype=np.float64, ensure_min_samples=2, ensure_all_finite=False)

    @staticmethod
    def _private_scatter(release: Release) -> np.ndarray:
        """B²·v̂ᵀĈv̂ along the components from the private covariance (post-processing), else NaN."""
        variances = release.post_processed_variances()
        if variances is None:
            return np.full(release.k, np.nan)
        return variances * release.norm_bound**2

    @property
    def privacy_spent(self) -> tuple[float, float]:
        """(ε, δ) actually spent by the fit (basic composition over the ledger)."""
        check_is_fitted(self, "components_")
        return ledger_total(self.ledger_)

    def transform(self, X):
        """Project X on the private components (after subtracting ``mean_``)."""
        check_is_fitted(self, "components_")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return (X - self.mean_) @ self.components_.T

    def inverse_transform(self, Z):
        """Map projections back to feature space."""
        check_is_fitted(self, "components_")
        return np.asarray(Z, dtype=float) @ self.components_ + self.mean_


def _read_only(X: np.ndarray) -> np.ndarray:
    """A read-only view of the validated input: the fit's :class:`Dataset` then wraps it without a copy (one pass
    of preprocessing reads it; nothing keeps it after ``fit``)."""
    view = X.view()
    view.setflags(write=False)
    return view
