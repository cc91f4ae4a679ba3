"""Slide-ready exports: the caption printed inside every exported figure, clean file names, the kaleido PNG, and
the downloads of the Explore and Sample size pages."""

from __future__ import annotations

import importlib.util
import io
import itertools
import struct
from pathlib import Path

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest
from streamlit.runtime.media_file_manager import MediaFileManager
from streamlit.testing.v1 import AppTest

from dpcore.evaluation.reporting import export_caption, export_filename, rows_text, text_width_px, wrap_caption
from dpcore.exceptions import InvalidParameterError
from pages.ui import export

APP = str(Path(__file__).resolve().parents[2] / "app.py")
TIMEOUT = 90


# ------------------------------------------------------------------ caption text
def _caption(**overrides) -> str:
    args = {"dataset": "Adult income", "n": 42_842, "k": 5, "delta": 1e-5, "neighbouring": "replace",
            "trials": 5, "band": "sd"}
    return export_caption(**{**args, **overrides})


def test_caption_states_data_settings_and_band():
    text = _caption()
    for part in ("Adult income", "n = 42,842", "k = 5", "δ = 1e-05", "replace-one", "5 trials",
                 "band: mean ± 1 sd over 5 trials"):
        assert part in text, (part, text)
    assert "not a private release" in text
    assert text.count("<br>") == 1  # two lines


def test_caption_band_meaning_follows_the_band():
    assert "band: min–max over 3 trials" in _caption(band="minmax", trials=3)
    assert "over 1 trial" in _caption(trials=1)
    with pytest.raises(InvalidParameterError):
        _caption(band="iqr")


def test_caption_never_states_n_under_add_remove():
    text = _caption(neighbouring="add_remove")
    assert "42,842" not in text and "42842" not in text
    assert "add/remove" in text and "private" in rows_text(42_842, "add_remove")


def test_caption_of_a_sample_size_sweep_names_epsilon_and_the_axis():
    text = _caption(n=None, n_text="n: the subsample sizes on the x axis", epsilon=0.5, delta=1e-10)
    assert "ε = 0.5" in text and "x axis" in text and "δ = 1e-10" in text


def test_sweep_caption_reads_the_shown_sweep():
    from dpcore.evaluation.sweep import SweepConfig

    frame = pd.DataFrame({"dataset": ["wine"] * 2, "n": [125, 125], "mechanism": ["laplace"] * 2})
    config = SweepConfig(mechanisms=["laplace"], epsilons=(0.1, 1.0), deltas=(1e-6,), ks=(3,), trials=4,
                         neighbouring="replace")
    text = export.sweep_caption(config, frame, dataset_id="adult", band="minmax")
    assert "Wine" in text and "Adult" not in text  # the data the sweep ran on, not the current choice
    assert "n = 125" in text and "k = 3" in text and "δ = 1e-06" in text and "min–max over 4 trials" in text
    private_n = SweepConfig(mechanisms=["laplace"], epsilons=(1.0,), ks=(3,), trials=4, neighbouring="add_remove")
    text = export.sweep_caption(private_n, frame, dataset_id="wine", band="sd")
    assert "125" not in text and "add/remove" in text
    text = export.sweep_caption(config, frame.assign(dataset="penguins.csv"), dataset_id="upload", band="sd",
                                sample_size=True)
    assert "uploaded file penguins.csv" in text and "ε = 0.1" in text and "x axis" in text
    assert "NOT private" not in text
    # privacy review: under add/remove the largest size is the exact row count, so the caption says it is not private
    text = export.sweep_caption(private_n, frame, dataset_id="wine", band="sd", sample_size=True)
    assert "x axis" in text and "NOT private under add/remove" in text


# ------------------------------------------------------------------ file names
@pytest.mark.parametrize(("parts", "ext", "expected"), [
    (("explore", "adult", "captured_variance"), "png", "explore_adult_captured_variance.png"),
    (("explore", "penguins.csv", "svm_accuracy"), "png", "explore_penguins_svm_accuracy.png"),
    (("sweep", "penguins.csv"), "csv", "sweep_penguins.csv"),
    (("sweep", "Penguins.CSV"), ".csv", "sweep_penguins.csv"),
    (("sample_size", "My data (2024) – v2.tsv", "largest_angle"), "html",
     "sample_size_my_data_2024_v2_largest_angle.html"),
    (("sweep", "data.csv.gz"), "yaml", "sweep_data.yaml"),
    (("", "..."), "png", "figure.png"),
])
def test_export_filename_is_clean(parts, ext, expected):
    assert export_filename(*parts, ext=ext) == expected


# ------------------------------------------------------------------ captioned figure and PNG
def _figure(entries: int) -> go.Figure:
    fig = go.Figure()
    for i in range(entries):
        fig.add_scatter(x=[0.1, 1, 10], y=[i, i + 1, i + 2], name=f"mechanism {i} · ε-DP")
    fig.update_layout(title={"text": "Captured variance"}, height=340)
    return fig


def test_captioned_figure_prints_the_caption_and_makes_room():
    caption = _caption()
    out = export.captioned_figure(_figure(5), caption)
    layout = out.to_dict()["layout"]
    assert layout["title"]["text"] == "Captured variance"
    assert layout["title"]["subtitle"]["text"] == export.caption_lines(caption)
    assert layout["margin"]["t"] >= 50 + 2 * export.ROW_PX  # two caption lines above the plot
    assert export.captioned_figure(_figure(8), caption).layout.height > out.layout.height  # legend rows
    assert _figure(5).layout.title.subtitle.text is None  # the figure on the page is left alone
    tagged = _figure(5)
    tagged.update_layout(margin={"r": 80})  # reference-line tags in the right margin stay inside the export
    assert export.captioned_figure(tagged, caption).layout.margin.r == 80


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("kaleido") is None, reason="kaleido is not installed")
@pytest.mark.skipif(not export.png_export_available(), reason="kaleido needs a Chromium binary")
def test_png_export_with_kaleido_prints_the_caption_inside():
    from PIL import Image

    fig = _figure(5)
    caption = _caption()
    png = export.figure_png(fig, caption)
    out = export.captioned_figure(fig, caption)
    assert _png_size(png) == (2 * out.layout.width, 2 * out.layout.height)  # scale 2: sharp on a projector
    lines = export.caption_lines(caption).count("<br>") + 1
    blank = export.figure_png(fig, "<br>".join([" "] * lines))  # the same layout with empty caption lines
    assert _png_size(blank) == _png_size(png)

    def dark(data: bytes) -> float:
        """Share of dark pixels in the caption strip (between the title and the plot area)."""
        img = np.asarray(Image.open(io.BytesIO(data)).convert("L"), dtype=float)
        return float((img[2 * 40: 2 * (50 + lines * export.ROW_PX) - 4] < 128).mean())

    assert dark(png) > 0.01 and dark(blank) < 0.002


# ------------------------------------------------------------------ captions wrap to the figure width (issue 20)
#: The lecturer's caption (cut off at "neighbours: replace-o" before the fix), and a longer one from an upload.
LECTURE_CAPTION = export_caption(dataset="Adult (UCI census income)", n=42_842, k=5, delta=1e-5,
                                 neighbouring="replace", trials=5, band="sd")
UPLOAD_CAPTION = export_caption(dataset="uploaded file adult_census_income_2026_lecture_copy_final.csv", n=42_842,
                                k=5, delta=1e-10, neighbouring="replace", trials=5, band="minmax")
CAPTION_ROOM = export.EXPORT_WIDTH * 0.99 - export.CAPTION_RIGHT_PX


def _words(text: str) -> list[str]:
    return text.replace("<br>", " ").split()


@pytest.mark.parametrize("caption", [LECTURE_CAPTION, UPLOAD_CAPTION])
def test_caption_wraps_to_the_figure_width_and_keeps_every_word(caption):
    assert text_width_px(caption.split("<br>")[0], export.CAPTION_FONT) > export.EXPORT_WIDTH  # did not fit before
    wrapped = export.caption_lines(caption)
    assert _words(wrapped) == _words(caption)
    assert wrapped.count("<br>") > caption.count("<br>")
    for line in wrapped.split("<br>"):
        assert 0 < text_width_px(line, export.CAPTION_FONT) <= CAPTION_ROOM, line
    figure = export.captioned_figure(_figure(5), caption)  # the HTML export draws this same layout
    assert figure.layout.title.subtitle.text == wrapped
    assert figure.layout.margin.t >= 50 + export.ROW_PX * (wrapped.count("<br>") + 1)


def test_wrap_caption_breaks_inside_an_item_only_when_it_alone_is_too_wide():
    assert wrap_caption("a · b<br>c", 1000) == "a · b<br>c"
    assert wrap_caption("aaaa · bbbb", 5 * 13) == "aaaa ·<br>bbbb"
    long_item = " ".join(["word"] * 40)
    lines = wrap_caption(long_item, 200).split("<br>")
    assert len(lines) > 1 and all(text_width_px(line, 13) <= 200 for line in lines)
    with pytest.raises(InvalidParameterError):
        wrap_caption("x", 0)


def _text_lines(img: np.ndarray, top: int, bottom: int) -> list[tuple[int, int]]:
    """(first, last) dark column of each line of text between rows ``top`` and ``bottom`` of a grey image."""
    dark = img[top:bottom] < 160
    rows = np.flatnonzero(dark.any(axis=1))
    groups, start = [], rows[0]
    for prev, row in itertools.pairwise(rows):
        if row > prev + 1:
            groups.append((start, prev))
            start = row
    groups.append((start, rows[-1]))
    return [(int(np.flatnonzero(dark[a:b + 1].any(axis=0)).min()), int(np.flatnonzero(dark[a:b + 1].any(axis=0)).max()))
            for a, b in groups]


@pytest.mark.slow
@pytest.mark.skipif(not export.png_export_available(), reason="kaleido needs kaleido and a Chromium binary")
def test_every_caption_word_is_inside_the_rendered_png():
    """Render the export (kaleido) and measure the caption's lines of text: one line of pixels per caption line,
    each ending well inside the image and no wider than the wrap's estimate (so the estimate is safe)."""
    from PIL import Image

    caption = UPLOAD_CAPTION
    out = export.captioned_figure(_figure(5), caption)
    img = np.asarray(Image.open(io.BytesIO(export.figure_png(_figure(5), caption))).convert("L"), dtype=float)
    scale = img.shape[1] / out.layout.width
    wrapped = export.caption_lines(caption).split("<br>")
    lines = _text_lines(img, 0, int(scale * out.layout.margin.t) - 4)
    assert len(lines) == 1 + len(wrapped)  # the title, then every caption line
    left = scale * 0.01 * out.layout.width
    for (first, last), text in zip(lines[1:], wrapped):
        assert first >= left - 4 * scale, text  # starts under the title
        assert last < img.shape[1] - scale * export.CAPTION_RIGHT_PX / 2, text  # clear of the right edge
        assert (last - left) / scale <= text_width_px(text, export.CAPTION_FONT), text  # the estimate is safe
    assert (img[: int(scale * out.layout.margin.t), -int(scale * 8):] > 240).all()  # nothing cut at the edge


# ------------------------------------------------------------------ the pages' download buttons
@pytest.fixture
def downloads(monkeypatch) -> dict[str, dict]:
    """Every deferred download a page registers: {file name: {"callable", "mimetype"}}."""
    seen: dict[str, dict] = {}
    original = MediaFileManager.add_deferred

    def record(self, data_callable, mimetype, coordinates, file_name=None, **kwargs):
        seen[file_name] = {"callable": data_callable, "mimetype": mimetype}
        return original(self, data_callable, mimetype, coordinates, file_name, **kwargs)

    monkeypatch.setattr(MediaFileManager, "add_deferred", record)
    return seen


def _keys(at: AppTest) -> set[str]:
    return {el.key for el in at.get("download_button")}


@pytest.mark.slow
def test_sample_size_offers_figure_and_table_downloads(downloads):
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    at.session_state["dp_dataset"] = "wine"
    at.switch_page("pages/sample_size.py").run()
    at.session_state["dp_ss_mechs"] = ["analyze_gauss"]
    at.session_state["dp_ss_trials"] = 2
    at.run()
    at.button(key="ss_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert {"ss_dl_fig_png", "ss_dl_fig_html", "ss_dl_csv", "ss_dl_theory"} <= _keys(at)
    assert {"sample_size_wine_captured_variance.png", "sample_size_wine_captured_variance.html",
            "sample_size_sweep_wine.csv", "sample_size_theory_wine.csv"} <= set(downloads)
    table = pd.read_csv(io.StringIO(downloads["sample_size_sweep_wine.csv"]["callable"]()))
    assert {"mechanism", "n", "captured_variance_ratio"} <= set(table.columns)
    html = downloads["sample_size_wine_captured_variance.html"]["callable"]()
    assert "band: mean" in html and "over 2 trials" in html and "subsample sizes on the x axis" in html


def test_explore_downloads_have_clean_names_and_captions(downloads):
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    at.session_state["dp_dataset"] = "wine"
    at.run()
    at.button(key="explore_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    names = set(downloads)
    assert {"sweep_wine.csv", "sweep_wine.yaml", "explore_wine_captured_variance.png",
            "explore_wine_largest_angle.html"} <= names
    assert not any(n.count(".") > 1 for n in names if n)  # never "….csv.png" or "….csv.csv"
    html = downloads["explore_wine_captured_variance.html"]["callable"]()
    k, trials = at.session_state["dp_k"], at.session_state["dp_trials"]
    assert f"k = {min(k, 13)}" in html and f"over {trials} trials" in html and "replace-one" in html
