"""``dpcore audit``: an empirical lower bound on a mechanism's ε (see :mod:`dpcore.audit`).

``dpcore audit --sampler-selftest`` instead tests the Bingham sampler's output law against the exact law
(:func:`dpcore.audit.sampler_conformance`); it exits with 1 when the sampler is rejected.

Wired into :mod:`dpcore.cli` through :func:`add_audit_parser` and :func:`run_audit_command`.
Bad arguments print a one-line message on stderr and return exit code 2, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ._cli_args import coerce, key_values
from .audit import (
    CONFORMANCE_DRAWS,
    DEFAULT_TRIALS,
    NEIGHBOUR_CONSTRUCTIONS,
    STATISTICS,
    run_audit,
    sampler_conformance,
)
from .exceptions import DPCoreError

EXIT_USAGE = 2
#: Exit code of ``--sampler-selftest`` when the sampler's output law is rejected.
EXIT_REJECTED = 1


def add_audit_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``audit`` sub-command to an argparse subparsers object and return its parser."""
    p = subparsers.add_parser(
        "audit", help="empirically lower-bound ε for a mechanism (privacy audit)",
        description="Run a mechanism many times on two neighbouring datasets and report a Clopper–Pearson lower "
                    "bound on its ε. 'consistent' means no violation was found, not that the mechanism is private. "
                    "With --sampler-selftest, instead test the exact Bingham sampler's output law (chi-square).",
    )
    p.add_argument("--mechanism", help="mechanism id (see 'dpcore mechanisms'); required unless --sampler-selftest")
    p.add_argument("--epsilon", type=float, help="the claimed ε to audit; required unless --sampler-selftest")
    p.add_argument("--delta", type=float, default=None,
                   help="the claimed δ (default: 1e-5 for mechanisms that use δ, otherwise 0)")
    p.add_argument("--neighbours", default="zero_vs_unit", choices=tuple(NEIGHBOUR_CONSTRUCTIONS),
                   help="canary construction for the neighbouring datasets (default zero_vs_unit)")
    p.add_argument("--statistic", default="auto", choices=tuple(STATISTICS),
                   help="test statistic / event family (default auto)")
    p.add_argument("--trials", type=int, default=DEFAULT_TRIALS,
                   help=f"releases per neighbouring dataset (default {DEFAULT_TRIALS})")
    p.add_argument("--k", type=int, default=1, help="number of components (default 1)")
    p.add_argument("--confidence", type=float, default=0.95, help="confidence level of the bound (default 0.95)")
    p.add_argument("--seed", type=int, default=None, help="random seed (demos only)")
    p.add_argument("--time-limit", type=float, default=None,
                   help="seconds; stop early and report the bound so far")
    p.add_argument("--option", action="append", metavar="KEY=VALUE",
                   help="mechanism option, e.g. variant=code (repeatable)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--sampler-selftest", action="store_true",
                   help="test the Bingham sampler against its exact law instead of auditing ε (exit 1 if rejected)")
    p.add_argument("--draws", type=int, default=CONFORMANCE_DRAWS,
                   help=f"with --sampler-selftest: number of samples (default {CONFORMANCE_DRAWS})")
    p.set_defaults(func=run_audit_command)
    return p


def _options(items: list[str] | None, mechanism: str) -> dict[str, Any]:
    """``--option [mech.]key=value`` → {key: value}, values coerced to bool/int/float where they look like one."""
    out: dict[str, Any] = {}
    for key, value in key_values(items, "--option").items():
        if key.startswith(mechanism + "."):
            key = key[len(mechanism) + 1:]
        out[key] = coerce(value)
    return out


def _run_selftest(args: argparse.Namespace) -> int:
    try:
        result = sampler_conformance(draws=getattr(args, "draws", CONFORMANCE_DRAWS), seed=getattr(args, "seed", None))
    except DPCoreError as exc:
        print(f"dpcore audit: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if getattr(args, "json", False):
        print(json.dumps(result.as_dict(), ensure_ascii=False, indent=2))
    else:
        print(result.summary())
    return 0 if result.conforms else EXIT_REJECTED


def run_audit_command(args: argparse.Namespace) -> int:
    """Run the audit described by parsed ``args``; prints JSON or a short summary. Returns the exit code."""
    if getattr(args, "sampler_selftest", False):
        return _run_selftest(args)
    missing = [flag for flag, attr in (("--mechanism", "mechanism"), ("--epsilon", "epsilon"))
               if getattr(args, attr, None) is None]
    if missing:
        print(f"dpcore audit: error: {' and '.join(missing)} {'is' if len(missing) == 1 else 'are'} required for an "
              "ε audit (or use --sampler-selftest to test the Bingham sampler).", file=sys.stderr)
        return EXIT_USAGE
    try:
        result = run_audit(
            args.mechanism, args.epsilon, delta=getattr(args, "delta", None),
            neighbours=getattr(args, "neighbours", "zero_vs_unit"),
            statistic=getattr(args, "statistic", "auto"), trials=getattr(args, "trials", DEFAULT_TRIALS),
            k=getattr(args, "k", 1), confidence=getattr(args, "confidence", 0.95),
            seed=getattr(args, "seed", None), time_limit=getattr(args, "time_limit", None),
            **_options(getattr(args, "option", None), args.mechanism),
        )
    except DPCoreError as exc:
        print(f"dpcore audit: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if getattr(args, "json", False):
        print(json.dumps(result.as_dict(include_samples=False), ensure_ascii=False, indent=2))
    else:
        print(result.summary())
    return 0
