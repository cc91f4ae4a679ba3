"""Command line: ``dpcore mechanisms | datasets | sweep | release | schema | audit | reproduce`` (or
``python -m dpcore``).

Bad arguments exit with code 2 and a one-line message on stderr, never a traceback. Building the parser imports
only light modules (argparse, the vocabulary, the experiment names); numpy, scipy, pandas and the mechanisms load
inside the command that needs them, so ``--version`` and ``--help`` answer at once.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from .. import __version__
from ..exceptions import DPCoreError, InvalidParameterError
from ..vocabulary import Centering, FeatureScaling, MissingPolicy, Neighbouring, values
from ._args import EXIT_USAGE, label_declaration
from ._args import coerce as _coerce
from ._args import key_values as _key_values
from .data import add_large_data_arguments, check_public_center
from .flags import cli_words
from .schema import add_label_rule_arguments, add_schema_parser, add_table_arguments


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (exit 2)."""

    def error(self, message: str):  # type: ignore[override]
        raise _UsageError(f"{self.prog}: {message} (see --help)")


class _UsageError(Exception):
    pass


def _floats(text: str, name: str) -> list[float]:
    try:
        values = [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise InvalidParameterError(f"{name} must be a comma-separated list of numbers, got {text!r}.") from None
    if not values:
        raise InvalidParameterError(f"{name} is empty.")
    return values


def _ints(text: str, name: str) -> list[int]:
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise InvalidParameterError(f"{name} must be a comma-separated list of whole numbers, got {text!r}.") from None
    if not values:
        raise InvalidParameterError(f"{name} is empty.")
    return values


def _mechanism_options(items: Sequence[str] | None) -> dict[str, dict]:
    """``--option itu.exponent=tight`` → {"itu": {"exponent": "tight"}}."""
    options: dict[str, dict] = {}
    for key, value in _key_values(items, "--option").items():
        if "." not in key:
            raise InvalidParameterError(f"--option expects mechanism.option=value, got {key!r}.")
        mech, opt = key.split(".", 1)
        options.setdefault(mech, {})[opt] = _coerce(value)
    return options


# --------------------------------------------------------------------------------------------------
# sub-commands
# --------------------------------------------------------------------------------------------------

def _cmd_mechanisms(args) -> int:
    from ..mechanisms import list_mechanisms

    mechs = list_mechanisms()
    if args.json:
        print(json.dumps([m.describe() for m in mechs], indent=2, ensure_ascii=False))
        return 0
    width = max(len(m.id) for m in mechs)
    for m in mechs:
        print(f"{m.id:<{width}}  {m.guarantee:<15}  {m.output:<10}  {m.name}")
    return 0


def _cmd_datasets(args) -> int:
    from ..data import list_datasets

    infos = list_datasets()
    rows = [_dataset_dict(i) for i in infos]
    if args.json:
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return 0
    for r in rows:
        print(f"{r['id']:<20} n={r['n']:<8} d={r['d']:<5} labels={'yes' if r['labels'] else 'no ':<4} {r['source']}")
    return 0


def _dataset_dict(info) -> dict:
    return info.as_dict()


def _resolve_feature_scaling(args) -> None:
    """``--feature-scaling`` left out: the public schema's ranges ("schema") for a built-in dataset or a table with
    ``--schema``; for a table without one, min–max ranges read off the data (NOT private, recorded so), as the
    dashboard's scaling of a table without a schema — there are no public ranges to scale with."""
    if getattr(args, "feature_scaling", None) is None:
        table = getattr(args, "csv", None) or getattr(args, "parquet", None)
        no_schema = bool(table) and not getattr(args, "schema", None)
        args.feature_scaling = FeatureScaling.MINMAX.value if no_schema else FeatureScaling.SCHEMA.value


def _no_schema_note(args) -> None:
    """A table without ``--schema``: the run is NOT end-to-end private, and how to make it so (stderr, even with
    --quiet: it is about privacy, like the sweep's privacy note)."""
    table = args.csv
    derived = ["the file format", "the column roles"]
    if label_declaration(args)[0] is None and not getattr(args, "no_label", False):
        derived.append("the label")
    derived.append("the category lists")
    if args.feature_scaling == FeatureScaling.MINMAX:
        derived.append("the feature ranges (min–max scaling)")
    derived = ", ".join(derived[:-1]) + " and " + derived[-1]
    print(f"dpcore: note: no --schema: {derived} are read off the data, so this run is NOT end-to-end private (each "
          f"release is DP only given those data-derived inputs). To make it private: `dpcore schema infer --csv "
          f"{table} --out schema.yaml`, replace or confirm every from_data entry (`dpcore schema check --schema "
          f"schema.yaml --csv {table} --require-public` says which are left), then rerun with --schema schema.yaml.",
          file=sys.stderr)


def _prepare_from_args(args):
    """Load (--dataset | --csv) and preprocess as the flags say."""
    from ..data import load_dataset, preprocess

    if bool(args.dataset) == bool(args.csv):
        raise InvalidParameterError("give exactly one of --dataset ID or --csv PATH.")
    _resolve_feature_scaling(args)
    check_public_center(args)
    if args.csv:
        dataset = _load_csv_from_args(args)
        if not args.schema:
            _no_schema_note(args)
    else:
        for flag in ("label", "label_above", "label_nonzero", "schema", "missing", "delimiter", "decimal",
                     "encoding"):
            if getattr(args, flag, None):
                raise InvalidParameterError(f"--{flag.replace('_', '-')} only applies to --csv; built-in datasets "
                                            "carry their own.")
        options = {k: _coerce(v) for k, v in _key_values(args.dataset_option, "--dataset-option").items()}
        dataset = load_dataset(args.dataset, **options)
    # One seed for the run: preprocessing and the mechanism derive independent child streams from it
    # (dpcore.core.seeding), so passing the same integer to both is safe.
    kwargs = {"centering": args.center, "feature_scaling": args.feature_scaling, "random_state": args.seed,
              "neighbouring": args.neighbouring}
    if args.norm_bound is not None:
        kwargs["norm_bound"] = args.norm_bound
    import warnings

    from ..exceptions import PrivacyLeakWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)  # recorded in the ledger and reported below
        data = preprocess(dataset, **kwargs)
    for entry in data.ledger:
        if not entry.private and not args.quiet:
            print(cli_words(f"dpcore: note: non-private preprocessing step: {entry.step}: {entry.note}".rstrip(": "),
                            args.command), file=sys.stderr)
    return dataset, data


def _load_csv_from_args(args):
    """--csv [--schema] [--label] [--missing] and the format overrides → a Dataset; notes go to stderr."""
    import warnings

    from ..data import WideDataWarning, inputs, load_csv, load_schema, read_table
    from ..data.roles import label_or_guess
    from .data import cli_label_schema
    from .schema import table_options

    path = Path(args.csv)
    if not inputs.exists(args.csv):  # a file, a pipe such as <(…), or '-' (standard input)
        raise InvalidParameterError(f"CSV file not found: {args.csv}.")
    if inputs.is_stdin(args.csv) and inputs.is_stdin(args.schema):
        raise InvalidParameterError("--schema - and --csv - both name standard input; give one of them as a file or "
                                    "a pipe such as <(dpcore schema infer …).")
    schema = load_schema(Path(args.schema)) if args.schema else None
    raw = inputs.read_bytes(args.csv, "CSV file")
    label, rule = label_declaration(args)
    if rule is not None:
        schema = cli_label_schema(args, schema, label, rule)
        label, rule = (None, None) if schema is not None else (label, rule)
    if schema is None and label is None and not getattr(args, "no_label", False):  # the dashboard's guess
        label, note = label_or_guess(read_table(raw, name=path.stem, **table_options(args)), None)
        if note and not args.quiet:
            print(f"dpcore: note: {note}", file=sys.stderr)
    # Under add/remove n is private: no row limit may refuse by it (the file is in memory already); under replace-one
    # n is public and the reader's max_rows stays (privacy review item 17).
    limit = {"max_rows": sys.maxsize} if getattr(args, "neighbouring", None) == Neighbouring.ADD_REMOVE else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", WideDataWarning)  # also in the notes, printed below
        dataset = load_csv(raw, label=label, name=path.stem, schema=schema, missing=args.missing,
                           label_rule=rule, **limit, **table_options(args))
    if not args.quiet and dataset.options.get("label_text") != dataset.options.get("label"):
        print(f"dpcore: note: label: {dataset.options['label_text']} (a declared rule: its threshold is public)",
              file=sys.stderr)
    if not args.quiet:
        for note in dataset.diagnostics.get("notes", []):
            print(f"dpcore: note: {note}", file=sys.stderr)
    return dataset


def _cmd_sweep(args) -> int:
    from ..evaluation.sweep import SweepConfig, check_sample_sizes_allowed
    from .data import prepare, run_sweep  # streamed / Dask statistics, lean in-memory runs

    out = Path(args.out)
    if str(out) != "-" and not out.parent.exists():
        raise InvalidParameterError(f"output folder does not exist: {out.parent}.")
    _resolve_feature_scaling(args)
    sample_sizes = _ints(args.sample_sizes, "--sample-sizes") if args.sample_sizes else None
    check_sample_sizes_allowed(sample_sizes, args.neighbouring)  # before the data is read: a rule on settings only
    mechanisms = [m.strip() for m in args.mechanisms.split(",") if m.strip()]
    if args.peers:  # OpenDP and diffprivlib beside ours (dpcore.peers): checked before the data is read
        from ..peers import peers_for_sweep

        mechanisms += [m for m in peers_for_sweep(args.neighbouring) if m not in mechanisms]
    dataset, data = prepare(args, _prepare_from_args)
    config = SweepConfig(
        mechanisms=mechanisms,
        epsilons=_floats(args.epsilons, "--epsilons"),
        deltas=_floats(args.delta, "--delta"),
        ks=_ints(args.k, "--k"),
        trials=args.trials,
        seed=args.seed,
        sample_sizes=sample_sizes,
        neighbouring=args.neighbouring,
        mechanism_options=_mechanism_options(args.option),
        time_cap=args.time_cap,
        allow_invalid=args.allow_invalid or bool(args.peers),
    )
    if args.peers and not args.allow_invalid:
        from ..mechanisms import get_mechanism
        from ..peers import is_peer

        listed = [m for m in mechanisms if not is_peer(m) and get_mechanism(m).invalid]
        if listed:
            raise InvalidParameterError(f"{', '.join(listed)}: claimed-invalid; add --allow-invalid to include it.")

    tty = sys.stderr.isatty()

    def progress(done: int, total: int, text: str) -> None:
        if args.quiet:
            return
        if tty:
            print(f"\r[{done}/{total}] {text:<60}", end="" if done < total else "\n", file=sys.stderr, flush=True)
        elif done == total or done % max(1, total // 10) == 0:
            print(f"[{done}/{total}] {text}", file=sys.stderr, flush=True)

    frame = run_sweep(data, config, progress=progress, dataset_name=getattr(dataset, "id", None) or data.name,
                      n_jobs=args.jobs)
    _clamp_note(args, dataset, data)
    _delta_note(args, frame)
    _privacy_note(frame)
    _convergence_note(frame)
    if args.peers:
        from ..peers import peer_notes

        for note in peer_notes(config.mechanisms):
            print(f"dpcore: note: {note}", file=sys.stderr)
    if str(out) == "-":
        frame.to_csv(sys.stdout, index=False)
    else:
        frame.to_csv(out, index=False)
        if not args.quiet:
            counts = frame["status"].value_counts().to_dict()
            print(f"dpcore: wrote {len(frame)} rows to {out} ({counts})", file=sys.stderr)
    return 0


def _privacy_note(frame) -> None:
    """Whether the sweep's releases are end-to-end private, on stderr even with --quiet (the CSV says it too, in
    end_to_end_private and non_private_steps)."""
    from ..evaluation.sweep import REFERENCE_MECHANISMS

    rows = frame[~frame["mechanism"].isin(REFERENCE_MECHANISMS)]
    if rows.empty or bool(rows["end_to_end_private"].all()):
        return
    steps = list(dict.fromkeys(p for s in rows["non_private_steps"] for p in str(s).split("; ") if p))
    print(f"dpcore: note: {int((~rows['end_to_end_private']).sum())} of {len(rows)} releases are NOT end-to-end "
          f"private (non-private steps: {'; '.join(steps)}); the CSV's end_to_end_private and non_private_steps "
          "columns say so per row.", file=sys.stderr)


def _convergence_note(frame) -> None:
    """MCMC releases whose chain the split-R̂/ESS heuristic did not call converged, on stderr even with --quiet. A
    NON-private diagnostic (read off the chains run on the data), so it is not part of end_to_end_private; the
    releases' heuristic guarantee assumes a converged chain, which this says."""
    from ..data.diagnostics import NOT_PRIVATE_LABEL
    from ..evaluation.sweep import CONVERGENCE_COLUMN

    if CONVERGENCE_COLUMN not in frame:
        return
    verdicts = frame[CONVERGENCE_COLUMN].fillna("").astype(str)
    judged = verdicts[verdicts != ""]
    failed = judged[judged.str.startswith("not converged")]
    if failed.empty:
        return
    print(f"dpcore: note: {len(failed)} of {len(judged)} MCMC releases were not called converged by the split-R̂/"
          "bulk-ESS heuristic, and their heuristic ε-DP guarantee assumes a converged chain. The verdict is in the "
          f"CSV's {CONVERGENCE_COLUMN} column ({NOT_PRIVATE_LABEL}), never in end_to_end_private, which follows "
          "public settings only.", file=sys.stderr)


def _delta_note(args, frame) -> None:
    """The app's δ-vs-1/n rule for the sweep's largest δ and the rows that reached the mechanisms (a warning from
    δ ≥ 1/n always, the milder note unless --quiet)."""
    from ..explain.display import delta_vs_n_warning

    used = frame[frame["delta"] > 0]
    if used.empty:
        return
    check = delta_vs_n_warning(float(used["delta"].max()), int(used["n"].max()))
    if check is not None and (check.severe or not args.quiet):
        from ..data.diagnostics import NOT_PRIVATE_LABEL

        # n is the number of rows read (private under add/remove neighbours): labelled like the clamp shares (R4-3)
        print(f"dpcore: {'warning' if check.severe else 'note'}: {check.text} (n = rows read: {NOT_PRIVATE_LABEL})",
              file=sys.stderr)


def _clamp_note(args, dataset, data) -> None:
    """The share of each column's rows clamped to its public bounds (non-private diagnostic): the summary unless
    --quiet, the warning when a share is large always."""
    from ..data.diagnostics import clamp_report, encoder_report

    if getattr(args, "feature_scaling", FeatureScaling.SCHEMA) != FeatureScaling.SCHEMA:
        return
    if dataset is not None:
        report = clamp_report(dataset)  # the encoder's counts: a missing cell filled with 0 is not clamped
    else:
        diag = getattr(data, "diagnostics", {}) or {}
        report = encoder_report(diag, diag.get("n_rows", data.n), getattr(args, "missing", None))
    for level, text in report.messages():  # what `dpcore schema check` says too
        if level == "warning" or not args.quiet:
            print(f"dpcore: {level}: {text}", file=sys.stderr)


def _cmd_release(args) -> int:
    from ..core.privacy import jsonable
    from ..evaluation.metrics import evaluate
    from ..mechanisms import get_mechanism

    _, data = _prepare_from_args(args)
    mech = get_mechanism(args.mechanism)
    release = mech.release(data, args.k, args.epsilon, args.delta, neighbouring=args.neighbouring,
                           random_state=args.seed, time_limit=args.time_cap, allow_invalid=args.allow_invalid,
                           **_mechanism_options(args.option).get(args.mechanism, {}))
    # Private output and public settings first; the budget is the whole pipeline's (DP centring included);
    # exact data-dependent values only under "nonprivate_diagnostics".
    result = release.as_dict()
    result["nonprivate_diagnostics"]["values"]["preprocessing"] = data.diagnostics.as_dict()["values"]
    result["metrics_on_true_data"] = {"private": False, "label": "utility computed on the true data (not private)",
                                      "values": jsonable(evaluate(release, data))}
    print(json.dumps(result, indent=2, ensure_ascii=False))
    return 0


def _cmd_reproduce(args) -> int:
    from ..evaluation import reproduce

    if args.list:
        if args.names:
            raise InvalidParameterError("--list takes no experiment names.")
        width = max(len(e.name) for e in reproduce.EXPERIMENTS)
        for e in reproduce.EXPERIMENTS:
            stored = "stored results" if reproduce.has_stored_results(e.name) else "no stored results"
            print(f"{e.name:<{width}}  {e.label} — {e.title} (full run ≈ {e.runtime_s} s; {stored})")
        return 0
    if not args.names:
        raise InvalidParameterError("name an experiment (see `dpcore reproduce --list`), or 'all'.")
    names = reproduce.experiment_names() if args.names == ["all"] else list(args.names)
    for name in names:
        reproduce.get_experiment(name)  # unknown names fail before anything runs
    if args.out is not None and not Path(args.out).parent.exists():
        raise InvalidParameterError(f"output folder does not exist: {Path(args.out).parent}.")
    for name in names:
        print(f"=== {name}{' (quick)' if args.quick else ''}", flush=True)
        result = reproduce.run(name, quick=args.quick, out=args.out, jobs=args.jobs)
        where = result.out_dir if result.out_dir is not None else "benchmarks/results and docs/figures"
        print(f"=== {name}: {result.seconds:.0f} s; files in {where}", flush=True)
    return 0


def _add_data_arguments(p: argparse.ArgumentParser) -> None:
    src = p.add_argument_group("data")
    src.add_argument("--dataset", help="built-in dataset id (see `dpcore datasets`)")
    src.add_argument("--csv", help="path of a CSV file (read into memory, never copied)")
    src.add_argument("--label", help="label column of the CSV (optional; without it and without --schema the "
                                     "dashboard's guess is used and named on stderr)")
    src.add_argument("--no-label", action="store_true", help="no label column: every column may be a feature")
    add_label_rule_arguments(src)
    src.add_argument("--schema", help="public schema of the CSV (YAML/JSON; draft one with `dpcore schema infer`): "
                                      "its bounds and category lists make the preprocessing private")
    src.add_argument("--missing", choices=values(MissingPolicy),
                     help="missing values in the CSV: zero (per record; default with --schema), drop (default "
                          "without; NOT private), mean (NOT private)")
    add_table_arguments(src)
    src.add_argument("--dataset-option", action="append", metavar="KEY=VALUE",
                     help="generator option of a built-in dataset, e.g. d=1000 (repeatable)")
    src.add_argument("--norm-bound", type=float, help="public row-norm bound B (rows are clipped to it)")
    src.add_argument("--center", default=Centering.NONE.value, choices=values(Centering),
                     help="centring: none (default), public (the middle of each column's public range, from the "
                          "schema: free), dp (DP mean, own budget), empirical (NOT private)")
    src.add_argument("--feature-scaling", default=None, choices=values(FeatureScaling),
                     help="per-feature scaling: public schema ranges (default with --schema or --dataset), none, or "
                          "minmax (ranges read off the data, NOT private; the default for --csv without --schema)")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="dpcore", description="Differentially private PCA: mechanisms, sweeps and audits.")
    parser.add_argument("--version", action="version", version=f"dpcore {__version__}")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser, required=True)

    p = sub.add_parser("mechanisms", help="list the registered mechanisms")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=_cmd_mechanisms)

    p = sub.add_parser("datasets", help="list the built-in datasets")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=_cmd_datasets)

    p = sub.add_parser("sweep", help="run mechanisms × ε × δ × k × trials and write a CSV")
    _add_data_arguments(p)
    add_large_data_arguments(p)
    p.add_argument("--mechanisms", required=True, help="comma-separated mechanism ids")
    p.add_argument("--epsilons", required=True, help="comma-separated ε values")
    p.add_argument("--delta", default="1e-5", help="δ, or a comma-separated list (default 1e-5)")
    p.add_argument("--k", default="2", help="number of components, or a comma-separated list (default 2)")
    p.add_argument("--trials", type=int, default=5, help="repetitions per cell (default 5)")
    p.add_argument("--seed", type=int, default=None,
                   help="sweep seed; same seed ⇒ identical numbers (default: fresh OS entropy, recorded in the CSV)")
    p.add_argument("--sample-sizes", help="comma-separated subsample sizes n (optional; replace-one only: under "
                                          "add_remove n is private and sizes are refused)")
    p.add_argument("--neighbouring", default=Neighbouring.REPLACE.value, choices=values(Neighbouring))
    p.add_argument("--option", action="append", metavar="MECH.KEY=VALUE",
                   help="mechanism option, e.g. laplace.sensitivity=tight (repeatable)")
    p.add_argument("--time-cap", type=float, default=60.0, help="seconds per cell before it is marked timeout")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1, metavar="N",
                   help="worker processes for the cells (default: every core, %(default)s here; 1 runs them in this "
                        "process). The CSV does not depend on it; with N > 1 a cell stuck past its time cap is stopped")
    p.add_argument("--allow-invalid", action="store_true", help="allow claimed-but-invalid mechanisms (exhibits)")
    p.add_argument("--peers", action="store_true",
                   help="add OpenDP's and diffprivlib's PCA (peer:opendp, peer:diffprivlib) on the same rows at the "
                        "same ε, replace-one only, each fit capped by --time-cap; needs `make peers`. Their samplers "
                        "fail our law test, so their rows are labelled not private (the note says why)")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.add_argument("--out", required=True, help="output CSV path ('-' for stdout)")
    p.set_defaults(func=_cmd_sweep)

    p = sub.add_parser("release", help="one release of one mechanism, as JSON")
    _add_data_arguments(p)
    p.add_argument("--mechanism", required=True)
    p.add_argument("--epsilon", type=float, required=True)
    p.add_argument("--delta", type=float, default=0.0)
    p.add_argument("--k", type=int, default=2)
    p.add_argument("--seed", type=int, default=None,
                   help="seed of the release's noise (default: fresh OS entropy). One seed used for two releases of "
                        "the same data at different settings (ε, δ, B, …) draws the same noise, and the two releases "
                        "then reveal the data exactly: for real releases leave it out")
    p.add_argument("--neighbouring", default=Neighbouring.REPLACE.value, choices=values(Neighbouring))
    p.add_argument("--option", action="append", metavar="MECH.KEY=VALUE")
    p.add_argument("--time-cap", type=float, default=60.0)
    p.add_argument("--allow-invalid", action="store_true")
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(func=_cmd_release)

    add_schema_parser(sub)

    from .picture import add_picture_parser

    add_picture_parser(sub, _add_data_arguments)

    from .plan import add_plan_parser

    add_plan_parser(sub, _add_data_arguments)

    from .run import add_run_parser

    add_run_parser(sub)

    try:
        from .audit import add_audit_parser, run_audit_command
    except ImportError:  # pragma: no cover - audit module not installed
        pass
    else:
        add_audit_parser(sub).set_defaults(func=run_audit_command)

    from ..evaluation.reproduce import experiment_names

    p = sub.add_parser("reproduce", help="re-run a source paper's experiment (benchmarks/reproduce_papers.py)",
                       description="Re-run an experiment of the source papers through benchmarks/reproduce_papers.py "
                                   "(the same results files; discussion in docs/reproductions.md). A full run "
                                   "overwrites the stored results in benchmarks/results and docs/figures; --quick "
                                   "is a smoke run written to a temporary folder unless --out is given.")
    p.add_argument("names", nargs="*", metavar="NAME",
                   help=f"experiment(s): {', '.join(experiment_names())}, or all")
    p.add_argument("--list", action="store_true", help="list the experiments and whether results are stored")
    p.add_argument("--quick", action="store_true", help="smoke run: few trials, short ε grids and burn-in")
    p.add_argument("--out", help="write every file of the run to this folder instead")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1, metavar="N",
                   help="worker processes per sweep, as the script's --jobs (default: every core, %(default)s here)")
    p.set_defaults(func=_cmd_reproduce)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code."""
    parser = build_parser()
    args = None
    try:
        args = parser.parse_args(argv)
        return int(args.func(args) or 0)
    except _UsageError as exc:
        print(str(exc), file=sys.stderr)
        return EXIT_USAGE
    except DPCoreError as exc:  # the library's words, in the flags of the command that was run
        print(f"dpcore: error: {cli_words(str(exc), getattr(args, 'command', None))}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:  # pragma: no cover
        print("dpcore: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # pragma: no cover
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
