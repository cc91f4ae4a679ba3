"""The Papers page and dpcore.evaluation.reproduce: stored results, verdicts, and quick re-runs through the script."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from dpcore.evaluation import reproduce

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_experiments_match_the_script():
    module = reproduce.load_script()
    assert list(module.EXPERIMENTS) == reproduce.experiment_names()


def test_every_experiment_has_stored_results_and_verdicts():
    verdicts = reproduce.verdicts()
    for exp in reproduce.EXPERIMENTS:
        files = reproduce.result_files(exp.name)
        for kind in ("raw", "summary", "facts", "png"):
            assert files[kind].is_file(), f"{exp.name}: {files[kind]} is missing"
        assert reproduce.load_summary(exp.name)["releases"].sum() > 0
        assert reproduce.load_facts(exp.name)[0]["n"] > 0
        assert verdicts[exp.name], f"{exp.name}: no verdict in docs/reproductions.md"
        assert reproduce.doc_section(exp.name).startswith("**Paper.**")
    assert len(verdicts["amin_fig1"]) == 4
    assert verdicts["chaudhuri_fig5"][0].verdict == "agrees"
    assert verdicts["amin_fig1"][-1].verdict.startswith("does not reproduce")
    assert verdicts["amin_fig1"][0].statement.startswith("AD/IT-U beat KT and L")
    assert [e.short for e in reproduce.EXPERIMENTS] == ["Chaudhuri et al. 2013", "Amin et al. 2019",
                                                        "Imtiaz & Sarwate 2016", "Chaudhuri et al. 2013",
                                                        "Singhal & Steinke 2021", "Yun & Dudeja 2025",
                                                        "Jiang et al. 2016"]
    assert verdicts["yun_dudeja"][0].verdict.startswith("agrees")


def test_unknown_experiment_is_a_clear_error():
    with pytest.raises(reproduce.UnknownNameError, match="available: chaudhuri_fig5"):
        reproduce.get_experiment("nope")


@pytest.mark.slow
def test_quick_run_writes_the_scripts_files_elsewhere(tmp_path):
    stored = reproduce.result_files("chaudhuri_fig5")["summary"]
    before = _digest(stored)
    result = reproduce.run("chaudhuri_fig5", quick=True, out=tmp_path, png=False, echo=False)
    assert result.out_dir == tmp_path
    names = {p.name for p in tmp_path.iterdir()}
    assert names == {"reproduce_chaudhuri_fig5.csv", "reproduce_chaudhuri_fig5_summary.csv",
                     "reproduce_chaudhuri_fig5_facts.json", "reproduce_chaudhuri_fig5.html"}  # no PNG asked for
    assert result.figure is not None and len(result.summary) > 0
    assert "css_synthetic" in result.log
    assert _digest(stored) == before  # the stored full-run results are untouched


@pytest.mark.slow
def test_papers_page_shows_claims_figures_and_verdicts():
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page("pages/papers.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    assert at.title[0].value.startswith("Papers")
    assert len(at.tabs) == len(reproduce.EXPERIMENTS) + 1  # and CoinPress's tables (beyond the seed papers)
    # one stored figure per experiment, drawn by Plotly from its stored HTML (readable on a projector)
    assert len(at.get("plotly_chart")) + len(at.get("image")) >= len(reproduce.EXPERIMENTS)
    text = " ".join(m.value for m in at.markdown)
    for exp in reproduce.EXPERIMENTS:
        assert exp.target in text
    assert "does not reproduce" in text and "agrees" in text
    assert "spec §" not in text  # users do not have the project's internal specification
    summary = next(m.value for m in at.markdown if m.value.startswith("| paper | claim | verdict |"))
    # the seed papers' verdicts and a row for each of CoinPress's two tables
    assert summary.count("\n") - 1 == sum(len(v) for v in reproduce.verdicts().values()) + 2
    assert "000 Fig. 5" not in summary  # the docs' internal paper ids are not shown
    # a quick re-run: the figure appears, the stored results stay as they are
    stored = reproduce.result_files("chaudhuri_fig5")["summary"]
    before = _digest(stored)
    at.button(key="papers_quick_chaudhuri_fig5").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert "papers_quick_fig_chaudhuri_fig5" in [el.key for el in at.get("plotly_chart")]
    assert any("Quick run finished" in s.value for s in at.success)
    assert _digest(stored) == before
