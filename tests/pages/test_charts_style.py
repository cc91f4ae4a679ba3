"""The one set of chart style rules (pages.ui.charts.trace_style): claimed-invalid exhibits dashed red with
NOT PRIVATE in legend and hover, references neutral grey, every legend entry naming its guarantee."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

import dpcore
from dpcore.evaluation.reporting import GUARANTEE_SHORT, REFERENCE_SHORT, legend_label, run_guarantees
from pages.ui import charts
from pages.ui import state as ui_state

INVALID = [m for m in dpcore.mechanism_ids() if dpcore.get_mechanism(m).invalid]
REFERENCES = ["pca", "random"]
PRIVATE = [m for m in dpcore.mechanism_ids() if m not in INVALID and m not in REFERENCES]
LABELS = tuple(GUARANTEE_SHORT.values()) + tuple(REFERENCE_SHORT.values())


def _rgb(color: str) -> tuple[int, int, int]:
    h = color.lstrip("#")
    return int(h[0:2], 16), int(h[2:4], 16), int(h[4:6], 16)


def _is_red(color: str) -> bool:
    r, g, b = _rgb(color)
    return r >= 150 and g <= 80 and b <= 80


def _is_grey(color: str) -> bool:
    r, g, b = _rgb(color)
    return max(r, g, b) - min(r, g, b) <= 10


def _band(mechanisms: list[str], metric: str = "captured_variance_ratio") -> pd.DataFrame:
    rows = []
    for j, mid in enumerate(mechanisms):
        for eps in (0.1, 1.0, 10.0):
            mean = 1 - np.exp(-eps * (j + 1) / 3)
            rows.append({"mechanism": mid, "epsilon": eps, "metric": metric, "mean": mean, "lo": mean - 0.05,
                         "hi": mean + 0.05, "count": 5})
    return pd.DataFrame(rows)


def _mean_traces(fig) -> dict[str, dict]:
    """The legend-visible curves of a figure, by name (not the legend-only entries of the reference lines)."""
    return {t["name"]: t for t in fig.to_dict()["data"] if t.get("showlegend", True) and list(t["x"]) != [None]}


def _legend_only(fig) -> dict[str, dict]:
    """The legend entries without data: the reference lines' full names."""
    return {t["name"]: t for t in fig.to_dict()["data"] if t.get("showlegend", True) and list(t["x"]) == [None]}


def test_the_registry_has_claimed_invalid_exhibits():
    assert {"sn_imtiaz", "wishart_jiang"} <= set(INVALID)


@pytest.mark.parametrize("mid", INVALID)
def test_claimed_invalid_style_is_dashed_red_not_private(mid):
    style = charts.trace_style(mid)
    assert style.not_private and not style.reference
    assert style.dash not in ("solid", "") and _is_red(style.color)
    assert "NOT PRIVATE" in style.legend and "NOT PRIVATE" in style.hover


def test_two_exhibits_are_told_apart():
    styles = [charts.trace_style(m) for m in INVALID]
    assert len({(s.color, s.dash) for s in styles}) == len(styles)


@pytest.mark.parametrize("mid", PRIVATE)
def test_private_mechanisms_are_solid_never_red_never_not_private(mid):
    style = charts.trace_style(mid)
    assert style.dash == "solid" and not _is_red(style.color) and not _is_grey(style.color)
    assert "NOT PRIVATE" not in style.legend and "NOT PRIVATE" not in style.hover


@pytest.mark.parametrize("mid", REFERENCES)
def test_references_are_neutral_grey_and_say_reference(mid):
    style = charts.trace_style(mid)
    assert style.reference and not style.not_private
    assert _is_grey(style.color) and style.dash != "solid"
    assert "reference" in style.legend and "NOT PRIVATE" not in style.legend


@pytest.mark.parametrize("mid", dpcore.mechanism_ids())
def test_every_legend_entry_names_its_guarantee(mid):
    legend = charts.trace_style(mid).legend
    name, _, label = legend.partition(" · ")
    assert name and label in LABELS, legend


def test_legend_labels_read_as_on_a_slide():
    assert legend_label("sn_imtiaz") == "SN · NOT PRIVATE"
    assert legend_label("analyze_gauss") == "Analyze Gauss · (ε,δ)-DP"
    assert legend_label("itu") == "IT-U · ε-DP"
    assert legend_label("ppca") == "PPCA · heuristic ε-DP"  # k > 1: only if the chain converged
    assert legend_label("ppca", "pure") == "PPCA · ε-DP"  # k = 1: exact sampler


def test_the_guarantee_a_run_carried_overrides_the_registry():
    frame = pd.DataFrame({"mechanism": ["ppca", "ppca", "itu"], "guarantee": ["pure", "heuristic-mcmc", "pure"]})
    assert run_guarantees(frame) == {"ppca": "heuristic-mcmc", "itu": "pure"}  # the weakest one per mechanism
    assert charts.trace_style("ppca", "pure").legend == "PPCA · ε-DP"
    # a run's guarantee can never make an exhibit look private
    assert charts.trace_style("sn_imtiaz", "pure").legend == "SN · NOT PRIVATE"


def test_mechanism_colors_follow_the_style_rules():
    colors = charts.mechanism_colors()
    assert all(_is_red(colors[m]) for m in INVALID)
    assert not any(_is_red(colors[m]) for m in PRIVATE)
    assert len({colors[m] for m in PRIVATE}) == len(PRIVATE)  # one colour each


def test_metric_figure_draws_the_exhibit_dashed_red_with_not_private_in_legend_and_hover():
    mechs = ["sn_imtiaz", "wishart_jiang", "ppca", "analyze_gauss", "itu"]
    fig = charts.metric_figure(_band(mechs), "captured_variance_ratio", references={"pca": 1.0, "random": 0.2})
    traces = _mean_traces(fig)
    assert len(traces) == len(mechs)
    for mid in mechs:
        trace = traces[charts.trace_style(mid).legend]
        invalid = mid in INVALID
        assert ("NOT PRIVATE" in trace["name"]) is invalid
        assert ("NOT PRIVATE" in trace["hovertemplate"]) is invalid
        assert (trace["line"]["dash"] != "solid") is invalid
        assert _is_red(trace["line"]["color"]) is invalid
    for trace in traces.values():  # every legend entry carries a guarantee label
        assert trace["name"].partition(" · ")[2] in LABELS
    # reference lines: grey, tagged in the right margin (off the curves), named as references in the legend
    notes = fig.to_dict()["layout"]["annotations"]
    assert {legend_label("pca"), legend_label("random")} <= set(_legend_only(fig))
    assert {legend_label("pca"), legend_label("random")} <= {a.get("hovertext") for a in notes}
    assert all(a["xref"] == "x domain" and a["x"] == 1 and a["xanchor"] == "left" for a in notes)
    assert all(_is_grey(s["line"]["color"]) for s in fig.to_dict()["layout"]["shapes"])


def test_metric_figure_dashed_references_keep_the_neutral_style():
    fig = charts.metric_figure(_band(["analyze_gauss", "pca", "random"]), "captured_variance_ratio",
                               dashed=["pca", "random"])
    traces = _mean_traces(fig)
    for mid in ("pca", "random"):
        trace = traces[legend_label(mid)]
        assert _is_grey(trace["line"]["color"]) and trace["line"]["dash"] != "solid"


def test_metric_figure_uses_the_run_guarantees():
    fig = charts.metric_figure(_band(["ppca"]), "captured_variance_ratio", guarantees={"ppca": "pure"})
    assert "PPCA · ε-DP" in _mean_traces(fig)


def test_legend_sits_in_its_own_strip_and_the_chart_grows_with_it():
    five = charts.metric_figure(_band([*INVALID, "ppca", "analyze_gauss", "itu"]), "captured_variance_ratio")
    eight = charts.metric_figure(_band([*INVALID, "ppca", "analyze_gauss", "itu", "laplace", "mod_sulq", "kt"]),
                                 "captured_variance_ratio")
    legend = five.to_dict()["layout"]["legend"]
    assert legend["yref"] == "container" and legend["yanchor"] == "bottom"  # below the axis title, never on it
    assert eight.layout.height > five.layout.height


def test_exhibits_come_last_in_the_legend_and_on_top():
    fig = charts.metric_figure(_band(["sn_imtiaz", "analyze_gauss", "random", "itu"]), "captured_variance_ratio",
                               dashed=["random"])
    names = list(_mean_traces(fig))
    assert names == [legend_label("itu"), legend_label("analyze_gauss"), legend_label("random"),
                     legend_label("sn_imtiaz")]


@pytest.mark.slow
def test_explore_page_draws_the_exhibit_as_an_exhibit():
    """In the app: SN next to a private mechanism on every Explore chart — dashed red, NOT PRIVATE in legend and
    hover; the private one solid with its guarantee."""
    import json
    from pathlib import Path

    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "app.py"), default_timeout=90)
    at.run()
    at.session_state["dp_dataset"] = "wine"
    at.session_state["dp_mech_claimed-invalid"] = ["sn_imtiaz"]
    at.session_state["dp_mech_approx"] = ["analyze_gauss"]
    at.session_state["dp_mech_pure"] = []
    at.session_state["dp_trials"] = 2
    at.run()
    at.button(key="explore_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    figs = {el.key: json.loads(el.proto.spec) for el in at.get("plotly_chart")}
    assert "explore_captured_variance_ratio" in figs
    for key, fig in figs.items():
        traces = {t["name"]: t for t in fig["data"] if t.get("showlegend", True)}
        if not traces:
            continue
        sn, ag = traces["SN · NOT PRIVATE"], traces["Analyze Gauss · (ε,δ)-DP"]
        assert sn["line"]["dash"] != "solid" and _is_red(sn["line"]["color"]), key
        assert "NOT PRIVATE" in sn["hovertemplate"] and "NOT PRIVATE" not in ag["hovertemplate"], key
        assert ag["line"]["dash"] == "solid" and not _is_red(ag["line"]["color"]), key


def test_a_band_at_a_single_epsilon_is_drawn_as_an_error_bar():
    band = _band(["analyze_gauss", "laplace"])
    one = band[band["epsilon"] == band["epsilon"].min()]
    traces = _mean_traces(charts.metric_figure(one, "captured_variance_ratio"))
    for mid in ("analyze_gauss", "laplace"):
        row = one[one["mechanism"] == mid].iloc[0]
        bar = traces[charts.trace_style(mid).legend]["error_y"]
        assert bar["array"][0] == pytest.approx(row["hi"] - row["mean"])
        assert bar["arrayminus"][0] == pytest.approx(row["mean"] - row["lo"])
    # with several ε values the shaded band does the job
    assert all("error_y" not in t for t in _mean_traces(charts.metric_figure(band, "captured_variance_ratio")).values())


# ------------------------------------------------------------------ issue 20: warnings, axes, reference tags
def _releases() -> pd.DataFrame:
    """Sweep rows: PPCA never converged, IT-U capped at ε = 0.1 and one ⊥ at ε = 1, AG clean."""
    rows = []
    for eps in (0.1, 1.0, 10.0):
        for trial in range(3):
            rows.append({"mechanism": "ppca", "epsilon": eps, "trial": trial, "status": "ok",
                         "message": "MCMC not converged (burn-in diagnostic above 0.01)"})
            rows.append({"mechanism": "analyze_gauss", "epsilon": eps, "trial": trial, "status": "ok", "message": ""})
            status = "timeout" if eps == 0.1 else ("bottom" if (eps, trial) == (1.0, 0) else "ok")
            rows.append({"mechanism": "itu", "epsilon": eps, "trial": trial, "status": status, "message": ""})
    return pd.DataFrame(rows)


def _warned_band() -> pd.DataFrame:
    band = _band(["ppca", "analyze_gauss", "itu"])
    return band[~((band["mechanism"] == "itu") & (band["epsilon"] == 0.1))]  # no IT-U release at ε = 0.1


def test_releases_with_a_warning_are_hollow_in_the_hover_and_the_legend():
    fig = charts.metric_figure(_warned_band(), "captured_variance_ratio", releases=_releases())
    traces = _mean_traces(fig)
    ppca = traces["PPCA · heuristic ε-DP<br>⚠ 9 of 9 releases not converged"]
    assert all(s.endswith("-open") for s in ppca["marker"]["symbol"])
    assert all("⚠ not converged in 3 of 3 releases" in c for c in ppca["customdata"])
    assert "%{customdata}" in ppca["hovertemplate"] and ppca["line"]["dash"] != "solid"
    ag = traces[legend_label("analyze_gauss")]  # clean: solid, filled markers, no warning
    assert not any(s.endswith("-open") for s in ag["marker"]["symbol"]) and set(ag["customdata"]) == {""}
    itu = next(t for name, t in traces.items() if name.startswith("IT-U"))
    assert itu["name"].replace("<br>", " ") == "IT-U · ε-DP ⚠ of 9 releases: 3 capped, 1 ⊥ (no output)"
    assert [s.endswith("-open") for s in itu["marker"]["symbol"]] == [True, False]  # ε = 1 (one ⊥), ε = 10
    crosses = [a for a in fig.to_dict()["layout"].get("annotations", []) if a["text"] == "✕"]
    assert len(crosses) == 1 and crosses[0]["x"] == pytest.approx(-1.0)  # log10(0.1): no IT-U result there
    assert "IT-U" in crosses[0]["hovertext"] and "capped" in crosses[0]["hovertext"]
    clean = charts.metric_figure(_warned_band(), "captured_variance_ratio")
    assert not any("⚠" in name for name in _mean_traces(clean))


def test_a_point_missing_some_releases_is_not_on_the_curve():
    """Issue 33 item 1: a point whose mean covers only the releases that finished (here IT-U at ε = 1, one ⊥ of
    three) is biased towards them; it is a lone hollow marker, outside the line and the band, saying so."""
    fig = charts.metric_figure(_warned_band(), "captured_variance_ratio", releases=_releases()).to_dict()
    itu = [t for t in fig["data"] if t.get("legendgroup") == "itu"]
    line = next(t for t in itu if t.get("showlegend", True) and t.get("mode") == "lines+markers")
    assert list(line["x"]) == [1.0, 10.0] and line["y"][0] is None and line["y"][1] is not None
    lone = next(t for t in itu if t["name"].endswith("(partial)"))
    assert list(lone["x"]) == [1.0] and "mean of the 2 of 3 releases" in lone["customdata"][0]
    band = next(t for t in itu if t.get("fill") == "toself")
    assert 1.0 not in [x for x in band["x"] if x is not None]  # the band covers the complete point (ε = 10) only
    ag = [t for t in fig["data"] if t.get("legendgroup") == "analyze_gauss"]
    assert not any(t["name"].endswith("(partial)") for t in ag)  # a clean curve keeps every point on its line


def test_release_warning_lines_say_which_in_how_many_and_what_it_means():
    lines = charts.release_warning_lines(_releases())
    assert len(lines) == 2
    assert lines[0].startswith("**PPCA**: not converged in 9 of 9 releases") and "no proven ε-DP" in lines[0]
    assert "capped (time limit) in 3 of 9 releases (stopped at the time cap)" in lines[1]
    assert "⊥ (no output) in 1 of 9 releases (the mechanism declined to answer)" in lines[1]
    assert "drawn apart" in charts.release_warning_header(_releases()) and "drawn apart" not in "".join(lines)
    assert charts.release_warning_lines(_releases().query("mechanism == 'analyze_gauss'")) == []


def test_log_ticks_label_every_tick_and_no_minor_ones():
    values, text = charts.log_ticks(0.1, 10)
    assert values == [0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0] and text == ["0.1", "0.2", "0.5", "1", "2", "5", "10"]
    values, text = charts.log_ticks(0.004, 150)
    assert values == [0.01, 0.1, 1.0, 10.0, 100.0] and text == ["0.01", "0.1", "1", "10", "100"]
    values, _ = charts.log_ticks(0.55, 0.95)
    assert len(values) >= 2 and all(0.55 <= v <= 0.95 for v in values)
    assert charts.tick_text(34_189) == "34,189" and charts.tick_text(20_122) == "20,122"  # never "2.012e+04"
    sizes = [216, 460, 979, 2085, 4439, 9451, 20122, 42842]
    band = pd.DataFrame({"mechanism": "analyze_gauss", "n": sizes, "metric": "captured_variance_ratio",
                         "mean": 0.5, "lo": 0.4, "hi": 0.6, "count": 3})
    fig = charts.metric_figure(band, "captured_variance_ratio", x="n").to_dict()
    assert fig["layout"]["xaxis"]["ticktext"][-2:] == ["20,122", "42,842"]


def test_frobenius_panel_is_log_with_a_releasing_zero_line_and_a_typeset_label():
    band = _band(["analyze_gauss", "laplace"], metric="frobenius_error")
    band.loc[band["mechanism"] == "laplace", "lo"] = -0.5  # a ±1 sd band below zero stays drawable on a log axis
    fig = charts.metric_figure(band, "frobenius_error", references={"pca": 3e-15},  # PCA: zero up to rounding
                               y_title=charts.METRIC_UNITS["frobenius_error"]).to_dict()
    yaxis = fig["layout"]["yaxis"]
    assert yaxis["type"] == "log" and len(yaxis["tickvals"]) == len(yaxis["ticktext"]) >= 2
    assert min(yaxis["tickvals"]) >= 0.01  # the axis spans the curves, not down to PCA's rounding error
    assert "<sub>F</sub>" in yaxis["title"]["text"] and "_F" not in yaxis["title"]["text"]
    zero = [s for s in fig["layout"]["shapes"] if s["y0"] == 1.0]
    assert len(zero) == 1 and charts.ZERO_LABEL in _legend_only(charts.figure_from_dict(fig))
    bands = [t for t in fig["data"] if t.get("fill") == "toself"]
    assert all(min(y for y in t["y"] if y is not None) > 0 for t in bands)


def test_svm_axis_spans_the_majority_baseline_and_one():
    band = _band(["analyze_gauss"], metric="svm_accuracy")
    band[["mean", "lo", "hi"]] = [[0.78, 0.77, 0.79]] * len(band)  # 0.77–0.79: noise would fill a tight axis
    fig = charts.metric_figure(band, "svm_accuracy", baselines={charts.MAJORITY_LABEL: 0.76}).to_dict()
    lo, hi = fig["layout"]["yaxis"]["range"]
    assert lo <= 0.76 and hi >= 1.0


def test_reference_tags_sit_in_the_right_margin_apart_from_each_other():
    fig = charts.metric_figure(_band(["analyze_gauss"]), "captured_variance_ratio",
                               references={"pca": 1.0, "random": 0.99}).to_dict()
    tags = [a for a in fig["layout"]["annotations"] if a.get("hovertext")]
    assert {a["text"] for a in tags} == {"PCA", "random"}
    assert all(a["x"] == 1 and a["xanchor"] == "left" for a in tags)  # outside the plot area: never on a curve
    assert fig["layout"]["margin"]["r"] >= 60
    assert len({a["yshift"] for a in tags}) == 2  # two close lines: their tags are moved apart
    assert fig["layout"]["legend"]["font"]["size"] >= 12


def test_a_curve_on_the_random_line_gets_a_note_with_what_would_change_it():
    band = _band(["itu", "analyze_gauss"])
    band.loc[band["mechanism"] == "itu", ["mean", "lo", "hi"]] = [0.12, 0.10, 0.14]
    assert charts.at_random_line(band, 0.12) == ["itu"]
    note = charts.random_line_note(["itu"], 0.12, largest_x=10, n=42_842, d=108, norm_bound=3.74)
    for word in ("IT-U", "ε", "rows n", "features d", "norm bound B", "n = 42,842", "d = 108"):
        assert word in note
    assert charts.at_random_line(band, None) == []


@pytest.mark.slow
def test_explore_shows_releases_with_a_warning_on_the_chart_and_above_the_table():
    """In the app: SS approx on Wine (125 rows) fails (error at small ε, ⊥ at large ε) — the captured-variance
    chart names it in the legend with ✕ marks, and a warning above the results table counts its releases."""
    import json
    from pathlib import Path

    from streamlit.testing.v1 import AppTest

    from dpcore.evaluation.reporting import warning_counts
    from dpcore.explain.figures import legend_warning, warning_line

    at = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "app.py"), default_timeout=120)
    at.run()
    at.session_state["dp_dataset"] = "wine"
    at.session_state["dp_mech_approx"] = ["analyze_gauss", "ss_approx"]
    at.session_state["dp_mech_pure"] = []
    at.session_state["dp_trials"] = 2
    at.run()
    at.button(key="explore_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    frame = ui_state.stored("explore_result", at.session_state).frame
    counts = warning_counts(frame)
    assert "ss_approx" in counts, "precondition: SS approx has releases with a warning status on Wine"
    fig = {el.key: json.loads(el.proto.spec) for el in at.get("plotly_chart")}["explore_captured_variance_ratio"]
    names = [t.get("name", "") for t in fig["data"]]
    text = legend_warning(*counts["ss_approx"])
    assert any(name.startswith("SS approx") and text in name.replace("<br>", " ") for name in names), names
    warnings = [w.value for w in at.warning if "Some releases carry a warning" in w.value]
    assert len(warnings) == 1 and warning_line("SS approx", *counts["ss_approx"]) in warnings[0]
    assert "analyze_gauss" not in counts and "Analyze Gauss" not in warnings[0]


def test_papers_stored_figures_have_clean_log_ticks_and_typeset_labels():
    """The Papers page's stored figures: log axes label whole decades only (no "5 2 1 5 2 0.1"), and no raw
    TeX-ish text ("_F", "^{", "10^−x") in titles and axis labels."""
    import json
    import re
    from pathlib import Path

    figures = Path(__file__).resolve().parents[2] / "docs" / "figures"
    for name in ("reproduce_amin_fig1", "reproduce_chaudhuri_fig5"):
        html = (figures / f"{name}.html").read_text(encoding="utf-8")
        found = re.search(r'Plotly\.newPlot\(\s*"[^"]+",\s*(\[.*?\]),\s*(\{.*?\}),\s*\{"responsive"', html, re.S)
        layout = json.loads(found.group(2))
        axes = {k: v for k, v in layout.items() if k.startswith(("xaxis", "yaxis"))}
        texts = [layout["title"]["text"], *(a["text"] for a in layout.get("annotations", []))]
        texts += [ax.get("title", {}).get("text") or "" for ax in axes.values()]
        for text in texts:
            assert not re.search(r"_[A-Za-z{]|\^[{−\-0-9]", text), (name, text)
        for key, ax in axes.items():
            if ax.get("type") == "log" and key.startswith("yaxis"):
                assert ax.get("dtick") in (1, "1") and "tickvals" not in ax, (name, key, ax.get("dtick"))


def test_whatif_chart_labels_the_epsilons_run_not_minor_ticks():
    from pages.ui import whatif as _whatif

    table = pd.DataFrame({"mechanism": "analyze_gauss", "epsilon": [0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0],
                          "declared": 0.5, "data_derived": 0.6})
    axis = _whatif._figure(table, "captured_variance_ratio").to_dict()["layout"]["xaxis"]
    assert axis["type"] == "log" and axis["ticktext"] == ["0.1", "0.2", "0.5", "1", "2", "5", "10"]


def _tag_centres(fig: dict, plot_px: float) -> dict[str, float]:
    """Each margin tag's centre in pixels below the plot's top, for a plot area ``plot_px`` tall (yshift applied)."""
    lo, hi = fig["layout"]["meta"]["tag_axis"]
    return {a["text"]: (hi - a["y"]) * plot_px / (hi - lo) - a["yshift"]
            for a in fig["layout"]["annotations"] if a.get("hovertext")}


def test_tag_offsets_keep_close_tags_apart_in_order_and_leave_lone_tags_on_their_line():
    levels = [0.81, 0.758, 0.756, 0.30]
    shifts = charts.tag_offsets(levels, lo=0.0, hi=1.0, plot_px=130, gap_px=20)
    placed = [(1 - v) * 130 - s for v, s in zip(levels, shifts)]
    assert shifts[0] == pytest.approx(0, abs=1e-9) and shifts[3] == pytest.approx(0, abs=1e-9)  # at its line
    assert placed[0] < placed[1] < placed[2]  # the order of the lines is kept
    assert all(b - a >= 20 - 1e-9 for a, b in itertools.pairwise(placed[:3]))


def test_tag_offsets_move_a_run_at_the_bottom_back_up_into_the_plot():
    levels = [0.004, 0.0, 0.002]
    shifts = charts.tag_offsets(levels, lo=0.0, hi=1.0, plot_px=100, gap_px=20)
    placed = sorted((1 - v) * 100 - s for v, s in zip(levels, shifts))
    assert placed[-1] <= 100 + 10  # the lowest tag ends inside the plot (half a gap of slack)
    assert all(b - a >= 20 - 1e-9 for a, b in itertools.pairwise(placed))


def test_svm_panel_tags_random_and_majority_do_not_touch():
    """The crowded SVM panel of issue 20: majority 0.758 and random 0.756 two thousandths apart, PCA at 0.81."""
    band = _band(["analyze_gauss", "laplace"], metric="svm_accuracy")
    band[["mean", "lo", "hi"]] = [[0.77, 0.75, 0.80]] * len(band)
    fig = charts.metric_figure(band, "svm_accuracy", references={"pca": 0.81, "random": 0.756},
                               baselines={charts.MAJORITY_LABEL: 0.758}).to_dict()
    names = [t["name"] for t in fig["data"] if t.get("showlegend", True) and t.get("name")]
    rows = charts.legend_rows(names, width=charts.HALF_WIDTH - 60 - fig["layout"]["margin"]["r"])
    plot_px = fig["layout"]["height"] - charts.chart_frame(rows) - charts.TAG_SLACK
    assert plot_px >= charts.PLOT_HEIGHT - charts.TAG_SLACK - 1  # the plot keeps its height whatever the legend
    centres = sorted(_tag_centres(fig, plot_px).items(), key=lambda kv: kv[1])
    assert [name for name, _ in centres] == ["PCA", "majority", "random"]  # top to bottom, as the lines
    gaps = [b[1] - a[1] for a, b in itertools.pairwise(centres)]
    assert min(gaps) >= charts.TAG_GAP * charts.TAG_FONT - 0.1, gaps  # shifts are rounded to 0.1 px
    # on the real plot (taller than the estimate) they are further apart still
    taller = sorted(_tag_centres(fig, plot_px * 1.3).values())
    assert min(b - a for a, b in itertools.pairwise(taller)) >= charts.TAG_GAP * charts.TAG_FONT - 0.1


def test_a_level_at_zero_on_a_linear_axis_keeps_its_tag_on_its_line():
    """Non-private PCA's largest angle is 0°: its tag sits at 0, not pushed anywhere (the axis span includes 0)."""
    band = _band(["analyze_gauss"], metric="principal_angle_max_deg")
    band[["mean", "lo", "hi"]] = [[40.0, 30.0, 50.0]] * len(band)
    fig = charts.metric_figure(band, "principal_angle_max_deg", references={"pca": 0.0, "random": 88.0}).to_dict()
    assert {a["text"]: a["yshift"] for a in fig["layout"]["annotations"] if a.get("hovertext")} == \
        {"PCA": 0, "random": 0}


def test_legend_rows_follow_the_entries_length_as_measured_in_chromium():
    """Rows counted in Chromium at 1280×800 (Explore, Wine and the five-mechanism Adult run): 5, 6 and 4 rows in a
    half-width chart at 12 px; 3 and 5 rows full width at 16 px."""
    cap = ["Laplace · ε-DP", "MOD-SULQ · (ε,δ)-DP", "Analyze Gauss · (ε,δ)-DP",
           "Non-private PCA · reference, not private", "Random subspace · reference, uses no data"]
    five = ["Laplace · ε-DP", "IT-U · ε-DP", "MOD-SULQ · (ε,δ)-DP", "Analyze Gauss · (ε,δ)-DP",
            "PPCA · heuristic ε-DP · ⚠ capped (time limit) in 14 of 14 releases", *cap[3:]]
    half = charts.HALF_WIDTH - 60 - charts.TAG_MARGIN
    assert charts.legend_rows(cap, width=half) == 5
    assert charts.legend_rows([*cap, "majority class"], width=half) == 6
    assert charts.legend_rows([*cap[:3], "releasing zero (Ĉ = 0)"], width=half) == 4
    assert charts.legend_rows(five, width=half) == 6
    assert charts.legend_rows(cap, width=820 - 60 - 107, font=16) == 3
    assert charts.legend_rows(five, width=820 - 60 - 107, font=16) == 5
    assert charts.legend_rows([], width=half) == 0
