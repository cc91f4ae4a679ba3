"""Every download button of every page, clicked in headless Chromium on a real server: each file arrives, is not
empty and parses as what its name says (CSV, YAML, HTML, PNG) — issue 32.

A download button whose ``data=`` is a callable is run by Streamlit on the click, in a server thread outside the
session: AppTest never runs it, so only a browser shows what it saves. The workspace's callable read
``st.session_state`` there and saved ``settings: {}``, ``mechanisms: {}``, ``uploads: []``. The figure and table
buttons keep their callables (a PNG takes kaleido seconds: built on the click only), closed over values of the run;
this module checks that each of them delivers its file.

Pages without a download button (Inspect, Papers, Learn, Privacy basics, Audit) are counted too: a button added
there without a test here fails :func:`test_no_other_page_has_a_download_button`.
"""

from __future__ import annotations

import html.parser
import io
import json
import re
import struct
from pathlib import Path

import pandas as pd
import pytest
import yaml
from playwright.sync_api import Page, expect
from test_e2e import (  # noqa: F401  (the browser fixtures: Debian's Chromium)
    TIMEOUT_MS,
    _serve,
    browser_context_args,
    browser_type_launch_args,
    open_expander,
    wait_idle,
    wait_sweep_done,
)

pytestmark = pytest.mark.browser

#: Small and fast: the Wine data, k = 2, two fast mechanisms, one trial, two ε values.
FAST = "data=wine&k=2&trials=1&eps=1~2&mech=laplace,analyze_gauss"
BUTTONS = '[data-testid="stDownloadButton"] button'
#: A PNG is drawn by kaleido (Chromium) on the click: seconds each, more on a loaded machine.
PNG_TIMEOUT_MS = 180_000


@pytest.fixture(scope="module")
def downloads_url():
    """One server for this module (log: test-artifacts/streamlit_downloads.log)."""
    yield from _serve("streamlit_downloads.log")


def _no_traceback(page: Page) -> None:
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)


def _open_expanders(page: Page, label: str) -> None:
    """Open every expander whose label contains ``label`` (download buttons in a closed one are not clickable)."""
    wait_idle(page)
    summaries = page.locator("summary").filter(has_text=label)
    for i in range(summaries.count()):
        open_expander(page, summaries.nth(i))


class _Html(html.parser.HTMLParser):
    tags: set[str]

    def reset(self) -> None:
        super().reset()
        self.tags = set()

    def handle_starttag(self, tag, attrs) -> None:
        self.tags.add(tag)


def check_file(name: str, data: bytes) -> str:
    """Check that a downloaded file is not empty and parses as its extension says; returns a one-line summary."""
    assert data, f"{name}: empty file"
    ext = Path(name).suffix.lower()
    if ext == ".csv":
        frame = pd.read_csv(io.BytesIO(data))
        assert len(frame) and len(frame.columns) > 1, f"{name}: {frame.shape}"
        return f"{name}: CSV {frame.shape}"
    if ext in (".yaml", ".yml"):
        content = yaml.safe_load(data)
        assert isinstance(content, dict) and content, f"{name}: not a YAML mapping"
        return f"{name}: YAML {sorted(content)[:6]}"
    if ext == ".html":
        parser = _Html()
        parser.feed(data.decode("utf-8"))
        assert {"html", "body", "script"} <= parser.tags and b"plotly" in data.lower(), f"{name}: {parser.tags}"
        return f"{name}: HTML {len(data)} bytes"
    if ext == ".png":
        assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{name}: not a PNG"
        width, height = struct.unpack(">II", data[16:24])
        assert width > 200 and height > 200 and len(data) > 5_000, (name, width, height, len(data))
        return f"{name}: PNG {width}×{height}"
    if ext == ".py":  # a runnable chart export (issue 35): Python that compiles
        compile(data.decode("utf-8"), name, "exec")
        return f"{name}: Python {len(data)} bytes"
    if ext == ".ipynb":  # a notebook (nbformat 4) whose code cells compile
        notebook = json.loads(data)
        assert notebook["nbformat"] == 4 and notebook["cells"], f"{name}: not a notebook"
        for cell in notebook["cells"]:
            if cell["cell_type"] == "code":
                compile("".join(cell["source"]), name, "exec")
        return f"{name}: notebook {len(notebook['cells'])} cells"
    raise AssertionError(f"{name}: a download of an unexpected kind (add its check here)")


def click_every_download(page: Page) -> dict[str, bytes]:
    """Click every download button on the page (all of them enabled); {file name: bytes}, each file checked. A
    button with a tooltip has a hidden twin in the DOM: the visible ones are the buttons."""
    buttons = page.locator(BUTTONS).filter(visible=True)
    files: dict[str, bytes] = {}
    for i in range(buttons.count()):
        button = buttons.nth(i)
        label = button.inner_text()
        expect(button).to_be_enabled()
        timeout = PNG_TIMEOUT_MS if "PNG" in label else TIMEOUT_MS
        with page.expect_download(timeout=timeout) as info:
            button.click()
        download = info.value
        assert download.failure() is None, (label, download.failure())
        data = download.path().read_bytes()
        check_file(download.suggested_filename, data)
        files[download.suggested_filename] = data
    wait_idle(page)
    _no_traceback(page)
    return files


def _goto(page: Page, url: str, heading: str) -> None:
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(url, wait_until="domcontentloaded")
    expect(page.get_by_role("heading", name=re.compile(heading)).first).to_be_visible()
    wait_idle(page)


def _run_sweep(page: Page) -> None:
    """Press "Run sweep" and wait until the sweep finished and is drawn (its releases reused from the automatic run
    the settings may have started)."""
    run = page.get_by_role("button", name="Run sweep")
    if run.is_visible():
        run.click()
    wait_sweep_done(page)  # a sweep that outlasts the page run streams: the downloads are those of its last run
    expect(page.locator('[data-testid="stPlotlyChart"] .scatterlayer .trace').first).to_be_attached()


def test_data_page_downloads(page: Page, downloads_url):
    """The classroom example, the workspace (with this session's settings in it), and an upload's schema."""
    _goto(page, f"{downloads_url}/data?{FAST}", "^Data and preprocessing")
    _open_expanders(page, "Workspace: save or restore")
    files = click_every_download(page)
    assert set(files) == {"classroom_example.csv", "dpcore-workspace.yaml"}, sorted(files)
    workspace = yaml.safe_load(files["dpcore-workspace.yaml"])
    assert workspace["settings"]["dp_k"] == 2 and workspace["settings"]["dp_trials"] == 1, workspace["settings"]
    assert {m for ms in workspace["mechanisms"].values() for m in ms} == {"laplace", "analyze_gauss"}
    assert "wine" in workspace["datasets"]

    example = files["classroom_example.csv"]
    page.locator('[data-testid="stFileUploader"] input[type="file"]').first.set_input_files(
        {"name": "classroom.csv", "mimeType": "text/csv", "buffer": example})
    expect(page.get_by_text("Uploaded file: classroom.csv")).to_be_visible()
    expect(page.get_by_role("button", name="Download schema (YAML)")).to_be_visible()  # the end of the section
    _open_expanders(page, "Workspace: save or restore")
    files = click_every_download(page)
    assert set(files) == {"classroom_example.csv", "dpcore-workspace.yaml", "classroom_schema.yaml"}, sorted(files)
    assert yaml.safe_load(files["classroom_schema.yaml"])["columns"][0]["name"] == "hours_studied"
    (entry,) = yaml.safe_load(files["dpcore-workspace.yaml"])["uploads"]
    assert entry["file"] == "classroom.csv"


def test_explore_downloads(page: Page, downloads_url):
    """The sweep's table, configuration and workspace, and each of the four charts as HTML, PNG, script and
    notebook."""
    _goto(page, f"{downloads_url}/?{FAST}", "^Explore the privacy")
    _run_sweep(page)
    _open_expanders(page, "Downloads")
    files = click_every_download(page)
    kinds = sorted(Path(name).suffix for name in files)
    assert kinds == [".csv", *[".html"] * 4, *[".ipynb"] * 4, *[".png"] * 4, *[".py"] * 4, ".yaml", ".yaml"], \
        sorted(files)  # the script, the notebook (per chart) and the workspace of issue 35 item 2
    sweep = pd.read_csv(io.BytesIO(next(data for name, data in files.items() if name.endswith(".csv"))))
    assert set(sweep["mechanism"]) >= {"laplace", "analyze_gauss"}
    config = yaml.safe_load(next(data for name, data in files.items() if name.endswith(".yaml")))
    assert "wine" in yaml.safe_dump(config).lower()


def test_sample_size_downloads(page: Page, downloads_url):
    """The chart as HTML and PNG, the sweep's table and the theory table."""
    _goto(page, f"{downloads_url}/sample_size?{FAST}", "^How many rows")
    _run_sweep(page)
    _open_expanders(page, "Downloads")
    files = click_every_download(page)
    assert sorted(Path(name).suffix for name in files) == [".csv", ".csv", ".html", ".png"], sorted(files)


@pytest.mark.parametrize("path", ["inspect", "papers", "learn", "basics", "audit"])
def test_no_other_page_has_a_download_button(page: Page, downloads_url, path):
    """The pages above are every page with a download button: one added elsewhere needs its check here."""
    _goto(page, f"{downloads_url}/{path}?data=wine", ".")
    expect(page.locator(BUTTONS)).to_have_count(0)  # in the DOM, also inside a closed expander or another tab
    _no_traceback(page)
