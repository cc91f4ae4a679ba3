"""The lesson on a projector (issue 20): Explore, Sample size and Papers at 1280×800 in headless Chromium.

What a class sees: the first screen says what the app is and where to start; legends at least 12 px; reference-line
tags in the right margin (never on a curve); log axes labelled only at the values run or at clean ticks (no
"5 2 1 5 2 0.1", no "2.012e+04"); the Frobenius panel on a log axis with its "releasing zero" line and a typeset
‖·‖_F label; the SVM axis reaching 1. Screenshots go to test-artifacts/projector_*.png.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Browser, Page, expect
from test_e2e import (  # noqa: F401  (the browser fixtures: Debian's Chromium)
    SHOT_DIR,
    TIMEOUT_MS,
    _serve,
    browser_type_launch_args,
    wait_idle,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PROJECTOR = {"width": 1280, "height": 800}
#: The default ε range's values: the only labels of Explore's log ε axis (no "5 2 1 5 2 0.1" minor labels).
EPSILONS = ["0.1", "0.2", "0.5", "1", "2", "5", "10"]
EXPONENT = re.compile(r"e[+-]\d")


@pytest.fixture(scope="module")
def projector_url():
    yield from _serve("streamlit_projector.log")


@pytest.fixture
def projector(browser: Browser):
    context = browser.new_context(viewport=PROJECTOR)
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    yield page
    context.close()


def _charts(page: Page, count: int) -> None:
    charts = page.locator('[data-testid="stPlotlyChart"]')
    expect(charts).to_have_count(count)
    for i in range(count):
        expect(charts.nth(i).locator(".scatterlayer .trace path").first).to_be_attached()


def _ticks(chart, axis: str) -> list[str]:
    return [t.strip() for t in chart.locator(f".{axis}tick text").all_text_contents()]


def _shot(page: Page, name: str) -> None:
    SHOT_DIR.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOT_DIR / f"projector_{name}.png"))


def test_projector_explore_first_screen_and_readable_charts(projector: Page, projector_url):
    page = projector
    page.goto(f"{projector_url}/?data=wine&trials=2", wait_until="domcontentloaded")
    _charts(page, 4)
    wait_idle(page)
    intro = page.get_by_text("compares differentially private ways to compute PCA")
    expect(intro).to_be_visible()
    box = intro.bounding_box()
    assert box is not None and box["y"] + box["height"] <= PROJECTOR["height"]  # on the first screen
    expect(page.get_by_text("Start here:")).to_be_visible()
    _shot(page, "explore_first_screen")
    charts = page.locator('[data-testid="stPlotlyChart"]')
    for i in range(4):
        chart = charts.nth(i)
        chart.scroll_into_view_if_needed()
        sizes = chart.locator(".legendtext").evaluate_all(
            "els => els.map(e => parseFloat(getComputedStyle(e).fontSize))")
        assert sizes and min(sizes) >= 12, sizes
        assert _ticks(chart, "x") == EPSILONS  # the ε values run, nothing in between
        assert not any(EXPONENT.search(label) for label in _ticks(chart, "y")), _ticks(chart, "y")
        plot = chart.locator(".nsewdrag").first.bounding_box()
        for tag in chart.locator(".annotation-text").all():  # reference tags sit right of the plot area
            text = (tag.text_content() or "").strip()
            if text in ("PCA", "random", "majority", "release 0"):
                assert tag.bounding_box()["x"] >= plot["x"] + plot["width"] - 1, text
    frob = charts.filter(has=page.locator(".gtitle", has_text="Frobenius"))
    expect(frob).to_have_count(1)
    expect(frob.locator(".annotation-text", has_text="release 0")).to_have_count(1)
    assert set(_ticks(frob, "y")) <= {"0.001", "0.01", "0.1", "1", "10", "100", "1,000", "0.2", "0.5", "2", "5",
                                      "20", "50", "200", "500"}
    title = frob.locator(".ytitle")
    assert "_F" not in (title.text_content() or "")
    assert title.locator("tspan").count() >= 2  # ‖·‖ with a typeset subscript
    svm = charts.filter(has=page.locator(".gtitle", has_text="SVM"))
    assert "1" in _ticks(svm, "y")  # the SVM axis reaches 1
    svm.scroll_into_view_if_needed()
    _shot(page, "explore_charts")


def test_projector_sample_size_ticks_and_guide_note(projector: Page, projector_url):
    page = projector
    page.goto(f"{projector_url}/sample_size?data=wine&mech=analyze_gauss&trials=2", wait_until="domcontentloaded")
    button = page.get_by_role("button", name="Run sweep")
    if button.count():
        button.first.click()
    _charts(page, 1)
    wait_idle(page)
    chart = page.locator('[data-testid="stPlotlyChart"]').first
    ticks = _ticks(chart, "x")
    assert ticks and not any(EXPONENT.search(t) for t in ticks), ticks
    expect(page.get_by_text(re.compile("no guide here, because"))).to_be_visible()
    chart.scroll_into_view_if_needed()
    _shot(page, "sample_size")


def test_projector_papers_figures_have_clean_log_ticks(projector: Page, projector_url):
    page = projector
    page.goto(f"{projector_url}/papers", wait_until="domcontentloaded")
    expect(page.get_by_role("heading", name=re.compile("^Papers"))).to_be_visible()
    wait_idle(page)
    expect(page.get_by_text("ordering agrees, gap larger").first).to_be_visible()
    page.get_by_role("tab", name=re.compile("Amin")).click()
    image = page.locator('[data-testid="stImage"] img').nth(1)
    expect(image).to_be_visible()
    image.scroll_into_view_if_needed()
    _shot(page, "papers_amin")
