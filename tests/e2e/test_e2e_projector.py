"""The lesson on a projector (issue 20): Explore, Sample size and Papers at 1280×800 in headless Chromium.

What a class sees: the first screen (no scrolling) says in one sentence what the app is and where to start, beside a
chart of the default run that needs no computation; legends at least 12 px; reference-line tags in the right margin
(never on a curve) and apart from each other; log axes labelled only at the values run or at clean ticks (no
"5 2 1 5 2 0.1", no "2.012e+04"); the Frobenius panel on a log axis with its "releasing zero" line and a typeset
‖·‖_F label; the SVM axis reaching 1; presentation mode (sidebar): each chart full width, one per row, legends and
tags at 16 px, kept on the next page. Screenshots go to test-artifacts/projector_*.png.

Issue 33: a walk of every page in presentation mode at 1280×800 measures every label, legend, tab, metric, chip,
select value and heading (scrollWidth > clientWidth: text cut off or ellipsised; a tab bar that scrolls; chart text
outside its chart) and screenshots each page's first screen (projector_walk_<page>.png).
"""

from __future__ import annotations

import itertools
import re

import pytest
from playwright.sync_api import Browser, Page, expect
from test_e2e import (  # noqa: F401  (the browser fixtures: Debian's Chromium)
    SHOT_DIR,
    TIMEOUT_MS,
    _serve,
    browser_type_launch_args,
    wait_idle,
    wait_sweep_done,
    watch_runs,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PROJECTOR = {"width": 1280, "height": 800}
#: The default ε range's values: the only labels of Explore's log ε axis (no "5 2 1 5 2 0.1" minor labels).
EPSILONS = ["0.1", "0.2", "0.5", "1", "2", "5", "10"]
EXPONENT = re.compile(r"e[+-]\d")
#: The margin tags of the reference lines (pages/ui/charts.py).
TAGS = ("PCA", "random", "majority", "release 0")
#: The first screen's sentence (pages/ui/first_screen.py).
INTRO = "compares differentially private ways to compute PCA"


@pytest.fixture(scope="module")
def projector_url():
    yield from _serve("streamlit_projector.log")


@pytest.fixture
def projector(browser: Browser):
    context = watch_runs(browser.new_context(viewport=PROJECTOR))
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
    page.mouse.move(2, PROJECTOR["height"] - 2)  # no hover toolbar over a chart
    page.screenshot(path=str(SHOT_DIR / f"projector_{name}.png"))


def _tags_apart_right_of_the_plot(chart) -> None:
    """The reference-line tags of a chart sit right of its plot area and no two of them overlap."""
    plot = chart.locator(".nsewdrag").first.bounding_box()
    boxes = []
    for tag in chart.locator(".annotation").all():
        text = (tag.text_content() or "").strip()
        if text in TAGS:
            box = tag.locator(".annotation-text").bounding_box()
            assert box["x"] >= plot["x"] + plot["width"] - 1, text
            boxes.append((text, box))
    for i, (a, box_a) in enumerate(boxes):
        for b, box_b in boxes[i + 1:]:
            apart = box_a["y"] + box_a["height"] <= box_b["y"] + 0.5 or box_b["y"] + box_b["height"] <= box_a["y"] + 0.5
            assert apart, f"tags {a!r} and {b!r} overlap: {box_a} {box_b}"


def _run_sample_size(page: Page) -> None:
    """Sample size: once the page's run is over, press "Run sweep" (the settings may have started it already: its
    finished releases are reused) and wait until the sweep finished and its chart is drawn (it streams its releases
    when it outlasts the page run: ticks read before the end are redrawn under the reader)."""
    expect(page.get_by_role("heading", name="How many rows does each mechanism need?")).to_be_visible()
    wait_idle(page)
    page.get_by_role("button", name="Run sweep").first.click()
    wait_sweep_done(page)
    _charts(page, 1)


def _presentation_switch(page: Page):
    """The sidebar's "Presentation mode" toggle (its input: checked or not)."""
    return page.locator('[data-testid="stSidebar"] [data-testid="stCheckbox"]', has_text="Presentation mode") \
        .locator("input").first


def test_projector_explore_first_screen_and_readable_charts(projector: Page, projector_url):
    page = projector
    page.goto(f"{projector_url}/?data=wine&trials=2", wait_until="domcontentloaded")
    _charts(page, 4)
    wait_idle(page)
    intro = page.get_by_text(INTRO)
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
        _tags_apart_right_of_the_plot(chart)
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
    _run_sample_size(page)
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
    figure = page.locator('[data-testid="stPlotlyChart"]').nth(1)  # drawn by Plotly from the stored HTML (#33)
    expect(figure.locator(".scatterlayer .trace").first).to_be_visible()
    figure.scroll_into_view_if_needed()
    sizes = figure.locator(".xtick text, .ytick text, .legendtext").evaluate_all(
        "els => els.map(e => parseFloat(getComputedStyle(e).fontSize))")
    assert sizes and min(sizes) >= 13, sizes  # the stored PNG's text showed at 8–9 px
    _shot(page, "papers_amin")


def test_projector_first_screen_shows_a_chart_and_where_to_start(projector: Page, projector_url):
    """The default URL at 1280×800: the sentence and a chart of the default run, both inside the first screen; the
    chart is a stored image, so it is there before any sweep (or plotly.js) has finished."""
    page = projector
    page.goto(projector_url, wait_until="domcontentloaded")
    image = page.locator('[data-testid="stImage"] img').first
    expect(image).to_be_visible()
    intro = page.get_by_text(INTRO)
    expect(intro).to_be_visible()
    expect(page.get_by_text("Start here:")).to_be_visible()
    expect(page.get_by_text("The default run, stored")).to_be_visible()
    assert image.evaluate("img => img.complete && img.naturalWidth") >= 1000  # drawn at twice its size
    for element in (image, intro):
        box = element.bounding_box()
        assert box is not None and box["y"] >= 0 and box["y"] + box["height"] <= PROJECTOR["height"], box
    assert image.bounding_box()["width"] >= 400  # a chart one can read, not a thumbnail
    _shot(page, "first_screen")
    wait_idle(page)  # let the default sweep finish before the next test shares the server


def test_projector_presentation_mode_one_chart_per_row_kept_on_the_next_page(projector: Page, projector_url):
    page = projector
    page.goto(f"{projector_url}/?data=wine&trials=2", wait_until="domcontentloaded")
    _charts(page, 4)
    wait_idle(page)
    switch = _presentation_switch(page)
    expect(switch).not_to_be_checked()
    page.locator('[data-testid="stSidebar"]').get_by_text("Presentation mode").click()
    expect(switch).to_be_checked()
    wait_idle(page)
    charts = page.locator('[data-testid="stPlotlyChart"]')
    expect(charts.first.locator(".legendtext").first).to_have_css("font-size", "16px")
    banner = page.locator('[data-testid="stAlert"]', has_text="evaluation sandbox").first.bounding_box()  # full width
    boxes = [charts.nth(i).bounding_box() for i in range(4)]
    for box in boxes:  # full width, one per row
        assert box["width"] >= 0.9 * banner["width"], (box, banner)
    assert all(abs(b["x"] - boxes[0]["x"]) < 2 for b in boxes)
    assert all(b["y"] >= a["y"] + a["height"] - 1 for a, b in itertools.pairwise(boxes))
    for i in range(4):
        chart = charts.nth(i)
        chart.scroll_into_view_if_needed()
        sizes = chart.locator(".legendtext").evaluate_all(
            "els => els.map(e => parseFloat(getComputedStyle(e).fontSize))")
        assert sizes and min(sizes) >= 16, sizes
        _tags_apart_right_of_the_plot(chart)
    svm = charts.filter(has=page.locator(".gtitle", has_text="SVM"))
    svm.evaluate("el => el.scrollIntoView({block: 'start'})")
    page.wait_for_timeout(500)
    _shot(page, "presentation_svm")
    charts.first.evaluate("el => el.scrollIntoView({block: 'start'})")
    page.wait_for_timeout(500)
    _shot(page, "presentation_explore")

    page.locator('[data-testid="stSidebar"]').get_by_role("link", name="Sample size").click()
    expect(page.get_by_role("heading", name="How many rows does each mechanism need?")).to_be_visible()
    expect(_presentation_switch(page)).to_be_checked()  # kept for the session
    _run_sample_size(page)
    chart = page.locator('[data-testid="stPlotlyChart"]').first
    expect(chart.locator(".legendtext").first).to_have_css("font-size", "16px")
    chart.evaluate("el => el.scrollIntoView({block: 'start'})")
    page.wait_for_timeout(500)
    _shot(page, "presentation_sample_size")
    page.locator('[data-testid="stSidebar"]').get_by_text("Presentation mode").click()  # off again
    expect(_presentation_switch(page)).not_to_be_checked()
    wait_idle(page)


#: Every page of the app (sidebar link, its heading, how many charts it draws at least once settled).
WALK = (("Explore", "Explore the privacy", 4), ("Data", "Data and preprocessing", 1),
        ("Sample size", "How many rows does each mechanism need?", 1),
        ("Inspect a mechanism", "Inspect a mechanism", 1), ("Papers", "Papers:", 1), ("Privacy basics", None, 0),
        ("Learn", "Learn", 0), ("Audit", None, 0))
#: Text cut off on screen: labels, legends, tabs, metrics, chips, select values, buttons, captions and headings whose
#: content is wider than their box (clipped or ellipsised), a tab bar that scrolls (tabs out of sight), and chart
#: titles or legend entries outside their chart.
CUT_OFF = """() => {
  const bad = [];
  const clipped = e => e.scrollWidth > e.clientWidth + 1;
  const text = e => (e.value || e.textContent || '').trim().slice(0, 70);
  const selectors = ['[data-testid="stWidgetLabel"] p', '[data-testid="stMetricLabel"] p',
    '[data-testid="stMetricLabel"] .stMarkdownEllipsis', '[data-testid="stMetricValue"] p',
    '[data-testid="stMetricValue"] .stMarkdownEllipsis', '[data-tag] span[title]', '[role="combobox"]',
    'button[role="tab"] p', '[data-testid="stButton"] p', '[data-testid="stCaptionContainer"] p',
    'h1', 'h2', 'h3', '[data-testid="stPageLink"] span', '[data-testid="stExpander"] summary p',
    '[data-testid="stRadio"] label p', '[data-testid="stCheckbox"] label p'];
  for (const sel of selectors) for (const e of document.querySelectorAll(sel)) {
    if (!e.getClientRects().length || e.closest('template')) continue;
    if (clipped(e)) bad.push(`${sel}: "${text(e)}" (${e.scrollWidth} > ${e.clientWidth} px)`);
  }
  for (const list of document.querySelectorAll('[role="tablist"]'))
    if (clipped(list)) bad.push(`tab bar scrolls: "${text(list)}"`);
  for (const chart of document.querySelectorAll('[data-testid="stPlotlyChart"]')) {
    const svg = chart.querySelector('.main-svg');
    if (!svg) continue;
    const box = svg.getBoundingClientRect();
    for (const t of chart.querySelectorAll('.legendtext, .gtitle, .xtitle, .ytitle')) {
      const r = t.getBoundingClientRect();
      if (r.width && (r.left < box.left - 1 || r.right > box.right + 1)) bad.push(`chart text outside: "${text(t)}"`);
    }
  }
  return bad;
}"""


def test_projector_walk_every_page_in_presentation_mode_cuts_off_no_text(projector: Page, projector_url):
    """Every page, in presentation mode, at 1280×800: no label, legend, tab, metric, chip, select value, button,
    caption or heading is cut off (measured: content width against box width), and the Papers tab bar shows all
    its tabs. Screenshots: projector_walk_<page>.png (the first screen of each page)."""
    page = projector
    page.goto(f"{projector_url}/?data=wine&trials=1", wait_until="domcontentloaded")
    _charts(page, 4)
    wait_idle(page)
    page.locator('[data-testid="stSidebar"]').get_by_text("Presentation mode").click()
    expect(_presentation_switch(page)).to_be_checked()
    wait_idle(page)
    found: dict[str, list[str]] = {}
    for link, heading, charts in WALK:
        if link != "Explore":
            page.locator('[data-testid="stSidebar"]').get_by_role("link", name=link).click()
        if heading:
            expect(page.get_by_role("heading", name=re.compile(re.escape(heading))).first).to_be_visible()
        if charts:
            expect(page.locator('[data-testid="stPlotlyChart"] .main-svg').nth(charts - 1)).to_be_attached()
        wait_idle(page)
        if link == "Sample size":  # a sweep that outlasts its page run streams: measure its last drawing
            wait_sweep_done(page)
        if link in ("Explore", "Sample size", "Inspect a mechanism", "Papers"):  # the pages with the switch
            expect(_presentation_switch(page)).to_be_checked()  # kept for the session
        page.wait_for_timeout(800)  # fonts and charts settle
        name = link.lower().replace(" ", "_")
        _shot(page, f"walk_{name}")
        found[link] = page.evaluate(CUT_OFF)
        if charts:  # and the first chart, scrolled to the top of the screen
            page.locator('[data-testid="stPlotlyChart"]').first.evaluate("el => el.scrollIntoView({block: 'start'})")
            page.wait_for_timeout(500)
            _shot(page, f"walk_{name}_chart")
            found[link] += page.evaluate(CUT_OFF)
        if link == "Papers":
            tabs = page.get_by_role("tab")
            assert tabs.count() >= 7
            for i in range(tabs.count()):  # every tab in sight: none behind a scroll arrow
                box = tabs.nth(i).bounding_box()
                assert box is not None and box["x"] + box["width"] <= PROJECTOR["width"], (i, box)
    assert not any(found.values()), {k: v for k, v in found.items() if v}
