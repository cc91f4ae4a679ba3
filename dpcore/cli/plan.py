"""``dpcore plan``: the smallest ε at which a mechanism meets a utility target (:mod:`dpcore.evaluation.planner`).

A built-in dataset (``--dataset``) is public: the plan is free. A covariance released privately (``--from-release``,
the JSON of ``dpcore release``) is post-processing: free too, and the plan states what that release cost (only its
public settings and private output are read, never its non-private diagnostics). A table (``--csv``) is taken as
raw private data: the plan is a labelled NON-private what-if (said on stderr and in the JSON's
``private_inputs``/``notes``).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass
from typing import Any

from ..exceptions import InvalidParameterError
from ..vocabulary import Neighbouring, values


def add_plan_parser(sub, add_data_arguments) -> argparse.ArgumentParser:
    """Register ``dpcore plan`` on the sub-command parsers ``sub``."""
    p = sub.add_parser("plan", help="smallest ε meeting a utility target in a share of releases (inverse planner)",
                       description="Search log ε by bisection on a monotone fit of simulated releases for the "
                                   "smallest ε at which --mechanism meets --target in at least --confidence of its "
                                   "releases; prints ε with an uncertainty band and the probes made. On --csv "
                                   "data the answer is a NON-private what-if.")
    add_data_arguments(p)
    p.add_argument("--from-release", metavar="FILE",
                   help="plan on a covariance released privately: the JSON of `dpcore release` with a covariance "
                        "mechanism (e.g. analyze_gauss); post-processing, free (instead of --dataset/--csv)")
    p.add_argument("--n", type=int, default=None,
                   help="public n for --from-release when the release's n is private (add/remove neighbours)")
    p.add_argument("--mechanism", required=True, help="mechanism id (see `dpcore mechanisms`)")
    p.add_argument("--k", type=int, default=2, help="number of components (default 2)")
    p.add_argument("--delta", type=float, default=1e-5, help="δ for (ε, δ) mechanisms (default 1e-5)")
    p.add_argument("--target", required=True,
                   help="captured>=X (captured variance ratio), angle<=DEGREES (largest principal angle) or "
                        "svm>=ACCURACY")
    p.add_argument("--confidence", type=float, default=0.9,
                   help="share of releases that must meet the target, in (0, 1) (default 0.9)")
    p.add_argument("--trials", type=int, default=100, help="releases per probed ε (default 100, at least 10)")
    p.add_argument("--eps-min", type=float, default=0.01, help="bottom of the public ε range (default 0.01)")
    p.add_argument("--eps-max", type=float, default=100.0, help="top of the public ε range (default 100)")
    p.add_argument("--tolerance", type=float, default=1.1,
                   help="stop narrowing when the bracket's ε ratio is below this (default 1.1)")
    p.add_argument("--max-probes", type=int, default=24, help="most ε values probed (default 24)")
    p.add_argument("--seed", type=int, default=None, help="seed of the simulated releases (default: fresh)")
    p.add_argument("--neighbouring", default=Neighbouring.REPLACE.value, choices=values(Neighbouring))
    p.add_argument("--option", action="append", metavar="MECH.KEY=VALUE", help="mechanism option (repeatable)")
    p.add_argument("--time-cap", type=float, default=60.0, help="seconds per release before it counts as failed")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--quiet", action="store_true", help="no progress or notes on stderr (the what-if label stays)")
    p.set_defaults(func=run_plan_command)
    return p


def _check_args(args) -> None:
    """Bad values fail before any data is read, each naming its flag."""
    from ..exceptions import UnknownNameError
    from ..mechanisms import get_mechanism

    try:
        get_mechanism(args.mechanism)
    except UnknownNameError as exc:
        raise InvalidParameterError(f"--mechanism: {exc}") from None
    if args.k < 1:
        raise InvalidParameterError(f"--k must be a whole number ≥ 1, got {args.k}.")
    if not 0.0 < args.confidence < 1.0:
        raise InvalidParameterError(f"--confidence must lie in (0, 1), e.g. 0.9; got {args.confidence:g}.")
    if args.trials < 10:
        raise InvalidParameterError(f"--trials must be at least 10 (a share needs releases), got {args.trials}.")
    if not (0.0 < args.eps_min < args.eps_max and math.isfinite(args.eps_max)):
        raise InvalidParameterError(f"--eps-min and --eps-max must satisfy 0 < --eps-min < --eps-max, got "
                                    f"{args.eps_min:g} and {args.eps_max:g}.")
    if not args.tolerance > 1.0:
        raise InvalidParameterError(f"--tolerance is a ratio of ε values and must be > 1, got {args.tolerance:g}.")
    if args.max_probes < 3:
        raise InvalidParameterError(f"--max-probes must be at least 3, got {args.max_probes}.")
    if not 0.0 <= args.delta < 1.0:
        raise InvalidParameterError(f"--delta must lie in [0, 1), got {args.delta:g}.")


@dataclass(frozen=True)
class _ReleasedCovariance:
    """What :func:`~dpcore.evaluation.planner.released_covariance_input` reads of a release: its public settings
    and its private output (the JSON's non-private diagnostics and metrics are never read)."""

    mechanism: str
    covariance_post: Any  #: a numpy array (numpy is imported when the command runs, not for --help)
    n: int | None
    norm_bound: float
    total_budget: tuple[float, float]
    is_private: bool


def _read_release(path: str) -> _ReleasedCovariance:
    """The released covariance in a ``dpcore release`` JSON file; errors name --from-release."""
    from ..data import inputs

    if not inputs.exists(path):
        raise InvalidParameterError(f"--from-release: file not found: {path}.")
    try:
        doc = json.loads(inputs.read_bytes(path, "release JSON"))
        cov = doc["private_output"]["covariance_post"]
        if cov is None:
            raise InvalidParameterError("--from-release: this release has no covariance; release one with a "
                                        "covariance mechanism (e.g. analyze_gauss).")
        import numpy as np

        return _ReleasedCovariance(str(doc["mechanism"]), np.asarray(cov, dtype=float), doc.get("n"),
                                   float(doc["norm_bound"]), (float(doc["epsilon"]), float(doc["delta"])),
                                   bool(doc["end_to_end_private"]))
    except (ValueError, KeyError, TypeError):
        raise InvalidParameterError("--from-release: not the JSON of `dpcore release` (it needs mechanism, epsilon, "
                                    "delta, n, norm_bound, end_to_end_private and private_output.covariance_post)."
                                    ) from None


def _source(args):
    """(dataset name, PlanInput) from --from-release, --dataset or --csv."""
    from ..evaluation.planner import private_what_if, public_input, released_covariance_input
    from . import _prepare_from_args

    if args.from_release:
        if args.dataset or args.csv:
            raise InvalidParameterError("--from-release replaces --dataset and --csv; give one of them.")
        return "released covariance", released_covariance_input(_read_release(args.from_release), n=args.n)
    if args.n is not None:
        raise InvalidParameterError("--n only applies to --from-release.")
    dataset, data = _prepare_from_args(args)
    return (getattr(dataset, "id", None) or data.name), (private_what_if(data) if args.csv else public_input(data))


def run_plan_command(args) -> int:
    from ..evaluation.planner import parse_target, plan_epsilon
    from . import _mechanism_options

    target = parse_target(args.target)
    _check_args(args)
    name, source = _source(args)
    data = source.data
    if args.k > data.d:
        raise InvalidParameterError(f"--k must be at most d = {data.d} (the number of features), got {args.k}.")
    if not source.private_inputs:
        print(f"dpcore: note: {source.note}", file=sys.stderr)

    def progress(count: int, eps: float) -> None:
        if not args.quiet:
            print(f"[probe {count}] ε = {eps:g}", file=sys.stderr, flush=True)

    result = plan_epsilon(source, args.mechanism, target, k=args.k, delta=args.delta, confidence=args.confidence,
                          trials=args.trials, eps_range=(args.eps_min, args.eps_max), tolerance=args.tolerance,
                          max_probes=args.max_probes, seed=args.seed, neighbouring=args.neighbouring,
                          mechanism_options=_mechanism_options(args.option).get(args.mechanism),
                          time_cap=args.time_cap, progress=progress)
    out = {"dataset": name, **result.as_dict()}
    if args.json:
        print(json.dumps(out, indent=2, ensure_ascii=False))
        return 0
    print(f"mechanism {result.mechanism}, k = {result.k}, δ = {result.delta:g}; target {result.target} in "
          f"{result.confidence:.0%} of releases")
    if result.epsilon is None:
        print(f"not reachable: {result.reason}")
    else:
        low, high = result.band
        print(f"ε = {result.epsilon:.4g} (band [{low:.4g}, {high:.4g}] at {result.band_level:.0%}; "
              f"point estimate {result.estimate:.4g})")
        if result.reason:
            print(f"note: {result.reason}")
    print("probes (ε: share meeting the target, quantile of the metric):")
    for p in sorted(result.probes, key=lambda p: p.epsilon):
        print(f"  {p.epsilon:<10.4g} {p.met}/{p.trials} = {p.share:.3f}   {p.quantile:.4g}")
    for note in result.notes:
        print(f"note: {note}")
    return 0
