"""In Chromium (issue 35 item 2): run a seeded sweep on Explore, download the workspace and the results CSV, run
``dpcore run`` on the downloaded workspace — the CSV it writes equals the browser's download byte for byte.

A small sweep (Wine, k = 2, two fast mechanisms, one trial, two ε values). The server listens on port
``E2E_RUN_EXPORT_PORT`` (default 8612).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from playwright.sync_api import Page, expect
from test_e2e import (  # noqa: F401  (the browser fixtures: Debian's Chromium)
    ROOT,
    SHOT_DIR,
    TIMEOUT_MS,
    browser_context_args,
    browser_type_launch_args,
)
from test_e2e_downloads import _goto, _open_expanders, _run_sweep

from benchmarks._server import serve

pytestmark = pytest.mark.browser

PORT = int(os.environ.get("E2E_RUN_EXPORT_PORT", "8612"))
SEED = 13
FAST = f"data=wine&k=2&trials=1&eps=1~2&mech=laplace,analyze_gauss&seed={SEED}"


@pytest.fixture(scope="module")
def run_url():
    with serve(port=PORT, log=SHOT_DIR / "streamlit_run_export.log", start_timeout=60) as (url, _pid):
        yield url


def _download(page: Page, name: str) -> tuple[str, bytes]:
    button = page.get_by_role("button", name=name)
    expect(button).to_be_enabled()
    with page.expect_download(timeout=TIMEOUT_MS) as info:
        button.click()
    download = info.value
    assert download.failure() is None, (name, download.failure())
    return download.suggested_filename, download.path().read_bytes()


def test_dpcore_run_of_the_downloaded_workspace_equals_the_downloaded_csv(page: Page, run_url, tmp_path: Path):
    _goto(page, f"{run_url}/?{FAST}", "^Explore the privacy")
    _run_sweep(page)
    _open_expanders(page, "Downloads")
    csv_name, csv_bytes = _download(page, "Sweep results (CSV)")
    ws_name, ws_bytes = _download(page, "Workspace for dpcore run (YAML)")
    assert (csv_name, ws_name) == ("sweep_wine.csv", "dpcore-workspace.yaml")
    workspace = yaml.safe_load(ws_bytes)
    assert workspace["explore"] == {"dataset": "wine", "seed": SEED}, workspace.get("explore")
    (tmp_path / ws_name).write_bytes(ws_bytes)
    done = subprocess.run([sys.executable, "-m", "dpcore", "run", str(tmp_path / ws_name), "--out",
                           str(tmp_path / "out"), "--no-figures", "--quiet"], cwd=ROOT, capture_output=True,
                          text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert (tmp_path / "out" / csv_name).read_bytes() == csv_bytes
    assert len(csv_bytes.decode().splitlines()) == 1 + 2 * 2  # two mechanisms × two ε × one trial
