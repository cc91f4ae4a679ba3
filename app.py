"""DP-PCA Explorer — Streamlit entry point (``streamlit run app.py``).

A thin router: every page lives in ``pages/`` and shares state through :mod:`pages._ui`. Pages written by other
contributors are listed only when their file exists, so the app never breaks on a missing page.
"""

from pathlib import Path

import streamlit as st

from pages import _ui as ui

st.set_page_config(layout="wide", page_title="DP-PCA Explorer", page_icon=":material/lock:")

ROOT = Path(__file__).resolve().parent
PAGES = (
    ("pages/data.py", "Data", ":material/database:", False),
    ("pages/explore.py", "Explore", ":material/monitoring:", True),
    ("pages/sample_size.py", "Sample size", ":material/straighten:", False),
    ("pages/inspect.py", "Inspect a mechanism", ":material/search:", False),
    ("pages/learn.py", "Learn", ":material/school:", False),
    ("pages/audit.py", "Audit", ":material/fact_check:", False),
)

ui.init_state()
nav = st.navigation([st.Page(path, title=title, icon=icon, default=default)
                     for path, title, icon, default in PAGES if (ROOT / path).exists()])
nav.run()
ui.sync_query_params()
