"""Explore's charts from a sweep, drawn one way for the page, ``dpcore run`` and the exported scripts and notebooks:
:func:`metric_chart`, :func:`run_figures` and the rest live in :mod:`dpcore.explain.figures` (re-exported here, the
page's chart loop calls them); this module adds the page's buttons for the runnable exports.
"""

from __future__ import annotations

from dpcore.explain.figures import (  # noqa: F401 (re-exported)
    X_TITLE,
    download_title,
    explore_metrics,
    metric_chart,
    run_figures,
)


def code_buttons(metric: str, *, label: str, workspace_text: str, seed: int | None, data_name: str | None,
                 name_parts: tuple[str, ...], key: str) -> None:
    """A Python script and a Jupyter notebook that regenerate the chart through dpcore (built on the click from
    values of this run: the workspace text — public settings and schema, no data — the seed and the file's name)."""
    import streamlit as st

    from dpcore.evaluation.captions import export_filename
    from dpcore.evaluation.chart_code import chart_notebook, chart_script

    args = {"metric": metric, "seed": seed, "data_name": data_name}
    label = download_title(label)  # a long chart title is cut short on a button two to a row
    c_py, c_nb = st.columns(2)
    c_py.download_button(f"{label} (Python)", lambda: chart_script(workspace_text, **args),
                         file_name=export_filename(*name_parts, ext="py"), mime="text/x-python", on_click="ignore",
                         key=f"{key}_py", help="A Python script that regenerates this chart and the results CSV "
                                               "through dpcore's API (same settings and seed); on an upload, give "
                                               "it the file's path.")
    c_nb.download_button(f"{label} (notebook)", lambda: chart_notebook(workspace_text, **args),
                         file_name=export_filename(*name_parts, ext="ipynb"), mime="application/x-ipynb+json",
                         on_click="ignore", key=f"{key}_ipynb",
                         help="The same as a Jupyter notebook: run its cells in order.")
