"""Issue 37's Papers-style side-by-side: the true PCA score histogram of wine (NOT private) beside the private one
at three total ε, each a release + a Laplace score histogram (:func:`dpcore.explain.pictures.side_by_side`).

Settings (all public, fixed): wine with its public schema (schema scaling, the default centring of the built-in
dataset), Analyze Gauss, k = 2, total ε ∈ {0.5, 2, 8} of which half goes to the mechanism (δ = 1e-6) and half to the
histogram (Laplace, pure ε), 20 × 20 bins on the public frame [−B, B]², replace-one neighbours, seed 37.

Usage: ``python benchmarks/make_private_pictures_figure.py [--out PATH]``; writes
docs/figures/private_pictures_wine.html (plotly from its CDN, like the other stored figures; the caption with the
reading also as text below the figure). A few seconds on one core.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import html
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "figures" / "private_pictures_wine.html"

DATASET = "wine"
MECHANISM = "analyze_gauss"
EPSILONS = (0.5, 2.0, 8.0)
DELTA = 1e-6
PICTURE_SHARE = 0.5
BINS = 20
NEIGHBOURING = "replace"
SEED = 37


def make(out: Path = OUT) -> Path:
    """Write the figure to ``out`` and return it."""
    from dpcore.data import load_dataset, preprocess
    from dpcore.explain.pictures import SIDE_BY_SIDE_READING, side_by_side

    data = preprocess(load_dataset(DATASET), random_state=SEED, neighbouring=NEIGHBOURING)
    if not all(e.private for e in data.ledger):
        raise SystemExit("wine's preprocessing is expected to be private (public schema)")
    fig, released = side_by_side(data, MECHANISM, EPSILONS, delta=DELTA, picture_share=PICTURE_SHARE, bins=BINS,
                                 neighbouring=NEIGHBOURING, random_state=SEED)
    budgets = "; ".join(f"panel {i + 2}: {p.caption}" for i, p in enumerate(released))
    body = fig.to_html(full_html=False, include_plotlyjs="cdn")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>private pictures: wine</title></head><body>\n"
        f"{body}\n<p class=\"privacy-caption\">{html.escape(SIDE_BY_SIDE_READING)}</p>\n"
        f"<p class=\"privacy-caption\">{html.escape(budgets)}</p>\n</body></html>\n", encoding="utf-8")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    path = make(args.out)
    print(f"wrote {path} ({path.stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()
