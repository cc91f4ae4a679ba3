"""Non-private diagnostics of the per-record steps: how many values each column's public bounds clamp.

Clamping to public bounds is private (per record, with public parameters), but *how many* values were clamped is
read off the data: it is a diagnostic for choosing settings, never part of a release, and it is labelled NOT
private wherever it is shown (Data page, ``dpcore schema check``, ``dpcore sweep``'s notes). A large share means
the declared bounds cut into the data — a utility problem (the clamped values all sit on the bound), not a leak.

One computation serves every path: :func:`clamp_report_from_counts` takes the exact counts the schema encoders (in
memory and streamed) record — ``values_outside_bounds`` and, apart from them, ``missing_values`` (empty or unreadable
cells: filled, dropped or imputed by the missing-value policy, never clamped) — and :func:`clamp_report` reads them
off a loaded :class:`~dpcore.data.Dataset` (a dataset without encoder counts: its values and public ranges). So
``dpcore schema check`` and ``dpcore sweep`` report the same numbers, through :meth:`ClampReport.messages`: an empty
cell filled with 0 below a bound of 1 is a missing value, not a clamped one.

Also here: how the dashboard shows a bound (:data:`BOUND_FORMAT`, :data:`NORM_BOUND_FORMAT`) and :func:`as_shown`,
the one rule by which declaring a *shown* value public declares exactly the digits shown, never hidden digits of a
record (privacy review R4-5).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from ..vocabulary import MissingPolicy

#: A column whose public bounds clamp more than this share of its rows gets a warning.
CLAMP_WARN_SHARE = 0.05
#: The label every display of these numbers carries.
NOT_PRIVATE_LABEL = "non-private diagnostic, read off the data"
_CHUNK_ENTRIES = 1 << 22
_POLICY_WORDS = {MissingPolicy.ZERO.value: "filled with 0 (missing = zero)",
                 MissingPolicy.DROP.value: "dropped with their rows (missing = drop)",
                 MissingPolicy.MEAN.value: "imputed with the column mean (missing = mean)"}
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
    #: Share of rows whose cell is missing (empty or unreadable), per column (columns with none left out): what the
    #: missing-value policy fills, drops or imputes; never counted as clamped.
    missing: Mapping[str, float] = field(default_factory=dict)
    #: The missing-value policy the run applies ("zero", "drop", "mean"), when known.
    missing_policy: str | None = None

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

    def missing_note(self, limit: int = 8) -> str:
        """One line on the missing cells, kept apart from clamping; "" when no cell is missing."""
        if not self.missing:
            return ""
        ranked = sorted(self.missing.items(), key=lambda cs: -cs[1])
        shown = ", ".join(f"{c!r} {format_share(s)}" for c, s in ranked[:limit])
        more = f" and {len(ranked) - limit} more column(s)" if len(ranked) > limit else ""
        policy = _POLICY_WORDS.get(self.missing_policy or "", "handled by the missing-value policy")
        return (f"({NOT_PRIVATE_LABEL}) share of rows with a missing (empty or unreadable) cell: {shown}{more}; "
                f"those cells are {policy}, not clamped to the bounds.")

    def messages(self) -> list[tuple[str, str]]:
        """What a report says, as (level, text) with level "note" or "warning": the clamped shares, the missing
        cells, and the warning when a share is large. The CLI's ``schema check`` and ``sweep`` print these."""
        out = [("note", self.summary())] if self.shares else []
        out += [("note", self.missing_note())] if self.missing else []
        out += [("warning", self.warning())] if self.large else []
        return out

    def as_dict(self) -> dict:
        return {"clamped_share": dict(self.shares), "rows": self.n_rows, "warn_above": self.threshold,
                "large": list(self.large), "missing_share": dict(self.missing),
                "missing_policy": self.missing_policy, "private": False}


def format_share(share: float) -> str:
    """A share as a percentage with one decimal ("49.8 %"), "< 0.1 %" for a small non-zero one."""
    if 0 < share < 0.001:
        return "< 0.1 %"
    return f"{100 * share:.1f} %"


def clamp_report_from_counts(counts: Mapping[str, int] | None, n_rows: int,
                             threshold: float = CLAMP_WARN_SHARE, *, missing: Mapping[str, int] | None = None,
                             missing_policy: str | None = None) -> ClampReport:
    """From exact per-column counts of values outside the bounds (``values_outside_bounds``), of missing cells
    (``missing_values``, reported apart) and the number of rows they were counted on."""
    n = max(int(n_rows), 1)
    shares = {str(c): int(v) / n for c, v in (counts or {}).items() if int(v) > 0}
    gaps = {str(c): int(v) / n for c, v in (missing or {}).items() if int(v) > 0}
    return ClampReport(shares, int(n_rows), threshold, gaps, missing_policy)


def encoder_report(diagnostics: Mapping, n_rows: int, missing_policy: str | None = None,
                   threshold: float = CLAMP_WARN_SHARE) -> ClampReport:
    """The report of a schema encoder's counts (``values_outside_bounds``, ``missing_values``) on ``n_rows`` rows:
    what ``dpcore schema check`` (the encoded table) and ``dpcore sweep`` (the loaded dataset) both report."""
    return clamp_report_from_counts(diagnostics.get("values_outside_bounds"), n_rows, threshold,
                                    missing=diagnostics.get("missing_values"), missing_policy=missing_policy)


def clamp_report(dataset, threshold: float = CLAMP_WARN_SHARE) -> ClampReport:
    """Per feature of a loaded dataset: the share of rows outside its public range (what schema scaling clamps),
    and apart from it the share of rows whose cell was missing.

    A dataset loaded with a schema carries its encoder's counts (taken before the missing-value policy filled a gap
    with 0, which is no clamping): they are used. Otherwise the values are compared with the public ranges (NaN not
    counted). Empty for a dataset without public ranges. One-hot indicators lie in their range [0, 1] and never
    count, so each numeric source column appears under its own name.
    """
    ranges = getattr(dataset, "feature_ranges", None)
    X = np.asarray(dataset.X)
    if ranges is None or X.shape[0] == 0:
        return ClampReport({}, int(X.shape[0]), threshold)
    diag = getattr(dataset, "diagnostics", None) or {}
    options = getattr(dataset, "options", None) or {}
    if "schema_public" in options:  # loaded with a schema: the encoder counted every row read, before the policy
        policy = options.get("missing")
        dropped = int(diag.get("rows_with_missing_values", 0)) if policy == MissingPolicy.DROP else 0
        return encoder_report(diag, X.shape[0] + dropped, policy, threshold)
    lo, hi = np.asarray(ranges, dtype=np.float64).T
    outside = np.zeros(X.shape[1], dtype=np.int64)
    step = max(1, _CHUNK_ENTRIES // max(X.shape[1], 1))  # a bounded temporary, whatever the size of X
    with np.errstate(invalid="ignore"):
        for start in range(0, X.shape[0], step):
            block = X[start:start + step]
            outside += ((block < lo) | (block > hi)).sum(axis=0)
    counts = {name: int(c) for name, c in zip(dataset.feature_names, outside) if c}
    return clamp_report_from_counts(counts, X.shape[0], threshold)
