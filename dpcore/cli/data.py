"""Data at real sizes for ``dpcore sweep``: streamed files, Dask clusters, and the lean in-memory run.

* ``--csv F`` / ``--parquet F`` are read into memory, unless ``--stream`` is given: then the file is streamed in
  record batches and reduced to its sufficient statistics (:mod:`dpcore.stats`): memory O(d²) plus one batch and the
  reservoir sample, whatever the file's size. Streaming needs the public schema (``--schema``). **The user chooses
  the reader, never the data**: a file's size (a function of its records) never switches readers, and every reader
  reads each record with the one record parser (:mod:`dpcore.data.records`).
* ``--dask local|ADDRESS --csv 'glob'`` (or ``--parquet``) computes the statistics on a Dask cluster: ``local``
  starts a ``distributed.LocalCluster`` on this machine, anything else is a scheduler address
  (``tcp://host:8786``). Needs ``pip install 'dpcore[dask]'``; the cluster side is :mod:`dpcore.cli.dask_cluster`.

With statistics, C and n describe every row; the SVM metric's held-out rows and the Singhal–Steinke family use a
seeded reservoir sample of ``--reservoir`` rows (positions and seed only), and the output says so in ``message``
("metrics on a reservoir sample of m rows"). The CSV's columns and meaning are those of any sweep.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

from ..exceptions import InvalidParameterError, PrivacyLeakWarning
from ..vocabulary import Centering, FeatureScaling, MissingPolicy
from .flags import cli_words

#: Default reservoir size (equal to ``dpcore.stats.DEFAULT_RESERVOIR``; kept here so that ``--help`` stays light).
DEFAULT_RESERVOIR = 20_000


def add_large_data_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("large data (streaming, Dask)")
    g.add_argument("--parquet", help="path of a Parquet file or folder (read into memory, or streamed)")
    g.add_argument("--stream", action="store_true",
                   help="stream --csv/--parquet in record batches to sufficient statistics (never chosen for you: "
                        "use it for files larger than memory); memory O(d²) plus the reservoir; needs --schema")
    g.add_argument("--dask", metavar="local|ADDRESS",
                   help="compute the statistics on a Dask cluster: 'local' (a LocalCluster here) or a scheduler "
                        "address such as tcp://10.0.0.5:8786; --csv may then be a glob ('data/part-*.csv')")
    g.add_argument("--dask-workers", type=int, default=2, metavar="N", help="workers of --dask local (default 2)")
    g.add_argument("--reservoir", type=int, default=DEFAULT_RESERVOIR, metavar="M",
                   help="rows kept in a seeded reservoir sample (positions and seed only) for the SVM metric and the "
                        f"Singhal–Steinke mechanisms when streaming or on Dask (default {DEFAULT_RESERVOIR:,})")


def _note(args, text: str) -> None:
    if not getattr(args, "quiet", False):
        print(f"dpcore: note: {text}", file=sys.stderr)


def check_public_center(args) -> None:
    """``--center public`` takes the middle of each column's public range from the schema
    (:func:`dpcore.data.encode.public_center`): refused, naming the fix, where there is no public schema to take it
    from — a table without ``--schema``, a schema with values read off the data, or scaling other than the schema's."""
    if getattr(args, "center", None) != Centering.PUBLIC:
        return
    if not args.dataset and not args.schema:
        raise InvalidParameterError("--center public needs a public schema (--schema S): the centre is the middle of "
                                    "each column's declared range, and without a schema it could only be read off the "
                                    "data. Draft one with `dpcore schema infer`, confirm it (`dpcore schema check "
                                    "--require-public`), or use --center dp (a DP mean with its own budget).")
    if args.feature_scaling != FeatureScaling.SCHEMA:
        raise InvalidParameterError(f"--center public is the middle of each column's public range, which needs the "
                                    f"public schema's scaling; drop --feature-scaling {args.feature_scaling} (or use "
                                    "--center dp: a DP mean with its own budget).")
    if args.dataset:
        return  # a built-in dataset's public ranges, or preprocessing's refusal when it has none
    from ..data import load_schema
    from ..data.encode import public_center

    public_center(load_schema(Path(args.schema)))  # refuses a schema with values read off the data


def cli_label_schema(args, schema, column: str, rule):
    """``--label-above`` / ``--label-nonzero``: check that the file has the column (the error names the flag), and
    return ``schema`` with the derived label declared (None without ``--schema``: the loader takes the rule then).
    A schema that names another label, or declares another rule, is refused naming the flag."""
    from ..data.schema import Schema
    from ._args import check_label_column, label_flag
    from .schema import _read

    flag = label_flag(args)
    given = f"{flag} {getattr(args, flag[2:].replace('-', '_'))}"
    if isinstance(schema, Schema) and schema.label is not None and schema.label != column:
        raise InvalidParameterError(f"{given}: the schema's label is {schema.label!r}; drop the flag, or change the "
                                    "schema's `label:` field.")
    if isinstance(schema, Schema) and schema.label_rule is not None and schema.label_rule != rule:
        raise InvalidParameterError(f"{given}: the schema already declares the label {schema.label_text}; drop the "
                                    "flag, or change the schema's `label:` field.")
    csv = getattr(args, "csv", None)
    if (schema is None or column not in schema) and csv and Path(csv).is_file():  # a glob: checked by the reader
        check_label_column(column, _read(args, schema).columns, flag)
    if schema is None:
        return None
    return schema.with_label_rule(column, above=rule.above, nonzero=rule.nonzero)


def streamed_schema(args):
    """The schema of a streamed / Dask run: ``--schema``, with ``--label-above`` / ``--label-nonzero`` declared."""
    from ..data import load_schema
    from ._args import label_declaration

    schema = load_schema(Path(args.schema))
    column, rule = label_declaration(args)
    return schema if rule is None else cli_label_schema(args, schema, column, rule)


def _streaming(args, path: str | None) -> bool:
    if args.dask:
        return False
    if args.stream and not path:
        raise InvalidParameterError("--stream applies to --csv or --parquet files.")
    return bool(args.stream)


def prepare(args, in_memory):
    """(dataset or None, PreparedData) for the sweep: streamed/Dask statistics, or ``in_memory(args)``."""
    parquet = getattr(args, "parquet", None)
    if parquet and (args.csv or args.dataset):
        raise InvalidParameterError("give exactly one of --dataset ID, --csv PATH or --parquet PATH.")
    path = parquet or args.csv
    if args.dask or _streaming(args, path):
        if args.dataset:
            raise InvalidParameterError("--stream and --dask read files (--csv/--parquet), not built-in datasets.")
        if args.sample_sizes:
            raise InvalidParameterError("--sample-sizes subsamples the rows, which are not all kept when streaming or "
                                        "on Dask (only a reservoir sample is); drop --sample-sizes or load the file "
                                        "into memory.")
        return None, _statistics(args, path, parquet=bool(parquet))
    if parquet:
        args.csv = parquet  # the in-memory reader recognises Parquet by its magic bytes
    return in_memory(args)


def _statistics(args, path: str | None, *, parquet: bool):
    from .. import stats

    if not path:
        raise InvalidParameterError("--dask needs --csv PATH_OR_GLOB or --parquet PATH.")
    if not args.schema:
        raise InvalidParameterError(
            "streaming and Dask need the public schema (--schema S: per-column bounds and category lists; draft one "
            "with `dpcore schema infer` on a sample of the file and check its values).")
    check_public_center(args)
    file_format = _declared_format(args)
    options = {"centering": args.center, "feature_scaling": args.feature_scaling, "neighbouring": args.neighbouring}
    if args.norm_bound is not None:
        options["norm_bound"] = args.norm_bound
    schema = streamed_schema(args)
    common = {"label": args.label, "missing": args.missing or MissingPolicy.ZERO.value,
              "reservoir_size": args.reservoir, "seed": args.seed}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)  # recorded in the ledger and reported below
        if args.dask:
            from .dask_cluster import dask_statistics

            result = dask_statistics(args, path, parquet, file_format, common, options)
        elif parquet:
            result = stats.from_parquet(path, schema, **common, **options)
        else:
            result = stats.from_csv(path, schema, file_format=file_format, **common, **options)
    for entry in result.ledger:
        if not entry.private:
            step = f"non-private preprocessing step: {entry.step}: {entry.note}".rstrip(": ")
            _note(args, cli_words(step, args.command))
    data = result.to_prepared()
    how = "on Dask" if args.dask else "streamed"
    if data.sample:
        _note(args, f"{how}: statistics of every row; {data.sample_note} (SVM hold-out, Singhal–Steinke).")
    else:
        _note(args, f"{how}: statistics of every row; the reservoir holds them all (as in memory).")
    return data


def _declared_format(args):
    """The file format of a streamed run: the schema's declared one (CLI overrides are refused then, as for
    in-memory reading), else the conventional default with the CLI's --delimiter/--decimal/--encoding/--thousands —
    never detected from the file."""
    from dataclasses import replace

    from ..data import load_schema
    from .schema import FORMAT_FLAGS_REFUSED, table_options

    schema = load_schema(Path(args.schema))
    given = {k: v for k, v in table_options(args).items() if v is not None}
    if schema.format is not None:
        if given:
            raise InvalidParameterError(FORMAT_FLAGS_REFUSED)
        return schema.format
    return replace(schema.file_format, **given)


# ==================================================================================================
# running the sweep on statistics
# ==================================================================================================

def run_sweep(data, config, *, progress=None, dataset_name: str | None = None, **kwargs):
    """:func:`dpcore.evaluation.statistics_sweep.run_sweep_on_statistics` (imported when a sweep runs, so that
    ``--help`` stays light): the sweep on statistics with a reservoir sample, or the lean in-memory run."""
    from ..evaluation.statistics_sweep import run_sweep_on_statistics

    return run_sweep_on_statistics(data, config, progress=progress, dataset_name=dataset_name, **kwargs)
