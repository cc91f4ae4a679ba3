"""Papers: each source paper's experiment — its claim, our figure, the verdict — from the stored reproduction
results (``benchmarks/results/reproduce_*``, ``docs/figures``, ``docs/reproductions.md``), with a quick re-run."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import streamlit as st

from dpcore.evaluation import reproduce
from dpcore.exceptions import DPCoreError
from pages import ui
from pages.ui import coinpress_panel
from pages.ui.charts import presentation_toggle, stored_figure_for_screen

ui.init_state()
ss = st.session_state
_QUICK = ui.slot_key("papers_quick")  # {experiment name: RunResult of this session's quick re-run}
#: Measured quick-run times without the PNG (2 shared cores): the button says what to expect.
QUICK_SECONDS = {"chaudhuri_fig5": 5, "amin_fig1": 12, "imtiaz_fig1": 5, "chaudhuri_table2": 8,
                 "singhal_steinke_dimension": 30, "jiang_table1": 5}
VERDICT_ICONS = {"agrees": ":green[:material/check_circle:]", "partly": ":orange[:material/contrast:]",
                 "ordering agrees": ":orange[:material/contrast:]",
                 "mostly agrees": ":green[:material/check:]", "does not reproduce": ":red[:material/cancel:]"}

#: The tab labels: short enough that all seven fit one row at 1280 px (the long "author year — target" labels
#: showed 4½ of 7 tabs); the full name heads each tab.
TAB_LABELS = {"chaudhuri_fig5": "Chaudhuri Fig. 5", "amin_fig1": "Amin Fig. 1", "imtiaz_fig1": "Imtiaz Fig. 1",
              "chaudhuri_table2": "Chaudhuri Table 2", "singhal_steinke_dimension": "Singhal–Steinke",
              "yun_dudeja": "Yun–Dudeja", "jiang_table1": "Jiang Table 1"}

with st.sidebar:
    presentation_toggle()
st.title("Papers: what the source papers claim, and what we found")
st.markdown("dpcore re-ran the experiments of the papers its mechanisms come from, with the same mechanisms you "
            "use on the other pages. Each section shows the paper's claim, our figure and the verdict; the numbers "
            "are the stored results of the full runs (`benchmarks/results/reproduce_*`, discussed in "
            "`docs/reproductions.md`). Re-run one from the command line with `dpcore reproduce NAME` (or `--quick`), "
            "or a quick version here.")


@st.cache_data(show_spinner=False)
def _stored_spec(path: str, mtime: float) -> dict | None:
    """The figure of a stored Plotly HTML file (``Plotly.newPlot(id, data, layout, …)``), or None when it cannot be
    read; cached by path and modification time."""
    try:
        html = Path(path).read_text(encoding="utf-8")
        pos = html.index("Plotly.newPlot(") + len("Plotly.newPlot(")
        decoder = json.JSONDecoder()
        parts = []
        for _ in range(3):  # the element id, the traces, the layout
            while html[pos] in " \t\r\n,":
                pos += 1
            value, pos = decoder.raw_decode(html, pos)
            parts.append(value)
        return {"data": parts[1], "layout": parts[2]}
    except (OSError, ValueError, IndexError):
        return None


def _stored_figure(name: str, files: dict[str, Path]) -> None:
    """The stored full run's figure: drawn by Plotly from its HTML at the page's width with readable text (the PNG,
    1,000–1,400 px wide with 13 px text, showed its text at 8–9 px); the PNG when the HTML cannot be read."""
    html = files.get("html")
    spec = _stored_spec(str(html), html.stat().st_mtime) if html is not None and html.is_file() else None
    if spec is not None:
        st.plotly_chart(stored_figure_for_screen(spec), theme="streamlit", key=f"papers_fig_{name}",
                        width="stretch")
    elif files["png"].is_file():
        st.image(str(files["png"]), width="stretch")
    else:
        st.info(f"No stored figure ({files['png'].name}); run `dpcore reproduce {name}`.")


def _verdict_icon(verdict: str) -> str:
    low = verdict.lower()
    for key, icon in VERDICT_ICONS.items():
        if low.startswith(key):
            return icon
    return ":gray[:material/help:]"


def _verdict_table(rows: list) -> None:
    lines = ["| paper's claim | ours | verdict |", "|---|---|---|"]
    for v in rows:
        lines.append(f"| {ui.public_text(v.statement)} | {ui.public_text(v.ours)} | {_verdict_icon(v.verdict)} "
                     f"{ui.public_text(v.verdict)} |")
    st.markdown("\n".join(lines))


def _facts(name: str) -> None:
    try:
        facts = reproduce.load_facts(name)
    except DPCoreError as exc:
        st.caption(str(exc))
        return
    table = pd.DataFrame([{"data": f.get("dataset"), "n": f.get("n"), "d": f.get("d"),
                           "norm bound B": f.get("norm_bound"), "rows clipped": f.get("clip_fraction"),
                           "preprocessing private": "yes" if f.get("preprocessing_private") else "NO"}
                          for f in facts])
    st.dataframe(table, hide_index=True, width="stretch",
                 column_config={"norm bound B": st.column_config.NumberColumn(format="%.4g"),
                                "rows clipped": st.column_config.NumberColumn(format="percent")})


def _quick_run(name: str) -> None:
    """Button callback: a quick run in a temporary folder (never over the stored results), kept in this session."""
    try:
        result = reproduce.run(name, quick=True, png=False, echo=False)
    except (DPCoreError, OSError) as exc:  # e.g. the shared data folder is missing
        ss.setdefault(_QUICK, {})[name] = exc
        return
    if result.out_dir is not None:  # figure and summary are in memory; the temporary files are not needed
        shutil.rmtree(result.out_dir, ignore_errors=True)
    ss.setdefault(_QUICK, {})[name] = result


def _quick_section(name: str) -> None:
    st.button(f"Re-run a quick version (≈ {QUICK_SECONDS.get(name, 10)} s)", key=f"papers_quick_{name}",
              icon=":material/replay:", on_click=_quick_run, args=(name,),
              help="Few trials, a short ε grid and short MCMC burn-in; written to a temporary folder, so the stored "
                   "results stay as they are.")
    result = ss.get(_QUICK, {}).get(name)
    if result is None:
        return
    if isinstance(result, Exception):
        st.error(f"The quick run failed: {result}")
        return
    st.success(f"Quick run finished in {result.seconds:.1f} s. It uses few trials and a short ε grid: compare its "
               "shape with the stored figure above, not its digits.", icon=":material/replay:")
    if result.figure is not None:
        fig = stored_figure_for_screen(result.figure.to_dict())  # the page's width, readable text
        st.plotly_chart(fig, theme="streamlit", key=f"papers_quick_fig_{name}", width="stretch")
    if result.summary is not None:
        with st.expander("Quick run: summary table and log"):
            st.dataframe(result.summary, hide_index=True, width="stretch")
            st.code(result.log or "(no output)", language=None)


try:
    all_verdicts = reproduce.verdicts()
except (DPCoreError, OSError) as exc:
    st.error(f"Could not read the verdicts: {exc}")
    all_verdicts = {e.name: [] for e in reproduce.EXPERIMENTS}

st.subheader("Summary")
lines = ["| paper | claim | verdict |", "|---|---|---|"]
for e in reproduce.EXPERIMENTS:
    for v in all_verdicts.get(e.name, []):
        lines.append(f"| {e.short}, {e.target} | {ui.public_text(v.statement)} | {_verdict_icon(v.verdict)} "
                     f"{ui.public_text(v.verdict)} |")
lines += coinpress_panel.summary_rows()  # beyond the seed papers: CoinPress's stored tables (its own tab)
st.markdown("\n".join(lines))
st.caption("No dpcore bug was found by these reproductions; every mechanism ran at every setting within its time cap.")

tabs = st.tabs([TAB_LABELS.get(e.name, e.short) for e in reproduce.EXPERIMENTS] + [coinpress_panel.TAB_LABEL])
for exp, tab in zip(reproduce.EXPERIMENTS, tabs):
    with tab:
        st.markdown(f"### {exp.paper}, {exp.target}\n{exp.title[:1].upper()}{exp.title[1:]}. "
                    f"Experiment `{exp.name}` (full run ≈ {exp.runtime_s} s on 2 shared cores).")
        st.markdown("**Verdicts**")
        if all_verdicts.get(exp.name):
            _verdict_table(all_verdicts[exp.name])
        else:
            st.caption("No verdict recorded for this experiment.")
        files = reproduce.result_files(exp.name)
        st.markdown("**Our figure** (stored full run)")
        _stored_figure(exp.name, files)
        st.markdown("**The data as run** (non-private facts of the benchmark data)")
        _facts(exp.name)
        section = reproduce.doc_section(exp.name)
        if section:
            with st.expander("The paper's setup, what we ran, and the comparison (docs/reproductions.md)"):
                st.markdown(ui.public_text(section))
        _quick_section(exp.name)
with tabs[-1]:
    coinpress_panel.render()
