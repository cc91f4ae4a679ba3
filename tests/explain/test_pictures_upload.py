"""Issue 37 on an upload with a public schema: the private pictures of a CSV read with its confirmed public schema
(declared format, bounds and categories; nothing read off the data), in the library and through `dpcore picture`."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dpcore.cli import main
from dpcore.data import load_csv, load_schema, preprocess
from dpcore.explain import pictures as pic
from dpcore.mechanisms import get_mechanism

CATEGORIES = ("red", "green", "blue")


def _schema_map() -> dict:
    """A public schema (every bound and category declared, the file format declared): as test_one_reader's."""
    columns = [{"name": "x0", "role": "numeric", "lower": -10, "upper": 10},
               {"name": "x1", "role": "numeric", "lower": -10, "upper": 10},
               {"name": "c", "role": "categorical", "categories": list(CATEGORIES)},
               {"name": "y", "role": "label", "categories": ["a", "b"]}]
    return {"dpcore_schema": 1, "label": "y", "columns": columns,
            "format": {"kind": "csv", "encoding": "utf-8", "delimiter": ",", "decimal": ".",
                       "thousands": None, "header": True}}


def _csv(n: int = 80, seed: int = 7) -> bytes:
    rng = np.random.default_rng(seed)
    lines = ["x0,x1,c,y"]
    for _ in range(n):
        x0, x1 = rng.normal(0, 3, size=2)
        lines.append(f"{x0:.3f},{x1 + 0.5 * x0:.3f},{CATEGORIES[rng.integers(3)]},{'ab'[rng.integers(2)]}")
    return ("\n".join(lines) + "\n").encode("utf-8")


def _upload():
    dataset = load_csv(_csv(), schema=load_schema(_schema_map()), name="upload")
    return preprocess(dataset, random_state=1)


@pytest.mark.parametrize("mid", ["analyze_gauss", "ppm"])
def test_pictures_of_an_upload_with_a_public_schema(mid):
    data = _upload()
    assert all(e.private for e in data.ledger)  # the schema's ranges: nothing read off the data
    mech = get_mechanism(mid)
    release = mech.release(data, 2, 1.0, 1e-5, random_state=5)
    s = pic.PictureSettings(0.5, bins=8, epsilon_scree=0.25, n_eigenvalues=3, groups=("a",))
    pics = pic.release_pictures(release, data, s, mech.output, random_state=9)
    assert pics.budget.private
    total = 1.5 if mech.output == "covariance" else 1.75
    assert pics.budget.best == pytest.approx((total, 1e-5))
    assert f"ε = {total:g}" in pics.caption and "δ = 1e-05" in pics.caption
    assert pics.histogram.counts.shape == (2, 8, 8) and (pics.histogram.counts >= 0).all()
    assert len(pics.scree.eigenvalues) == 3
    again = pic.release_pictures(release, data, s, mech.output, random_state=9)
    assert np.array_equal(pics.histogram.counts, again.histogram.counts)


def test_cli_picture_on_a_csv_with_a_public_schema(capsys, tmp_path):
    csv, schema, out = tmp_path / "upload.csv", tmp_path / "schema.json", tmp_path / "fig.html"
    csv.write_bytes(_csv())
    schema.write_text(json.dumps(_schema_map()), encoding="utf-8")
    code = main(["picture", "--csv", str(csv), "--schema", str(schema), "--mechanism", "analyze_gauss",
                 "--epsilon", "1", "--delta", "1e-5", "--picture-epsilon", "0.5", "--bins", "8", "--groups", "a",
                 "--seed", "3", "--out", str(out)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "NOT end-to-end private" not in captured.err and "no --schema" not in captured.err
    summary = json.loads(captured.out)
    assert summary["epsilon"] == pytest.approx(1.5) and summary["delta"] == pytest.approx(1e-5)
    assert all(e["private"] for e in summary["ledger"])
    html = out.read_text(encoding="utf-8")
    assert pic.PRIVATE_PICTURE_NOTE in html and "ε = 1.5" in html and "δ = 1e-05" in html
    assert 'class="privacy-caption"' in html


def test_side_by_side_figure_script_writes_a_small_captioned_html(tmp_path):
    """benchmarks/make_private_pictures_figure.py (docs/figures/private_pictures_wine.html): small, with the reading
    and every panel's ε/δ as text, and the same counts from the same seed."""
    from benchmarks import make_private_pictures_figure as script

    a = script.make(tmp_path / "a.html")
    b = script.make(tmp_path / "b.html")
    text = a.read_text(encoding="utf-8")
    assert a.stat().st_size < 1_000_000
    assert "Cannot conclude" in text and "NOT private" in text
    for eps in script.EPSILONS:
        assert f"ε = {eps:g}, δ = 1e-06 in all" in text
    data = text[text.index("Plotly.newPlot("):]
    assert data.split(",", 1)[1] == b.read_text(encoding="utf-8").split("Plotly.newPlot(", 1)[1].split(",", 1)[1]
