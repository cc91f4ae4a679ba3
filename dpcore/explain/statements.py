"""One wording for every δ statement about a mechanism whose privacy claim fails (Explore, Inspect, Audit, Learn, CLI),
and for what a non-private pipeline means for the guarantees shown (:func:`non_private_steps`,
:func:`non_private_warning`, :func:`guarantees_qualifier`).

A claimed-invalid mechanism has two kinds of δ numbers, and they differ for good reasons: the *proven* counterexample
δ at one ε (theory, exact), and an *audit* lower bound at one ε and one confidence level (measured, always a bit
below the proven value). :func:`delta_statement` writes either one, always naming its ε (and the confidence for an
audit) and saying what the number means, so two statements side by side can be compared.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence

from ..core._validation import check_epsilon, check_fraction
from ..exceptions import InvalidParameterError

__all__ = ["centring_note", "delta_statement", "format_bound", "guarantees_qualifier", "mechanism_delta_statement",
           "non_private_steps", "non_private_warning"]


def format_bound(delta: float) -> str:
    """A computed δ bound as a plain number with three significant digits (0.0952, 0.632, 1e-05); settings δ use
    :func:`dpcore.explain.display.format_delta` (exact)."""
    delta = float(delta)
    if not math.isfinite(delta) or delta < 0:
        raise InvalidParameterError(f"δ must be a finite number ≥ 0, got {delta!r}.")
    return f"{delta:.3g}"


def delta_statement(epsilon: float, delta: float, *, confidence: float | None = None, every_epsilon: bool = False,
                    subject: str = "this mechanism") -> str:
    """The δ statement for ``subject`` at ``epsilon``.

    Without ``confidence``: a proven counterexample — ``subject`` is not (ε, δ)-DP at this ε for any δ below
    ``delta``. With ``confidence`` (in (0, 1)): an audit lower bound ``δ ≥ delta`` at this ε and confidence;
    ``every_epsilon`` says the witness outputs are impossible under the neighbouring dataset, so the bound holds at
    every ε.
    """
    eps = f"{check_epsilon(epsilon):g}"
    delta = float(delta)
    if not 0.0 < delta <= 1.0:
        raise InvalidParameterError(f"a δ statement needs 0 < δ ≤ 1, got {delta!r}.")
    d = format_bound(delta)
    if confidence is None:
        if every_epsilon:
            raise InvalidParameterError("every_epsilon applies to an audit bound (give its confidence).")
        return (f"At ε = {eps} {subject} is not (ε, δ)-DP for any δ < {d}: on two datasets that differ in one "
                f"person's record, outputs with probability {d} break the e^ε bound (a proven counterexample).")
    conf = f"{100 * check_fraction(confidence, 'confidence'):g} %"
    head = (f"Audit at ε = {eps}, {conf} confidence: δ ≥ {d}. Outputs with probability at least {d} break the e^ε "
            "bound between two datasets that differ in one person's record")
    if every_epsilon:
        return f"{head}; the neighbouring dataset can never produce them, so {subject} needs δ ≥ {d} at every ε."
    return f"{head}, so at ε = {eps} {subject} needs δ ≥ {d}."


def mechanism_delta_statement(mechanism, epsilon: float, options: dict | None = None,
                              subject: str = "this mechanism") -> str | None:
    """The proven-counterexample statement of a mechanism at ``epsilon`` (None when it declares no counterexample)."""
    delta = mechanism.counterexample_delta(epsilon, options)
    return None if delta is None else delta_statement(epsilon, delta, subject=subject)


# --------------------------------------------------------------------------------------------------
# a non-private pipeline, step by step and column by column
# --------------------------------------------------------------------------------------------------

#: Columns named in one step before "… and N more".
SHOWN_COLUMNS = 6


def _columns(names: Iterable[str], *, more: bool = False) -> str:
    """``columns 'a', 'b' and 3 more`` (distinct, in order); ``more``: the list given is itself cut short."""
    names = list(dict.fromkeys(str(n) for n in names))
    shown = ", ".join(map(repr, names[:SHOWN_COLUMNS]))
    if len(names) > SHOWN_COLUMNS:
        shown += " and more" if more else f" and {len(names) - SHOWN_COLUMNS} more"
    elif more:
        shown += " and more"
    return f"column{'s' if len(names) > 1 or more else ''} {shown}"


def _source_columns(feature_names: Sequence[str], *, one_hot: bool | None = None) -> list[str]:
    """The table columns behind the features (``colour=red`` → ``colour``); ``one_hot`` keeps only the one-hot
    (True) or only the other (False) columns."""
    out = []
    for name in feature_names:
        is_indicator = "=" in name
        if one_hot is None or one_hot == is_indicator:
            out.append(name.split("=", 1)[0] if is_indicator else name)
    return list(dict.fromkeys(out))


def _schema_items(note: str) -> tuple[list[str], bool]:
    """What a "schema values read off the data" note lists as not public (the file format, the label, columns),
    and whether the note cut the list short."""
    found = re.search(r"not confirmed as public: (.*?) \(read off the data", note or "")
    if not found:
        return [], False
    text = found.group(1)
    return [item.strip() for item in text.replace(" …", "").split(",") if item.strip()], text.endswith("…")


def _describe(step: str, note: str, feature_names: Sequence[str]) -> list[str]:
    """One non-private ledger step in words that name what it read off the data, and where (one or more parts)."""
    every = f"every feature: {_columns(_source_columns(feature_names))}" if feature_names else "every column"
    if step == "schema values read off the data":
        items, more = _schema_items(note)
        cols = [i for i in items if i not in ("file format", "label")]
        parts = (["the file format detected from the cells"] if "file format" in items else []) + \
            (["the label guessed from the data"] if "label" in items else []) + \
            ([f"{_columns(cols, more=more)}: roles, bounds or categories read off the data"] if cols else [])
        return parts or ["schema values read off the data"]
    if step.startswith("one-hot") and "from the data" in step:
        cols = _source_columns(feature_names, one_hot=True)
        return [f"{_columns(cols)}: category lists read off the data" if cols
                else "category lists read off the data"]
    described = {
        "min–max scaling from the data": f"min–max scaling read off the data (the range of {every})",
        "divide by the maximum row norm": "max-norm scaling read off the data (B = the largest row norm)",
        "clip rows to ‖x‖ ≤ B": "the norm bound B read off the data (e.g. from the clipping advisor)",
        "empirical centring": f"centring on the data mean (of {every})",
        "file format and column roles read off the data":
            "the file format and the column roles (which columns are features) inferred from the cells",
        "drop rows without a label": "rows without a label dropped (n depends on the data)",
        "drop rows with missing values": "rows with a missing value dropped (n depends on the data)",
        "mean imputation of missing values": f"missing values filled with column means read off the data ({every})",
        "drop non-numeric columns": "the columns read as text were dropped (which ones was read off the data)",
    }
    return [described.get(step, f"{step} ({note})" if note else step)]


def non_private_steps(ledger: Iterable, feature_names: Sequence[str] = ()) -> list[str]:
    """Each non-private step of a preprocessing ``ledger`` (``LedgerEntry`` s) in words, naming the step and the
    column(s) it read off the data (``feature_names``: the prepared data's, ``colour=red`` for an indicator)."""
    names = tuple(feature_names)
    return list(dict.fromkeys(part for e in ledger if not e.private for part in _describe(e.step, e.note, names)))


def non_private_warning(ledger: Iterable, feature_names: Sequence[str] = ()) -> str | None:
    """Explore's warning when the preprocessing is not private (None when it is): which steps, which columns."""
    steps = non_private_steps(ledger, feature_names)
    if not steps:
        return None
    listed = "; ".join(f"({i}) {s}" for i, s in enumerate(steps, 1)) if len(steps) > 1 else steps[0]
    some = "non-private steps" if len(steps) > 1 else "a non-private step"
    return (f"**The preprocessing includes {some}**, so no release on this data is end-to-end private: {listed}. "
            "The Data page's ledger lists each one; a confirmed "
            "public schema (format, roles, label, bounds and categories) and per-record options (schema scaling, a "
            "public norm bound, a public or DP centre, missing values filled with 0) make the pipeline private.")


def guarantees_qualifier(ledger: Iterable, feature_names: Sequence[str] = ()) -> str | None:
    """What the guarantee badges of a run mean when its pipeline is not private (None when it is private): each
    release is DP only given its inputs, and the steps before it are not."""
    steps = non_private_steps(ledger, feature_names)
    if not steps:
        return None
    return ("Each release is ε-DP or (ε, δ)-DP as its badge says **only given its inputs**; the pipeline before it "
            f"is **NOT private** because of: {'; '.join(steps)}. So no result in this run is end-to-end private.")


def centring_note(mechanisms: Iterable, centering: str) -> str | None:
    """What to say when a location-invariant mechanism (g-DPPCA) is scored on uncentred data: it estimates the
    centred covariance's directions, while the metrics compare with the uncentred C = Σxxᵀ. None otherwise."""
    from ..vocabulary import Centering

    names = [m.name for m in mechanisms if getattr(m, "location_invariant", False)]
    if not names or Centering(centering) != Centering.NONE:
        return None
    return (f"{' and '.join(names)} ignore{'s' if len(names) == 1 else ''} location: it estimates the directions of "
            "the centred covariance, while with centring 'none' the metrics score every mechanism against the "
            "uncentred C = Σxxᵀ, which understates it. For a like-for-like comparison centre the data (Data page: "
            "public or DP centring).")
