"""Plain-words display helpers shared by the dashboard, the CLI and reports (no Streamlit here).

* :func:`format_delta` — δ as a number everywhere (``1e-10``, ``1e-05``, ``0.001``), never a fixed-point rounding;
* :func:`held_out_note` — why the n of a results table is smaller than the dataset's n (rows held out for the SVM);
* :func:`pca_below_random_note` — why non-private PCA can score below a random subspace on SVM accuracy, computed
  from a sweep frame's columns (no per-dataset text);
* :func:`plain_words` / :func:`plain_ledger` — library texts (ledger notes, errors, role reasons) with the keyword
  arguments they quote (``feature_scaling='schema'``) replaced by the names the dashboard shows. The library keeps
  its identifiers; only the dashboard's copy of the text changes.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from ..core.privacy import LedgerEntry
from ..vocabulary import ReleaseStatus

#: How far (absolute accuracy) non-private PCA must fall below the random subspace before the note is shown.
SVM_NOTE_MARGIN = 0.005


def format_delta(value: float | None) -> str:
    """δ in its shortest exact-looking form: ``1e-10``, ``1e-05``, ``0.001``, ``0``; ``—`` when missing."""
    if value is None:
        return "—"
    v = float(value)
    if math.isnan(v):
        return "—"
    return f"{v:g}"


def format_deltas(values: Iterable[float | None]) -> list[str]:
    """:func:`format_delta` of every value (for a table column)."""
    return [format_delta(v) for v in values]


#: δ·n from which a page notes that δ is not far below 1/n, and from which it warns (δ ≥ 1/n).
DELTA_N_NOTE, DELTA_N_WARNING = 0.1, 1.0


@dataclass(frozen=True)
class DeltaCheck:
    """How δ compares with 1/n: ``severe`` when δ ≥ 1/n (a page warns), else a quieter note."""

    severe: bool
    text: str


def delta_vs_n_warning(delta: float, n_rows: int) -> DeltaCheck | None:
    """None when δ is far below 1/n for ``n_rows`` rows (δ·n < 0.1); otherwise what to tell the user. (ε, δ)-DP
    lets a mechanism publish each person's record outright with probability δ: about δ·n records in all."""
    if n_rows < 1 or delta * n_rows < DELTA_N_NOTE:
        return None
    expected = f"about δ·n ≈ {delta * n_rows:.2g} records in all"
    if delta * n_rows >= DELTA_N_WARNING:
        return DeltaCheck(True, f"δ = {format_delta(delta)} is at least 1/n for this data: an (ε, δ) guarantee then "
                                f"lets a mechanism publish each person's record outright with probability δ, "
                                f"{expected}. Choose δ well below 1/n (see Privacy basics).")
    return DeltaCheck(False, f"δ = {format_delta(delta)} is below 1/n for this data but not far below it "
                             f"(δ·n ≈ {delta * n_rows:.2g}); a smaller δ is the safer choice (see Privacy basics).")


def default_delta(n_rows: int | None, choices: Sequence[float], fallback: float) -> float:
    """The largest of ``choices`` far below 1/n (δ·n under :data:`DELTA_N_NOTE`, so
    :func:`delta_vs_n_warning` says nothing); ``fallback`` when n is unknown, the smallest choice when none is.

    ``n_rows`` must be public (a built-in dataset's documented size): a δ chosen from a private n would itself
    depend on the data.
    """
    if n_rows is None or n_rows < 1:
        return fallback
    ok = [c for c in choices if delta_vs_n_warning(c, n_rows) is None]
    return max(ok) if ok else min(choices)


def held_out_note(n_total: int, n_mechanism: int) -> str:
    """One sentence explaining ``n_total`` vs ``n_mechanism`` (empty when they agree)."""
    held = n_total - n_mechanism
    if held <= 0:
        return ""
    return (f"{n_total:,} rows in the data; {held:,} of them are held out to test the SVM accuracy, so "
            f"{n_mechanism:,} rows reach the mechanisms.")


def _ok_mean(frame: pd.DataFrame, mechanism: str, column: str) -> float | None:
    rows = frame[(frame["mechanism"] == mechanism) & (frame["status"] == ReleaseStatus.OK)]
    values = rows[column].to_numpy(dtype=float) if column in rows else np.empty(0)
    values = values[np.isfinite(values)]
    return float(values.mean()) if values.size else None


def pca_below_random_note(frame: pd.DataFrame | None, *, pca: str = "pca", random: str = "random",
                          margin: float = SVM_NOTE_MARGIN) -> str | None:
    """Why non-private PCA loses to a random subspace on SVM accuracy — or None when it does not.

    Read from the sweep frame: the mean ``svm_accuracy`` of the ``pca`` and ``random`` reference rows (status ok).
    """
    if frame is None or frame.empty or "svm_accuracy" not in frame or "mechanism" not in frame:
        return None
    top, rand = _ok_mean(frame, pca, "svm_accuracy"), _ok_mean(frame, random, "svm_accuracy")
    if top is None or rand is None or top >= rand - margin:
        return None
    return (f"Non-private PCA's subspace scores {top:.3f} on SVM accuracy, below a random subspace of the same "
            f"dimension ({rand:.3f}). PCA keeps the directions of largest variance, and these need not be the "
            "directions that separate the classes: when most of the variance comes from something other than the "
            "label (on uncentred data the first direction mostly points at the mean; a strong trait unrelated to "
            "the label takes the next ones), a random subspace can keep more of the class difference. The private "
            "mechanisms approximate PCA's subspace, so they inherit this; centring the data, a larger k or "
            "another label can change it.")


#: The dashboard's names of the library's keyword arguments and their values (what the Data page's widgets say).
PLAIN_WORDS: dict[str, str] = {
    "feature_scaling='schema'": "feature scaling “public schema ranges”",
    "feature_scaling='minmax'": "feature scaling “min–max from data”",
    "feature_scaling='none'": "no feature scaling",
    "norm_mode='max_norm'": "“divide all by max norm”",
    "norm_mode='clip'": "“clip to B”",
    "centering='dp'": "centring “DP mean”",
    "centering='public'": "centring “public mean”",
    "centering='empirical'": "centring “empirical mean”",
    "centering='none'": "no centring",
    "missing='zero' or 'drop'": "missing values “fill 0” or “drop rows”",
    "missing='zero'": "missing values “fill 0”",
    "missing='mean'": "missing values “mean”",
    "missing='drop'": "missing values “drop rows”",
    "categorical='drop'": "categorical columns “drop”",
    "categorical='onehot'": "categorical columns “one-hot”",
    "neighbouring='replace'": "the replace-one neighbouring relation",
    "neighbouring='add_remove'": "the add/remove neighbouring relation",
    "norm_bound=B": "a norm bound B",
    "norm_bound": "the norm bound",
    "max_categories": "the category limit",
    "max_columns": "the column limit",
}
_PLAIN = re.compile("|".join(re.escape(k) for k in sorted(PLAIN_WORDS, key=len, reverse=True)))


def plain_words(text: str) -> str:
    """``text`` with the library's keyword arguments (``missing='zero'``) in the dashboard's words."""
    return _PLAIN.sub(lambda m: PLAIN_WORDS[m.group(0)], text or "")


def plain_ledger(entries: Iterable[LedgerEntry]) -> list[LedgerEntry]:
    """Ledger entries with their step names and notes in plain words (costs and flags unchanged)."""
    return [replace(e, step=plain_words(e.step), note=plain_words(e.note)) for e in entries]


#: Names of common mechanism diagnostics (the dictionary keys of ``Release.diagnostics``) in plain words.
DIAGNOSTIC_LABELS: dict[str, str] = {"sigma": "σ (noise scale)", "n_rows": "rows n", "converged": "converged",
                                     "burn_in": "burn-in scans", "chains": "chains", "tau_h": "threshold τ_h",
                                     "ell": "grid scale ℓ", "t": "blocks t", "r": "runs r", "alpha": "α"}


def diagnostic_label(key: str) -> str:
    """A diagnostic's key as a reader sees it: a known name, else the key with spaces ("nonprivate_gap" →
    "gap (non-private)")."""
    if key in DIAGNOSTIC_LABELS:
        return DIAGNOSTIC_LABELS[key]
    text = str(key)
    suffix = ""
    if text.startswith("nonprivate_"):
        text, suffix = text[len("nonprivate_"):], " (non-private)"
    return text.replace("_", " ") + suffix


#: Mechanism options (``Param.name``) as the dashboard labels them; the identifier stays in the help text.
OPTION_LABELS: dict[str, str] = {
    "sensitivity": "Sensitivity rule", "exponent": "Bingham exponent", "beta": "Failure probability β",
    "vector_fraction": "Budget share of the direction", "exact_beta": "Exact β* (not the relaxed bound)",
    "calibration": "Noise calibration", "iterations": "Power iterations L", "constant": "Constant c",
    "debias": "Subtract the noise mean", "ell": "Grid scale ℓ", "tolerance": "Membership tolerance",
    "max_work": "Search-size limit", "t": "Blocks t", "q": "Reference points q",
    "gamma_pub": "Public gap guess γ_pub", "point": "Released point", "r": "Runs r", "alpha": "Accuracy α",
    "burn_in": "Burn-in scans T", "chains": "Chains", "variant": "Variant",
}


def option_label(name: str) -> str:
    """A mechanism option's label (a known name, else the identifier with spaces)."""
    return OPTION_LABELS.get(name, name.replace("_", " ").capitalize())


#: Audit choices (neighbour constructions, statistics, released fields) in plain words.
AUDIT_LABELS: dict[str, str] = {
    "zero_vs_unit": "zero row vs a unit row", "top_eigvec": "zero row vs a row along the top eigenvector",
    "smallest_eigvec": "zero row vs a row along the smallest eigenvector",
    "copies_add_remove": "copies of one row, one added or removed", "in_plane": "a row moved within a plane",
    "unit_swap_zeros": "e₁ swapped for e₂, every other row zero",
    "auto": "automatic", "support": "support (outputs one side cannot produce)", "quadratic": "quadratic form",
    "alignment": "alignment with the canary", "eigenvalue": "eigenvalue", "atom": "repeated output (atom)",
    "status": "outcome (release or ⊥)", "classifier": "trained classifier", "covariance": "covariance",
    "covariance_post": "covariance after post-processing", "eigenvalues": "eigenvalues", "subspace": "subspace",
}


def identifier_label(name: str) -> str:
    """A library identifier shown in a picker (audit choices, options) in plain words."""
    return AUDIT_LABELS.get(name) or OPTION_LABELS.get(name) or name.replace("_", " ")
