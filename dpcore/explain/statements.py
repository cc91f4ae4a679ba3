"""One wording for every δ statement about a mechanism whose privacy claim fails (Explore, Inspect, Audit, Learn, CLI).

A claimed-invalid mechanism has two kinds of δ numbers, and they differ for good reasons: the *proven* counterexample
δ at one ε (theory, exact), and an *audit* lower bound at one ε and one confidence level (measured, always a bit
below the proven value). :func:`delta_statement` writes either one, always naming its ε (and the confidence for an
audit) and saying what the number means, so two statements side by side can be compared.
"""

from __future__ import annotations

import math

from ..core._validation import check_epsilon, check_fraction
from ..exceptions import InvalidParameterError

__all__ = ["delta_statement", "format_bound", "mechanism_delta_statement"]


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
