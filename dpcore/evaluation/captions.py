"""Legend labels, captions and file names of exported figures (pure text: the dashboard draws them).

* :func:`legend_label` — a mechanism's legend entry: short name and guarantee.
* :func:`export_caption` / :func:`wrap_caption` — the caption printed inside an exported figure, wrapped to a width.
* :func:`export_filename` — a clean file name from its parts.

Re-exported by :mod:`dpcore.evaluation.reporting` (the old import path).
"""

from __future__ import annotations

import re

from ..exceptions import InvalidParameterError
from ..vocabulary import BAND_MEANINGS, NEIGHBOURING_SHORT_LABELS, Band, Guarantee, Neighbouring
from ..vocabulary import values as vocabulary_values

#: The guarantee as a legend reads it (short enough for eight entries on a slide).
GUARANTEE_SHORT = {g: g.short_label for g in Guarantee}
#: Reference curves say what they are instead of a guarantee.
REFERENCE_SHORT = {"pca": "reference, not private", "random": "reference, uses no data"}
#: Short display names for legends (the registry's full names stay in hover texts and tables).
SHORT_NAMES = {
    "random": "Random subspace", "laplace": "Laplace", "itu": "IT-U", "ad": "AD", "kt": "KT",
    "mod_sulq": "MOD-SULQ", "analyze_gauss": "Analyze Gauss", "ppm": "Power method",
    "wishart_sheffet": "Wishart (Sheffet)", "ss_exact": "SS exact", "ss_approx": "SS approx",
    "ss_boost": "SS boosted", "ppca": "PPCA", "sn_imtiaz": "SN", "wishart_jiang": "Jiang",
    "pca": "Non-private PCA",
}
_FILE_SUFFIXES = (".csv.gz", ".csv", ".tsv", ".txt", ".parquet", ".pq", ".xlsx", ".json", ".yaml", ".yml",
                  ".html", ".png")


def _mechanism(mechanism_id: str):
    from ..mechanisms import get_mechanism  # the registry; imported late (it imports every mechanism module)

    return get_mechanism(mechanism_id)


def short_name(mechanism_id: str) -> str:
    """A mechanism's legend name: its short name, else its registry name without the parenthesis."""
    if mechanism_id in SHORT_NAMES:
        return SHORT_NAMES[mechanism_id]
    name = _mechanism(mechanism_id).name
    return name.split(" (")[0].split(" — ")[0].strip() or name


def guarantee_short(mechanism_id: str, guarantee: str | None = None) -> str:
    """The short guarantee text of a mechanism's curve (``guarantee``: the one its releases carried)."""
    if mechanism_id in REFERENCE_SHORT:
        return REFERENCE_SHORT[mechanism_id]
    g = guarantee or _mechanism(mechanism_id).guarantee
    return GUARANTEE_SHORT.get(g, g)


def legend_label(mechanism_id: str, guarantee: str | None = None) -> str:
    """``"PPCA · ε-DP"``, ``"Analyze Gauss · (ε,δ)-DP"``, ``"SN · NOT PRIVATE"``: name and guarantee in one."""
    return f"{short_name(mechanism_id)} · {guarantee_short(mechanism_id, guarantee)}"


def rows_text(n: int | None, neighbouring: str) -> str:
    """The data size as a caption may state it: the count under replace-one (where n is public), and no count
    under add/remove (where n is private and this sandbox does not release it)."""
    if neighbouring != Neighbouring.REPLACE:
        return "n private under add/remove (not shown)"
    return "n not given" if n is None else f"n = {int(n):,} rows to the mechanisms (public under replace-one)"


def export_caption(*, dataset: str, k: int, delta: float, neighbouring: str, trials: int, band: str,
                   n: int | None = None, n_text: str | None = None, epsilon: float | None = None) -> str:
    """Caption printed inside an exported figure: what data, which settings, and what the band means.

    ``n_text`` replaces the row count (e.g. "n on the x axis" for a sample-size sweep); otherwise ``n`` is
    shown only under replace-one (:func:`rows_text`). Two lines joined by ``<br>`` (Plotly's line break).
    """
    from ..explain.display import format_delta

    if band not in tuple(Band):
        raise InvalidParameterError(f"band must be one of {vocabulary_values(Band)}, got {band!r}.")
    relation = NEIGHBOURING_SHORT_LABELS.get(neighbouring, neighbouring)
    first = [f"Data: {dataset}", n_text or rows_text(n, neighbouring), f"k = {k}"]
    if epsilon is not None:
        first.append(f"ε = {epsilon:g}")
    first += [f"δ = {format_delta(delta)} (for (ε,δ)-DP mechanisms)", f"neighbours: {relation}"]
    trial_word = "trial" if trials == 1 else "trials"
    second = [f"band: {BAND_MEANINGS[band]} over {trials} {trial_word}",
              "evaluated on the true data (a sandbox, not a private release)"]
    return " · ".join(first) + "<br>" + " · ".join(second)


#: Width of a character in units of the font size, for the wrap estimate (Open Sans / Arial / DejaVu: the widest of
#: the three, so the estimate errs on the long side).
_NARROW, _WIDE = set("il.,:;'|!()[]·/ fjtrI1"), set("mwMW@%—–")


def text_width_px(text: str, font_px: float) -> float:
    """A conservative estimate of ``text``'s rendered width in pixels (one line, no markup)."""
    units = 0.0
    for ch in text:
        if ch in _NARROW:
            units += 0.34
        elif ch in _WIDE:
            units += 0.95
        elif ch.isupper():
            units += 0.72
        else:
            units += 0.6
    return 1.1 * units * font_px  # 10 % over the measured widths of Plotly's export font


def wrap_caption(caption: str, width_px: float, font_px: float = 13.0) -> str:
    """``caption`` (lines joined by ``<br>``) re-broken so that no line is estimated wider than ``width_px``:
    lines break between " · " items first, and inside an item at spaces only when the item alone is too wide."""
    if width_px <= 0:
        raise InvalidParameterError(f"width_px must be positive, got {width_px!r}.")
    out: list[str] = []
    for line in caption.split("<br>"):
        current = ""
        for item in line.split(" · "):
            candidate = f"{current} · {item}" if current else item
            if text_width_px(candidate, font_px) <= width_px:
                current = candidate
                continue
            if current:
                out.append(current + " ·")
            current = ""
            for word in item.split(" "):
                candidate = f"{current} {word}" if current else word
                if current and text_width_px(candidate, font_px) > width_px:
                    out.append(current)
                    candidate = word
                current = candidate
        out.append(current)
    return "<br>".join(out)


def export_filename(*parts: str, ext: str) -> str:
    """A clean file name from its parts: ``export_filename("explore", "penguins.csv", "utility", ext="png")``
    → ``"explore_penguins_utility.png"`` (file suffixes dropped, lower case, one ``_`` between words)."""
    words = []
    for part in parts:
        text = str(part).strip().lower()
        stripped = True
        while stripped:
            stripped = False
            for suffix in _FILE_SUFFIXES:
                if text.endswith(suffix) and len(text) > len(suffix):
                    text, stripped = text[: -len(suffix)], True
        slug = re.sub(r"[^a-z0-9]+", "_", text).strip("_")
        if slug:
            words.append(slug)
    ext = re.sub(r"[^a-z0-9]+", "", ext.lower()) or "txt"
    return "_".join(words or ["figure"]) + "." + ext


__all__ = ["GUARANTEE_SHORT", "REFERENCE_SHORT", "SHORT_NAMES", "export_caption", "export_filename",
           "guarantee_short", "legend_label", "rows_text", "short_name", "text_width_px", "wrap_caption"]
