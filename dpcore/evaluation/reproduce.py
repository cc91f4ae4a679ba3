"""The source papers' experiments: their stored results, their verdicts, and a wrapper that re-runs them.

The experiments themselves live in ``benchmarks/reproduce_papers.py`` (one function per experiment); this module
knows their names and papers, reads what they stored (``benchmarks/results/reproduce_<name>*.csv|json``,
``docs/figures/reproduce_<name>.png|html``) and the verdicts written up in ``docs/reproductions.md``, and runs an
experiment through the script so that a re-run writes exactly the same files (CLI: ``dpcore reproduce``; dashboard:
the Papers page).

Importing this module is cheap (no numpy, pandas or plotly): the CLI builds its ``reproduce`` sub-command from it.
The script is only found in a source checkout (``pip install -e .``), next to the package.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import re
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..exceptions import DPCoreError, UnknownNameError

REPO_ROOT = Path(__file__).resolve().parents[2]
SCRIPT = REPO_ROOT / "benchmarks" / "reproduce_papers.py"
#: Where the script stores its results and figures (a full run overwrites these; a quick run never does).
RESULTS_DIR = REPO_ROOT / "benchmarks" / "results"
FIGURES_DIR = REPO_ROOT / "docs" / "figures"
DOC = REPO_ROOT / "docs" / "reproductions.md"


@dataclass(frozen=True)
class Experiment:
    """One reproduced experiment of a source paper."""

    name: str  #: the script's name for it (``--only NAME``)
    paper: str  #: short citation
    target: str  #: the figure or table of the paper
    seed: str  #: the project's id of the paper (000, 001, 002 in docs/reproductions.md)
    title: str  #: what is plotted
    runtime_s: int  #: full run on 2 shared cores (docs/reproductions.md)
    section: int  #: section number in docs/reproductions.md
    claim_prefixes: tuple[str, ...]  #: how its rows in the docs' summary table start

    @property
    def label(self) -> str:
        return f"{self.paper}, {self.target}"

    @property
    def short(self) -> str:
        """First author and year, e.g. "Chaudhuri et al. 2013"."""
        authors, _, rest = self.paper.partition(" (")
        year = re.search(r"\d{4}", rest)
        names = authors if "," not in authors else f"{authors.split(',')[0]} et al."  # two authors: both
        return f"{names}{' ' + year.group(0) if year else ''}"


EXPERIMENTS: tuple[Experiment, ...] = (
    Experiment("chaudhuri_fig5", "Chaudhuri, Sarwate & Sinha (JMLR 2013)", "Fig. 5", "000",
               "captured variance vs ε on synthetic data (MOD-SULQ, PPCA)", 40, 1, ("000 Fig. 5",)),
    Experiment("amin_fig1", "Amin, Dick, Kulesza, Muñoz Medina & Vassilvitskii (NeurIPS 2019)", "Fig. 1(a)/(b)", "002",
               "normalised Frobenius error vs ε of full-covariance releases (AD, IT-U, KT, Laplace, Gaussian)", 85, 2,
               ("002",)),
    Experiment("imtiaz_fig1", "Imtiaz & Sarwate (ICASSP 2016)", "Fig. 1", "001",
               "captured variance (% of SVD) vs ε (AG, PPM, PPCA, SN)", 115, 3, ("001",)),
    Experiment("chaudhuri_table2", "Chaudhuri, Sarwate & Sinha (JMLR 2013)", "Table 2", "000",
               "linear-SVM accuracy in the private k-dim subspace (PCA, PPCA, MOD-SULQ, random)", 75, 4,
               ("000 Table 2",)),
    Experiment("singhal_steinke_dimension", "Singhal & Steinke (NeurIPS 2021)", "Thm 1.2/4.3 (dimension independence)",
               "004", "largest principal angle vs the dimension d at fixed n (ss_approx, ss_exact, Analyze Gauss)",
               275, 5, ("004",)),
    Experiment("yun_dudeja", "Yun & Dudeja (arXiv 2025)", "closed-form error of exponential-mechanism PCA", "—",
               "‖P̂ − P‖²_F vs β on a spiked Σ, p = 200: PPCA's k = 1 exact sampler and k = 2 Gibbs scan vs the "
               "formula", 240, 6, ("Yun–Dudeja",)),
    Experiment("jiang_table1", "Jiang, Xie & Zhang (AAAI 2016)", "Table 1", "003",
               "spectral norm of the input-perturbation noise vs d (Laplace, Wishart — not private —, Gaussian)", 15,
               7, ("003",)),
)


def experiment_names() -> list[str]:
    return [e.name for e in EXPERIMENTS]


def get_experiment(name: str) -> Experiment:
    for e in EXPERIMENTS:
        if e.name == name:
            return e
    raise UnknownNameError(f"unknown experiment {name!r}; available: {', '.join(experiment_names())}.")


# --------------------------------------------------------------------------------------------------
# stored results
# --------------------------------------------------------------------------------------------------

def result_files(name: str, results_dir: Path | None = None, figures_dir: Path | None = None) -> dict[str, Path]:
    """Paths of the files an experiment writes (they need not exist): raw, summary, facts, png, html."""
    get_experiment(name)
    res = Path(results_dir) if results_dir is not None else RESULTS_DIR
    fig = Path(figures_dir) if figures_dir is not None else (res if results_dir is not None else FIGURES_DIR)
    return {"raw": res / f"reproduce_{name}.csv", "summary": res / f"reproduce_{name}_summary.csv",
            "facts": res / f"reproduce_{name}_facts.json", "png": fig / f"reproduce_{name}.png",
            "html": fig / f"reproduce_{name}.html"}


def has_stored_results(name: str) -> bool:
    files = result_files(name)
    return files["summary"].is_file() and files["facts"].is_file()


def load_summary(name: str, results_dir: Path | None = None):
    """The per-point summary (mean/sd per mechanism × setting) as a DataFrame."""
    import pandas as pd

    path = result_files(name, results_dir)["summary"]
    if not path.is_file():
        raise DPCoreError(f"no stored results for {name!r} ({path} is missing); run `dpcore reproduce {name}`.")
    return pd.read_csv(path)


def load_facts(name: str, results_dir: Path | None = None) -> list[dict]:
    """Dataset facts of the experiment (n, d, norm bound, clip rate, whether the preprocessing was private, …)."""
    import json

    path = result_files(name, results_dir)["facts"]
    if not path.is_file():
        raise DPCoreError(f"no stored results for {name!r} ({path} is missing); run `dpcore reproduce {name}`.")
    return json.loads(path.read_text(encoding="utf-8"))


@dataclass(frozen=True)
class Verdict:
    """One row of the summary table in docs/reproductions.md."""

    claim: str
    ours: str
    verdict: str

    @property
    def statement(self) -> str:
        """The claim without the docs' paper id and figure prefix ("000 Fig. 5: …" → "…")."""
        return re.sub(r"^\d{3}(?: [^:]{1,30})?:\s*", "", self.claim)


def _table_rows(lines: list[str]) -> Iterator[list[str]]:
    for line in lines:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells and not set(cells[0]) <= {"-", ":"}:
            yield cells


def verdicts(doc: Path | None = None) -> dict[str, list[Verdict]]:
    """The claims, our results and the verdicts of docs/reproductions.md's summary table, per experiment."""
    text = Path(doc or DOC).read_text(encoding="utf-8")
    lines = text.splitlines()
    try:
        start = next(i for i, ln in enumerate(lines) if ln.strip() == "## Summary")
        head = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("|"))
    except StopIteration:
        raise DPCoreError(f"{doc or DOC} has no '## Summary' table.") from None
    rows = list(_table_rows(lines[head:]))[1:]  # skip the header row
    out: dict[str, list[Verdict]] = {e.name: [] for e in EXPERIMENTS}
    for cells in rows:
        if len(cells) < 3:
            continue
        claim = cells[0]
        for e in sorted(EXPERIMENTS, key=lambda e: -max(len(p) for p in e.claim_prefixes)):
            if any(claim.startswith(p) for p in e.claim_prefixes):
                out[e.name].append(Verdict(claim, cells[1], cells[2].replace("**", "")))
                break
    return out


def doc_section(name: str, doc: Path | None = None) -> str:
    """The experiment's section of docs/reproductions.md (markdown, without its heading and image lines)."""
    exp = get_experiment(name)
    lines = Path(doc or DOC).read_text(encoding="utf-8").splitlines()
    start = next((i for i, ln in enumerate(lines) if ln.startswith(f"## {exp.section}. ")), None)
    if start is None:
        return ""
    body = []
    for ln in lines[start + 1:]:
        if ln.startswith("## ") or re.fullmatch(r"-{20,}", ln.strip()):
            break
        if ln.startswith("![") or ln.startswith("([interactive]"):
            continue
        body.append(ln)
    return "\n".join(body).strip()


# --------------------------------------------------------------------------------------------------
# re-running through the script
# --------------------------------------------------------------------------------------------------

@dataclass
class RunResult:
    """What one run of an experiment wrote and produced."""

    name: str
    quick: bool
    out_dir: Path | None  #: None: the stored locations (benchmarks/results, docs/figures)
    files: dict[str, Path]
    seconds: float
    figure: Any = None  #: the Plotly figure the script built
    log: str = ""
    summary: Any = field(default=None, repr=False)  #: the summary DataFrame it wrote


class _HtmlOnly:
    """A figure stand-in for the script's ``save``: writes the HTML, skips the PNG (kaleido starts Chromium)."""

    def __init__(self, fig: Any) -> None:
        self._fig = fig

    def write_html(self, *args: Any, **kwargs: Any) -> Any:
        return self._fig.write_html(*args, **kwargs)

    def write_image(self, *args: Any, **kwargs: Any) -> None:
        return None


def load_script():
    """A fresh module object of ``benchmarks/reproduce_papers.py`` (its output folders are module globals, so each
    run gets its own copy)."""
    if not SCRIPT.is_file():
        raise DPCoreError(f"{SCRIPT} not found: `dpcore reproduce` needs a source checkout of the project.")
    spec = importlib.util.spec_from_file_location(f"_dpcore_reproduce_papers_{time.monotonic_ns()}", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    missing = [e.name for e in EXPERIMENTS if e.name not in module.EXPERIMENTS]
    if missing:
        raise DPCoreError(f"{SCRIPT.name} has no experiment(s) {', '.join(missing)}.")
    return module


def run(name: str, *, quick: bool = False, out: str | Path | None = None, png: bool = True,
        echo: bool = True, jobs: int | None = None) -> RunResult:
    """Run one experiment through ``benchmarks/reproduce_papers.py``; the files it writes are the script's.

    ``out=None`` writes a full run to the stored locations (``benchmarks/results``, ``docs/figures``) and a quick
    run to a new temporary folder (a smoke run never overwrites the stored results); with ``out`` everything goes
    to that folder. ``png=False`` skips the PNG (which starts Chromium through kaleido). ``echo=False`` captures
    the script's progress lines in :attr:`RunResult.log` instead of printing them. ``jobs`` sets the script's
    worker processes per sweep (its ``--jobs``; None keeps the script's in-process default).
    """
    get_experiment(name)
    module = load_script()
    if out is None and quick:
        out = tempfile.mkdtemp(prefix=f"reproduce_quick_{name}_")
    out_dir = None if out is None else Path(out)
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
        module.RESULTS = module.FIGURES = out_dir
    if jobs is not None and hasattr(module, "JOBS"):
        module.JOBS = int(jobs)
    captured: dict[str, Any] = {}
    original_save = module.save

    def save(exp_name, raw, summary, facts, fig):
        captured.update(figure=fig, summary=summary)
        return original_save(exp_name, raw, summary, facts, fig if png else _HtmlOnly(fig))

    module.save = save
    buffer = io.StringIO()
    start = time.perf_counter()
    import pandas as pd

    with contextlib.redirect_stdout(buffer if not echo else sys.stdout), \
            pd.option_context("display.width", 220, "display.max_rows", 500, "display.precision", 4):
        module.EXPERIMENTS[name](quick)
    seconds = time.perf_counter() - start
    return RunResult(name=name, quick=quick, out_dir=out_dir, files=result_files(name, out_dir), seconds=seconds,
                     figure=captured.get("figure"), log=buffer.getvalue(), summary=captured.get("summary"))
