"""Issue #12: interim audit results (``run_audit(on_partial=...)``, :func:`dpcore.audit.runner.audit_task`).

An interim result analyses the releases collected so far by the audit's own recipe, so it must equal an audit run
with that many releases on the same random stream; peeking must not change the final result.
"""

from __future__ import annotations

import pytest

from dpcore.audit import MIN_TRIALS, run_audit
from dpcore.audit.runner import audit_task
from dpcore.exceptions import InvalidParameterError

#: Fields that legitimately differ between an interim result and a shorter audit of the same releases.
RUN_FIELDS = ("runtime_s", "trials", "interim", "trials_needed", "verdict_text")


def _comparable(result) -> dict:
    out = result.as_dict(include_samples=True)
    for key in RUN_FIELDS:
        out.pop(key)
    return out


@pytest.mark.slow
@pytest.mark.parametrize("mid", ["sn_imtiaz", "laplace"])
def test_interim_results_are_audits_of_the_releases_so_far_and_do_not_change_the_final(mid):
    interims = []
    final = run_audit(mid, 1.0, neighbours="zero_vs_unit", trials=3_000, seed=5, on_partial=interims.append,
                      partial_every_s=0.01)
    plain = run_audit(mid, 1.0, neighbours="zero_vs_unit", trials=3_000, seed=5)
    assert _comparable(final) == _comparable(plain) and not final.interim
    assert interims, "a run of a few thousand releases gives at least one interim result"
    sizes = [r.completed[0] for r in interims]
    assert sizes == sorted(set(sizes)) and sizes[0] >= MIN_TRIALS and sizes[-1] < 3_000
    for interim in (interims[0], interims[-1]):
        assert interim.interim and interim.trials == 3_000 and interim.completed[0] == interim.completed[1]
        # the same first m releases per side (one sequential stream), audited on their own
        # (interim results carry no power check: compare with an audit without one)
        shorter = run_audit(mid, 1.0, neighbours="zero_vs_unit", trials=interim.completed[0], seed=5, power=False)
        assert interim.verdict != "consistent"
        assert _comparable(interim) == _comparable(shorter)
        assert len(interim.samples[0]) == interim.completed[0]
        note = interim.interim_note()
        assert f"{interim.completed[0]:,} of 3,000 releases" in note and "interim" in note
        assert "Cancelled after" in interim.interim_note(cancelled=True)
        assert interim.summary().startswith("After ") and interim.as_dict()["interim"] is True
    assert final.interim_note() == ""


def test_interim_settings_are_checked():
    with pytest.raises(InvalidParameterError, match="on_partial"):
        run_audit("laplace", 1.0, trials=100, on_partial="no")
    with pytest.raises(InvalidParameterError, match="partial_every_s"):
        run_audit("laplace", 1.0, trials=100, on_partial=print, partial_every_s=0)
    with pytest.raises(InvalidParameterError, match="n_jobs=1"):
        run_audit("laplace", 1.0, trials=100, on_partial=print, n_jobs=2)


@pytest.mark.slow
def test_audit_task_reports_progress_and_interim_results():
    reports = []
    kind, result = audit_task(None, {"mechanism_id": "sn_imtiaz", "epsilon": 1.0, "trials": 2_000, "seed": 3,
                                     "partial_every_s": 0.01, "neighbours": "zero_vs_unit"}, report=reports.append)
    assert kind == "ok" and not result.interim
    assert _comparable(result) == _comparable(run_audit("sn_imtiaz", 1.0, neighbours="zero_vs_unit", trials=2_000,
                                                        seed=3))
    assert reports[-1][:2] == (4_000, 4_000)
    interims = [r[2] for r in reports if r[2] is not None]
    assert interims and all(r.interim and r.completed[0] < 2_000 for r in interims)
    assert audit_task(None, {"mechanism_id": "laplace", "epsilon": -1.0}, report=reports.append)[0] == "error"
