"""Explore's "What ε do I need?" expander: the inverse planner (:mod:`dpcore.evaluation.planner`) on the shown data.

On a built-in dataset the plan is free (public data). On an upload it is a labelled NON-private what-if: the answer
is computed from the private rows, so the panel says so above the answer. The maths is in dpcore; this module only
collects the settings and shows the result.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dpcore.evaluation.metrics import METRIC_LABELS
from dpcore.evaluation.planner import (
    TARGET_METRICS,
    TARGET_WORDS,
    PlanInput,
    PlanResult,
    confidence_rule,
    make_target,
    plan_context,
    plan_epsilon,
    private_what_if,
    public_input,
)
from dpcore.evaluation.reporting import short_name
from dpcore.evaluation.sweep import REFERENCE_MECHANISMS
from dpcore.exceptions import DPCoreError
from dpcore.explain.display import plain_words
from pages import ui
from pages.ui import odometer

RESULT_KEY = "explore_plan_result"
#: Session key of the expander's open state.
OPEN_KEY = "explore_plan_open"
#: Probes per plan in the dashboard (the library's default is larger; a plan here runs while the user waits).
MAX_PROBES = 16
_DEFAULT_VALUE = {"captured_variance_ratio": 0.9, "principal_angle_max_deg": 10.0, "svm_accuracy": 0.8}


def plan_source(prepared, dataset_id: str) -> PlanInput:
    """A built-in dataset is public; an upload is raw private data (the plan is a non-private what-if)."""
    return private_what_if(prepared) if dataset_id == ui.UPLOAD_ID else public_input(prepared)


def _show(result: PlanResult, neighbouring: str) -> None:
    if result.epsilon is None:
        st.warning(f"Not reachable: {result.reason} {plan_context(result, neighbouring)}")
    else:
        low, high = result.band
        st.metric(f"ε needed ({ui.mechanism_label(result.mechanism)})", f"{result.epsilon:.3g}",
                  help=plan_context(result, neighbouring))
        st.markdown(f"**{plan_context(result, neighbouring)}**")
        st.caption(f"{confidence_rule(result)} Band [{low:.3g}, {high:.3g}]: below {low:.3g} the target is "
                   f"confidently missed; the fitted crossing (where the share itself reaches "
                   f"{result.confidence:.0%}) is at {result.estimate:.3g}."
                   + (f" {result.reason}" if result.reason else ""))
    probes = pd.DataFrame([{"ε": p.epsilon, "share meeting the target": p.share, "releases": p.trials}
                           for p in sorted(result.probes, key=lambda p: p.epsilon)])
    st.dataframe(probes, hide_index=True, column_config={
        "ε": st.column_config.NumberColumn(format="%.4g"),
        "share meeting the target": st.column_config.NumberColumn(format="%.3f")})
    for note in result.notes:
        st.caption(note)


#: Target names short enough for a third of the page on a projector (the full labels are in the help).
_SHORT_TARGET = {**TARGET_WORDS, "principal_angle_max_deg": "largest angle"}


def render(config, prepared, dataset_id: str) -> None:
    """The expander under Explore's results; ``config`` is the shown sweep's (its k, δ, seed and relation)."""
    # stateful (key + on_change): its open state is kept in the session, so the rerun after "Find ε" draws it open
    # with the answer inside. A stateless expander is a new element, closed, whenever the elements above it differ
    # between two runs (seen in Chromium: the rerun after the click drew a second, closed copy and removed the
    # open one, about 4 s later, hiding the answer).
    with st.expander("What ε do I need?", icon=":material/target:", key=OPEN_KEY, on_change="rerun"):
        st.caption("State the utility you need; the planner simulates releases at probed ε (bisection on log ε, "
                   "not a grid) and returns the smallest ε that meets it in the chosen share of releases.")
        source = plan_source(prepared, dataset_id)
        if not source.private_inputs:
            st.warning(source.note, icon=":material/warning:")
        mechs = [m for m in config.mechanisms if m not in REFERENCE_MECHANISMS] or ["analyze_gauss"]
        metrics = [m for m in TARGET_METRICS if m != "svm_accuracy" or prepared.y is not None]
        c1, c2, c3 = st.columns(3)
        mech = c1.selectbox("Mechanism", mechs, format_func=short_name, key="explore_plan_mech")
        metric = c2.selectbox("Target", metrics, format_func=lambda m: _SHORT_TARGET.get(m, METRIC_LABELS[m]),
                              key="explore_plan_metric", help="\n\n".join(f"**{_SHORT_TARGET.get(m, m)}**: "
                                                                           f"{METRIC_LABELS[m]}" for m in metrics))
        angle = metric == "principal_angle_max_deg"
        value = c3.number_input("at most (degrees)" if angle else "at least", min_value=0.01,
                                max_value=89.9 if angle else 1.0, value=_DEFAULT_VALUE[metric],
                                key=f"explore_plan_value_{metric}")
        c4, c5 = st.columns(2)
        confidence = c4.slider("Share of releases that must meet it", 0.5, 0.99, 0.9, 0.01,
                               key="explore_plan_confidence")
        trials = c5.number_input("Releases per probed ε", min_value=20, max_value=500, value=50, step=10,
                                 key="explore_plan_trials")
        delta = max([d for d in config.deltas if d > 0], default=1e-5)
        k = int(config.ks[0])
        key = (dataset_id, prepared.fingerprint, mech, metric, float(value), float(confidence), int(trials), k,
               delta, config.seed, config.neighbouring)
        if st.button("Find ε", key="explore_plan_run", icon=":material/search:"):
            # on an upload, every simulated release is counted as it is reported, however the plan ends (an error
            # after some probes, a rerun or stop that interrupts it): each one ran on the upload
            with odometer.counting_runs(mech, delta, config.neighbouring, "ε planner (NOT private what-if)", key,
                                        private=False) as tally:
                try:
                    with st.spinner("Simulating releases …"):
                        result = plan_epsilon(source, mech, make_target(metric, value), k=k, delta=delta,
                                              confidence=confidence, trials=int(trials), seed=config.seed,
                                              neighbouring=config.neighbouring, max_probes=MAX_PROBES,
                                              on_releases=tally)
                except DPCoreError as exc:
                    st.error(plain_words(str(exc)))
                    return
            st.session_state[RESULT_KEY] = (key, result)
        stored = st.session_state.get(RESULT_KEY)
        if stored is not None and stored[0] == key:
            _show(stored[1], config.neighbouring)
        elif stored is not None:
            st.caption("The last plan was for other settings or data; press **Find ε** to plan for these.")
