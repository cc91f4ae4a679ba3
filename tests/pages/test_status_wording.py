"""The words the pages put on releases with a warning status (ok, not converged, ⊥, capped, error), for our rows and
the peers' alike: the note above the results table gives each status its own meaning once; the peers' "Guarantees
in this run" line counts every run, errors included; a curve's legend entry keeps its warning short enough never to
run past a half-width chart at 1280×800; the odometer names mechanisms by their names; the download buttons' labels
fit two to a row (the walk of 2026-11-29, items 4(a)–(c) and 6)."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from dpcore.evaluation.reporting import WARNING_KINDS, warning_counts
from dpcore.explain.figures import (
    FULL_WIDTH,
    HALF_WIDTH,
    LEGEND_FONT,
    LEGEND_TEXT_PX,
    METRIC_TITLES,
    NO_RESULT_NOTE,
    PRESENT_FONT,
    TAG_MARGIN,
    WARNING_HEADER,
    WARNING_MEANINGS,
    download_title,
    legend_name,
    legend_rows,
    legend_warning,
    metric_figure,
    presentation_figure,
    release_warning_header,
    release_warning_lines,
    warning_line,
)
from dpcore.vocabulary import ReleaseStatus
from pages.ui import odometer as odo_ui
from pages.ui.peers import _timing

#: Release statuses a sweep row can carry (plus an "ok" release whose message says the chain did not converge).
MIXES = ("ok", "not converged", ReleaseStatus.BOTTOM, ReleaseStatus.TIMEOUT, ReleaseStatus.ERROR)


def _rows(mechanism: str, kinds: dict[str, int], eps=(0.1, 1.0, 10.0)) -> pd.DataFrame:
    """``kinds[k]`` releases of each kind ``k`` (a status, or "not converged": an ok release with that message),
    spread over ``eps``."""
    rows = []
    for kind, count in kinds.items():
        for i in range(count):
            status = ReleaseStatus.OK if kind in ("ok", "not converged") else str(kind)
            message = "MCMC not converged (burn-in diagnostic above 0.01)" if kind == "not converged" else ""
            rows.append({"mechanism": mechanism, "epsilon": eps[i % len(eps)], "trial": i, "status": status,
                         "message": message, "runtime_s": 0.5 + i})
    return pd.DataFrame(rows)


def _mixes():
    """Every non-empty combination of the warning kinds, with an ok release or not."""
    warned = MIXES[1:]
    for size in range(1, len(warned) + 1):
        for combo in itertools.combinations(warned, size):
            for with_ok in (False, True):
                yield {**({"ok": 2} if with_ok else {}), **{kind: 3 + i for i, kind in enumerate(combo)}}


# ------------------------------------------------------------------ 4(a): the note above the results table
@pytest.mark.parametrize("mechanism,name", [("itu", "IT-U"), ("peer:opendp", "OpenDP PCA")])
def test_each_status_gets_its_own_meaning_once(mechanism, name):
    """For every mix of statuses, ours and a peer's: each kind is followed by its own meaning (never another's),
    each meaning appears once; where points missing a result are drawn is said once, in the note's header, exactly
    when some release gave no result."""
    for kinds in _mixes():
        frame = _rows(mechanism, kinds)
        lines = release_warning_lines(frame)
        assert len(lines) == 1, kinds
        line = lines[0]
        assert line.startswith(f"**{name}**: "), line
        total = sum(kinds.values())
        for kind, count in kinds.items():
            if kind == "ok":
                continue
            label = WARNING_KINDS.get(kind, kind)
            meaning = WARNING_MEANINGS[label]
            assert f"{label} in {count} of {total} releases ({meaning})" in line, (kinds, line)
            assert line.count(meaning) == 1, line
        no_result = any(k in kinds for k in (ReleaseStatus.BOTTOM, ReleaseStatus.TIMEOUT, ReleaseStatus.ERROR))
        assert "drawn apart" not in line, line
        header = release_warning_header(frame)
        assert header.startswith(WARNING_HEADER) and header.endswith("):"), header
        assert header.count("drawn apart") == header.count(NO_RESULT_NOTE) == (1 if no_result else 0), header


def test_the_walks_garbled_peer_line_now_reads_right():
    """The walk's line: 'capped … in 4 of 14; error in 7 of 14 — stopped at the time cap; … failed …; …' put the
    meanings after the last kind and said the "drawn apart" clause twice (and again for the other peer)."""
    frame = pd.concat([_rows("peer:opendp", {"ok": 3, ReleaseStatus.TIMEOUT: 4, ReleaseStatus.ERROR: 7}),
                       _rows("peer:diffprivlib", {"ok": 2, ReleaseStatus.TIMEOUT: 1, ReleaseStatus.ERROR: 11})])
    lines = release_warning_lines(frame)
    assert lines[0] == ("**OpenDP PCA**: capped (time limit) in 4 of 14 releases (stopped at the time cap); error in "
                        f"7 of 14 releases ({WARNING_MEANINGS['error']}).")
    assert lines[1].startswith("**diffprivlib PCA**: capped (time limit) in 1 of 14 releases (stopped at the time")
    assert release_warning_header(frame) == f"{WARNING_HEADER}; {NO_RESULT_NOTE}):"


def test_a_kind_read_off_a_message_points_to_the_message_column():
    line = warning_line("X", {"clipped rows": 2}, 5)
    assert line == "**X**: clipped rows in 2 of 5 releases (see the message column)."


# ------------------------------------------------------------------ 4(b): the peers' run summary
def test_the_peers_run_summary_counts_every_status_and_says_which():
    for kinds in _mixes():
        text = _timing(_rows("peer:opendp", kinds))
        total = sum(kinds.values())
        ok = kinds.get("ok", 0) + kinds.get("not converged", 0)
        if ok:
            assert f"{ok} of {total} fits finished" in text, (kinds, text)
        else:
            assert f"none of the {total} fits finished" in text, (kinds, text)
        for status, words in ((ReleaseStatus.TIMEOUT, "capped at the time cap"),
                              (ReleaseStatus.BOTTOM, "gave no output (⊥)"),
                              (ReleaseStatus.ERROR, "failed with an error")):
            if status in kinds:
                assert f"{kinds[status]} {words}" in text, (kinds, text)
            else:
                assert words not in text, (kinds, text)


def test_the_walks_peer_summary_names_its_errors():
    """The walk: 'Runs: 3 fits finished at ε ≤ 0.5 …; 4 capped' while 7 of the 14 runs had failed."""
    text = _timing(_rows("peer:opendp", {"ok": 3, ReleaseStatus.TIMEOUT: 4, ReleaseStatus.ERROR: 7}))
    assert text.startswith("3 of 14 fits finished") and "; 4 capped at the time cap" in text
    assert text.endswith("; 7 failed with an error (the message column says why)")


# ------------------------------------------------------------------ 4(c): legend entries
def _line_px(line: str, font: float = LEGEND_FONT) -> float:
    return font * 0.43 * len(line)  # legend_rows's model (measured in Chromium)


@pytest.mark.parametrize("legend", ["diffprivlib PCA · NOT PRIVATE", "PPCA · heuristic ε-DP",
                                    "CoinPress covariance · (ε,δ)-DP"])
def test_a_warned_legend_entry_keeps_every_line_inside_a_half_width_chart(legend):
    for kinds in [*_mixes(), {"clipped rows": 3, ReleaseStatus.ERROR: 1}]:
        scaled = {WARNING_KINDS.get(k, k): 100 * v for k, v in kinds.items() if k != "ok"}  # three-digit counts
        total = sum(100 * v for v in kinds.values())
        name = legend_name(legend, legend_warning(scaled, total))
        first, *rest = name.split("<br>")
        assert first == legend and rest and rest[0].startswith("⚠"), name
        assert all(_line_px(line) <= LEGEND_TEXT_PX for line in rest), name
        assert legend_name(legend, None) == legend


def test_legend_warnings_are_short_counts():
    assert legend_warning({"not converged": 9}, 9) == "⚠ 9 of 9 releases not converged"
    assert legend_warning({"capped (time limit)": 4, "error": 7}, 14) == "⚠ of 14 releases: 4 capped, 7 failed"
    assert legend_warning({"error": 1}, 1) == "⚠ 1 of 1 release failed"
    assert legend_warning({"odd message": 2, "other message": 1}, 5) == "⚠ 3 of 5 releases flagged"


def test_legend_rows_count_an_entry_of_two_lines_as_two():
    half = HALF_WIDTH - 60 - TAG_MARGIN
    assert legend_rows(["Laplace · ε-DP<br>⚠ 3 of 9 releases capped"], width=half) == 2
    assert legend_rows(["Laplace · ε-DP", "AD<br>⚠ 1 of 9 releases failed"], width=half) == 3
    assert legend_rows(["A", "B<br>c"], width=1000) == 2  # side by side: the row is as tall as its tallest entry


def _band(mechanisms, eps=(0.1, 1.0, 10.0)) -> pd.DataFrame:
    rows = [{"mechanism": m, "epsilon": e, "metric": "captured_variance_ratio", "mean": 0.5, "lo": 0.4, "hi": 0.6,
             "count": 3} for m in mechanisms for e in eps]
    return pd.DataFrame(rows)


def test_the_walks_peer_chart_has_no_legend_line_past_its_plot():
    """The walk's captured-variance chart (ours clean, both peers capped and failing): every legend line fits the
    half-width chart's plot width (12 px), and the presentation copy's (16 px, full width)."""
    releases = pd.concat([_rows("analyze_gauss", {"ok": 14}),
                          _rows("peer:opendp", {"ok": 3, ReleaseStatus.TIMEOUT: 4, ReleaseStatus.ERROR: 7}),
                          _rows("peer:diffprivlib", {"ok": 2, ReleaseStatus.TIMEOUT: 1, ReleaseStatus.ERROR: 11})])
    band = _band(["analyze_gauss", "peer:opendp", "peer:diffprivlib"])
    fig = metric_figure(band, "captured_variance_ratio", releases=releases, references={"pca": 1.0, "random": 0.1})
    spec = fig.to_dict()
    names = [t["name"] for t in spec["data"] if t.get("showlegend", True) and t.get("name")]
    names = [n for n in names if "⚠" in n]
    assert len(names) == 2, names
    plot = HALF_WIDTH - 60 - spec["layout"]["margin"]["r"]
    for name in names:
        assert all(_line_px(line) + 4.4 * LEGEND_FONT <= plot for line in name.split("<br>")), name
    present = presentation_figure(fig).to_dict()
    plot = FULL_WIDTH - 60 - present["layout"]["margin"]["r"]
    for name in names:
        assert all(_line_px(line, PRESENT_FONT) + 4.4 * PRESENT_FONT <= plot for line in name.split("<br>")), name
    assert warning_counts(releases).keys() == {"peer:opendp", "peer:diffprivlib"}


# ------------------------------------------------------------------ 6: odometer names, totals, download labels
def test_the_odometer_names_mechanisms_by_their_names():
    assert odo_ui.named("Explore: Sweep: analyze_gauss") == "Explore: Sweep: Analyze Gauss"
    assert odo_ui.named("Explore: Sweep (reference lines): pca (NOT private)") == \
        "Explore: Sweep (reference lines): Non-private PCA (NOT private)"
    assert odo_ui.named("Explore: Sweep (peers): peer:opendp") == "Explore: Sweep (peers): OpenDP PCA"
    assert odo_ui.named("Inspect a mechanism: analyze_gauss: analyze_gauss: Gaussian noise") == \
        "Inspect a mechanism: Analyze Gauss: Gaussian noise"
    assert odo_ui.named("basic only: no exact zCDP conversion for Explore: Sweep: ppca; Data: advisor: DP mean") == \
        "basic only: no exact zCDP conversion for Explore: Sweep: PPCA; Data: advisor: DP mean"
    assert odo_ui.named("Data: clipping advisor: histogram (Laplace)") == "Data: clipping advisor: histogram (Laplace)"
    line = odo_ui._release_line("Explore: Sweep: analyze_gauss", 0.1, 1e-6, False, 3)
    assert line == "- 3 × ε = 0.1, δ = 1e-06 — Explore: Sweep: Analyze Gauss (NOT private)"


def test_the_odometer_totals_table_breaks_between_epsilon_and_delta():
    """Three columns of numbers ran past the sidebar's expander (ε 6511, δ 0.000592): now one row per composition,
    its ε and δ in one cell that may break between them, no unbreakable run over 14 characters."""
    from types import SimpleNamespace

    totals = SimpleNamespace(zcdp_epsilon=3046.2, zcdp_delta=0.000592341, count=3, basic_epsilon=12345.6,
                             basic_delta=0.000592341)
    table = odo_ui._totals_table(totals)
    assert "| basic | ε\u00a0=\u00a01.235e+04, δ" in table and "| zCDP | ε\u00a0=\u00a03046, δ" in table
    cells = [c.strip() for row in table.splitlines() for c in row.strip("|").split("|")]
    assert max(len(run) for c in cells for run in c.split(" ")) <= 14, cells
    assert "δ\u00a0=\u00a00.000593" in table  # rounded up, never shown smaller than it is
    none = SimpleNamespace(zcdp_epsilon=None, zcdp_delta=None, count=0, basic_epsilon=0.0, basic_delta=0.0)
    assert "ε\u00a0=\u00a0—, δ\u00a0=\u00a0—" in odo_ui._totals_table(none)


def test_download_labels_fit_two_to_a_row_in_presentation_mode():
    """Measured in Chromium at 1280×800 in presentation mode (18 px): a button two to a row shows ~50 characters;
    the walk saw '… (covariance releases) (Python s…'."""
    for title in METRIC_TITLES.values():
        for suffix in ("(HTML)", "(PNG)", "(Python)", "(notebook)"):
            assert len(f"{download_title(title)} {suffix}") <= 48, title
    assert download_title(METRIC_TITLES["captured_variance_ratio"]) == METRIC_TITLES["captured_variance_ratio"]
    assert np.isfinite(LEGEND_TEXT_PX)
