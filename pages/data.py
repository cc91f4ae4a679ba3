"""Data: choose a built-in dataset or upload a table (with its column roles and public schema), set the
preprocessing, and see a (non-private) summary."""

from __future__ import annotations

import functools
import math
import time
from pathlib import Path

import plotly.graph_objects as go
import streamlit as st

import dpcore
from dpcore.core.privacy import NEIGHBOURING_LABELS
from dpcore.data.diagnostics import NORM_BOUND_FORMAT, NOT_PRIVATE_LABEL, as_shown, clamp_report
from dpcore.evaluation.advisor import (
    DEFAULT_NUM_CANDIDATES,
    advisor_mechanisms,
    best_norm_bound,
    clipping_utility_curve,
    default_candidates,
)
from dpcore.evaluation.reporting import explained_variance, k_for_fraction, label_balance
from dpcore.explain.display import format_delta, plain_ledger, plain_words
from dpcore.vocabulary import NO_LABEL, CategoricalPolicy, Centering, FeatureScaling, MissingPolicy, NormMode, values
from pages import ui
from pages.ui import odometer, schema_editor, workspace
from pages.ui.charts import for_screen, presentation_on
from pages.ui.datasets import auto_bound_from_data

ui.init_state()
ss = st.session_state
EXAMPLE = Path(__file__).resolve().parents[1] / "sample_data" / "classroom_example.csv"

st.title("Data and preprocessing")
st.caption("Everything on this page looks at the raw data and is NOT private: it is for choosing settings. "
           "Uploaded files stay in this browser session's memory only.")


def _pick_dataset() -> None:
    """The picker changed the dataset: the data settings follow it (kept per dataset)."""
    ui.select_dataset(ss.dp_dataset)


# ------------------------------------------------------------------ source
left, right = st.columns([3, 2])
with left:
    st.subheader("Dataset")
    options = ui.dataset_options()
    if ss.dp_dataset not in options:
        ss.dp_dataset = ui.DEFAULTS["dp_dataset"]
    # the file name is bound now: AppTest calls format_func outside the script run
    st.selectbox("Dataset", options, key="dp_dataset", on_change=_pick_dataset,
                 format_func=functools.partial(ui.dataset_label, upload_name=ss.get("dp_upload_name")),
                 help="Scaling, norm bound, centring and label belong to each dataset: a dataset keeps its own "
                      "(private defaults the first time you open it).")
    info = next((d for d in ui._datasets() if d.id == ss.dp_dataset), None)
    if info is not None:
        st.caption(f"{info.description}. Source: {info.source}.")
with right:
    st.subheader("Upload a table")
    st.file_uploader("CSV/TSV (any delimiter, decimal commas, UTF-8/UTF-16), Parquet or Excel",
                     key="data_upload_widget", type=["csv", "txt", "tsv", "tab", "parquet", "pq", "xlsx"],
                     on_change=ui.on_upload,
                     help="Kept in memory for this session only; never written to disk.")
    example = EXAMPLE.read_bytes() if EXAMPLE.exists() else None
    if example is None and hasattr(dpcore.data, "example_csv_bytes"):
        example = dpcore.data.example_csv_bytes()
    if example is not None:
        st.download_button("Download the classroom example CSV", example, file_name="classroom_example.csv",
                           mime="text/csv", on_click="ignore", key="data_dl_example")
workspace.lost_upload_note()  # a reload of a session that used an upload: what was lost, how to restore it
_workspace_slot = workspace.render()  # settings and schemas (never data) saved to one file, and loaded again


def _upload_section() -> None:
    """File format, label, missing values and the schema editor of an uploaded table."""
    if ui.drop("upload_note"):
        st.info("An uploaded file comes without a public schema. The draft below takes each column's bounds or "
                "categories from the data — marked red and NOT private. Replace them with public values (or tick "
                "*public* where a value is public knowledge) to make the pipeline private.")
    with st.container(border=True):
        try:
            table = ui.upload_table()
        except dpcore.DPCoreError:  # the message is shown once, below, where the dataset is loaded
            table = None
        read = table.info.describe() if table is not None else "— could not be read (see the message below)"
        st.markdown(f"**Uploaded file:** {ss.get('dp_upload_name')} — read as {read}")
        with st.expander("File format (detected; override if the columns look wrong)", icon=":material/tune:"):
            f1, f2, f3, f4 = st.columns(4)
            f1.selectbox("Delimiter", list(ui.DELIMITER_CHOICES), key="dp_csv_delimiter")
            f2.selectbox("Decimal mark", list(ui.DECIMAL_CHOICES), key="dp_csv_decimal")
            f3.selectbox("Thousands separator", list(ui.THOUSANDS_CHOICES), key="dp_csv_thousands",
                         help="Never detected: pick one only if the file groups digits (e.g. 1.234,5).")
            f4.selectbox("Encoding", list(ui.ENCODING_CHOICES), key="dp_csv_encoding")
        schema_editor.declared_format_controls()
        if table is None:
            schema_editor.unreadable_upload_loader()
            return
        schema_editor.adopt_declared(table)
        ui.apply_label_guess(table)
        cols = [NO_LABEL, *table.columns]
        if ss.dp_label not in cols:
            ss.dp_label = NO_LABEL
        c1, c2, c3 = st.columns(3)
        guess = ui.label_guess()
        c1.selectbox("Label column (used only for the SVM metric)", cols, key="dp_label",
                     help="Choose (none) to keep every column a feature; the label is never a feature.")
        if guess is not None and ss.dp_label == guess.column:
            c1.caption(f"Guessed: {guess.column!r} — {guess.reason}. Pick (none) if it is a feature.")
        c2.radio("Categorical columns", values(CategoricalPolicy), key="dp_categorical", horizontal=True,
                 format_func=lambda v: CategoricalPolicy(v).label)
        c3.radio("Missing values", values(MissingPolicy), key="dp_missing", horizontal=True,
                 format_func=lambda v: MissingPolicy(v).label)
        st.markdown("**Columns and public schema** — roles are inferred with a reason; change a role, type public "
                    "bounds or categories, or tick *public*.")
        try:
            schema = ui.upload_schema(table)
        except dpcore.DPCoreError as exc:
            st.error(plain_words(str(exc)))
            return
        with c1:
            schema_editor.label_rule_form(table, schema)  # "Use a binary label: COLUMN > value" (or ≠ 0)
        workspace.misfit_note()  # a loaded workspace's schema for this file that did not fit it
        schema_editor.render(table, schema)
        if ss.dp_scaling != FeatureScaling.SCHEMA:
            st.caption("The schema's bounds and category lists are used with feature scaling 'public schema "
                       "ranges'; with the current scaling only its roles are.")


if ss.dp_dataset == ui.UPLOAD_ID and ss.get("dp_upload") is not None:
    _upload_section()
# the workspace file, built now that the upload's schema and label are drafted (this run's final state)
workspace.download_button(_workspace_slot)

dataset = ui.current_dataset()
if dataset is None:
    st.stop()
for note in dataset.diagnostics.get("notes", []) if ss.dp_dataset == ui.UPLOAD_ID else []:
    (st.warning if "feature columns" in note else st.caption)(plain_words(note))

def _bound_typed() -> None:
    """A bound typed by the user is taken as public knowledge (unlike the advisor's data-derived suggestion)."""
    ss.dp_norm_from_data = False


def _confirm_bound_public() -> None:
    """The user states that the bound shown is public knowledge (not read off this data): the number shown, not
    the hidden digits of max‖x‖ (privacy review R4-5)."""
    ss.dp_norm_bound = as_shown(ss.dp_norm_bound, NORM_BOUND_FORMAT)
    ss.dp_norm_from_data = False


# preprocess first (it only reads session state), so the automatic B can be shown in its widget
prepared = ui.current_prepared()
if prepared is not None and ss.dp_norm_auto:
    # the number shown keeps its provenance: B = max‖x‖ (or √d of a vocabulary read off the data) stays marked as
    # read off the data when "Automatic B" is turned off, until the user types another value or confirms it
    ss.dp_norm_bound = float(prepared.norm_bound)
    ss.dp_norm_from_data = auto_bound_from_data(dataset, prepared)

# ------------------------------------------------------------------ preprocessing
st.subheader("Preprocessing")
_changed = ui.non_default_data_settings()
with st.container(horizontal=True, vertical_alignment="center"):
    st.caption(f"These settings belong to {ui.dataset_label(ss.dp_dataset)}: another dataset keeps its own.")
    if _changed:
        st.button("Reset to this dataset's private defaults", key="data_reset_data_settings", type="tertiary",
                  icon=":material/restart_alt:", on_click=ui.reset_data_settings)
p1, p2, p3 = st.columns(3)
with p1:
    st.radio("Feature scaling", values(FeatureScaling), key="dp_scaling",
             format_func=lambda v: FeatureScaling(v).label,
             help="Schema ranges come from public metadata; min–max reads the data and is recorded as NOT private.")
with p2:
    st.toggle("Automatic norm bound B", key="dp_norm_auto",
              help="Use the public bound implied by the schema (or the dataset's documented bound).")
    st.number_input("Norm bound B", min_value=1e-6, format=NORM_BOUND_FORMAT, key="dp_norm_bound",
                    disabled=ss.dp_norm_auto, on_change=_bound_typed,
                    help="A public bound on the row norm. A value read off this data (the clipping advisor's "
                         "suggestion, or max‖x‖ shown by 'divide all by max norm') stays recorded as NOT private "
                         "until you type another value or confirm it as public knowledge.")
    if not ss.dp_norm_auto and ss.get("dp_norm_from_data", False):
        st.caption(":red[:material/warning: This B was read off the data (NOT private).]")
        st.button("I know this bound from public knowledge", key="data_confirm_bound_public", type="tertiary",
                  icon=":material/verified_user:", on_click=_confirm_bound_public,
                  help="Only if the same bound follows from public facts (documentation, a schema, physical "
                       "limits) — not from having seen it here. The ledger then records B as public.")
    st.radio("Rows above B", values(NormMode), key="dp_norm_mode", horizontal=True,
             format_func=lambda v: NormMode(v).label)
with p3:
    st.selectbox("Centring", values(Centering), key="dp_centering",
                 format_func=lambda v: Centering(v).label)
    if ss.dp_centering == Centering.DP:
        st.number_input("ε for the DP mean", min_value=1e-3, max_value=100.0, format="%.3g", key="dp_centering_eps")

if prepared is None:
    st.stop()

# ------------------------------------------------------------------ summary
def _clamp_diagnostic(dataset) -> None:
    """The share of each column's rows clamped to its public bounds (a non-private diagnostic), with a warning
    when large. Only where schema scaling clamps (public ranges and feature scaling 'public schema ranges')."""
    if ss.dp_scaling != FeatureScaling.SCHEMA or getattr(dataset, "feature_ranges", None) is None:
        return
    report = ui.memo("clamp_report", ui.dataset_key(), lambda: clamp_report(dataset))
    if report.warning():
        st.warning(f"**Clamping** {report.warning()}", icon=":material/warning:")  # labelled by warning()
    if report.shares:
        line = report.summary()
        st.caption(f":red[:material/visibility: {line[0].upper()}{line[1:]}.]")
    else:
        st.caption(f"No value lies outside its public bounds: nothing is clamped ({NOT_PRIVATE_LABEL}).")
    if report.missing:  # empty cells are the missing-value policy's, never clamping (issue 32)
        st.caption(f":material/visibility: {report.missing_note()}")


st.subheader("Summary (non-private, for choosing settings)")
bal = label_balance(prepared.y)
k80 = k_for_fraction(prepared.eigenvalues, 0.8)
suggested = int(getattr(dataset, "suggested_k", 2) or 2)
m = st.columns(5)
m[0].metric("Rows n", f"{prepared.n:,}", help=ui.held_out_caption(prepared) or None)
m[1].metric("Features d", prepared.d)
m[2].metric("Rows clipped", f"{100 * prepared.clip_fraction:.1f} %",
            help="Rows clipped to the norm bound B: those whose norm exceeds B (non-private diagnostic). It says "
                 "nothing about the schema's per-column bounds: the share of each column clamped to them is shown "
                 "below and in the schema editor's *clamped* column.")
m[3].metric("Suggested k", suggested, help=f"k = {k80} captures 80 % of the (uncentred) variance.")
_label = (getattr(dataset, "options", None) or {}).get("label_text")  # e.g. "income > 50000"
m[4].metric("Labels", f"{len(bal)} classes" if len(bal) else "none", help=f"Label: {_label}" if _label else None)
_clamp_diagnostic(dataset)
# on an upload the suggestion is min(2, d), with d read off the data unless the schema is public: then no offer to
# copy it into the shared k (the link, the workspace file)
_k_public = ss.dp_dataset != ui.UPLOAD_ID or bool((getattr(dataset, "options", None) or {}).get("schema_public"))
if _k_public and ss.dp_k != suggested and st.button(f"Use k = {suggested} on the other pages",
                                                    key="data_use_suggested_k"):
    ss.dp_k = suggested
    st.rerun()

# presentation mode (pages.ui.charts): the scree plot full width, the ledger below it
c_scree, c_side = (st.container(), st.container()) if presentation_on() else st.columns([3, 2])
with c_scree:
    ev = explained_variance(prepared.eigenvalues).head(min(prepared.d, 40))
    fig = go.Figure()
    fig.add_bar(x=ev["component"], y=ev["fraction"], name="share of variance", marker_color="#2563eb")
    fig.add_scatter(x=ev["component"], y=ev["cumulative"], name="cumulative", mode="lines+markers", yaxis="y",
                    line={"color": "#ff7f0e"})
    fig.add_vline(x=suggested, line_dash="dash", line_color="#888888",
                  annotation_text=f"suggested k = {suggested}", annotation_position="top right")
    fig.update_layout(title="Scree plot and cumulative explained variance", height=340,
                      margin={"l": 60, "r": 10, "t": 45, "b": 50}, yaxis={"range": [0, 1.05]},
                      legend={"orientation": "h", "y": -0.25})
    fig.update_xaxes(title_text="component")
    fig.update_yaxes(title_text="fraction of total variance")
    st.plotly_chart(for_screen(fig), theme="streamlit", key="data_scree", width="stretch")
with c_side:
    st.markdown("**Privacy ledger of this preprocessing**")
    ui.show_ledger(plain_ledger(prepared.ledger))
    if prepared.is_private:
        st.success("Every preprocessing step is private: releases on this data are end-to-end private (the charts "
                   "themselves still use the true data).", icon=":material/verified_user:")
    if len(bal):
        st.markdown("**Label balance**")
        st.dataframe(bal, hide_index=True, width="stretch",
                     column_config={"share": st.column_config.ProgressColumn("share", min_value=0.0, max_value=1.0,
                                                                             format="percent")})

# ------------------------------------------------------------------ clipping advisor
ADVISOR_TIME_CAP = 30.0  # seconds for the whole utility-vs-B run


def _advisor_settings(prepared) -> dict:
    opts, cfg = ui.preprocess_options(), ui.settings()
    settings = {"mechanism": ss.dp_adv_mech, "epsilon": float(ss.dp_adv_eps), "delta": cfg.delta,
                "k": min(cfg.k, prepared.d), "trials": int(ss.dp_adv_trials), "seed": cfg.seed,
                "feature_scaling": opts["feature_scaling"], "centering": opts["centering"],
                "neighbouring": cfg.neighbouring}
    if opts["centering"] == Centering.DP:
        settings["centering_epsilon"] = float(ss.dp_centering_eps)
    return settings


def _run_advisor(dataset, settings: dict, tally=None, drawn=None):
    """Compute the utility-vs-B curve with a progress bar; None after showing an error. ``tally(ε, 1)`` is told of
    each release as it is made, a capped one too (the odometer's :func:`~pages.ui.odometer.counting_runs`), and
    ``drawn(entry)`` of each DP mean as it is drawn (DP centring); both before the next element call, where a rerun
    or stop request interrupts."""
    bar = st.progress(0.0, text="Utility vs B: starting…")
    last = [0.0]
    counting = {} if tally is None else {"on_release": lambda status: tally(settings["epsilon"], 1)}
    if drawn is not None:
        counting["on_preprocessing"] = drawn

    def progress(done: int, total: int, text: str) -> None:
        now = time.monotonic()
        if now - last[0] >= ui.PROGRESS_INTERVAL and done < total:
            last[0] = now
            bar.progress(done / max(total, 1), text=f"Utility vs B: {done} / {total} releases — {text}")

    try:
        with st.spinner("Releasing at every candidate B…"):
            return clipping_utility_curve(dataset, None, time_limit=ADVISOR_TIME_CAP, progress=progress,
                                          **counting, **settings)
    except dpcore.DPCoreError as exc:
        st.error(plain_words(str(exc)))
        return None
    finally:
        bar.empty()


def _use_best_bound(bound: float) -> None:
    ss.dp_norm_auto = False
    ss.dp_norm_bound = float(bound)
    ss.dp_norm_mode = NormMode.CLIP.value
    ss.dp_norm_from_data = True  # read off the data: the ledger records the clip step as not private


def _mark_bound(fig: go.Figure, bound: float) -> None:
    """A dashed vertical line at the current B on a log x-axis, labelled at the top.

    Plotly places annotations on a log axis at log10 of the value (shapes take the value itself), so the label
    gets ``log10(B)``; ``add_vline(annotation_text=...)`` would put it at 10^B and stretch the axis.
    """
    fig.add_vline(x=bound, line_dash="dash", line_color="#888888")
    fig.add_annotation(x=math.log10(bound), xref="x", y=1.0, yref="paper", yanchor="bottom", showarrow=False,
                       text=f"current B = {bound:.3g}", font={"size": 11, "color": "#888888"})


def _advisor_figure(curve, current_b: float, label: str) -> go.Figure:
    """Captured-variance ratio (mean ± sd band, left axis) and clip fraction (right axis) versus B, log x."""
    ok = curve[curve["n_ok"] > 0]
    b, mean = ok["norm_bound"].to_numpy(), ok["captured_variance_ratio"].to_numpy()
    sd = ok["captured_variance_ratio_std"].fillna(0.0).to_numpy()
    fig = go.Figure()
    fig.add_scatter(x=[*b, *b[::-1]], y=[*(mean + sd), *(mean - sd)[::-1]], fill="toself", mode="lines",
                    line={"width": 0}, fillcolor="rgba(37,99,235,0.18)", hoverinfo="skip", showlegend=False)
    fig.add_scatter(x=b, y=mean, mode="lines+markers", name=f"captured-variance ratio ({label}, mean ± sd)",
                    line={"color": "#2563eb", "width": 2},
                    hovertemplate="B = %{x:.4g}<br>ratio = %{y:.3f}<extra></extra>")
    fig.add_scatter(x=curve["norm_bound"], y=curve["clip_fraction"], mode="lines+markers", yaxis="y2",
                    name="fraction of rows clipped (right axis)", line={"color": "#d62728", "dash": "dot"},
                    hovertemplate="B = %{x:.4g}<br>clipped = %{y:.1%}<extra></extra>")
    best = best_norm_bound(curve)
    if best is not None:
        row = ok[ok["norm_bound"] == best].iloc[0]
        fig.add_scatter(x=[best], y=[row["captured_variance_ratio"]], mode="markers", name=f"best B = {best:.3g}",
                        marker={"symbol": "star", "size": 14, "color": "#2563eb", "line": {"width": 1}})
    _mark_bound(fig, current_b)
    fig.update_layout(height=420, margin={"l": 60, "r": 60, "t": 50, "b": 50},
                      title={"text": "Utility and clip fraction vs the norm bound B", "font": {"size": 15}},
                      legend={"orientation": "h", "y": -0.25},
                      yaxis={"title": {"text": "captured variance / optimum"}, "range": [0, 1.05]},
                      yaxis2={"title": {"text": "fraction of rows clipped"}, "range": [0, 1.05], "overlaying": "y",
                              "side": "right", "showgrid": False, "tickformat": ".0%"})
    fig.update_xaxes(title_text="norm bound B (log scale)", type="log", dtick=1,
                     minor={"dtick": "D2", "showgrid": True})  # labels per decade only, no "2 5" minor labels
    return fig


def _utility_advisor(dataset, prepared) -> None:
    """The "utility vs B" part of the clipping advisor (runs on a button press, result kept per settings)."""
    st.markdown("**Utility versus B** — release a mechanism on the data clipped to each candidate B and score it "
                "against the unclipped data's top-k subspace.")
    mechs = [m.id for m in advisor_mechanisms() if ss.dp_neighbouring in m.neighbourings]
    if not mechs:
        st.caption("No fast covariance mechanism is registered for this neighbouring relation.")
        return
    if ss.get("dp_adv_mech") not in mechs:
        ss.dp_adv_mech = "analyze_gauss" if "analyze_gauss" in mechs else mechs[0]
    if "dp_adv_eps" not in ss:
        eps = float(ss.get("dp_ss_eps") or 1.0)  # the shared fixed ε when there is one
        ss.dp_adv_eps = min(ui.EPS_GRID, key=lambda e: abs(math.log(e / eps)))
    if "dp_adv_trials" not in ss:
        ss.dp_adv_trials = 3
    c1, c2, c3 = st.columns([2, 2, 1])
    c1.selectbox("Mechanism", mechs, key="dp_adv_mech", format_func=ui.mechanism_label,
                 help="Fast covariance-perturbation mechanisms from the registry.")
    c2.select_slider("ε", options=list(ui.EPS_GRID), key="dp_adv_eps", format_func=lambda e: f"{e:g}")
    c3.number_input("Trials", min_value=1, max_value=20, step=1, key="dp_adv_trials")
    settings = _advisor_settings(prepared)
    for shared in ("dp_delta", "dp_k", "dp_seed"):
        ui.origin_note(shared)
    key = (ui.dataset_key(), tuple(sorted(settings.items())))
    clicked = st.button("Estimate utility vs B", key="data_adv_run", icon=":material/query_stats:")
    if clicked:
        label, means = "clipping advisor (NOT private)", []
        # on an upload its releases (capped ones too) and its DP means (DP centring) are counted as they are made,
        # however the run ends (an error after some releases, a rerun or stop that interrupts it)
        try:
            with odometer.counting_runs(settings["mechanism"], settings["delta"], settings["neighbouring"], label,
                                        key, private=False) as tally:
                curve = _run_advisor(dataset, settings, tally, means.append)
        finally:
            odometer.count_runs(settings["mechanism"], [], settings["delta"], settings["neighbouring"], label, key,
                                private=False, preprocessing=means)
        if curve is not None:
            ui.put("adv_result", (key, curve))
    result = ui.get("adv_result")
    if result is not None and result[0][0] != key[0]:
        result = None  # computed on another dataset: never show it next to this one
    if result is None:
        st.caption(f"Runs {settings['trials']} releases at each of {DEFAULT_NUM_CANDIDATES} candidate bounds (at most "
                   f"{ADVISOR_TIME_CAP:g} s).")
        return
    shown_key, curve = result
    if shown_key != key:
        st.warning("The settings changed since this estimate: press the button again to update it.")
    mech = dpcore.get_mechanism(curve.attrs.get("mechanism", settings["mechanism"]))
    nb = NEIGHBOURING_LABELS.get(curve.attrs.get("neighbouring", ""), "")
    st.markdown(f"{ui.guarantee_badge(mech)} {mech.name} · ε = {curve.attrs.get('epsilon', 0):g}"
                + (f", δ = {format_delta(curve.attrs['delta'])}" if curve.attrs.get("delta") else "")
                + f" · k = {curve.attrs.get('k')} · {curve.attrs.get('trials')} trials · {nb}")
    if not curve.attrs.get("complete", True):
        st.warning(f"Stopped at the {ADVISOR_TIME_CAP:g} s time cap: "
                   f"{int((curve['n_ok'] > 0).sum())} of {len(curve)} candidates have results.")
    st.plotly_chart(_advisor_figure(curve, float(prepared.norm_bound), mech.name), theme="streamlit",
                    key="data_clip_utility", width="stretch")
    st.caption("Small B clips many rows and biases the second moment (the left end falls); large B clips nothing, "
               "but the noise is calibrated to rows of norm ≤ B and grows like B² in the data's units (the right "
               "end falls). Scores use the TRUE unclipped data, so this view is NOT private: choosing B from it is "
               "a data-dependent choice unless it is done on public or similar data.")
    best = best_norm_bound(curve)
    if best is not None and not math.isclose(best, float(prepared.norm_bound), rel_tol=1e-6):
        st.button(f"Use B = {best:.4g} (a non-private choice)", key="data_adv_use_best", on_click=_use_best_bound,
                  args=(best,))


with st.expander("Clipping advisor: clip fraction and utility versus the norm bound B", icon=":material/content_cut:"):
    scaling = {k: v for k, v in ui.preprocess_options().items() if k in ("feature_scaling", "centering")}
    clip_key = (ui.dataset_key(), tuple(sorted(scaling.items())))
    norms = None
    with ui.handle_errors():
        norms = ui.memo("clip_curve", clip_key, lambda: dpcore.data.clip_fraction_curve(
            dataset, default_candidates(dataset, 25, **scaling), **scaling))
    if norms is not None:
        xs, ys = norms["norm_bound"], norms["clip_fraction"]
        fig = go.Figure(go.Scatter(x=xs, y=ys, mode="lines+markers", line={"color": "#d62728"}))
        _mark_bound(fig, float(prepared.norm_bound))
        fig.update_layout(height=300, margin={"l": 60, "r": 10, "t": 30, "b": 50}, title="Clip fraction vs B")
        fig.update_xaxes(title_text="norm bound B", type="log")
        fig.update_yaxes(title_text="fraction of rows clipped", range=[0, 1.02])
        st.plotly_chart(fig, theme="streamlit", key="data_clip", width="stretch")
        st.caption("A smaller B means less noise for the same ε, but clips more rows (bias). Choosing B by "
                   "looking at this curve is itself a data-dependent, non-private choice.")
    else:
        st.caption("The clipping advisor is unavailable for this dataset.")
    _utility_advisor(dataset, prepared)
