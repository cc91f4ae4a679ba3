"""`make run`'s server keeps working when a source file under it changes (a developer's edit, a `git pull`).

The e2e servers pass ``--server.fileWatcherType=none`` (benchmarks/_server.py), so they never ran the configuration
users get from `make run`. With Streamlit's file watcher on, a changed ``.py`` file makes Streamlit drop every
watched module (all of ``dpcore`` and ``pages``) from ``sys.modules`` at the session's next run; objects that outlive
a run (the cached datasets, the shared worker pool) keep the old classes, and the next sweep failed with "dataset
must be a dpcore Dataset or a 2-D numpy array, got Dataset" (peers: "Can't pickle … TaskMessage: it's not the same
object"). ``.streamlit/config.toml`` turns the watcher off; this test starts the server the way `make run` does (no
watcher flag: the project's config decides) on a copy of the app, edits the copy, and runs a new sweep.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect
from test_e2e import (  # noqa: F401  (the browser fixtures: Debian's Chromium)
    TIMEOUT_MS,
    browser_context_args,
    browser_type_launch_args,
)

from benchmarks._server import ROOT, free_port, stop, wait_healthy

pytestmark = [pytest.mark.browser, pytest.mark.slow]

#: What `make run` passes (Makefile, target run), the port aside: no file-watcher flag.
MAKE_RUN_FLAGS = ("--server.headless", "true", "--server.address", "127.0.0.1", "--browser.gatherUsageStats",
                  "false", "--browser.serverAddress", "localhost")
LINK = "explore?data=wine&k=2&trials=2&eps=0.5~4&mech=laplace,analyze_gauss,ppca"


@pytest.fixture
def copied_app(tmp_path: Path) -> Path:
    """The app's files (code, pages, config, sample data) in a directory of their own, to be edited."""
    root = tmp_path / "app"
    root.mkdir()
    shutil.copy(ROOT / "app.py", root / "app.py")
    for folder in ("dpcore", "pages", ".streamlit", "sample_data"):
        shutil.copytree(ROOT / folder, root / folder, ignore=shutil.ignore_patterns("__pycache__"))
    return root


def _sweep_done(page: Page, releases: int) -> None:
    expect(page.get_by_text(re.compile(rf"^{releases} releases in \d+\.\d s")).first).to_be_visible()
    page.wait_for_timeout(500)
    expect(page.locator('[data-testid="stApp"]')).to_have_attribute("data-test-script-state", "notRunning")


def test_a_source_file_edited_under_a_running_dashboard_breaks_nothing(page: Page, copied_app: Path):
    page.set_default_timeout(TIMEOUT_MS)
    port = free_port()
    log = open(copied_app / "server.log", "w")  # noqa: SIM115  (closed below)
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port),
                             *MAKE_RUN_FLAGS], cwd=copied_app, stdout=log, stderr=subprocess.STDOUT,
                            env={**os.environ, "DP_PRECOMPUTE": "0"})
    try:
        url = f"http://127.0.0.1:{port}"
        wait_healthy(url, proc, 90.0, copied_app / "server.log")
        page.goto(f"{url}/{LINK}", wait_until="domcontentloaded")
        _sweep_done(page, 28)

        source = copied_app / "dpcore" / "mechanisms" / "base.py"
        source.write_text(source.read_text() + "\n# an edit made while the dashboard runs\n")
        page.wait_for_timeout(3000)  # the watcher (when on) has seen it

        sidebar = page.locator('[data-testid="stSidebar"]')
        for label, value in (("Seed", "7"), ("Trials", "3")):  # data prepared again, a sweep of 42 new releases
            box = sidebar.get_by_label(label, exact=True)
            box.fill(value)
            box.press("Enter")
            page.wait_for_timeout(1500)
        run = page.get_by_role("button", name="Run sweep")
        if run.is_visible():
            run.click()
        error = page.locator('[data-testid="stAlertContentError"]')
        expect(page.get_by_text(re.compile(r"^42 releases in \d+\.\d s")).or_(error).first).to_be_visible()
        expect(error, "the sweep after the edit failed").to_have_count(0)
        _sweep_done(page, 42)
        expect(page.locator('[data-testid="stException"]')).to_have_count(0)
        expect(page.locator('[data-testid="stAlertContentError"]')).to_have_count(0)
        expect(page.locator('[data-testid="stPlotlyChart"]').first.locator(".scatterlayer .trace").first) \
            .to_be_attached()
    finally:
        stop(proc)
        log.close()
