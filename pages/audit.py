"""Privacy audit page: run a mechanism many times on two neighbouring datasets and bound its ε and δ from below.

All computation goes through :mod:`dpcore.audit`; this page only collects inputs and draws results.
"""

from __future__ import annotations

import dataclasses
import math
import os
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from dpcore.audit import (
    CONFORMANCE_DRAWS,
    FIELDS,
    MIN_TRIALS,
    NEIGHBOUR_CONSTRUCTIONS,
    PROBE_SEEDS,
    STATISTICS,
    determinism_probe,
    estimate_audit_seconds,
    format_p_value,
    sampler_conformance,
)
from dpcore.audit.callables import CALLABLE_OUTPUTS, callable_mechanism
from dpcore.audit.mutants import TEACHING_MUTANTS, is_teaching_mutant, teaching_mutant
from dpcore.audit.runner import audit_task, resolve_mechanism
from dpcore.exceptions import DPCoreError
from dpcore.explain.display import identifier_label
from dpcore.explain.statements import delta_statement
from dpcore.mechanisms import Mechanism, mechanism_ids
from dpcore.peers import is_peer, peers_status
from dpcore.runtime.parallel import OutcomeStatus, Task
from dpcore.vocabulary import Guarantee, Neighbouring
from pages.ui import nav as _nav
from pages.ui.charts import trace_style
from pages.ui.pool import pool_notice, shared_pool
from pages.ui.state import keep_alive

RESULT_KEY = "audit_result"
#: The session's running audit (a job on the server's shared pool) and the note of the last one that did not finish.
AUDIT_JOB_KEY = "audit_job"
AUDIT_NOTE_KEY = "audit_note"
#: An audit is waited for this long inside the page run (progress bar, interim results, Cancel); a longer one is
#: polled. ``DP_AUDIT_WAIT_S`` (environment) overrides it.
AUDIT_WAIT_S = 20.0
AUDIT_POLL_S = 0.5
#: While an audit runs, its interim result is redrawn at most this often (a redraw reruns the whole page).
AUDIT_REDRAW_S = 1.5
#: The note shown with the result in RESULT_KEY (e.g. "cancelled after N releases: interim result"), and the
#: releases per dataset of the interim result last drawn with the time it was drawn.
RESULT_NOTE_KEY = "audit_result_note"
AUDIT_DRAWN_KEY = "audit_drawn"
#: A worker still running an audit AUDIT_HARD_FACTOR × its time limit + AUDIT_HARD_GRACE_S seconds after it started
#: is stopped (the audit's own time limit normally ends it first, with the releases done so far).
AUDIT_HARD_FACTOR = 2.5  # the time limit bounds the audit and, separately, its power check
AUDIT_HARD_GRACE_S = 30.0
PROBE_KEY = "audit_probe_result"
#: The settings (signature, words) of the running audit, of the audit result shown and of the probe result shown:
#: a result whose settings differ from the widgets' is marked as earlier settings' result.
JOB_FOR_KEY = "audit_job_for"
RESULT_FOR_KEY = "audit_result_for"
PROBE_FOR_KEY = "audit_probe_for"
SELFTEST_KEY = "audit_selftest_result"
SELFTEST_DRAWS = (CONFORMANCE_DRAWS, 100_000, 1_000_000)
TRIAL_CHOICES = (1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000)
SIDE_COLOURS = ("#1f77b4", "#d62728")
RELATION_LABELS = {"auto": "the pair's own", Neighbouring.REPLACE: "replace one record",
                   Neighbouring.ADD_REMOVE: "add or remove one record"}

#: Presets: widget values to set, whether the run is an audit or the determinism probe, and the caption under the
#: (short) button label.
PRESETS: dict[str, dict] = {
    "SN Wishart": {"mechanism": "sn_imtiaz", "epsilon": 1.0, "trials": 5_000, "neighbours": "zero_vs_unit",
                   "caption": "invalid · support attack"},
    "Jiang Wishart": {"mechanism": "wishart_jiang", "epsilon": 1.0, "trials": 5_000, "neighbours": "zero_vs_unit",
                      "caption": "invalid · support attack"},
    "Analyze Gauss": {"mechanism": "analyze_gauss", "epsilon": 1.0, "delta": 1e-5, "trials": 5_000,
                      "neighbours": "unit_swap", "caption": "valid · power check"},
    "Laplace": {"mechanism": "laplace", "epsilon": 1.0, "trials": 5_000, "neighbours": "all_entries",
                "caption": "valid · power check"},
    "n leak": {"mechanism": "analyze_gauss", "epsilon": 1.0, "delta": 1e-5, "trials": 5_000,
               "neighbours": "copies_add_remove", "neighbouring": Neighbouring.ADD_REMOVE, "n": 21,
               "caption": "add/remove · copies of e₁"},
    "ss_exact probe": {"mechanism": "ss_exact", "epsilon": 1.0, "delta": 1e-5, "neighbours": "in_plane",
                       "neighbouring": Neighbouring.REPLACE, "n": 70, "k": 2, "action": "probe",
                       "caption": "determinism of the basis"},
    "Wishart at ε = 10": {"mechanism": "wishart_sheffet", "epsilon": 10.0, "delta": 1e-5, "trials": 5_000,
                          "statistic": "support", "neighbours": "zero_vs_unit", "caption": "support witness"},
    # the audit that flags the teaching mutant (its own audit_defaults: the attaining pair, (1, 0.2), 50 000)
    "g-DPPCA 2/n": {"mechanism": "mutant:g_dppca_2_over_n",
                    **TEACHING_MUTANTS["mutant:g_dppca_2_over_n"].audit_defaults,
                    "caption": "under-noised mutant · attaining pair"},
}

#: Releases per dataset and neighbour pair on the page (every construction is audited by default, so this is run
#: for each of them, and again by the power check).
PAGE_TRIALS = 2_000
NEIGHBOUR_CHOICES = ("all", *NEIGHBOUR_CONSTRUCTIONS)
DEFAULTS = {"audit_epsilon": 1.0, "audit_delta": 1e-5, "audit_trials": PAGE_TRIALS,
            "audit_neighbours": "all", "audit_neighbouring": "auto", "audit_statistic": "auto",
            "audit_field": "auto", "audit_n": 30, "audit_k": 1, "audit_seed": 0, "audit_time_limit": 60.0,
            "audit_bins": 60, "audit_log_y": False, "audit_probe_seeds": PROBE_SEEDS}
#: Presets run with a fixed seed so that they show the same numbers every time.
PRESET_SEED = 1


def _label(mid: str) -> str:
    mech = resolve_mechanism(mid)
    label = mech.name
    if is_teaching_mutant(mid):  # its name says "teaching mutant … NOT private"
        return label
    if is_peer(mid):
        return f"{label} — peer, a process per release (≈ 1 s each)"
    if mech.invalid and "invalid" not in label.lower():
        label += " — claimed DP, NOT private"
    elif mech.guarantee == Guarantee.NONE:
        label += " — not private (reference)"
    return label


def _init_state(default_mechanism: str) -> None:
    """Widget defaults live in session_state (so presets can overwrite them without warnings)."""
    st.session_state.setdefault("audit_mechanism", default_mechanism)
    for key, value in DEFAULTS.items():
        st.session_state.setdefault(key, value)


def _apply_preset(name: str) -> None:
    preset = PRESETS[name]
    for key, value in DEFAULTS.items():
        if key not in ("audit_bins", "audit_log_y", "audit_time_limit"):
            st.session_state[key] = value
    st.session_state["audit_mechanism"] = preset["mechanism"]
    st.session_state["audit_callable"] = ""
    for field in ("epsilon", "delta", "trials", "neighbours", "neighbouring", "n", "k", "statistic"):
        if field in preset:
            st.session_state[f"audit_{field}"] = preset[field]
    st.session_state["audit_seed"] = PRESET_SEED
    action = preset.get("action", "audit")
    st.session_state["audit_run_requested" if action == "audit" else "audit_probe_requested"] = True


def _preset_from_link() -> None:
    """A link with ``?preset=<mechanism id>`` (e.g. from the Privacy basics page) runs that mechanism's first audit
    preset once; the parameter is then removed, so a later rerun does not repeat it."""
    linked = st.query_params.get("preset")
    if linked is None:
        return
    del st.query_params["preset"]
    name = next((n for n, p in PRESETS.items() if p["mechanism"] == linked and p.get("action", "audit") == "audit"),
                None)
    if name is not None:
        _apply_preset(name)


@st.cache_data(show_spinner=False, max_entries=64)
def _estimate(mid: str, epsilon: float, delta: float | None, trials: int, neighbours: str, neighbouring: str | None,
              n: int, k: int) -> float:
    return estimate_audit_seconds(mid, epsilon, trials, delta=delta, neighbours=neighbours,
                                  neighbouring=neighbouring, n=n, k=k)


def _verdict(result) -> None:
    conf = f"{100 * result.confidence:g}%"
    so_far = "Interim: " if result.interim else ""  # the box says so itself, not only the note above it
    if result.violated and result.structural:
        statement = delta_statement(result.claimed_epsilon, result.delta_lower_bound, confidence=result.confidence,
                                    every_epsilon=True)
        st.error(
            f"**{so_far}The audit proves this mechanism is NOT {result.claim}.** {statement} Witness (produced by "
            f"{result.counts['numerator']}, impossible under {result.counts['denominator']}): "
            f"{result.event['description']}."
        )
        if result.event.get("assumption"):
            st.caption(f"Why the other dataset cannot produce it: {result.event['assumption']}.")
    elif result.violated:
        st.error(
            f"**{so_far}The audit proves this mechanism is NOT {result.claim}.** With {conf} confidence its privacy "
            f"loss is at least ε = {result.epsilon_lower_bound:.3g}, more than the claimed {result.claimed_epsilon:g}. "
            f"Witness: {result.event['description']}."
        )
    elif result.inconclusive and result.inconclusive_reason in ("power", "unchecked", "no_reference"):
        st.warning(f"**{so_far}Inconclusive:** {result.verdict_text().split(': ', 1)[1]}")
    elif result.inconclusive:
        counted, chose = result.counts["held_out_n"][0], result.counts["selection_n"][0]
        st.warning(
            f"**{so_far}Inconclusive: this test could not have refuted the claim.** With "
            f"{counted:,} counted releases per dataset (the held-out half of the {counted + chose:,} releases on the "
            "pair shown; the other half chose the event), no frequency ratio can show more than "
            f"ε ≈ {result.max_certifiable_epsilon:.3g}, less than the claimed {result.claimed_epsilon:g}, and no "
            "output that one dataset can never produce was seen."
            + ("" if result.trials_needed is None else
               f" Testing this ε by frequencies would need about {result.trials_needed:,} releases per dataset.")
        )
    else:
        st.info(
            f"**{so_far}No violation found, by a test that demonstrably flags a violation of the claim.** The audit's "
            "lower "
            f"bound ε ≥ {result.epsilon_lower_bound:.3g} ({conf} confidence) does not exceed the claimed "
            f"{result.claimed_epsilon:g}. {result.power_text()} This is consistent with the claim but does not "
            "prove it: an audit can only show that a mechanism leaks *at least* this much."
        )
    if result.truncated:
        st.warning("The run hit its time limit; the bound uses the releases completed so far.")


def _histogram_figure(result, bins: int, log_y: bool) -> go.Figure:
    h = result.histogram(bins)
    edges = h["edges"]
    centres = 0.5 * (edges[1:] + edges[:-1])
    widths = edges[1:] - edges[:-1]
    fig = go.Figure()
    for side, (label, counts) in enumerate(zip(("D", "D′"), h["counts"])):
        fig.add_bar(x=centres, y=counts, width=widths, name=label, opacity=0.6, marker_color=SIDE_COLOURS[side])
    thr = result.event["threshold"]
    if thr is not None and math.isfinite(thr) and edges[0] <= thr <= edges[-1]:
        where = {"<=": "left of this line", ">": "right of this line", "==": "exactly this value"}
        fig.add_vline(x=thr, line_dash="dash", line_color="black",
                      annotation_text=f"event: {where.get(result.event['direction'], '')}",
                      annotation_position="top")
    fig.update_layout(barmode="overlay", xaxis_title=result.event["variable"], yaxis_title="releases",
                      yaxis_type="log" if log_y else "linear", height=380, margin={"t": 40, "b": 40},
                      legend={"orientation": "h", "y": 1.12})
    return fig


def _epsilon_figure(result) -> go.Figure:
    style = trace_style(result.mechanism)  # the chart names the guarantee; an invalid claim reads NOT PRIVATE
    if is_teaching_mutant(result.mechanism):  # not registered: its own legend, drawn as not private
        style = dataclasses.replace(style, legend=teaching_mutant(result.mechanism).legend, not_private=True)
    claimed = "claimed ε (NOT PRIVATE)" if style.not_private else "claimed ε"
    fig = go.Figure()
    fig.add_bar(y=[claimed, "audit lower bound"], x=[result.claimed_epsilon, result.epsilon_lower_bound],
                orientation="h", marker_color=[style.color if style.not_private else "#7f7f7f",
                                               "#d62728" if result.violated else "#2ca02c"],
                marker_pattern_shape=["/" if style.not_private else "", ""],
                text=[f"{result.claimed_epsilon:.3g}", f"≥ {result.epsilon_lower_bound:.3g}"], textposition="auto",
                showlegend=False)
    est = result.epsilon_estimate
    if est is not None and math.isfinite(est) and est > 0:
        fig.add_scatter(y=["audit lower bound"], x=[est], mode="markers", name="point estimate (no confidence)",
                        marker={"symbol": "diamond", "size": 12, "color": "black"})
    cap = result.max_certifiable_epsilon
    if cap is not None and math.isfinite(cap):
        fig.add_vline(x=cap, line_dash="dot", line_color="grey", annotation_text="largest ε this test can show",
                      annotation_position="bottom right")
    fig.update_layout(xaxis_title="ε", height=240, margin={"t": 30, "b": 40},
                      title=f"{style.legend}: ε lower bound at {100 * result.confidence:g}% confidence vs the claim"
                      + (f" (interim: {result.completed[0]:,} of {result.trials:,} releases)" if result.interim
                         else ""))
    return fig


def _counts_table(result) -> pd.DataFrame:
    c = result.counts
    rows = []
    for i, side in enumerate((c["numerator"], c["denominator"])):
        rows.append({
            "dataset": side,
            "event hits (selection half)": c["selection_hits"][i],
            "releases (selection half)": c["selection_n"][i],
            "event hits (held-out half)": c["held_out_hits"][i],
            "releases (held-out half)": c["held_out_n"][i],
            "probability bound used": (f"≥ {c['p_numerator_lower']:.4g}" if i == 0
                                       else ("= 0 (cannot happen)" if result.structural
                                             else f"≤ {c['p_denominator_upper']:.4g}")),
        })
    return pd.DataFrame(rows)


def _settings_note(shown_for: tuple | None) -> None:
    """Which settings a shown result belongs to, and a warning when the widgets no longer show them.
    ``shown_for`` is (words, stale), or None when unknown."""
    if shown_for is None:
        return
    words, stale = shown_for
    if stale:
        st.warning(f"**This result is for earlier settings**, not the ones below (they changed since): {words}. "
                   "Press *Run audit* to audit the current settings.", icon=":material/history:")
    else:
        st.caption(f"Settings of this result: {words}.")


def _show_verdict_block(result, note: str | None = None, shown_for: tuple | None = None) -> None:
    """The verdict first, with its numbers: drawn at the top of the page, above the settings."""
    stale = shown_for is not None and shown_for[1]
    st.subheader(f"{'Interim result' if result.interim else 'Earlier result' if stale else 'Result'}: "
                 f"{result.mechanism_name}")
    _settings_note(shown_for)
    if result.interim:
        st.warning(note or result.interim_note(), icon=":material/hourglass_top:")
    _verdict(result)
    m1, m2, m3, m4, m5 = st.columns(5)
    m1.metric("Claimed ε", f"{result.claimed_epsilon:g}")
    m2.metric(f"ε lower bound ({100 * result.confidence:g}%)", f"{result.epsilon_lower_bound:.3g}")
    m3.metric("δ lower bound", f"{result.delta_lower_bound:.3g}", help="The δ the claim would need at the claimed ε.")
    m4.metric("Releases per dataset", f"{result.completed[0]:,}",
              help="The same number on D and on D′ (per neighbour pair).")
    m5.metric("Run time", f"{result.runtime_s:.1f} s")


def _show_audit(result, note: str | None = None, top=None, shown_for: tuple | None = None) -> None:
    """The verdict block (in ``top`` when given), then the details here."""
    with top if top is not None else st.container():
        _show_verdict_block(result, note, shown_for)
    if top is not None:
        st.subheader("Details")
    st.caption(f"Neighbours: {identifier_label(result.neighbours['name'])} ({RELATION_LABELS[result.neighbouring]}); "
               "released field "
               f"read: {result.field} ({FIELDS.get(result.field, 'classifier features')}).")
    _power_and_pairs(result)
    st.plotly_chart(_epsilon_figure(result), width="stretch")

    st.markdown(f"**The two output distributions** — {result.event['variable']}")
    o1, o2 = st.columns(2)
    bins = o1.slider("Bins", min_value=10, max_value=200, key="audit_bins")
    log_y = o2.checkbox("Log scale", key="audit_log_y")
    st.plotly_chart(_histogram_figure(result, bins, log_y), width="stretch")
    st.caption(f"Event used for the bound: {result.event['description']} (chosen on one half of the releases, "
               f"counted on the other half; orientation {result.event['orientation']}).")
    st.markdown("**Raw counts**")
    st.dataframe(_counts_table(result), hide_index=True, width="stretch")
    if result.counterexample_delta is not None:
        st.caption("Theory for this exhibit: "
                   + delta_statement(result.claimed_epsilon, result.counterexample_delta))


def _power_and_pairs(result) -> None:
    """The power check (the same test on the mechanism's mutants) and the per-pair verdicts, as tables."""
    if result.power:
        st.markdown("**Power check** — the same test on reference violations of the claim (privacy loss c× the "
                    "claimed ε on each pair, calibrated from the claim, not from the audited code)")
        st.dataframe(pd.DataFrame([{
            "reference violation": f"{line.get('family', '').capitalize()} noise, loss {line['mutant']}",
            "its ε": f"{line.get('epsilon', 0.0):g}",
            "flagged by the same test": ("yes, on every pair" if line["flagged"] else
                                         ("not run" if not line.get("run", True) else
                                          f"no ({line.get('pairs_flagged', 0)} of {line.get('pairs_run', 1)} "
                                          "pairs)")),
            "weakest pair": line["neighbours"] or "—",
            "its ε lower bound there": f"{line['epsilon_lower_bound']:.3g}",
            "releases per dataset": f"{line['releases']:,}"} for line in result.power]),
            hide_index=True, width="stretch")
    if result.pairs:
        st.markdown(f"**Neighbour pairs** — {len(result.pairs)} of {result.pairs_planned} audited, the confidence "
                    "split over them; the result above shows the most revealing one")
        st.dataframe(pd.DataFrame([{
            "neighbours": identifier_label(p["neighbours"]), "relation": RELATION_LABELS[p["neighbouring"]],
            "verdict": p["verdict"], "ε lower bound": f"{p['epsilon_lower_bound']:.3g}",
            "δ lower bound": f"{p['delta_lower_bound']:.3g}", "releases": f"{p['releases']:,}"}
            for p in result.pairs]), hide_index=True, width="stretch")


def _show_probe(result, top=None, shown_for: tuple | None = None) -> None:
    with top if top is not None else st.container():
        st.subheader(f"Determinism probe{' (earlier settings)' if shown_for and shown_for[1] else ''}: "
                     f"{result.mechanism_name}")
        _settings_note(shown_for)
        text = result.reason[:1].upper() + result.reason[1:]
        if result.leak:
            st.error(f"**Leak found.** {text}")
        elif result.verdict == "passed":
            st.success(f"**Passed.** {text}")
        else:
            st.info(f"**Not applicable.** {text}")
    rows = [{"released field": name, "largest relative difference (same subspace, same seed)": f"{diff:.3g}",
             "differs": diff > result.tolerance} for name, diff in result.differences.items()]
    if rows:
        st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
    st.caption(f"{result.seeds} seeds; both datasets gave an output for {result.compared}, the same subspace for "
               f"{result.invariant_equal}; run time {result.runtime_s:.2f} s.")


def _selftest_figure(result) -> go.Figure:
    d = result.densities()
    fig = go.Figure()
    fig.add_bar(x=d["centres"], y=d["observed"], width=d["widths"], name="observed (sampler)", opacity=0.6,
                marker_color=SIDE_COLOURS[0])
    fig.add_scatter(x=result.edges, y=np.append(d["expected"], d["expected"][-1]), mode="lines",
                    line={"shape": "hv", "color": "black"}, name="exact Bingham law")
    fig.update_layout(xaxis_title="|⟨x, v₁⟩| (projection of the sample on the top axis)", yaxis_title="density",
                      height=340, margin={"t": 40, "b": 40}, legend={"orientation": "h", "y": 1.12})
    return fig


def _sampler_selftest() -> None:
    st.write(
        "An ε audit only ever proves a *lower* bound on the privacy loss, so it can miss a broken sampler. "
        "OpenDP's exact Bingham sampler once accepted every proposal (issue #2416): its output came from the "
        "flatter proposal distribution, which leaks *less* than claimed here, so an ε audit sees nothing wrong — "
        "yet the mechanism no longer matches its privacy proof. This self-test catches such bugs by comparing "
        "the sampler's output with the exact law it must follow (a chi-square test on the projection of the "
        "samples on the top axis of a fixed public matrix, exact law by numerical integration). Our test suite "
        "runs the same test against deliberately broken samplers (always accept, wrong exponent, missing "
        "rotation) and rejects each of them."
    )
    c1, c2 = st.columns(2)
    draws = c1.selectbox("Samples", SELFTEST_DRAWS, format_func=lambda n: f"{n:,}", key="audit_selftest_draws")
    seed = c2.number_input("Seed (0 = fresh randomness)", min_value=0, max_value=2**31 - 1, step=1, value=0,
                           key="audit_selftest_seed")
    if st.button("Run sampler self-test", key="audit_selftest_run"):
        with st.spinner("Drawing from the Bingham sampler and testing the law…"):
            try:
                st.session_state[SELFTEST_KEY] = sampler_conformance(draws=int(draws), seed=int(seed) or None)
            except DPCoreError as exc:
                st.error(str(exc))
    result = st.session_state.get(SELFTEST_KEY)
    if result is None:
        return
    if result.conforms:
        st.success(f"**The sampler conforms** to the exact Bingham law: p-value {format_p_value(result.p_value)} "
                   f"≥ α = {result.alpha:g}. (A test can only fail to find a bug, not prove there is none.)")
    else:
        st.error(f"**The sampler is rejected.** {result.reason}")
    m1, m2, m3, m4 = st.columns(4)
    m1.metric("p-value", format_p_value(result.p_value))
    m2.metric("Chi-square", f"{result.chi2:.1f} ({result.dof} dof)")
    m3.metric("Samples", f"{result.draws:,}")
    m4.metric("Acceptance rate", "—" if result.acceptance_rate is None else f"{result.acceptance_rate:.3f}")
    st.plotly_chart(_selftest_figure(result), width="stretch")
    st.caption(f"Target ∝ exp({result.concentration:g}·xᵀCx) on the sphere in {result.q} dimensions, C with "
               f"eigenvalues ({result.eigenvalues[0]:g}, {result.eigenvalues[1]:g}, 0); {result.dof + 1} bins of "
               f"equal exact probability; run time {result.runtime_s:.2f} s.")


def _audit_job(cancel: bool = False):
    """The session's running audit (its pool job and the settings error shown with it), optionally cancelled."""
    entry = st.session_state.get(AUDIT_JOB_KEY)
    if entry is not None and cancel:
        entry[0].cancel()
        st.session_state.pop(AUDIT_JOB_KEY, None)
        return None
    return entry


def _wait_seconds() -> float:
    """Seconds a new audit is waited for inside the page run (:data:`AUDIT_WAIT_S` unless the environment says)."""
    try:
        return max(0.1, float(os.environ.get("DP_AUDIT_WAIT_S", AUDIT_WAIT_S)))
    except ValueError:
        return AUDIT_WAIT_S


def _interim(job):
    """The latest interim result the running audit has reported (None before the first)."""
    report = job.reports().get(0)
    return report[2] if report is not None and len(report) > 2 else None


def _audit_finish(job, settings_error: str) -> None:
    """Move a finished audit's result (or its error; after Cancel, its last interim result) into the page state."""
    st.session_state.pop(AUDIT_JOB_KEY, None)
    st.session_state.pop(AUDIT_DRAWN_KEY, None)
    outcome = job.outcomes().get(0)
    if job.cancelled or outcome is None:
        interim = _interim(job)
        if interim is not None:
            st.session_state[RESULT_KEY] = interim
            st.session_state[RESULT_FOR_KEY] = st.session_state.get(JOB_FOR_KEY)
            st.session_state[RESULT_NOTE_KEY] = interim.interim_note(cancelled=True)
            st.session_state.pop(PROBE_KEY, None)
        else:
            st.session_state[AUDIT_NOTE_KEY] = (
                "warning", f"Audit cancelled before its first interim result (it needs at least {MIN_TRIALS} "
                "releases per dataset), so nothing is shown. For a quicker run, lower the releases per dataset or "
                "the time limit (a run that reaches it uses the releases completed so far).")
    elif outcome.status == OutcomeStatus.KILLED:
        st.session_state[AUDIT_NOTE_KEY] = ("error", "The audit ran far past its time limit without stopping and "
                                            "was stopped; lower the releases per dataset.")
    elif outcome.status != OutcomeStatus.DONE:
        st.session_state[AUDIT_NOTE_KEY] = ("error", f"The audit failed: {outcome.message}")
    elif outcome.value[0] == "error":  # vocabulary: not a choice
        if outcome.value[1] != settings_error:  # already shown above
            st.session_state[AUDIT_NOTE_KEY] = ("error", outcome.value[1])
    else:
        st.session_state[RESULT_KEY] = outcome.value[1]
        st.session_state[RESULT_FOR_KEY] = st.session_state.get(JOB_FOR_KEY)
        st.session_state.pop(RESULT_NOTE_KEY, None)
        st.session_state.pop(PROBE_KEY, None)


def _audit_progress_text(job) -> tuple[float, str]:
    done, total = (job.reports().get(0) or (0, 1))[:2]
    return min(done / max(total, 1), 1.0), f"{done:,} of {total:,} releases · {job.elapsed:.0f} s"


@st.fragment(run_every=AUDIT_POLL_S)
def _audit_watch() -> None:
    """Progress of an audit that outlived the page run; reruns the page when it ends or when a newer interim result
    is worth drawing."""
    entry = _audit_job()
    if entry is None:
        return
    job = entry[0]
    fraction, text = _audit_progress_text(job)
    st.progress(fraction, text=text)
    interim = _interim(job)
    drawn, drawn_at = st.session_state.get(AUDIT_DRAWN_KEY, (0, 0.0))
    newer = interim is not None and interim.completed[0] > drawn
    if job.finished or (newer and time.monotonic() - drawn_at >= AUDIT_REDRAW_S):
        st.rerun(scope="app")


def _draw_interim(slot, result) -> None:
    """A compact interim view (no widgets) inside ``slot``, redrawn while the page run waits for the audit."""
    with slot.container():
        st.warning(result.interim_note(), icon=":material/hourglass_top:")
        _verdict(result)
        st.plotly_chart(_epsilon_figure(result), width="stretch",
                        key=f"audit_interim_chart_{result.completed[0]}")


def _audit_progress(wait: float, top=None) -> None:
    """Progress line and Cancel button of the session's audit; waits up to ``wait`` seconds inside this run, drawing
    its interim results as they come (in ``top``, where the verdict goes, when given)."""
    if wait:  # a new audit: the note of the last one goes
        st.session_state.pop(AUDIT_NOTE_KEY, None)
    entry = _audit_job()
    if entry is not None and not entry[0].finished:
        job = entry[0]
        pool_notice(shared_pool())
        col_progress, col_cancel = st.columns([4, 1], vertical_alignment="center")
        cancel_slot = col_cancel.empty()  # emptied when the audit ends inside this run
        if cancel_slot.button("Cancel", key="audit_cancel", icon=":material/stop:",
                              help="Stop this audit; its last interim result is kept."):
            job.cancel()
            job.wait(10.0)
            _audit_finish(job, entry[1])
            st.rerun()
        holder = col_progress.empty()
        interim_slot = (top if top is not None else st).empty()
        drawn = 0
        end = time.monotonic() + wait
        while not job.finished and time.monotonic() < end:
            holder.progress(*_audit_progress_text(job))
            interim = _interim(job)
            if interim is not None and interim.completed[0] > drawn:
                _draw_interim(interim_slot, interim)
                drawn = interim.completed[0]
            job.wait(min(0.2, max(0.0, end - time.monotonic())))
        holder.empty()
        interim_slot.empty()  # the result section below draws the latest one
        if job.finished:
            cancel_slot.empty()
        else:
            interim = _interim(job)  # drawn by this run (below): the poller reruns the page only for a newer one
            st.session_state[AUDIT_DRAWN_KEY] = (0 if interim is None else interim.completed[0], time.monotonic())
            with holder.container():
                _audit_watch()
    if entry is not None and entry[0].finished:
        _audit_finish(*entry)
    note = st.session_state.get(AUDIT_NOTE_KEY)
    if note:
        (st.warning if note[0] == "warning" else st.error)(note[1])


def _show_running_audit(top=None, current: tuple | None = None) -> bool:
    """Draw the running audit's latest interim result (or a waiting note); False when no audit is running."""
    entry = _audit_job()
    if entry is None or entry[0].finished:
        return False
    interim = _interim(entry[0])
    if interim is None:
        st.info(f"Waiting for the first interim result (after at least {MIN_TRIALS} releases per dataset)…",
                icon=":material/hourglass_top:")
        return True
    st.session_state[AUDIT_DRAWN_KEY] = (interim.completed[0], time.monotonic())
    _show_audit(interim, top=top, shown_for=_shown_for(JOB_FOR_KEY, current))
    return True


def _valid_choice(key: str, options: tuple) -> None:
    """Reset a stored widget value that the current options no longer offer."""
    if st.session_state.get(key) not in options:
        st.session_state[key] = options[0]


@dataclass(frozen=True)
class _AuditSettings:
    """The settings widgets' values, as the audit and the probe take them."""

    mechanism_id: str | Mechanism
    mech: Mechanism
    epsilon: float
    delta: float
    trials: int
    neighbours: str
    relation: str
    statistic: str
    field: str
    n: int
    k: int
    seed: int
    time_limit: float
    #: A module:function that could not be loaded (its error is shown; nothing runs).
    broken_callable: str = ""

    @property
    def neighbouring(self) -> str | None:
        """The relation to audit; None: the construction's own."""
        return None if self.relation == "auto" else self.relation

    @property
    def delta_arg(self) -> float | None:
        """The claimed δ for a mechanism that uses one, else None."""
        return float(self.delta) if self.mech.uses_delta else None

    def signature(self) -> tuple:
        """What a result depends on (not the time limit): a shown result with another signature is stale."""
        return (str(getattr(self.mech, "id", self.mechanism_id)), float(self.epsilon), self.delta_arg,
                int(self.trials), self.neighbours, self.relation, self.statistic, self.field, int(self.n),
                int(self.k), int(self.seed))

    def words(self) -> str:
        """The signature in words, for the caption of a result."""
        claim = f"ε = {float(self.epsilon):g}" + ("" if self.delta_arg is None else f", δ = {self.delta_arg:g}")
        pairs = "every construction" if self.neighbours == "all" else identifier_label(self.neighbours)
        return (f"{self.mech.name}; claimed {claim}; neighbours: {pairs} ({RELATION_LABELS[self.relation]}); "
                f"{int(self.trials):,} releases per dataset; audit data n = {int(self.n)}, k = {int(self.k)}; "
                f"seed {int(self.seed) or 'fresh'}")


def _show_intro() -> None:
    st.title("Privacy audit")
    st.write(
        "Run a mechanism thousands of times on two datasets that differ in one person's record and look for an "
        "outcome that is much more likely with that record than without it — or that only one of the two can "
        "produce at all. How much more likely gives a guaranteed *lower* bound on the mechanism's real privacy "
        "loss ε (and on δ). If a bound exceeds the claim, the claim is false."
    )


def _show_presets() -> None:
    """Apply a preset from the link, then one button per preset."""
    _preset_from_link()
    st.subheader("Presets")
    names = list(PRESETS)
    for row in (names[:4], names[4:]):
        for name, col in zip(row, st.columns(4)):
            col.button(name, key=f"audit_preset_{names.index(name)}", on_click=_apply_preset, args=(name,),
                       width="stretch")
            col.caption(PRESETS[name]["caption"])


def _settings_widgets() -> _AuditSettings:
    """The Settings section: mechanism, claim, neighbours, statistic, sizes, seed and time limit."""
    st.subheader("Settings")
    # OpenDP's and diffprivlib's PCA where `make peers` ran; the audit's teaching mutants (never in Explore)
    ids = mechanism_ids() + list(peers_status().available) + list(TEACHING_MUTANTS)
    _init_state("sn_imtiaz" if "sn_imtiaz" in ids else ids[0])
    _valid_choice("audit_mechanism", tuple(ids))
    st.session_state.setdefault("audit_callable", "")
    c1, c2, c3 = st.columns([2, 1, 1])
    mid = c1.selectbox("Mechanism", ids, format_func=_label, key="audit_mechanism")
    if callables_allowed():
        spec = c1.text_input("…or your own (module:function)", key="audit_callable",
                             placeholder="mypkg.mech:release",
                             help="A Python function (X, epsilon, delta, rng) -> array on the server's Python path: "
                                  "X is the preprocessed rows (n×d, ‖x‖ ≤ 1), rng a NumPy Generator; it returns a "
                                  "d×d covariance or a d×k basis. Its claim is what you declare here: ε, and δ (0 = "
                                  "pure ε-DP). Anything it raises is a refusal, an output like any other.").strip()
    else:
        spec = ""
        c1.caption("Your own mechanism (module:function): `dpcore audit --mechanism mypkg.mech:release`, or start "
                   "the dashboard with DPCORE_AUDIT_CALLABLES=1 (it imports and runs code on the server, so it is off "
                   "on a shared server).")
    output = c1.selectbox("It returns", tuple(CALLABLE_OUTPUTS), key="audit_callable_output",
                          format_func=lambda o: "a d×d covariance" if o == "covariance" else "a d×k basis",
                          help="\n\n".join(f"**{o}**: {v}" for o, v in CALLABLE_OUTPUTS.items())) if spec else \
        "covariance"
    epsilon = c2.number_input("Claimed ε", min_value=0.0, max_value=50.0, step=0.1, key="audit_epsilon")
    custom = None
    if spec:
        delta = c3.number_input("Claimed δ (0 = pure ε-DP)", min_value=0.0, max_value=0.5, step=1e-5, format="%.1e",
                                key="audit_delta")
        custom = _custom_mechanism(spec, output, float(delta))
    mech = custom if custom is not None else resolve_mechanism(mid)
    if not spec and mech.uses_delta:
        delta = c3.number_input("Claimed δ", min_value=0.0, max_value=0.5, step=1e-5, format="%.1e",
                                key="audit_delta")
    elif not spec:
        delta = 0.0
        c3.caption("This mechanism claims pure ε-DP, so the audit uses δ = 0.")
    c4, c5, c6 = st.columns(3)
    trials = c4.select_slider("Releases per dataset (per neighbour pair)", options=TRIAL_CHOICES,
                              key="audit_trials")
    _valid_choice("audit_neighbours", NEIGHBOUR_CHOICES)
    neighbours = c5.selectbox("Neighbouring datasets", NEIGHBOUR_CHOICES, key="audit_neighbours",
                              format_func=lambda k: "every construction" if k == "all" else identifier_label(k),
                              help="\n\n".join(["**every construction**: each pair below but the targeted ones "
                                                  "(chosen by name only), the confidence split over them",
                                                  *(f"**{identifier_label(k)}**: {v}"
                                                               for k, v in NEIGHBOUR_CONSTRUCTIONS.items())]))
    relations = ("auto", *mech.neighbourings)
    _valid_choice("audit_neighbouring", relations)
    relation = c6.selectbox("Neighbouring relation", relations, key="audit_neighbouring",
                            format_func=lambda r: RELATION_LABELS[r],
                            help="Audit each relation the mechanism claims: under add/remove the number of rows is "
                                 "itself private. *The pair's own*: each construction's default relation, where "
                                 "the mechanism supports it.")
    c7, c8, c9, c10 = st.columns(4)
    statistic = c7.selectbox("What to look at", tuple(STATISTICS), key="audit_statistic",
                             format_func=identifier_label,
                             help="\n\n".join(f"**{identifier_label(k)}**: {v}" for k, v in STATISTICS.items()))
    field = c8.selectbox("Released field", tuple(FIELDS), key="audit_field", format_func=identifier_label,
                         help="\n\n".join(f"**{identifier_label(k)}**: {v}" for k, v in FIELDS.items()))
    n = c9.number_input("Rows (n)", min_value=4, max_value=5_000, step=1, key="audit_n")
    k = c10.number_input("Components (k)", min_value=1, max_value=10, step=1, key="audit_k")
    c11, c12 = st.columns(2)
    seed = c11.number_input("Seed (0 = fresh randomness)", min_value=0, max_value=2**31 - 1, step=1,
                            key="audit_seed")
    time_limit = c12.number_input("Time limit (s)", min_value=1.0, max_value=600.0, step=5.0,
                                  key="audit_time_limit")
    _exhibit_note(mid if custom is None else "", mech)
    return _AuditSettings(mech if custom is not None else mid, mech, epsilon, delta, trials, neighbours, relation,
                          statistic, field, n, k, seed, time_limit, spec if spec and custom is None else "")


def _exhibit_note(mid: str, mech: Mechanism) -> None:
    """What is wrong with a labelled exhibit, in its own terms: a teaching mutant's deliberate bug, a peer's
    sampler (its proof is not the problem), or a claimed-invalid mechanism's published proof."""
    if is_teaching_mutant(mid):
        mutant = teaching_mutant(mid)
        st.warning(f"{mech.name}: {mutant.bug} Its preset audits it on the pair that attains the sensitivity "
                   f"(neighbouring datasets: *{identifier_label(mutant.audit_defaults['neighbours'])}*); choose the "
                   f"shipped {mutant.shipped} with the same settings to compare.")
    elif is_peer(mid) and mech.invalid:
        st.warning(f"{mech.name} is shown as a labelled comparison, not as private: its privacy proof is for the "
                   "exponential mechanism, but its Bingham sampler draws a different law (more concentrated), so "
                   "its ε-DP claim does not follow from that proof.")
    elif mech.invalid:
        st.warning(f"{mech.name} is a labelled exhibit: its published privacy proof is wrong.")


def callables_allowed() -> bool:
    """True when the server was started with DPCORE_AUDIT_CALLABLES=1: a module:function typed in a browser is
    imported and run on the server, so a shared (classroom) server does not offer it unless its owner says so."""
    return os.environ.get("DPCORE_AUDIT_CALLABLES", "") == "1"


def _custom_mechanism(spec: str, output: str, delta: float):
    """The user's module:function as a mechanism with the declared claim, or None after showing why not (an import
    error is a message, never a traceback)."""
    try:
        return callable_mechanism(spec, output=output, delta=delta)
    except DPCoreError as exc:
        st.error(str(exc))
        return None


def _show_estimate(s: _AuditSettings) -> str:
    """Caption the estimated run time; returns the settings' error message ("" when they are valid)."""
    if s.broken_callable:
        return f"cannot load {s.broken_callable}"
    try:
        if isinstance(s.mechanism_id, str):
            seconds = _estimate(s.mechanism_id, float(s.epsilon), s.delta_arg, int(s.trials), s.neighbours,
                                s.neighbouring, int(s.n), int(s.k))
        else:  # a callable: not cached (it is an object)
            seconds = estimate_audit_seconds(s.mechanism_id, float(s.epsilon), int(s.trials), delta=s.delta_arg,
                                             neighbours=s.neighbours, neighbouring=s.neighbouring, n=int(s.n),
                                             k=int(s.k))
        _estimate_caption(seconds, s)
    except DPCoreError as exc:
        st.error(str(exc))
        return str(exc)
    return ""


#: An estimate above this many seconds comes with advice (fewer releases, one construction, the CLI).
LONG_AUDIT_S = 180.0


def duration_text(seconds: float) -> str:
    """A run time in readable units: "under a second", "about 40 s", "about 12 min", "about 18 h"."""
    if seconds < 1:
        return "under a second"
    if seconds < 120:
        return f"about {seconds:.0f} s"
    if seconds < 2 * 3600:
        return f"about {seconds / 60:.0f} min"
    if seconds < 2 * 86_400:
        return f"about {seconds / 3600:.0f} h"
    return f"about {seconds / 86_400:.0f} days"


def _estimate_caption(seconds: float, s: _AuditSettings) -> None:
    """The estimated run time; a long one with what the time limit makes of it and how to shorten it."""
    text = f"Estimated run time: {duration_text(seconds)}" + (" (from a short pilot run)." if seconds >= 1 else ".")
    if seconds <= max(LONG_AUDIT_S, float(s.time_limit)):
        st.caption(text)
        return
    share = float(s.time_limit) / seconds
    part = "less than 1 %" if share < 0.01 else f"about {100 * share:.0f} %"
    st.warning(
        f"{text} The time limit ({float(s.time_limit):g} s) stops it after {part} of the releases, and the bound "
        "uses the releases completed by then. To audit more: lower the "
        "releases per dataset, choose one neighbour construction instead of every construction, raise the time "
        "limit, or run it from the command line, which uses every core: `dpcore audit --mechanism "
        f"{s.mech.id} --epsilon {float(s.epsilon):g}"
        + ("" if s.delta_arg is None else f" --delta {s.delta_arg:g}")
        + f" --trials {int(s.trials)} --time-limit 3600`.",
        icon=":material/schedule:")


def _start_audit(s: _AuditSettings, settings_error: str) -> None:
    """Submit the audit to the server's shared worker pool; its handle lives in this session only."""
    _audit_job(cancel=True)
    if s.broken_callable:  # its import error is shown beside the input
        return
    audit_args = dict(mechanism_id=s.mechanism_id, epsilon=float(s.epsilon), delta=s.delta_arg,
                      neighbours=s.neighbours, statistic=s.statistic, trials=int(s.trials), k=int(s.k),
                      seed=int(s.seed) or None, time_limit=float(s.time_limit), n=int(s.n),
                      neighbouring=s.neighbouring, field=s.field)
    st.session_state[JOB_FOR_KEY] = (s.signature(), s.words())
    st.session_state[AUDIT_JOB_KEY] = (shared_pool().submit(
        [Task(audit_task, (audit_args,), hard_limit=AUDIT_HARD_FACTOR * float(s.time_limit)
              + AUDIT_HARD_GRACE_S)], label="audit"), settings_error)


def _run_probe(s: _AuditSettings, probe_seeds: int, settings_error: str) -> None:
    """Run the determinism probe in the page run and keep its result (an error not already shown is shown)."""
    with st.spinner("Running both datasets with identical seeds…"):
        try:
            result = determinism_probe(s.mechanism_id, float(s.epsilon), s.delta_arg,
                                       neighbours="in_plane" if s.neighbours == "all" else s.neighbours,
                                       neighbouring=s.neighbouring, k=int(s.k), n=int(s.n), seeds=int(probe_seeds),
                                       seed=int(s.seed) or None, time_limit=float(s.time_limit))
        except DPCoreError as exc:
            if str(exc) != settings_error:
                st.error(str(exc))
        else:
            st.session_state[PROBE_KEY] = result
            st.session_state[PROBE_FOR_KEY] = (s.signature(), s.words())
            st.session_state.pop(RESULT_KEY, None)


def _run_controls(s: _AuditSettings, settings_error: str, top=None) -> None:
    """The Run audit / Run determinism probe buttons, and what they start (also when requested by a preset)."""
    b1, b2, b3 = st.columns([1, 1, 2])
    run = b1.button("Run audit", type="primary", key="audit_run")
    probe = b2.button("Run determinism probe", key="audit_probe_run",
                      help="Same seeds on both datasets: where the private selection agrees, nothing else may "
                           "differ (use the in_plane neighbours and k < d).")
    probe_seeds = b3.number_input("Probe seeds", min_value=1, max_value=1_000, step=1, key="audit_probe_seeds")
    started = bool(run or st.session_state.pop("audit_run_requested", False))
    if started:
        _start_audit(s, settings_error)
    _audit_progress(_wait_seconds() if started else 0.0, top)
    if probe or st.session_state.pop("audit_probe_requested", False):
        _run_probe(s, probe_seeds, settings_error)


def _shown_for(key: str, current: tuple | None) -> tuple | None:
    """(words, stale) of the settings stored under ``key``, stale when they differ from ``current``."""
    stored = st.session_state.get(key)
    if stored is None:
        return None
    return stored[1], current is not None and stored[0] != current


def _show_current_result(top=None, current: tuple | None = None) -> None:
    """The running audit's interim result, else the last probe, else the last audit, else a hint. The verdict goes
    into ``top`` (a container at the head of the page, so it is above the fold), the details here. ``current`` is
    the widgets' settings signature: a result run with other settings says so."""
    if _show_running_audit(top, current):  # a running audit shows its latest interim result
        pass
    elif st.session_state.get(PROBE_KEY) is not None:
        _show_probe(st.session_state[PROBE_KEY], top, _shown_for(PROBE_FOR_KEY, current))
    elif st.session_state.get(RESULT_KEY) is not None:
        _show_audit(st.session_state[RESULT_KEY], st.session_state.get(RESULT_NOTE_KEY), top,
                    _shown_for(RESULT_FOR_KEY, current))
    else:
        st.caption("Choose a preset or press *Run audit*.")


def _show_reading_guide() -> None:
    with st.expander("How to read an audit"):
        st.markdown(
            "- **Violated** means the data prove, at the stated confidence, that the mechanism leaks more than "
            "claimed. The proof is a concrete pair of datasets and an outcome. The strongest proofs are outcomes "
            "that one dataset can never produce (a release outside its support, or an exact value it never "
            "outputs): they show δ is too small at every ε.\n"
            "- **Consistent** means this test found nothing *and* the same test (same neighbours, same events, "
            "same number of releases) flags a violation of the claim on every pair: Gaussian (for an (ε, δ) "
            "claim) or Laplace (for ε) noise on C whose privacy loss on that pair is 2× the claimed ε, calibrated "
            "from the claim and the pair — never from the audited code, so a mechanism with too little noise "
            "cannot make its own yardstick easier. It is still not a proof: a smarter test, other datasets or "
            "more releases might find a smaller leak.\n"
            "- **Inconclusive** means the test could not have found a violation of that size: it does not flag "
            "the 2ε reference on every pair (the result then says the smallest violation it does flag: 4ε, 8ε or "
            "16ε), or the mechanism releases a subspace (no reference exists), or, with N releases, frequencies "
            "can show at most ε ≈ ln(N/4), so a large claimed ε needs far more releases or an outcome that one "
            "dataset cannot produce.\n"
            "- **Your own mechanism**: type module:function (a function (X, epsilon, delta, rng) → array on the "
            "server's Python path) instead of choosing one; its claim is the ε and δ you enter. The whole "
            "pipeline from two files is audited from the command line: `dpcore audit --pair D.csv D2.csv "
            "--schema S.yaml`.\n"
            "- **Every construction** of neighbouring datasets is audited by default, and every released field, "
            "text included: the ⊥ reason, an error message when a release is refused, the ledger notes.\n"
            "- Half of the releases choose which outcome to look at, the other half count it, so the choice "
            "cannot flatter the result. Both directions (with and without the record) are tried and the "
            "confidence is split between them.\n"
            "- Audit every relation a mechanism claims: under *add or remove one record* the number of rows is "
            "private too, so a release that uses the exact n (e.g. clips eigenvalues to n) leaks it.\n"
            "- The **determinism probe** runs both datasets with the same random seed. Where the mechanism's "
            "private choice is the same (e.g. the same subspace), every other released number must be the same "
            "too; anything else reveals the records."
        )


def main() -> None:
    _nav.ensure_navigation()  # links on the first request of a fresh server that opens /audit directly
    keep_alive()  # the other pages' settings survive a run of this page (it keeps its own)
    _show_intro()
    top = st.container()  # the current result's verdict, filled at the end of the run
    _show_presets()
    settings = _settings_widgets()
    settings_error = _show_estimate(settings)
    _run_controls(settings, settings_error, top)
    _show_current_result(top, settings.signature())
    with st.expander("Sampler self-test (is the Bingham sampler exact?)"):
        _sampler_selftest()
    _show_reading_guide()


main()
