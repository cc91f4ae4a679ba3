"""End-to-end: the real `streamlit run` server driven by Playwright in Debian's headless Chromium.

Needs /usr/bin/chromium (never `playwright install`). Skipped without Chromium unless E2E_REQUIRED=1.
Screenshots of every page go to test-artifacts/ (1400×900 viewport, full page). The server is started once per
module, so the first test sees a fresh server (the cold start: legacy pages/ mode, first imports, first sweep).
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from benchmarks._server import serve

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("CHROMIUM_PATH") or shutil.which("chromium") or "/usr/bin/chromium"
SHOT_DIR = Path(os.environ.get("E2E_ARTIFACTS", ROOT / "test-artifacts"))

if not Path(CHROMIUM).exists():
    if os.environ.get("E2E_REQUIRED") == "1":
        raise RuntimeError(f"E2E_REQUIRED=1 but no Chromium at {CHROMIUM}")
    pytest.skip(f"no Chromium at {CHROMIUM}", allow_module_level=True)

from _st_runs import wait_runs_done, watch_runs  # noqa: E402,F401  (watch_runs: for the other files)
from playwright.sync_api import Locator, Page, expect  # noqa: E402

TIMEOUT_MS = int(os.environ.get("E2E_TIMEOUT_MS", "60000"))
expect.set_options(timeout=TIMEOUT_MS)
VIEWPORT = {"width": 1400, "height": 900}
#: Records, from the first byte of the page on, whether Streamlit's built-in page list (the file names of pages/)
#: was ever rendered, and when the app's own links and the first chart appeared.
WATCH_FIRST_PAINT = """
window.__nav = {builtin: false, links: null, chart: null, t0: performance.now()};
new MutationObserver(() => {
  const w = window.__nav;
  if (document.querySelector('[data-testid="stSidebarNav"], [data-testid="stSidebarNavItems"]')) w.builtin = true;
  if (w.links === null && document.querySelector('[data-testid="stSidebar"] [data-testid="stPageLink"]'))
    w.links = performance.now() - w.t0;
  if (w.chart === null && document.querySelector('[data-testid="stPlotlyChart"] .scatterlayer .trace'))
    w.chart = performance.now() - w.t0;
}).observe(document, {childList: true, subtree: true});
"""

EXPLORE_HEADING = re.compile(r"^Explore the privacy–utility trade.off$")  # a non-breaking hyphen


def _serve(log_name: str):
    """Start `streamlit run app.py` on a free port (benchmarks/_server.py); yields its URL, stops it afterwards. Its
    output goes to ``SHOT_DIR/log_name``."""
    with serve(log=SHOT_DIR / log_name, start_timeout=60) as (url, _pid):
        yield url


@pytest.fixture(scope="module")
def app_url():
    yield from _serve("streamlit_core.log")


@pytest.fixture
def fresh_url():
    """A server of its own (its first request decides how Streamlit runs the pages)."""
    yield from _serve("streamlit_fresh.log")


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    return {**browser_type_launch_args, "executable_path": CHROMIUM,
            "args": ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--disable-background-networking", "--disable-component-update", "--disable-sync",
                     "--no-first-run"]}


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args):
    return {**browser_context_args, "viewport": VIEWPORT}


def shot(page: Page, name: str) -> None:
    """Full-page screenshot: Streamlit scrolls inside its main container, so grow the viewport to fit it."""
    height = page.evaluate("document.querySelector('[data-testid=\"stMain\"]')?.scrollHeight || 800")
    page.set_viewport_size({"width": VIEWPORT["width"], "height": max(VIEWPORT["height"], int(height))})
    page.wait_for_timeout(800)
    page.screenshot(path=str(SHOT_DIR / f"{name}.png"), full_page=True)
    page.set_viewport_size(VIEWPORT)


def wait_idle(page: Page) -> None:
    """Wait until every script run the page asked for is over and drawn.

    The DOM alone cannot tell: Streamlit 1.67 shows its 'Running…' status widget only once a run has lasted 500 ms,
    and ``stApp``'s ``data-test-script-state`` turns "running" only when the server answers, so right after a click
    (and in a run's first half second) the page looks idle. The run watcher (:mod:`_st_runs`, added to every browser
    context) counts the full reruns the page sent and the runs the server started and finished. The first 300 ms
    leave time to an action whose rerun request goes out late (a file upload posts the file first)."""
    page.wait_for_timeout(300)
    wait_runs_done(page, TIMEOUT_MS)
    expect(page.locator('[data-testid="stApp"]')).to_have_attribute("data-test-script-state", "notRunning")
    expect(page.locator('[data-testid="stStatusWidget"]')).to_have_count(0)


#: The caption of a sweep that finished (pages/ui/sweep.py: "N releases in X s", also "… (all reused …)").
SWEEP_DONE = re.compile(r"^\d+ releases in \d+\.\d s")


def wait_sweep_done(page: Page) -> None:
    """Wait until the page's sweep finished and its last run is drawn. A sweep that outlasts its page run (Sample
    size streams its releases) is drawn by runs the server starts itself, every 1.5 s until it ends: charts read
    before that are redrawn under the reader. The first wait lets the run of the action taken (e.g. "Run sweep")
    replace the caption of an earlier sweep."""
    wait_idle(page)
    expect(page.get_by_text(SWEEP_DONE).first).to_be_visible()
    wait_idle(page)


def open_expander(page: Page, summary: Locator) -> None:
    """Open the expander whose ``<summary>`` is ``summary`` (no-op when it is open already). An expander whose label
    changed (e.g. the bulk panel's "1 of 5 columns match") is a new one, closed: the caller waits for its label."""
    expect(summary).to_be_visible()
    wait_idle(page)
    details = summary.locator("xpath=ancestor::details[1]")
    for _ in range(3):  # a click that lands while a rerun redraws the page can be lost: click again once idle
        if details.get_attribute("open") is None:
            summary.click()
        try:
            expect(details).to_have_attribute("open", re.compile(".*"), timeout=15_000)
            return
        except AssertionError:
            wait_idle(page)
    expect(details).to_have_attribute("open", re.compile(".*"))


def test_first_load_shows_the_navigation_and_the_charts(page: Page, app_url):
    """Fresh server, first visitor: the app's links (never file names), then four charts without a click."""
    page.set_default_timeout(TIMEOUT_MS)
    page.add_init_script(WATCH_FIRST_PAINT)
    page.goto(app_url, wait_until="domcontentloaded")
    sidebar = page.locator('[data-testid="stSidebar"]')
    expect(sidebar.get_by_role("link", name="Explore")).to_be_visible()
    for name in ("Data", "Sample size", "Inspect a mechanism", "Papers", "Learn", "Audit"):
        expect(sidebar.get_by_role("link", name=name)).to_be_visible()
    charts = page.locator('[data-testid="stPlotlyChart"]')
    expect(charts).to_have_count(4)
    for i in range(4):
        expect(charts.nth(i).locator(".scatterlayer .trace").first).to_be_visible()
    expect(page.locator(".annotation-text", has_text="majority").first).to_be_visible()
    wait_idle(page)
    nav = page.evaluate("window.__nav")
    assert nav["builtin"] is False, "Streamlit's built-in page list (file names) was rendered"
    assert nav["links"] is not None and nav["chart"] is not None and nav["links"] < nav["chart"]
    assert "data=adult" in page.url and "k=5" in page.url
    for name in ("ui", "app", "sample size"):  # the legacy list's names
        expect(sidebar.get_by_role("link", name=name, exact=True)).to_have_count(0)
    (SHOT_DIR / "first_load_timing.txt").write_text(
        f"links after {nav['links'] / 1000:.1f} s, first chart after {nav['chart'] / 1000:.1f} s\n")
    shot(page, "first_load_explore")


def test_first_request_to_a_page_url_shows_the_same_navigation(page: Page, fresh_url):
    """A fresh server whose first request opens /data runs the page without app.py (legacy pages/ mode): still the
    app's links, never the file names, and the links work."""
    page.set_default_timeout(TIMEOUT_MS)
    page.add_init_script(WATCH_FIRST_PAINT)
    page.goto(f"{fresh_url}/data?data=wine", wait_until="domcontentloaded")
    expect(page.get_by_role("heading", name="Data and preprocessing")).to_be_visible()
    sidebar = page.locator('[data-testid="stSidebar"]')
    expect(sidebar.get_by_role("link", name="Papers")).to_be_visible()
    wait_idle(page)
    sidebar.get_by_role("link", name="Explore").click()
    expect(page.get_by_role("heading", name=EXPLORE_HEADING)).to_be_visible()
    expect(page.locator('[data-testid="stPlotlyChart"]')).to_have_count(4)
    wait_idle(page)
    assert page.evaluate("window.__nav")["builtin"] is False
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)


def test_data_then_explore_sweep_on_wine(page: Page, app_url):
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(f"{app_url}/data?data=wine&k=2", wait_until="domcontentloaded")
    expect(page.get_by_role("heading", name="Data and preprocessing")).to_be_visible()
    expect(page.locator('[data-testid="stMetricValue"]').first).to_have_text("178")
    expect(page.locator('[data-testid="stPlotlyChart"] .main-svg').first).to_be_visible()
    wait_idle(page)
    shot(page, "page_data")

    page.locator('[data-testid="stSidebar"]').get_by_role("link", name="Explore").click()
    expect(page.get_by_role("heading", name=EXPLORE_HEADING)).to_be_visible()
    page.get_by_role("button", name="Run sweep").click()
    charts = page.locator('[data-testid="stPlotlyChart"]')
    expect(charts).to_have_count(4)
    for i in range(4):
        expect(charts.nth(i).locator(".scatterlayer .trace").first).to_be_visible()
    expect(page.get_by_text("evaluation sandbox")).to_be_visible()
    assert "k=2" in page.url and "data=wine" in page.url  # settings are in the URL
    wait_idle(page)
    shot(page, "page_explore")


def test_sample_size_and_other_pages(page: Page, app_url):
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(f"{app_url}/sample_size?data=wine&trials=1", wait_until="domcontentloaded")
    page.get_by_role("button", name="Run sweep").click()
    expect(page.locator('[data-testid="stPlotlyChart"] .scatterlayer .trace').first).to_be_visible()
    wait_idle(page)
    shot(page, "page_sample_size")
    for path, name in (("inspect", "page_inspect"), ("learn", "page_learn"), ("audit", "page_audit")):
        assert (ROOT / "pages" / f"{path}.py").exists(), f"pages/{path}.py is missing"
        page.goto(f"{app_url}/{path}", wait_until="domcontentloaded")
        expect(page.locator('[data-testid="stMainBlockContainer"] h1').first).to_be_visible()
        wait_idle(page)
        expect(page.locator('[data-testid="stException"]')).to_have_count(0)
        shot(page, name)


def test_papers_page_and_a_quick_rerun(page: Page, app_url):
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(f"{app_url}/papers", wait_until="domcontentloaded")
    expect(page.get_by_role("heading", name="Papers: what the source papers claim, and what we found")).to_be_visible()
    from dpcore.evaluation import reproduce

    # one tab a reproduction, and CoinPress's tables (beyond the seed papers)
    expect(page.locator('[data-testid="stTab"]')).to_have_count(len(reproduce.EXPERIMENTS) + 1)
    # the stored figure, drawn by Plotly from its stored HTML (issue #33 item 3: the PNG's text was 8–9 px)
    expect(page.locator('[data-testid="stPlotlyChart"] .scatterlayer .trace').first).to_be_visible()
    expect(page.locator('[data-testid="stMarkdownContainer"] td', has_text="agrees").first).to_be_visible()
    wait_idle(page)
    shot(page, "page_papers")
    page.get_by_role("button", name="Re-run a quick version").first.click()
    expect(page.get_by_text("Quick run finished")).to_be_visible()
    expect(page.locator('[data-testid="stPlotlyChart"] .scatterlayer .trace').first).to_be_visible()
    wait_idle(page)
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)
    shot(page, "page_papers_quick_rerun")


def test_singhal_steinke_showcase(page: Page, app_url):
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(f"{app_url}/inspect", wait_until="domcontentloaded")
    expect(page.get_by_role("heading", name="Inspect a mechanism")).to_be_visible()
    wait_idle(page)
    picker = page.get_by_role("combobox", name="Mechanism (grouped by guarantee, strongest first)")
    picker.click()
    page.get_by_role("option", name="Singhal–Steinke approximate subspace (DP histogram)", exact=False).click()
    wait_idle(page)
    page.get_by_role("button", name="Load the Singhal–Steinke showcase").click()
    expect(page.get_by_text("Singhal–Steinke showcase: points within")).to_be_visible()
    angle = page.locator('[data-testid="stMetric"]', has_text="Largest angle").locator('[data-testid="stMetricValue"]')
    # the run before the showcase's settings (another dataset) can still be on screen for a moment: wait until the
    # shown angle is below 2° (ss_approx on the showcase: 0.15–0.71°); a wrong release never gets there and fails
    expect(angle).to_have_text(re.compile(r"^[01](\.\d+)?°$"))
    wait_idle(page)
    assert float(angle.inner_text().rstrip("°")) < 2.0
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)
    shot(page, "page_inspect_ss_showcase")


def test_upload_csv_updates_summary_and_bad_csv_errors(page: Page, app_url, tmp_path):
    page.set_default_timeout(TIMEOUT_MS)
    good = "a,b,c,label\n" + "\n".join(f"{i % 7},{(i * 3) % 5},{i % 2},{'xy'[i % 2]}" for i in range(40)) + "\n"
    bad = b"a,b\n1,2,3\n4,5\n"  # ragged row
    page.goto(f"{app_url}/data?data=wine", wait_until="domcontentloaded")
    expect(page.locator('[data-testid="stMetricValue"]').first).to_have_text("178")
    # the table's uploader comes first (the schema editor adds one for schema files below it)
    uploader = page.locator('[data-testid="stFileUploader"] input[type="file"]').first
    uploader.set_input_files({"name": "good.csv", "mimeType": "text/csv", "buffer": good.encode()})
    expect(page.locator('[data-testid="stMetricValue"]').first).to_have_text("40")
    # "label" is guessed as the label column (the page says so), so the features are a, b, c
    expect(page.locator('[data-testid="stMetricValue"]').nth(1)).to_have_text("3")
    expect(page.get_by_text("Guessed: 'label'", exact=False).first).to_be_visible()
    wait_idle(page)
    shot(page, "page_data_upload")
    uploader.set_input_files({"name": "bad.csv", "mimeType": "text/csv", "buffer": bad})
    expect(page.locator('[data-testid="stAlertContentError"]').first).to_contain_text("fields but the header")
    wait_idle(page)  # then the absence: a traceback later in the run would not be on the page yet
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)
    shot(page, "page_data_bad_upload")
