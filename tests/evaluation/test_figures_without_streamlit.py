"""``dpcore`` draws Explore's figures without Streamlit and without the dashboard's ``pages/`` (the developers' guide:
dpcore is a pure Python library, the pages are thin): ``dpcore run`` and the exported chart scripts and notebooks
draw through :mod:`dpcore.explain.figures`, and the pages re-export its names."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: A fresh interpreter in which ``import streamlit`` and ``import pages`` fail (as in a dpcore installed alone), that
#: runs ``dpcore run --no-png`` on a tiny built-in workspace and lists the files written.
SCRIPT = r'''
import importlib.abc
import sys
from pathlib import Path


class Blocked(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("streamlit", "pages"):
            raise ImportError(f"{name} is not installed here")
        return None


sys.meta_path.insert(0, Blocked())
import dpcore.evaluation.workspace as ws  # noqa: E402
import dpcore.explain.figures  # noqa: E402,F401
from dpcore.cli import main  # noqa: E402

out = Path(sys.argv[1])
workspace = {ws.FORMAT_KEY: 1, "settings": {"dp_k": 2, "dp_eps_range": [0.5, 2.0], "dp_delta": 1e-6, "dp_trials": 2,
                                            "dp_time_cap": 20.0, "dp_neighbouring": "replace", "dp_band": "±1 sd"},
             "mechanisms": {"pure": ["laplace"], "approx": ["analyze_gauss"]}, "datasets": {}, "uploads": [],
             ws.VIEW: {"dataset": "wine", "seed": 7}}
(out / "w.yaml").write_text(ws.to_text(workspace), encoding="utf-8")
code = main(["run", str(out / "w.yaml"), "--out", str(out / "run"), "--no-png"])
assert not any(m.split(".")[0] in ("streamlit", "pages") for m in sys.modules), "streamlit or pages was imported"
print("CODE", code)
print("FILES", " ".join(sorted(p.name for p in (out / "run").iterdir())) if (out / "run").is_dir() else "")
'''


def test_dpcore_run_draws_its_figures_without_streamlit_or_pages(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path)], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = dict(line.split(" ", 1) for line in done.stdout.splitlines() if line.startswith(("CODE", "FILES")))
    assert lines.get("CODE") == "0", done.stdout + done.stderr[-3000:]
    files = lines["FILES"].split()
    assert len([f for f in files if f.endswith(".html")]) == 4 and "sweep_wine.csv" in files, files
    for name in (f for f in files if f.endswith(".html")):
        assert "plotly" in (tmp_path / "run" / name).read_text(encoding="utf-8").lower()


def _imported_modules(path: Path) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.add(node.module)
    return out


def test_no_dpcore_module_imports_streamlit_or_pages():
    offenders = {str(path.relative_to(ROOT)): sorted(m for m in _imported_modules(path)
                                                     if m.split(".")[0] in ("streamlit", "pages"))
                 for path in sorted((ROOT / "dpcore").rglob("*.py"))}
    assert not {k: v for k, v in offenders.items() if v}


def test_the_pages_reexport_dpcores_figures():
    from dpcore.explain import figures
    from pages.ui import charts, explore_view, export, state

    assert figures.UPLOAD_ID == state.UPLOAD_ID
    for name in ("metric_figure", "trace_style", "legend_rows", "mechanism_colors", "TraceStyle", "figure_from_dict",
                 "presentation_figure", "release_warning_lines", "WARNING_MEANINGS", "METRIC_TITLES"):
        assert getattr(charts, name) is getattr(figures, name), name
    for name in ("captioned_figure", "caption_lines", "figure_png", "figure_html", "png_export_available",
                 "METRIC_SLUGS", "sweep_dataset"):
        assert getattr(export, name) is getattr(figures, name), name
    for name in ("metric_chart", "run_figures", "explore_metrics", "X_TITLE"):
        assert getattr(explore_view, name) is getattr(figures, name), name
