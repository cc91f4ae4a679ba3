"""The dashboard asks nothing of a third party: every request a page makes goes to the app's own server.

A ``:material/lock:`` page icon made the browser fetch the tab's icon from fonts.gstatic.com on every page load —
telling a third party who opens the app and when, and an error on an offline machine. The icon is now a file the
server serves (pages/ui/favicon.png).
"""

from __future__ import annotations

from urllib.parse import urlsplit

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

PAGES = ("Explore", "Data", "Sample size", "Inspect a mechanism", "Papers", "Privacy basics", "Learn", "Audit")


@pytest.fixture(scope="module")
def own_url():
    yield from _serve("streamlit_no_third_party.log")


def test_no_page_requests_anything_from_another_host(page: Page, own_url):
    page.set_default_timeout(TIMEOUT_MS)
    own = urlsplit(own_url).hostname
    elsewhere: list[str] = []
    page.on("request", lambda request: elsewhere.append(request.url)
            if urlsplit(request.url).scheme in ("http", "https", "ws", "wss")
            and urlsplit(request.url).hostname not in (own, "localhost") else None)
    page.goto(own_url, wait_until="domcontentloaded")
    sidebar = page.locator('[data-testid="stSidebar"]')
    for name in PAGES:
        sidebar.get_by_role("link", name=name, exact=True).click()
        expect(page.locator('[data-testid="stMain"] h1').first).to_be_visible()
        wait_idle(page)
    page.wait_for_timeout(1000)
    assert elsewhere == [], f"requests to other hosts: {sorted(set(elsewhere))}"
