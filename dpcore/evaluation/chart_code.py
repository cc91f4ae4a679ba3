"""Runnable exports of an Explore chart: a Python script and a Jupyter notebook (nbformat 4, written by hand) that
regenerate the chart and the results CSV through dpcore's public API (:mod:`dpcore.evaluation.workspace`), with the
dashboard's settings and seed (issue 35 item 2).

What goes into them is public: the workspace file (settings and the public schema, as the page writes it: nothing
read off an upload), the run seed, the chart's metric and the uploaded file's *name*. The data never do: on an upload
the script reads the file from a path given to it.
"""

from __future__ import annotations

import json

#: The chart titles of Explore (for the exports' headers).
TITLES = {"captured_variance_ratio": "Captured variance (ratio to optimum)", "frobenius_error": "Frobenius error",
          "principal_angle_max_deg": "Largest principal angle", "svm_accuracy": "SVM accuracy"}


def _literal(text: str) -> str:
    """``text`` as a parenthesised Python string literal, one source line per line of text (any characters)."""
    lines = text.splitlines(keepends=True) or [""]
    return "(\n" + "".join(f"    {line!r}\n" for line in lines) + ")"


def _setup(workspace_text: str, *, metric: str, seed: int | None, data_name: str | None) -> str:
    data = "None  # a built-in dataset: nothing to give" if data_name is None else \
        f"{data_name!r}  # the uploaded file (never in this file): its path"
    seed_note = "the run seed of the dashboard's sweep (same seed, same numbers)" if seed is not None else (
        "give the Seed shown in Explore's sidebar to reproduce the dashboard's numbers (an upload's seed is never "
        "written to a file: with it, anyone who sees a release of the upload could recompute its noise); None draws "
        "a fresh one")
    return (
        "from pathlib import Path\n\n"
        "from dpcore.evaluation.workspace import explore_view, parse, run_view, write_outputs\n\n"
        f"#: The dashboard's workspace: public settings and schema, no data.\n"
        f"WORKSPACE = {_literal(workspace_text)}\n"
        f"SEED = {seed!r}  # {seed_note}\n"
        f"METRIC = {metric!r}\n"
        f"DATA = {data}\n"
        "OUT = Path('.')  # where the CSV and the chart are written\n")


_RUN = (
    "data_path = None if DATA is None else Path(DATA)\n"
    "view = explore_view(parse(WORKSPACE), seed=SEED, data_name=None if DATA is None else Path(DATA).name)\n"
    "run = run_view(view, None if data_path is None else data_path.read_bytes())\n")
_WRITE = (
    "written, notes = write_outputs(run, OUT, metrics=[METRIC], png=False)  # png=True: kaleido and Chromium\n"
    "print('\\n'.join([*written, *notes, f'seed: {run.view.seed}']))\n")


def chart_script(workspace_text: str, *, metric: str, seed: int | None, data_name: str | None = None) -> str:
    """A Python script that regenerates Explore's ``metric`` chart and the results CSV."""
    title = TITLES.get(metric, metric)
    # the file's name goes into the docstring: a quote or backslash in it must not end the string or start an escape
    shown = None if data_name is None else data_name.replace("\\", "\\\\").replace('"', '\\"')
    usage = "python THIS_FILE.py" + ("" if shown is None else f" PATH/TO/{shown}") + \
        ("" if seed is not None else " --seed N")
    return (
        "#!/usr/bin/env python3\n"
        f'"""Regenerate the DP-PCA Explorer chart "{title}" of the Explore view through dpcore\'s public API, with\n'
        "the dashboard's settings and seed. Writes the results CSV (the same bytes as Explore's 'Sweep results\n"
        "(CSV)') and the chart as HTML with its caption.\n\n"
        "Public settings and the public schema only: no data value is in this file.\n"
        f"It needs dpcore and Plotly (the chart is drawn by dpcore.explain.figures, as on the dashboard): {usage}\n"
        '"""\n\n'
        + _setup(workspace_text, metric=metric, seed=seed, data_name=data_name) + "\n\n"
        "def main() -> None:\n"
        "    import argparse\n\n"
        "    global DATA, SEED, OUT\n"
        "    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])\n"
        "    parser.add_argument('data', nargs='?', default=DATA, help='the uploaded file (an upload view only)')\n"
        "    parser.add_argument('--seed', type=int, default=SEED, help='run seed (Explore\\'s Seed)')\n"
        "    parser.add_argument('--out', default=str(OUT), help='output folder')\n"
        "    args = parser.parse_args()\n"
        "    DATA, SEED, OUT = args.data, args.seed, Path(args.out)\n"
        + "".join(f"    {line}\n" for line in (_RUN + _WRITE).splitlines()) + "\n\n"
        'if __name__ == "__main__":\n'
        "    main()\n")


def _cell(kind: str, text: str) -> dict:
    cell = {"cell_type": kind, "metadata": {}, "source": text.splitlines(keepends=True)}
    if kind == "code":
        cell.update(execution_count=None, outputs=[])
    return cell


def chart_notebook(workspace_text: str, *, metric: str, seed: int | None, data_name: str | None = None) -> str:
    """A Jupyter notebook (JSON, nbformat 4.5) whose code cells, run in order, regenerate the chart and the CSV."""
    title = TITLES.get(metric, metric)
    data_note = "" if data_name is None else (
        f" The data are not in this notebook: set `DATA` to the path of **{data_name}** (the uploaded file).")
    if seed is None:
        data_note += " Set `SEED` to the Seed shown in Explore's sidebar to reproduce the dashboard's numbers."
    cells = [
        _cell("markdown", f"# {title}\n\nDP-PCA Explorer's Explore chart, regenerated through dpcore's public API "
                          "with the dashboard's settings and seed. Public settings and schema only: no data value is "
                          f"in this notebook.{data_note} It needs dpcore and Plotly."),
        _cell("code", _setup(workspace_text, metric=metric, seed=seed, data_name=data_name)),
        _cell("markdown", "Run Explore's sweep (the curves and the reference lines) on the same data."),
        _cell("code", _RUN),
        _cell("markdown", "The results CSV (equal to Explore's download) and the chart with its caption."),
        _cell("code", _WRITE + "run.frame.head()\n"),
    ]
    for i, cell in enumerate(cells):
        cell["id"] = f"cell-{i}"
    notebook = {"nbformat": 4, "nbformat_minor": 5, "cells": cells,
                "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
                             "language_info": {"name": "python"}}}
    return json.dumps(notebook, ensure_ascii=False, indent=1) + "\n"
