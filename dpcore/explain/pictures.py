"""Pictures an analyst may publish after a release: a private scree plot and a private PCA score plot.

Rows are on the unit scale (‖x‖ ≤ 1 after division by the public bound B); C = Σ xxᵀ.

* **Private scree.** A covariance mechanism's released Ĉ gives its eigenvalues for free (post-processing of a private
  output). A subspace-only mechanism releases no eigenvalues, so the top eigenvalues of C are released with Laplace
  noise: one record's change moves C by at most 2 in trace norm (replace-one: xxᵀ − x′x′ᵀ) or 1 (add/remove: xxᵀ),
  so the eigenvalue vector moves by at most 2 or 1 in L1 (Lidskii/Weyl), whatever the number of eigenvalues shown.
* **Private score plot.** The rows projected on the first two columns of the *released* subspace V̂ (scores
  (v̂₁ᵀx, v̂₂ᵀx), each in [−1, 1] since ‖x‖ ≤ 1 and ‖v̂ᵢ‖ = 1), counted in a 2-D histogram on the public frame
  [−1, 1]² (in units of B: [−B, B]²) with a public number of bins, optionally per label group (public list of
  groups, one more group for every other label). One record changes the counts by 1 in one cell under add/remove
  (L1 = L2 = 1) and moves between two cells under replace-one (L1 = 2, L2 = √2), groups included. Laplace (pure ε)
  or Gaussian (ε, δ) noise; the noisy counts are clipped at 0 (post-processing). Given V̂, the histogram's
  sensitivity holds for every V̂, so it composes adaptively with the mechanism.

Nothing here reads a frame, bin count, group list or scale off the data (privacy review 1–18); the exact row count
is never shown. The seed of a picture is a child stream of the run's seed (its own stage key), never the mechanism's.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..core._validation import check_delta, check_epsilon, check_int, check_neighbouring
from ..core.noise import laplace
from ..core.privacy import (
    LedgerEntry,
    gaussian_sigma,
    l1_sensitivity_eigenvalues,
    ledger_is_private,
    ledger_total,
    zcdp_epsilon,
)
from ..core.seeding import RandomState, Stage, settings_key, stage_rng
from ..exceptions import InvalidParameterError
from ..vocabulary import Neighbouring

if TYPE_CHECKING:
    from ..data.prepared import PreparedData
    from ..mechanisms.base import Release

#: The public frame of the score plot on the unit scale: every score of a unit-norm row on a unit direction.
FRAME = (-1.0, 1.0)
NOISES = ("laplace", "gaussian")
OTHER_GROUP = "(other labels)"
PRIVATE_PICTURE_NOTE = "private picture: noisy counts; the true data are not shown"
TRUE_LABEL = "true (non-private, for comparison)"


def histogram_sensitivity(neighbouring: str = Neighbouring.REPLACE) -> tuple[float, float]:
    """(L1, L2) sensitivity of the vector of histogram counts (all groups together): one record moves between two
    cells under replace-one (2, √2); it adds or removes one count under add/remove (1, 1)."""
    if check_neighbouring(neighbouring) == Neighbouring.REPLACE:
        return 2.0, math.sqrt(2.0)
    return 1.0, 1.0


def scree_sensitivity(neighbouring: str = Neighbouring.REPLACE) -> float:
    """L1 sensitivity of the eigenvalue vector of C (any number of its top entries): 2 replace-one, 1 add/remove."""
    return l1_sensitivity_eigenvalues(neighbouring)


@dataclass(frozen=True)
class PictureSettings:
    """Public settings of the pictures: budgets, noise, bins, groups. Nothing here may come from the data."""

    epsilon_histogram: float
    noise: str = "laplace"
    delta_histogram: float = 0.0
    bins: int = 20
    epsilon_scree: float = 0.0
    n_eigenvalues: int = 10
    groups: tuple[Any, ...] | None = None
    neighbouring: str = Neighbouring.REPLACE

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon_histogram", check_epsilon(self.epsilon_histogram, "picture epsilon"))
        if self.noise not in NOISES:
            raise InvalidParameterError(f"noise must be 'laplace' or 'gaussian'; got {self.noise!r}.")
        delta = check_delta(self.delta_histogram, "picture delta", required=self.noise == "gaussian")
        if self.noise == "laplace" and delta:
            raise InvalidParameterError("Laplace noise is pure ε-DP: leave the picture's δ at 0 (or choose Gaussian).")
        object.__setattr__(self, "delta_histogram", delta)
        object.__setattr__(self, "bins", check_int(self.bins, "bins", 1, 200))
        object.__setattr__(self, "epsilon_scree", check_epsilon(self.epsilon_scree, "scree epsilon", allow_zero=True))
        object.__setattr__(self, "n_eigenvalues", check_int(self.n_eigenvalues, "number of eigenvalues", 1))
        object.__setattr__(self, "neighbouring", check_neighbouring(self.neighbouring))
        if self.groups is not None:
            groups = tuple(self.groups)
            if not groups or len(set(map(str, groups))) != len(groups):
                raise InvalidParameterError("groups must be a non-empty list of distinct public label values.")
            object.__setattr__(self, "groups", groups)


def histogram_noise(settings: PictureSettings) -> tuple[str, float]:
    """("laplace", scale b = Δ₁/ε) or ("gaussian", σ calibrated to (ε, δ) at Δ₂ by the analytic Gaussian mechanism)."""
    l1, l2 = histogram_sensitivity(settings.neighbouring)
    if settings.noise == "laplace":
        return "laplace", l1 / settings.epsilon_histogram
    return "gaussian", gaussian_sigma(settings.epsilon_histogram, settings.delta_histogram, l2)


def scree_is_free(output_kind: str) -> bool:
    """A covariance mechanism's released Ĉ gives the scree by post-processing; a subspace-only one must pay."""
    if output_kind not in ("covariance", "subspace"):
        raise InvalidParameterError(f"output kind must be 'covariance' or 'subspace'; got {output_kind!r}.")
    return output_kind == "covariance"


def plan_ledger(output_kind: str, settings: PictureSettings) -> list[LedgerEntry]:
    """The pictures' ledger entries from public settings only (what the page shows before Release)."""
    entries = []
    if scree_is_free(output_kind):
        entries.append(LedgerEntry("private scree (eigenvalues of the released Ĉ)", 0.0,
                                   note="post-processing of the release: free"))
    elif settings.epsilon_scree > 0:
        b = scree_sensitivity(settings.neighbouring) / settings.epsilon_scree
        entries.append(LedgerEntry("private scree (Laplace eigenvalues)", settings.epsilon_scree,
                                   note=f"top {settings.n_eigenvalues} eigenvalues of C + Lap({b:.4g}); L1 "
                                        f"sensitivity {scree_sensitivity(settings.neighbouring):g}; clipped at 0"))
    kind, scale = histogram_noise(settings)
    l1, l2 = histogram_sensitivity(settings.neighbouring)
    law = f"Lap({scale:.4g}) (L1 sensitivity {l1:g})" if kind == "laplace" else \
        f"N(0, {scale:.4g}²) (L2 sensitivity {l2:.4g})"
    entries.append(LedgerEntry("private score histogram", settings.epsilon_histogram, settings.delta_histogram,
                               note=f"{settings.bins}×{settings.bins} counts on the public frame [−B, B]² + {law} "
                                    "each; clipped at 0"))
    return entries


def _picture_rho(output_kind: str, settings: PictureSettings) -> float:
    """zCDP ρ of the picture's parts: Gaussian Δ₂²/(2σ²); a pure ε part is ε²/2-zCDP."""
    rho = 0.0
    if not scree_is_free(output_kind):
        rho += settings.epsilon_scree ** 2 / 2.0
    kind, scale = histogram_noise(settings)
    if kind == "gaussian":
        rho += histogram_sensitivity(settings.neighbouring)[1] ** 2 / (2.0 * scale ** 2)
    else:
        rho += settings.epsilon_histogram ** 2 / 2.0
    return rho


@dataclass(frozen=True)
class Budget:
    """The whole budget of release + pictures, shown before the pictures are released."""

    entries: tuple[LedgerEntry, ...]
    basic: tuple[float, float]
    zcdp: tuple[float, float] | None
    private: bool

    @property
    def best(self) -> tuple[float, float]:
        """The smaller ε of the two valid statements (each holds)."""
        if self.zcdp is not None and self.zcdp[0] < self.basic[0] and self.zcdp[1] <= self.basic[1]:
            return self.zcdp
        return self.basic

    def text(self) -> str:
        eps, delta = self.basic
        words = f"total ε = {eps:.4g}, δ = {delta:.3g} (basic composition of every step"
        if self.zcdp is not None:
            ze, zd = self.zcdp
            words += f"; with the picture's parts composed in zCDP: ε = {ze:.4g}, δ = {zd:.3g}"
        words += ")"
        if not self.private:
            words += " — NOT end-to-end private: a step is non-private"
        return words


def compose_budget(release_ledger: Sequence[LedgerEntry], output_kind: str, settings: PictureSettings) -> Budget:
    """Release ledger (preprocessing + mechanism) plus the pictures' planned ledger, by basic composition; where
    the picture has a Gaussian part, also the release's (ε, δ) plus the picture's parts composed in zCDP
    (ρ = Σρᵢ, pure ε parts as ε²/2) and converted at the picture's δ (both statements hold; the smaller is ``best``).
    """
    picture = plan_ledger(output_kind, settings)
    entries = (*release_ledger, *picture)
    basic = ledger_total(entries)
    zcdp = None
    if settings.noise == "gaussian":
        rel_eps, rel_delta = ledger_total(release_ledger)
        eps_p = zcdp_epsilon(_picture_rho(output_kind, settings), settings.delta_histogram)
        zcdp = (rel_eps + eps_p, rel_delta + settings.delta_histogram)
    return Budget(entries, basic, zcdp, ledger_is_private(entries))


@dataclass
class PrivateScree:
    """Released eigenvalues (unit scale, decreasing) and how they were obtained."""

    eigenvalues: np.ndarray
    free: bool
    ledger: tuple[LedgerEntry, ...]
    note: str


@dataclass
class ScoreHistogram:
    """Noisy counts (groups × bins × bins; first index along score 1), the public edges (unit scale) and groups."""

    counts: np.ndarray
    edges: np.ndarray
    groups: tuple[str, ...]
    noise: str
    scale: float
    ledger: tuple[LedgerEntry, ...]


@dataclass
class PrivatePictures:
    """Everything a picture release publishes: private scree, private score histogram, budget and caption."""

    scree: PrivateScree | None
    histogram: ScoreHistogram
    budget: Budget
    caption: str
    norm_bound: float = 1.0
    mechanism: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def ledger(self) -> tuple[LedgerEntry, ...]:
        return self.budget.entries


def _picture_rng(random_state: RandomState, part: str, *public: object) -> np.random.Generator:
    """A child stream of the run's seed for one part of the picture, keyed by the picture's public settings and the
    released output it draws on (never the mechanism's stream). One seed reused at two picture ε's or on two
    releases would otherwise draw the same noise, and a combination of the two pictures would cancel it."""
    return stage_rng(random_state, Stage.RELEASE, settings_key("private picture", part, *public))


def private_scree(release: Release, data: PreparedData, settings: PictureSettings, output_kind: str,
                  rng: np.random.Generator) -> PrivateScree | None:
    """The private scree: eigenvalues of the released Ĉ (free) or Laplace-noised top eigenvalues of C (paid);
    None for a subspace-only mechanism when the scree budget is 0."""
    m = min(settings.n_eigenvalues, data.d)
    if scree_is_free(output_kind):
        C = release.covariance_post
        if C is None:
            raise InvalidParameterError("this release carries no covariance; give a scree budget instead.")
        lam = np.sort(np.linalg.eigvalsh(C))[::-1][:m]
        return PrivateScree(np.clip(lam, 0.0, None), True, tuple(plan_ledger(output_kind, settings)[:1]),
                            "eigenvalues of the released covariance Ĉ: post-processing, free")
    if settings.epsilon_scree <= 0:
        return None
    b = scree_sensitivity(settings.neighbouring) / settings.epsilon_scree
    lam = np.sort(data.eigenvalues[:m] + laplace(b, rng, size=m))[::-1]
    return PrivateScree(np.clip(lam, 0.0, None), False, tuple(plan_ledger(output_kind, settings)[:1]),
                        f"top {m} eigenvalues of C + Laplace({b:.4g}) noise, sorted, clipped at 0")


def _group_index(y: np.ndarray | None, groups: tuple[Any, ...] | None) -> tuple[np.ndarray | None, tuple[str, ...]]:
    """Each row's group index (public list, then one group for any other label); groups as strings."""
    if groups is None:
        return None, ("all rows",)
    if y is None:
        raise InvalidParameterError("grouping needs a label column; this data has none (leave groups out).")
    names = tuple(str(g) for g in groups)
    lookup = {name: i for i, name in enumerate(names)}
    idx = np.array([lookup.get(str(v), len(names)) for v in np.asarray(y).tolist()], dtype=np.int64)
    return idx, (*names, OTHER_GROUP)


def true_score_counts(X: np.ndarray, subspace: np.ndarray, bins: int, group_idx: np.ndarray | None = None,
                      n_groups: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Exact counts (groups × bins × bins) of the scores on the public frame, and the edges: NOT private."""
    V = np.asarray(subspace, dtype=float)
    if V.ndim != 2 or V.shape[1] < 2:
        raise InvalidParameterError("the score plot needs a released subspace with at least 2 directions (k ≥ 2).")
    scores = np.clip(np.asarray(X, dtype=float) @ V[:, :2], *FRAME)  # float rounding only: |vᵀx| ≤ 1
    edges = np.linspace(FRAME[0], FRAME[1], bins + 1)
    gi = np.zeros(len(scores), dtype=np.int64) if group_idx is None else group_idx
    counts = np.zeros((n_groups, bins, bins))
    for g in range(n_groups):
        sel = scores[gi == g]
        counts[g] = np.histogram2d(sel[:, 0], sel[:, 1], bins=[edges, edges])[0]
    return counts, edges


def private_score_histogram(X: np.ndarray, subspace: np.ndarray, settings: PictureSettings,
                            rng: np.random.Generator, y: np.ndarray | None = None) -> ScoreHistogram:
    """Noisy 2-D histogram of the first two scores on the released subspace (see the module docstring)."""
    group_idx, groups = _group_index(y, settings.groups)
    counts, edges = true_score_counts(X, subspace, settings.bins, group_idx, len(groups))
    kind, scale = histogram_noise(settings)
    noise = laplace(scale, rng, size=counts.shape) if kind == "laplace" else rng.normal(0.0, scale, counts.shape)
    return ScoreHistogram(np.clip(counts + noise, 0.0, None), edges, groups, kind, scale,
                          (plan_ledger("subspace", settings)[-1],))


def picture_caption(budget: Budget, settings: PictureSettings, mechanism: str, norm_bound: float) -> str:
    """The caption every export carries: the privacy statement with ε/δ."""
    eps, delta = budget.best
    law = "Laplace" if settings.noise == "laplace" else "Gaussian"
    words = (f"{PRIVATE_PICTURE_NOTE}. {mechanism} release + pictures: ε = {eps:.4g}, δ = {delta:.3g} in all "
             f"({settings.neighbouring} neighbours); histogram: ε = {settings.epsilon_histogram:g}, "
             f"δ = {settings.delta_histogram:g}, {law} noise on {settings.bins}×{settings.bins} bins of the public "
             f"frame [−{norm_bound:g}, {norm_bound:g}]², counts clipped at 0.")
    if not budget.private:
        words += " NOT end-to-end private (a step is non-private)."
    return words


def release_pictures(release: Release, data: PreparedData, settings: PictureSettings, output_kind: str, *,
                     random_state: RandomState = None) -> PrivatePictures:
    """Release the private scree and score histogram for a release of ``data`` (one budget, one caption)."""
    if release.is_bottom or release.subspace is None:
        raise InvalidParameterError("the release is ⊥ (no subspace): there is nothing to draw; release again.")
    if check_neighbouring(release.neighbouring) != settings.neighbouring:
        raise InvalidParameterError("the pictures must use the release's neighbouring relation.")
    if data.sample is not None:
        raise InvalidParameterError("the score histogram needs every row; this data holds only a sample of them "
                                    "(load the data in memory).")
    budget = compose_budget(release.full_ledger, output_kind, settings)
    public = (repr(settings), output_kind, release.mechanism, release.epsilon, release.delta, release.k,
              np.asarray(release.subspace, dtype=float))
    scree = private_scree(release, data, settings, output_kind, _picture_rng(random_state, "scree", *public))
    hist = private_score_histogram(data.X, release.subspace, settings, _picture_rng(random_state, "histogram", *public),
                                   y=data.y if settings.groups is not None else None)
    caption = picture_caption(budget, settings, release.mechanism, data.norm_bound)
    return PrivatePictures(scree, hist, budget, caption, data.norm_bound, release.mechanism)


def picture_figure(pictures: PrivatePictures, true_eigenvalues: np.ndarray | None = None, group: int | None = None):
    """A plotly figure: the private scree (and, labelled, the true one when given) beside the private score
    histogram (all groups summed, or one group) as a heatmap in units of B, with the caption below."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=1, cols=2, subplot_titles=("private scree (unit scale)",
                                                        "private score histogram (noisy counts)"))
    if pictures.scree is not None:
        lam = pictures.scree.eigenvalues
        fig.add_trace(go.Scatter(x=np.arange(1, len(lam) + 1), y=lam, mode="lines+markers",
                                 name="private" + (" (free)" if pictures.scree.free else "")), row=1, col=1)
    if true_eigenvalues is not None:
        lam = np.asarray(true_eigenvalues)
        fig.add_trace(go.Scatter(x=np.arange(1, len(lam) + 1), y=lam, mode="lines+markers", name=TRUE_LABEL,
                                 line={"dash": "dot", "color": "grey"}), row=1, col=1)
    h = pictures.histogram
    z = h.counts.sum(axis=0) if group is None else h.counts[group]
    centres = (h.edges[:-1] + h.edges[1:]) / 2 * pictures.norm_bound
    # counts[i, j]: score 1 in bin i, score 2 in bin j; a heatmap's z is rows = y (score 2), columns = x (score 1).
    fig.add_trace(go.Heatmap(x=centres, y=centres, z=z.T, colorscale="Viridis", showscale=True,
                             colorbar={"title": "noisy count", "x": 1.02}), row=1, col=2)
    fig.update_xaxes(title_text="component", row=1, col=1)
    fig.update_yaxes(title_text="eigenvalue", row=1, col=1)
    fig.update_xaxes(title_text="score 1 (units of B)", row=1, col=2)
    fig.update_yaxes(title_text="score 2 (units of B)", row=1, col=2)
    caption = "<br>".join(_wrap(pictures.caption, 150))
    fig.update_layout(width=1200, height=560, margin={"b": 140}, showlegend=True,
                      legend={"orientation": "h", "y": -0.18},
                      annotations=[*fig.layout.annotations,
                                   go.layout.Annotation(text=caption, xref="paper", yref="paper", x=0, y=-0.42,
                                                        showarrow=False, align="left", xanchor="left")])
    return fig


def _wrap(text: str, width: int) -> list[str]:
    import textwrap

    return textwrap.wrap(text, width)


def check_picture_path(path: str) -> str:
    """The export's kind by its suffix ("html" or "image"); a clear error for any other."""
    lower = str(path).lower()
    if lower.endswith((".html", ".htm")):
        return "html"
    if lower.endswith((".png", ".svg", ".pdf")):
        return "image"
    raise InvalidParameterError(f"--out must end in .html, .png, .svg or .pdf; got {path!r}.")


def picture_html(fig: Any, caption: str) -> str:
    """A self-contained HTML page: the figure (plotly bundled) and the caption as plain text below it."""
    import html

    body = fig.to_html(full_html=False, include_plotlyjs=True)
    return (f"<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>private picture</title></head><body>\n"
            f"{body}\n<p class=\"privacy-caption\">{html.escape(caption)}</p>\n</body></html>\n")


def write_picture(fig: Any, path: str, caption: str = "") -> None:
    """HTML (plotly, offline bundle, caption also as text) or PNG/SVG/PDF (kaleido, needs Chromium) by suffix."""
    if check_picture_path(path) == "html":
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(picture_html(fig, caption))
        return
    try:
        fig.write_image(path)
    except Exception as exc:  # kaleido missing or no browser: the user's setup to fix
        raise InvalidParameterError(f"could not write {path} ({type(exc).__name__}); image export needs kaleido "
                                    "and Chromium — write .html instead.") from None


#: What a reader of the side-by-side may and may not conclude (shown under it).
SIDE_BY_SIDE_READING = (
    "Can conclude: where the bulk of the rows lies on the released plane and, at larger ε, coarse structure (one "
    "cluster or several, their rough spread); each private panel is a valid (ε, δ)-DP publication on its own. "
    "Cannot conclude: anything about one record, small cells (a count under a few noise scales is "
    "indistinguishable from 0), the exact row count, or the true plane's orientation (each panel uses its own "
    "released subspace, so panels may be rotated or reflected against the true one). The true panel is NOT private "
    "and is shown for comparison only; the panels' budgets are separate, not one total.")


def side_by_side(data: PreparedData, mechanism: str, epsilons: Sequence[float] = (0.5, 2.0, 8.0), *, k: int = 2,
                 delta: float = 1e-6, picture_share: float = 0.5, bins: int = 20,
                 neighbouring: str = Neighbouring.REPLACE, random_state: RandomState = None):
    """A Papers-style figure: the true score histogram (non-private, on the true top-2 PCs) beside private ones at
    each total ε (the mechanism gets (1 − share)·ε, the Laplace histogram share·ε). Returns (figure, pictures)."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    from ..core.seeding import stage_seed
    from ..mechanisms import get_mechanism

    if not 0.0 < picture_share < 1.0:
        raise InvalidParameterError(f"picture_share must lie strictly between 0 and 1; got {picture_share!r}.")
    mech = get_mechanism(mechanism)
    titles = [f"{TRUE_LABEL}"]
    panels = [true_score_counts(data.X, data.eigenvectors[:, :2], bins)[0][0]]
    released = []
    for i, eps in enumerate(epsilons):
        eps = check_epsilon(eps)
        seed = stage_seed(random_state, Stage.RELEASE, settings_key("side by side", mechanism, eps, i))
        release = mech.release(data, k, (1 - picture_share) * eps, delta if mech.uses_delta else 0.0,
                               neighbouring=neighbouring, random_state=seed)
        s = PictureSettings(picture_share * eps, bins=bins, neighbouring=neighbouring)
        pics = release_pictures(release, data, s, mech.output, random_state=seed)
        released.append(pics)
        panels.append(pics.histogram.counts.sum(axis=0))
        e_all, d_all = pics.budget.best
        titles.append(f"private, ε = {e_all:.3g}, δ = {d_all:.2g}")
    fig = make_subplots(rows=1, cols=len(panels), subplot_titles=titles, horizontal_spacing=0.03)
    centres = (np.linspace(-1, 1, bins + 1)[:-1] + 1.0 / bins) * data.norm_bound
    for j, z in enumerate(panels):
        fig.add_trace(go.Heatmap(x=centres, y=centres, z=z.T, colorscale="Viridis", showscale=False),
                      row=1, col=j + 1)
    caption = "<br>".join(_wrap(f"{mech.name} on {data.name}: {PRIVATE_PICTURE_NOTE} in the private panels. "
                                f"{SIDE_BY_SIDE_READING}", 170))
    fig.update_layout(width=1400, height=480, margin={"b": 150},
                      annotations=[*fig.layout.annotations,
                                   go.layout.Annotation(text=caption, xref="paper", yref="paper", x=0, y=-0.18,
                                                        showarrow=False, align="left", xanchor="left",
                                                        yanchor="top")])
    return fig, released
