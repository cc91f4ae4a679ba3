"""Inspect a mechanism: one release of one mechanism, looked at from every side.

Thin page: widgets and Plotly figures only. The maths (spectra, noise matrix, aligned projections, ledger and
burn-in extraction) lives in :mod:`dpcore.explain.inspect`; metrics come from :mod:`dpcore.evaluation.metrics`.
"""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go
import streamlit as st
from plotly.colors import qualitative
from plotly.subplots import make_subplots

import dpcore
from dpcore.core.privacy import GUARANTEE_LABELS, NEIGHBOURING_LABELS
from dpcore.core.seeding import release_seed
from dpcore.evaluation.metrics import evaluate
from dpcore.exceptions import DPCoreError, MechanismTimeout
from dpcore.explain import inspect as insp
from dpcore.explain.display import diagnostic_label, format_delta, option_label, plain_ledger
from dpcore.explain.statements import mechanism_delta_statement
from dpcore.vocabulary import Guarantee, ReleaseStatus
from pages import ui
from pages.ui import odometer
from pages.ui.charts import TraceStyle, chart_slots, for_screen, legend_layout, presentation_toggle, trace_style
from pages.ui.pictures import pictures_expander

ui.init_state()
ss = st.session_state
#: Label colours: plotly's Tableau 10 with its green moved before its red (two or three labels show no red, the
#: colour of NOT PRIVATE), then two of Dark2 (12 labels in all).
_LABEL_PALETTE = (*(qualitative.T10[i] for i in (0, 1, 4, 2, 3, 5, 6, 7, 8, 9)), *qualitative.Dark2[0:3:2])


def _mechanism_picker():
    """Selectbox of registry mechanisms grouped by guarantee; invalid ones only behind the toggle."""
    st.toggle("Show claimed-but-invalid mechanisms", key="dp_insp_invalid",
              help="Published mechanisms whose privacy proof is wrong. They run only as labelled exhibits.")
    groups = insp.group_by_guarantee(dpcore.list_mechanisms(), include_invalid=ss.dp_insp_invalid)
    mechs = [m for ms in groups.values() for m in ms]
    ids = [m.id for m in mechs]
    if ss.get("dp_insp_mech") not in ids:
        preferred = [m for m in ui.DEFAULT_MECHANISMS if m in ids]
        ss.dp_insp_mech = preferred[0] if preferred else ids[0]
    by_id = {m.id: m for m in mechs}

    def label(mid: str) -> str:
        m = by_id[mid]
        return f"{m.name}  ·  {GUARANTEE_LABELS[m.guarantee]}"

    st.selectbox("Mechanism (grouped by guarantee, strongest first)", ids, key="dp_insp_mech", format_func=label)
    return by_id[ss.dp_insp_mech]


def _float_step(p) -> float:
    scale = abs(float(p.default)) if p.default else (float(p.high) - float(p.low) if p.high and p.low else 1.0)
    return 10.0 ** math.floor(math.log10(scale)) / 10.0 if scale > 0 else 0.1


def _option_widgets(mech) -> dict:
    """Render ``mech.params`` generically and return the chosen options."""
    options: dict = {}
    if not mech.params:
        return options
    with st.expander(f"Mechanism options ({len(mech.params)})", expanded=False):
        for p in mech.params:
            key = ui.option_key(mech.id, p.name)
            if key not in ss:
                ss[key] = p.default
            label, help_text = option_label(p.name), f"{p.description}  \n(Option `{p.name}` in the library.)"
            if p.kind == "choice":
                options[p.name] = st.selectbox(label, list(p.choices), key=key, help=help_text)
            elif p.kind == "bool":
                options[p.name] = st.checkbox(label, key=key, help=help_text)
            elif p.kind == "int":
                lo = None if p.low is None else math.ceil(p.low)
                hi = None if p.high is None else math.floor(p.high)
                if not isinstance(ss[key], int):
                    ss[key] = int(ss[key])
                options[p.name] = int(st.number_input(label, min_value=lo, max_value=hi, step=1, key=key,
                                                      help=help_text))
            else:
                if not isinstance(ss[key], float):
                    ss[key] = float(ss[key])
                options[p.name] = float(st.number_input(
                    label, min_value=None if p.low is None else float(p.low),
                    max_value=None if p.high is None else float(p.high), step=_float_step(p), format="%g",
                    key=key, help=help_text))
    return options


#: Inspect's own k widget: the shared k clamped to this data's dimension (privacy review: a clamp to a d read off an
#: upload never reaches the shared setting ``dp_k``, hence never the link or the workspace file).
_K_KEY = ui.widget_key("insp", "k")


def _choose_k() -> None:
    """``on_change`` of Inspect's k: the user's choice becomes the shared k."""
    ss.dp_k = int(ss[_K_KEY])


def _settings(mech, data) -> dict:
    """ε, δ, k, seed, neighbouring relation and time cap (only what changes the release)."""
    kmax = data.d - 1 if mech.strict_k else data.d
    kmax = max(kmax, 1)
    # d may be read off the data (an upload under a draft schema): the clamp stays on this page, never in dp_k
    ss[_K_KEY] = int(min(max(int(ss.dp_k), 1), kmax))
    if ss.get("dp_insp_nb") not in mech.neighbourings:
        ss.dp_insp_nb = ss.dp_neighbouring if ss.dp_neighbouring in mech.neighbourings else mech.neighbourings[0]
    if ss.dp_delta not in ui.DELTA_CHOICES:
        ss.dp_delta = ui._nearest(float(ss.dp_delta), ui.DELTA_CHOICES)
    if ss.dp_insp_eps not in ui.EPS_GRID:
        ss.dp_insp_eps = ui._nearest(float(ss.dp_insp_eps), ui.EPS_GRID)

    c1, c2, c3, c4, c5 = st.columns([3, 1.4, 1, 1, 1.2])
    eps = c1.select_slider("Privacy budget ε  (← better privacy · better accuracy →)", options=list(ui.EPS_GRID),
                           key="dp_insp_eps", format_func=lambda e: f"{e:g}")
    if mech.uses_delta:
        delta = c2.selectbox("δ", list(ui.DELTA_CHOICES), key="dp_delta", format_func=format_delta)
    else:
        c2.markdown("δ  \n*not used (pure ε)*")
        delta = 0.0
    k = c3.number_input("k", min_value=1, max_value=kmax, step=1, key=_K_KEY, on_change=_choose_k,
                        help=f"Subspace dimension (at most {kmax}{' = d − 1' if mech.strict_k else ' = d'}).")
    seed = c4.number_input("Seed", min_value=0, max_value=2**31 - 1, step=1, key="dp_seed")
    cap = c5.number_input("Time cap (s)", min_value=0.5, max_value=600.0, step=5.0, key="dp_time_cap",
                          help="A release that runs longer stops with a 'timed out' outcome.")
    for shared in ("dp_delta", "dp_k", "dp_seed") if mech.uses_delta else ("dp_k", "dp_seed"):
        ui.origin_note(shared)
    if mech.uses_delta:
        ui.delta_note(delta, data.n)
    nb = st.radio("Neighbouring relation", list(mech.neighbourings), key="dp_insp_nb", horizontal=True,
                  format_func=lambda r: NEIGHBOURING_LABELS.get(r, r))
    options = _option_widgets(mech)
    return {"epsilon": float(eps), "delta": float(delta), "k": int(k), "seed": int(seed), "time_cap": float(cap),
            "neighbouring": nb, "options": options}


def _release_seed(mech, data, cfg: dict) -> int:
    """The release's own seed: the session seed's RELEASE child keyed by everything public that shapes the release
    (privacy review R4-10). The session seed itself for every release gave two releases at ε = 1 and 2 the same
    draws, and (σ₁Ĉ₂ − σ₂Ĉ₁)/(σ₁ − σ₂) = C exactly; so did two norm bounds B (rows divided by B, σ unchanged) or two
    schema bounds. The same settings reproduce the same release. Settings only — never the data or a hash of it."""
    preprocessing = {k: v for k, v in ui.preprocess_options().items() if k != "random_state"}
    parsed = ui.memo_key("upload_parsed") if ss.dp_dataset == ui.UPLOAD_ID else None
    schema = None if parsed is None else parsed[1:]  # (schema scaling?, schema, text and missing policies): no hash
    return release_seed(cfg["seed"], mech.id, cfg["epsilon"], cfg["delta"], cfg["k"], cfg["neighbouring"],
                        sorted(cfg["options"].items()), data.n, data.d, float(data.norm_bound), data.feature_names,
                        ss.dp_dataset, sorted(preprocessing.items()), [(key, ss.get(key)) for key in ui.DATA_SETTINGS],
                        schema)


def _release(mech, data, cfg: dict) -> dict:
    """Run the release (or reuse the stored one when nothing that affects it changed)."""
    seed = _release_seed(mech, data, cfg)
    key = (data.fingerprint, mech.id, cfg["epsilon"], cfg["delta"], cfg["k"], seed, cfg["neighbouring"],
           cfg["time_cap"], tuple(sorted(cfg["options"].items())))
    stored = ui.get("insp_release")
    if stored is not None and stored["key"] == key:
        return stored
    # key[5] is the release's seed: the private pictures derive their own streams from it
    outcome: dict = {"key": key, "release": None, "error": None, "timeout": False}  # vocabulary: not a choice
    try:
        with st.spinner(f"Running {mech.name} (time cap {cfg['time_cap']:g} s)…"):
            try:
                outcome["release"] = mech.release(
                    data, cfg["k"], cfg["epsilon"], cfg["delta"], neighbouring=cfg["neighbouring"],
                    random_state=seed, time_limit=cfg["time_cap"], allow_invalid=mech.invalid,
                    **cfg["options"])
            except MechanismTimeout as exc:
                outcome["error"], outcome["timeout"] = str(exc), True
            except DPCoreError as exc:
                outcome["error"] = str(exc)
    finally:  # also when the spinner's end is where a rerun or stop request interrupts this run: it was released
        odometer.count_release(outcome["release"], data, mech.id, key)  # on an upload: counted once, when computed
        if outcome["timeout"]:  # the page says it was capped, and when it stopped depends on the data: a release
            odometer.count_capped(mech, data, cfg, key)
    ui.put("insp_release", outcome)
    return outcome


# ------------------------------------------------------------------------------------------------
# Singhal–Steinke: a setting where it works, a public check of its settings, and ⊥ in words
#: The showcase (measured, ε = 1, δ = 1e-6, k = 3, seeds 0–2): ss_approx's largest principal angle 0.15–0.71°
#: (sin θ 0.003–0.012), ss_boost ≈ 0.5°, Analyze Gauss 1.5–1.7° on the same data; no ⊥. Re-measured with the
#: per-release seeds (R4-10), as the page shows them: ss_approx 0.3°, ss_boost 0.5–0.6°, Analyze Gauss 1.6–1.7°.
SS_SHOWCASE = {"dataset": "subspace_near_exact", "mechanism": "ss_approx", "k": 3, "epsilon": 1.0, "delta": 1e-6,
               "gamma_pub": 1e-6}
_SS_GRID = ("ss_approx", "ss_boost")  # the mechanisms with a histogram grid (and gamma_pub)


def _load_ss_showcase(mech_id: str) -> None:
    """Callback: the near-exact planted subspace with public settings that match it."""
    p = SS_SHOWCASE
    ui.select_dataset(p["dataset"])  # the showcase data with its own (private) data settings
    ss.dp_norm_auto = True
    ss.dp_insp_mech = mech_id if mech_id in _SS_GRID else p["mechanism"]
    ss.dp_k, ss.dp_insp_eps, ss.dp_delta = p["k"], p["epsilon"], p["delta"]
    for mid in _SS_GRID:
        ss[ui.option_key(mid, "gamma_pub")] = p["gamma_pub"]
        ss[ui.option_key(mid, "ell")] = 0.0


def _ss_showcase_offer(mech) -> None:
    if not mech.id.startswith("ss_"):
        return
    p = SS_SHOWCASE
    on_it = ss.dp_dataset == p["dataset"] and mech.id in _SS_GRID and \
        ss.get(ui.option_key(mech.id, "gamma_pub")) == p["gamma_pub"]
    if on_it:
        st.caption(":green[:material/check_circle:] Singhal–Steinke showcase: points within γ = 10⁻⁶ of a planted "
                   "3-dim subspace of R⁵⁰ and public gap guess γ_pub = γ (the generator's public gap).")
        return
    with st.container(border=True):
        st.markdown(
            "**Singhal–Steinke works where the data lie almost exactly on a k-dimensional subspace** (the regime of "
            "the paper): there it releases that subspace with error far below the Gaussian mechanism's, and with a "
            "larger gap between λ_k and λ_{k+1} it returns ⊥ or a coarse answer. The showcase: n = 20,000 points "
            "within γ = 10⁻⁶ of a 3-dim subspace of R⁵⁰, ε = 1, δ = 10⁻⁶, k = 3, and the public gap guess "
            "γ_pub = 10⁻⁶ — the approximate mechanism's largest principal angle is then below 1° (Analyze "
            "Gauss: ≈ 1.6°)."
            + ("  \nThe exact variant scores every span of k points, so it only runs on a few hundred rows; the "
               "showcase uses the approximate one." if mech.id == "ss_exact" else ""))
        st.button("Load the Singhal–Steinke showcase", key="insp_ss_showcase", icon=":material/auto_fix_high:",
                  on_click=_load_ss_showcase, args=(mech.id,))


@st.cache_data(show_spinner=False, max_entries=16)
def _ss_dimension_rows(n: int, d: int, gamma: float, trials: int) -> list[dict]:
    """sin θ of ss_approx, ss_exact (subsample) and Analyze Gauss on public synthetic data (cached per setting)."""
    from dpcore.evaluation.ss_dimension import METHODS, dimension_point

    # ss_exact only on exact data: near a subspace its tolerance search is slow and not private anyway
    methods = METHODS if gamma == 0 else tuple(m for m in METHODS if m[1] != "ss_exact")
    return [rec for trial in range(trials)
            for rec in dimension_point(n, d, 3, gamma, trial, methods=methods, time_limit=60.0)]


def _ss_dimension_section(mech) -> None:
    """The showcase with d and n of the lecturer's choice: SS stays flat in d while Analyze Gauss degrades."""
    if not mech.id.startswith("ss_"):
        return
    from dpcore.evaluation.ss_dimension import scaled_gamma

    with st.expander("Singhal–Steinke vs the dimension — change d and n of the showcase", icon=":material/tune:"):
        st.markdown(
            "Points in (or very near) a 3-dimensional subspace of R^d, ε = 1, δ = 10⁻⁶, k = 3, default options. "
            "Singhal–Steinke's error does not grow with d, the Gaussian mechanism's does. The paper needs a "
            "**multiplicative eigengap**: λ₄/λ₃ = γ² must be tiny — with our constants γ ≲ d^−1.5 at fixed n "
            "(the automatic grid states the γ it tolerates in the ledger); with a larger γ it returns ⊥.")
        c1, c2, c3, c4 = st.columns(4)
        d = c1.select_slider("dimension d", options=[50, 100, 200, 500, 1000, 2000], value=200, key="insp_ssd_d")
        n = c2.select_slider("rows n", options=[2000, 5000, 10000, 20000], value=5000, key="insp_ssd_n")
        exact = c3.radio("data", ["exact subspace (γ = 0)", "γ = 4·10⁻⁶·(50/d)^1.5"], key="insp_ssd_gamma") \
            .startswith("exact")
        trials = c4.number_input("trials", 1, 3, 1, key="insp_ssd_trials")
        if n * d > 20_000_000:
            st.caption("n·d is capped at 2·10⁷ here (a few seconds per release on a shared machine).")
            return
        if st.button("Run the comparison", key="insp_ssd_run", icon=":material/play_arrow:"):
            with st.spinner(f"Releasing on n = {n:,}, d = {d:,} …"):
                ui.put("insp_ss_dimension", (n, d, _ss_dimension_rows(n, d, 0.0 if exact else scaled_gamma(d),
                                                                         int(trials))))
        stored = ui.get("insp_ss_dimension")
        if stored is None:
            return
        n_run, d_run, rows = stored
        import pandas as pd

        frame = pd.DataFrame(rows)
        table = frame.groupby("method", sort=False).agg(
            ok=("status", lambda x: f"{int((x == ReleaseStatus.OK).sum())}/{len(x)}"), sin_theta=("sin_theta", "mean"),
            angle_deg=("angle_deg", "mean"), private=("private", "all"), seconds=("seconds", "mean")).reset_index()
        table["private"] = table["private"].map({True: "yes", False: "NO (tolerance 1e-4)"})
        st.markdown(f"**n = {n_run:,}, d = {d_run:,}** — largest principal angle to the planted subspace "
                    "(mean over trials; an evaluation on the true data, not private).")
        st.dataframe(table.rename(columns={"sin_theta": "sin θ_max", "angle_deg": "angle (°)", "seconds": "s"}),
                     hide_index=True, width="stretch")
        bottoms = frame[frame.status != ReleaseStatus.OK]
        if not bottoms.empty:
            st.caption("Not ok: " + "; ".join(f"{r.method}: {r.reason[:160]}" for r in bottoms.itertuples()))


def _grid_check(mech, data, cfg: dict) -> None:
    """Public-settings check of the histogram grid (t, q, ℓ from n, d, k, ε, δ and the options only)."""
    if mech.id not in _SS_GRID:
        return
    from dpcore.mechanisms._subspace_learning import coarse_grid_warning, hopeless_grid_reason
    from dpcore.mechanisms.ss_approx import resolve_approx_options

    opts = cfg["options"]
    rows = data.n // int(opts.get("r", 1)) if mech.id == "ss_boost" else data.n
    try:
        _, _, ell = resolve_approx_options(rows, data.d, cfg["k"], cfg["epsilon"], cfg["delta"], int(opts.get("t", 0)),
                                           int(opts.get("q", 0)), float(opts.get("ell", 0.0)),
                                           float(opts.get("gamma_pub", 0.0)))
    except DPCoreError:
        return  # the release itself reports the problem
    note = hopeless_grid_reason(ell, data.d, cfg["k"]) or coarse_grid_warning(ell, data.d, cfg["k"])
    if note:
        st.warning(f"**Check of the public settings:** {note[0].upper()}{note[1:]}.", icon=":material/grid_on:")


_WHAT_TO_CHANGE = {
    "ss_exact": "Check that k is the dimension the data live in, or centre the data; more rows in the subspace or a "
                "larger ε make the gap clear A_T. The exact variant needs the points *exactly* in a k-dim subspace — "
                "for noisy or rounded data use the approximate one (a tolerance > 0 only makes an exhibit that is "
                "NOT private: the released plane is then fitted to rows merely near it).",
    "ss_approx": "If the data really lie near a k-dim subspace, give a public gap bound γ_pub (option gamma_pub) "
                 "near their gap γ — the automatic grid (gamma_pub = 0) tolerates the gap stated in the ledger — "
                 "(a coarser grid, so the blocks agree more easily, at the cost of precision) or give each block more "
                 "rows (fewer blocks t, more data). If the check of the public settings above already calls the grid "
                 "coarse, no setting helps: the data are too far from a k-dimensional subspace for this mechanism, "
                 "which needs a tiny gap γ = √(λ_{k+1}/λ_k) — a noise-adding mechanism such as Analyze Gauss suits "
                 "them better.",
    "ss_boost": "Raise the accuracy α (runs agree within 2α), or follow the advice for the approximate mechanism: "
                "each run "
                "is one Algorithm-2 release on n/r rows.",
}


def _explain_bottom(mech, release) -> None:
    """⊥ in words: what to change (public), and which internal test failed (non-private diagnostic)."""
    if mech.id in _WHAT_TO_CHANGE:
        st.markdown(f"**What to change.** {_WHAT_TO_CHANGE[mech.id]}")
    diag = release.diagnostics or {}
    detail = diag.get("bottom_detail")
    words = _which_test(mech.id, diag)
    if not detail and not words:
        return
    with st.container(border=True):
        st.markdown(":orange-badge[:material/visibility: non-private diagnostic] **Which test failed** — exact "
                    "values computed from the true data: NOT part of the private release (the ⊥ reason above is).")
        if words:
            st.markdown(words)
        if detail:
            st.caption(f"Detail: {detail}")


def _which_test(mech_id: str, diag) -> str:
    if mech_id == "ss_approx" and "tau_h" in diag:
        t, tau = diag.get("t"), diag.get("tau_h")
        largest, cells = diag.get("nonprivate_largest_cell_count"), diag.get("nonprivate_nonempty_cells")
        if "noisy_top_count" not in diag:
            return (f"The stability histogram released no cell: the t = {t} blocks' projected reference points fell "
                    f"into {cells} grid cells and the fullest held {largest} of them, below the threshold "
                    f"τ_h = {tau:.1f} (plus noise). The block subspaces disagree at the grid's scale "
                    f"ℓ = {diag.get('ell', float('nan')):.3g}.")
        return (f"A cell passed τ_h = {tau:.1f}, but its noisy count fell below t/2 = {t / 2:g}: fewer than half of "
                f"the t = {t} blocks agree (the fullest cell held {largest}).")
    if mech_id == "ss_exact" and "nonprivate_top_score" in diag:
        if str(diag.get("bottom_detail", "")).startswith("no span"):
            return (f"No span of k data points scores above ⊥ (q(⊥) = ℓ + 1 = {diag.get('bottom_score')}): no "
                    "k-dimensional subspace holds enough of the points.")
        return (f"GAP-MAX's test: the best subspace scored {diag['nonprivate_top_score']}, the runner-up "
                f"{diag.get('nonprivate_second_score')} — a gap g = {diag.get('nonprivate_gap')}, which must beat "
                f"A_T = {diag.get('A_T', float('nan')):.1f} after the noise (certain once g > 2A_T).")
    if mech_id == "ss_boost" and "support" in diag:
        r, ok = diag.get("r"), diag.get("runs_not_bottom")
        best = max(diag.get("support") or [0])
        return (f"{r - ok} of the r = {r} runs returned ⊥, and the best run agreed (within 2α = "
                f"{2 * diag.get('alpha', 0):g}) with {max(best, 0)} runs — boosting needs ≥ 0.6·r = {0.6 * r:g}.")
    return ""


# ------------------------------------------------------------------------------------------------
# figures
def _spectrum_figure(spec: insp.SpectrumComparison, style: TraceStyle) -> go.Figure:
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=np.arange(1, spec.true.size + 1), y=spec.true_drawable,
                             mode="lines+markers", name="true C (non-private)",
                             line={"color": "#7f7f7f", "dash": "dash"}, marker={"size": 6}))
    if spec.private is not None:
        fig.add_trace(go.Scatter(x=np.arange(1, spec.private.size + 1), y=spec.private_drawable,
                                 mode="lines+markers",
                                 name=f"{style.legend} ({'release' if style.not_private else 'private'})",
                                 line={"color": style.color, "dash": style.dash},
                                 marker={"size": 7, "symbol": "x" if style.not_private else "diamond"},
                                 hovertemplate=f"{style.hover}<br>i = %{{x}}<br>λ = %{{y:.4g}}<extra></extra>"))
    fig.update_layout(title={"text": "Eigenvalue spectrum: true vs private", "font": {"size": 15}}, height=380,
                      margin={"l": 60, "r": 10, "t": 45, "b": 40}, legend=legend_layout())
    fig.update_xaxes(title_text="index i", dtick=1 if spec.true.size <= 20 else None)
    fig.update_yaxes(title_text="λᵢ (unit-norm scale, log)", type="log", exponentformat="power", dtick=1)
    return fig


def _heatmap_figure(view: insp.NoiseView) -> go.Figure:
    M = view.matrix
    bound = float(np.abs(M).max()) or 1.0
    fig = go.Figure(go.Heatmap(z=M, zmid=0.0, zmin=-bound, zmax=bound, colorscale="RdBu_r",
                               colorbar={"thickness": 12},
                               hovertemplate="row %{y}, col %{x}: %{z:.4g}<extra></extra>"))
    fig.update_layout(title={"text": view.title, "font": {"size": 15}}, height=360,
                      margin={"l": 50, "r": 10, "t": 45, "b": 40})
    fig.update_yaxes(autorange="reversed", scaleanchor="x", constrain="domain")
    fig.update_xaxes(constrain="domain")
    return fig


def _padded_range(values: np.ndarray) -> list[float]:
    lo, hi = float(values.min()), float(values.max())
    pad = 0.06 * (hi - lo) or 0.1
    return [lo - pad, hi + pad]


def _projection_figure(pair: insp.ProjectionPair, labels, style: TraceStyle, by_label: bool) -> go.Figure:
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.08,
                        subplot_titles=("Non-private: true PC1, PC2",
                                        f"{'Release' if style.not_private else 'Private'}: {style.legend}"))
    if style.not_private:
        fig.layout.annotations[1].font.color = style.color
    color = style.color
    groups: list[tuple[str, np.ndarray, str]] = []
    if by_label and labels is not None:
        values = np.asarray(labels)[pair.rows]
        uniq = np.unique(values)
        if uniq.size <= len(_LABEL_PALETTE):
            groups = [(str(u), values == u, _LABEL_PALETTE[i]) for i, u in enumerate(uniq)]
    if not groups:
        groups = [("rows", np.ones(pair.rows.size, dtype=bool), color)]
    for col, P in ((1, pair.true), (2, pair.private)):
        for label, mask, c in groups:
            fig.add_trace(go.Scatter(x=P[mask, 0], y=P[mask, 1], mode="markers",
                                     name=f"label {label}" if len(groups) > 1 else "rows", legendgroup=label,
                                     showlegend=col == 1 and len(groups) > 1,
                                     marker={"size": 5, "color": c, "opacity": 0.65}), row=1, col=col)
    both = np.concatenate([pair.true, pair.private])
    fig.update_xaxes(range=_padded_range(both[:, 0]), title_text="direction 1")
    fig.update_yaxes(range=_padded_range(both[:, 1]), title_text="direction 2")
    fig.update_layout(height=420, margin={"l": 55, "r": 10, "t": 50, "b": 45},
                      legend={"orientation": "h", "y": -0.18, "x": 0})
    return fig


def _short(text: str, width: int = 38) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _ledger_figure(frame, color: str) -> go.Figure:
    colors = [color if p else "#d62728" for p in frame["private"]]
    fig = go.Figure(go.Bar(x=frame["epsilon"], y=[_short(t) for t in frame["step"]], orientation="h",
                           marker_color=colors, customdata=frame["step"],
                           text=[f"ε = {e:g}" + ("" if p else " (NOT private)")
                                 for e, p in zip(frame["epsilon"], frame["private"])],
                           textposition="auto", hovertemplate="%{customdata}: ε = %{x:g}<extra></extra>"))
    fig.update_layout(title={"text": "Where ε went", "font": {"size": 15}},
                      height=max(200, 100 + 50 * len(frame)), margin={"l": 10, "r": 10, "t": 45, "b": 40})
    fig.update_xaxes(title_text="ε spent")
    fig.update_yaxes(automargin=True, autorange="reversed")
    return fig


def _trace_figure(tr: insp.BurnInTraces, *, verdict: bool) -> go.Figure:
    """F_k(T) per chain. With a convergence verdict (split-R̂/ESS, not F) the chart draws what a settled chain's F
    does — it falls like 1/√T — instead of the paper's F = 0.01 target, which a chain of T = 1,000 scans never
    reaches even at stationarity (the chart then contradicted the "Converged" above it). Without a verdict the
    target is the check, named in the legend."""
    fig = go.Figure()
    for chain, grp in tr.frame.groupby("chain", sort=False):
        fig.add_trace(go.Scatter(x=grp["scan"], y=grp["F"], mode="lines", name=f"chain {chain}: F_k(T)"))
    scans = np.unique(tr.frame["scan"].to_numpy(dtype=float))
    if verdict and scans.size:
        fig.add_trace(go.Scatter(x=scans, y=1.0 / np.sqrt(scans), mode="lines", name="1/√T: a settled chain",
                                 line={"dash": "dot", "color": "#888888", "width": 2}, hoverinfo="skip"))
    elif scans.size:
        fig.add_trace(go.Scatter(x=[scans[0], scans[-1]], y=[tr.threshold, tr.threshold], mode="lines",
                                 name=f"F = {tr.threshold:g}: the paper's burn-in target",
                                 line={"dash": "dash", "color": "#d62728"}, hoverinfo="skip"))
    fig.update_layout(title={"text": "PPCA burn-in: how far the column signs have averaged out",
                             "font": {"size": 15}}, height=360,
                      margin={"l": 60, "r": 10, "t": 45, "b": 45}, legend={"orientation": "h", "y": -0.25})
    fig.update_xaxes(title_text="scans T", type="log")
    fig.update_yaxes(title_text="F_k(T) (log scale)", type="log", exponentformat="power", dtick=1)
    return fig


#: PPCA's diagnostics in the table, by name (the code names rhat, ess bulk, … were shown); the verdict's own
#: sentences are in the box above the table, not cut off in a cell.
PPCA_LABELS = {"rhat": "split-R̂ (largest; ≤ 1.05 needed)", "ess_bulk": "bulk effective sample size (smallest)",
               "rhat_max": "split-R̂ limit", "ess_min": "bulk-ESS minimum", "judged_draws": "scans judged",
               "convergence": "verdict", "sampler": "sampler", "seconds": "seconds",
               "threshold": "F target (the paper's; not the verdict)",
               "converged": "converged (non-private heuristic)"}
TABLE_SKIP = ("convergence_message", "convergence_detail")


# ------------------------------------------------------------------------------------------------
# page body
def _guarantee_block(mech, release) -> None:
    guarantee = release.guarantee if release is not None else mech.guarantee
    nb = release.neighbouring if release is not None else ss.dp_insp_nb
    st.markdown(f"**{mech.name}** — {ui.guarantee_badge(guarantee)} · neighbouring: "
                f"*{NEIGHBOURING_LABELS.get(nb, nb)}*  \n{mech.summary}")
    if mech.invalid:
        eps = release.epsilon if release is not None else float(ss.dp_insp_eps)
        opts = release.options if release is not None else None
        statement = mechanism_delta_statement(mech, eps, opts) or "No small δ rescues its privacy claim."
        st.error(f"**Not differentially private.** {statement} Shown only as a labelled exhibit; see the Learn page.",
                 icon=":material/block:")
    elif guarantee == Guarantee.HEURISTIC_MCMC:
        st.warning("This release uses an MCMC sampler: the ε-DP guarantee holds only if the chain has converged, "
                   "which no diagnostic can prove.", icon=":material/warning:")


def _metrics_row(release, data) -> dict:
    """The headline numbers of the release (returned: the captions below quote them)."""
    values = evaluate(release, data)
    spent_eps, spent_delta = release.total_budget  # the whole pipeline: DP centring included
    cols = st.columns(5)
    cols[0].metric("Captured variance", f"{values['captured_variance_ratio']:.3f}",
                   help="tr(V̂ᵀCV̂) relative to the non-private optimum λ₁ + … + λ_k (1 = as good as PCA).")
    cols[1].metric("Largest angle", f"{values['principal_angle_max_deg']:.1f}°",
                   help=f"Largest principal angle between the private and the true top-k subspaces (all k = "
                        f"{release.k} directions; the projection below compares only two of them).")
    fro = values["frobenius_error"]
    cols[2].metric("Covariance error", "—" if not math.isfinite(fro) else f"{fro:.3g}",
                   help="‖C − Ĉ‖_F / ‖C‖_F of the post-processed covariance (covariance mechanisms only).")
    cols[3].metric("ε spent", f"{spent_eps:g}", help="Everything this result cost: the mechanism's budget plus any "
                   "preprocessing step that spends budget (the DP mean for centring).")
    cols[4].metric("δ spent", format_delta(spent_delta), help="As for ε: mechanism and preprocessing together.")
    return values


def _charts(mech, release, data, values: dict, seed: int) -> None:
    view = insp.noise_view(release, data)
    # a subspace-only release has no noise matrix: the spectrum gets the whole row instead of half of it
    left, right = chart_slots(2) if view is not None else (st.container(), None)  # one per row when presenting
    with left:
        spec = insp.spectrum_comparison(data.eigenvalues, release)
        st.plotly_chart(for_screen(_spectrum_figure(spec, trace_style(mech.id, release.guarantee))),
                        theme="streamlit", key="insp_spectrum")
        if spec.private is None:
            st.caption("This mechanism releases only a subspace, so there is no private spectrum to compare.")
        else:
            note = f" {spec.n_nonpositive} eigenvalue(s) are zero or negative and not drawn on the log scale." \
                if spec.n_nonpositive else ""
            st.caption(f"Private series: {spec.source}.{note}")
    if right is not None:
        with right:
            st.plotly_chart(for_screen(_heatmap_figure(view)), theme="streamlit", key="insp_noise")
            trunc = f" Showing the leading {view.matrix.shape[0]} of {view.truncated_from} coordinates." \
                if view.truncated_from else ""
            st.caption(f"Frobenius norm of the whole matrix: {view.frobenius:.4g}.{trunc}")

    st.subheader("Data projected on the top-2 subspace")
    if release.k < 2:
        st.info("The side-by-side projection needs k ≥ 2 private directions; raise k to see it.")
    else:
        c1, c2 = st.columns([1, 3])
        points = c1.select_slider("Points shown", options=[500, 1000, 2000, 5000], key="dp_insp_points")
        by_label = c2.checkbox("Colour by label", key="dp_insp_color", disabled=not data.has_labels,
                               help=None if data.has_labels else "This dataset has no labels.")
        ordered = insp.is_ordered_release(mech, release)
        pair = insp.projection_pair(data, release.subspace, ordered=ordered, max_points=int(points), seed=seed)
        st.plotly_chart(_projection_figure(pair, data.y if data.has_labels else None,
                                           trace_style(mech.id, release.guarantee), by_label),
                        theme="streamlit", key="insp_projection")
        how = ("its first two directions" if ordered else
               "the part of its k-dimensional subspace closest to the true top-k (its columns are unordered)")
        whole = values["principal_angle_max_deg"]
        card = "" if release.k == 2 else (f" (the *Largest angle* card above, {whole:.1f}°, compares the whole "
                                          f"k = {release.k}-dimensional subspaces)")
        st.caption(f"The private plane is {how}, rotated/reflected (orthogonal Procrustes) to match PC1/PC2 so "
                   f"the pictures are comparable. Largest angle between these two planes: "
                   f"{pair.max_angle_deg:.1f}°{card}. {pair.rows.size:,} of {data.n:,} rows shown.")


def _budget(mech, release, data) -> None:
    st.subheader("Privacy budget ledger")
    entries = plain_ledger(release.full_ledger)
    left, right = st.columns([1, 1])
    with left:
        ui.show_ledger(entries)
    with right:
        frame = insp.ledger_frame(entries, only_costly=True)
        if frame.empty:
            st.caption("No step spends privacy budget (ε = 0 throughout).")
        else:
            st.plotly_chart(_ledger_figure(frame, ui.mechanism_colors().get(mech.id, "#1f77b4")),
                            theme="streamlit", key="insp_ledger")


def _proposals_figure(counts: np.ndarray, color: str) -> go.Figure:
    fig = go.Figure(go.Bar(x=np.arange(1, counts.size + 1), y=counts, marker_color=color,
                           hovertemplate="vector %{x}: %{y:g} proposals<extra></extra>"))
    fig.update_layout(title={"text": "Rejection sampler: proposals per drawn vector", "font": {"size": 15}},
                      height=300, margin={"l": 60, "r": 10, "t": 45, "b": 45})
    fig.update_xaxes(title_text="vector", dtick=1 if counts.size <= 20 else None)
    fig.update_yaxes(title_text="proposals (acceptance = 1/proposals)")
    return fig


def _convergence_verdict(diag: dict, traces: insp.BurnInTraces) -> None:
    """PPCA's verdict (split-R̂ / bulk-ESS on the captured variance and the subspace, issue #25); F_k explained."""
    if not isinstance(diag.get("convergence_message"), str):  # diagnostics without a verdict: F_k only
        (st.success if traces.converged else st.warning)(
            f"F_k(T) {'below' if traces.converged else 'above'} {traces.threshold:g} in "
            f"{int(np.sum(traces.final < traces.threshold))} of {traces.final.size} chains (sign mixing only).")
        return
    limits = (f"split-R̂ ≤ {diag.get('rhat_max', 1.05):g} and bulk-ESS ≥ {diag.get('ess_min', 50):g} on the "
              "captured variance and the principal angles to the top-k eigenvectors, over the last half of the scans")
    detail = diag.get("convergence_detail", diag["convergence_message"])
    if diag.get("converged"):
        st.success(f"**Converged (a non-private heuristic):** {limits} — {detail}. A "
                   "diagnostic can only show that a chain has not settled; none can certify that the release has "
                   "the exact stationary law the ε-DP guarantee needs, so the guarantee stays heuristic.")
    else:
        st.warning(f"**Not converged:** {detail} (needed: {limits}). The heuristic guarantee "
                   "needs a converged chain: raise the burn-in scans T in the mechanism options (T is public; the "
                   "verdict itself never changes the release).", icon=":material/warning:")
    st.caption("The chart shows F_k(T) = ‖mean of the chain's states‖_F/√k (Chaudhuri et al. §6.2): whether the "
               "columns' signs have averaged out. Even a chain at stationarity only gets there like 1/√T (the grey "
               "dotted line), so the paper's target F = 0.01 needs T ≳ 10,000 scans (it ran 20,000). F is shown "
               "for understanding; the verdict above is split-R̂ and bulk-ESS.")


def _diagnostics(mech, release) -> None:
    diag = release.diagnostics or {}
    traces = insp.burn_in_traces(diag)
    counts = insp.proposal_counts(diag)
    table = insp.scalar_diagnostics(diag)
    if traces is None and counts is None and table.empty:
        return
    st.subheader("Non-private diagnostics")
    st.caption("Exact values computed from the true data (sampler statistics, scores, the row count): they are NOT "
               "part of the private release — for understanding the mechanism, not for publishing."
               + (f" {diag['note']}" if isinstance(diag.get("note"), str) else ""))
    left, right = st.columns([3, 2]) if (traces is not None or counts is not None) else (None, st.container())
    if left is not None:
        with left:
            if traces is not None:
                verdict = isinstance(diag.get("convergence_message"), str)
                st.plotly_chart(for_screen(_trace_figure(traces, verdict=verdict)), theme="streamlit",
                                key="insp_traces")
                _convergence_verdict(diag, traces)
            if counts is not None:
                st.plotly_chart(_proposals_figure(counts, ui.mechanism_colors().get(mech.id, "#1f77b4")),
                                theme="streamlit", key="insp_proposals")
                st.caption(f"{int(counts.sum()):,} proposals in total; overall acceptance rate "
                           f"{counts.size / counts.sum():.3g}.")
    table = table[~table["diagnostic"].isin(TABLE_SKIP)]
    if not table.empty:
        labels = PPCA_LABELS if mech.id == "ppca" else {}
        table = table.assign(diagnostic=[labels.get(d) or diagnostic_label(d) for d in table["diagnostic"]])
        with right:
            st.table(table.set_index("diagnostic"))  # wraps long values (a data frame cut them off)


st.title("Inspect a mechanism")
ui.evaluation_banner()
with st.sidebar:
    presentation_toggle()
data = ui.current_prepared()
if data is None:
    st.stop()
_held = ui.held_out_caption(data)
st.caption(f"Data: **{ui.dataset_label(ui.settings().dataset)}** after preprocessing (n = {data.n:,}, "
           f"d = {data.d}); change it on the Data page. This page releases on all {data.n:,} rows"
           + (f" — Explore and Sample size hold {data.n - ui.mechanism_rows(data):,} of them out to test the SVM, "
              f"so their tables show n = {ui.mechanism_rows(data):,}." if _held else "."))

with ui.handle_errors():
    mech = _mechanism_picker()
    _ss_showcase_offer(mech)
    _ss_dimension_section(mech)
    cfg = _settings(mech, data)
    _grid_check(mech, data, cfg)
    outcome = _release(mech, data, cfg)
    release = outcome["release"]
    st.divider()
    _guarantee_block(mech, release)
    if outcome["error"] is not None:
        if outcome["timeout"]:
            st.warning(f"**Timed out** — {outcome['error']}", icon=":material/timer_off:")
        else:
            st.error(outcome["error"])
    elif release.is_bottom:
        st.warning(f"**⊥ — no output.** {mech.name} declined to release a subspace: {release.reason}  \n"
                   "⊥ is a legitimate outcome of this mechanism, not an error: its test decided the data are not "
                   "stable enough to release privately.", icon=":material/block:")
        _explain_bottom(mech, release)
        _budget(mech, release, data)
        _diagnostics(mech, release)
    else:
        headline = _metrics_row(release, data)
        _charts(mech, release, data, headline, cfg["seed"])
        _budget(mech, release, data)
        pictures_expander(mech, release, data, outcome["key"][5])  # the release's seed (its pictures: own streams)
        _diagnostics(mech, release)
