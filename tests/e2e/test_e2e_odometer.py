"""End-to-end in Chromium: the sidebar's privacy odometer on an upload (issue 35 item 3).

Upload a table on the Data page, let Explore run its default sweep on it: the odometer under the links counts its
releases; a rerun that only redraws the stored sweep adds nothing; the reset zeroes the count and says that nothing
is refunded. Screenshots of the sidebar at 1280×800 (the odometer open) go to test-artifacts/ like the other browser
tests. The server prefers port 8611 (any free port otherwise).
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from playwright.sync_api import Page, expect
from test_e2e import (  # noqa: F401  (the browser fixtures: Debian's Chromium)
    SHOT_DIR,
    browser_context_args,
    browser_type_launch_args,
    open_expander,
    wait_idle,
)

from benchmarks._server import free_port, serve
from dpcore.core.odometer import RESET_NOTE

pytestmark = pytest.mark.browser

HEADLINE = re.compile(r"\(your upload\): (\d+) releases?")


@pytest.fixture(scope="module")
def app_url():
    with serve(port=free_port(8611), log=SHOT_DIR / "streamlit_odometer.log", start_timeout=60) as (url, _pid):
        yield url


def _table() -> bytes:
    rng = np.random.default_rng(5)
    rows = [",".join(f"{rng.normal(10 * (j + 1), j + 1):.2f}" for j in range(6)) for _ in range(150)]
    return ("a,b,c,d,e,f\n" + "\n".join(rows) + "\n").encode()


def _count(page: Page) -> int:
    text = page.locator('[data-testid="stSidebar"]').get_by_text(HEADLINE).first.inner_text()
    return int(HEADLINE.search(text).group(1))


def _sidebar_shot(page: Page, name: str) -> None:
    """The sidebar's top at 1280×800, and the odometer's expander whole (the sidebar scrolls below it)."""
    page.set_viewport_size({"width": 1280, "height": 800})
    page.evaluate("document.querySelector('[data-testid=\"stSidebarContent\"]')?.scrollTo(0, 0)")
    page.wait_for_timeout(500)
    sidebar = page.locator('[data-testid="stSidebar"]')
    sidebar.screenshot(path=str(SHOT_DIR / f"{name}.png"))
    sidebar.locator('[data-testid="stExpander"]').first.scroll_into_view_if_needed()
    page.wait_for_timeout(300)
    sidebar.screenshot(path=str(SHOT_DIR / f"{name}_scrolled.png"))


def test_the_odometer_counts_an_explore_sweep_on_an_upload_and_resets(page: Page, app_url):
    page.goto(app_url, wait_until="domcontentloaded")  # through app.py's router (st.navigation)
    sidebar = page.locator('[data-testid="stSidebar"]')
    expect(sidebar.get_by_text("no upload in this session")).to_be_visible()
    wait_idle(page)
    page.set_viewport_size({"width": 1280, "height": 800})
    page.screenshot(path=str(SHOT_DIR / "odometer_builtin_page.png"))  # built-in data: one line under the links
    sidebar.get_by_role("link", name="Data").click()
    expect(page.get_by_role("heading", name="Data and preprocessing")).to_be_visible()
    wait_idle(page)  # the page's run is over: the upload goes to the uploader it draws
    page.locator('[data-testid="stFileUploader"] input[type="file"]').first.set_input_files(
        {"name": "people.csv", "mimeType": "text/csv", "buffer": _table()})
    wait_idle(page)
    expect(sidebar.get_by_text(HEADLINE)).to_contain_text("(your upload): 0 releases")

    sidebar.get_by_role("link", name="Explore").click()
    expect(page.get_by_role("heading", name=re.compile("Explore"))).to_be_visible()
    wait_idle(page)
    expect(page.get_by_text(re.compile(r"^\d+ releases in [\d.]+ s")).first).to_be_visible()  # the sweep finished
    wait_idle(page)
    counted = _count(page)
    assert counted > 0
    open_expander(page, sidebar.locator("summary").filter(has_text="Totals, releases, reset").first)
    expect(sidebar.get_by_text("Basic: the sums of ε and of δ")).to_be_visible()
    expect(sidebar.get_by_text("Built-in datasets are public").first).to_be_visible()
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)
    _sidebar_shot(page, "odometer_sidebar_explore")

    page.get_by_text("min–max", exact=True).first.click()  # another band: the page reruns on the stored sweep
    wait_idle(page)
    assert _count(page) == counted  # nothing new was computed

    sidebar.get_by_role("button", name="Reset the count").click()
    wait_idle(page)
    expect(sidebar.get_by_text(HEADLINE)).to_contain_text("(your upload): 0 releases")
    expect(sidebar.get_by_text(RESET_NOTE, exact=False)).to_be_visible()
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)
    _sidebar_shot(page, "odometer_sidebar_reset")
