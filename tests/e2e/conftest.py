"""Browser fixtures shared by every file of tests/e2e: each page of pytest-playwright's ``context`` gets the run
watcher of :mod:`_st_runs` (``wait_idle`` waits on it). A context a test makes itself calls ``watch_runs``."""

from __future__ import annotations

import pytest


@pytest.fixture
def context(context):
    """pytest-playwright's context, its pages watching Streamlit's script runs (:func:`_st_runs.watch_runs`)."""
    from _st_runs import watch_runs  # here, not at the top: playwright is imported only where a browser test runs

    return watch_runs(context)
