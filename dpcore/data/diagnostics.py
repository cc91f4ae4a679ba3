"""Non-private diagnostics of the per-record steps: how many values each column's public bounds clamp.

Clamping to public bounds is private (per record, with public parameters), but *how many* values were clamped is
read off the data: it is a diagnostic for choosing settings, never part of a release, and it is labelled NOT
private wherever it is shown (Data page, ``dpcore schema check``, ``dpcore sweep``'s notes). A large share means
the declared bounds cut into the data — a utility problem (the clamped values all sit on the bound), not a leak.

One computation serves every path: :func:`clamp_report` for a loaded :class:`~dpcore.data.Dataset` (its values
before the clamp and its public ranges), :func:`clamp_report_from_counts` for the exact counts that the schema
encoders (in memory and streamed) already record as ``values_outside_bounds``.

Also here: how the dashboard shows a bound (:data:`BOUND_FORMAT`, :data:`NORM_BOUND_FORMAT`) and :func:`as_shown`,
the one rule by which declaring a *shown* value public declares exactly the digits shown, never hidden digits of a
record (privacy review R4-5).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

#: A column whose public bounds clamp more than this share of its rows gets a warning.
CLAMP_WARN_SHARE = 0.05
#: The label every display of these numbers carries.
NOT_PRIVATE_LABEL = "non-private diagnostic, read off the data"
_CHUNK_ENTRIES = 1 << 22
#: How the schema editor's grid shows a bound (printf style, as Streamlit's NumberColumn formats it).
BOUND_FORMAT = "%.6g"
#: How the Data page's "Norm bound B" widget shows B.
NORM_BOUND_FORMAT = "%.4g"


def as_shown(value: float, fmt: str) -> float:
    """``value`` as the printf-style ``fmt`` shows it. A value read off the data and then declared public ("tick
    public", "declare shown", "I know this bound") must be the number the user saw: its hidden digits belong to a
    record."""
    return float(fmt % float(value))


@dataclass(frozen=True)
class ClampReport:
    """Share of rows whose value was clamped to the public bounds, per column (columns with none left out)."""

    shares: Mapping[str, float]
    n_rows: int
    threshold: float = CLAMP_WARN_SHARE

    @property
    def large(self) -> dict[str, float]:
        """The columns above :attr:`threshold`, largest share first."""
        return dict(sorted(((c, s) for c, s in self.shares.items() if s > self.threshold), key=lambda cs: -cs[1]))

    def summary(self, limit: int = 8) -> str:
        """One line: "share of rows clamped to the public bounds: age 49.8 %, … (non-private …)"; "" if none."""
        if not self.shares:
            return ""
        ranked = sorted(self.shares.items(), key=lambda cs: -cs[1])
        shown = ", ".join(f"{c} {format_share(s)}" for c, s in ranked[:limit])
        more = f" and {len(ranked) - limit} more column(s)" if len(ranked) > limit else ""
        return f"share of rows clamped to the public bounds: {shown}{more} ({NOT_PRIVATE_LABEL})"

    def warning(self) -> str:
        """A warning when some column is clamped in more than :attr:`threshold` of its rows; "" otherwise. It
        carries :data:`NOT_PRIVATE_LABEL` itself, so every caller (CLI, Data page) prints it labelled."""
        large = self.large
        if not large:
            return ""
        cols = ", ".join(f"{c!r} ({format_share(s)})" for c, s in list(large.items())[:5])
        return (f"({NOT_PRIVATE_LABEL}) the public bounds clamp more than {format_share(self.threshold)} of the "
                f"rows of {cols}: those "
                "values all sit on a bound, which biases the result. Check the bounds against public knowledge "
                "(choosing them from these counts would itself be a data-dependent, non-private choice).")

    def as_dict(self) -> dict:
        return {"clamped_share": dict(self.shares), "rows": self.n_rows, "warn_above": self.threshold,
                "large": list(self.large), "private": False}


def format_share(share: float) -> str:
    """A share as a percentage with one decimal ("49.8 %"), "< 0.1 %" for a small non-zero one."""
    if 0 < share < 0.001:
        return "< 0.1 %"
    return f"{100 * share:.1f} %"


def clamp_report_from_counts(counts: Mapping[str, int] | None, n_rows: int,
                             threshold: float = CLAMP_WARN_SHARE) -> ClampReport:
    """From exact per-column counts of values outside the bounds (``values_outside_bounds``) and the row count."""
    n = max(int(n_rows), 1)
    shares = {str(c): int(v) / n for c, v in (counts or {}).items() if int(v) > 0}
    return ClampReport(shares, int(n_rows), threshold)


def clamp_report(dataset, threshold: float = CLAMP_WARN_SHARE) -> ClampReport:
    """Per feature of a loaded dataset: the share of rows outside its public range (what schema scaling clamps).

    Empty for a dataset without public ranges. Missing values (NaN) are not counted. One-hot indicators lie in their
    range [0, 1] and never count, so each numeric source column appears under its own name.
    """
    ranges = getattr(dataset, "feature_ranges", None)
    X = np.asarray(dataset.X)
    if ranges is None or X.shape[0] == 0:
        return ClampReport({}, int(X.shape[0]), threshold)
    lo, hi = np.asarray(ranges, dtype=np.float64).T
    outside = np.zeros(X.shape[1], dtype=np.int64)
    step = max(1, _CHUNK_ENTRIES // max(X.shape[1], 1))  # a bounded temporary, whatever the size of X
    with np.errstate(invalid="ignore"):
        for start in range(0, X.shape[0], step):
            block = X[start:start + step]
            outside += ((block < lo) | (block > hi)).sum(axis=0)
    counts = {name: int(c) for name, c in zip(dataset.feature_names, outside) if c}
    return clamp_report_from_counts(counts, X.shape[0], threshold)
