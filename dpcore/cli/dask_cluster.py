"""``dpcore sweep --dask local|ADDRESS``: sufficient statistics of files computed on a Dask cluster.

Imported only when ``--dask`` is given (Dask and distributed are optional: ``pip install 'dpcore[dask]'``).
"""

from __future__ import annotations

import glob as _glob
from pathlib import Path

from ..exceptions import InvalidParameterError
from .data import _note


def dask_statistics(args, path: str, parquet: bool, file_format, common: dict, options: dict):
    """The statistics of ``--csv 'glob'`` / ``--parquet`` computed on the Dask cluster ``--dask`` names (``local``: a
    ``LocalCluster`` of ``--dask-workers`` workers here), read with the schema's declared format."""
    from .. import stats
    from ..stats._arrow import csv_header, has_sep_line
    from ..stats._dask import _require_dask
    from ..stats._encode import SchemaEncoder

    _require_dask()
    import dask.dataframe as dd
    from distributed import Client, LocalCluster

    from .data import streamed_schema

    schema = streamed_schema(args)
    encoder = SchemaEncoder(schema, label=common["label"], missing=common["missing"])
    import logging

    logging.getLogger("distributed").setLevel(logging.ERROR)  # start-up and shut-down chatter; dpcore's notes say what
    if args.dask == "local":
        workers = max(1, int(args.dask_workers))
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, dashboard_address=None)
        client = Client(cluster)
    else:
        cluster, client = None, Client(args.dask)
    try:
        if parquet:
            ddf = dd.read_parquet(path, columns=encoder.columns)
        else:
            files = sorted(_glob.glob(path)) or [path]
            if not Path(files[0]).is_file():
                raise InvalidParameterError(f"no CSV file matches {path!r}.")
            if file_format.header and has_sep_line(files[0], file_format):
                raise InvalidParameterError(f"{files[0]} starts with Excel's 'sep=' line, which Dask would read as "
                                            "the header; delete that line, or run without --dask.")
            # the streamed reader's header rule (declared encoding, blank lines, quoted names)
            names = csv_header(files[0], file_format, [c.name for c in schema.columns])
            delim = file_format.delimiter
            encoder.check_columns(names)
            # every cell as text: the partitions then apply the in-memory reader's per-cell rules (missing
            # tokens, decimal mark, thousands separator, non-finite policy) through the same per-record transform
            ddf = dd.read_csv(files, sep=delim, header=0 if file_format.header else None, names=names,
                              usecols=encoder.columns, dtype=object, keep_default_na=False, na_filter=False,
                              blocksize="64MB")
        _note(args, f"Dask: {ddf.npartitions} partitions on {client.scheduler_info().get('address', args.dask)} "
                    f"({len(client.scheduler_info().get('workers', {}))} workers).")
        return stats.from_dask(ddf, schema, name=Path(path).stem.replace("*", "") or "dask", file_format=file_format,
                               **common, **options)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


__all__ = ["dask_statistics"]
