"""The lecturer's walk of issues 14 and 20, end to end in headless Chromium at projector size (1280×800): five lesson
steps, one test each.

1. privacy costs accuracy (the first screen: one sentence and a chart of the default run without scrolling; Explore's
privacy–utility charts, then in presentation mode, one per row); 2. some published mechanisms are not private (an
invalid curve styled as such on Explore, the Audit's SN preset proves SN is NOT 1-DP); 3. students try their own CSV
(upload, switch back to a built-in dataset, the ledger is green again); 4. what δ and the neighbouring relation mean
(the Privacy basics page); 5. two mechanisms at one ε exported for a slide (a PNG with its caption).
Screenshots of every step go to test-artifacts/lesson_*.png (full page, 1280 px wide).
"""

from __future__ import annotations

import json
import re
import struct

import pytest
from playwright.sync_api import Page, expect
from test_e2e import (  # noqa: F401  (the browser fixtures: Debian's Chromium)
    SHOT_DIR,
    TIMEOUT_MS,
    _serve,
    browser_type_launch_args,
    open_expander,
    wait_idle,
)

pytestmark = pytest.mark.browser

#: A classroom projector.
PROJECTOR = {"width": 1280, "height": 800}


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args):
    """The whole walk runs at projector size."""
    return {**browser_context_args, "viewport": PROJECTOR}


def shot(page: Page, name: str) -> None:
    """Full-page screenshot at the projector's width (Streamlit scrolls inside its main container, so the viewport
    grows to fit it for the picture, then goes back to 1280×800)."""
    height = page.evaluate("document.querySelector('[data-testid=\"stMain\"]')?.scrollHeight || 800")
    page.set_viewport_size({"width": PROJECTOR["width"], "height": max(PROJECTOR["height"], int(height))})
    page.mouse.move(2, 2)
    page.wait_for_timeout(800)
    page.screenshot(path=str(SHOT_DIR / f"{name}.png"), full_page=True)
    page.set_viewport_size(PROJECTOR)

@pytest.fixture(scope="module")
def lesson_url():
    """One server for the whole walk (log: test-artifacts/streamlit_lesson.log)."""
    yield from _serve("streamlit_lesson.log")


EXPLORE_HEADING = re.compile(r"^Explore the privacy–utility trade.off$")  # a non-breaking hyphen
#: The ledger's line under a non-private step (pages/ui/charts.py show_ledger).
LEDGER_RED = "A non-private step voids the end-to-end guarantee"
#: Small and fast: the Wine data, two trials per point.
WINE = "data=wine&trials=2"


def _charts_drawn(page: Page, count: int = 4) -> None:
    charts = page.locator('[data-testid="stPlotlyChart"]')
    expect(charts).to_have_count(count)
    for i in range(count):  # drawn: the plot area and at least one curve or point in it
        expect(charts.nth(i).locator(".main-svg").first).to_be_visible()
        expect(charts.nth(i).locator(".scatterlayer .trace path").first).to_be_attached()


def _main(page: Page):
    return page.locator('[data-testid="stMain"]')


def _no_traceback(page: Page) -> None:
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG file"
    return struct.unpack(">II", data[16:24])


def _in_first_screen(page: Page, locator) -> None:
    box = locator.bounding_box()
    assert box is not None and box["y"] >= 0 and box["y"] + box["height"] <= PROJECTOR["height"], box


def test_lesson_1_privacy_costs_accuracy(page: Page, lesson_url):
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(f"{lesson_url}/?{WINE}", wait_until="domcontentloaded")
    expect(page.get_by_role("heading", name=EXPLORE_HEADING)).to_be_visible()
    # the cold open: what the app is and where to start, without scrolling; the stored chart is Adult's default run,
    # so on Wine it is not drawn beside Wine's own curves (issue 32 item 8)
    intro = page.get_by_text("compares differentially private ways to compute PCA")
    expect(intro).to_be_visible()
    _in_first_screen(page, intro)
    page.screenshot(path=str(SHOT_DIR / "lesson_1_first_screen.png"))
    _charts_drawn(page)
    first = page.locator('[data-testid="stPlotlyChart"]').first
    expect(first.locator(".gtitle")).to_contain_text("Captured variance")
    expect(first.locator(".scatterlayer .trace").first).to_be_visible()  # curves over the ε axis
    expect(first.locator(".xtitle")).to_contain_text("ε")
    wait_idle(page)  # then the absence (the run may still be drawing)
    expect(page.locator('[data-testid="stImage"] img')).to_have_count(0)
    _no_traceback(page)
    shot(page, "lesson_1_explore")

    # presentation mode for the back row: each chart full width, larger text; off again for the next step
    sidebar = page.locator('[data-testid="stSidebar"]')
    sidebar.get_by_text("Presentation mode").click()
    charts = page.locator('[data-testid="stPlotlyChart"]')
    expect(charts.first.locator(".legendtext").first).to_have_css("font-size", "16px")
    wait_idle(page)
    widths = [charts.nth(i).bounding_box()["width"] for i in range(4)]
    banner = page.locator('[data-testid="stAlert"]', has_text="evaluation sandbox").first.bounding_box()
    assert min(widths) >= 0.9 * banner["width"], (widths, banner)  # one chart per row
    _no_traceback(page)
    shot(page, "lesson_1_explore_presentation")
    sidebar.get_by_text("Presentation mode").click()
    expect(charts.first.locator(".legendtext").first).to_have_css("font-size", "12px")
    wait_idle(page)


def test_lesson_2_invalid_mechanism_is_unmistakable(page: Page, lesson_url):
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(f"{lesson_url}/?{WINE}&mech=analyze_gauss,sn_imtiaz", wait_until="domcontentloaded")
    expect(page.get_by_role("heading", name=EXPLORE_HEADING)).to_be_visible()
    _charts_drawn(page)
    # one δ statement, naming its ε
    expect(page.locator('[data-testid="stAlertContentError"]', has_text="claimed-invalid").first).to_contain_text(
        "At ε = 0.1 it is not (ε, δ)-DP for any δ < 0.0952")
    wait_idle(page)
    shot(page, "lesson_2_explore_invalid")
    first = page.locator('[data-testid="stPlotlyChart"]').first
    invalid_legend = first.locator(".legend .traces", has_text="NOT PRIVATE")
    if invalid_legend.count() == 0:
        pytest.xfail("waiting for the chart styling (dashed red 'NOT PRIVATE' legends, pages/ui/charts.py)")
    # dashed: the legend's line sample of the invalid curve has a dash pattern
    dash = invalid_legend.first.locator(".legendlines path").first.evaluate(
        "el => getComputedStyle(el).strokeDasharray")
    assert dash not in ("", "none"), f"the NOT PRIVATE curve is drawn solid (dash: {dash!r})"

    page.locator('[data-testid="stSidebar"]').get_by_role("link", name="Audit").click()
    expect(page.get_by_role("heading", name="Privacy audit")).to_be_visible()
    wait_idle(page)
    page.get_by_role("button", name="SN Wishart", exact=True).click()  # "invalid · support attack" is its caption
    verdict = page.locator('[data-testid="stAlertContentError"]', has_text="The audit proves this mechanism is NOT")
    expect(verdict).to_contain_text("NOT 1-DP")
    expect(verdict).to_contain_text("Audit at ε = 1, 95 % confidence: δ ≥")
    expect(page.get_by_text("Theory for this exhibit: At ε = 1 this mechanism is not (ε, δ)-DP for any δ < 0.632"))\
        .to_be_visible()
    wait_idle(page)
    _no_traceback(page)
    shot(page, "lesson_2_audit_sn")


def test_lesson_3_own_csv_then_back_to_a_builtin_dataset_is_green_again(page: Page, lesson_url):
    page.set_default_timeout(TIMEOUT_MS)
    csv = "height,weight,age,group\n" + "\n".join(
        f"{150 + (i * 7) % 40},{50 + (i * 11) % 45},{18 + (i * 5) % 60},{'ab'[i % 2]}" for i in range(60)) + "\n"
    page.goto(f"{lesson_url}/data?data=wine", wait_until="domcontentloaded")
    expect(page.locator('[data-testid="stMetricValue"]').first).to_have_text("178")
    uploader = page.locator('[data-testid="stFileUploader"] input[type="file"]').first
    uploader.set_input_files({"name": "students.csv", "mimeType": "text/csv", "buffer": csv.encode()})
    expect(page.locator('[data-testid="stMetricValue"]').first).to_have_text("60")
    main = _main(page)
    # bounds read off the uploaded file: the ledger turns red
    expect(main.get_by_text(LEDGER_RED)).to_be_visible()
    wait_idle(page)
    shot(page, "lesson_3_data_upload")

    page.get_by_role("combobox", name="Dataset").click()
    page.get_by_role("option", name="Wine (UCI)").first.click()
    expect(page.locator('[data-testid="stMetricValue"]').first).to_have_text("178")
    wait_idle(page)
    _no_traceback(page)
    shot(page, "lesson_3_data_back_to_wine")
    # green again: Wine's public schema, no step of the upload's preprocessing carried over
    expect(main.get_by_text("public schema: documented per-feature ranges").first).to_be_visible()
    expect(main.get_by_text("— NOT private")).to_have_count(0)
    expect(main.get_by_text(LEDGER_RED)).to_have_count(0)

    page.locator('[data-testid="stSidebar"]').get_by_role("link", name="Explore").click()
    expect(page.get_by_role("heading", name=EXPLORE_HEADING)).to_be_visible()
    _charts_drawn(page)
    wait_idle(page)  # then the absence: before the run is over, the text could still be on its way
    expect(page.get_by_text("no release on this data is end-to-end private")).to_have_count(0)
    shot(page, "lesson_3_explore_green_again")


def test_lesson_4_privacy_basics(page: Page, lesson_url):
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(f"{lesson_url}/learn", wait_until="domcontentloaded")
    expect(page.get_by_role("heading", name="Glossary")).to_be_visible()
    _main(page).get_by_role("link", name="Privacy basics").first.click()
    expect(page.get_by_role("heading", name="Privacy basics")).to_be_visible()
    wait_idle(page)

    # δ = 1/n: a red teaching option that publishes a real record
    page.get_by_text("δ = 1/n = 0.00562 — TEACHING ONLY, NOT SAFE").click()
    expect(page.get_by_text("Teaching option: δ = 1/n is NOT a safe setting.")).to_be_visible()
    expect(page.get_by_text("A real wine's record was published, unchanged")).to_be_visible()
    expect(page.get_by_text("(0, 0.00562)-DP under replace-one")).to_be_visible()
    expect(page.locator('[data-testid="stDataFrame"]').first).to_be_visible()

    # replace-one vs add/remove side by side: σ and Δ₂ from the mechanism, a chart per relation
    metrics = page.locator('[data-testid="stMetric"]')
    sensitivities = metrics.filter(has_text="Sensitivity Δ₂").locator('[data-testid="stMetricValue"]')
    expect(sensitivities).to_have_text(["1.414", "1"])
    sigmas = metrics.filter(has_text="Noise σ").locator('[data-testid="stMetricValue"]')
    expect(sigmas).to_have_text(["5.276", "3.731"])
    chart = page.locator('[data-testid="stPlotlyChart"]').nth(1)
    expect(chart.locator(".legendtext", has_text="replace-one (n public)")).to_be_visible()
    expect(chart.locator(".legendtext", has_text="add/remove-one")).to_be_visible()
    expect(page.get_by_text("Guarantee: (1, 1e-05)-DP, add/remove-one.")).to_be_visible()
    wait_idle(page)
    _no_traceback(page)
    shot(page, "lesson_4_basics")

    # the claimed-invalid step links to the Audit's SN preset, which runs at once
    page.get_by_role("link", name="Run the Audit's SN preset").click()
    expect(page.get_by_role("heading", name="Privacy audit")).to_be_visible()
    expect(page.locator('[data-testid="stAlertContentError"]', has_text="The audit proves this mechanism is NOT 1-DP"))\
        .to_be_visible()
    wait_idle(page)
    expect(page).not_to_have_url(re.compile("preset="))  # used once: a rerun does not repeat it
    shot(page, "lesson_4_audit_from_basics")


def test_lesson_5_two_mechanisms_at_one_epsilon_exported_with_a_caption(page: Page, lesson_url):
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(f"{lesson_url}/?{WINE}&eps=1~1&mech=analyze_gauss,laplace", wait_until="domcontentloaded")
    expect(page.get_by_role("heading", name=EXPLORE_HEADING)).to_be_visible()
    _charts_drawn(page)
    wait_idle(page)
    open_expander(page, page.locator("summary").filter(has_text="Downloads").first)
    png_button = page.get_by_role("button", name="Captured variance (ratio to optimum) (PNG)")
    html_button = page.get_by_role("button", name="Captured variance (ratio to optimum) (HTML)")
    if png_button.count() == 0 and html_button.count() == 0:
        pytest.xfail("waiting for slide-ready exports with captions (pages/ui/export.py)")
    expect(png_button).to_be_enabled()
    with page.expect_download(timeout=120_000) as info:
        png_button.click()
    download = info.value
    assert download.suggested_filename.endswith(".png") and ".csv." not in download.suggested_filename
    target = SHOT_DIR / "lesson_5_export.png"
    download.save_as(target)
    data = target.read_bytes()
    assert target.exists() and len(data) > 10_000
    width, height = _png_size(data)
    assert width > 1000 and height > 1000  # rendered at twice the export size: slide-sharp

    with page.expect_download(timeout=60_000) as info:
        html_button.click()
    html = info.value.path().read_text()
    # the caption printed inside the figure (the title's subtitle) says what the slide shows
    found = re.search(r'"subtitle":\{.*?"text":"((?:[^"\\]|\\.)*)"', html)
    assert found, "the exported figure has no caption"
    caption = json.loads(f'"{found.group(1)}"')
    for words in ("Wine", "k = ", "δ = ", "neighbours", "trials"):
        assert words in caption, f"the caption {caption!r} does not mention {words!r}"
    wait_idle(page)
    _no_traceback(page)
    shot(page, "lesson_5_explore_downloads")
