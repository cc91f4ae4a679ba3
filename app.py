"""DP-PCA Explorer — Streamlit entry point (``streamlit run app.py``).

A thin router: the pages live in ``pages/`` (listed in :mod:`pages.ui.nav`, drawn as sidebar links before any page
loads its heavy imports) and share their settings through :mod:`pages.ui.state`.
"""

# Streamlit runs this script as __main__. A worker process started with multiprocessing's spawn/forkserver (the
# parallel sweeps and audits) re-runs the parent's main script as __mp_main__ — and after a test has run the app
# in-process, that script is this one: there it must neither start the app nor import anything.
if __name__ == "__main__":
    from pages.ui import nav as _nav

    try:
        _nav.run_app()
    finally:  # after the page: the class's sweeps are precomputed in the background (once per server; DP_PRECOMPUTE=0)
        from pages.ui import precompute as _precompute

        _precompute.start()
        _precompute.sidebar_status(_nav.status_slot())  # its progress under the sidebar's links ("lesson ready")
