"""Privacy basics: a four-step lesson with small live demos on the built-in Wine data (ε, δ and 1/n, replace-one vs
add/remove, claimed-invalid). All numbers come from :mod:`dpcore.explain.teaching`; this page only draws them.
"""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
import streamlit as st
from plotly.subplots import make_subplots

from dpcore.core.privacy import NEIGHBOURING_LABELS
from dpcore.explain import teaching
from dpcore.explain.statements import format_bound
from dpcore.vocabulary import Guarantee, Neighbouring
from pages import ui
from pages.ui import nav as _nav

ui.init_state()
ss = st.session_state

LESSON_DELTA = 1e-5
LESSON_K = 2
EPSILON_CHOICES = (0.1, 0.25, 0.5, 1.0, 2.0, 5.0)
RELATION_COLOURS = {Neighbouring.REPLACE: "#1f77b4", Neighbouring.ADD_REMOVE: "#ff7f0e"}
#: Labelled ticks of the log axes (plain numbers, no abbreviated minor labels).
LOG_TICKS = (0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100)


@st.cache_data(show_spinner="Running Analyze Gauss under both relations…", max_entries=8)
def _comparison(epsilon: float) -> teaching.NeighbouringComparison:
    """Cached across sessions: built-in public data only (never an upload)."""
    _, data = teaching.lesson_data()
    return teaching.neighbouring_comparison(data, epsilon=epsilon, delta=LESSON_DELTA, k=LESSON_K)


def _rerun_button(label: str, key: str) -> int:
    """A 'draw again' button; returns the draw number (the demo's seed: fixed draws, new ones on click)."""
    if st.button(label, key=f"{key}_button", icon=":material/casino:"):
        ss[key] = ss.get(key, 0) + 1
    return ss.get(key, 0)


def _density_figure(demo: teaching.EpsilonDemo) -> go.Figure:
    fig = go.Figure()
    fig.add_scatter(x=demo.grid, y=demo.density_with, name="D: all 178 wines", line={"color": "#1f77b4"})
    fig.add_scatter(x=demo.grid, y=demo.density_without, name="D′: one counted wine removed",
                    line={"color": "#ff7f0e", "dash": "dash"})
    fig.add_vline(x=demo.release, line_color="black", line_dash="dot", annotation_text="this release",
                  annotation_position="top")
    fig.update_layout(height=300, margin={"t": 30, "b": 40}, xaxis_title="noisy answer", yaxis_title="density",
                      legend={"orientation": "h", "y": 1.15})
    return fig


def _comparison_figure(comp: teaching.NeighbouringComparison) -> go.Figure:
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.12,
                        subplot_titles=("Utility: captured variance (1 = non-private PCA)",
                                        "Noise level σ (from the mechanism's calibration)"))
    for relation, frame in comp.curves.groupby("relation", sort=False):
        colour, label = RELATION_COLOURS[relation], NEIGHBOURING_LABELS[relation]
        fig.add_scatter(x=frame["epsilon"], y=frame["captured_variance_ratio"], name=label, legendgroup=relation,
                        line={"color": colour}, mode="lines+markers", row=1, col=1)
        fig.add_scatter(x=frame["epsilon"], y=frame["sigma"], name=label, legendgroup=relation, showlegend=False,
                        line={"color": colour}, mode="lines+markers", row=1, col=2)
    fig.update_xaxes(type="log", title_text="ε", tickvals=LOG_TICKS, ticktext=[f"{t:g}" for t in LOG_TICKS])
    fig.update_yaxes(title_text="captured variance", range=[0, 1.02], row=1, col=1)
    fig.update_yaxes(title_text="σ (log scale)", type="log", tickvals=LOG_TICKS,
                     ticktext=[f"{t:g}" for t in LOG_TICKS], row=1, col=2)
    fig.update_layout(height=380, margin={"t": 60, "b": 40}, legend={"orientation": "h", "y": -0.25})
    return fig


st.title("Privacy basics")
st.markdown("Four short steps, each with a small live demo on the **Wine** data (178 wines, a public dataset built "
            "into the app). Nothing on this page changes your settings on the other pages.")
with st.expander("Glossary: ε, δ, neighbours, clipping, claimed-invalid …", expanded=False):
    for term, text in teaching.GLOSSARY:
        st.markdown(f"**{term}** — {text}")
dataset, _ = teaching.lesson_data()

# ---------------------------------------------------------------------------------------------------------------
st.header("1 · What ε means")
st.markdown("A differentially private answer is random. Take the question *“how many wines have more than 13 % "
            "alcohol?”* and answer it with Laplace noise. Compare the answer's distribution on the data (D) and on "
            "the same data with one wine removed (D′): at every possible answer the two curves differ by at most "
            "a factor $e^{\\varepsilon}$, so no answer tells much about whether that one wine was there.")
eps = st.select_slider("ε", options=EPSILON_CHOICES, value=1.0, key="basics_eps", format_func=lambda e: f"{e:g}")
demo = teaching.epsilon_demo(eps, random_state=_rerun_button("Answer again", "basics_eps_draw"), dataset=dataset)
c1, c2, c3 = st.columns(3)
c1.metric("Noisy answer (private)", f"{demo.release:.1f}")
c2.metric("Largest ratio of the two curves", f"{demo.largest_ratio:.3g}", help="Over every possible answer.")
c3.metric("Allowed: e^ε", f"{demo.bound:.3g}")
st.plotly_chart(_density_figure(demo), width="stretch", key="basics_epsilon_chart")
st.caption(f"**Guarantee:** {demo.guarantee}. The exact count, {demo.true_count}, is shown only to explain the "
           "picture (it is not private). Smaller ε: wider curves, closer together — more privacy, less accuracy.")

# ---------------------------------------------------------------------------------------------------------------
st.header("2 · δ, and why it must be much smaller than 1/n")
n = dataset.n
st.markdown(
    "(ε, δ)-DP adds a slack δ to the $e^{\\varepsilon}$ bound: for every set of outcomes S, "
    "P[M(D) ∈ S] ≤ $e^{\\varepsilon}$·P[M(D′) ∈ S] + δ. (That is weaker than “ε-DP except with probability δ”.) "
    "A small δ sounds harmless, but consider "
    "the mechanism *“publish one randomly chosen record, verbatim, with probability δ·n (otherwise publish "
    "nothing)”*. Each person's record comes out with probability δ, so two datasets that differ in one record "
    f"differ by at most δ on every outcome: it is **(0, δ)-DP**. With δ = 1/n (here 1/{n}) it publishes a real "
    "person's record **every time**. So δ must be far below 1/n: the other pages warn when it is not.")
choices = teaching.delta_choices(n)
labels = {c.label: c for c in choices}
picked = labels[st.radio(
    "δ for this demo", list(labels), key="basics_delta",
    format_func=lambda lab: f":red[**{lab}**]" if labels[lab].teaching_only else lab)]
if picked.teaching_only:
    st.error("**Teaching option: δ = 1/n is NOT a safe setting.** It exists only on this page, to show what it "
             "allows; no other page of the app offers δ = 1/n.", icon=":material/dangerous:")
release = teaching.record_release_demo(picked.delta, random_state=_rerun_button("Run the mechanism again",
                                                                                 "basics_delta_draw"),
                                       dataset=dataset)
st.markdown(f"**Guarantee:** {release.guarantee}. Chance that this run publishes a record: "
            f"**{100 * release.publish_probability:.3g} %**; chance for one given person: δ = "
            f"{format_bound(release.per_person_probability)}.")
if release.record is not None:
    st.error("**A real wine's record was published, unchanged** — allowed by (0, 1/n)-DP:",
             icon=":material/visibility:")
    st.dataframe(pd.DataFrame([release.record]), hide_index=True, width="stretch", key="basics_published_record")
else:
    st.success("Nothing was published this time.", icon=":material/visibility_off:")

# ---------------------------------------------------------------------------------------------------------------
st.header("3 · Neighbouring datasets: replace one vs add/remove one")
st.markdown(
    "“Differ in one person” can mean two things. **Replace-one**: same number of rows, one record swapped (n is "
    "public). **Add/remove-one**: one record added or deleted (n itself is private). Adding or removing a record x "
    "moves the matrix C = Σ xxᵀ by xxᵀ, of Frobenius norm ‖x‖² ≤ 1. Replacing x by y moves it by xxᵀ − yyᵀ, and "
    "$\\|xx^\\top - yy^\\top\\|_F^2 = \\|x\\|^4 + \\|y\\|^4 - 2\\langle x, y\\rangle^2 \\le 2$, so its "
    "sensitivity is **√2** (not 2: “one out, one in” is only "
    "the triangle-inequality bound). The same mechanism therefore needs √2 times the noise for the same (ε, δ). "
    "Here is Analyze Gauss on Wine under both.")
eps3 = st.select_slider("ε for the side-by-side numbers", options=EPSILON_CHOICES, value=1.0, key="basics_nb_eps",
                        format_func=lambda e: f"{e:g}")
with ui.handle_errors():
    comp = _comparison(float(eps3))
    cols = st.columns(2)
    for col, (_, row) in zip(cols, comp.relations.iterrows()):
        with col.container(border=True):
            st.markdown(f"**{row['label']}**")
            m1, m2 = st.columns(2)
            m1.metric("Sensitivity Δ₂", f"{row['sensitivity']:.4g}")
            m2.metric("Noise σ", f"{row['sigma']:.4g}")
            st.caption(f"**Guarantee:** {row['guarantee']}.")
    st.plotly_chart(_comparison_figure(comp), width="stretch", key="basics_neighbouring_chart")
    st.caption(f"{comp.mechanism} on Wine, k = {comp.k}, δ = {comp.delta:g}, mean of {comp.trials} "
               "trials per point (part of the rows is held out for the accuracy score, as everywhere in the app). "
               "σ and Δ₂ are read from the mechanism's own release. These charts use the true data: an evaluation "
               "sandbox, not a private release.")

# ---------------------------------------------------------------------------------------------------------------
st.header("4 · What “claimed-invalid” means")
st.markdown(
    "Some published mechanisms come with a privacy proof that is wrong. The app keeps two of them — the SN and "
    "Jiang Wishart mechanisms — as **labelled exhibits**: drawn dashed and red, marked NOT PRIVATE, never offered "
    "as a normal choice. Their output can land where the neighbouring dataset could never put it, which tells an "
    "attacker which dataset was used. A proven counterexample gives, at each ε, the δ below which the claim fails:")
eps4 = st.select_slider("ε for the statements", options=EPSILON_CHOICES, value=1.0, key="basics_invalid_eps",
                        format_func=lambda e: f"{e:g}")
for _, row in teaching.invalid_exhibits(float(eps4)).iterrows():
    st.error(f"{ui.guarantee_badge(Guarantee.CLAIMED_INVALID)} {row['statement']}", icon=":material/block:")
st.page_link(_nav.ROOT / "pages" / "audit.py", query_params={"preset": "sn_imtiaz"}, icon=":material/fact_check:",
             label="Run the Audit's SN preset: 5,000 releases on two neighbouring datasets prove SN is NOT 1-DP")
