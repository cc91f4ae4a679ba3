"""`dpcore picture`: a release's private scree and score histogram written as HTML with the privacy caption."""

from __future__ import annotations

import json

from dpcore.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_picture_writes_html_with_the_caption(capsys, tmp_path):
    out = tmp_path / "fig.html"
    code, stdout, err = run(capsys, "picture", "--dataset", "wine", "--mechanism", "analyze_gauss", "--epsilon", "1",
                            "--delta", "1e-5", "--picture-epsilon", "0.5", "--k", "2", "--seed", "3", "--out", str(out))
    assert code == 0, err
    summary = json.loads(stdout)
    assert summary["epsilon"] == 1.5 and summary["delta"] == 1e-5
    html = out.read_text(encoding="utf-8")
    assert "private picture: noisy counts; the true data are not shown" in html
    assert "ε = 1.5" in html and "δ = 1e-05" in html


def test_picture_of_a_subspace_mechanism_pays_for_its_scree(capsys, tmp_path):
    out = tmp_path / "fig.html"
    code, stdout, err = run(capsys, "picture", "--dataset", "wine", "--mechanism", "ppm", "--epsilon", "1",
                            "--delta", "1e-5", "--picture-epsilon", "0.5", "--scree-epsilon", "0.25",
                            "--noise", "gaussian", "--picture-delta", "1e-6", "--groups", "0,1,2",
                            "--out", str(out), "--seed", "4")
    assert code == 0, err
    summary = json.loads(stdout)
    assert any(e["step"] == "private scree (Laplace eigenvalues)" and e["epsilon"] == 0.25 for e in summary["ledger"])
    assert "zCDP" in summary["budget"] and out.exists()


def test_picture_bad_input_is_a_clear_error(capsys, tmp_path):
    code, _, err = run(capsys, "picture", "--dataset", "wine", "--mechanism", "analyze_gauss", "--epsilon", "1",
                       "--delta", "1e-5", "--picture-epsilon", "0.5", "--out", str(tmp_path / "fig.txt"))
    assert code == 2 and ".html" in err and "Traceback" not in err
    code, _, err = run(capsys, "picture", "--dataset", "wine", "--mechanism", "analyze_gauss", "--epsilon", "1",
                       "--delta", "1e-5", "--picture-epsilon", "0.5", "--k", "1", "--out", str(tmp_path / "f.html"))
    assert code == 2 and "k ≥ 2" in err
