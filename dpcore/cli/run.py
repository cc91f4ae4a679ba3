"""``dpcore run WORKSPACE``: reproduce the dashboard's Explore view from its workspace file — the results CSV (equal
byte for byte to Explore's download with the same seed) and the charts as HTML and PNG with their captions
(:mod:`dpcore.evaluation.workspace`).

A workspace holds settings and public schemas, never data: an uploaded file is given with ``--data`` and read with
the saved schema. The run seed of a built-in dataset's view is in the file; an upload's never is (give ``--seed``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def add_run_parser(sub) -> argparse.ArgumentParser:
    """Register ``dpcore run`` on the sub-command parsers ``sub``."""
    p = sub.add_parser("run", help="reproduce Explore's view from a dashboard workspace file (CSV + figures)",
                       description="Run the sweep of the dashboard's Explore view that a workspace file (Data page → "
                                   "Download workspace, or Explore → Downloads) describes: writes the results CSV "
                                   "(byte for byte the dashboard's with the same seed) and each chart as HTML and "
                                   "PNG with its caption.")
    p.add_argument("workspace", help="the workspace file (YAML) the dashboard wrote")
    p.add_argument("--data", metavar="FILE",
                   help="the uploaded file the view ran on (a workspace never contains data); its saved public "
                        "schema is applied")
    p.add_argument("--dataset", metavar="ID", help="run on this built-in dataset instead of the view's")
    p.add_argument("--seed", type=int, default=None,
                   help="run seed (default: the view's seed on a built-in dataset; for an upload give the Seed shown "
                        "in Explore's sidebar to reproduce the dashboard, else fresh OS entropy)")
    p.add_argument("--out", default="dpcore-run", metavar="DIR", help="output folder (default: %(default)s)")
    p.add_argument("--no-figures", action="store_true", help="write the CSV only")
    p.add_argument("--no-png", action="store_true", help="write the figures as HTML only")
    p.add_argument("--quiet", action="store_true", help="no summary on stdout")
    p.set_defaults(func=run_run_command)
    return p


def run_run_command(args) -> int:
    from ..evaluation.workspace import WorkspaceError, explore_view, parse, run_view, write_outputs

    path = Path(args.workspace)
    if not path.is_file():
        raise WorkspaceError(f"no workspace file at {args.workspace}; give the file 'Download workspace' wrote.")
    workspace = parse(path.read_bytes())
    data = None
    if args.data is not None:
        data_path = Path(args.data)
        if not data_path.is_file():
            raise WorkspaceError(f"no data file at {args.data}; give the uploaded file the view ran on.")
        data = data_path.read_bytes()
    view = explore_view(workspace, dataset=args.dataset, seed=args.seed,
                        data_name=None if args.data is None else Path(args.data).name)
    notes = []
    if view.seed is None:
        notes.append("no seed given (an upload's seed is never in a workspace): a fresh seed was drawn, so the "
                      "numbers differ from the dashboard's; give --seed N (Explore's Seed) to reproduce them.")
    run = run_view(view, data)
    written, more = write_outputs(run, args.out, figures=not args.no_figures, png=not args.no_png)
    notes += more
    if not args.quiet:
        print(json.dumps({"dataset": view.dataset, "seed": run.view.seed, "releases": len(run.frame),
                          "written": written, "notes": notes}, ensure_ascii=False, indent=2))
    for note in notes:
        print(f"dpcore: note: {note}", file=sys.stderr)
    return 0
