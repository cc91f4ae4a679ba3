"""The one set of chart style rules (pages._charts.trace_style): claimed-invalid exhibits dashed red with
NOT PRIVATE in legend and hover, references neutral grey, every legend entry naming its guarantee."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import dpcore
from dpcore.reporting import GUARANTEE_SHORT, REFERENCE_SHORT, legend_label, run_guarantees
from pages import _charts as charts

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


def test_explore_page_draws_the_exhibit_as_an_exhibit():
    """In the app: SN next to a private mechanism on every Explore chart — dashed red, NOT PRIVATE in legend and
    hover; the private one solid with its guarantee."""
    import json
    from pathlib import Path

    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(Path(__file__).resolve().parents[1] / "app.py"), default_timeout=90)
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
