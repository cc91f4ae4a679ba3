"""A page that computes says so: Streamlit's running indicator (with its Stop button) shows while a run lasts.

``client.toolbarMode = "minimal"`` hid it with the developer options, so a page computing for 20 s looked idle and a
click made then could be lost to the rerun (the e2e reviewer measured it: the indicator never appeared, even during
a 22 s first load). ``"viewer"`` keeps it, and the menu, without the "Deploy" button.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect
from test_e2e import (  # noqa: F401  (the browser fixtures: Debian's Chromium)
    TIMEOUT_MS,
    _serve,
    browser_context_args,
    browser_type_launch_args,
    wait_idle,
)

pytestmark = pytest.mark.browser

#: A sweep that takes seconds (PPCA on Adult) and runs by itself.
SLOW_LINK = "explore?data=adult&k=5&trials=3&mech=ppca,laplace"


@pytest.fixture(scope="module")
def own_url():
    yield from _serve("streamlit_running_indicator.log")


def test_a_long_run_shows_the_running_indicator_and_no_deploy_button(page: Page, own_url):
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(f"{own_url}/{SLOW_LINK}", wait_until="domcontentloaded")
    indicator = page.locator('[data-testid="stStatusWidget"]')
    expect(indicator).to_be_visible()
    expect(indicator.get_by_role("button", name="Stop")).to_be_visible()
    expect(page.get_by_role("button", name="Deploy")).to_have_count(0)
    wait_idle(page)
    expect(indicator).to_have_count(0)
