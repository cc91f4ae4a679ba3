"""``dpcore audit``: an empirical lower bound on a mechanism's ε and δ (see :mod:`dpcore.audit`).

``dpcore audit --neighbouring all`` audits every neighbouring relation the mechanism declares;
``dpcore audit --probe`` runs the determinism probe (identical seeds on indistinguishable neighbours) instead;
``dpcore audit --sampler-selftest`` tests the Bingham sampler's output law against the exact law
(:func:`dpcore.audit.sampler_conformance`) and exits with 1 when the sampler is rejected.
``dpcore audit --pair D.csv D2.csv --schema S.yaml`` audits the whole pipeline from bytes
(:func:`dpcore.audit.files.file_pair`); ``--mechanism module:function`` audits a user's callable
(:mod:`dpcore.audit.callables`) with the claim given by ``--claim-epsilon``/``--claim-delta``/``--relation``.

Wired into :mod:`dpcore.cli` through :func:`add_audit_parser` and :func:`run_audit_command`.
Bad arguments print a one-line message on stderr and return exit code 2, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterator, Sequence
from typing import Any

from ..exceptions import DPCoreError
from ..vocabulary import Centering, Neighbouring, values
from ._args import EXIT_USAGE, coerce, key_values


class _AuditRegistry(Sequence[str]):
    """The names of a :mod:`dpcore.audit` registry (``extra`` ones first), read when first used: parsing a value,
    ``dpcore audit --help``, the run. The registries are defined in dpcore.audit only, and building the parser does
    not import it (it loads scipy.stats: about 1 s)."""

    def __init__(self, attribute: str, *extra: str) -> None:
        self._attribute, self._extra = attribute, extra

    def _names(self) -> tuple[str, ...]:
        from .. import audit

        return (*self._extra, *getattr(audit, self._attribute))

    def __getitem__(self, index):  # type: ignore[override]
        return self._names()[index]

    def __len__(self) -> int:
        return len(self._names())

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())


class _AuditDefault:
    """A default number of :mod:`dpcore.audit`, read when first used (the help text, the run)."""

    def __init__(self, attribute: str) -> None:
        self.attribute = attribute

    def value(self) -> int:
        from .. import audit

        return int(getattr(audit, self.attribute))

    def __str__(self) -> str:
        return str(self.value())


NEIGHBOUR_CONSTRUCTIONS = _AuditRegistry("NEIGHBOUR_CONSTRUCTIONS")
STATISTICS = _AuditRegistry("STATISTICS")
FIELDS = _AuditRegistry("FIELDS")
DEFAULT_TRIALS = _AuditDefault("DEFAULT_TRIALS")
PROBE_SEEDS = _AuditDefault("PROBE_SEEDS")
CONFORMANCE_DRAWS = _AuditDefault("CONFORMANCE_DRAWS")


def _arg(args: argparse.Namespace, dest: str, default: Any) -> Any:
    """``args.dest`` (``default`` when absent), with a :class:`_AuditDefault` read off dpcore.audit."""
    value = getattr(args, dest, default)
    return value.value() if isinstance(value, _AuditDefault) else value


#: The audit's teaching mutants (dpcore.audit.mutants.TEACHING_MUTANTS, listed here so that building the parser does
#: not import dpcore.audit): deliberately under-noised copies, not shipped mechanisms.
TEACHING_MUTANT_IDS = ("mutant:g_dppca_2_over_n",)

#: Exit code of ``--sampler-selftest`` when the sampler's output law is rejected.
EXIT_REJECTED = 1
RELATION_CHOICES = (*values(Neighbouring), "all")


def add_audit_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``audit`` sub-command to an argparse subparsers object and return its parser."""
    p = subparsers.add_parser(
        "audit", help="empirically lower-bound ε and δ for a mechanism (privacy audit)",
        description="Run a mechanism many times on two neighbouring datasets and report Clopper–Pearson lower "
                    "bounds on its ε and δ. 'violated' means the claim is refuted; 'consistent' means no violation "
                    "was found by a test that flags a violation of the claim on every pair (noise on C whose privacy "
                    "loss there is 2× the claimed ε, calibrated from the claim, not from the audited code) — not "
                    "that the mechanism is private; 'inconclusive' means this test could not have refuted the claim "
                    "(it does not flag that reference, and says which violation it does flag; or the output is a "
                    "subspace, which has no reference; or ε is beyond what frequencies can certify). "
                    "With --probe, run the determinism probe instead; with --sampler-selftest, "
                    "test the exact Bingham sampler's output law (chi-square).",
    )
    p.add_argument("--mechanism", help="mechanism id (see 'dpcore mechanisms'), a peer (peer:opendp, "
                                       "peer:diffprivlib), a teaching mutant (" + ", ".join(TEACHING_MUTANT_IDS)
                   + ": g-DPPCA's noise calibrated to 2/n, under-noised by √2 — not a shipped mechanism; its "
                     "--neighbours, --delta and --trials default to the audit that flags it: unit_swap_zeros, 0.2, "
                     "50000) or a Python callable module:function with signature (X, epsilon, delta, rng) -> array "
                     "(X: the preprocessed rows; its claim is declared by --claim-epsilon/--claim-delta/--relation); "
                     "required unless --sampler-selftest")
    p.add_argument("--epsilon", "--claim-epsilon", dest="epsilon", type=float,
                   help="the claimed ε to audit; required unless --sampler-selftest")
    p.add_argument("--delta", "--claim-delta", dest="delta", type=float, default=None,
                   help="the claimed δ (default: 1e-5 for mechanisms that use δ, otherwise 0; a callable claims "
                        "(ε, δ)-DP with a δ > 0 here, pure ε-DP without)")
    p.add_argument("--output", default="covariance", metavar="covariance|subspace",
                   help="what a module:function mechanism returns: a d×d covariance (default) or a d×k basis "
                        "(checked against dpcore.audit.callables.CALLABLE_OUTPUTS)")
    p.add_argument("--pair", nargs=2, metavar=("D", "D2"),
                   help="audit the whole pipeline from bytes on two neighbouring files (one line = one record "
                        "differs): loading with --schema's declared format, preprocessing, the mechanism; a refusal "
                        "anywhere is an output")
    p.add_argument("--schema", help="with --pair: the public schema the files are read and scaled with")
    p.add_argument("--center", default=None, choices=[c for c in values(Centering) if c != Centering.DP],
                   help="with --pair: centring (default none; the DP mean draws noise and is not audited here)")
    p.add_argument("--norm-bound", type=float, default=None, help="with --pair: public row-norm bound B")
    p.add_argument("--missing", default=None, help="with --pair: missing-value policy (as dpcore release)")
    p.add_argument("--neighbours", default=None, choices=_AuditRegistry("NEIGHBOUR_CONSTRUCTIONS", "all"),
                   metavar="NAME",
                   help="construction of the neighbouring datasets: %(choices)s (default all: every construction, "
                        "the confidence split over them; in_plane with --probe)")
    p.add_argument("--no-power", dest="power", action="store_false",
                   help="skip the power check (the same test on the claim's 2ε reference violation); without it no "
                        "verdict is 'consistent' (nothing shows the test could have found a violation)")
    p.add_argument("--neighbouring", "--relation", dest="neighbouring", default=None, choices=RELATION_CHOICES,
                   help="neighbouring relation: replace, add_remove, or all (each relation the mechanism declares; "
                        "the confidence is split over them). Default: the construction's own relation if the "
                        "mechanism supports it")
    p.add_argument("--statistic", default="auto", choices=STATISTICS, metavar="NAME",
                   help="event family: %(choices)s (default auto: all but the classifier)")
    p.add_argument("--field", default="auto", choices=FIELDS, metavar="NAME",
                   help="released field the events read: %(choices)s (default auto: every released field)")
    p.add_argument("--trials", type=int, default=DEFAULT_TRIALS,
                   help="releases per neighbouring dataset and pair (default %(default)s)")
    p.add_argument("--k", type=int, default=None, help="number of components (default 1; 2 with --probe)")
    p.add_argument("--n", type=int, default=None,
                   help="rows of the larger audit dataset (default 30; 70 with --probe)")
    p.add_argument("--d", type=int, default=3, help="features of the audit datasets (default 3)")
    p.add_argument("--confidence", type=float, default=0.95, help="confidence level of the bounds (default 0.95)")
    p.add_argument("--seed", type=int, default=None, help="random seed (demos only)")
    p.add_argument("--time-limit", type=float, default=None,
                   help="seconds; stop early and report the bound so far")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1, metavar="N",
                   help="worker processes sharing the releases (default: every core, %(default)s here; 1 runs them "
                        "in this process). Each worker draws from its own child stream of --seed, so a seed "
                        "reproduces a result for the same N")
    p.add_argument("--option", action="append", metavar="KEY=VALUE",
                   help="mechanism option, e.g. variant=code (repeatable)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--probe", action="store_true",
                   help="run the determinism probe: the same seeds on D and D′ must give the same output where "
                        "the private selection agrees (default neighbours in_plane, k = 2, n = 70)")
    p.add_argument("--probe-seeds", type=int, default=PROBE_SEEDS,
                   help="with --probe: number of seeds (default %(default)s)")
    p.add_argument("--sampler-selftest", action="store_true",
                   help="test the Bingham sampler against its exact law instead of auditing ε (exit 1 if rejected)")
    p.add_argument("--draws", type=int, default=CONFORMANCE_DRAWS,
                   help="with --sampler-selftest: number of samples (default %(default)s)")
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


def _error(exc: Exception | str) -> int:
    print(f"dpcore audit: error: {exc}", file=sys.stderr)
    return EXIT_USAGE


def _print(args: argparse.Namespace, as_dict: dict, text: str) -> None:
    if getattr(args, "json", False):
        print(json.dumps(as_dict, ensure_ascii=False, indent=2))
    else:
        print(text)


def _run_selftest(args: argparse.Namespace) -> int:
    from ..audit import sampler_conformance

    try:
        result = sampler_conformance(draws=_arg(args, "draws", CONFORMANCE_DRAWS), seed=getattr(args, "seed", None))
    except DPCoreError as exc:
        return _error(exc)
    _print(args, result.as_dict(), result.summary())
    return 0 if result.conforms else EXIT_REJECTED


def _run_probe(args: argparse.Namespace) -> int:
    from ..audit import determinism_probe

    relation = getattr(args, "neighbouring", None)
    if relation == "all":
        return _error("--probe takes one relation (replace or add_remove), not 'all'.")
    try:
        result = determinism_probe(
            args.mechanism, args.epsilon, getattr(args, "delta", None),
            neighbours=getattr(args, "neighbours", None) or "in_plane", neighbouring=relation,
            k=getattr(args, "k", None) or 2, seeds=_arg(args, "probe_seeds", PROBE_SEEDS),
            d=getattr(args, "d", 3), n=getattr(args, "n", None) or 70, seed=getattr(args, "seed", None),
            time_limit=getattr(args, "time_limit", None), **_options(getattr(args, "option", None), args.mechanism),
        )
    except DPCoreError as exc:
        return _error(exc)
    _print(args, result.as_dict(), result.summary())
    return 0


def _mechanism(args: argparse.Namespace) -> Any:
    """The registered id, or a :class:`~dpcore.audit.callables.CallableMechanism` for module:function with the
    claim the flags declare."""
    from ..audit.mutants import is_teaching_mutant
    from ..peers import is_peer

    if ":" not in args.mechanism or is_peer(args.mechanism) or is_teaching_mutant(args.mechanism):
        return args.mechanism  # a registered id, a peer (peer:opendp, …) or a teaching mutant (mutant:…)
    from ..audit.callables import callable_mechanism

    return callable_mechanism(args.mechanism, output=getattr(args, "output", "covariance"),
                              delta=getattr(args, "delta", None), relation=getattr(args, "neighbouring", None))


def _neighbours(args: argparse.Namespace, relation: str | None) -> Any:
    """--pair D D2 --schema S: the pair of files as the pipeline makes them; else --neighbours (default all)."""
    pair = getattr(args, "pair", None)
    if not pair:
        if getattr(args, "schema", None):
            raise DPCoreError("--schema applies to --pair D D2 (the files it reads); drop it or add --pair.")
        return getattr(args, "neighbours", None) or "all"
    if not getattr(args, "schema", None):
        raise DPCoreError("--pair needs the public schema the files are read with (--schema S.yaml; draft one with "
                          "`dpcore schema infer`).")
    if getattr(args, "neighbours", None):
        raise DPCoreError("--pair replaces --neighbours (the files are the neighbours); give one of them.")
    if relation == "all":
        raise DPCoreError("--pair has one relation, the files' own (replace or add_remove), not 'all'.")
    from ..audit.files import file_pair

    return file_pair(pair[0], pair[1], args.schema, neighbouring=relation, missing=getattr(args, "missing", None),
                     centering=getattr(args, "center", None), norm_bound=getattr(args, "norm_bound", None))


def _mutant_defaults(args: argparse.Namespace) -> None:
    """A teaching mutant (mutant:…) takes the audit that flags it where the flags leave --neighbours, --delta or
    --trials unset (its ``audit_defaults``: the attaining pair, the claimed δ, the releases)."""
    from ..audit.mutants import is_teaching_mutant, teaching_mutant

    if not is_teaching_mutant(args.mechanism):
        return
    defaults = teaching_mutant(args.mechanism).audit_defaults
    if getattr(args, "neighbours", None) is None and not getattr(args, "pair", None):
        args.neighbours = defaults["neighbours"]
    if getattr(args, "delta", None) is None:
        args.delta = defaults["delta"]
    if isinstance(getattr(args, "trials", None), _AuditDefault) or getattr(args, "trials", None) is None:
        args.trials = defaults["trials"]


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
    if getattr(args, "probe", False):
        return _run_probe(args)
    from ..audit import audit_all_relations, combined_verdict, run_audit

    _mutant_defaults(args)
    relation = getattr(args, "neighbouring", None)
    try:
        mechanism = _mechanism(args)
        neighbours = _neighbours(args, relation)
        kwargs = dict(
            delta=getattr(args, "delta", None), neighbours=neighbours,
            power=getattr(args, "power", True),
            statistic=getattr(args, "statistic", "auto"), field=getattr(args, "field", "auto"),
            trials=_arg(args, "trials", DEFAULT_TRIALS), k=getattr(args, "k", None) or 1,
            confidence=getattr(args, "confidence", 0.95), seed=getattr(args, "seed", None),
            time_limit=getattr(args, "time_limit", None), d=getattr(args, "d", 3), n=getattr(args, "n", None) or 30,
            n_jobs=getattr(args, "jobs", 1),
            **_options(getattr(args, "option", None), args.mechanism),
        )
        if relation == "all":
            results = audit_all_relations(mechanism, args.epsilon, **kwargs)
        else:
            results = [run_audit(mechanism, args.epsilon, neighbouring=relation, **kwargs)]
    except DPCoreError as exc:
        return _error(exc)
    if relation != "all":
        r = results[0]
        _print(args, r.as_dict(include_samples=False), r.summary())
        return 0
    verdict = combined_verdict(results)
    payload = {"verdict": verdict, "delta_lower_bound": max(r.delta_lower_bound for r in results),
               "results": [r.as_dict(include_samples=False) for r in results]}
    text = "\n\n".join(r.summary() for r in results) + f"\n\nOverall verdict over all relations: {verdict.upper()}."
    _print(args, payload, text)
    return 0
