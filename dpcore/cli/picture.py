"""``dpcore picture``: one release, then its private scree and score histogram, written as HTML or PNG with the
privacy caption (ε/δ of the whole pipeline). The true data are never drawn."""

from __future__ import annotations

import argparse
import json
import sys

from ..vocabulary import Neighbouring, values


def add_picture_parser(sub, add_data_arguments) -> argparse.ArgumentParser:
    """Register ``picture`` on the subcommand table ``sub`` (data flags as every data command's)."""
    p = sub.add_parser("picture", help="private scree + private score plot of a release, as HTML or PNG")
    add_data_arguments(p)
    p.add_argument("--mechanism", required=True)
    p.add_argument("--epsilon", type=float, required=True, help="the mechanism's ε")
    p.add_argument("--delta", type=float, default=0.0, help="the mechanism's δ")
    p.add_argument("--k", type=int, default=2, help="components (≥ 2 for the score plot)")
    p.add_argument("--picture-epsilon", type=float, required=True, help="ε of the score histogram")
    p.add_argument("--picture-delta", type=float, default=0.0, help="δ of the score histogram (Gaussian noise)")
    p.add_argument("--noise", default="laplace", choices=("laplace", "gaussian"))
    p.add_argument("--bins", type=int, default=20, help="bins per axis on the public frame [−B, B] (public)")
    p.add_argument("--scree-epsilon", type=float, default=0.0,
                   help="ε of the scree for a subspace-only mechanism (a covariance mechanism's scree is free)")
    p.add_argument("--eigenvalues", type=int, default=10, help="eigenvalues shown on the scree (public)")
    p.add_argument("--groups", help="comma-separated public label values to count apart (others are one group)")
    p.add_argument("--seed", type=int, default=None, help="run seed (default: fresh OS entropy)")
    p.add_argument("--neighbouring", default=Neighbouring.REPLACE.value, choices=values(Neighbouring))
    p.add_argument("--option", action="append", metavar="MECH.KEY=VALUE")
    p.add_argument("--time-cap", type=float, default=60.0)
    p.add_argument("--allow-invalid", action="store_true")
    p.add_argument("--quiet", action="store_true")
    p.add_argument("--out", required=True, help="output file: .html (plotly) or .png/.svg/.pdf (kaleido)")
    p.set_defaults(func=run_picture_command)
    return p


def run_picture_command(args) -> int:
    from ..core.privacy import jsonable
    from ..explain.pictures import (
        PictureSettings,
        check_picture_path,
        picture_figure,
        release_pictures,
        write_picture,
    )
    from ..mechanisms import get_mechanism
    from . import _mechanism_options, _prepare_from_args

    check_picture_path(args.out)
    groups = tuple(g.strip() for g in args.groups.split(",")) if args.groups else None
    settings = PictureSettings(args.picture_epsilon, noise=args.noise, delta_histogram=args.picture_delta,
                               bins=args.bins, epsilon_scree=args.scree_epsilon, n_eigenvalues=args.eigenvalues,
                               groups=groups, neighbouring=args.neighbouring)
    _, data = _prepare_from_args(args)
    mech = get_mechanism(args.mechanism)
    release = mech.release(data, args.k, args.epsilon, args.delta, neighbouring=args.neighbouring,
                           random_state=args.seed, time_limit=args.time_cap, allow_invalid=args.allow_invalid,
                           **_mechanism_options(args.option).get(args.mechanism, {}))
    pictures = release_pictures(release, data, settings, mech.output, random_state=args.seed)
    write_picture(picture_figure(pictures), args.out, pictures.caption)
    if not args.quiet:
        eps, delta = pictures.budget.best
        print(json.dumps({"out": args.out, "epsilon": eps, "delta": delta, "caption": pictures.caption,
                          "ledger": [e.as_dict() for e in pictures.ledger],
                          "budget": pictures.budget.text()}, default=jsonable, ensure_ascii=False, indent=2))
    if not pictures.budget.private:
        print("dpcore: note: this picture is NOT end-to-end private (a step is non-private).", file=sys.stderr)
    return 0
