"""The outcome of an audit: :class:`AuditResult` (verdict, bounds, the witness event, the raw counts)."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

import numpy as np

from ..core._validation import check_int
from ..core.privacy import jsonable
from ..exceptions import InvalidParameterError
from ..explain.statements import delta_statement
from ..vocabulary import Neighbouring

__all__ = ["VERDICTS", "AuditResult", "combined_verdict"]

SIDE_NAMES = ("D", "D′")

#: Possible verdicts, in plain words.
VERDICTS: dict[str, str] = {
    "violated": "the releases prove, at the stated confidence, that the mechanism leaks more than claimed",
    "consistent": "no violation found, by a test that demonstrably flags a violation of the claim — a reference "
                  "mechanism whose privacy loss on the same neighbours is 2× the claimed ε, calibrated from the "
                  "claim, not from the audited code — with the same number of releases (not a proof of privacy)",
    "inconclusive": "the test could not have refuted this claim: either it does not flag a reference violation of "
                    "2× the claimed ε (the power check; the smallest violation it does detect is stated), or the "
                    "output has no such reference, or the claimed ε is beyond what this number of releases can "
                    "certify and no output impossible under one neighbour was seen",
}


def _claim(epsilon: float, delta: float) -> str:
    return f"({epsilon:g}, {delta:g})-DP" if delta > 0 else f"{epsilon:g}-DP"


@dataclass
class AuditResult:
    """The outcome of :func:`~dpcore.audit.run_audit` (``as_dict`` for JSON, ``summary`` for text).

    ``verdict`` is "violated", "consistent" or "inconclusive" (:data:`VERDICTS`). ``epsilon_lower_bound`` is the
    ratio bound ln((p⁻ − δ)/q⁺) of the reported event; ``delta_lower_bound`` is the δ the claim would need at the
    claimed ε, and with ``structural`` (an output the other neighbour cannot produce) it holds for every ε.
    ``max_certifiable_epsilon`` is the largest ratio bound this number of held-out releases could ever give.
    ``interim`` marks the analysis of the releases collected so far during a run (``completed`` of ``trials``): a
    smaller audit by the same recipe; repeated looks are not one test, so the verdict is the final run's.
    """

    mechanism: str
    mechanism_name: str
    guarantee: str
    claimed_epsilon: float
    delta: float
    epsilon_lower_bound: float
    epsilon_estimate: float
    confidence: float
    trials: int
    completed: tuple[int, int]
    verdict: str
    counts: dict
    event: dict
    statistic: str
    samples: tuple[np.ndarray, np.ndarray]
    runtime_s: float
    neighbours: dict
    truncated: bool
    k: int
    seed: int | None
    orientations: list = field(default_factory=list)
    counterexample_delta: float | None = None
    delta_lower_bound: float = 0.0
    field: str = ""
    neighbouring: str = Neighbouring.REPLACE
    structural: bool = False
    max_certifiable_epsilon: float = math.inf
    trials_needed: int | None = None
    interim: bool = False
    #: The power check: one entry per mutant (:mod:`dpcore.audit.mutants`), strongest first, with whether the same
    #: test flagged it ("flagged"), on which neighbours, and its bounds. Empty when no power check ran.
    power: list = dataclasses.field(default_factory=list)
    #: Why the verdict is "inconclusive": "ratio" (ε beyond what frequencies can certify), "power" (the 2ε
    #: reference was not flagged), "no_reference" (no reference violation exists for this output) or "unchecked"
    #: (no power check ran); None otherwise.
    inconclusive_reason: str | None = None
    #: The smallest privacy loss c·ε (c = 2, 4, 8, 16) whose reference violation the same test flagged; None when
    #: none was (or no power check ran).
    detectable_epsilon: float | None = None
    #: One line per neighbour pair audited (``neighbours="all"``); empty for a single pair.
    pairs: list = dataclasses.field(default_factory=list)
    pairs_planned: int = 1

    @property
    def violated(self) -> bool:
        return self.verdict == "violated"

    @property
    def inconclusive(self) -> bool:
        return self.verdict == "inconclusive"

    @property
    def claim(self) -> str:
        return _claim(self.claimed_epsilon, self.delta)

    def interim_note(self, cancelled: bool = False) -> str:
        """What an interim result is, in one line ("" for a final result)."""
        if not self.interim:
            return ""
        done = f"{self.completed[0]:,} of {self.trials:,} releases per dataset"
        if cancelled:
            return (f"Cancelled after {done}: interim result (an audit of the releases finished so far; the run "
                    "was stopped, so there is no final verdict).")
        return (f"After {done} — interim; the verdict is the final run's (each look is a smaller audit, and "
                "repeated looks are not one test).")

    def histogram(self, bins: int = 60) -> dict:
        """Common-bin histograms of the event's statistic for both sides (⊥ and infinite values counted apart)."""
        bins = check_int(bins, "bins", 2, 1000)
        a, b = (np.asarray(s, dtype=float) for s in self.samples)
        fa, fb = a[np.isfinite(a)], b[np.isfinite(b)]
        pooled = np.concatenate([fa, fb])
        if pooled.size == 0:
            edges = np.array([0.0, 1.0])
        else:
            lo, hi = float(pooled.min()), float(pooled.max())
            if hi <= lo:
                lo, hi = lo - 0.5, hi + 0.5
            edges = np.linspace(lo, hi, bins + 1)
        return {"edges": edges, "counts": (np.histogram(fa, edges)[0], np.histogram(fb, edges)[0]),
                "nonfinite": (int(a.size - fa.size), int(b.size - fb.size)), "labels": SIDE_NAMES}

    def detectable_text(self) -> str:
        """Which violation this test does detect, in one sentence ("" when no power check ran)."""
        if not self.power:
            return ""
        tried = max(line["factor"] for line in self.power)
        if self.detectable_epsilon is None:
            top = tried * self.claimed_epsilon
            return (f"It did not flag on every pair even a violation of {tried:g}× the claim (ε = {top:g} on these "
                    "neighbours), so it could not have detected any violation up to that size.")
        return (f"The smallest violation it does flag on every pair is ε = {self.detectable_epsilon:g} "
                f"({self.detectable_epsilon / self.claimed_epsilon:g}× the claim): only a violation of about that "
                "size could have been detected.")

    def power_text(self) -> str:
        """What the power check found, in one or two sentences ("" when none ran)."""
        if not self.power:
            return ""
        first = self.power[0]
        same = (f"the same test ({self.completed[0]:,} releases per dataset"
                + (f" on each of {self.pairs_planned} neighbour pairs" if self.pairs_planned > 1 else "") + ")")
        where = (f" on {first['pairs_flagged']} of {first['pairs_run']} neighbour pairs"
                 if first.get("pairs_run", 1) > 1 else "")
        if not first["flagged"]:
            return (f"Power check: {same} does not flag {first['description']}, a violation of the claim "
                    f"calibrated from the claim alone, on every pair (flagged{where or ' on none'}; weakest bound "
                    f"ε ≥ {first['epsilon_lower_bound']:.3g} on {first['neighbours']}).")
        return (f"Power check: {same} flags {first['description']}, a violation of the claim calibrated from the "
                f"claim alone, on every pair audited (weakest bound ε ≥ {first['epsilon_lower_bound']:.3g}, on "
                f"{first['neighbours']}).")

    def verdict_text(self) -> str:
        """The verdict in one or two plain sentences (shared by the CLI and the dashboard)."""
        conf = f"{100 * self.confidence:g}%"
        if self.inconclusive and self.inconclusive_reason == "unchecked":
            why = ("the power check runs when the audit ends" if self.interim else "the power check was skipped")
            return (f"INCONCLUSIVE: no violation found (ε ≥ {self.epsilon_lower_bound:.3g}, {conf} confidence), but "
                    f"{why}, so nothing shows yet that this test could have found one.")
        if self.inconclusive and self.inconclusive_reason == "power":
            first = self.power[0]
            return (f"INCONCLUSIVE: no violation found (ε ≥ {self.epsilon_lower_bound:.3g}, {conf} confidence), but "
                    f"the same test does not flag {first['description']}, a violation of the claim {self.claim}. "
                    f"{self.detectable_text()} Run more releases for a test that can.")
        if self.inconclusive and self.inconclusive_reason == "no_reference":
            return (f"INCONCLUSIVE: no violation found (ε ≥ {self.epsilon_lower_bound:.3g}, {conf} confidence), but "
                    "there is no reference violation of the claim for this output (it is not a covariance), so "
                    "nothing shows this test could have found one. The largest ε any event could have shown with "
                    f"these releases is ≈ {self.max_certifiable_epsilon:.3g}.")
        if self.violated and self.structural:
            statement = delta_statement(self.claimed_epsilon, self.delta_lower_bound, confidence=self.confidence,
                                        every_epsilon=True)
            return (f"VIOLATED: this mechanism is NOT {self.claim}. {statement} Witness (produced by "
                    f"{self.counts['numerator']}, which {self.counts['denominator']} can never produce): "
                    f"{self.event['description']}.")
        if self.violated:
            extra = (" " + delta_statement(self.claimed_epsilon, self.delta_lower_bound, confidence=self.confidence)
                     if self.delta_lower_bound > self.delta else "")
            return (f"VIOLATED: with {conf} confidence ε ≥ {self.epsilon_lower_bound:.3g}, larger than the claimed "
                    f"{self.claimed_epsilon:g} — the audit proves this mechanism is NOT {self.claim}.{extra}")
        if self.inconclusive:
            need = "" if self.trials_needed is None else (
                f" About {self.trials_needed:,} releases per dataset would be needed to test this ε by frequencies.")
            return (f"INCONCLUSIVE: with {self.counts['held_out_n'][0]:,} held-out releases per dataset no frequency "
                    f"ratio can certify more than ε ≈ {self.max_certifiable_epsilon:.3g} ({conf} confidence), less "
                    f"than the claimed {self.claimed_epsilon:g}, and no output impossible under one of the "
                    f"neighbours was seen. This test could not have refuted the claim.{need}")
        power = f" {self.power_text()}" if self.power else ""
        return (f"CONSISTENT: the lower bound ε ≥ {self.epsilon_lower_bound:.3g} ({conf} confidence) does not exceed "
                f"the claimed {self.claimed_epsilon:g}.{power} Audits only give lower bounds: this is not a proof "
                "of privacy.")

    def summary(self) -> str:
        """A few plain-language lines (CLI output, dashboard verdict)."""
        c = self.counts
        lines = [self.interim_note()] if self.interim else []
        lines += [
            f"Audit of {self.mechanism} ({self.mechanism_name}); claimed {self.claim}; neighbours "
            f"{self.neighbours['name']} ({self.neighbouring.replace('_', '/')}); statistic {self.statistic}"
            + (f" on {self.field}" if self.field else "") + ".",
            f"Event: {self.event['description']}. Held-out counts: {c['held_out_hits'][0]}/{c['held_out_n'][0]} "
            f"under {c['numerator']}, {c['held_out_hits'][1]}/{c['held_out_n'][1]} under {c['denominator']}.",
            self.verdict_text(),
        ]
        if self.violated and self.structural and self.event.get("assumption"):
            lines.append(f"Why the other side cannot produce it: {self.event['assumption']}.")
        if self.power and self.inconclusive_reason == "power":
            lines.append(self.power_text())
        if self.pairs:
            lines.append(f"Neighbour pairs ({len(self.pairs)} of {self.pairs_planned} audited, confidence split "
                         "over them): " + "; ".join(
                             f"{p['neighbours']} ({p['neighbouring'].replace('_', '/')}): {p['verdict']}, "
                             f"ε ≥ {p['epsilon_lower_bound']:.3g}" for p in self.pairs) + ".")
        per_pair = f" on each of {len(self.pairs)} neighbour pairs" if self.pairs else ""
        lines.append(f"{self.completed[0]} + {self.completed[1]} releases{per_pair} in {self.runtime_s:.2f} s"
                     + (" (stopped early at the time limit)" if self.truncated else "") + ".")
        return "\n".join(lines)

    def as_dict(self, include_samples: bool = True) -> dict:
        out = {
            "mechanism": self.mechanism,
            "mechanism_name": self.mechanism_name,
            "guarantee": self.guarantee,
            "claimed_epsilon": self.claimed_epsilon,
            "delta": self.delta,
            "epsilon_lower_bound": self.epsilon_lower_bound,
            "epsilon_estimate": self.epsilon_estimate,
            "delta_lower_bound": self.delta_lower_bound,
            "structural": self.structural,
            "max_certifiable_epsilon": self.max_certifiable_epsilon,
            "trials_needed": self.trials_needed,
            "confidence": self.confidence,
            "trials": self.trials,
            "completed": list(self.completed),
            "verdict": self.verdict,
            "verdict_text": self.verdict_text(),
            "counts": self.counts,
            "event": self.event,
            "statistic": self.statistic,
            "field": self.field,
            "neighbouring": self.neighbouring,
            "runtime_s": self.runtime_s,
            "neighbours": self.neighbours,
            "truncated": self.truncated,
            "interim": self.interim,
            "k": self.k,
            "seed": self.seed,
            "orientations": self.orientations,
            "counterexample_delta": self.counterexample_delta,
            "power": self.power,
            "power_text": self.power_text(),
            "inconclusive_reason": self.inconclusive_reason,
            "detectable_epsilon": self.detectable_epsilon,
            "pairs": self.pairs,
            "pairs_planned": self.pairs_planned,
        }
        if include_samples:
            out["samples"] = {"D": self.samples[0], "D′": self.samples[1]}
        return jsonable(out)


def combined_verdict(results: list[AuditResult]) -> str:
    """One verdict for several audits of the same claim (e.g. one per neighbouring relation)."""
    verdicts = {r.verdict for r in results}
    for v in ("violated", "inconclusive", "consistent"):
        if v in verdicts:
            return v
    raise InvalidParameterError("combined_verdict needs at least one audit result.")
