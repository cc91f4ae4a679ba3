"""The Papers page's CoinPress tab: the authors' two stored synthetic tables next to our reproduction, with the
verdict. Reads ``benchmarks/results/coinpress_tables.json`` (written by ``benchmarks/coinpress_tables.py``);
runs nothing."""

from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

from dpcore.evaluation import coinpress_repro as repro
from dpcore.exceptions import DPCoreError
from pages.ui.charts import stored_figure_for_screen

TAB_LABEL = "CoinPress"
#: One colour per t (no reds: red means NOT PRIVATE on every chart of the app); the non-private error in grey.
T_COLOURS = {1: "#1f77b4", 2: "#ff7f0e", 3: "#2ca02c", 4: "#9467bd", 5: "#8c564b"}
NONPRIVATE_COLOUR = "#555555"
TABLES = (("n", "n", "Mahalanobis error vs n (ρ = 0.5, d = 10)", False),
          ("rho", "ρ", "Mahalanobis error vs ρ (n = 8,000, d = 10)", True))


@st.cache_data(show_spinner=False)
def _results(mtime: float) -> dict | None:
    try:
        return repro.load_results()
    except DPCoreError:
        return None


def stored() -> dict | None:
    """The stored reproduction, or None when it is missing (cached by the file's modification time)."""
    path = repro.RESULTS_PATH
    return _results(path.stat().st_mtime) if path.is_file() else None


def summary_rows() -> list[str]:
    """Rows of the Papers page's summary table (| paper | claim | verdict |)."""
    icons = {"reproduced": ":green[:material/check_circle:]", "mostly": ":green[:material/check:]"}
    return [f"| CoinPress (Biswas et al. 2020), synthetic tables | {title} | "
            f"{icons.get(verdict.split()[0].rstrip(':'), ':red[:material/cancel:]')} {verdict} |"
            for title, verdict in verdict_lines(stored())]


def _x(cell: dict, table: str) -> float:
    return cell["n"] if table == "n" else cell["rho"]


def figure(result: dict, table: str, title: str, log_x: bool) -> go.Figure:
    """The paper's trimmed means (×), our reproduction as in the authors' code (solid, with the tolerance as bars)
    and dpcore's release (dotted, hidden until "dpcore release" is clicked in the legend); one colour per t, the
    non-private error in grey. One legend entry per t (its × and its line toggle together)."""
    cells = result[f"table_{table}"]["cells"]
    fig = go.Figure()
    ts = sorted({c["t"] for c in cells if c["t"] != "non-private"})
    for t in ["non-private", *ts]:
        colour = NONPRIVATE_COLOUR if t == "non-private" else T_COLOURS[t]
        label = "non-private" if t == "non-private" else f"t = {t}"
        paper = sorted((c for c in cells if c["t"] == t and c["variant"] in ("authors_code", "non-private")),
                       key=lambda c: _x(c, table))
        xs = [_x(c, table) for c in paper]
        fig.add_trace(go.Scatter(x=xs, y=[c["paper"] for c in paper], mode="markers", name=f"paper, {label}",
                                 marker={"symbol": "x", "size": 10, "color": colour}, legendgroup=label,
                                 showlegend=False))
        fig.add_trace(go.Scatter(x=xs, y=[c["ours"] for c in paper], mode="lines", name=label,
                                 line={"color": colour, "width": 2}, legendgroup=label,
                                 error_y={"type": "data", "array": [c["tolerance"] for c in paper],
                                          "visible": True, "thickness": 1, "width": 3}))
        if t != "non-private":
            mine = sorted((c for c in cells if c["t"] == t and c["variant"] == "dpcore"), key=lambda c: _x(c, table))
            fig.add_trace(go.Scatter(x=[_x(c, table) for c in mine], y=[c["ours"] for c in mine], mode="lines",
                                     name=f"dpcore release, {label}", visible="legendonly", legendgroup="dpcore",
                                     showlegend=False, line={"color": colour, "width": 2, "dash": "dot"}))
    fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name="× the paper", legendgroup="key",
                             marker={"symbol": "x", "size": 10, "color": NONPRIVATE_COLOUR}))
    fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines", name="dpcore release", legendgroup="dpcore",
                             visible="legendonly", line={"color": NONPRIVATE_COLOUR, "width": 2, "dash": "dot"}))
    fig.update_layout(title={"text": title}, height=460, margin={"l": 60, "r": 10, "t": 60, "b": 50},
                      legend={"orientation": "v"}, hovermode="x unified")
    ticks = (0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5) if table == "rho" else None
    fig.update_xaxes(title={"text": "ρ (zCDP)" if table == "rho" else "n"}, type="log" if log_x else "linear",
                     tickvals=ticks, ticktext=None if ticks is None else [f"{v:g}" for v in ticks])
    yticks = (0.1, 0.2, 0.5, 1, 2, 5, 10)
    fig.update_yaxes(title={"text": "Mahalanobis error"}, type="log", tickvals=yticks,
                     ticktext=[f"{v:g}" for v in yticks])
    return stored_figure_for_screen(fig.to_dict())


def verdict_lines(result: dict | None) -> list[tuple[str, str]]:
    """(table, verdict sentence) for the summary: cells within tolerance, as in the authors' code."""
    if result is None:
        return []
    out = []
    for table, _, title, _ in TABLES:
        if f"table_{table}" not in result:
            continue
        ok, total = repro.table_verdict(result[f"table_{table}"])
        word = "reproduced" if ok == total else "mostly reproduced" if ok >= 0.9 * total else "does not reproduce"
        out.append((title, f"{word}: {ok} of {total} cells within 4 se"))
    return out


def _dpcore_sentence(result: dict, table: str) -> str:
    cells = [c for c in result[f"table_{table}"]["cells"] if c["variant"] == "dpcore"]
    lower = max((c for c in cells if c["t"] != 1), key=lambda c: c["paper"] / c["ours"])
    first = max((c for c in cells if c["t"] == 1), key=lambda c: c["ours"] / c["paper"])
    where = "n" if table == "n" else "ρ"
    text = ("dpcore's release (dotted; click \"dpcore release\" in the legend) is below the paper's numbers from "
            f"t = 2 on, by up to {lower['paper'] / lower['ours']:.1f}× (t = {lower['t']}, "
            f"{where} = {_x(lower, table):.4g}: {lower['ours']:.3g} vs {lower['paper']:.3g})")
    above = first["ours"] / first["paper"] - 1
    if above > 0.005:
        text += (f"; at t = 1 it is up to {100 * above:.0f} % above them where the noise dominates (the projection "
                 "onto the PSD cone in place of the code's |Z|)")
    return text + "."


def render() -> None:
    """The tab's content."""
    st.markdown("### Biswas, Dong, Kamath & Ullman (NeurIPS 2020), CoinPress: two synthetic covariance tables\n"
                "Beyond the five seed papers. x ~ N(0, I₁₀), a loose prior I ⪯ Σ ⪯ K·I with K = 10√10, t rounds of "
                "clip → Gaussian noise → precondition, 10 %-trimmed mean of $\\|\\hat\\Sigma - I\\|_F$ over 100 "
                "trials. The paper's numbers are its stored results (`twistedcubic/coin-press`, "
                "`results/synthetic_cov`).")
    result = stored()
    if result is None:
        st.info("No stored CoinPress reproduction; run `python benchmarks/coinpress_tables.py` (≈ 15 min).")
        return
    lines = ["| table | verdict (our steps run as in the authors' code) |", "|---|---|"]
    lines += [f"| {title} | {verdict} |" for title, verdict in verdict_lines(result)]
    st.markdown("\n".join(lines))
    st.caption(f"A cell is reproduced when |ours − paper| ≤ {result.get('z_tolerance', 4):g}·√(se² + se_paper²), "
               "the standard errors of the two trimmed means (100 trials each). ×: the paper's numbers; solid lines: "
               "our steps run as in the authors' code, with that tolerance as bars; dotted: dpcore's release.")
    for table, _, title, log_x in TABLES:
        if f"table_{table}" not in result:
            continue
        st.plotly_chart(figure(result, table, title, log_x), theme="streamlit", key=f"papers_coinpress_fig_{table}",
                        width="stretch")
        st.caption(_dpcore_sentence(result, table))
    with st.expander("What we ran, and why dpcore's release differs from the paper's numbers"):
        st.markdown(
            "We run dpcore's CoinPress steps (`dpcore.mechanisms.coinpress`) on the same data in our unit scale "
            "(rows z/100, prior λ = K/100²; no row is clipped by the norm bound and the cap rᵢ ≤ ‖Mᵢ‖₂ never binds) "
            "with the authors' noise (σ = √2·γ²/(n√(2ρᵢ)), γ at β = 0.1), their ¼/¾ budget split and η. "
            "**As in the authors' code** the preconditioned rows are X·A and the estimate A⁻¹ZA⁻¹ — the paper's "
            "algorithm only while A is symmetric (t ≤ 2): from t = 3 on their estimate is not symmetric, and its "
            "skew part is most of their error at t = 4, 5 (why their t = 4, 5 curves lie above t = 3); their PSD "
            "step is an SVD, which returns |Z|. **dpcore's release** uses X·Aᵀ and A⁻¹ZA⁻ᵀ, the projection onto "
            "the PSD cone, and is symmetric. See `docs/coinpress.md`.")
