"""The container every mechanism receives: preprocessed rows with ‖x‖ ≤ 1, plus sufficient statistics."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from functools import cached_property

import numpy as np

from ..exceptions import DataError
from ..privacy import Diagnostics, LedgerEntry, ledger_is_private

_NORM_SLACK = 1e-9


@dataclass(frozen=True, eq=False)
class PreparedData:
    """Preprocessed data, ready for a mechanism.

    Attributes
    ----------
    X : (n, d) array
        Rows after preprocessing, divided by the public norm bound so that every ‖xᵢ‖₂ ≤ 1.
    norm_bound : float
        B, in the units of the features after scaling/centring; covariances in those units are B²·C.
    y : (n,) array or None
        Labels (used only by evaluation metrics such as SVM accuracy).
    ledger : tuple of LedgerEntry
        Every preprocessing step with its privacy cost or a ``private=False`` flag.
    clip_fraction : float
        Fraction of rows that were clipped to the norm bound (non-private diagnostic, also in ``diagnostics``).
    diagnostics : Diagnostics
        Exact, data-dependent counts from loading and preprocessing (clip and clamp fractions, dropped rows, the
        row count): NOT private — never part of a release.
    """

    X: np.ndarray
    norm_bound: float = 1.0
    y: np.ndarray | None = None
    name: str = "data"
    feature_names: tuple[str, ...] = ()
    ledger: tuple[LedgerEntry, ...] = ()
    clip_fraction: float = 0.0
    info: dict = field(default_factory=dict)
    diagnostics: Diagnostics = field(default_factory=Diagnostics)

    def __post_init__(self) -> None:
        X = np.array(self.X, dtype=np.float64, order="C", copy=True)  # own copy: caller's array stays writable
        if X.ndim != 2 or X.shape[0] < 1 or X.shape[1] < 1:
            raise DataError(f"data must be a non-empty 2-D array (rows × features); got shape {X.shape}.")
        if not np.all(np.isfinite(X)):
            raise DataError("data contains NaN or infinite values; impute or drop them first.")
        norms = np.linalg.norm(X, axis=1)
        if norms.max(initial=0.0) > 1.0 + _NORM_SLACK:
            raise DataError(
                f"rows must have norm ≤ 1 after preprocessing (largest is {norms.max():.4g}); "
                "clip rows with dpcore.data.preprocess or divide by the norm bound."
            )
        X.setflags(write=False)
        object.__setattr__(self, "X", X)
        if self.y is not None:
            y = np.asarray(self.y)
            if y.shape[0] != X.shape[0]:
                raise DataError(f"labels have {y.shape[0]} entries but the data has {X.shape[0]} rows.")
            object.__setattr__(self, "y", y)
        if not self.feature_names:
            object.__setattr__(self, "feature_names", tuple(f"x{i}" for i in range(X.shape[1])))

    # --- shape -------------------------------------------------------------------------------------
    @property
    def n(self) -> int:
        return self.X.shape[0]

    @property
    def d(self) -> int:
        return self.X.shape[1]

    @property
    def has_labels(self) -> bool:
        return self.y is not None and len(np.unique(self.y)) >= 2

    @property
    def is_private(self) -> bool:
        """False when some preprocessing step was data-dependent and not private."""
        return ledger_is_private(self.ledger)

    # --- sufficient statistics (computed once, reused by every mechanism and metric) ---------------
    @cached_property
    def C(self) -> np.ndarray:
        """Unnormalised, uncentred second-moment matrix C = Σ xᵢxᵢᵀ (unit norm bound)."""
        C = self.X.T @ self.X
        C = 0.5 * (C + C.T)
        C.setflags(write=False)
        return C

    @cached_property
    def spectrum(self) -> tuple[np.ndarray, np.ndarray]:
        """(eigenvalues in decreasing order, eigenvectors as columns) of C — non-private."""
        w, V = np.linalg.eigh(self.C)
        w, V = w[::-1].copy(), V[:, ::-1].copy()
        w.setflags(write=False)
        V.setflags(write=False)
        return w, V

    @property
    def eigenvalues(self) -> np.ndarray:
        return self.spectrum[0]

    @property
    def eigenvectors(self) -> np.ndarray:
        return self.spectrum[1]

    @cached_property
    def fingerprint(self) -> str:
        """A content hash of X, y and the norm bound (cache key; never leaves the process)."""
        h = hashlib.blake2b(digest_size=16)
        h.update(np.asarray(self.X.shape, dtype=np.int64).tobytes())
        h.update(self.X.tobytes())
        h.update(np.float64(self.norm_bound).tobytes())
        if self.y is not None:
            h.update(np.asarray(self.y).astype(str).astype("U").tobytes())
        return h.hexdigest()

    # --- derived data ------------------------------------------------------------------------------
    def subset(self, rows: np.ndarray, name: str | None = None) -> PreparedData:
        """The same preprocessing applied to a subset of rows (index array or boolean mask)."""
        rows = np.asarray(rows)
        X = self.X[rows]
        return replace(
            self,
            X=X,
            y=None if self.y is None else self.y[rows],
            name=name or self.name,
            info=dict(self.info),
            diagnostics=Diagnostics(self.diagnostics, n_rows=X.shape[0]),
        )

    @classmethod
    def from_unit_rows(cls, X: np.ndarray, y: np.ndarray | None = None, **kwargs) -> PreparedData:
        """Wrap rows that already satisfy ‖x‖ ≤ 1 (no preprocessing recorded)."""
        return cls(X=np.asarray(X, dtype=float), y=y, **kwargs)
